// Elementwise ops of the reference evaluator, with XLA's semantics (hlo_evaluator_typed_visitor.h).
//
// Every element type is mapped to a compute class, as XLA's evaluator does (its
// ElementwiseT): s32 and u32 compute natively, other signed integers in int64, other
// unsigned ones and pred in uint64 (wrapping to the element width on store gives the same
// bits), f32 and the narrow floats (f16, bf16, f8, f4) in float, f64 in double, c64 and c128
// in std::complex. An op loads its operands once into arrays of the class type (no copy when
// the storage already is that type), runs one tight loop, and stores the results back,
// rounding or wrapping to the element type. Type dispatch happens once per op, never per
// element.
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "eval/eval_internal.h"
#include "ir/float_types.h"

namespace hloc {
namespace eval_internal {
namespace {

using P = PrimitiveType;
using c64 = std::complex<float>;
using c128 = std::complex<double>;

enum class Cls { kS32, kU32, kSigned, kUnsigned, kF32, kF64, kC64, kC128 };

Cls ClassOf(PrimitiveType t) {
  // The common 32-bit integers compute natively: no widened copies of big operands.
  if (t == P::S32) return Cls::kS32;
  if (t == P::U32) return Cls::kU32;
  if (IsSignedIntegral(t)) return Cls::kSigned;
  if (IsUnsignedIntegral(t) || t == P::PRED) return Cls::kUnsigned;
  if (t == P::F64) return Cls::kF64;
  if (IsFloatingPoint(t)) return Cls::kF32;
  if (t == P::C64) return Cls::kC64;
  return Cls::kC128;
}

template <class T> constexpr bool kIsComplex = std::is_same_v<T, c64> || std::is_same_v<T, c128>;
template <class T> constexpr bool kIsReal = std::is_floating_point_v<T>;
template <class T> constexpr bool kIsInt = std::is_integral_v<T>;

std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

absl::Status Unsupported(const HloInstruction& inst, PrimitiveType t) {
  return absl::InvalidArgumentError(absl::StrCat("unsupported element type ", TypeName(t), " for ",
                                                 std::string(HloOpcodeString(inst.opcode()))));
}

uint64_t WidthMask(int w) { return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1; }
int64_t SignExtend(uint64_t v, int w) {
  if (w >= 64) return static_cast<int64_t>(v);
  v &= WidthMask(w);
  if ((v >> (w - 1)) & 1) v |= ~WidthMask(w);
  return static_cast<int64_t>(v);
}

// ---- narrow floats: decode/encode fast paths ------------------------------------------
float Bf16ToFloat(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }
uint16_t FloatToBf16(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((b >> 16) & 0x8000u) | 0x7fc0u);
  b += 0x7fffu + ((b >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(b >> 16);
}
float F16ToFloat(uint16_t b) { return static_cast<float>(std::bit_cast<_Float16>(b)); }
uint16_t FloatToF16(float f) { return std::bit_cast<uint16_t>(static_cast<_Float16>(f)); }

// Decode tables for the one-byte float types (f8 and f4), built once.
const float* ByteFloatTable(PrimitiveType t) {
  static const std::vector<std::vector<float>> tables = [] {
    std::vector<std::vector<float>> v(static_cast<int>(P::OPAQUE_TYPE) + 1);
    for (int i = 0; i <= static_cast<int>(P::OPAQUE_TYPE); ++i) {
      P pt = static_cast<P>(i);
      if (!IsF8OrF4(pt)) continue;
      v[i].resize(256);
      for (int b = 0; b < 256; ++b) v[i][b] = static_cast<float>(DecodeFloat(pt, b));
    }
    return v;
  }();
  return tables[static_cast<int>(t)].data();
}

// ---- load / store --------------------------------------------------------------------
template <class S, class T>
void Widen(const uint8_t* raw, int64_t n, T* out) {
  const S* p = reinterpret_cast<const S*>(raw);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(p[i]);
}

// The elements of `l` as class type T (T must be the class of l's element type). Returns a
// pointer into `l` when no conversion is needed, else into `buf`.
template <class T>
const T* LoadAs(const Literal& l, std::vector<T>& buf) {
  const P t = l.element_type();
  const int64_t n = l.element_count();
  const uint8_t* raw = l.untyped_data();
  if constexpr (std::is_same_v<T, int32_t> || std::is_same_v<T, uint32_t>) {
    return l.data<T>();  // only s32 / u32 use these classes
  } else if constexpr (std::is_same_v<T, int64_t>) {
    if (t == P::S64) return l.data<int64_t>();
    buf.resize(n);
    switch (t) {
      case P::S32: Widen<int32_t>(raw, n, buf.data()); break;
      case P::S16: Widen<int16_t>(raw, n, buf.data()); break;
      default: Widen<int8_t>(raw, n, buf.data()); break;  // s8, and s4/s2 held sign-extended
    }
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    if (t == P::U64) return l.data<uint64_t>();
    buf.resize(n);
    switch (t) {
      case P::U32: Widen<uint32_t>(raw, n, buf.data()); break;
      case P::U16: Widen<uint16_t>(raw, n, buf.data()); break;
      default: Widen<uint8_t>(raw, n, buf.data()); break;  // u8, u4, u2, pred
    }
  } else if constexpr (std::is_same_v<T, float>) {
    if (t == P::F32) return l.data<float>();
    buf.resize(n);
    if (t == P::BF16) {
      const uint16_t* p = l.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) buf[i] = Bf16ToFloat(p[i]);
    } else if (t == P::F16) {
      const uint16_t* p = l.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) buf[i] = F16ToFloat(p[i]);
    } else {
      const float* table = ByteFloatTable(t);
      for (int64_t i = 0; i < n; ++i) buf[i] = table[raw[i]];
    }
  } else if constexpr (std::is_same_v<T, double>) {
    return l.data<double>();
  } else if constexpr (std::is_same_v<T, c64>) {
    return l.data<c64>();
  } else {
    return l.data<c128>();
  }
  return buf.data();
}

template <class D, class T>
void Narrow(const T* v, int64_t n, uint8_t* raw) {
  D* p = reinterpret_cast<D*>(raw);
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<D>(v[i]);
}

// Stores class-T values into `out` (whose element type has class T): floats round to the
// element type, integers wrap to its width, pred stores v != 0.
template <class T>
void StoreAs(const T* v, Literal& out) {
  const P t = out.element_type();
  const int64_t n = out.element_count();
  uint8_t* raw = out.untyped_data();
  if constexpr (kIsInt<T>) {
    if (t == P::PRED) {
      for (int64_t i = 0; i < n; ++i) raw[i] = v[i] != 0;
      return;
    }
    const int w = BitWidth(t);
    if (ByteWidth(t) == static_cast<int>(sizeof(T))) {
      std::memcpy(raw, v, n * sizeof(T));
      return;
    }
    switch (ByteWidth(t)) {
      case 8: Narrow<uint64_t>(v, n, raw); return;
      case 4: Narrow<uint32_t>(v, n, raw); return;
      case 2: Narrow<uint16_t>(v, n, raw); return;
      default:
        if (w == 8) {
          Narrow<uint8_t>(v, n, raw);
        } else if (IsSignedIntegral(t)) {  // s4/s2: wrap, held sign-extended in a byte
          for (int64_t i = 0; i < n; ++i) raw[i] = static_cast<uint8_t>(SignExtend(static_cast<uint64_t>(v[i]), w));
        } else {
          for (int64_t i = 0; i < n; ++i) raw[i] = static_cast<uint8_t>(static_cast<uint64_t>(v[i]) & WidthMask(w));
        }
        return;
    }
  } else if constexpr (std::is_same_v<T, float>) {
    if (t == P::F32) {
      std::memcpy(raw, v, n * 4);
    } else if (t == P::BF16) {
      uint16_t* p = out.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = FloatToBf16(v[i]);
    } else if (t == P::F16) {
      uint16_t* p = out.data<uint16_t>();
      for (int64_t i = 0; i < n; ++i) p[i] = FloatToF16(v[i]);
    } else {
      for (int64_t i = 0; i < n; ++i) raw[i] = static_cast<uint8_t>(EncodeFloat(t, v[i]));
    }
  } else {
    std::memcpy(raw, v, n * sizeof(T));
  }
}

// Calls f(T{}) with T the class type of `c`.
template <class F>
auto WithClass(Cls c, F&& f) {
  switch (c) {
    case Cls::kS32: return f(int32_t{});
    case Cls::kU32: return f(uint32_t{});
    case Cls::kSigned: return f(int64_t{});
    case Cls::kUnsigned: return f(uint64_t{});
    case Cls::kF32: return f(float{});
    case Cls::kF64: return f(double{});
    case Cls::kC64: return f(c64{});
    default: return f(c128{});
  }
}

// Loads operand `l` as T, expanded to n elements when it is a scalar (clamp, select).
template <class T>
const T* LoadExpanded(const Literal& l, int64_t n, std::vector<T>& buf) {
  const T* p = LoadAs<T>(l, buf);
  if (l.element_count() == n) return p;
  T v = p[0];
  buf.assign(n, v);
  return buf.data();
}

// ---- integer helpers -------------------------------------------------------------------
struct IntInfo {
  int width;
  bool is_signed;
  bool is_pred;
};
IntInfo InfoOf(PrimitiveType t) { return {BitWidth(t), IsSignedIntegral(t), t == P::PRED}; }

template <class T>
T IntPow(T base, T exp) {  // XLA's IPow in the unsigned type: wraps like repeated multiply
  using U = std::make_unsigned_t<T>;
  U b = static_cast<U>(base), r = 1;
  U e = static_cast<U>(exp);
  while (e) {
    if (e & 1) r *= b;
    b *= b;
    e >>= 1;
  }
  return static_cast<T>(r);
}

// ---- unary ops (same compute class in and out) -----------------------------------------
template <class T>
absl::Status UnaryKernel(const HloInstruction& inst, const T* x, T* r, int64_t n, PrimitiveType t) {
  using O = HloOpcode;
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) r[i] = f(x[i]);
    return absl::OkStatus();
  };
  const O op = inst.opcode();
  if constexpr (kIsInt<T>) {
    const IntInfo ti = InfoOf(t);
    using U = uint64_t;
    switch (op) {
      case O::kAbs:
        if constexpr (std::is_signed_v<T>) return map([](T v) { return v < 0 ? T(0 - U(v)) : v; });
        return map([](T v) { return v; });
      case O::kNegate: return map([](T v) { return T(0 - U(v)); });
      case O::kSign: return map([](T v) { return T((T(0) < v) - (v < T(0))); });
      case O::kNot:
        if (ti.is_pred) return map([](T v) { return T(v == 0); });
        return map([](T v) { return T(~v); });
      case O::kPopulationCount: {
        const U m = WidthMask(ti.width);
        return map([m](T v) { return T(std::popcount(U(v) & m)); });
      }
      case O::kClz: {
        const U m = WidthMask(ti.width);
        const int w = ti.width;
        return map([m, w](T v) { return T(w - std::bit_width(U(v) & m)); });
      }
      // Rounding ops are identities on integers (XLA's typed visitor rounds the value).
      case O::kFloor: case O::kCeil: case O::kRoundNearestAfz: case O::kRoundNearestEven:
      case O::kCopy: case O::kReal:
        return map([](T v) { return v; });
      case O::kImag: return map([](T) { return T(0); });
      default: return Unsupported(inst, t);
    }
  } else if constexpr (kIsReal<T>) {
    switch (op) {
      case O::kAbs: return map([](T v) { return std::fabs(v); });
      case O::kNegate: return map([](T v) { return -v; });
      case O::kSign:
        return map([](T v) { return std::isnan(v) ? v : std::copysign(T(v != T(0)), v); });
      case O::kFloor: return map([](T v) { return std::floor(v); });
      case O::kCeil: return map([](T v) { return std::ceil(v); });
      case O::kRoundNearestAfz: return map([](T v) { return std::round(v); });
      case O::kRoundNearestEven: return map([](T v) { return std::nearbyint(v); });
      case O::kSqrt: return map([](T v) { return std::sqrt(v); });
      case O::kRsqrt: return map([](T v) { return T(1) / std::sqrt(v); });
      case O::kCbrt: return map([](T v) { return std::cbrt(v); });
      case O::kExp: return map([](T v) { return std::exp(v); });
      case O::kExpm1: return map([](T v) { return std::expm1(v); });
      case O::kLog: return map([](T v) { return std::log(v); });
      case O::kLog1p: return map([](T v) { return std::log1p(v); });
      case O::kSin: return map([](T v) { return std::sin(v); });
      case O::kCos: return map([](T v) { return std::cos(v); });
      case O::kTan: return map([](T v) { return std::tan(v); });
      case O::kTanh: return map([](T v) { return std::tanh(v); });
      // logistic(x) = 1 / (1 + exp(-x)), XLA's kLogistic (LogisticExpander's default form).
      case O::kLogistic: return map([](T v) { return T(1) / (T(1) + std::exp(-v)); });
      case O::kErf: return map([](T v) { return std::erf(v); });
      case O::kCopy: case O::kReal: return map([](T v) { return v; });
      case O::kImag: return map([](T) { return T(0); });
      case O::kReducePrecision: {
        const int eb = inst.attrs().exponent_bits, mb = inst.attrs().mantissa_bits;
        using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
        constexpr int kSrcM = std::numeric_limits<T>::digits - 1;
        constexpr int kSrcE = 8 * sizeof(T) - kSrcM - 1;
        if (eb < 1 || mb < 0)
          return absl::InvalidArgumentError(absl::StrCat("reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got ", eb, ", ", mb));
        return map([eb, mb](T v) {
          U bits = std::bit_cast<U>(v);
          if (mb < kSrcM) {  // round to nearest even at the new last mantissa bit
            const U last = U{1} << (kSrcM - mb);
            const U bias = (last >> 1) - 1 + ((bits & last) >> (kSrcM - mb));
            bits = (bits + bias) & ~(last - 1);
          }
          if (eb < kSrcE) {  // flush exponents out of range to zero / infinity
            const U sign = U{1} << (8 * sizeof(T) - 1);
            const U exp_mask = ((U{1} << kSrcE) - 1) << kSrcM;
            const U src_bias = (U{1} << (kSrcE - 1)) - 1;
            const U red_bias = (U{1} << (eb - 1)) - 1;
            const U e = bits & exp_mask;
            if (e > ((src_bias + red_bias) << kSrcM)) bits = (bits & sign) | exp_mask;
            else if (e <= ((src_bias - red_bias) << kSrcM)) bits = bits & sign;
          }
          T out = std::bit_cast<T>(bits);
          if (std::isnan(v)) out = mb > 0 ? v : std::numeric_limits<T>::infinity();
          return out;
        });
      }
      default: return Unsupported(inst, t);
    }
  } else {  // complex
    switch (op) {
      case O::kNegate: return map([](T v) { return -v; });
      case O::kSign:
        return map([](T v) { auto a = std::abs(v); return a == 0 ? T(0) : v / a; });
      case O::kSqrt: return map([](T v) { return std::sqrt(v); });
      case O::kRsqrt: return map([](T v) { return T(1) / std::sqrt(v); });
      case O::kExp: return map([](T v) { return std::exp(v); });
      case O::kExpm1: return map([](T v) { return std::exp(v) - T(1); });
      case O::kLog: return map([](T v) { return std::log(v); });
      case O::kLog1p: return map([](T v) { return std::log(T(1) + v); });
      case O::kSin: return map([](T v) { return std::sin(v); });
      case O::kCos: return map([](T v) { return std::cos(v); });
      case O::kTan: return map([](T v) { return std::tan(v); });
      case O::kTanh: return map([](T v) { return std::tanh(v); });
      case O::kLogistic: return map([](T v) { return T(1) / (T(1) + std::exp(-v)); });
      case O::kCopy: return map([](T v) { return v; });
      default: return Unsupported(inst, t);
    }
  }
}

