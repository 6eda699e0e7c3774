// Shape inference for elementwise opcodes: unary and binary arithmetic, compare, complex,
// converts, reduce-precision, select, clamp, map and rng (xla/service/shape_inference.cc).
#include <numeric>

#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

std::string OpName(HloOpcode op) { return std::string(HloOpcodeString(op)); }

// XLA's ShapeUtil::ElementIsSigned: signed integers and floating point.
bool ElementIsSigned(PrimitiveType t) { return IsSignedIntegral(t) || IsFloatingPoint(t); }

absl::StatusOr<Shape> InferUnaryOpShape(HloOpcode op, const Shape& shape) {
  using O = HloOpcode;
  // copy passes anything through, tuples included.
  if (op == O::kCopy) return StripLayout(shape);
  absl::Status s = ExpectArray(shape, "operand of unary operation");
  if (!s.ok()) return s;
  PrimitiveType t = shape.element_type();
  switch (op) {
    case O::kFloor: case O::kCbrt: case O::kCeil: case O::kErf:
    case O::kRoundNearestAfz: case O::kRoundNearestEven:
      if (!IsFloatingPoint(t)) {
        return InvalidArgument(
            "Expected element type in shape to be floating for %s operation; got %s.", OpName(op),
            TypeName(t));
      }
      return StripLayout(shape);
    case O::kCos: case O::kSin: case O::kExp: case O::kExpm1: case O::kLog: case O::kLog1p:
    case O::kLogistic:
    case O::kRsqrt: case O::kSqrt: case O::kTan: case O::kTanh:
      if (!IsFloatingPoint(t) && !IsComplex(t)) {
        return InvalidArgument(
            "Expected element type in shape to be floating or complex for %s operation; got %s.",
            OpName(op), TypeName(t));
      }
      return StripLayout(shape);
    case O::kReal: case O::kImag:
      if (IsComplex(t)) return ChangeElementType(shape, ComplexComponentType(t));
      if (IsFloatingPoint(t)) return StripLayout(shape);
      return InvalidArgument(
          "Expected element type in shape to be floating or complex for %s operation; got %s.",
          OpName(op), TypeName(t));
    case O::kAbs:
      if (IsComplex(t)) return ChangeElementType(shape, ComplexComponentType(t));
      if (ElementIsSigned(t)) return StripLayout(shape);
      return InvalidArgument(
          "Expected element type in shape to be signed, floating or complex for %s operation; "
          "got %s.",
          OpName(op), TypeName(t));
    case O::kClz: case O::kPopulationCount:
      if (!IsIntegral(t)) {
        return InvalidArgument("Expected an integral element type in argument to %s operation; got %s.",
                               OpName(op), TypeName(t));
      }
      return StripLayout(shape);
    case O::kNegate:
      if (!IsIntegral(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
        return InvalidArgument(
            "Expected element type in shape to be integral, floating or complex for %s operation; "
            "got %s.",
            OpName(op), TypeName(t));
      }
      return StripLayout(shape);
    case O::kSign:
      if (!ElementIsSigned(t) && !IsComplex(t)) {
        return InvalidArgument(
            "Expected element type in shape to be signed or complex for %s operation; got %s.",
            OpName(op), TypeName(t));
      }
      return StripLayout(shape);
    case O::kNot:
      if (t != PrimitiveType::PRED && !IsIntegral(t)) {
        return InvalidArgument(
            "Expected pred or an integral element type in argument to not operation; got %s.",
            TypeName(t));
      }
      return StripLayout(shape);
    case O::kIsFinite:
      if (!IsFloatingPoint(t)) {
        return InvalidArgument(
            "Expected element type in shape to be floating point for is-finite operation; got %s.",
            TypeName(t));
      }
      return ChangeElementType(shape, PrimitiveType::PRED);
    default:
      return InvalidArgument("Unknown operation for unary shape inference: \"%s\".", OpName(op));
  }
}

// Equal ranks: dimensions must match or one of them be 1 (a degenerate dimension).
absl::StatusOr<Shape> InferDegenerateDimensionBroadcastShape(const Shape& lhs, const Shape& rhs) {
  std::vector<int64_t> dims(lhs.rank());
  std::vector<bool> dynamic(lhs.rank());
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    int64_t a = lhs.dimensions(i), b = rhs.dimensions(i);
    if (a == 1 || b == 1) {
      dims[i] = a == 1 ? b : a;
      dynamic[i] = a == 1 ? rhs.is_dynamic_dimension(i) : lhs.is_dynamic_dimension(i);
    } else if (a == b) {
      dims[i] = a;
      dynamic[i] = lhs.is_dynamic_dimension(i) || rhs.is_dynamic_dimension(i);
    } else if (IsUnbounded(a) || IsUnbounded(b)) {
      dims[i] = IsUnbounded(a) ? b : a;
      dynamic[i] = IsUnbounded(a) ? rhs.is_dynamic_dimension(i) : lhs.is_dynamic_dimension(i);
    } else {
      return InvalidArgument("Binary op with incompatible shapes: %s and %s.", Str(lhs), Str(rhs));
    }
  }
  return MakeShape(HigherPrecisionElementType(lhs.element_type(), rhs.element_type()), dims, dynamic);
}

