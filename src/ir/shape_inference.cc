// Shape inference: the opcode dispatch, XLA's ShapeUtil comparisons and the helpers every opcode
// family shares (windows, reducer signatures). The families live in shape_inference_*.cc.
#include "ir/shape_inference.h"

#include <tuple>

#include "ir/computation.h"
#include "ir/shape_inference_internal.h"

namespace hloc {
namespace sii = shape_inference_internal;

namespace {

// Exponent range and significand width of the floating-point types, as
// primitive_util::OverflowExponent / SignificandWidth give them; only their order matters.
std::pair<int, int> FloatRangeAndPrecision(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::F16: return {16, 11};
    case P::BF16: return {128, 8};
    case P::F32: return {128, 24};
    case P::F64: return {1024, 53};
    case P::F4E2M1FN: return {3, 2};
    case P::F8E3M4: return {4, 5};
    case P::F8E4M3: return {8, 4};
    case P::F8E4M3FN: return {9, 4};
    case P::F8E4M3B11FNUZ: return {5, 4};
    case P::F8E4M3FNUZ: return {8, 4};
    case P::F8E5M2: return {16, 3};
    case P::F8E5M2FNUZ: return {16, 3};
    case P::F8E8M0FNU: return {128, 1};
    default: return {-1, -1};
  }
}

enum class ElementTypeRule { kExact, kIgnoreFpPrecision, kIgnore };

bool CompatibleImpl(const Shape& a, const Shape& b, ElementTypeRule rule) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i)
      if (!CompatibleImpl(a.tuple_shapes(i), b.tuple_shapes(i), rule)) return false;
    return true;
  }
  // Tokens and opaque values only ever match their own kind.
  if (!a.IsArray() || !b.IsArray()) return a.element_type() == b.element_type();
  switch (rule) {
    case ElementTypeRule::kExact:
      if (a.element_type() != b.element_type()) return false;
      break;
    case ElementTypeRule::kIgnoreFpPrecision:
      if (!SameElementTypeIgnoringFpPrecision(a, b)) return false;
      break;
    case ElementTypeRule::kIgnore:
      break;
  }
  return a.dimensions() == b.dimensions();
}

}  // namespace

bool ShapesCompatible(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, ElementTypeRule::kExact);
}
bool ShapesCompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, ElementTypeRule::kIgnoreFpPrecision);
}
bool ShapesCompatibleIgnoringElementType(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, ElementTypeRule::kIgnore);
}

bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (IsFloatingPoint(a.element_type()) && IsFloatingPoint(b.element_type())) return true;
  return a.element_type() == b.element_type();
}

PrimitiveType HigherPrecisionElementType(PrimitiveType a, PrimitiveType b) {
  auto properties = [](PrimitiveType t) {
    PrimitiveType component = ComplexComponentType(t);
    auto [range, precision] = FloatRangeAndPrecision(component);
    return std::make_tuple(IsComplex(t), range, precision, BitWidth(component),
                           IsSignedIntegral(component));
  };
  return properties(b) > properties(a) ? b : a;
}

absl::StatusOr<ProgramShape> ComputeProgramShape(const HloComputation& computation) {
  ProgramShape program;
  if (computation.root_instruction() == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root instruction"));
  }
  for (int64_t i = 0; i < computation.num_parameters(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    if (p == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(),
                                                     " has no parameter number ", i));
    }
    program.parameters.push_back(p->shape());
  }
  program.result = computation.root_instruction()->shape();
  return program;
}

namespace shape_inference_internal {

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

bool IsUnboundedDynamic(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& t : s.tuple_shapes())
      if (IsUnboundedDynamic(t)) return true;
    return false;
  }
  for (int64_t d : s.dimensions())
    if (IsUnbounded(d)) return true;
  return false;
}

bool IsBoundedDynamicDimension(const Shape& s, int64_t dim) {
  return s.is_dynamic_dimension(dim) && !IsUnbounded(s.dimensions(dim));
}

Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims, std::vector<bool> dynamic) {
  Shape s(type, std::move(dims));
  s.clear_layout();
  bool any = false;
  for (bool d : dynamic) any |= d;
  if (any) {
    dynamic.resize(s.rank(), false);
    s.mutable_dynamic_dimensions() = std::move(dynamic);
  }
  return s;
}

