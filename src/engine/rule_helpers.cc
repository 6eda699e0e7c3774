#include "engine/rule_helpers.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "ir/literal.h"

namespace hloc {
namespace rules {

namespace {

// Calls `pred(literal, i)` for every element of the effective constant; false when `inst` is
// not one or is empty of elements (an empty array is "all v" vacuously, but XLA's IsAll
// treats it as no match, and so do we).
template <typename Pred>
bool AllElements(const HloInstruction* inst, Pred pred) {
  const HloInstruction* c = EffectiveConstant(inst);
  if (c == nullptr || !c->attrs().literal) return false;
  const Literal& lit = *c->attrs().literal;
  if (!lit.shape().IsArray()) return false;
  int64_t n = lit.element_count();
  if (n == 0) return false;
  for (int64_t i = 0; i < n; ++i)
    if (!pred(lit, i)) return false;
  return true;
}

// The element as a number: the value for pred/int/float; complex only when the imaginary part
// is zero (otherwise NaN, which matches nothing).
double ElementValue(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.element_type();
  if (hloc::IsComplex(t)) {
    std::complex<double> v = lit.GetComplex(i);
    return v.imag() == 0 ? v.real() : std::numeric_limits<double>::quiet_NaN();
  }
  if (t == PrimitiveType::PRED) return lit.GetPred(i) ? 1 : 0;
  if (hloc::IsUnsignedIntegral(t)) return static_cast<double>(lit.GetUint(i));
  if (hloc::IsSignedIntegral(t)) return static_cast<double>(lit.GetInt(i));
  return lit.GetDouble(i);
}

bool ElementEqualsInt(const Literal& lit, int64_t i, int64_t v) {
  PrimitiveType t = lit.element_type();
  if (t == PrimitiveType::PRED) return lit.GetPred(i) == (v != 0);
  if (hloc::IsSignedIntegral(t)) return lit.GetInt(i) == v;
  if (hloc::IsUnsignedIntegral(t)) return v >= 0 && lit.GetUint(i) == static_cast<uint64_t>(v);
  return ElementValue(lit, i) == static_cast<double>(v);
}

bool ParsePrimitiveTypeArg(const char* text, PrimitiveType* out) {
  if (text == nullptr) return false;
  std::optional<PrimitiveType> t = ParsePrimitiveType(text);
  if (!t) return false;
  *out = *t;
  return true;
}

bool ParseDirection(const char* text, ComparisonDirection* out) {
  std::string s = absl::AsciiStrToUpper(text == nullptr ? "" : text);
  if (s == "EQ") *out = ComparisonDirection::kEq;
  else if (s == "NE") *out = ComparisonDirection::kNe;
  else if (s == "LT") *out = ComparisonDirection::kLt;
  else if (s == "LE") *out = ComparisonDirection::kLe;
  else if (s == "GT") *out = ComparisonDirection::kGt;
  else if (s == "GE") *out = ComparisonDirection::kGe;
  else return false;
  return true;
}

}  // namespace

const HloInstruction* EffectiveConstant(const HloInstruction* inst) {
  if (inst == nullptr) return nullptr;
  if (inst->opcode() == HloOpcode::kBroadcast && inst->operand_count() == 1) inst = inst->operand(0);
  return inst->opcode() == HloOpcode::kConstant ? inst : nullptr;
}

bool ParseDoubleArg(const char* text, double* out) {
  if (text == nullptr) return false;
  std::string s = absl::AsciiStrToLower(text);
  if (s == "inf" || s == "+inf") *out = std::numeric_limits<double>::infinity();
  else if (s == "-inf") *out = -std::numeric_limits<double>::infinity();
  else if (s == "nan") *out = std::numeric_limits<double>::quiet_NaN();
  else return absl::SimpleAtod(s, out);
  return true;
}

// --- Matchers -----------------------------------------------------------------------------------

bool IsZero(const HloInstruction* inst) { return IsScalarConstant(inst, 0); }
bool IsOne(const HloInstruction* inst) { return IsScalarConstant(inst, 1); }
bool IsMinusOne(const HloInstruction* inst) {
  const HloInstruction* c = EffectiveConstant(inst);
  if (c == nullptr || hloc::IsUnsignedIntegral(c->shape().element_type()) || c->shape().element_type() == PrimitiveType::PRED)
    return false;
  return IsScalarConstant(inst, -1);
}

bool IsConstant(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kConstant && inst->shape().IsArray();
}

bool IsSplatConstant(const HloInstruction* inst) {
  const HloInstruction* c = EffectiveConstant(inst);
  if (c == nullptr || !c->attrs().literal || !c->attrs().literal->shape().IsArray()) return false;
  const Literal& lit = *c->attrs().literal;
  return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetRawBits(i) == lit.GetRawBits(0); });
}

bool IsScalarConstant(const HloInstruction* inst, int64_t v) {
  return AllElements(inst, [v](const Literal& l, int64_t i) { return ElementEqualsInt(l, i, v); });
}

