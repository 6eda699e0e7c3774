#include "eval/eval_ops_util.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/float_types.h"

namespace hloc {
namespace evalops {

absl::StatusOr<int64_t> CheckedProduct(absl::Span<const int64_t> dims) {
  constexpr int64_t kLimit = int64_t{1} << 62;
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension size ", d));
    if (d != 0 && n > kLimit / d)
      return absl::InvalidArgumentError("element count overflows 2^62");
    n *= d;
  }
  return n;
}

absl::StatusOr<int64_t> WindowedOutputSize(int64_t n, const WindowDimension& wd) {
  if (n < 0 || wd.size < 0 || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1)
    return absl::InvalidArgumentError("window sizes must be non-negative, strides and dilations positive");
  // Bounds far beyond any real program keep every later position computation
  // (o * stride - padding_low + k * window_dilation) inside int64.
  constexpr int64_t kBig = int64_t{1} << 40;
  if (wd.stride > kBig || wd.base_dilation > kBig || wd.window_dilation > kBig || wd.padding_low > kBig ||
      wd.padding_low < -kBig || wd.padding_high > kBig || wd.padding_high < -kBig)
    return absl::InvalidArgumentError("window attribute too large");
  int64_t dilated = 0, padded = 0, extent = 0;
  bool overflow = false;
  if (n > 0) {
    overflow |= __builtin_mul_overflow(n - 1, wd.base_dilation, &dilated);
    overflow |= __builtin_add_overflow(dilated, int64_t{1}, &dilated);
  }
  overflow |= __builtin_add_overflow(dilated, wd.padding_low, &padded);
  overflow |= __builtin_add_overflow(padded, wd.padding_high, &padded);
  if (wd.size > 0) {
    overflow |= __builtin_mul_overflow(wd.size - 1, wd.window_dilation, &extent);
    overflow |= __builtin_add_overflow(extent, int64_t{1}, &extent);
  }
  if (overflow || padded > (int64_t{1} << 62) || extent > (int64_t{1} << 62))
    return absl::InvalidArgumentError("window arithmetic overflows");
  if (padded < extent || padded < 0) return 0;
  return (padded - extent) / wd.stride + 1;
}

absl::Status CheckDimList(absl::Span<const int64_t> dims, int64_t rank, const std::string& what) {
  std::vector<bool> seen(rank > 0 ? rank : 0, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return absl::InvalidArgumentError(
          absl::StrCat(what, " {", absl::StrJoin(dims, ","), "} has ", d, " outside [0, ", rank, ")"));
    if (seen[d])
      return absl::InvalidArgumentError(
          absl::StrCat(what, " {", absl::StrJoin(dims, ","), "} repeats ", d));
    seen[d] = true;
  }
  return absl::OkStatus();
}

absl::Status CheckArrayLiteral(const Literal& l, const std::string& what) {
  if (!l.shape().IsArray())
    return absl::InvalidArgumentError(
        absl::StrCat(what, " must be an array, got ", l.shape().ToString(false)));
  return absl::OkStatus();
}

absl::Status CheckResultDims(const Shape& shape, absl::Span<const int64_t> dims,
                             const std::string& what) {
  if (!shape.IsArray() || shape.dimensions() != std::vector<int64_t>(dims.begin(), dims.end()))
    return absl::InvalidArgumentError(absl::StrCat(
        what, " has shape ", shape.ToString(false), " but its operands give dimensions [",
        absl::StrJoin(dims, ","), "]"));
  return absl::OkStatus();
}

absl::StatusOr<const Shape*> ResultLeaf(const Shape& shape, int64_t i, int64_t count) {
  if (count == 1 && shape.IsArray()) return &shape;
  if (!shape.IsTuple() || shape.tuple_shapes().size() != static_cast<size_t>(count))
    return absl::InvalidArgumentError(absl::StrCat("result shape ", shape.ToString(false),
                                                   " should be a tuple of ", count, " arrays"));
  const Shape& leaf = shape.tuple_shapes(i);
  if (!leaf.IsArray())
    return absl::InvalidArgumentError(
        absl::StrCat("result element ", i, " of ", shape.ToString(false), " is not an array"));
  return &leaf;
}

absl::Status Malformed(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " ", inst.name(), ": ", why));
}

