// Constants: scalars, nested {} arrays (iterative, checked against the shape), tuples, complex
// (re, im), pred true/false, u64 beyond INT64_MAX, inf/-inf/nan, NaN payloads nan(0x..), and
// "{...}" (an elided large constant). Values are range-checked for their element type as XLA
// does: a float that rounds to a finite value of the type is accepted, one that overflows it is
// an error.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/float_types.h"
#include "ir/hlo_parser_internal.h"

namespace hloc::parser_internal {
namespace {

// Elided constants ("{...}") have no text to bound their size; cap what they may allocate.
constexpr int64_t kMaxElidedBytes = int64_t{1} << 28;

std::string TypeName(PrimitiveType t) { return absl::AsciiStrToUpper(std::string(PrimitiveTypeName(t))); }

// Largest finite value of a floating-point type (its lowest is the negation, except e8m0).
double MaxFinite(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::F16: return 65504.0;
    case P::BF16: return 3.3895313892515355e38;
    case P::F32: return std::numeric_limits<float>::max();
    case P::F64: return std::numeric_limits<double>::max();
    case P::F8E5M2: case P::F8E5M2FNUZ: return 57344.0;
    case P::F8E4M3: case P::F8E4M3FNUZ: return 240.0;
    case P::F8E3M4: return 15.5;
    case P::F8E4M3FN: return 448.0;
    case P::F8E4M3B11FNUZ: return 30.0;
    case P::F8E8M0FNU: return std::ldexp(1.0, 127);
    case P::F4E2M1FN: return 6.0;
    default: return std::numeric_limits<double>::max();
  }
}
double LowestFinite(PrimitiveType t) { return t == PrimitiveType::F8E8M0FNU ? std::ldexp(1.0, -127) : -MaxFinite(t); }

// Types whose NaNs carry a payload (IEEE-style, with signalling NaNs): (exponent, mantissa) bits.
bool NanPayloadFormat(PrimitiveType t, int* ebits, int* mbits) {
  using P = PrimitiveType;
  switch (t) {
    case P::F16: *ebits = 5; *mbits = 10; return true;
    case P::BF16: *ebits = 8; *mbits = 7; return true;
    case P::F32: *ebits = 8; *mbits = 23; return true;
    case P::F64: *ebits = 11; *mbits = 52; return true;
    case P::F8E5M2: *ebits = 5; *mbits = 2; return true;
    case P::F8E4M3: *ebits = 4; *mbits = 3; return true;
    case P::F8E3M4: *ebits = 3; *mbits = 4; return true;
    default: return false;
  }
}

std::string Hex(uint64_t v) { return absl::StrCat("0x", absl::Hex(v)); }

std::string FormatDouble(double v) { return absl::StrCat(v); }

}  // namespace

bool Parser::ParseLiteral(Literal* out, const Shape& shape) {
  if (shape.IsTuple()) return ParseTupleLiteral(out, shape);
  if (!shape.IsArray())
    return Err(loc(), "a constant cannot have shape ", shape.ToString(), "; it must be an array or a tuple");
  return ParseDenseLiteral(out, shape);
}

// tuple ::= '(' (literal (',' literal)*)? ')'
bool Parser::ParseTupleLiteral(Literal* out, const Shape& shape) {
  DepthGuard depth(this);
  if (!depth.ok()) return false;
  if (!Expect(TokKind::kLparen, "expects '(' in front of tuple elements")) return false;
  size_t n = shape.tuple_shapes().size();
  std::vector<Literal> elements(n);
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) {
      if (kind() != TokKind::kComma)
        return Err(loc(), "expects ',' to separate tuple elements (the tuple has ", n, " elements)");
      lex_.Lex();
    }
    if (!ParseLiteral(&elements[i], shape.tuple_shapes(i))) return false;
  }
  if (kind() != TokKind::kRparen) return Err(loc(), "expects ')' at the end of the tuple with ", n, " elements");
  lex_.Lex();
  *out = Literal::MakeTuple(std::move(elements));
  out->mutable_shape() = shape;
  return true;
}

bool Parser::ParseComplex(double* re, double* im) {
  if (!Expect(TokKind::kLparen, "expects '(' before complex number")) return false;
  size_t at = loc();
  if (kind() != TokKind::kDecimal && kind() != TokKind::kInt && kind() != TokKind::kw_inf && kind() != TokKind::kNegInf)
    return Error(at, "expect floating-point value for real part of complex number");
  if (!ParseDouble(re)) return false;
  if (!Expect(TokKind::kComma, "expect comma after real part of complex literal")) return false;
  at = loc();
  if (kind() != TokKind::kDecimal && kind() != TokKind::kInt && kind() != TokKind::kw_inf && kind() != TokKind::kNegInf)
    return Error(at, "expect floating-point value for imaginary part of complex number");
  if (!ParseDouble(im)) return false;
  return Expect(TokKind::kRparen, "expect ')' after complex number");
}