Shape StripLayout(const Shape& s) {
  Shape out = s;
  if (out.IsTuple()) {
    for (Shape& t : out.mutable_tuple_shapes()) t = StripLayout(t);
  } else {
    out.clear_layout();
  }
  return out;
}

Shape ChangeElementType(const Shape& s, PrimitiveType type) {
  Shape out = StripLayout(s);
  out.set_element_type(type);
  return out;
}

void SetDynamicDimension(Shape& s, int64_t dim, bool dynamic) {
  auto& d = s.mutable_dynamic_dimensions();
  if (d.size() < static_cast<size_t>(s.rank())) d.resize(s.rank(), false);
  if (dim >= 0 && dim < s.rank()) d[dim] = dynamic;
}

absl::Status ExpectArray(const Shape& shape, std::string_view what) {
  if (!shape.IsArray()) {
    return InvalidArgument("Expected array argument for %s, but got %s.", std::string(what),
                           Str(shape));
  }
  return absl::OkStatus();
}

absl::Status CheckOperandCount(const HloInstruction& inst, int64_t expected) {
  if (inst.operand_count() != expected) {
    return InvalidArgument("Expected %d operands for %s instruction, got %d.", expected,
                           std::string(HloOpcodeString(inst.opcode())), inst.operand_count());
  }
  return absl::OkStatus();
}

absl::Status CheckMinOperandCount(const HloInstruction& inst, int64_t minimum) {
  if (inst.operand_count() < minimum) {
    return InvalidArgument("Expected at least %d operands for %s instruction, got %d.", minimum,
                           std::string(HloOpcodeString(inst.opcode())), inst.operand_count());
  }
  return absl::OkStatus();
}

std::vector<const Shape*> OperandShapes(const HloInstruction& inst) {
  std::vector<const Shape*> shapes;
  shapes.reserve(inst.operand_count());
  for (const HloInstruction* op : inst.operands()) shapes.push_back(&op->shape());
  return shapes;
}

absl::StatusOr<ProgramShape> CalledProgramShape(const HloInstruction& inst, size_t index,
                                                std::string_view role) {
  const auto& called = inst.called_computations();
  if (index >= called.size() || called[index] == nullptr) {
    return InvalidArgument("%s instruction has no %s computation.",
                           std::string(HloOpcodeString(inst.opcode())), std::string(role));
  }
  return ComputeProgramShape(*called[index]);
}

absl::StatusOr<int64_t> SingleDimension(const HloInstruction& inst, std::string_view what) {
  const auto& dims = inst.attrs().dimensions;
  if (dims.size() != 1) {
    return InvalidArgument("%s expects exactly one dimension in dimensions={...}, got {%s}.",
                           std::string(what), Join(dims));
  }
  return dims[0];
}

absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type) {
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return InvalidArgument("Window has dimension %d but base shape has dimension %d.",
                           window.dimensions.size(), base.rank());
  }
  std::vector<int64_t> dims(base.rank());
  std::vector<bool> dynamic(base.rank());
  // Sizes beyond 2^62 are rejected so that the arithmetic below cannot overflow.
  constexpr int64_t kLimit = int64_t{1} << 62;
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& w = window.dimensions[i];
    if (w.size <= 0) return InvalidArgument("Window dimension %d has a non-positive size %d.", i, w.size);
    if (w.stride <= 0) return InvalidArgument("Window dimension %d has a non-positive stride %d.", i, w.stride);
    if (w.base_dilation < 1)
      return InvalidArgument("Window dimension %d has a non-positive base dilation %d.", i, w.base_dilation);
    if (w.window_dilation < 1)
      return InvalidArgument("Window dimension %d has a non-positive window dilation %d.", i, w.window_dilation);
    dynamic[i] = base.is_dynamic_dimension(i);
    int64_t b = base.dimensions(i);
    if (IsUnbounded(b)) {
      dims[i] = Shape::kUnboundedSize;
      continue;
    }
    if (b < 0 || b > kLimit / w.base_dilation || w.size > kLimit / w.window_dilation) {
      return InvalidArgument("Window dimension %d is too large (or the base is negative).", i);
    }
    // DilatedBound(n, d) = (n - 1) * d + 1 (0 for n == 0); StridedBound(n, w, s) =
    // (n - w) / s + 1 when the window fits, else 0. 128-bit sums: paddings may be anything.
    __int128 dilated_base = b == 0 ? 0 : static_cast<__int128>(b - 1) * w.base_dilation + 1;
    __int128 padded = static_cast<__int128>(w.padding_low) + dilated_base + w.padding_high;
    __int128 dilated_window = static_cast<__int128>(w.size - 1) * w.window_dilation + 1;
    __int128 out = padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
    if (out > kLimit) return InvalidArgument("Window dimension %d produces a result that is too large.", i);
    dims[i] = static_cast<int64_t>(out);
  }
  return MakeShape(element_type, dims, dynamic);
}

