#include "ir/opcode.h"

#include <iterator>

namespace hloc {
namespace {
struct OpInfo {
  std::string_view name;
  int arity;
};
constexpr OpInfo kOps[] = {
#define HLOC_OPCODE_INFO(e, name, arity) {name, arity},
    HLOC_OPCODES(HLOC_OPCODE_INFO)
#undef HLOC_OPCODE_INFO
};
}  // namespace

std::string_view HloOpcodeString(HloOpcode op) { return kOps[static_cast<int>(op)].name; }

std::optional<HloOpcode> StringToHloOpcode(std::string_view name) {
  for (int i = 0; i < kNumOpcodes; ++i)
    if (kOps[i].name == name) return static_cast<HloOpcode>(i);
  return std::nullopt;
}

int HloOpcodeArity(HloOpcode op) { return kOps[static_cast<int>(op)].arity; }

bool IsElementwiseUnary(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAbs: case O::kBitcastConvert: case O::kCbrt: case O::kCeil: case O::kClz:
    case O::kConvert: case O::kCopy: case O::kCos: case O::kErf: case O::kExp: case O::kExpm1:
    case O::kFloor: case O::kImag: case O::kIsFinite: case O::kLog: case O::kLog1p: case O::kLogistic:
    case O::kNegate: case O::kNot: case O::kPopulationCount: case O::kReal:
    case O::kReducePrecision: case O::kRoundNearestAfz: case O::kRoundNearestEven:
    case O::kRsqrt: case O::kSign: case O::kSin: case O::kSqrt: case O::kTan: case O::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAdd: case O::kAnd: case O::kAtan2: case O::kCompare: case O::kComplex:
    case O::kDivide: case O::kMaximum: case O::kMinimum: case O::kMultiply: case O::kOr:
    case O::kPower: case O::kRemainder: case O::kShiftLeft: case O::kShiftRightArithmetic:
    case O::kShiftRightLogical: case O::kSubtract: case O::kXor: case O::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

bool IsElementwise(HloOpcode op) {
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == HloOpcode::kSelect ||
         op == HloOpcode::kClamp;
}

bool IsCollective(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAllGather: case O::kAllGatherStart: case O::kAllReduce: case O::kAllReduceStart:
    case O::kAllToAll: case O::kCollectiveBroadcast: case O::kCollectivePermute:
    case O::kCollectivePermuteStart: case O::kReduceScatter: case O::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

}  // namespace hloc
