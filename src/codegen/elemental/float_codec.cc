// Narrow floating-point formats in software: f16, bf16, the f8 types and f4e2m1fn are decoded to
// f32 exactly and encoded from f32 rounding to nearest even, with each format's rules for
// infinities, NaN and overflow (those of ml_dtypes, as hloc's float_types.cc). Doing it with
// integer operations keeps the IR target-neutral: no __truncsfhf2-style runtime helpers on the
// CPU, the same code on NVPTX.
#include <cmath>
#include <cstdint>

#include "codegen/elemental/elemental_internal.h"

namespace hloc::codegen::elemental_internal {
namespace {

using P = PrimitiveType;
enum class NanKind { kIeee, kAllOnes, kNegZero, kNone };

struct Format {
  int ebits, mbits, bias;
  bool has_inf;
  NanKind nan;
  bool has_sign = true;
  int total() const { return ebits + mbits + (has_sign ? 1 : 0); }
};

Format FormatOf(PrimitiveType t) {
  switch (t) {
    case P::F16: return {5, 10, 15, true, NanKind::kIeee};
    case P::BF16: return {8, 7, 127, true, NanKind::kIeee};
    case P::F8E5M2: return {5, 2, 15, true, NanKind::kIeee};
    case P::F8E4M3: return {4, 3, 7, true, NanKind::kIeee};
    case P::F8E3M4: return {3, 4, 3, true, NanKind::kIeee};
    case P::F8E4M3FN: return {4, 3, 7, false, NanKind::kAllOnes};
    case P::F8E4M3FNUZ: return {4, 3, 8, false, NanKind::kNegZero};
    case P::F8E4M3B11FNUZ: return {4, 3, 11, false, NanKind::kNegZero};
    case P::F8E5M2FNUZ: return {5, 2, 16, false, NanKind::kNegZero};
    case P::F4E2M1FN: return {2, 1, 1, false, NanKind::kNone};
    default: return {8, 0, 127, false, NanKind::kAllOnes, false};  // f8e8m0fnu
  }
}

uint32_t NanBits(const Format& f, bool neg) {
  const uint32_t emax = (1u << f.ebits) - 1;
  const uint32_t sign = (neg && f.has_sign) ? 1u << (f.ebits + f.mbits) : 0;
  switch (f.nan) {
    case NanKind::kIeee: return sign | (emax << f.mbits) | (1u << (f.mbits - 1));
    case NanKind::kAllOnes: return sign | (emax << f.mbits) | ((1u << f.mbits) - 1);
    case NanKind::kNegZero: return 1u << (f.ebits + f.mbits);
    case NanKind::kNone: return 0;
  }
  return 0;
}

// Largest finite encoding (exponent and mantissa fields, no sign).
uint32_t MaxFiniteBits(const Format& f) {
  const uint32_t emax = (1u << f.ebits) - 1, mall = (1u << f.mbits) - 1;
  switch (f.nan) {
    case NanKind::kIeee: return ((emax - 1) << f.mbits) | mall;
    case NanKind::kAllOnes:
      if (f.mbits == 0) return (emax - 1) << f.mbits;
      return (emax << f.mbits) | (mall - 1);
    case NanKind::kNegZero: case NanKind::kNone: return (emax << f.mbits) | mall;
  }
  return 0;
}

llvm::Value* C32(B& b, uint32_t v) { return b.getInt32(v); }

// v >> s rounded to nearest, ties to even (v, s are i32; 1 <= s <= 31).
llvm::Value* ShiftRightRne(B& b, llvm::Value* v, llvm::Value* s) {
  llvm::Value* one = C32(b, 1);
  llvm::Value* q = b.CreateLShr(v, s);
  llvm::Value* rem = b.CreateAnd(v, b.CreateSub(b.CreateShl(one, s), one));
  llvm::Value* half = b.CreateShl(one, b.CreateSub(s, one));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, one), C32(b, 0));
  llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rem, half), b.CreateAnd(b.CreateICmpEQ(rem, half), odd));
  return b.CreateAdd(q, b.CreateZExt(up, b.getInt32Ty()));
}

llvm::Value* Select(B& b, llvm::Value* c, uint32_t t, llvm::Value* f) { return b.CreateSelect(c, C32(b, t), f); }

