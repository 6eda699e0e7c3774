// Complex arithmetic (c64, c128) on {re, im} values, with the textbook formulas std::complex and
// XLA use: Smith's division, exp/log through the real functions, sin/cos/tan/tanh through the
// hyperbolic ones.
#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_internal.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc::codegen::elemental_internal {
namespace {

using O = HloOpcode;

struct Cx {
  llvm::Value* re;
  llvm::Value* im;
};

class ComplexMath {
 public:
  ComplexMath(ElementalIrEmitter& e, llvm::Type* ft) : e_(e), b_(*e.builder()), ft_(ft) {}

  Cx Split(llvm::Value* v) { return {b_.CreateExtractValue(v, 0), b_.CreateExtractValue(v, 1)}; }
  llvm::Value* Join(Cx c) { return MakeComplex(b_, c.re, c.im); }
  llvm::Value* F(double v) { return llvm::ConstantFP::get(ft_, v); }
  Cx Real(double v) { return {F(v), F(0)}; }

  Cx Add(Cx a, Cx c) { return {b_.CreateFAdd(a.re, c.re), b_.CreateFAdd(a.im, c.im)}; }
  Cx Sub(Cx a, Cx c) { return {b_.CreateFSub(a.re, c.re), b_.CreateFSub(a.im, c.im)}; }
  Cx Mul(Cx a, Cx c) {
    llvm::Value* ac = b_.CreateFMul(a.re, c.re);
    llvm::Value* bd = b_.CreateFMul(a.im, c.im);
    llvm::Value* ad = b_.CreateFMul(a.re, c.im);
    llvm::Value* bc = b_.CreateFMul(a.im, c.re);
    Cx q{b_.CreateFSub(ac, bd), b_.CreateFAdd(ad, bc)};
    // C99 Annex G's recovery (as __mulsc3) when the product came out NaN + NaN i but an operand
    // was infinite: the result is an infinity.
    auto isnan = [&](llvm::Value* v) { return b_.CreateFCmpUNO(v, v); };
    auto isinf = [&](llvm::Value* v) { return b_.CreateFCmpOEQ(Fabs(v), Inf()); };
    auto unit = [&](llvm::Value* v) {  // copysign(isinf(v) ? 1 : 0, v)
      return CallIntrinsic(b_, llvm::Intrinsic::copysign, {b_.CreateSelect(isinf(v), F(1), F(0)), v});
    };
    auto nan_to_zero = [&](llvm::Value* v) {
      return b_.CreateSelect(isnan(v), CallIntrinsic(b_, llvm::Intrinsic::copysign, {F(0), v}), v);
    };
    llvm::Value *A = a.re, *Bv = a.im, *C = c.re, *D = c.im;
    llvm::Value* a_inf = b_.CreateOr(isinf(A), isinf(Bv));
    A = b_.CreateSelect(a_inf, unit(A), A);
    Bv = b_.CreateSelect(a_inf, unit(Bv), Bv);
    C = b_.CreateSelect(a_inf, nan_to_zero(C), C);
    D = b_.CreateSelect(a_inf, nan_to_zero(D), D);
    llvm::Value* c_inf = b_.CreateOr(isinf(C), isinf(D));
    C = b_.CreateSelect(c_inf, unit(C), C);
    D = b_.CreateSelect(c_inf, unit(D), D);
    A = b_.CreateSelect(c_inf, nan_to_zero(A), A);
    Bv = b_.CreateSelect(c_inf, nan_to_zero(Bv), Bv);
    llvm::Value* recalc = b_.CreateOr(a_inf, c_inf);
    llvm::Value* part_inf = b_.CreateOr(b_.CreateOr(isinf(ac), isinf(bd)), b_.CreateOr(isinf(ad), isinf(bc)));
    llvm::Value* overflow = b_.CreateAnd(b_.CreateNot(recalc), part_inf);
    A = b_.CreateSelect(overflow, nan_to_zero(A), A);
    Bv = b_.CreateSelect(overflow, nan_to_zero(Bv), Bv);
    C = b_.CreateSelect(overflow, nan_to_zero(C), C);
    D = b_.CreateSelect(overflow, nan_to_zero(D), D);
    recalc = b_.CreateOr(recalc, overflow);
    Cx r{b_.CreateFMul(Inf(), b_.CreateFSub(b_.CreateFMul(A, C), b_.CreateFMul(Bv, D))),
         b_.CreateFMul(Inf(), b_.CreateFAdd(b_.CreateFMul(A, D), b_.CreateFMul(Bv, C)))};
    llvm::Value* use = b_.CreateAnd(b_.CreateAnd(isnan(q.re), isnan(q.im)), recalc);
    return {b_.CreateSelect(use, r.re, q.re), b_.CreateSelect(use, r.im, q.im)};
  }
  Cx Div(Cx a, Cx c) {  // Smith's algorithm: no overflow from squaring the divisor
    llvm::Value* big_re = b_.CreateFCmpOGE(Fabs(c.re), Fabs(c.im));
    llvm::Value* r1 = b_.CreateFDiv(c.im, c.re);
    llvm::Value* d1 = b_.CreateFAdd(c.re, b_.CreateFMul(c.im, r1));
    Cx q1{b_.CreateFDiv(b_.CreateFAdd(a.re, b_.CreateFMul(a.im, r1)), d1),
          b_.CreateFDiv(b_.CreateFSub(a.im, b_.CreateFMul(a.re, r1)), d1)};
    llvm::Value* r2 = b_.CreateFDiv(c.re, c.im);
    llvm::Value* d2 = b_.CreateFAdd(c.im, b_.CreateFMul(c.re, r2));
    Cx q2{b_.CreateFDiv(b_.CreateFAdd(b_.CreateFMul(a.re, r2), a.im), d2),
          b_.CreateFDiv(b_.CreateFSub(b_.CreateFMul(a.im, r2), a.re), d2)};
    Cx q{b_.CreateSelect(big_re, q1.re, q2.re), b_.CreateSelect(big_re, q1.im, q2.im)};
    return DivRecover(a, c, q);
  }
  // C99 Annex G's recovery (as __divsc3, so std::complex and the evaluator agree) when the
  // quotient came out NaN + NaN i: division by zero gives infinities, an infinite numerator over
  // a finite divisor an infinity, a finite numerator over an infinite divisor zero.
  Cx DivRecover(Cx a, Cx c, Cx q) {
    auto isnan = [&](llvm::Value* v) { return b_.CreateFCmpUNO(v, v); };
    auto isinf = [&](llvm::Value* v) { return b_.CreateFCmpOEQ(Fabs(v), Inf()); };
    auto isfin = [&](llvm::Value* v) { return b_.CreateFCmpOLT(Fabs(v), Inf()); };
    auto copysign = [&](llvm::Value* m, llvm::Value* s) { return CallIntrinsic(b_, llvm::Intrinsic::copysign, {m, s}); };
    auto sel = [&](llvm::Value* cond, Cx x, Cx y) {
      return Cx{b_.CreateSelect(cond, x.re, y.re), b_.CreateSelect(cond, x.im, y.im)};
    };
    llvm::Value* nan_result = b_.CreateAnd(isnan(q.re), isnan(q.im));
    // Case 1: divisor zero, numerator not NaN + NaN i.
    llvm::Value* c_zero = b_.CreateAnd(b_.CreateFCmpOEQ(c.re, F(0)), b_.CreateFCmpOEQ(c.im, F(0)));
    llvm::Value* a_some = b_.CreateOr(b_.CreateNot(isnan(a.re)), b_.CreateNot(isnan(a.im)));
    llvm::Value* inf_c = copysign(Inf(), c.re);
    Cx r1{b_.CreateFMul(inf_c, a.re), b_.CreateFMul(inf_c, a.im)};
    // Case 2: infinite numerator, finite divisor.
    llvm::Value* a_inf = b_.CreateOr(isinf(a.re), isinf(a.im));
    llvm::Value* c_fin = b_.CreateAnd(isfin(c.re), isfin(c.im));
    llvm::Value* ar = copysign(b_.CreateSelect(isinf(a.re), F(1), F(0)), a.re);
    llvm::Value* ai = copysign(b_.CreateSelect(isinf(a.im), F(1), F(0)), a.im);
    Cx r2{b_.CreateFMul(Inf(), b_.CreateFAdd(b_.CreateFMul(ar, c.re), b_.CreateFMul(ai, c.im))),
          b_.CreateFMul(Inf(), b_.CreateFSub(b_.CreateFMul(ai, c.re), b_.CreateFMul(ar, c.im)))};
    // Case 3: finite numerator, infinite divisor.
    llvm::Value* c_inf = b_.CreateOr(isinf(c.re), isinf(c.im));
    llvm::Value* a_fin = b_.CreateAnd(isfin(a.re), isfin(a.im));
    llvm::Value* cr = copysign(b_.CreateSelect(isinf(c.re), F(1), F(0)), c.re);
    llvm::Value* ci = copysign(b_.CreateSelect(isinf(c.im), F(1), F(0)), c.im);
    Cx r3{b_.CreateFMul(F(0), b_.CreateFAdd(b_.CreateFMul(a.re, cr), b_.CreateFMul(a.im, ci))),
          b_.CreateFMul(F(0), b_.CreateFSub(b_.CreateFMul(a.im, cr), b_.CreateFMul(a.re, ci)))};
    Cx fixed = sel(b_.CreateAnd(c_zero, a_some), r1, sel(b_.CreateAnd(a_inf, c_fin), r2, sel(b_.CreateAnd(c_inf, a_fin), r3, q)));
    return sel(nan_result, fixed, q);
  }
  llvm::Value* Inf() { return llvm::ConstantFP::getInfinity(ft_); }
  llvm::Value* Fabs(llvm::Value* v) { return CallIntrinsic(b_, llvm::Intrinsic::fabs, {v}); }
  llvm::Value* Abs(Cx a) { return MathCall(e_, MathFunction::kHypot, {a.re, a.im}); }
  llvm::Value* Exp(llvm::Value* v) { return e_.EmitMathIntrinsic(llvm::Intrinsic::exp, {v}); }
  llvm::Value* Sin(llvm::Value* v) { return e_.EmitMathIntrinsic(llvm::Intrinsic::sin, {v}); }
  llvm::Value* Cos(llvm::Value* v) { return e_.EmitMathIntrinsic(llvm::Intrinsic::cos, {v}); }
  llvm::Value* Sinh(llvm::Value* v) { return MathCall(e_, MathFunction::kSinh, {v}); }
  llvm::Value* Cosh(llvm::Value* v) { return MathCall(e_, MathFunction::kCosh, {v}); }
  llvm::Value* Sqrt(llvm::Value* v) { return CallIntrinsic(b_, llvm::Intrinsic::sqrt, {v}); }

