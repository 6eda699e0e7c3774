// Elementwise arithmetic of the elemental emitter, with XLA's semantics (the reference evaluator's
// eval_elementwise.cc states the same rules for the host): integer ops wrap, division and
// remainder are guarded, shifts past the width saturate, floats compute in f32 for the narrow
// formats and round once per op, minimum/maximum propagate NaN (the lhs first).
#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_internal.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc::codegen::elemental_internal {
namespace {

using P = PrimitiveType;
using O = HloOpcode;

llvm::Value* FConst(llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }

absl::Status Unsupported(const HloInstruction* hlo, PrimitiveType t) {
  return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(hlo->opcode())),
                                               " on ", std::string(PrimitiveTypeName(t)), " (", hlo->name(), ")"));
}

// Integer power by squaring over every bit of the exponent, wrapping like repeated multiply.
llvm::Value* IntPow(B& b, llvm::Value* x, llvm::Value* y) {
  llvm::Type* t = x->getType();
  const unsigned w = t->getIntegerBitWidth();
  llvm::Value* one = llvm::ConstantInt::get(t, 1);
  llvm::Value* r = one;
  llvm::Value* base = x;
  for (unsigned i = 0; i < w; ++i) {
    llvm::Value* bit = b.CreateICmpNE(b.CreateAnd(b.CreateLShr(y, i), one), llvm::ConstantInt::get(t, 0));
    r = b.CreateSelect(bit, b.CreateMul(r, base), r);
    if (i + 1 < w) base = b.CreateMul(base, base);
  }
  return r;
}

absl::StatusOr<llvm::Value*> IntBinary(B& b, O op, PrimitiveType t, llvm::Value* x, llvm::Value* y) {
  const bool is_signed = IsSignedIntegral(t);
  llvm::Type* ty = x->getType();
  const unsigned w = ty->getIntegerBitWidth();
  auto C = [&](int64_t v) { return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v), true); };
  llvm::Value* zero = C(0);
  switch (op) {
    case O::kAdd: return b.CreateAdd(x, y);
    case O::kSubtract: return b.CreateSub(x, y);
    case O::kMultiply: return b.CreateMul(x, y);
    case O::kDivide: {
      // x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN; LLVM's division of those is undefined.
      llvm::Value* y_zero = b.CreateICmpEQ(y, zero);
      if (is_signed) {
        llvm::Value* y_m1 = b.CreateICmpEQ(y, C(-1));
        llvm::Value* safe = b.CreateSelect(b.CreateOr(y_zero, y_m1), C(1), y);
        llvm::Value* q = b.CreateSDiv(x, safe);
        return b.CreateSelect(y_zero, C(-1), b.CreateSelect(y_m1, b.CreateSub(zero, x), q));
      }
      llvm::Value* q = b.CreateUDiv(x, b.CreateSelect(y_zero, C(1), y));
      return b.CreateSelect(y_zero, C(-1), q);
    }
    case O::kRemainder: {
      llvm::Value* y_zero = b.CreateICmpEQ(y, zero);
      if (is_signed) {
        llvm::Value* y_m1 = b.CreateICmpEQ(y, C(-1));
        llvm::Value* safe = b.CreateSelect(b.CreateOr(y_zero, y_m1), C(1), y);
        llvm::Value* r = b.CreateSRem(x, safe);
        return b.CreateSelect(y_zero, x, b.CreateSelect(y_m1, zero, r));
      }
      return b.CreateSelect(y_zero, x, b.CreateURem(x, b.CreateSelect(y_zero, C(1), y)));
    }
    case O::kMaximum:
      return b.CreateSelect(is_signed ? b.CreateICmpSGT(y, x) : b.CreateICmpUGT(y, x), y, x);
    case O::kMinimum:
      return b.CreateSelect(is_signed ? b.CreateICmpSLT(y, x) : b.CreateICmpULT(y, x), y, x);
    case O::kPower: {
      llvm::Value* trivial = b.CreateOr(b.CreateICmpEQ(x, C(1)), b.CreateICmpEQ(y, zero));
      llvm::Value* r = b.CreateSelect(trivial, C(1), IntPow(b, x, y));
      if (is_signed) r = b.CreateSelect(b.CreateAnd(b.CreateICmpSLT(y, zero), b.CreateNot(trivial)), zero, r);
      return r;
    }
    case O::kAnd: return b.CreateAnd(x, y);
    case O::kOr: return b.CreateOr(x, y);
    case O::kXor: return b.CreateXor(x, y);
    case O::kShiftLeft: case O::kShiftRightLogical: case O::kShiftRightArithmetic: {
      // The amount reads as unsigned; amounts >= the width give 0 (or the sign for sra).
      llvm::Value* out_of_range = b.CreateICmpUGE(y, C(w));
      llvm::Value* amount = b.CreateSelect(out_of_range, C(w - 1), y);
      if (op == O::kShiftRightArithmetic) return b.CreateAShr(x, amount);
      llvm::Value* r = op == O::kShiftLeft ? b.CreateShl(x, amount) : b.CreateLShr(x, amount);
      return b.CreateSelect(out_of_range, zero, r);
    }
    default: return absl::UnimplementedError("not an integer binary op");
  }
}