// Bits (i32, right-aligned) of format f for the f32 value v.
llvm::Value* EncodeFromF32(B& b, llvm::Value* v, const Format& f) {
  llvm::Value* x = b.CreateBitCast(v, b.getInt32Ty());
  llvm::Value* neg = b.CreateICmpSLT(x, C32(b, 0));
  llvm::Value* a = b.CreateAnd(x, C32(b, 0x7fffffff));
  llvm::Value* is_nan = b.CreateICmpUGT(a, C32(b, 0x7f800000));
  llvm::Value* is_inf = b.CreateICmpEQ(a, C32(b, 0x7f800000));
  llvm::Value* e32 = b.CreateLShr(a, 23);
  const int sign_shift = f.ebits + f.mbits;
  llvm::Value* nan_bits = b.CreateSelect(neg, C32(b, NanBits(f, true)), C32(b, NanBits(f, false)));
  if (f.mbits == 0) {
    // e8m0 (unsigned powers of two, no zero): round the exponent up when the f32 mantissa's top
    // bit is set (nearest power, ties up); f32 denormals go to 2^-127 (field 0) or, from 1.5 *
    // 2^-127 on, to 2^-126; negative non-zero values, NaN, infinities and overflow are NaN.
    llvm::Value* up = b.CreateZExt(b.CreateICmpNE(b.CreateAnd(a, C32(b, 0x400000)), C32(b, 0)), b.getInt32Ty());
    llvm::Value* field = b.CreateAdd(e32, up);
    llvm::Value* denorm = b.CreateSelect(b.CreateICmpUGE(a, C32(b, 0x00600000)), C32(b, 1), C32(b, 0));
    field = b.CreateSelect(b.CreateICmpEQ(e32, C32(b, 0)), denorm, field);
    llvm::Value* bad = b.CreateOr(b.CreateOr(is_nan, is_inf), b.CreateICmpUGT(field, C32(b, MaxFiniteBits(f))));
    bad = b.CreateOr(bad, b.CreateAnd(neg, b.CreateICmpNE(a, C32(b, 0))));
    return Select(b, bad, NanBits(f, false), field);
  }
  const int emin = 1 - f.bias;
  llvm::Value* normal = b.CreateICmpUGE(e32, C32(b, static_cast<uint32_t>(emin + 127)));
  llvm::Value* n = b.CreateSub(ShiftRightRne(b, a, C32(b, 23 - f.mbits)),
                               C32(b, static_cast<uint32_t>((127 - f.bias)) << f.mbits));
  // Below the format's normal range: the significand scaled to units of 2^(emin - mbits).
  llvm::Value* is_f32_denormal = b.CreateICmpEQ(e32, C32(b, 0));
  llvm::Value* mant = b.CreateAnd(a, C32(b, 0x7fffff));
  llvm::Value* sig = b.CreateSelect(is_f32_denormal, mant, b.CreateOr(mant, C32(b, 0x800000)));
  llvm::Value* eff_e = b.CreateSelect(is_f32_denormal, C32(b, 1), e32);
  llvm::Value* s = b.CreateSub(C32(b, static_cast<uint32_t>(emin - f.mbits + 150)), eff_e);
  s = b.CreateSelect(b.CreateICmpUGT(s, C32(b, 31)), C32(b, 31), s);
  s = b.CreateSelect(b.CreateICmpULT(s, C32(b, 1)), C32(b, 1), s);  // only on the unused path
  llvm::Value* d = ShiftRightRne(b, sig, s);
  llvm::Value* mag = b.CreateSelect(normal, n, d);
  llvm::Value* sign = b.CreateSelect(neg, C32(b, f.has_sign ? 1u << sign_shift : 0), C32(b, 0));
  const uint32_t maxf = MaxFiniteBits(f);
  llvm::Value* overflow;
  if (f.has_inf) {
    overflow = b.CreateOr(sign, C32(b, ((1u << f.ebits) - 1) << f.mbits));
  } else if (f.nan == NanKind::kNone) {
    overflow = b.CreateOr(sign, C32(b, maxf));  // f4e2m1fn saturates
  } else {
    overflow = nan_bits;
  }
  llvm::Value* res = b.CreateOr(sign, mag);
  if (f.nan == NanKind::kNegZero) res = Select(b, b.CreateICmpEQ(mag, C32(b, 0)), 0, res);  // no -0
  res = b.CreateSelect(b.CreateOr(is_inf, b.CreateICmpUGT(mag, C32(b, maxf))), overflow, res);
  if (f.nan == NanKind::kNone) {
    res = Select(b, is_nan, 0, res);
  } else {
    res = b.CreateSelect(is_nan, nan_bits, res);
  }
  return res;
}