ValueClass ClassOf(PrimitiveType t) {
  if (t == PrimitiveType::PRED) return ValueClass::kPred;
  if (IsComplex(t)) return ValueClass::kComplex;
  if (IsFloatingPoint(t)) return ValueClass::kFloat;
  if (IsUnsignedIntegral(t)) return ValueClass::kUnsigned;
  return ValueClass::kSigned;
}

std::vector<double> LoadDoubles(const Literal& l) {
  const int64_t n = l.element_count();
  std::vector<double> out(n);
  switch (l.element_type()) {
    case PrimitiveType::F32: {
      const float* p = l.data<float>();
      for (int64_t i = 0; i < n; ++i) out[i] = p[i];
      break;
    }
    case PrimitiveType::F64:
      if (n > 0) std::memcpy(out.data(), l.untyped_data(), n * sizeof(double));
      break;
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = l.GetDouble(i);
  }
  return out;
}

std::vector<int64_t> LoadInts(const Literal& l) {
  const int64_t n = l.element_count();
  std::vector<int64_t> out(n);
  if (l.element_type() == PrimitiveType::S32) {
    const int32_t* p = l.data<int32_t>();
    for (int64_t i = 0; i < n; ++i) out[i] = p[i];
    return out;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = l.GetInt(i);
  return out;
}

std::vector<std::complex<double>> LoadComplex(const Literal& l) {
  const int64_t n = l.element_count();
  std::vector<std::complex<double>> out(n);
  for (int64_t i = 0; i < n; ++i) out[i] = l.GetComplex(i);
  return out;
}

double RoundToElementType(PrimitiveType t, double x) {
  switch (t) {
    case PrimitiveType::F64:
      return x;
    case PrimitiveType::F32:
      return static_cast<float>(x);
    case PrimitiveType::BF16: {
      float f = static_cast<float>(x);
      if (std::isnan(f)) return f;
      uint32_t b;
      std::memcpy(&b, &f, 4);
      // Round to nearest even on the 16 bits that are dropped; overflow carries into inf.
      b += 0x7FFF + ((b >> 16) & 1);
      b &= 0xFFFF0000u;
      std::memcpy(&f, &b, 4);
      return f;
    }
    default:
      return RoundToType(t, x);
  }
}

uint64_t FloatBits(PrimitiveType t, double x) {
  switch (t) {
    case PrimitiveType::F64: {
      uint64_t b;
      std::memcpy(&b, &x, 8);
      return b;
    }
    case PrimitiveType::F32: {
      const float f = static_cast<float>(x);
      uint32_t b;
      std::memcpy(&b, &f, 4);
      return b;
    }
    case PrimitiveType::BF16: {
      const float f = static_cast<float>(RoundToElementType(t, x));
      uint32_t b;
      std::memcpy(&b, &f, 4);
      if (std::isnan(f)) return ((b >> 16) & 0x8000) | 0x7FC0;
      return b >> 16;
    }
    default:
      return EncodeFloat(t, x);
  }
}

int64_t WrapInt(PrimitiveType t, int64_t v) {
  if (t == PrimitiveType::PRED) return v != 0;
  const int w = BitWidth(t);
  if (w >= 64 || w <= 0) return v;
  const uint64_t mask = (uint64_t{1} << w) - 1;
  uint64_t u = static_cast<uint64_t>(v) & mask;
  if (IsSignedIntegral(t) && ((u >> (w - 1)) & 1)) u |= ~mask;
  return static_cast<int64_t>(u);
}

int64_t TotalOrderKey(PrimitiveType t, uint64_t bits) {
  const int w = BitWidth(t);
  if (t == PrimitiveType::F8E8M0FNU || w <= 1) return static_cast<int64_t>(bits);  // no sign bit
  const uint64_t sign = (bits >> (w - 1)) & 1;
  const int64_t mag = static_cast<int64_t>(bits & ((w >= 64 ? ~uint64_t{0} >> 1 : (uint64_t{1} << (w - 1)) - 1)));
  // Negative values order by descending magnitude below every non-negative one; -0 < +0.
  return sign ? -mag - 1 : mag;
}

std::optional<BinaryReducer> MatchBinaryReducer(const HloComputation* comp, PrimitiveType type) {
  if (comp == nullptr || comp->num_parameters() != 2) return std::nullopt;
  const HloInstruction* p0 = comp->parameter_instruction(0);
  const HloInstruction* p1 = comp->parameter_instruction(1);
  const HloInstruction* root = comp->root_instruction();
  if (!p0 || !p1 || !root) return std::nullopt;
  for (const HloInstruction* i : {p0, p1, root})
    if (!i->shape().IsArray() || i->shape().rank() != 0 || i->shape().element_type() != type)
      return std::nullopt;
  if (root->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (!((a == p0 && b == p1) || (a == p1 && b == p0))) return std::nullopt;
  const bool logical = IsIntegral(type) || type == PrimitiveType::PRED;
  switch (root->opcode()) {
    case HloOpcode::kAdd: return BinaryReducer::kAdd;
    case HloOpcode::kMultiply: return BinaryReducer::kMultiply;
    case HloOpcode::kMaximum:
      if (IsComplex(type)) return std::nullopt;
      return BinaryReducer::kMaximum;
    case HloOpcode::kMinimum:
      if (IsComplex(type)) return std::nullopt;
      return BinaryReducer::kMinimum;
    case HloOpcode::kAnd: if (logical) return BinaryReducer::kAnd; return std::nullopt;
    case HloOpcode::kOr: if (logical) return BinaryReducer::kOr; return std::nullopt;
    case HloOpcode::kXor: if (logical) return BinaryReducer::kXor; return std::nullopt;
    default: return std::nullopt;
  }
}

absl::StatusOr<ScalarReducer> ScalarReducer::Create(BinaryReducer op, PrimitiveType type) {
  if (!IsArrayType(type)) return absl::InvalidArgumentError("reducer on a non-array type");
  const ValueClass cls = ClassOf(type);
  const bool bitwise = op == BinaryReducer::kAnd || op == BinaryReducer::kOr || op == BinaryReducer::kXor;
  if (bitwise && (cls == ValueClass::kFloat || cls == ValueClass::kComplex))
    return absl::InvalidArgumentError(absl::StrCat("bitwise reducer on ", std::string(PrimitiveTypeName(type))));
  if (cls == ValueClass::kComplex && (op == BinaryReducer::kMaximum || op == BinaryReducer::kMinimum))
    return absl::InvalidArgumentError("maximum/minimum of complex values");
  return ScalarReducer(op, type);
}

Value ScalarReducer::Load(const Literal& l, int64_t i) const { return LoadValue(l, i); }

void ScalarReducer::Store(Literal& l, int64_t i, const Value& v) const { StoreValue(l, i, v); }

Value ScalarReducer::Combine(const Value& a, const Value& b) const {
  Value r;
  switch (cls_) {
    case ValueClass::kFloat: {
      // XLA's maximum/minimum propagate NaN (the first NaN operand wins).
      if (op_ == BinaryReducer::kMaximum || op_ == BinaryReducer::kMinimum) {
        if (std::isnan(a.f)) return a;
        if (std::isnan(b.f)) return b;
        if (op_ == BinaryReducer::kMaximum) return (a.f < b.f) ? b : a;
        return (b.f < a.f) ? b : a;
      }
      if (type_ == PrimitiveType::F64) {
        r.f = op_ == BinaryReducer::kAdd ? a.f + b.f : a.f * b.f;
      } else {
        // Narrow types compute in f32 and round the result, as XLA (Eigen) does.
        const float x = static_cast<float>(a.f), y = static_cast<float>(b.f);
        const float z = op_ == BinaryReducer::kAdd ? x + y : x * y;
        r.f = type_ == PrimitiveType::F32 ? static_cast<double>(z) : RoundToElementType(type_, z);
      }
      r.i = static_cast<int64_t>(FloatBits(type_, r.f));
      return r;
    }
    case ValueClass::kComplex: {
      std::complex<double> z = op_ == BinaryReducer::kAdd ? a.c + b.c : a.c * b.c;
      if (type_ == PrimitiveType::C64)
        z = {static_cast<float>(z.real()), static_cast<float>(z.imag())};
      r.c = z;
      return r;
    }
    case ValueClass::kPred: {
      const bool x = a.i != 0, y = b.i != 0;
      switch (op_) {
        case BinaryReducer::kAdd: case BinaryReducer::kOr: case BinaryReducer::kMaximum: r.i = x || y; break;
        case BinaryReducer::kMultiply: case BinaryReducer::kAnd: case BinaryReducer::kMinimum: r.i = x && y; break;
        case BinaryReducer::kXor: r.i = x != y; break;
      }
      return r;
    }
    case ValueClass::kSigned:
    case ValueClass::kUnsigned: {
      const uint64_t x = static_cast<uint64_t>(a.i), y = static_cast<uint64_t>(b.i);
      const bool is_unsigned = cls_ == ValueClass::kUnsigned;
      uint64_t z = 0;
      switch (op_) {
        case BinaryReducer::kAdd: z = x + y; break;
        case BinaryReducer::kMultiply: z = x * y; break;
        case BinaryReducer::kAnd: z = x & y; break;
        case BinaryReducer::kOr: z = x | y; break;
        case BinaryReducer::kXor: z = x ^ y; break;
        case BinaryReducer::kMaximum:
          z = is_unsigned ? (x < y ? y : x) : (a.i < b.i ? y : x);
          break;
        case BinaryReducer::kMinimum:
          z = is_unsigned ? (y < x ? y : x) : (b.i < a.i ? y : x);
          break;
      }
      r.i = WrapInt(type_, static_cast<int64_t>(z));
      return r;
    }
  }
  return r;
}

std::optional<ScalarReducer> FastReducerFor(const HloComputation* comp, PrimitiveType type) {
  std::optional<BinaryReducer> op = MatchBinaryReducer(comp, type);
  if (!op) return std::nullopt;
  absl::StatusOr<ScalarReducer> r = ScalarReducer::Create(*op, type);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::optional<ScalarCompare> MatchScalarCompare(const HloComputation* comp, PrimitiveType type,
                                                int64_t num_params) {
  if (comp == nullptr || comp->num_parameters() != num_params || num_params < 2) return std::nullopt;
  const HloInstruction* p0 = comp->parameter_instruction(0);
  const HloInstruction* p1 = comp->parameter_instruction(1);
  const HloInstruction* root = comp->root_instruction();
  if (!p0 || !p1 || !root || root->opcode() != HloOpcode::kCompare || root->operand_count() != 2)
    return std::nullopt;
  for (const HloInstruction* i : {p0, p1})
    if (!i->shape().IsArray() || i->shape().rank() != 0 || i->shape().element_type() != type)
      return std::nullopt;
  if (!root->shape().IsArray() || root->shape().rank() != 0 ||
      root->shape().element_type() != PrimitiveType::PRED || !root->attrs().comparison_direction)
    return std::nullopt;
  ScalarCompare c;
  c.direction = *root->attrs().comparison_direction;
  if (root->operand(0) == p1 && root->operand(1) == p0) {
    // compare(p1, p0) with direction D is compare(p0, p1) with D mirrored.
    switch (c.direction) {
      case ComparisonDirection::kLt: c.direction = ComparisonDirection::kGt; break;
      case ComparisonDirection::kGt: c.direction = ComparisonDirection::kLt; break;
      case ComparisonDirection::kLe: c.direction = ComparisonDirection::kGe; break;
      case ComparisonDirection::kGe: c.direction = ComparisonDirection::kLe; break;
      default: break;
    }
  } else if (!(root->operand(0) == p0 && root->operand(1) == p1)) {
    return std::nullopt;
  }
  const ValueClass cls = ClassOf(type);
  if (cls == ValueClass::kComplex) return std::nullopt;
  ComparisonType t = root->attrs().comparison_type;
  if (cls == ValueClass::kFloat) {
    if (t == ComparisonType::kDefault) t = ComparisonType::kFloat;
    if (t != ComparisonType::kFloat && t != ComparisonType::kTotalOrder) return std::nullopt;
  } else {
    // Integers: total order is their ordinary order; the signedness comes from the type.
    if (t == ComparisonType::kFloat) return std::nullopt;
    t = cls == ValueClass::kSigned ? ComparisonType::kSigned : ComparisonType::kUnsigned;
  }
  c.type = t;
  return c;
}

std::optional<CompareKeys> CompareKeys::Make(const Literal& l, const ScalarCompare& c) {
  const PrimitiveType t = l.element_type();
  const ValueClass cls = ClassOf(t);
  if (cls == ValueClass::kComplex || !l.shape().IsArray()) return std::nullopt;
  CompareKeys k;
  k.dir_ = c.direction;
  const int64_t n = l.element_count();
  switch (c.type) {
    case ComparisonType::kFloat:
      if (cls != ValueClass::kFloat) return std::nullopt;
      k.use_double_ = true;
      k.d_ = LoadDoubles(l);
      return k;
    case ComparisonType::kTotalOrder:
      if (cls != ValueClass::kFloat) return std::nullopt;
      k.k_.resize(n);
      for (int64_t i = 0; i < n; ++i) k.k_[i] = TotalOrderKey(t, l.GetRawBits(i));
      return k;
    case ComparisonType::kSigned:
      if (cls == ValueClass::kFloat) return std::nullopt;
      k.k_ = LoadInts(l);
      return k;
    case ComparisonType::kUnsigned:
      if (cls == ValueClass::kFloat) return std::nullopt;
      k.k_.resize(n);
      // Flipping the top bit makes signed order agree with unsigned order.
      for (int64_t i = 0; i < n; ++i)
        k.k_[i] = static_cast<int64_t>(l.GetUint(i) ^ (uint64_t{1} << 63));
      return k;
    default:
      return std::nullopt;
  }
}

Value LoadValue(const Literal& l, int64_t i) {
  Value v;
  switch (ClassOf(l.element_type())) {
    case ValueClass::kFloat:
      v.f = l.GetDouble(i);
      v.i = static_cast<int64_t>(l.GetRawBits(i));
      break;
    case ValueClass::kComplex: v.c = l.GetComplex(i); break;
    default: v.i = l.GetInt(i); break;
  }
  return v;
}

void StoreValue(Literal& l, int64_t i, const Value& v) {
  switch (ClassOf(l.element_type())) {
    case ValueClass::kFloat: l.SetRawBits(i, static_cast<uint64_t>(v.i)); break;
    case ValueClass::kComplex: l.SetComplex(i, v.c); break;
    default: l.SetInt(i, v.i); break;
  }
}

namespace {

bool IsScalarArray(const Shape& s) { return s.IsArray() && s.rank() == 0; }

// Float formats whose NaNs carry a sign bit (IEEE-style and the fn types without -0 tricks).
bool HasSignedNan(PrimitiveType t) {
  using P = PrimitiveType;
  return t == P::F16 || t == P::BF16 || t == P::F32 || t == P::F64 || t == P::F8E5M2 ||
         t == P::F8E4M3 || t == P::F8E3M4 || t == P::F8E4M3FN;
}

// Float arithmetic as XLA's evaluator does it: f64 in double, every other float type in f32
// with the result rounded to the type.
template <typename Op>
double FloatOp(PrimitiveType t, double a, double b, Op op) {
  if (t == PrimitiveType::F64) return op(a, b);
  const float r = op(static_cast<float>(a), static_cast<float>(b));
  return t == PrimitiveType::F32 ? r : RoundToElementType(t, r);
}

// Complex arithmetic: c64 in complex<float>, c128 in complex<double>.
template <typename Op>
std::complex<double> ComplexOp(PrimitiveType t, std::complex<double> a, std::complex<double> b, Op op) {
  if (t == PrimitiveType::C128) return op(a, b);
  const std::complex<float> r = op(std::complex<float>(a), std::complex<float>(b));
  return {r.real(), r.imag()};
}

}  // namespace

std::optional<ScalarProgram> ScalarProgram::Compile(const HloComputation* comp) {
  if (comp == nullptr || comp->root_instruction() == nullptr) return std::nullopt;
  ScalarProgram p;
  for (int64_t i = 0; i < comp->num_parameters(); ++i) {
    const HloInstruction* param = comp->parameter_instruction(i);
    if (param == nullptr || !IsScalarArray(param->shape())) return std::nullopt;
    p.param_types_.push_back(param->shape().element_type());
  }
  absl::flat_hash_map<const HloInstruction*, int> index;
  const HloInstruction* root = comp->root_instruction();
  for (const HloInstruction* inst : comp->MakeInstructionPostOrder()) {
    if (inst == root && inst->opcode() == HloOpcode::kTuple) continue;
    if (!IsScalarArray(inst->shape())) return std::nullopt;
    Step s;
    s.op = inst->opcode();
    s.type = inst->shape().element_type();
    s.cls = ClassOf(s.type);
    std::vector<int> opnds;
    for (const HloInstruction* o : inst->operands()) {
      auto it = index.find(o);
      if (it == index.end()) return std::nullopt;
      opnds.push_back(it->second);
    }
    auto operand_type = [&](int k) { return p.steps_[opnds[k]].type; };
    auto same_types = [&]() {
      for (size_t k = 0; k < opnds.size(); ++k)
        if (operand_type(k) != s.type) return false;
      return true;
    };
    const bool is_float = s.cls == ValueClass::kFloat, is_complex = s.cls == ValueClass::kComplex;
    const bool is_int = s.cls == ValueClass::kSigned || s.cls == ValueClass::kUnsigned;
    const bool is_pred = s.cls == ValueClass::kPred;
    bool ok = false;
    switch (s.op) {
      case HloOpcode::kParameter:
        s.param = inst->attrs().parameter_number;
        ok = s.param >= 0 && s.param < p.num_params() && p.param_types_[s.param] == s.type;
        break;
      case HloOpcode::kConstant:
        if (inst->attrs().literal && inst->attrs().literal->shape().IsArray() &&
            inst->attrs().literal->element_type() == s.type && inst->attrs().literal->element_count() == 1) {
          s.constant = LoadValue(*inst->attrs().literal, 0);
          ok = true;
        }
        break;
      case HloOpcode::kCompare:
        if (opnds.size() == 2 && is_pred && operand_type(0) == operand_type(1) &&
            inst->attrs().comparison_direction) {
          s.operand_type = operand_type(0);
          s.dir = *inst->attrs().comparison_direction;
          s.ctype = inst->attrs().comparison_type;
          const ValueClass oc = ClassOf(s.operand_type);
          ok = oc != ValueClass::kComplex || s.dir == ComparisonDirection::kEq || s.dir == ComparisonDirection::kNe;
        }
        break;
      case HloOpcode::kSelect:
        ok = opnds.size() == 3 && operand_type(0) == PrimitiveType::PRED && operand_type(1) == s.type &&
             operand_type(2) == s.type;
        break;
      case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
        ok = opnds.size() == 2 && same_types() && (is_int || is_pred);
        break;
      case HloOpcode::kNot:
        ok = opnds.size() == 1 && same_types() && (is_int || is_pred);
        break;
      case HloOpcode::kAdd: case HloOpcode::kMultiply:
        ok = opnds.size() == 2 && same_types();
        break;
      case HloOpcode::kSubtract:
        ok = opnds.size() == 2 && same_types() && !is_pred;
        break;
      case HloOpcode::kDivide:
        ok = opnds.size() == 2 && same_types() && (is_float || is_complex);
        break;
      case HloOpcode::kMaximum: case HloOpcode::kMinimum:
        ok = opnds.size() == 2 && same_types() && !is_complex;
        break;
      case HloOpcode::kNegate:
        ok = opnds.size() == 1 && same_types() && !is_pred;
        break;
      case HloOpcode::kAbs:
        ok = opnds.size() == 1 && same_types() && (is_float || is_int);
        break;
      case HloOpcode::kCopy:
        ok = opnds.size() == 1 && same_types();
        break;
      default:
        break;
    }
    if (!ok) return std::nullopt;
    if (!opnds.empty()) s.a = opnds[0];
    if (opnds.size() > 1) s.b = opnds[1];
    if (opnds.size() > 2) s.c = opnds[2];
    index[inst] = static_cast<int>(p.steps_.size());
    p.steps_.push_back(s);
  }
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : root->operands()) {
      auto it = index.find(o);
      if (it == index.end()) return std::nullopt;
      p.results_.push_back(it->second);
    }
  } else {
    auto it = index.find(root);
    if (it == index.end()) return std::nullopt;
    p.results_.push_back(it->second);
  }
  p.scratch_.resize(p.steps_.size());
  return p;
}

void ScalarProgram::Run(const Value* args, Value* results) const {
  std::vector<Value>& v = scratch_;
  for (size_t k = 0; k < steps_.size(); ++k) {
    const Step& s = steps_[k];
    Value r;
    const PrimitiveType t = s.type;
    switch (s.op) {
      case HloOpcode::kParameter: r = args[s.param]; break;
      case HloOpcode::kConstant: r = s.constant; break;
      case HloOpcode::kCopy: r = v[s.a]; break;
      case HloOpcode::kSelect: r = v[s.a].i ? v[s.b] : v[s.c]; break;
      case HloOpcode::kCompare: {
        const Value& x = v[s.a];
        const Value& y = v[s.b];
        const ValueClass oc = ClassOf(s.operand_type);
        auto apply = [&](auto a, auto b) {
          switch (s.dir) {
            case ComparisonDirection::kEq: return a == b;
            case ComparisonDirection::kNe: return a != b;
            case ComparisonDirection::kLt: return a < b;
            case ComparisonDirection::kLe: return a <= b;
            case ComparisonDirection::kGt: return a > b;
            case ComparisonDirection::kGe: return a >= b;
          }
          return false;
        };
        bool res;
        if (oc == ValueClass::kComplex) {
          res = s.dir == ComparisonDirection::kEq ? x.c == y.c : x.c != y.c;
        } else if (oc == ValueClass::kFloat) {
          if (s.ctype == ComparisonType::kTotalOrder)
            res = apply(TotalOrderKey(s.operand_type, static_cast<uint64_t>(x.i)),
                        TotalOrderKey(s.operand_type, static_cast<uint64_t>(y.i)));
          else
            res = apply(x.f, y.f);
        } else if (oc == ValueClass::kSigned && s.ctype != ComparisonType::kUnsigned) {
          res = apply(x.i, y.i);
        } else {
          res = apply(static_cast<uint64_t>(x.i), static_cast<uint64_t>(y.i));
        }
        r.i = res;
        break;
      }
      default: {
        const Value& x = v[s.a];
        const Value y = s.b >= 0 ? v[s.b] : Value();
        switch (s.cls) {
          case ValueClass::kFloat:
            // Float Values carry their bit pattern in .i (it keeps NaN signs that doubles
            // decoded from narrow types lose); results of arithmetic are encoded afresh.
            switch (s.op) {
              case HloOpcode::kAdd: r.f = FloatOp(t, x.f, y.f, [](auto a, auto b) { return a + b; }); break;
              case HloOpcode::kSubtract: r.f = FloatOp(t, x.f, y.f, [](auto a, auto b) { return a - b; }); break;
              case HloOpcode::kMultiply: r.f = FloatOp(t, x.f, y.f, [](auto a, auto b) { return a * b; }); break;
              case HloOpcode::kDivide: r.f = FloatOp(t, x.f, y.f, [](auto a, auto b) { return a / b; }); break;
              case HloOpcode::kMaximum:
                r = std::isnan(x.f) ? x : std::isnan(y.f) ? y : (x.f < y.f ? y : x);
                break;
              case HloOpcode::kMinimum:
                r = std::isnan(x.f) ? x : std::isnan(y.f) ? y : (y.f < x.f ? y : x);
                break;
              case HloOpcode::kNegate: r.f = -x.f; break;
              case HloOpcode::kAbs: r.f = std::fabs(x.f); break;
              default: break;
            }
            if (s.op != HloOpcode::kMaximum && s.op != HloOpcode::kMinimum) {
              if (std::isnan(r.f) && (s.op == HloOpcode::kNegate || s.op == HloOpcode::kAbs) &&
                  HasSignedNan(t)) {
                const uint64_t sign = uint64_t{1} << (BitWidth(t) - 1);
                r.i = static_cast<int64_t>(s.op == HloOpcode::kNegate ? static_cast<uint64_t>(x.i) ^ sign
                                                                      : static_cast<uint64_t>(x.i) & ~sign);
              } else {
                r.i = static_cast<int64_t>(FloatBits(t, r.f));
              }
            }
            break;
          case ValueClass::kComplex:
            switch (s.op) {
              case HloOpcode::kAdd: r.c = ComplexOp(t, x.c, y.c, [](auto a, auto b) { return a + b; }); break;
              case HloOpcode::kSubtract: r.c = ComplexOp(t, x.c, y.c, [](auto a, auto b) { return a - b; }); break;
              case HloOpcode::kMultiply: r.c = ComplexOp(t, x.c, y.c, [](auto a, auto b) { return a * b; }); break;
              case HloOpcode::kDivide: r.c = ComplexOp(t, x.c, y.c, [](auto a, auto b) { return a / b; }); break;
              case HloOpcode::kNegate: r.c = -x.c; break;
              default: break;
            }
            break;
          case ValueClass::kPred: {
            const bool a = x.i != 0, b = y.i != 0;
            switch (s.op) {
              case HloOpcode::kAnd: case HloOpcode::kMultiply: case HloOpcode::kMinimum: r.i = a && b; break;
              case HloOpcode::kOr: case HloOpcode::kAdd: case HloOpcode::kMaximum: r.i = a || b; break;
              case HloOpcode::kXor: r.i = a != b; break;
              case HloOpcode::kNot: r.i = !a; break;
              default: break;
            }
            break;
          }
          default: {
            const uint64_t a = static_cast<uint64_t>(x.i), b = static_cast<uint64_t>(y.i);
            const bool is_unsigned = s.cls == ValueClass::kUnsigned;
            uint64_t z = 0;
            switch (s.op) {
              case HloOpcode::kAdd: z = a + b; break;
              case HloOpcode::kSubtract: z = a - b; break;
              case HloOpcode::kMultiply: z = a * b; break;
              case HloOpcode::kAnd: z = a & b; break;
              case HloOpcode::kOr: z = a | b; break;
              case HloOpcode::kXor: z = a ^ b; break;
              case HloOpcode::kNot: z = ~a; break;
              case HloOpcode::kNegate: z = uint64_t{0} - a; break;
              case HloOpcode::kAbs: z = (!is_unsigned && x.i < 0) ? uint64_t{0} - a : a; break;
              case HloOpcode::kMaximum: z = is_unsigned ? (a < b ? b : a) : (x.i < y.i ? b : a); break;
              case HloOpcode::kMinimum: z = is_unsigned ? (b < a ? b : a) : (y.i < x.i ? b : a); break;
              default: break;
            }
            r.i = WrapInt(t, static_cast<int64_t>(z));
          }
        }
      }
    }
    v[k] = r;
  }
  for (size_t i = 0; i < results_.size(); ++i) results[i] = v[results_[i]];
}

ScalarArgs::ScalarArgs(absl::Span<const PrimitiveType> types) {
  args_.reserve(types.size());
  for (PrimitiveType t : types) args_.emplace_back(Shape(t, {}));
  for (const Literal& l : args_) ptrs_.push_back(&l);
}

absl::StatusOr<Literal> CallScalarComputation(EvalContext& ctx, const HloComputation& comp,
                                              absl::Span<const Literal* const> args,
                                              absl::Span<const PrimitiveType> types,
                                              const HloInstruction& inst) {
  if (!ctx.call) return Malformed(inst, "no evaluator to call computations with");
  absl::StatusOr<Literal> result = ctx.call(comp, args);
  if (!result.ok()) return result.status();
  const int64_t count = static_cast<int64_t>(types.size());
  const Shape& s = result->shape();
  auto bad = [&]() {
    std::vector<std::string> names;
    for (PrimitiveType t : types) names.push_back(absl::StrCat(std::string(PrimitiveTypeName(t)), "[]"));
    return Malformed(inst, absl::StrCat("computation ", comp.name(), " returned ", s.ToString(false),
                                        ", expected ", count == 1 ? "" : "(",
                                        absl::StrJoin(names, ", "), count == 1 ? "" : ")"));
  };
  auto scalar_of = [](const Shape& x, PrimitiveType t) {
    return x.IsArray() && x.rank() == 0 && x.element_type() == t;
  };
  if (count == 1 && s.IsArray()) {
    if (!scalar_of(s, types[0])) return bad();
    return result;
  }
  if (!s.IsTuple() || s.tuple_shapes().size() != types.size() ||
      result->tuple_size() != count)
    return bad();
  for (int64_t i = 0; i < count; ++i)
    if (!scalar_of(result->tuple_element(i).shape(), types[i])) return bad();
  return result;
}

const Literal& ScalarLeaf(const Literal& result, int64_t i) {
  if (result.shape().IsArray()) return result;
  return result.tuple_element(i);
}

int64_t ReplicaCount(const EvalContext& ctx) {
  return ctx.options ? ctx.options->replica_count : 1;
}

}  // namespace evalops
}  // namespace hloc