// ---- binary ops --------------------------------------------------------------------------
template <class T>
absl::Status BinaryKernel(const HloInstruction& inst, const T* a, const T* b, T* r, int64_t n,
                          PrimitiveType t) {
  using O = HloOpcode;
  auto map = [&](auto f) {
    for (int64_t i = 0; i < n; ++i) r[i] = f(a[i], b[i]);
    return absl::OkStatus();
  };
  const O op = inst.opcode();
  if constexpr (kIsInt<T>) {
    using U = uint64_t;
    const IntInfo ti = InfoOf(t);
    const int w = ti.width;
    const U mask = WidthMask(w);
    switch (op) {
      case O::kAdd: return map([](T x, T y) { return T(U(x) + U(y)); });
      case O::kSubtract: return map([](T x, T y) { return T(U(x) - U(y)); });
      case O::kMultiply: return map([](T x, T y) { return T(U(x) * U(y)); });
      case O::kDivide:
        // x/0 is -1 (all ones); INT_MIN/-1 is INT_MIN (wraps to it when stored).
        return map([](T x, T y) -> T {
          if (y == 0) return T(-1);
          if constexpr (std::is_signed_v<T>) {
            if (y == -1) return T(0 - U(x));
          }
          return x / y;
        });
      case O::kRemainder:
        return map([](T x, T y) -> T {
          if (y == 0) return x;
          if constexpr (std::is_signed_v<T>) {
            if (y == -1) return 0;
          }
          return x % y;
        });
      case O::kMaximum: return map([](T x, T y) { return std::max(x, y); });
      case O::kMinimum: return map([](T x, T y) { return std::min(x, y); });
      case O::kPower:
        if (ti.is_pred) return map([](T x, T y) { return T(x || !y); });
        return map([](T x, T y) -> T {
          if (x == 1 || y == 0) return 1;
          if constexpr (std::is_signed_v<T>) {
            if (y < 0) return 0;
          }
          return IntPow<T>(x, y);
        });
      case O::kAnd: return map([](T x, T y) { return T(x & y); });
      case O::kOr: return map([](T x, T y) { return T(x | y); });
      case O::kXor: return map([](T x, T y) { return T(x ^ y); });
      // Shift amounts are read as unsigned of the element width; >= width is out of range.
      case O::kShiftLeft:
        return map([w, mask](T x, T y) { return (U(y) & mask) >= U(w) ? T(0) : T(U(x) << (U(y) & mask)); });
      case O::kShiftRightArithmetic:
        return map([w, mask](T x, T y) {
          int64_t sx = SignExtend(U(x), w);
          if ((U(y) & mask) >= U(w)) return T(sx < 0 ? -1 : 0);
          return T(sx >> (U(y) & mask));
        });
      case O::kShiftRightLogical:
        return map([w, mask](T x, T y) { return (U(y) & mask) >= U(w) ? T(0) : T((U(x) & mask) >> (U(y) & mask)); });
      default: return Unsupported(inst, t);
    }
  } else if constexpr (kIsReal<T>) {
    switch (op) {
      case O::kAdd: return map([](T x, T y) { return x + y; });
      case O::kSubtract: return map([](T x, T y) { return x - y; });
      case O::kMultiply: return map([](T x, T y) { return x * y; });
      case O::kDivide: return map([](T x, T y) { return x / y; });
      case O::kRemainder: return map([](T x, T y) { return std::fmod(x, y); });
      // NaN-propagating, the lhs NaN first, as XLA.
      case O::kMaximum:
        return map([](T x, T y) { return std::isnan(x) ? x : std::isnan(y) ? y : std::max(x, y); });
      case O::kMinimum:
        return map([](T x, T y) { return std::isnan(x) ? x : std::isnan(y) ? y : std::min(x, y); });
      case O::kPower:
        return map([](T x, T y) { return (x == T(1) || y == T(0)) ? T(1) : T(std::pow(x, y)); });
      case O::kAtan2: return map([](T x, T y) { return std::atan2(x, y); });
      default: return Unsupported(inst, t);
    }
  } else {  // complex
    using R = typename T::value_type;
    switch (op) {
      case O::kAdd: return map([](T x, T y) { return x + y; });
      case O::kSubtract: return map([](T x, T y) { return x - y; });
      case O::kMultiply: return map([](T x, T y) { return x * y; });
      case O::kDivide: return map([](T x, T y) { return x / y; });
      case O::kPower:
        return map([](T x, T y) -> T {
          if (x == T(1) || y == T(0)) return T(1);
          // inf^(a+0i) is inf for a > 0 and 0 for a < 0 (Kahan), as XLA.
          if (x.imag() == 0 && x.real() > 0 && std::isinf(x.real()) && y.imag() == 0) {
            if (y.real() > 0) return x;
            if (y.real() < 0) return T(0);
          }
          return std::pow(x, y);
        });
      case O::kAtan2:
        return map([](T y, T x) {
          const T i(R(0), R(1));
          return (-i) * std::log((x + i * y) / std::sqrt(x * x + y * y));
        });
      default: return Unsupported(inst, t);
    }
  }
}