absl::StatusOr<Shape> InferElementwiseBinaryOpShape(HloOpcode op, const Shape& lhs, const Shape& rhs) {
  if (!SameElementTypeIgnoringFpPrecision(lhs, rhs)) {
    return InvalidArgument("Binary op %s with different element types: %s and %s.", OpName(op),
                           Str(lhs), Str(rhs));
  }
  if (op == HloOpcode::kAtan2 && !IsFloatingPoint(lhs.element_type()) &&
      !IsComplex(lhs.element_type())) {
    return InvalidArgument(
        "Expected input element type to be floating or complex for %s operation; got %s.",
        OpName(op), TypeName(lhs.element_type()));
  }
  PrimitiveType type = HigherPrecisionElementType(lhs.element_type(), rhs.element_type());
  if (ShapesCompatibleIgnoringFpPrecision(lhs, rhs) && !IsUnboundedDynamic(lhs) &&
      !IsUnboundedDynamic(rhs)) {
    Shape result = ChangeElementType(lhs, type);
    for (int64_t i = 0; i < rhs.rank(); ++i)
      if (rhs.is_dynamic_dimension(i)) SetDynamicDimension(result, i, true);
    return result;
  }
  if (lhs.rank() == rhs.rank()) return InferDegenerateDimensionBroadcastShape(lhs, rhs);
  // HLO has no broadcast_dimensions on binary ops: only a scalar may meet a higher rank.
  const Shape& larger = lhs.rank() > rhs.rank() ? lhs : rhs;
  const Shape& smaller = lhs.rank() > rhs.rank() ? rhs : lhs;
  if (smaller.rank() != 0) {
    return InvalidArgument("Shapes must be equal rank, but are %s and %s", Str(lhs), Str(rhs));
  }
  return ChangeElementType(larger, type);
}

absl::StatusOr<Shape> InferSelectShape(const Shape& pred, const Shape& on_true, const Shape& on_false) {
  for (const Shape* s : {&pred, &on_true, &on_false}) {
    absl::Status st = ExpectArray(*s, "select operand");
    if (!st.ok()) return st;
  }
  if (!ShapesCompatibleIgnoringFpPrecision(on_true, on_false)) {
    return InvalidArgument("Operands to select must be the same shape; got %s and %s.",
                           Str(on_true), Str(on_false));
  }
  if (pred.element_type() != PrimitiveType::PRED) {
    return InvalidArgument("Select's pred operand must have PRED element type; got %s.", Str(pred));
  }
  if (!IsScalar(pred) && (!ShapesCompatibleIgnoringElementType(pred, on_true) ||
                          !ShapesCompatibleIgnoringElementType(pred, on_false))) {
    return InvalidArgument(
        "Operands to select and predicate must be the same shape; got %s and %s and %s.",
        Str(on_true), Str(on_false), Str(pred));
  }
  const Shape& full = IsScalar(pred) ? on_true : pred;
  Shape result = ChangeElementType(
      full, HigherPrecisionElementType(on_true.element_type(), on_false.element_type()));
  for (int64_t d = 0; d < result.rank(); ++d) {
    bool dyn = (!IsScalar(pred) && pred.is_dynamic_dimension(d)) ||
               on_true.is_dynamic_dimension(d) || on_false.is_dynamic_dimension(d);
    SetDynamicDimension(result, d, dyn);
  }
  return result;
}