// std::max / std::min as the evaluator uses them, after the NaN checks.
llvm::Value* FMax(B& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateSelect(b.CreateFCmpOLT(x, y), y, x);
}
llvm::Value* FMin(B& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateSelect(b.CreateFCmpOLT(y, x), y, x);
}
llvm::Value* IsNan(B& b, llvm::Value* x) { return b.CreateFCmpUNO(x, x); }

}  // namespace

llvm::Value* CallIntrinsic(B& b, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) {
  return b.CreateIntrinsic(id, {args[0]->getType()}, args);
}

llvm::Value* MathCall(ElementalIrEmitter& e, MathFunction fn, std::vector<llvm::Value*> args) {
  return e.EmitMathCall(LibmName(fn, args[0]->getType()->isDoubleTy()), args);
}

absl::StatusOr<llvm::Value*> EmitUnaryOp(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x) {
  B& b = *e.builder();
  const O op = hlo->opcode();
  const P t = hlo->operand(0)->shape().element_type();
  const P rt = hlo->shape().element_type();
  if (op == O::kConvert) return EmitConvertValue(e, x, t, rt);
  if (op == O::kCopy) return x;
  if (IsComplex(t)) return EmitComplexUnary(e, op, t, x);
  if (t == P::PRED || IsIntegral(t)) {
    llvm::Type* ty = x->getType();
    llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
    llvm::Value* one = llvm::ConstantInt::get(ty, 1);
    if (t == P::PRED) {  // 0/1 values, as the evaluator's 1-bit arithmetic
      switch (op) {
        case O::kNot: case O::kClz: return b.CreateXor(x, one);
        case O::kAbs: case O::kNegate: case O::kSign: case O::kPopulationCount: case O::kFloor: case O::kCeil:
        case O::kRoundNearestAfz: case O::kRoundNearestEven: case O::kReal:
          return x;
        case O::kImag: return zero;
        default: return Unsupported(hlo, t);
      }
    }
    const bool is_signed = IsSignedIntegral(t);
    switch (op) {
      case O::kAbs: return is_signed ? b.CreateSelect(b.CreateICmpSLT(x, zero), b.CreateSub(zero, x), x) : x;
      case O::kNegate: return b.CreateSub(zero, x);
      case O::kSign:
        if (!is_signed) return b.CreateZExt(b.CreateICmpNE(x, zero), ty);
        return b.CreateSelect(b.CreateICmpSGT(x, zero), one,
                              b.CreateSelect(b.CreateICmpSLT(x, zero), llvm::ConstantInt::getSigned(ty, -1), zero));
      case O::kNot: return b.CreateNot(x);
      case O::kPopulationCount: return b.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, x);
      case O::kClz: return b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, x, b.getFalse());
      case O::kFloor: case O::kCeil: case O::kRoundNearestAfz: case O::kRoundNearestEven: case O::kReal:
        return x;
      case O::kImag: return zero;
      default: return Unsupported(hlo, t);
    }
  }
  if (!IsFloatingPoint(t)) return Unsupported(hlo, t);
  llvm::Value* v = UpcastFloat(b, x, t);
  llvm::Type* ft = v->getType();
  if (op == O::kIsFinite) {
    llvm::Value* fin = b.CreateFCmpOLT(CallIntrinsic(b, llvm::Intrinsic::fabs, {v}), llvm::ConstantFP::getInfinity(ft));
    return b.CreateZExt(fin, b.getInt8Ty());
  }
  llvm::Value* r = nullptr;
  switch (op) {
    case O::kAbs: r = CallIntrinsic(b, llvm::Intrinsic::fabs, {v}); break;
    case O::kNegate: r = b.CreateFNeg(v); break;
    case O::kSign: {
      llvm::Value* mag = b.CreateSelect(b.CreateFCmpUNE(v, FConst(ft, 0)), FConst(ft, 1), FConst(ft, 0));
      r = b.CreateSelect(IsNan(b, v), v, CallIntrinsic(b, llvm::Intrinsic::copysign, {mag, v}));
      break;
    }
    case O::kFloor: r = CallIntrinsic(b, llvm::Intrinsic::floor, {v}); break;
    case O::kCeil: r = CallIntrinsic(b, llvm::Intrinsic::ceil, {v}); break;
    case O::kRoundNearestAfz: r = CallIntrinsic(b, llvm::Intrinsic::round, {v}); break;
    case O::kRoundNearestEven: r = CallIntrinsic(b, llvm::Intrinsic::roundeven, {v}); break;
    case O::kSqrt: r = CallIntrinsic(b, llvm::Intrinsic::sqrt, {v}); break;
    case O::kRsqrt: r = b.CreateFDiv(FConst(ft, 1), CallIntrinsic(b, llvm::Intrinsic::sqrt, {v})); break;
    case O::kCbrt: r = MathCall(e, MathFunction::kCbrt, {v}); break;
    case O::kExp: r = e.EmitMathIntrinsic(llvm::Intrinsic::exp, {v}); break;
    case O::kExpm1: r = MathCall(e, MathFunction::kExpm1, {v}); break;
    case O::kLog: r = e.EmitMathIntrinsic(llvm::Intrinsic::log, {v}); break;
    case O::kLog1p: r = MathCall(e, MathFunction::kLog1p, {v}); break;
    case O::kSin: r = e.EmitMathIntrinsic(llvm::Intrinsic::sin, {v}); break;
    case O::kCos: r = e.EmitMathIntrinsic(llvm::Intrinsic::cos, {v}); break;
    case O::kTan: r = MathCall(e, MathFunction::kTan, {v}); break;
    case O::kTanh: r = MathCall(e, MathFunction::kTanh, {v}); break;
    case O::kErf: r = MathCall(e, MathFunction::kErf, {v}); break;
    case O::kLogistic:  // 1 / (1 + exp(-x)), the evaluator's (and LogisticExpander's) form
      r = b.CreateFDiv(FConst(ft, 1), b.CreateFAdd(FConst(ft, 1), e.EmitMathIntrinsic(llvm::Intrinsic::exp, {b.CreateFNeg(v)})));
      break;
    case O::kReal: r = v; break;
    case O::kImag: r = FConst(ft, 0); break;
    case O::kReducePrecision:
      if (hlo->attrs().exponent_bits < 1 || hlo->attrs().mantissa_bits < 0)
        return absl::InvalidArgumentError("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
      r = EmitReducePrecision(b, v, hlo->attrs().exponent_bits, hlo->attrs().mantissa_bits);
      break;
    default: return Unsupported(hlo, t);
  }
  return DowncastFloat(b, r, rt);
}