bool IsScalarConstantF(const HloInstruction* inst, const char* v) {
  double want;
  if (!ParseDoubleArg(v, &want)) return false;
  const HloInstruction* c = EffectiveConstant(inst);
  if (c == nullptr || !IsFloatingPoint(c->shape().element_type())) return false;
  return AllElements(inst, [want](const Literal& l, int64_t i) {
    double got = l.GetDouble(i);
    return std::isnan(want) ? std::isnan(got) : got == want;
  });
}

// --- Constraints --------------------------------------------------------------------------------

bool IsIntegral(RewriteContext&, const HloInstruction* x) { return hloc::IsIntegral(x->shape().element_type()); }
bool IsSignedIntegral(RewriteContext&, const HloInstruction* x) {
  return hloc::IsSignedIntegral(x->shape().element_type());
}
bool IsUnsignedIntegral(RewriteContext&, const HloInstruction* x) {
  return hloc::IsUnsignedIntegral(x->shape().element_type());
}
bool IsFloat(RewriteContext&, const HloInstruction* x) { return IsFloatingPoint(x->shape().element_type()); }
bool IsComplex(RewriteContext&, const HloInstruction* x) { return hloc::IsComplex(x->shape().element_type()); }
bool IsPred(RewriteContext&, const HloInstruction* x) { return x->shape().element_type() == PrimitiveType::PRED; }
bool IsIntegralOrPred(RewriteContext& ctx, const HloInstruction* x) { return IsIntegral(ctx, x) || IsPred(ctx, x); }

bool HasElementType(RewriteContext&, const HloInstruction* x, const char* type) {
  PrimitiveType t;
  return ParsePrimitiveTypeArg(type, &t) && x->shape().element_type() == t;
}

bool IsArray(RewriteContext&, const HloInstruction* x) { return x->shape().IsArray(); }

bool HasOneUse(RewriteContext&, const HloInstruction* x) { return x->user_count() == 1 && !x->IsRoot(); }

bool SameShape(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  return x->shape().EqualIgnoringLayout(y->shape());
}

bool SameDims(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  return x->shape().IsArray() && y->shape().IsArray() && x->shape().dimensions() == y->shape().dimensions();
}

bool SameElementType(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  return x->shape().element_type() == y->shape().element_type();
}

bool SameLayout(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  return x->shape() == y->shape();
}

bool IsEffectiveScalar(RewriteContext&, const HloInstruction* x) {
  if (!x->shape().IsArray()) return false;
  for (int64_t d : x->shape().dimensions())
    if (d != 1) return false;
  return true;
}

bool IsScalar(RewriteContext&, const HloInstruction* x) { return x->shape().IsArray() && x->shape().rank() == 0; }

bool HasRank(RewriteContext&, const HloInstruction* x, int64_t rank) {
  return x->shape().IsArray() && x->shape().rank() == rank;
}

bool IsStaticShape(RewriteContext&, const HloInstruction* x) { return x->shape().is_static(); }

bool ElementCountAtMost(RewriteContext&, const HloInstruction* x, int64_t n) {
  if (!x->shape().IsArray()) return false;
  absl::StatusOr<int64_t> count = x->shape().ElementCount();
  return count.ok() && *count <= n;
}