// ---- compare -------------------------------------------------------------------------
// A key whose signed order is the IEEE total order of the bit pattern `bits` of a w-bit
// float type with a sign bit: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
int64_t TotalOrderKey(uint64_t bits, int w, bool has_sign) {
  if (!has_sign) return static_cast<int64_t>(bits);
  int64_t s = SignExtend(bits, w);
  return s < 0 ? (s ^ static_cast<int64_t>(WidthMask(w - 1))) : s;
}

template <class T>
void CompareLoop(ComparisonDirection dir, const T* a, const T* b, uint8_t* r, int64_t n) {
  using D = ComparisonDirection;
  switch (dir) {
    case D::kEq: for (int64_t i = 0; i < n; ++i) r[i] = a[i] == b[i]; break;
    case D::kNe: for (int64_t i = 0; i < n; ++i) r[i] = a[i] != b[i]; break;
    case D::kGe: for (int64_t i = 0; i < n; ++i) r[i] = a[i] >= b[i]; break;
    case D::kGt: for (int64_t i = 0; i < n; ++i) r[i] = a[i] > b[i]; break;
    case D::kLe: for (int64_t i = 0; i < n; ++i) r[i] = a[i] <= b[i]; break;
    case D::kLt: for (int64_t i = 0; i < n; ++i) r[i] = a[i] < b[i]; break;
  }
}