absl::StatusOr<llvm::Value*> EmitBinaryOp(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x,
                                          llvm::Value* y) {
  B& b = *e.builder();
  const O op = hlo->opcode();
  const P t = hlo->operand(0)->shape().element_type();
  const P rt = hlo->shape().element_type();
  if (op == O::kCompare) return EmitCompare(e, hlo, x, y);
  if (op == O::kComplex) {
    llvm::Type* ct = ComputeFloatType(rt, b);
    return MakeComplex(b, b.CreateFPCast(UpcastFloat(b, x, t), ct), b.CreateFPCast(UpcastFloat(b, y, t), ct));
  }
  if (IsComplex(t)) return EmitComplexBinary(e, op, t, x, y);
  if (t == P::PRED) {
    // The evaluator's 1-bit unsigned arithmetic: compute wide, any non-zero result is true;
    // shifts see a width of 1.
    llvm::Value* r;
    if (op == O::kShiftLeft || op == O::kShiftRightLogical) {
      r = b.CreateSelect(b.CreateICmpNE(y, b.getInt8(0)), b.getInt8(0), x);
    } else if (op == O::kShiftRightArithmetic) {
      r = x;
    } else {
      absl::StatusOr<llvm::Value*> w = IntBinary(b, op, P::U8, x, y);
      if (!w.ok()) return Unsupported(hlo, t);
      r = *w;
    }
    return b.CreateZExt(b.CreateICmpNE(r, b.getInt8(0)), b.getInt8Ty());
  }
  if (IsIntegral(t)) {
    absl::StatusOr<llvm::Value*> r = IntBinary(b, op, t, x, y);
    if (!r.ok()) return Unsupported(hlo, t);
    return r;
  }
  if (!IsFloatingPoint(t)) return Unsupported(hlo, t);
  llvm::Value* a = UpcastFloat(b, x, t);
  llvm::Value* c = UpcastFloat(b, y, t);
  llvm::Type* ft = a->getType();
  llvm::Value* r;
  switch (op) {
    case O::kAdd: r = b.CreateFAdd(a, c); break;
    case O::kSubtract: r = b.CreateFSub(a, c); break;
    case O::kMultiply: r = b.CreateFMul(a, c); break;
    case O::kDivide: r = b.CreateFDiv(a, c); break;
    case O::kRemainder: r = b.CreateFRem(a, c); break;
    case O::kMaximum:
      r = b.CreateSelect(IsNan(b, a), a, b.CreateSelect(IsNan(b, c), c, FMax(b, a, c)));
      break;
    case O::kMinimum:
      r = b.CreateSelect(IsNan(b, a), a, b.CreateSelect(IsNan(b, c), c, FMin(b, a, c)));
      break;
    case O::kPower: {
      llvm::Value* trivial = b.CreateOr(b.CreateFCmpOEQ(a, FConst(ft, 1)), b.CreateFCmpOEQ(c, FConst(ft, 0)));
      r = b.CreateSelect(trivial, FConst(ft, 1), e.EmitMathIntrinsic(llvm::Intrinsic::pow, {a, c}));
      break;
    }
    case O::kAtan2: r = MathCall(e, MathFunction::kAtan2, {a, c}); break;
    default: return Unsupported(hlo, t);
  }
  return DowncastFloat(b, r, rt);
}