bool IsIdentityPermutation(RewriteContext&, const HloInstruction* t) {
  const std::vector<int64_t>& dims = t->attrs().dimensions;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

bool ComparisonIs(RewriteContext&, const HloInstruction* c, const char* direction) {
  ComparisonDirection want;
  return c->opcode() == HloOpcode::kCompare && ParseDirection(direction, &want) && c->attrs().comparison_direction &&
         *c->attrs().comparison_direction == want;
}

bool SameAttrs(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  const InstructionAttributes& a = x->attrs();
  const InstructionAttributes& b = y->attrs();
  bool same_literal = a.literal.has_value() == b.literal.has_value() && (!a.literal || *a.literal == *b.literal);
  return x->opcode() == y->opcode() && x->called_computations() == y->called_computations() &&
         a.dimensions == b.dimensions && a.slice == b.slice && a.dynamic_slice_sizes == b.dynamic_slice_sizes &&
         a.window == b.window && a.convolution_dimension_numbers == b.convolution_dimension_numbers &&
         a.feature_group_count == b.feature_group_count && a.batch_group_count == b.batch_group_count &&
         a.dot_dimension_numbers == b.dot_dimension_numbers &&
         a.ragged_dot_dimension_numbers == b.ragged_dot_dimension_numbers &&
         a.gather_dimension_numbers == b.gather_dimension_numbers &&
         a.scatter_dimension_numbers == b.scatter_dimension_numbers &&
         a.indices_are_sorted == b.indices_are_sorted && a.unique_indices == b.unique_indices &&
         a.padding_config == b.padding_config && a.comparison_direction == b.comparison_direction &&
         a.comparison_type == b.comparison_type && a.precision_config == b.precision_config &&
         a.tuple_index == b.tuple_index && same_literal && a.iota_dimension == b.iota_dimension &&
         a.exponent_bits == b.exponent_bits && a.mantissa_bits == b.mantissa_bits && a.epsilon == b.epsilon &&
         a.feature_index == b.feature_index && a.distribution == b.distribution &&
         a.rng_algorithm == b.rng_algorithm && a.fft_type == b.fft_type && a.fft_length == b.fft_length &&
         a.left_side == b.left_side && a.lower == b.lower && a.unit_diagonal == b.unit_diagonal &&
         a.transpose_a == b.transpose_a && a.k == b.k && a.largest == b.largest && a.is_stable == b.is_stable &&
         a.fusion_kind == b.fusion_kind && a.custom_call_target == b.custom_call_target &&
         a.backend_config == b.backend_config && a.opaque == b.opaque && a.replica_groups == b.replica_groups &&
         a.channel_id == b.channel_id && a.raw_attributes == b.raw_attributes;
}

// --- Attribute functions ------------------------------------------------------------------------

bool ShapeOf(RewriteContext&, NewInstruction& out, const HloInstruction* x) {
  out.shape = x->shape();
  return true;
}

bool ShapeOfWithElementType(RewriteContext&, NewInstruction& out, const HloInstruction* x, const char* type) {
  PrimitiveType t;
  if (!x->shape().IsArray() || !ParsePrimitiveTypeArg(type, &t) || !IsArrayType(t)) return false;
  Shape s = x->shape();
  s.set_element_type(t);
  out.shape = std::move(s);
  return true;
}

bool ShapeOfWithTypeOf(RewriteContext&, NewInstruction& out, const HloInstruction* dims, const HloInstruction* type) {
  if (!dims->shape().IsArray() || !type->shape().IsArray()) return false;
  Shape s = dims->shape();
  s.set_element_type(type->shape().element_type());
  out.shape = std::move(s);
  return true;
}

bool CopyAttrs(RewriteContext&, NewInstruction& out, const HloInstruction* x) {
  out.attrs = x->attrs();
  out.attrs.metadata = OpMetadata();
  out.called_computations = x->called_computations();
  return true;
}

bool DimensionsOf(RewriteContext&, NewInstruction& out, const HloInstruction* x) {
  out.attrs.dimensions = x->attrs().dimensions;
  return true;
}

bool Dimensions(RewriteContext&, NewInstruction& out, const char* list) {
  std::vector<int64_t> dims;
  for (absl::string_view part : absl::StrSplit(list == nullptr ? "" : list, ',', absl::SkipWhitespace())) {
    int64_t d;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &d)) return false;
    dims.push_back(d);
  }
  out.attrs.dimensions = std::move(dims);
  return true;
}

bool ComposePerm(RewriteContext&, NewInstruction& out, const HloInstruction* t1, const HloInstruction* t2) {
  const std::vector<int64_t>& p1 = t1->attrs().dimensions;
  const std::vector<int64_t>& p2 = t2->attrs().dimensions;
  if (p1.size() != p2.size()) return false;
  std::vector<int64_t> composed(p2.size());
  for (size_t i = 0; i < p2.size(); ++i) {
    if (p2[i] < 0 || p2[i] >= static_cast<int64_t>(p1.size())) return false;
    composed[i] = p1[p2[i]];
  }
  out.attrs.dimensions = std::move(composed);
  return true;
}

bool Direction(RewriteContext&, NewInstruction& out, const char* dir) {
  ComparisonDirection d;
  if (!ParseDirection(dir, &d)) return false;
  out.attrs.comparison_direction = d;
  return true;
}

bool TupleIndex(RewriteContext&, NewInstruction& out, int64_t i) {
  if (i < 0) return false;
  out.attrs.tuple_index = i;
  return true;
}

// --- Builders -----------------------------------------------------------------------------------

HloInstruction* ScalarLike(RewriteContext& ctx, const HloInstruction* like, int64_t v) {
  return ctx.ScalarLike(like, static_cast<double>(v));
}

HloInstruction* ScalarLikeF(RewriteContext& ctx, const HloInstruction* like, const char* v) {
  double value;
  if (!ParseDoubleArg(v, &value) || !like->shape().IsArray()) return nullptr;
  PrimitiveType t = like->shape().element_type();
  if (!IsFloatingPoint(t) && !hloc::IsComplex(t)) return nullptr;  // no silent truncation of 0.5 to 0
  return ctx.ScalarLike(like, value);
}

HloInstruction* ZeroLike(RewriteContext& ctx, const HloInstruction* like) { return ctx.ScalarLike(like, 0); }
HloInstruction* OneLike(RewriteContext& ctx, const HloInstruction* like) { return ctx.ScalarLike(like, 1); }

HloInstruction* BroadcastTo(RewriteContext& ctx, HloInstruction* x, const HloInstruction* like) {
  const Shape& target = like->shape();
  if (x->shape().EqualIgnoringLayout(target)) return x;
  if (!target.IsArray() || !x->shape().IsArray() || x->shape().rank() != 0 ||
      x->shape().element_type() != target.element_type())
    return nullptr;
  NewInstruction b;
  b.shape = target;
  return ctx.Create(HloOpcode::kBroadcast, {x}, std::move(b));
}

}  // namespace rules
}  // namespace hloc