absl::StatusOr<Shape> InferClampShape(const Shape& min, const Shape& operand, const Shape& max) {
  for (const Shape* s : {&min, &operand, &max}) {
    absl::Status st = ExpectArray(*s, "clamp operand");
    if (!st.ok()) return st;
  }
  if (!SameElementTypeIgnoringFpPrecision(min, operand) ||
      !SameElementTypeIgnoringFpPrecision(max, operand) ||
      !SameElementTypeIgnoringFpPrecision(min, max)) {
    return InvalidArgument("Clamp with incompatible element types: %s, %s, %s.", Str(min),
                           Str(operand), Str(max));
  }
  // min and max may be scalars (an implicit broadcast XLA allows for clamp).
  if ((!IsScalar(min) && !ShapesCompatibleIgnoringFpPrecision(min, operand)) ||
      (!IsScalar(max) && !ShapesCompatibleIgnoringFpPrecision(max, operand)) ||
      (!IsScalar(min) && !IsScalar(max) && !ShapesCompatibleIgnoringFpPrecision(min, max))) {
    return InvalidArgument("Clamp with incompatible shapes: %s, %s, %s.", Str(min), Str(operand),
                           Str(max));
  }
  return StripLayout(operand);
}

absl::StatusOr<Shape> InferBitcastConvertShape(const Shape& operand, PrimitiveType new_type) {
  PrimitiveType old_type = operand.element_type();
  if (IsComplex(old_type) != IsComplex(new_type)) {
    return InvalidArgument("Conversion between complex and real type %s => %s.", Str(operand),
                           TypeName(new_type));
  }
  if (!operand.IsArray() || !IsArrayType(new_type)) {
    return InvalidArgument("Cannot convert from or to tuple type; requested conversion: %s => %s.",
                           Str(operand), TypeName(new_type));
  }
  int in_bits = BitWidth(old_type), out_bits = BitWidth(new_type);
  if (std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return InvalidArgument("Cannot bitcast types with undivisible bit-widths: %s => %s.",
                           TypeName(old_type), TypeName(new_type));
  }
  int64_t ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  Shape result = ChangeElementType(operand, new_type);
  if (in_bits > out_bits) {
    // A wider element becomes `ratio` narrower ones: a new minor dimension.
    std::vector<int64_t> dims = operand.dimensions();
    std::vector<bool> dyn(operand.rank());
    for (int64_t i = 0; i < operand.rank(); ++i) dyn[i] = operand.is_dynamic_dimension(i);
    dims.push_back(ratio);
    dyn.push_back(false);
    return MakeShape(new_type, dims, dyn);
  }
  if (in_bits < out_bits) {
    int64_t last = operand.rank() - 1;
    if (operand.rank() < 1 || operand.dimensions(last) != ratio) {
      return InvalidArgument(
          "Last dimension of input shape=%d is not equal to ratio of bit-widths=%d for "
          "bitcast-convert from %s to %s",
          operand.rank() < 1 ? 0 : operand.dimensions(last), ratio, Str(operand), TypeName(new_type));
    }
    std::vector<int64_t> dims(operand.dimensions().begin(), operand.dimensions().end() - 1);
    std::vector<bool> dyn(last);
    for (int64_t i = 0; i < last; ++i) dyn[i] = operand.is_dynamic_dimension(i);
    return MakeShape(new_type, dims, dyn);
  }
  return result;
}

absl::StatusOr<Shape> InferStochasticConvertShape(const Shape& operand, const Shape& random,
                                                  PrimitiveType new_type) {
  absl::Status s = ExpectArray(operand, "lhs of stochastic convert operation");
  if (s.ok()) s = ExpectArray(random, "rhs of stochastic convert operation");
  if (!s.ok()) return s;
  if (!IsUnsignedIntegral(random.element_type())) {
    return InvalidArgument(
        "Random numbers for stochastic convert must be unsigned integers, but got: %s", Str(random));
  }
  if (!IsFloatingPoint(operand.element_type())) {
    return InvalidArgument(
        "Stochastic convert supports only floating point operand conversion, but got: %s",
        Str(operand));
  }
  if (BitWidth(operand.element_type()) != BitWidth(random.element_type())) {
    return InvalidArgument(
        "The random number is required to have same bits as the operand. But got random bits: %d, "
        "operand bits: %d",
        BitWidth(random.element_type()), BitWidth(operand.element_type()));
  }
  if (operand.dimensions() != random.dimensions()) {
    return InvalidArgument("Stochastic convert operand shape does not match random tensor shape: %s vs %s.",
                           Str(operand), Str(random));
  }
  return ChangeElementType(operand, new_type);
}