absl::StatusOr<Literal> EvalCompare(const HloInstruction& inst, const Literal& a, const Literal& b) {
  if (!inst.attrs().comparison_direction)
    return absl::InvalidArgumentError("compare has no direction");
  const ComparisonDirection dir = *inst.attrs().comparison_direction;
  const P t = a.element_type();
  if (b.element_type() != t)
    return absl::InvalidArgumentError(absl::StrCat("compare operands differ in type: ", TypeName(t), " vs ", TypeName(b.element_type())));
  const int64_t n = a.element_count();
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_type() != P::PRED || out->element_count() != n)
    return absl::InvalidArgumentError("compare must produce pred of the operands' dimensions");
  uint8_t* r = out->untyped_data();
  ComparisonType ct = inst.attrs().comparison_type;
  const int w = BitWidth(t);
  if (IsFloatingPoint(t) && ct == ComparisonType::kTotalOrder) {
    // On the element type's own bits, so NaN signs and payloads order as XLA orders them.
    const bool has_sign = t != P::F8E8M0FNU;
    std::vector<int64_t> ka(n), kb(n);
    for (int64_t i = 0; i < n; ++i) {
      ka[i] = TotalOrderKey(a.GetRawBits(i), w, has_sign);
      kb[i] = TotalOrderKey(b.GetRawBits(i), w, has_sign);
    }
    CompareLoop(dir, ka.data(), kb.data(), r, n);
    return out;
  }
  bool as_signed = IsSignedIntegral(t);
  if (ct == ComparisonType::kSigned) as_signed = true;
  if (ct == ComparisonType::kUnsigned) as_signed = false;
  if ((IsIntegral(t) || t == P::PRED) && as_signed != IsSignedIntegral(t)) {
    // The comparison type overrides the element type's signedness: reinterpret the bits.
    std::vector<int64_t> ka(n), kb(n);
    const uint64_t m = WidthMask(w);
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t xa = a.GetRawBits(i) & m, xb = b.GetRawBits(i) & m;
      // Unsigned order on w <= 63 bits fits int64; 64-bit unsigned flips the sign bit.
      ka[i] = as_signed ? SignExtend(xa, w) : w == 64 ? static_cast<int64_t>(xa ^ (uint64_t{1} << 63)) : static_cast<int64_t>(xa);
      kb[i] = as_signed ? SignExtend(xb, w) : w == 64 ? static_cast<int64_t>(xb ^ (uint64_t{1} << 63)) : static_cast<int64_t>(xb);
    }
    CompareLoop(dir, ka.data(), kb.data(), r, n);
    return out;
  }
  absl::Status st = WithClass(ClassOf(t), [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    std::vector<T> ba, bb;
    const T* pa = LoadAs<T>(a, ba);
    const T* pb = LoadAs<T>(b, bb);
    if constexpr (kIsComplex<T>) {
      if (dir == ComparisonDirection::kEq) { for (int64_t i = 0; i < n; ++i) r[i] = pa[i] == pb[i]; return absl::OkStatus(); }
      if (dir == ComparisonDirection::kNe) { for (int64_t i = 0; i < n; ++i) r[i] = pa[i] != pb[i]; return absl::OkStatus(); }
      return absl::InvalidArgumentError("complex numbers compare only for EQ and NE");
    } else {
      CompareLoop(dir, pa, pb, r, n);
      return absl::OkStatus();
    }
  });
  if (!st.ok()) return st;
  return out;
}

