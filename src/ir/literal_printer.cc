// Constants as XLA prints them: LiteralBase::PrintWithoutShapeOneline for constant(...) and
// PrintWithLayoutOneline for custom-call literal=..., with floats written by XLA's
// RoundTripFpToString so that every value parses back to the same bits.
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/float_types.h"
#include "ir/hlo_printer_internal.h"

namespace hloc {
namespace printer_internal {
namespace {

// What printing needs to know about a floating-point type's bit layout.
struct FloatInfo {
  int ebits = 0, mbits = 0;
  bool has_sign = true;
  enum Nan { kIeee, kAllOnes, kNegZero, kNone } nan = kIeee;
  // std::numeric_limits<T>::has_signaling_NaN in XLA/ml_dtypes: only then are NaN
  // payloads printed, as "nan(0x...)".
  bool payload = false;
  int max_digits10 = 17;
};

FloatInfo InfoOf(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::F16: return {5, 10, true, FloatInfo::kIeee, true, 5};
    case P::BF16: return {8, 7, true, FloatInfo::kIeee, true, 4};
    case P::F32: return {8, 23, true, FloatInfo::kIeee, true, 9};
    case P::F64: return {11, 52, true, FloatInfo::kIeee, true, 17};
    case P::F8E5M2: return {5, 2, true, FloatInfo::kIeee, true, 2};
    case P::F8E4M3: return {4, 3, true, FloatInfo::kIeee, true, 3};
    case P::F8E3M4: return {3, 4, true, FloatInfo::kIeee, true, 3};
    case P::F8E4M3FN: return {4, 3, true, FloatInfo::kAllOnes, false, 3};
    case P::F8E4M3FNUZ: return {4, 3, true, FloatInfo::kNegZero, false, 3};
    case P::F8E4M3B11FNUZ: return {4, 3, true, FloatInfo::kNegZero, false, 3};
    case P::F8E5M2FNUZ: return {5, 2, true, FloatInfo::kNegZero, false, 2};
    case P::F4E2M1FN: return {2, 1, true, FloatInfo::kNone, false, 2};
    case P::F8E8M0FNU: return {8, 0, false, FloatInfo::kAllOnes, false, 2};
    default: return {};
  }
}

// NaN text for a NaN bit pattern: sign, "nan", and the payload where XLA prints one.
std::string NanText(const FloatInfo& f, uint64_t bits) {
  bool neg;
  if (f.nan == FloatInfo::kNegZero) {
    neg = true;  // the only NaN of the fnuz types is the negative-zero pattern
  } else {
    neg = f.has_sign && ((bits >> (f.ebits + f.mbits)) & 1);
  }
  std::string s = neg ? "-nan" : "nan";
  if (f.payload && f.mbits > 0) {
    uint64_t payload = bits & ((uint64_t{1} << f.mbits) - 1);
    uint64_t quiet = uint64_t{1} << (f.mbits - 1);
    if (payload != quiet) absl::StrAppendFormat(&s, "(0x%x)", payload);
  }
  return s;
}

bool IsNanBits(const FloatInfo& f, uint64_t bits) {
  uint64_t emax = (uint64_t{1} << f.ebits) - 1;
  uint64_t e = (bits >> f.mbits) & emax;
  uint64_t m = f.mbits ? bits & ((uint64_t{1} << f.mbits) - 1) : 0;
  switch (f.nan) {
    case FloatInfo::kIeee: return e == emax && m != 0;
    case FloatInfo::kAllOnes: return e == emax && m == (f.mbits ? (uint64_t{1} << f.mbits) - 1 : 0);
    case FloatInfo::kNegZero: return bits == (uint64_t{1} << (f.ebits + f.mbits));
    case FloatInfo::kNone: return false;
  }
  return false;
}

// "%.*g" of a finite or infinite value (NaNs are handled by NanText).
std::string G(int precision, double v) {
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  return absl::StrFormat("%.*g", precision, v);
}

}  // namespace

std::string FloatText(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  return FloatBitsText(PrimitiveType::F32, bits);
}

std::string DoubleText(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  return FloatBitsText(PrimitiveType::F64, bits);
}

std::string FloatBitsText(PrimitiveType t, uint64_t bits) {
  FloatInfo f = InfoOf(t);
  if (IsNanBits(f, bits)) return NanText(f, bits);
  if (t == PrimitiveType::F32) {
    // XLA: six significant digits when that reads back to the same float, else nine.
    uint32_t b = static_cast<uint32_t>(bits);
    float v;
    std::memcpy(&v, &b, 4);
    std::string s = G(6, v);
    if (std::isfinite(v) && std::strtof(s.c_str(), nullptr) != v) s = G(9, v);
    return s;
  }
  if (t == PrimitiveType::F64) {
    double v;
    std::memcpy(&v, &bits, 8);
    std::string s = G(15, v);
    if (std::isfinite(v) && std::strtod(s.c_str(), nullptr) != v) s = G(17, v);
    return s;
  }
  // Narrow types: max_digits10 significant digits of the exact value.
  return G(f.max_digits10, DecodeFloat(t, bits));
}

std::string LiteralElementText(const Literal& literal, int64_t i) {
  PrimitiveType t = literal.element_type();
  if (t == PrimitiveType::PRED) return literal.GetPred(i) ? "true" : "false";
  if (IsSignedIntegral(t)) return absl::StrCat(literal.GetInt(i));
  if (IsUnsignedIntegral(t)) return absl::StrCat(literal.GetUint(i));
  if (IsFloatingPoint(t)) return FloatBitsText(t, literal.GetRawBits(i));
  if (t == PrimitiveType::C64) {
    // Read the two f32 halves' bits directly so NaN signs and payloads survive.
    uint32_t parts[2];
    std::memcpy(parts, literal.untyped_data() + i * 8, 8);
    return absl::StrCat("(", FloatBitsText(PrimitiveType::F32, parts[0]), ", ",
                        FloatBitsText(PrimitiveType::F32, parts[1]), ")");
  }
  if (t == PrimitiveType::C128) {
    uint64_t parts[2];
    std::memcpy(parts, literal.untyped_data() + i * 16, 16);
    return absl::StrCat("(", FloatBitsText(PrimitiveType::F64, parts[0]), ", ",
                        FloatBitsText(PrimitiveType::F64, parts[1]), ")");
  }
  return "?";
}

namespace {

// One dense array, XLA's DenseArrayPrintHelper in its one-line form. Iterative (an
// explicit index stack) so a deep literal cannot exhaust the call stack.
void AppendDenseArray(std::string* out, const Literal& lit) {
  const Shape& shape = lit.shape();
  const std::vector<int64_t>& dims = shape.dimensions();
  const int64_t rank = shape.rank();
  if (rank == 0) {
    *out += LiteralElementText(lit, 0);
    return;
  }
  // Brace text for the level whose remaining dimensions start at `level`.
  auto open_brace = [&](int64_t level, const std::vector<int64_t>& index) {
    int64_t remaining = rank - level;
    if (rank == 1) return std::string("{");
    if (remaining == 1) return std::string(dims[level] <= 1 ? "{" : "{ ");
    if (rank > 3 && level > 0) {
      // Non-innermost levels of rank>3 arrays carry /*iN=value*/ comments.
      return absl::StrCat("{ /*i", level - 1, "=", index[level - 1], "*/",
                          dims[level] > 0 ? " " : "");
    }
    return std::string("{ ");
  };
  auto close_brace = [&](int64_t level) {
    int64_t remaining = rank - level;
    if (rank == 1) return std::string("}");
    if (remaining == 1) return std::string(dims[level] <= 1 ? "}" : " }");
    return std::string(" }");
  };
  const bool pred01 = shape.element_type() == PrimitiveType::PRED;
  std::vector<int64_t> index(rank, 0);
  int64_t level = 0;
  int64_t linear = 0;
  *out += open_brace(0, index);
  // Walk the index space; `level` is the dimension whose elements are being listed.
  while (level >= 0) {
    if (index[level] >= dims[level]) {
      *out += close_brace(level);
      index[level] = 0;
      --level;
      if (level < 0) break;
      ++index[level];
      if (index[level] < dims[level]) *out += ", ";
      continue;
    }
    if (level == rank - 1) {
      // Innermost dimension: print its elements.
      for (int64_t i = 0; i < dims[level]; ++i) {
        if (i > 0) *out += ", ";
        if (pred01) {
          *out += lit.GetPred(linear) ? "1" : "0";
        } else {
          *out += LiteralElementText(lit, linear);
        }
        ++linear;
      }
      index[level] = dims[level];
      continue;
    }
    ++level;
    index[level] = 0;
    *out += open_brace(level, index);
  }
}

}  // namespace

void AppendLiteral(std::string* out, const Literal& literal, bool print_shape,
                   bool print_layout) {
  // Tuples nest; walk them with an explicit stack of (literal, next element).
  struct Frame {
    const Literal* lit;
    int64_t next;
  };
  std::vector<Frame> stack;
  auto emit_leaf = [&](const Literal& lit) {
    if (lit.shape().IsTuple()) return false;
    if (lit.shape().IsToken()) {
      *out += "token";
      return true;
    }
    if (print_shape) {
      AppendShape(out, lit.shape(), print_layout);
      *out += " ";
    }
    AppendDenseArray(out, lit);
    return true;
  };
  if (emit_leaf(literal)) return;
  *out += "( ";
  stack.push_back({&literal, 0});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next >= top.lit->tuple_size()) {
      *out += " )";
      stack.pop_back();
      continue;
    }
    if (top.next > 0) *out += ", ";
    const Literal& elem = top.lit->tuple_element(top.next++);
    if (!emit_leaf(elem)) {
      *out += "( ";
      stack.push_back({&elem, 0});
    }
  }
}

}  // namespace printer_internal

std::string PrintLiteral(const Literal& literal) {
  std::string out;
  printer_internal::AppendLiteral(&out, literal, /*print_shape=*/false, /*print_layout=*/false);
  return out;
}

}  // namespace hloc