  Cx CExp(Cx a) {
    llvm::Value* m = Exp(a.re);
    // exp(x + 0i) is exactly (e^x, 0), also for infinite x; with a non-finite imaginary part,
    // exp(+inf + yi) is inf + NaN i and exp(-inf + yi) is 0 (C99 Annex G, as glibc's cexp).
    llvm::Value* im_zero = b_.CreateFCmpOEQ(a.im, F(0));
    Cx r{b_.CreateSelect(im_zero, m, b_.CreateFMul(m, Cos(a.im))),
         b_.CreateSelect(im_zero, a.im, b_.CreateFMul(m, Sin(a.im)))};
    llvm::Value* im_bad = b_.CreateNot(b_.CreateFCmpOLT(Fabs(a.im), Inf()));
    llvm::Value* re_pinf = b_.CreateFCmpOEQ(a.re, Inf());
    llvm::Value* re_ninf = b_.CreateFCmpOEQ(a.re, b_.CreateFNeg(Inf()));
    llvm::Value* nan = llvm::ConstantFP::getNaN(ft_);
    r.re = b_.CreateSelect(b_.CreateAnd(im_bad, re_pinf), Inf(), b_.CreateSelect(b_.CreateAnd(im_bad, re_ninf), F(0), r.re));
    r.im = b_.CreateSelect(b_.CreateAnd(im_bad, re_pinf), nan, b_.CreateSelect(b_.CreateAnd(im_bad, re_ninf), F(0), r.im));
    return r;
  }
  Cx CLog(Cx a) {
    return {e_.EmitMathIntrinsic(llvm::Intrinsic::log, {Abs(a)}), MathCall(e_, MathFunction::kAtan2, {a.im, a.re})};
  }
  Cx CSqrt(Cx a) {
    llvm::Value* r = Abs(a);
    llvm::Value* t = Sqrt(b_.CreateFMul(b_.CreateFAdd(r, Fabs(a.re)), F(0.5)));
    llvm::Value* other = b_.CreateFDiv(Fabs(a.im), b_.CreateFMul(t, F(2)));
    llvm::Value* pos = b_.CreateFCmpOGE(a.re, F(0));
    llvm::Value* re = b_.CreateSelect(pos, t, other);
    llvm::Value* im = b_.CreateSelect(pos, b_.CreateFDiv(a.im, b_.CreateFMul(t, F(2))),
                                      CallIntrinsic(b_, llvm::Intrinsic::copysign, {t, a.im}));
    llvm::Value* zero = b_.CreateFCmpOEQ(r, F(0));
    return {b_.CreateSelect(zero, F(0), re), b_.CreateSelect(zero, a.im, im)};
  }