// ---- convert ------------------------------------------------------------------------------
struct DstInfo {
  bool is_pred = false;
  bool is_signed = false;
  int64_t min = 0, max = 0;  // signed destinations
  uint64_t umax = 0;         // unsigned destinations
};

DstInfo DstInfoOf(PrimitiveType t) {
  DstInfo d;
  d.is_pred = t == P::PRED;
  d.is_signed = IsSignedIntegral(t);
  const int w = BitWidth(t);
  if (d.is_signed) {
    d.max = static_cast<int64_t>(WidthMask(w - 1));
    d.min = -d.max - 1;
  }
  d.umax = WidthMask(w);
  return d;
}

// Float -> integer: NaN is 0, out-of-range values saturate (XLA's convert).
template <class D>
D SaturateToInt(double x, const DstInfo& di) {
  if (di.is_pred) return D(x != 0);
  if (std::isnan(x)) return D(0);
  if (di.is_signed) {
    if (x <= static_cast<double>(di.min)) return D(di.min);
    if (x >= static_cast<double>(di.max)) return D(di.max);
    return D(static_cast<int64_t>(x));
  }
  if (x <= 0) return D(0);
  if (x >= static_cast<double>(di.umax)) return D(di.umax);
  return D(static_cast<uint64_t>(x));
}