absl::StatusOr<llvm::Value*> EmitCompare(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x,
                                         llvm::Value* y) {
  B& b = *e.builder();
  const P t = hlo->operand(0)->shape().element_type();
  if (!hlo->attrs().comparison_direction) return absl::InvalidArgumentError("compare has no direction");
  using D = ComparisonDirection;
  const D dir = *hlo->attrs().comparison_direction;
  const ComparisonType ct = hlo->attrs().comparison_type;
  auto icmp = [&](bool is_signed, llvm::Value* l, llvm::Value* r) -> llvm::Value* {
    switch (dir) {
      case D::kEq: return b.CreateICmpEQ(l, r);
      case D::kNe: return b.CreateICmpNE(l, r);
      case D::kGe: return is_signed ? b.CreateICmpSGE(l, r) : b.CreateICmpUGE(l, r);
      case D::kGt: return is_signed ? b.CreateICmpSGT(l, r) : b.CreateICmpUGT(l, r);
      case D::kLe: return is_signed ? b.CreateICmpSLE(l, r) : b.CreateICmpULE(l, r);
      case D::kLt: return is_signed ? b.CreateICmpSLT(l, r) : b.CreateICmpULT(l, r);
    }
    return nullptr;
  };
  llvm::Value* r;
  if (IsComplex(t)) {
    if (dir != D::kEq && dir != D::kNe) return absl::InvalidArgumentError("complex numbers compare only for EQ and NE");
    llvm::Value* re = b.CreateFCmpOEQ(b.CreateExtractValue(x, 0), b.CreateExtractValue(y, 0));
    llvm::Value* im = b.CreateFCmpOEQ(b.CreateExtractValue(x, 1), b.CreateExtractValue(y, 1));
    r = b.CreateAnd(re, im);
    if (dir == D::kNe) r = b.CreateNot(r);
  } else if (IsFloatingPoint(t) && ct == ComparisonType::kTotalOrder) {
    r = icmp(true, EmitFloatTotalOrderKey(b, x, t), EmitFloatTotalOrderKey(b, y, t));
  } else if (IsFloatingPoint(t)) {
    llvm::Value* a = UpcastFloat(b, x, t);
    llvm::Value* c = UpcastFloat(b, y, t);
    switch (dir) {
      case D::kEq: r = b.CreateFCmpOEQ(a, c); break;
      case D::kNe: r = b.CreateFCmpUNE(a, c); break;
      case D::kGe: r = b.CreateFCmpOGE(a, c); break;
      case D::kGt: r = b.CreateFCmpOGT(a, c); break;
      case D::kLe: r = b.CreateFCmpOLE(a, c); break;
      default: r = b.CreateFCmpOLT(a, c); break;
    }
  } else {
    bool is_signed = IsSignedIntegral(t);
    if (ct == ComparisonType::kSigned) is_signed = true;
    if (ct == ComparisonType::kUnsigned) is_signed = false;
    if (t == P::PRED && is_signed) {  // a 1-bit signed value: true is -1
      x = b.CreateTrunc(x, b.getInt1Ty());
      y = b.CreateTrunc(y, b.getInt1Ty());
    }
    r = icmp(is_signed, x, y);
  }
  return b.CreateZExt(r, b.getInt8Ty());
}

}  // namespace hloc::codegen::elemental_internal