absl::Status VerifyReducerShape(const ProgramShape& reducer,
                                const std::vector<const Shape*>& init_value_shapes,
                                const std::vector<PrimitiveType>& input_element_types,
                                int64_t inputs) {
  if (static_cast<int64_t>(reducer.parameters.size()) != inputs * 2) {
    return InvalidArgument("Reduction function must take %d parameters, but takes %d parameter(s).",
                           inputs * 2, reducer.parameters.size());
  }
  const Shape& acc = reducer.result;
  std::vector<const Shape*> acc_parts;
  if (acc.IsArray()) {
    if (inputs != 1) {
      return InvalidArgument(
          "Reduction function must produce a tuple with %d elements, but produces a scalar.", inputs);
    }
    acc_parts.push_back(&acc);
  } else if (acc.IsTuple()) {
    if (static_cast<int64_t>(acc.tuple_shapes().size()) != inputs) {
      return InvalidArgument(
          "Reduction function must produce a tuple with %d elements, but has %d elements.", inputs,
          acc.tuple_shapes().size());
    }
    for (const Shape& e : acc.tuple_shapes()) acc_parts.push_back(&e);
  } else {
    return InvalidArgument(
        "Reduction function must produce a scalar or tuple of scalars, but has shape: %s.", Str(acc));
  }
  for (const Shape* e : acc_parts) {
    if (!IsScalar(*e)) {
      return InvalidArgument(
          "Reduction function must return a scalar or tuple of scalars but returns shape: %s.",
          Str(acc));
    }
  }
  if (init_value_shapes.size() < static_cast<size_t>(inputs) ||
      input_element_types.size() < static_cast<size_t>(inputs)) {
    return InvalidArgument("Reduction has fewer init values or inputs than its reducer expects.");
  }
  for (int64_t i = 0; i < inputs; ++i) {
    if (!ShapesCompatible(*acc_parts[i], reducer.parameters[i])) {
      return InvalidArgument(
          "Reduction function's %d-th parameter shape differs from the result shape: %s vs %s.", i,
          Str(reducer.parameters[i]), Str(*acc_parts[i]));
    }
    if (!ShapesCompatibleIgnoringFpPrecision(*acc_parts[i], *init_value_shapes[i])) {
      return InvalidArgument(
          "Reduction function's accumulator shape at index %d differs from the init_value shape: "
          "%s vs %s.",
          i, Str(*acc_parts[i]), Str(*init_value_shapes[i]));
    }
    Shape input_element = MakeShape(input_element_types[i], {});
    if (!ShapesCompatibleIgnoringFpPrecision(input_element, reducer.parameters[inputs + i])) {
      return InvalidArgument(
          "Reduction function's %d-th parameter shape differs from the input type element type: "
          "%s vs %s.",
          inputs + i, Str(reducer.parameters[inputs + i]), Str(input_element));
    }
    if (!ShapesCompatibleIgnoringFpPrecision(*acc_parts[i], reducer.parameters[inputs + i])) {
      return InvalidArgument(
          "Reduction function's %d-th parameter shape must match the result shape, but got %s vs %s.",
          inputs + i, Str(reducer.parameters[inputs + i]), Str(*acc_parts[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace shape_inference_internal

absl::StatusOr<Shape> InferShape(const HloInstruction& inst) {
  using O = HloOpcode;
  int arity = HloOpcodeArity(inst.opcode());
  if (arity != kVariadic) {
    absl::Status s = sii::CheckOperandCount(inst, arity);
    if (!s.ok()) return s;
  }
  for (const HloInstruction* op : inst.operands()) {
    if (op == nullptr) return absl::InvalidArgumentError("instruction has a null operand");
  }
  // Every opcode is listed (no default) so that a new opcode without inference is a compile
  // warning (-Wswitch), not a silent gap.
  switch (inst.opcode()) {
    case O::kAbs: case O::kAdd: case O::kAnd: case O::kAtan2: case O::kBitcastConvert:
    case O::kCbrt: case O::kCeil: case O::kClamp: case O::kClz: case O::kCompare:
    case O::kComplex: case O::kConvert: case O::kCopy: case O::kCos: case O::kDivide:
    case O::kErf: case O::kExp: case O::kExpm1: case O::kFloor: case O::kImag:
    case O::kIsFinite: case O::kLog: case O::kLog1p: case O::kLogistic: case O::kMap: case O::kMaximum:
    case O::kMinimum: case O::kMultiply: case O::kNegate: case O::kNot: case O::kOr:
    case O::kPopulationCount: case O::kPower: case O::kReal: case O::kReducePrecision:
    case O::kRemainder: case O::kRng: case O::kRoundNearestAfz: case O::kRoundNearestEven:
    case O::kRsqrt: case O::kSelect: case O::kShiftLeft: case O::kShiftRightArithmetic:
    case O::kShiftRightLogical: case O::kSign: case O::kSin: case O::kSqrt:
    case O::kStochasticConvert: case O::kSubtract: case O::kTan: case O::kTanh: case O::kXor:
      return sii::InferElementwiseFamily(inst);

    case O::kBitcast: case O::kBroadcast: case O::kConcatenate: case O::kDynamicReshape:
    case O::kGetDimensionSize: case O::kIota: case O::kPad: case O::kReshape: case O::kReverse:
    case O::kSetDimensionSize: case O::kSlice: case O::kTranspose:
      return sii::InferDataMovementFamily(inst);

    case O::kDynamicSlice: case O::kDynamicUpdateSlice: case O::kGather: case O::kScatter:
    case O::kSort: case O::kTopK:
      return sii::InferIndexingFamily(inst);

    case O::kBatchNormGrad: case O::kBatchNormInference: case O::kBatchNormTraining:
    case O::kCholesky: case O::kConvolution: case O::kDot: case O::kFft: case O::kRaggedDot:
    case O::kTriangularSolve:
      return sii::InferContractionFamily(inst);

    case O::kReduce: case O::kReduceWindow: case O::kScan: case O::kSelectAndScatter:
      return sii::InferReductionFamily(inst);

    case O::kAddDependency: case O::kAfterAll: case O::kAsyncDone: case O::kAsyncStart:
    case O::kAsyncUpdate: case O::kCall: case O::kConditional: case O::kConstant:
    case O::kCopyDone: case O::kCopyStart: case O::kCustomCall: case O::kDomain: case O::kFusion:
    case O::kGetTupleElement: case O::kInfeed: case O::kOptimizationBarrier: case O::kOutfeed:
    case O::kParameter: case O::kRecv: case O::kRecvDone: case O::kRngBitGenerator:
    case O::kRngGetAndUpdateState: case O::kSend: case O::kSendDone: case O::kTuple:
    case O::kWhile:
      return sii::InferControlFamily(inst);

    case O::kAllGather: case O::kAllGatherDone: case O::kAllGatherStart: case O::kAllReduce:
    case O::kAllReduceDone: case O::kAllReduceStart: case O::kAllToAll:
    case O::kCollectiveBroadcast: case O::kCollectivePermute: case O::kCollectivePermuteDone:
    case O::kCollectivePermuteStart: case O::kPartitionId: case O::kRaggedAllToAll:
    case O::kReduceScatter: case O::kReplicaId:
      return sii::InferCollectiveFamily(inst);
  }
  return absl::InternalError(
      absl::StrCat("no shape inference for opcode ", std::string(HloOpcodeString(inst.opcode()))));
}

}  // namespace hloc