absl::StatusOr<Shape> InferMapShape(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return InvalidArgument("Map expects at least one argument.");
  std::vector<const Shape*> args = OperandShapes(inst);
  const Shape* arg = args[0];
  absl::Status s = ExpectArray(*arg, "operand of map");
  if (!s.ok()) return s;
  for (size_t i = 1; i < args.size(); ++i) {
    s = ExpectArray(*args[i], "operand of map");
    if (!s.ok()) return s;
    if (ShapesCompatibleIgnoringElementType(*args[i], *arg)) continue;
    if (SameElementTypeIgnoringFpPrecision(*args[i], *arg)) {
      if (IsScalar(*args[i])) continue;
      if (IsScalar(*arg)) {
        arg = args[i];
        continue;
      }
    }
    std::vector<std::string> strs;
    for (const Shape* a : args) strs.push_back(Str(*a));
    return InvalidArgument("Map operation requires all operands to have the same shape; got: %s.",
                           absl::StrJoin(strs, ", "));
  }
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  // XLA's verifier maps over all dimensions of the highest-rank operand, whatever
  // dimensions={...} says.
  if (to_apply->parameters.size() != args.size()) {
    return InvalidArgument(
        "Map applied function arity must match number of arguments; got: arity: %d, arguments: %d.",
        to_apply->parameters.size(), args.size());
  }
  if (!IsScalar(to_apply->result)) {
    return InvalidArgument("Mapped computation's result has to be a scalar; got: %s.",
                           Str(to_apply->result));
  }
  for (size_t i = 0; i < to_apply->parameters.size(); ++i) {
    const Shape& p = to_apply->parameters[i];
    if (!IsScalar(p)) {
      return InvalidArgument("Mapped computation's parameter has to be a scalar; got parameter %d shape: %s.",
                             i, Str(p));
    }
    if (!SameElementTypeIgnoringFpPrecision(p, *args[i])) {
      return InvalidArgument(
          "Mapped computation's parameter type has to match argument element type; got parameter "
          "%d shape: %s, argument shape: %s.",
          i, Str(p), Str(*args[i]));
    }
  }
  std::vector<bool> dyn(arg->rank());
  for (int64_t i = 0; i < arg->rank(); ++i) dyn[i] = arg->is_dynamic_dimension(i);
  return MakeShape(to_apply->result.element_type(), arg->dimensions(), dyn);
}

absl::StatusOr<Shape> InferRngShape(const HloInstruction& inst) {
  absl::Status s = CheckOperandCount(inst, 2);
  if (!s.ok()) return s;
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  if (!IsScalar(a) || !IsScalar(b)) {
    return InvalidArgument("Expected scalar types for the two operands of rng; got %s and %s.", Str(a),
                           Str(b));
  }
  if (a.element_type() != b.element_type()) {
    return InvalidArgument("Expected the same element type for the two operands of rng; got %s and %s.",
                           Str(a), Str(b));
  }
  PrimitiveType t = a.element_type();
  if (inst.attrs().distribution == RandomDistribution::kUniform) {
    if (!IsFloatingPoint(t) && !IsIntegral(t) && t != PrimitiveType::PRED) {
      return InvalidArgument(
          "Expected element to be of floating point type, integral type or predicate type for "
          "RngUniform, got %s.",
          TypeName(t));
    }
  } else if (!IsFloatingPoint(t)) {
    return InvalidArgument("Expected element to be floating point type for RngNormal, got %s.",
                           TypeName(t));
  }
  // The result dimensions are the instruction's choice; its element type follows the operands.
  s = ExpectArray(inst.shape(), "result of rng");
  if (!s.ok()) return s;
  return ChangeElementType(inst.shape(), t);
}

absl::Status NotForComplex(HloOpcode op, PrimitiveType lt, PrimitiveType rt) {
  return InvalidArgument("Expected non-complex operands for %s operation; got %s and %s.", OpName(op), TypeName(lt),
                         TypeName(rt));
}

}  // namespace