template <class S, class D>
D ConvertValue(S v, const DstInfo& di) {
  if constexpr (kIsComplex<S>) {
    if constexpr (kIsComplex<D>) {
      return D(static_cast<typename D::value_type>(v.real()), static_cast<typename D::value_type>(v.imag()));
    } else if constexpr (kIsInt<D>) {
      if (di.is_pred) return D(v != S(0));
      return SaturateToInt<D>(v.real(), di);
    } else {
      return static_cast<D>(v.real());  // complex -> real keeps the real part
    }
  } else if constexpr (kIsReal<S>) {
    if constexpr (kIsComplex<D>) return D(static_cast<typename D::value_type>(v), 0);
    else if constexpr (kIsInt<D>) return SaturateToInt<D>(static_cast<double>(v), di);
    else return static_cast<D>(v);
  } else {  // integer source: wraps when stored; exact int -> float rounding
    if constexpr (kIsComplex<D>) return D(static_cast<typename D::value_type>(v), 0);
    else return static_cast<D>(v);
  }
}

}  // namespace

absl::StatusOr<Literal> ConvertLiteral(const Literal& in, PrimitiveType type) {
  if (auto st = ExpectArray(in, "convert operand"); !st.ok()) return st;
  if (!IsArrayType(type)) return absl::InvalidArgumentError(absl::StrCat("cannot convert to ", TypeName(type)));
  Shape shape = in.shape();
  shape.set_element_type(type);
  auto out = NewLiteral(shape);
  if (!out.ok()) return out.status();
  const int64_t n = in.element_count();
  const DstInfo di = DstInfoOf(type);
  WithClass(ClassOf(in.element_type()), [&](auto s_zero) {
    using S = decltype(s_zero);
    std::vector<S> sbuf;
    const S* src = LoadAs<S>(in, sbuf);
    WithClass(ClassOf(type), [&](auto d_zero) {
      using D = decltype(d_zero);
      // Straight into the output when its storage is D, else through StoreAs.
      const bool direct = ByteWidth(type) == static_cast<int>(sizeof(D)) && type != P::PRED &&
                          (std::is_floating_point_v<D> ? (type == P::F32 || type == P::F64) : true);
      std::vector<D> buf;
      if (!direct) buf.resize(n);
      D* dst = direct ? out->data<D>() : buf.data();
      for (int64_t i = 0; i < n; ++i) dst[i] = ConvertValue<S, D>(src[i], di);
      if (!direct) StoreAs<D>(dst, *out);
      return 0;
    });
    return 0;
  });
  return out;
}

