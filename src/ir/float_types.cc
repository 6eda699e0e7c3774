#include "ir/float_types.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace hloc {
namespace {

enum class NanKind { kIeee, kAllOnes, kNegZero, kNone };

struct Format {
  int ebits, mbits, bias;
  bool has_inf;
  NanKind nan;
  bool has_sign = true;
};

Format FormatOf(PrimitiveType t) {
  using P = PrimitiveType;
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
    case P::F8E8M0FNU: return {8, 0, 127, false, NanKind::kAllOnes, false};
    default: return {11, 52, 1023, true, NanKind::kIeee};
  }
}

int TotalBits(const Format& f) { return f.ebits + f.mbits + (f.has_sign ? 1 : 0); }

uint64_t NanBits(const Format& f, bool neg) {
  uint64_t emax = (uint64_t{1} << f.ebits) - 1;
  uint64_t sign = (neg && f.has_sign) ? uint64_t{1} << (f.ebits + f.mbits) : 0;
  switch (f.nan) {
    case NanKind::kIeee: return sign | (emax << f.mbits) | (uint64_t{1} << (f.mbits - 1));
    case NanKind::kAllOnes: return sign | (emax << f.mbits) | ((uint64_t{1} << f.mbits) - 1);
    case NanKind::kNegZero: return uint64_t{1} << (f.ebits + f.mbits);
    case NanKind::kNone: return 0;
  }
  return 0;
}

// Largest finite (exponent field, mantissa field).
void MaxFinite(const Format& f, uint64_t* e, uint64_t* m) {
  uint64_t emax = (uint64_t{1} << f.ebits) - 1, mall = (uint64_t{1} << f.mbits) - 1;
  switch (f.nan) {
    case NanKind::kIeee: *e = emax - 1; *m = mall; break;
    case NanKind::kAllOnes:
      if (f.mbits == 0) { *e = emax - 1; *m = 0; } else { *e = emax; *m = mall - 1; }
      break;
    case NanKind::kNegZero: case NanKind::kNone: *e = emax; *m = mall; break;
  }
}

double FieldsToValue(const Format& f, uint64_t e, uint64_t m) {
  int emin = 1 - f.bias;
  if (e == 0 && f.mbits > 0) return std::ldexp(static_cast<double>(m), emin - f.mbits);
  return std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.mbits), static_cast<int>(e) - f.bias);
}

uint64_t EncodeGeneric(const Format& f, double x) {
  bool neg = std::signbit(x);
  uint64_t sign = (neg && f.has_sign) ? uint64_t{1} << (f.ebits + f.mbits) : 0;
  if (std::isnan(x)) return NanBits(f, neg);
  double a = std::fabs(x);
  uint64_t emaxf, mmaxf;
  MaxFinite(f, &emaxf, &mmaxf);
  double max_finite = FieldsToValue(f, emaxf, mmaxf);
  auto overflow = [&]() -> uint64_t {
    if (f.has_inf) return sign | (((uint64_t{1} << f.ebits) - 1) << f.mbits);
    if (f.nan == NanKind::kNone) return sign | (emaxf << f.mbits) | mmaxf;  // saturate
    return NanBits(f, neg);
  };
  if (std::isinf(a)) return overflow();
  if (!f.has_sign && neg && a != 0) return NanBits(f, false);
  int emin = 1 - f.bias;
  if (f.mbits == 0) {  // e8m0: powers of two only, no zero
    if (a == 0) return 0;
    int e = std::ilogb(a);
    double lo = std::ldexp(1.0, e);
    if (a - lo >= lo * 2 - a) ++e;  // round to nearest power (ties up)
    if (e < emin - 1) e = emin - 1;
    uint64_t field = static_cast<uint64_t>(e + f.bias);
    if (field > emaxf) return overflow();
    return field;
  }
  int e = (a < std::ldexp(1.0, emin)) ? emin : std::ilogb(a);
  double quantum = std::ldexp(1.0, e - f.mbits);
  double r = std::nearbyint(a / quantum) * quantum;  // FE_TONEAREST: ties to even
  if (r > max_finite) return overflow();
  if (r == 0) return f.nan == NanKind::kNegZero ? 0 : sign;
  int re = std::ilogb(r);
  if (re < emin) {
    uint64_t m = static_cast<uint64_t>(std::ldexp(r, f.mbits - emin));
    return sign | m;
  }
  uint64_t m = static_cast<uint64_t>(std::ldexp(r, f.mbits - re)) - (uint64_t{1} << f.mbits);
  return sign | (static_cast<uint64_t>(re + f.bias) << f.mbits) | m;
}

}  // namespace

uint64_t EncodeFloat(PrimitiveType t, double x) {
  if (t == PrimitiveType::F64) { uint64_t b; std::memcpy(&b, &x, 8); return b; }
  float fx = static_cast<float>(x);
  if (t == PrimitiveType::F32) { uint32_t b; std::memcpy(&b, &fx, 4); return b; }
  return EncodeGeneric(FormatOf(t), static_cast<double>(fx));
}

double DecodeFloat(PrimitiveType t, uint64_t bits) {
  if (t == PrimitiveType::F64) { double d; std::memcpy(&d, &bits, 8); return d; }
  if (t == PrimitiveType::F32) {
    uint32_t b = static_cast<uint32_t>(bits); float f; std::memcpy(&f, &b, 4); return f;
  }
  Format f = FormatOf(t);
  bits &= (uint64_t{1} << TotalBits(f)) - 1;
  bool neg = f.has_sign && ((bits >> (f.ebits + f.mbits)) & 1);
  uint64_t e = (bits >> f.mbits) & ((uint64_t{1} << f.ebits) - 1);
  uint64_t m = bits & ((uint64_t{1} << f.mbits) - 1);
  uint64_t emax = (uint64_t{1} << f.ebits) - 1;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.nan) {
    case NanKind::kIeee:
      if (e == emax) return m ? nan : (neg ? -INFINITY : INFINITY);
      break;
    case NanKind::kAllOnes:
      if (e == emax && m == (uint64_t{1} << f.mbits) - 1) return nan;
      break;
    case NanKind::kNegZero:
      if (neg && e == 0 && m == 0) return nan;
      break;
    case NanKind::kNone:
      break;
  }
  double v = (f.mbits == 0) ? std::ldexp(1.0, static_cast<int>(e) - f.bias) : FieldsToValue(f, e, m);
  return neg ? -v : v;
}

double RoundToType(PrimitiveType t, double x) {
  if (t == PrimitiveType::F64) return x;
  if (t == PrimitiveType::F32) return static_cast<float>(x);
  return DecodeFloat(t, EncodeFloat(t, x));
}

}  // namespace hloc