// The f32 value of the bits (any integer width, right-aligned) of format f.
llvm::Value* DecodeToF32(B& b, llvm::Value* bits, const Format& f) {
  llvm::Value* x = b.CreateZExtOrTrunc(bits, b.getInt32Ty());
  x = b.CreateAnd(x, C32(b, (1u << f.total()) - 1));
  const uint32_t emax = (1u << f.ebits) - 1, mmask = (1u << f.mbits) - 1;
  const int sign_shift = f.ebits + f.mbits;
  llvm::Value* e = b.CreateAnd(b.CreateLShr(x, f.mbits), C32(b, emax));
  llvm::Value* m = b.CreateAnd(x, C32(b, mmask));
  llvm::Value* sign = f.has_sign ? b.CreateShl(b.CreateLShr(x, sign_shift), 31) : C32(b, 0);
  llvm::Value* mag;
  if (f.mbits == 0) {  // e8m0: 2^(e - 127); field 0 is the f32 denormal 2^-127
    mag = Select(b, b.CreateICmpEQ(e, C32(b, 0)), 0x00400000, b.CreateShl(e, 23));
  } else {
    llvm::Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(e, C32(b, 127 - f.bias)), 23),
                                     b.CreateShl(m, 23 - f.mbits));
    // Denormals: m * 2^(emin - mbits), exact in f32 for every format but bf16 (shares f32's
    // exponent range, so its bits simply move up).
    llvm::Value* denormal;
    if (f.ebits == 8) {
      denormal = b.CreateShl(m, 23 - f.mbits);
    } else {
      const int scale = 1 - f.bias - f.mbits;
      llvm::Value* fv = b.CreateFMul(b.CreateUIToFP(m, b.getFloatTy()),
                                     llvm::ConstantFP::get(b.getFloatTy(), std::ldexp(1.0, scale)));
      denormal = b.CreateBitCast(fv, b.getInt32Ty());
    }
    mag = b.CreateSelect(b.CreateICmpEQ(e, C32(b, 0)), denormal, normal);
  }
  llvm::Value* is_nan = nullptr;
  switch (f.nan) {
    case NanKind::kIeee: {
      llvm::Value* top = b.CreateICmpEQ(e, C32(b, emax));
      mag = b.CreateSelect(top, Select(b, b.CreateICmpNE(m, C32(b, 0)), 0x7fc00000, C32(b, 0x7f800000)), mag);
      break;
    }
    case NanKind::kAllOnes:
      is_nan = b.CreateAnd(b.CreateICmpEQ(e, C32(b, emax)), b.CreateICmpEQ(m, C32(b, mmask)));
      break;
    case NanKind::kNegZero: is_nan = b.CreateICmpEQ(x, C32(b, 1u << sign_shift)); break;
    case NanKind::kNone: break;
  }
  if (is_nan) mag = Select(b, is_nan, 0x7fc00000, mag);
  return b.CreateBitCast(b.CreateOr(sign, mag), b.getFloatTy());
}

}  // namespace

bool IsNarrowFloat(PrimitiveType t) { return t == P::F16 || t == P::BF16 || IsF8OrF4(t); }

llvm::Type* ComputeFloatType(PrimitiveType t, B& b) {
  if (t == P::F64 || t == P::C128) return b.getDoubleTy();
  return b.getFloatTy();
}

llvm::Value* I64(B& b, int64_t v) { return b.getInt64(static_cast<uint64_t>(v)); }

llvm::Value* UpcastFloat(B& b, llvm::Value* v, PrimitiveType t) {
  switch (t) {
    case P::F32: case P::F64: return v;
    case P::BF16:
      return b.CreateBitCast(b.CreateShl(b.CreateZExt(b.CreateBitCast(v, b.getInt16Ty()), b.getInt32Ty()), 16),
                             b.getFloatTy());
    case P::F16: return DecodeToF32(b, b.CreateBitCast(v, b.getInt16Ty()), FormatOf(t));
    default: return DecodeToF32(b, v, FormatOf(t));
  }
}

llvm::Value* DowncastFloat(B& b, llvm::Value* v, PrimitiveType t) {
  if (t == P::F64) return v->getType()->isDoubleTy() ? v : b.CreateFPExt(v, b.getDoubleTy());
  if (v->getType()->isDoubleTy()) v = b.CreateFPTrunc(v, b.getFloatTy());
  if (t == P::F32) return v;
  llvm::Value* bits = EncodeFromF32(b, v, FormatOf(t));
  if (t == P::F16) return b.CreateBitCast(b.CreateTrunc(bits, b.getInt16Ty()), b.getHalfTy());
  if (t == P::BF16) return b.CreateBitCast(b.CreateTrunc(bits, b.getInt16Ty()), b.getBFloatTy());
  return b.CreateTrunc(bits, b.getInt8Ty());
}