 private:
  ElementalIrEmitter& e_;
  B& b_;
  llvm::Type* ft_;
};

}  // namespace

llvm::Value* MakeComplex(B& b, llvm::Value* re, llvm::Value* im) {
  llvm::Type* st = llvm::StructType::get(b.getContext(), {re->getType(), im->getType()});
  llvm::Value* v = llvm::UndefValue::get(st);
  v = b.CreateInsertValue(v, re, 0);
  return b.CreateInsertValue(v, im, 1);
}

absl::StatusOr<llvm::Value*> EmitComplexUnary(ElementalIrEmitter& e, HloOpcode op, PrimitiveType t, llvm::Value* x) {
  B& b = *e.builder();
  ComplexMath m(e, ComputeFloatType(t, b));
  const Cx a = m.Split(x);
  switch (op) {
    case O::kAbs: return m.Abs(a);
    case O::kReal: return a.re;
    case O::kImag: return a.im;
    case O::kCopy: return x;
    case O::kNegate: return m.Join({b.CreateFNeg(a.re), b.CreateFNeg(a.im)});
    case O::kSign: {
      llvm::Value* r = m.Abs(a);
      llvm::Value* zero = b.CreateFCmpOEQ(r, m.F(0));
      return m.Join({b.CreateSelect(zero, m.F(0), b.CreateFDiv(a.re, r)),
                     b.CreateSelect(zero, m.F(0), b.CreateFDiv(a.im, r))});
    }
    case O::kSqrt: return m.Join(m.CSqrt(a));
    case O::kRsqrt: return m.Join(m.Div(m.Real(1), m.CSqrt(a)));
    case O::kExp: return m.Join(m.CExp(a));
    case O::kExpm1: return m.Join(m.Sub(m.CExp(a), m.Real(1)));
    case O::kLog: return m.Join(m.CLog(a));
    case O::kLog1p: return m.Join(m.CLog(m.Add(a, m.Real(1))));
    case O::kSin:
      return m.Join({b.CreateFMul(m.Sin(a.re), m.Cosh(a.im)), b.CreateFMul(m.Cos(a.re), m.Sinh(a.im))});
    case O::kCos:
      return m.Join({b.CreateFMul(m.Cos(a.re), m.Cosh(a.im)),
                     b.CreateFNeg(b.CreateFMul(m.Sin(a.re), m.Sinh(a.im)))});
    case O::kTan: {  // (sin 2a + i sinh 2b) / (cos 2a + cosh 2b)
      llvm::Value* a2 = b.CreateFMul(a.re, m.F(2));
      llvm::Value* b2 = b.CreateFMul(a.im, m.F(2));
      llvm::Value* d = b.CreateFAdd(m.Cos(a2), m.Cosh(b2));
      return m.Join({b.CreateFDiv(m.Sin(a2), d), b.CreateFDiv(m.Sinh(b2), d)});
    }
    case O::kTanh: {  // (sinh 2a + i sin 2b) / (cosh 2a + cos 2b)
      llvm::Value* a2 = b.CreateFMul(a.re, m.F(2));
      llvm::Value* b2 = b.CreateFMul(a.im, m.F(2));
      llvm::Value* d = b.CreateFAdd(m.Cosh(a2), m.Cos(b2));
      return m.Join({b.CreateFDiv(m.Sinh(a2), d), b.CreateFDiv(m.Sin(b2), d)});
    }
    case O::kLogistic:
      return m.Join(m.Div(m.Real(1), m.Add(m.Real(1), m.CExp({b.CreateFNeg(a.re), b.CreateFNeg(a.im)}))));
    default:
      return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(op)),
                                                   " on ", std::string(PrimitiveTypeName(t))));
  }
}