// A dense array literal, read iteratively: nest_level counts open braces and seen[d] how many
// sub-arrays (or, on the last dimension, elements) dimension d has had so far.
bool Parser::ParseDenseLiteral(Literal* out, const Shape& shape) {
  const PrimitiveType type = shape.element_type();
  const int64_t rank = shape.rank();
  const std::vector<int64_t>& dims = shape.dimensions();
  size_t at = loc();
  for (int64_t d : dims)
    if (d < 0) return Err(at, "a constant cannot have the dynamic shape ", shape.ToString());
  absl::StatusOr<int64_t> count = shape.ElementCount();
  if (!count.ok()) return Error(at, std::string(count.status().message()));
  // Every element needs text, except in "{...}": bound the allocation by what is left to read.
  bool elided = kind() == TokKind::kLbrace && lex_.LookAhead() == TokKind::kDots;
  int64_t bytes = *count * std::max(1, ByteWidth(type));
  if (elided) {
    if (bytes > kMaxElidedBytes - elided_bytes_)
      return Err(at, "the elided constant {...} of shape ", shape.ToString(),
                 " is too large to materialize (more than 256 MiB of elided constants)");
    elided_bytes_ += bytes;
    ++elided_count_;
  } else if (*count > static_cast<int64_t>(lex_.buffer().size() - at)) {
    return Err(at, "constant of shape ", shape.ToString(), " has ", *count,
               " elements, more than the text that follows could hold");
  }
  absl::StatusOr<Literal> created = Literal::Create(shape);
  if (!created.ok()) return Error(at, std::string(created.status().message()));
  Literal literal = *std::move(created);

  int64_t nest = 0, linear = 0;
  std::vector<int64_t> seen(rank, 0);
  auto index_str = [&](int64_t dim) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < dim; ++i) v.push_back(seen[i] - 1);
    return absl::StrCat("[", absl::StrJoin(v, ","), "]");
  };
  auto add_one = [&]() -> bool {
    if (rank > 0) {
      if (nest != rank) return Err(loc(), "expects nested array in rank ", rank, ", but sees ", nest);
      if (++seen[rank - 1] > dims[rank - 1])
        return Err(loc(), "expects ", dims[rank - 1], " elements on the minor-most dimension, but sees more");
    }
    return true;
  };
  auto set_int = [&](size_t vloc, int64_t v) -> bool {
    if (type == PrimitiveType::PRED) {
      literal.SetInt(linear++, v != 0);
      return true;
    }
    int bits = BitWidth(type);
    if (IsUnsignedIntegral(type)) {
      uint64_t max = bits >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1;
      if (static_cast<uint64_t>(v) > max)
        return Err(vloc, "value ", v, " is out of range for literal's primitive type ", TypeName(type),
                   " namely [0, ", max, "].");
      literal.SetUint(linear++, static_cast<uint64_t>(v));
      return true;
    }
    if (bits < 64) {
      int64_t max = (int64_t{1} << (bits - 1)) - 1, min = -max - 1;
      if (v < min || v > max)
        return Err(vloc, "value ", v, " is out of range for literal's primitive type ", TypeName(type),
                   " namely [", min, ", ", max, "].");
    }
    literal.SetInt(linear++, v);
    return true;
  };
  auto set_float = [&](size_t vloc, double v) -> bool {
    if (std::isnan(v)) {
      uint64_t bits;
      std::memcpy(&bits, &v, 8);
      bool negative = bits >> 63;
      uint64_t payload = bits & ((uint64_t{1} << 52) - 1);
      const uint64_t kQuiet = uint64_t{1} << 51;  // "nan" without a payload
      int ebits, mbits;
      if (NanPayloadFormat(type, &ebits, &mbits)) {
        if (payload == kQuiet) payload = uint64_t{1} << (mbits - 1);
        uint64_t largest = (uint64_t{1} << mbits) - 1;
        if (payload > largest)
          return Err(vloc, "tries to set NaN payload ", Hex(payload), " to a literal in shape ",
                     shape.ToString(false), " at linear index ", linear,
                     ", but the NaN payload is out of range (", Hex(largest), ")");
        uint64_t raw = (uint64_t{negative} << (ebits + mbits)) | (((uint64_t{1} << ebits) - 1) << mbits) | payload;
        literal.SetRawBits(linear++, raw);
        return true;
      }
      if (payload != kQuiet)
        return Err(vloc, "tries to set NaN payload ", Hex(payload), " to a literal in shape ",
                   shape.ToString(false), " at linear index ", linear, ", but ",
                   std::string(PrimitiveTypeName(type)), " does not support payloads");
      literal.SetDouble(linear++, v);
      return true;
    }
    // As XLA: a value that rounds to a finite value of the type is in range.
    double checked = v;
    double rounded = RoundToType(type, v);
    if (std::isfinite(rounded)) checked = rounded;
    if (std::isfinite(checked) && (checked > MaxFinite(type) || checked < LowestFinite(type)))
      return Err(vloc, "value ", FormatDouble(v), " is out of range for literal's primitive type ",
                 TypeName(type), " namely [", FormatDouble(LowestFinite(type)), ", ",
                 FormatDouble(MaxFinite(type)), "].");
    literal.SetDouble(linear++, v);
    return true;
  };

  do {
    switch (kind()) {
      case TokKind::kLbrace:
        if (++nest > rank)
          return Err(loc(), "expects nested array in rank ", rank, ", but sees larger");
        if (nest > 1 && ++seen[nest - 2] > dims[nest - 2])
          return Err(loc(), "expects ", dims[nest - 2], " elements in the ", index_str(nest - 2),
                     "th element, but sees more");
        lex_.Lex();
        break;
      case TokKind::kRbrace:
        if (nest == 0) return TokenError("unexpected '}' token");
        --nest;
        if (seen[nest] != dims[nest]) {
          if (nest == 0)
            return Err(loc(), "expects ", dims[0], " elements in the outermost dimension, but sees ", seen[0]);
          return Err(loc(), "expects ", dims[nest], " elements in the ", index_str(nest),
                     "th element, but sees ", seen[nest]);
        }
        seen[nest] = 0;
        lex_.Lex();
        break;
      case TokKind::kLparen: {
        if (!IsComplex(type))
          return TokenError("unexpected '(' in literal. Parens are only valid for complex literals");
        size_t vloc = loc();
        double re = 0, im = 0;
        if (!add_one() || !ParseComplex(&re, &im)) return false;
        if (type == PrimitiveType::C64) {
          double max = std::numeric_limits<float>::max();
          for (auto [name, part] : {std::pair<const char*, double>{"real", re}, {"imaginary", im}}) {
            if (std::isfinite(part) && (part > max || part < -max))
              return Err(vloc, name, " part ", FormatDouble(part),
                         " is out of range for literal's primitive type C64, namely [",
                         FormatDouble(-max), ", ", FormatDouble(max), "].");
          }
        }
        literal.SetComplex(linear++, {re, im});
        break;
      }
      case TokKind::kDots:
        if (nest != 1)
          return Err(loc(), "expects `...` at nest level 1, but sees it at nest level ", nest);
        if (rank > 0) seen[0] = dims[0];
        lex_.Lex();
        break;
      case TokKind::kComma:
        lex_.Lex();
        break;
      case TokKind::kw_true: case TokKind::kw_false: case TokKind::kInt: case TokKind::kDecimal:
      case TokKind::kw_inf: case TokKind::kNegInf: {
        size_t vloc = loc();
        if (!add_one()) return false;
        if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
          if (type != PrimitiveType::PRED)
            return Err(loc(), "expects a value of type ", std::string(PrimitiveTypeName(type)), ", but sees ",
                       Describe());
          literal.SetInt(linear++, kind() == TokKind::kw_true);
          lex_.Lex();
        } else if (IsIntegral(type) || type == PrimitiveType::PRED) {
          if (kind() != TokKind::kInt)
            return Err(loc(), "expects integer for primitive type: ", TypeName(type));
          int64_t v = tok().int_val;
          lex_.Lex();
          if (!set_int(vloc, v)) return false;
        } else if (IsFloatingPoint(type)) {
          double v = 0;
          if (!ParseDouble(&v)) return false;
          if (!set_float(vloc, v)) return false;
        } else {
          return Err(loc(), "expects a complex value (re, im) for primitive type ", TypeName(type));
        }
        break;
      }
      default:
        return Err(loc(), "unexpected token in a literal: ", Describe());
    }
  } while (nest > 0);
  *out = std::move(literal);
  return true;
}

// literal=f32[2] {1, 2} | (literal, literal): a literal that carries its own shape.
bool Parser::ParseLiteralWithShape(Literal* out) {
  DepthGuard depth(this);
  if (!depth.ok()) return false;
  if (EatIf(TokKind::kLparen)) {
    std::vector<Literal> elements;
    while (kind() != TokKind::kRparen) {
      elements.emplace_back();
      if (!ParseLiteralWithShape(&elements.back())) return false;
      if (kind() != TokKind::kRparen && !Expect(TokKind::kComma, "expects ',' to separate tuple elements"))
        return false;
    }
    lex_.Lex();
    *out = Literal::MakeTuple(std::move(elements));
    return true;
  }
  Shape shape;
  return ParseShape(&shape) && ParseLiteral(out, shape);
}

absl::StatusOr<Literal> Parser::ParseLiteralOnly(const Shape& shape) {
  lex_.Lex();
  Literal literal;
  if (!ParseLiteral(&literal, shape)) return status();
  if (kind() != TokKind::kEof) {
    TokenError("extra content after literal");
    return status();
  }
  return literal;
}

}  // namespace hloc::parser_internal