namespace hloc::codegen {

llvm::Value* EmitFloatTotalOrderKey(llvm::IRBuilderBase& b, llvm::Value* v, PrimitiveType t) {
  llvm::Value* bits = elemental_internal::ValueToBits(b, v, t);  // BitWidth(t) bits
  if (t == PrimitiveType::F8E8M0FNU) return b.CreateZExt(bits, b.getInt64Ty());
  const unsigned w = bits->getType()->getIntegerBitWidth();
  // Negative values (sign set) order by descending magnitude: flip their magnitude bits.
  llvm::Value* s = b.CreateSExt(bits, b.getInt64Ty());
  llvm::Value* flipped = b.CreateXor(s, b.getInt64((uint64_t{1} << (w - 1)) - 1));
  return b.CreateSelect(b.CreateICmpSLT(s, b.getInt64(0)), flipped, s);
}

}  // namespace hloc::codegen

namespace hloc::codegen::elemental_internal {

absl::StatusOr<llvm::Value*> EmitClamp(ElementalIrEmitter& e, PrimitiveType t, llvm::Value* lo, llvm::Value* x,
                                       llvm::Value* hi) {
  B& b = *e.builder();
  if (IsComplex(t)) return absl::UnimplementedError("clamp of complex numbers");
  if (IsFloatingPoint(t)) {
    llvm::Value* l = UpcastFloat(b, lo, t);
    llvm::Value* v = UpcastFloat(b, x, t);
    llvm::Value* h = UpcastFloat(b, hi, t);
    // min(hi, max(x, lo)) with std::min/std::max's argument order; NaN propagates, lo first.
    llvm::Value* m = b.CreateSelect(b.CreateFCmpOLT(v, l), l, v);
    llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(m, h), m, h);
    r = b.CreateSelect(IsNan(b, h), h, r);
    r = b.CreateSelect(IsNan(b, v), v, r);
    r = b.CreateSelect(IsNan(b, l), l, r);
    return DowncastFloat(b, r, t);
  }
  const bool s = IsSignedIntegral(t);
  llvm::Value* m = b.CreateSelect(s ? b.CreateICmpSLT(x, lo) : b.CreateICmpULT(x, lo), lo, x);
  return b.CreateSelect(s ? b.CreateICmpSLT(m, hi) : b.CreateICmpULT(m, hi), m, hi);
}

}  // namespace hloc::codegen::elemental_internal