absl::StatusOr<llvm::Value*> EmitComplexBinary(ElementalIrEmitter& e, HloOpcode op, PrimitiveType t, llvm::Value* x,
                                               llvm::Value* y) {
  B& b = *e.builder();
  ComplexMath m(e, ComputeFloatType(t, b));
  const Cx a = m.Split(x), c = m.Split(y);
  switch (op) {
    case O::kAdd: return m.Join(m.Add(a, c));
    case O::kSubtract: return m.Join(m.Sub(a, c));
    case O::kMultiply: return m.Join(m.Mul(a, c));
    case O::kDivide: return m.Join(m.Div(a, c));
    case O::kPower: {
      // x^y = exp(y log x); x == 1 or y == 0 give 1; 0^y is 0; inf^(r+0i) is inf (r > 0) or 0.
      Cx p = m.CExp(m.Mul(c, m.CLog(a)));
      llvm::Value* x_one = b.CreateAnd(b.CreateFCmpOEQ(a.re, m.F(1)), b.CreateFCmpOEQ(a.im, m.F(0)));
      llvm::Value* y_zero = b.CreateAnd(b.CreateFCmpOEQ(c.re, m.F(0)), b.CreateFCmpOEQ(c.im, m.F(0)));
      llvm::Value* x_zero = b.CreateAnd(b.CreateFCmpOEQ(a.re, m.F(0)), b.CreateFCmpOEQ(a.im, m.F(0)));
      llvm::Value* x_inf = b.CreateAnd(b.CreateFCmpOEQ(a.re, llvm::ConstantFP::getInfinity(a.re->getType())),
                                       b.CreateFCmpOEQ(a.im, m.F(0)));
      llvm::Value* y_real = b.CreateFCmpOEQ(c.im, m.F(0));
      llvm::Value* inf_pos = b.CreateAnd(b.CreateAnd(x_inf, y_real), b.CreateFCmpOGT(c.re, m.F(0)));
      llvm::Value* inf_neg = b.CreateAnd(b.CreateAnd(x_inf, y_real), b.CreateFCmpOLT(c.re, m.F(0)));
      llvm::Value* to_zero = b.CreateOr(inf_neg, b.CreateAnd(x_zero, b.CreateFCmpOGT(c.re, m.F(0))));
      llvm::Value* re = b.CreateSelect(to_zero, m.F(0), b.CreateSelect(inf_pos, a.re, p.re));
      llvm::Value* im = b.CreateSelect(b.CreateOr(to_zero, inf_pos), m.F(0), p.im);
      llvm::Value* one = b.CreateOr(x_one, y_zero);
      return m.Join({b.CreateSelect(one, m.F(1), re), b.CreateSelect(one, m.F(0), im)});
    }
    case O::kAtan2: {  // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), y = lhs
      Cx iy = m.Mul({m.F(0), m.F(1)}, a);
      Cx num = m.Add(c, iy);
      Cx den = m.CSqrt(m.Add(m.Mul(c, c), m.Mul(a, a)));
      Cx l = m.CLog(m.Div(num, den));
      return m.Join(m.Mul({m.F(0), m.F(-1)}, l));
    }
    default:
      return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(op)),
                                                   " on ", std::string(PrimitiveTypeName(t))));
  }
}

}  // namespace hloc::codegen::elemental_internal