absl::StatusOr<Shape> InferBinaryOpShape(HloOpcode op, const Shape& lhs, const Shape& rhs) {
  using O = HloOpcode;
  absl::Status s = ExpectArray(lhs, absl::StrCat("lhs of binary operation ", OpName(op)));
  if (s.ok()) s = ExpectArray(rhs, absl::StrCat("rhs of binary operation ", OpName(op)));
  if (!s.ok()) return s;
  PrimitiveType lt = lhs.element_type(), rt = rhs.element_type();
  switch (op) {
    case O::kAdd: case O::kMultiply:
      return InferElementwiseBinaryOpShape(op, lhs, rhs);
    // XLA's shape inference lets these through for complex operands, but neither its evaluator
    // nor its code generators define them there (complex numbers have no order), so a module
    // using them fails only when run; hloc rejects it here, where the error has a location.
    case O::kMaximum: case O::kMinimum:
      if (IsComplex(lt) || IsComplex(rt)) return NotForComplex(op, lt, rt);
      return InferElementwiseBinaryOpShape(op, lhs, rhs);
    case O::kRemainder:
      if (IsComplex(lt) || IsComplex(rt)) return NotForComplex(op, lt, rt);
      [[fallthrough]];
    case O::kSubtract: case O::kAtan2: case O::kPower: case O::kDivide:
      if (lt == PrimitiveType::PRED || rt == PrimitiveType::PRED) {
        return InvalidArgument(
            "Expected element type in shape to be arithmetic type for operation %s; got PRED.",
            OpName(op));
      }
      return InferElementwiseBinaryOpShape(op, lhs, rhs);
    // Shifts move bits of integers; XLA's inference only refuses pred, but a shift of a float or
    // complex value has no meaning in its evaluator or code generators either.
    case O::kShiftLeft: case O::kShiftRightArithmetic: case O::kShiftRightLogical:
      if (!IsIntegral(lt) || !IsIntegral(rt)) {
        return InvalidArgument("Expected integral operands for %s operation; got %s and %s.", OpName(op),
                               TypeName(lt), TypeName(rt));
      }
      return InferElementwiseBinaryOpShape(op, lhs, rhs);
    case O::kComplex: {
      if (!IsFloatingPoint(lt)) {
        return InvalidArgument(
            "Expected element type in shape to be floating for complex compose operation; got %s.",
            TypeName(lt));
      }
      absl::StatusOr<Shape> shape = InferElementwiseBinaryOpShape(op, lhs, rhs);
      if (!shape.ok()) return shape;
      if (lt == PrimitiveType::F32 && rt == PrimitiveType::F32)
        return ChangeElementType(*shape, PrimitiveType::C64);
      if (lt == PrimitiveType::F64 && rt == PrimitiveType::F64)
        return ChangeElementType(*shape, PrimitiveType::C128);
      return absl::UnimplementedError("Complex component type is not implemented.");
    }
    case O::kAnd: case O::kOr: case O::kXor:
      if (lt != PrimitiveType::PRED && !IsIntegral(lt)) {
        return InvalidArgument(
            "Expected pred or integral type in argument to and/or operation; got %s.", TypeName(lt));
      }
      return InferElementwiseBinaryOpShape(op, lhs, rhs);
    case O::kCompare: {
      absl::StatusOr<Shape> shape = InferElementwiseBinaryOpShape(op, lhs, rhs);
      if (!shape.ok()) return shape;
      return ChangeElementType(*shape, PrimitiveType::PRED);
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat("Binary op shape inference: ", OpName(op), " is not implemented."));
  }
}

absl::StatusOr<Shape> InferElementwiseFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  switch (inst.opcode()) {
    case O::kConvert: {
      PrimitiveType to = inst.shape().element_type();
      if (!operand(0).IsArray() || !IsArrayType(to)) {
        return InvalidArgument("Convert does not allow non-arrays, so cannot convert from %s to %s.",
                               Str(operand(0)), TypeName(to));
      }
      return ChangeElementType(operand(0), to);
    }
    case O::kBitcastConvert:
      return InferBitcastConvertShape(operand(0), inst.shape().element_type());
    case O::kStochasticConvert:
      return InferStochasticConvertShape(operand(0), operand(1), inst.shape().element_type());
    case O::kReducePrecision: {
      if (!IsFloatingPoint(operand(0).element_type()) || !operand(0).IsArray()) {
        return InvalidArgument(
            "Expected element type in shape to be floating point for ReducePrecision operation; "
            "got %s.",
            Str(operand(0)));
      }
      if (inst.attrs().exponent_bits < 1) {
        return InvalidArgument("Expected exponent_bits >= 1; got %d.", inst.attrs().exponent_bits);
      }
      if (inst.attrs().mantissa_bits < 0) {
        return InvalidArgument("Expected non-negative mantissa_bits; got %d.",
                               inst.attrs().mantissa_bits);
      }
      return StripLayout(operand(0));
    }
    case O::kSelect:
      return InferSelectShape(operand(0), operand(1), operand(2));
    case O::kClamp:
      return InferClampShape(operand(0), operand(1), operand(2));
    case O::kMap:
      return InferMapShape(inst);
    case O::kRng:
      return InferRngShape(inst);
    default:
      break;
  }
  if (IsElementwiseUnary(inst.opcode())) return InferUnaryOpShape(inst.opcode(), operand(0));
  if (IsElementwiseBinary(inst.opcode()))
    return InferBinaryOpShape(inst.opcode(), operand(0), operand(1));
  return absl::InternalError(absl::StrCat("not an elementwise opcode: ", OpName(inst.opcode())));
}

}  // namespace hloc::shape_inference_internal