llvm::Value* EmitReducePrecision(B& b, llvm::Value* v, int eb, int mb) {
  const bool is64 = v->getType()->isDoubleTy();
  const int width = is64 ? 64 : 32;
  const int src_m = is64 ? 52 : 23, src_e = is64 ? 11 : 8;
  llvm::IntegerType* it = b.getIntNTy(width);
  auto C = [&](uint64_t c) { return llvm::ConstantInt::get(it, c); };
  llvm::Value* bits = b.CreateBitCast(v, it);
  if (mb < src_m) {  // round to nearest even at the new last mantissa bit
    const uint64_t last = uint64_t{1} << (src_m - mb);
    llvm::Value* lsb = b.CreateLShr(b.CreateAnd(bits, C(last)), src_m - mb);
    llvm::Value* bias = b.CreateAdd(C((last >> 1) - 1), lsb);
    bits = b.CreateAnd(b.CreateAdd(bits, bias), C(~(last - 1)));
  }
  if (eb < src_e) {  // exponents out of the reduced range flush to zero / infinity
    const uint64_t sign = uint64_t{1} << (width - 1);
    const uint64_t exp_mask = ((uint64_t{1} << src_e) - 1) << src_m;
    const uint64_t src_bias = (uint64_t{1} << (src_e - 1)) - 1;
    const uint64_t red_bias = (uint64_t{1} << (eb - 1)) - 1;
    llvm::Value* e = b.CreateAnd(bits, C(exp_mask));
    llvm::Value* over = b.CreateICmpUGT(e, C((src_bias + red_bias) << src_m));
    llvm::Value* under = b.CreateICmpULE(e, C((src_bias - red_bias) << src_m));
    llvm::Value* signed_bits = b.CreateAnd(bits, C(sign));
    bits = b.CreateSelect(over, b.CreateOr(signed_bits, C(exp_mask)), b.CreateSelect(under, signed_bits, bits));
  }
  llvm::Value* out = b.CreateBitCast(bits, v->getType());
  llvm::Value* is_nan = b.CreateFCmpUNO(v, v);
  llvm::Value* nan_out = mb > 0 ? v : llvm::ConstantFP::getInfinity(v->getType());
  return b.CreateSelect(is_nan, nan_out, out);
}

llvm::Value* ValueToBits(B& b, llvm::Value* v, PrimitiveType t) {
  if (t == P::C64 || t == P::C128) {
    const int w = t == P::C64 ? 32 : 64;
    llvm::IntegerType* half = b.getIntNTy(w);
    llvm::IntegerType* full = b.getIntNTy(2 * w);
    llvm::Value* re = b.CreateZExt(b.CreateBitCast(b.CreateExtractValue(v, 0), half), full);
    llvm::Value* im = b.CreateZExt(b.CreateBitCast(b.CreateExtractValue(v, 1), half), full);
    return b.CreateOr(re, b.CreateShl(im, w));
  }
  if (t == P::F4E2M1FN) return b.CreateTrunc(v, b.getIntNTy(4));
  if (v->getType()->isIntegerTy()) return v;
  return b.CreateBitCast(v, b.getIntNTy(v->getType()->getPrimitiveSizeInBits()));
}

llvm::Value* BitsToValue(B& b, llvm::Value* bits, PrimitiveType t) {
  llvm::Type* vt = PrimitiveTypeToIrType(t, b.getContext());
  if (t == P::C64 || t == P::C128) {
    const int w = t == P::C64 ? 32 : 64;
    llvm::Type* ft = t == P::C64 ? b.getFloatTy() : b.getDoubleTy();
    llvm::Value* re = b.CreateBitCast(b.CreateTrunc(bits, b.getIntNTy(w)), ft);
    llvm::Value* im = b.CreateBitCast(b.CreateTrunc(b.CreateLShr(bits, w), b.getIntNTy(w)), ft);
    return MakeComplex(b, re, im);
  }
  if (t == P::PRED) return b.CreateZExt(b.CreateICmpNE(bits, llvm::ConstantInt::get(bits->getType(), 0)), vt);
  if (vt->isIntegerTy()) return b.CreateZExtOrTrunc(bits, vt);
  return b.CreateBitCast(bits, vt);
}

}  // namespace hloc::codegen::elemental_internal