namespace {

// stochastic-convert(float x, unsigned random) -> signed int, as XLA's decomposition: round
// |x| up when random < fraction(|x|) * 2^bits(random), then restore the sign and saturate.
absl::StatusOr<Literal> EvalStochasticConvert(const HloInstruction& inst, const Literal& x, const Literal& rnd) {
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  const P to = out->element_type();
  if (!IsFloatingPoint(x.element_type()) || !IsUnsignedIntegral(rnd.element_type()) || !IsSignedIntegral(to))
    return absl::InvalidArgumentError("stochastic-convert takes a float and an unsigned random operand and yields a signed integer");
  const int64_t n = x.element_count();
  if (rnd.element_count() != n) return absl::InvalidArgumentError("stochastic-convert operands differ in size");
  const DstInfo di = DstInfoOf(to);
  const int rbits = BitWidth(rnd.element_type());
  const DstInfo ri = DstInfoOf(rnd.element_type());
  for (int64_t i = 0; i < n; ++i) {
    const double v = x.GetDouble(i);
    const double av = std::fabs(v), tr = std::floor(av);
    const double fixed = (av - tr) * std::ldexp(1.0, rbits);
    const bool up = rnd.GetUint(i) < SaturateToInt<uint64_t>(fixed, ri);
    int64_t r = SaturateToInt<int64_t>(tr, di);
    if (up) r = static_cast<int64_t>(static_cast<uint64_t>(r) + 1);
    if (v < 0) r = static_cast<int64_t>(0 - static_cast<uint64_t>(r));
    if (v <= static_cast<double>(di.min)) r = di.min;
    if (v >= static_cast<double>(di.max)) r = di.max;
    out->SetInt(i, r);
  }
  return out;
}

// clamp(lo, x, hi): lo and hi may be scalars. NaN in any operand propagates (lo first).
absl::StatusOr<Literal> EvalClamp(const HloInstruction& inst, Operands ops) {
  const Literal& x = *ops[1];
  const int64_t n = x.element_count();
  const P t = x.element_type();
  for (int k : {0, 2}) {
    if (ops[k]->element_type() != t) return absl::InvalidArgumentError("clamp operands differ in type");
    if (ops[k]->element_count() != n && !(ops[k]->shape().rank() == 0))
      return absl::InvalidArgumentError("clamp bounds must be scalars or match the operand");
  }
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_type() != t || out->element_count() != n)
    return absl::InvalidArgumentError("clamp result does not match its operand");
  absl::Status st = WithClass(ClassOf(t), [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    if constexpr (kIsComplex<T>) {
      return Unsupported(inst, t);
    } else {
      std::vector<T> bl, bx, bh;
      const T* lo = LoadExpanded<T>(*ops[0], n, bl);
      const T* v = LoadAs<T>(x, bx);
      const T* hi = LoadExpanded<T>(*ops[2], n, bh);
      std::vector<T> r(n);
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (kIsReal<T>) {
          if (std::isnan(lo[i])) { r[i] = lo[i]; continue; }
          if (std::isnan(v[i])) { r[i] = v[i]; continue; }
          if (std::isnan(hi[i])) { r[i] = hi[i]; continue; }
        }
        r[i] = std::min(hi[i], std::max(v[i], lo[i]));
      }
      StoreAs<T>(r.data(), *out);
      return absl::OkStatus();
    }
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace

bool IsHandledElementwise(HloOpcode op) {
  using O = HloOpcode;
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return op != O::kCopy;  // copy: shape ops
  return op == O::kSelect || op == O::kClamp;
}

absl::StatusOr<Literal> EvalElementwise(const HloInstruction& inst, Operands ops) {
  using O = HloOpcode;
  const O op = inst.opcode();
  for (const Literal* l : ops)
    if (auto st = ExpectArray(*l, "elementwise operand"); !st.ok()) return st;
  if (!inst.shape().IsArray()) return absl::InvalidArgumentError("elementwise op with a non-array result");
  const int64_t n = ops.empty() ? 0 : ops[0]->element_count();
  switch (op) {
    case O::kSelect:
      if (ops.size() != 3) break;
      return EvalSelect(inst, ops);
    case O::kClamp:
      if (ops.size() != 3) break;
      return EvalClamp(inst, ops);
    case O::kConvert:
      if (ops.size() != 1) break;
      if (ops[0]->shape().dimensions() != inst.shape().dimensions())
        return absl::InvalidArgumentError("convert changes dimensions");
      {
        auto r = ConvertLiteral(*ops[0], inst.shape().element_type());
        if (r.ok()) r->mutable_shape() = inst.shape();
        return r;
      }
    case O::kBitcastConvert:
      if (ops.size() != 1) break;
      return EvalBitcastConvert(inst, *ops[0]);
    case O::kStochasticConvert:
      if (ops.size() != 2) break;
      return EvalStochasticConvert(inst, *ops[0], *ops[1]);
    case O::kCompare:
      if (ops.size() != 2) break;
      if (ops[1]->element_count() != n) return absl::InvalidArgumentError("compare operands differ in size");
      return EvalCompare(inst, *ops[0], *ops[1]);
    default: break;
  }
  const size_t arity = IsElementwiseBinary(op) ? 2 : 1;
  if (ops.size() != arity)
    return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(op)), " takes ", arity, " operands, got ", ops.size()));
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_count() != n) return absl::InvalidArgumentError("result and operand sizes differ");
  const P t = ops[0]->element_type();
  const P to = out->element_type();
  if (arity == 2 && (ops[1]->element_type() != t || ops[1]->element_count() != n))
    return absl::InvalidArgumentError(absl::StrCat("operands differ: ", ops[0]->shape().ToString(false), " vs ", ops[1]->shape().ToString(false)));

  // Ops whose result type differs from the operand's.
  if (op == O::kIsFinite) {
    if (!IsFloatingPoint(t) || to != P::PRED) return Unsupported(inst, t);
    uint8_t* r = out->untyped_data();
    WithClass(ClassOf(t), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (kIsReal<T>) {
        std::vector<T> b;
        const T* x = LoadAs<T>(*ops[0], b);
        for (int64_t i = 0; i < n; ++i) r[i] = std::isfinite(x[i]);
      }
      return 0;
    });
    return out;
  }
  if (op == O::kComplex) {
    if (!((t == P::F32 && to == P::C64) || (t == P::F64 && to == P::C128))) return Unsupported(inst, t);
    for (int64_t i = 0; i < n; ++i) out->SetComplex(i, {ops[0]->GetDouble(i), ops[1]->GetDouble(i)});
    return out;
  }
  if (IsComplex(t) && !IsComplex(to)) {  // abs, real, imag of complex numbers
    if (to != ComplexComponentType(t) || (op != O::kAbs && op != O::kReal && op != O::kImag))
      return Unsupported(inst, t);
    WithClass(ClassOf(t), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (kIsComplex<T>) {
        using R = typename T::value_type;
        std::vector<T> b;
        const T* x = LoadAs<T>(*ops[0], b);
        R* r = out->data<R>();
        for (int64_t i = 0; i < n; ++i)
          r[i] = op == O::kAbs ? std::abs(x[i]) : op == O::kImag ? x[i].imag() : x[i].real();
      }
      return 0;
    });
    return out;
  }
  if (ClassOf(t) != ClassOf(to))
    return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(op)), " from ", TypeName(t), " to ", TypeName(to)));

  absl::Status st = WithClass(ClassOf(t), [&](auto zero) -> absl::Status {
    using T = decltype(zero);
    std::vector<T> ba, bb, rbuf;
    // Results go straight into the output when its storage is the class type (f32, f64,
    // s64, u64, c64, c128); otherwise through a buffer that StoreAs rounds or wraps.
    const bool direct = ByteWidth(to) == static_cast<int>(sizeof(T)) && to != P::PRED &&
                        (to == P::F32 || to == P::F64 || to == P::S64 || to == P::U64 || to == P::S32 ||
                         to == P::U32 || IsComplex(to));
    if (!direct) rbuf.resize(n);
    T* r = direct ? out->data<T>() : rbuf.data();
    const T* a = LoadAs<T>(*ops[0], ba);
    absl::Status s;
    if (arity == 1) {
      s = UnaryKernel<T>(inst, a, r, n, t);
    } else {
      const T* b = LoadAs<T>(*ops[1], bb);
      s = BinaryKernel<T>(inst, a, b, r, n, t);
    }
    if (!s.ok()) return s;
    if (!direct) StoreAs<T>(r, *out);
    return absl::OkStatus();
  });
  if (!st.ok()) return st;
  return out;
}

}  // namespace eval_internal
}  // namespace hloc
