// The algebraic simplifier's own rule vocabulary (see algsimp_helpers.h and
// rules/simplify/AlgsimpHelpers.td). Everything here refuses (false / nullptr) rather than
// guess: a rule that cannot prove its rewrite exact leaves the code alone.
#include "passes/simplify/algsimp_helpers.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "engine/rule_helpers.h"
#include "ir/computation.h"
#include "ir/literal.h"

namespace hloc {
namespace algsimp {

namespace {

// Float formats as (digits incl. the implicit bit, max exponent, min normal exponent, has inf).
struct FloatFormat {
  int digits, max_exp, min_exp;
  bool has_inf;
};

std::optional<FloatFormat> FormatOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return FloatFormat{11, 15, -14, true};
    case PrimitiveType::BF16: return FloatFormat{8, 127, -126, true};
    case PrimitiveType::F32: return FloatFormat{24, 127, -126, true};
    case PrimitiveType::F64: return FloatFormat{53, 1023, -1022, true};
    case PrimitiveType::F8E5M2: return FloatFormat{3, 15, -14, true};
    case PrimitiveType::F8E4M3: return FloatFormat{4, 7, -6, true};
    case PrimitiveType::F8E3M4: return FloatFormat{5, 3, -2, true};
    case PrimitiveType::F8E4M3FN: return FloatFormat{4, 8, -6, false};
    case PrimitiveType::F8E4M3FNUZ: return FloatFormat{4, 7, -7, false};
    case PrimitiveType::F8E5M2FNUZ: return FloatFormat{3, 15, -15, false};
    case PrimitiveType::F8E4M3B11FNUZ: return FloatFormat{4, 4, -10, false};
    case PrimitiveType::F4E2M1FN: return FloatFormat{2, 2, 0, false};
    default: return std::nullopt;  // f8e8m0fnu and others: no claim
  }
}

// Value bits of an integer type (the sign bit not counted).
int ValueBits(PrimitiveType t) { return IsSignedIntegral(t) ? BitWidth(t) - 1 : BitWidth(t); }

const Literal* LiteralOf(const HloInstruction* inst) {
  const HloInstruction* c = rules::EffectiveConstant(inst);
  if (c == nullptr || !c->attrs().literal || !c->attrs().literal->shape().IsArray()) return nullptr;
  return &*c->attrs().literal;
}

// Every element satisfies pred (false for no elements, as XLA's IsAll).
template <typename Pred>
bool AllElements(const HloInstruction* inst, Pred pred) {
  const Literal* lit = LiteralOf(inst);
  if (lit == nullptr || lit->element_count() == 0) return false;
  for (int64_t i = 0; i < lit->element_count(); ++i)
    if (!pred(*lit, i)) return false;
  return true;
}

uint64_t AllOnesMask(PrimitiveType t) {
  int bits = BitWidth(t);
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

// Extreme value test: highest=false means the least value of the type.
bool IsExtreme(const HloInstruction* inst, bool highest) {
  const Literal* lit = LiteralOf(inst);
  if (lit == nullptr) return false;
  PrimitiveType t = lit->element_type();
  if (t == PrimitiveType::PRED) {
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetPred(i) == highest; });
  }
  if (IsSignedIntegral(t)) {
    int bits = BitWidth(t);
    int64_t max = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    int64_t want = highest ? max : -max - 1;
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetInt(i) == want; });
  }
  if (IsUnsignedIntegral(t)) {
    uint64_t want = highest ? AllOnesMask(t) : 0;
    return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetUint(i) == want; });
  }
  std::optional<FloatFormat> f = FormatOf(t);
  if (!f || !f->has_inf) return false;  // the extreme finite value is no identity for NaN-free types we skip
  double want = highest ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  return AllElements(inst, [&](const Literal& l, int64_t i) { return l.GetDouble(i) == want; });
}

int64_t ElementCountOrMinusOne(const Shape& s) {
  if (!s.IsArray()) return -1;
  absl::StatusOr<int64_t> n = s.ElementCount();
  return n.ok() ? *n : -1;
}

bool IsScalarIntConstant(const HloInstruction* inst, int64_t* value) {
  if (inst->opcode() != HloOpcode::kConstant || !inst->attrs().literal) return false;
  const Literal& lit = *inst->attrs().literal;
  if (!lit.shape().IsArray() || lit.shape().rank() != 0 || !IsIntegral(lit.element_type())) return false;
  if (IsUnsignedIntegral(lit.element_type())) {
    uint64_t u = lit.GetUint(0);
    *value = u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                           : static_cast<int64_t>(u);
  } else {
    *value = lit.GetInt(0);
  }
  return true;
}

bool UnitStrides(const HloInstruction* s) {
  for (const SliceDimension& d : s->attrs().slice)
    if (d.stride != 1) return false;
  return true;
}

}  // namespace

bool TypeCastPreservesValues(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (!IsArrayType(from) || !IsArrayType(to)) return false;
  if (from == PrimitiveType::PRED) return true;  // 0 and 1 fit every type
  if (to == PrimitiveType::PRED) return false;
  if (IsComplex(to)) {
    PrimitiveType to_component = ComplexComponentType(to);
    PrimitiveType from_component = IsComplex(from) ? ComplexComponentType(from) : from;
    return TypeCastPreservesValues(from_component, to_component);
  }
  if (IsComplex(from)) return false;  // drops the imaginary part
  if (IsIntegral(from) && IsIntegral(to)) {
    if (IsSignedIntegral(from) && IsUnsignedIntegral(to)) return false;
    return ValueBits(to) >= ValueBits(from);
  }
  if (IsIntegral(from) && IsFloatingPoint(to)) {
    std::optional<FloatFormat> f = FormatOf(to);
    // Every integer of `from` must be exactly representable: enough digits, and in range.
    return f && f->digits >= ValueBits(from) && f->max_exp >= ValueBits(from);
  }
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    std::optional<FloatFormat> a = FormatOf(from), b = FormatOf(to);
    if (!a || !b) return false;
    // Normal range, precision and the smallest subnormal must all fit; infinities need a home.
    return b->digits >= a->digits && b->max_exp >= a->max_exp && b->min_exp <= a->min_exp &&
           (b->min_exp - b->digits) <= (a->min_exp - a->digits) && (b->has_inf || !a->has_inf);
  }
  return false;  // float -> integer rounds
}

// --- Matchers --------------------------------------------------------------------------------

bool IsAllOnesBits(const HloInstruction* inst) {
  const Literal* lit = LiteralOf(inst);
  if (lit == nullptr) return false;
  PrimitiveType t = lit->element_type();
  if (t == PrimitiveType::PRED) return AllElements(inst, [](const Literal& l, int64_t i) { return l.GetPred(i); });
  if (!IsIntegral(t)) return false;
  uint64_t mask = AllOnesMask(t);
  return AllElements(inst, [mask](const Literal& l, int64_t i) { return (l.GetRawBits(i) & mask) == mask; });
}

bool IsLowestValue(const HloInstruction* inst) { return IsExtreme(inst, /*highest=*/false); }
bool IsHighestValue(const HloInstruction* inst) { return IsExtreme(inst, /*highest=*/true); }

bool IsDynamicSliceWithConstantIndices(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kDynamicSlice || inst->operand_count() < 1) return false;
  const Shape& operand = inst->operand(0)->shape();
  if (!operand.IsArray() || !operand.is_static() || inst->operand_count() != 1 + operand.rank()) return false;
  for (int64_t i = 1; i < inst->operand_count(); ++i) {
    int64_t v;
    if (!IsScalarIntConstant(inst->operand(i), &v)) return false;
  }
  return true;
}

bool IsConcatenate(const HloInstruction* inst) { return inst->opcode() == HloOpcode::kConcatenate; }

bool IsFullDynamicSlice(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kDynamicSlice && inst->operand_count() >= 1 &&
         inst->shape().EqualIgnoringLayout(inst->operand(0)->shape()) && inst->shape().is_static();
}

bool IsFullDynamicUpdateSlice(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kDynamicUpdateSlice && inst->operand_count() >= 2 &&
         inst->operand(1)->shape().EqualIgnoringLayout(inst->shape()) && inst->shape().is_static();
}

// --- Constraints ------------------------------------------------------------------------------

bool IsEffectiveConstant(RewriteContext&, const HloInstruction* x) { return LiteralOf(x) != nullptr; }

bool IsKnownNonNegative(RewriteContext& ctx, const HloInstruction* x) {
  PrimitiveType t = x->shape().element_type();
  if (!x->shape().IsArray() || IsComplex(t)) return false;
  if (IsUnsignedIntegral(t) || t == PrimitiveType::PRED) return true;
  switch (x->opcode()) {
    case HloOpcode::kExp:
      return IsFloatingPoint(t);  // exp(x) >= +0 or NaN
    case HloOpcode::kAbs:
      // abs of the minimum signed integer stays negative.
      return IsFloatingPoint(t);
    case HloOpcode::kMultiply:
      // x*x is >= +0 or NaN for floats; integers may wrap.
      return IsFloatingPoint(t) && x->operand(0) == x->operand(1);
    case HloOpcode::kConstant:
    case HloOpcode::kBroadcast: {
      if (!IsFloatingPoint(t) && !IsSignedIntegral(t)) return false;
      // -0.0 would become +0.0 under abs: only strictly positive zeros qualify.
      return AllElements(x, [](const Literal& l, int64_t i) {
        if (IsSignedIntegral(l.element_type())) return l.GetInt(i) >= 0;
        double v = l.GetDouble(i);
        return v > 0 || (v == 0 && !std::signbit(v));
      });
    }
    default:
      (void)ctx;
      return false;
  }
}

bool ConvertPreservesValues(RewriteContext&, const HloInstruction* x, const HloInstruction* y) {
  return TypeCastPreservesValues(x->shape().element_type(), y->shape().element_type());
}

bool IsIdentityBroadcast(RewriteContext&, const HloInstruction* b) {
  if (b->opcode() != HloOpcode::kBroadcast || b->operand_count() != 1) return false;
  if (!b->shape().EqualIgnoringLayout(b->operand(0)->shape())) return false;
  const std::vector<int64_t>& dims = b->attrs().dimensions;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return static_cast<int64_t>(dims.size()) == b->shape().rank();
}

bool IsNoopReverse(RewriteContext&, const HloInstruction* r) {
  if (r->opcode() != HloOpcode::kReverse || !r->shape().IsArray()) return false;
  for (int64_t d : r->attrs().dimensions)
    if (d < 0 || d >= r->shape().rank() || r->shape().dimensions(d) > 1) return false;
  return true;
}

bool IsNoopPad(RewriteContext&, const HloInstruction* p) {
  if (p->opcode() != HloOpcode::kPad || !p->attrs().padding_config) return false;
  for (const PaddingDimension& d : p->attrs().padding_config->dimensions)
    if (d.edge_padding_low != 0 || d.edge_padding_high != 0 || d.interior_padding != 0) return false;
  return true;
}

bool IsNoopReducePrecision(RewriteContext&, const HloInstruction* rp) {
  if (rp->opcode() != HloOpcode::kReducePrecision) return false;
  int exponent = 0, mantissa = 0;
  switch (rp->shape().element_type()) {
    case PrimitiveType::F16: exponent = 5; mantissa = 10; break;
    case PrimitiveType::BF16: exponent = 8; mantissa = 7; break;
    case PrimitiveType::F32: exponent = 8; mantissa = 23; break;
    case PrimitiveType::F64: exponent = 11; mantissa = 52; break;
    default: return false;
  }
  return rp->attrs().exponent_bits >= exponent && rp->attrs().mantissa_bits >= mantissa;
}

bool IsReflexiveCompare(RewriteContext&, const HloInstruction* c) {
  if (c->opcode() != HloOpcode::kCompare || !c->attrs().comparison_direction) return false;
  ComparisonDirection d = *c->attrs().comparison_direction;
  return d == ComparisonDirection::kEq || d == ComparisonDirection::kLe || d == ComparisonDirection::kGe;
}

bool IsIrreflexiveCompare(RewriteContext&, const HloInstruction* c) {
  if (c->opcode() != HloOpcode::kCompare || !c->attrs().comparison_direction) return false;
  ComparisonDirection d = *c->attrs().comparison_direction;
  return d == ComparisonDirection::kNe || d == ComparisonDirection::kLt || d == ComparisonDirection::kGt;
}

namespace {
// Whether `r` (a reduce or reduce-window of one operand) folds with one add/mul/max/min/and/
// or/xor of its two parameters and has that op's identity as init.
bool ReducerInitIsIdentity(const HloInstruction* r) {
  if (r->operand_count() != 2) return false;
  const HloComputation* f = r->to_apply();
  if (f == nullptr || f->num_parameters() != 2 || f->root_instruction() == nullptr) return false;
  const HloInstruction* root = f->root_instruction();
  if (root->operand_count() != 2) return false;
  const HloInstruction* p0 = f->parameter_instruction(0);
  const HloInstruction* p1 = f->parameter_instruction(1);
  bool params = (root->operand(0) == p0 && root->operand(1) == p1) || (root->operand(0) == p1 && root->operand(1) == p0);
  if (!params) return false;
  const HloInstruction* init = r->operand(1);
  PrimitiveType t = init->shape().element_type();
  if (init->shape().rank() != 0 || t != r->operand(0)->shape().element_type()) return false;
  switch (root->opcode()) {
    case HloOpcode::kAdd: return rules::IsZero(init);  // XLA treats +0 as add's identity (-0 + 0 = +0)
    case HloOpcode::kMultiply: return rules::IsOne(init);
    case HloOpcode::kMaximum: return IsLowestValue(init);
    case HloOpcode::kMinimum: return IsHighestValue(init);
    case HloOpcode::kAnd: return IsAllOnesBits(init);
    case HloOpcode::kOr:
    case HloOpcode::kXor: return (IsIntegral(t) || t == PrimitiveType::PRED) && rules::IsZero(init);
    default: return false;
  }
}
}  // namespace

bool ReduceInitIsIdentity(RewriteContext&, const HloInstruction* r) {
  return r->opcode() == HloOpcode::kReduce && ReducerInitIsIdentity(r);
}

bool ReducesNoDimensions(RewriteContext&, const HloInstruction* r) {
  return r->opcode() == HloOpcode::kReduce && r->attrs().dimensions.empty();
}

bool ReducesOnlySizeOneDimensions(RewriteContext&, const HloInstruction* r) {
  if (r->opcode() != HloOpcode::kReduce || r->attrs().dimensions.empty() || r->operand_count() < 1) return false;
  const Shape& in = r->operand(0)->shape();
  for (int64_t d : r->attrs().dimensions)
    if (d < 0 || d >= in.rank() || in.dimensions(d) != 1) return false;
  return true;
}

bool IsEmptyArray(RewriteContext&, const HloInstruction* x) { return ElementCountOrMinusOne(x->shape()) == 0; }

bool DotContractsOnlySizeOne(RewriteContext&, const HloInstruction* d) {
  if (d->opcode() != HloOpcode::kDot || d->operand_count() != 2 || !d->attrs().dot_dimension_numbers) return false;
  const Shape& lhs = d->operand(0)->shape();
  if (!lhs.is_static() || !d->operand(1)->shape().is_static()) return false;
  for (int64_t c : d->attrs().dot_dimension_numbers->lhs_contracting_dimensions)
    if (c < 0 || c >= lhs.rank() || lhs.dimensions(c) != 1) return false;
  return true;
}

bool DotContractsEmpty(RewriteContext&, const HloInstruction* d) {
  if (d->opcode() != HloOpcode::kDot || d->operand_count() != 2 || !d->attrs().dot_dimension_numbers) return false;
  const Shape& lhs = d->operand(0)->shape();
  for (int64_t c : d->attrs().dot_dimension_numbers->lhs_contracting_dimensions)
    if (c >= 0 && c < lhs.rank() && lhs.dimensions(c) == 0) return true;
  return false;
}

bool AreAdjacentSlices(RewriteContext&, const HloInstruction* c, const HloInstruction* s1, const HloInstruction* s2) {
  if (c->opcode() != HloOpcode::kConcatenate || c->attrs().dimensions.size() != 1) return false;
  if (s1->opcode() != HloOpcode::kSlice || s2->opcode() != HloOpcode::kSlice) return false;
  if (s1->operand(0) != s2->operand(0) || !UnitStrides(s1) || !UnitStrides(s2)) return false;
  const auto& a = s1->attrs().slice;
  const auto& b = s2->attrs().slice;
  int64_t k = c->attrs().dimensions[0];
  if (a.size() != b.size() || k < 0 || k >= static_cast<int64_t>(a.size())) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (static_cast<int64_t>(i) == k) {
      if (a[i].limit != b[i].start) return false;
    } else if (!(a[i] == b[i])) {
      return false;
    }
  }
  return true;
}

bool HasEmptyOperand(RewriteContext&, const HloInstruction* c) {
  for (const HloInstruction* op : c->operands())
    if (ElementCountOrMinusOne(op->shape()) == 0) return true;
  return false;
}

// --- Attribute functions ----------------------------------------------------------------------

bool ComposeBroadcastDims(RewriteContext&, NewInstruction& out, const HloInstruction* b1, const HloInstruction* b2) {
  const std::vector<int64_t>& d1 = b1->attrs().dimensions;
  const std::vector<int64_t>& d2 = b2->attrs().dimensions;
  std::vector<int64_t> dims;
  for (int64_t d : d1) {
    if (d < 0 || d >= static_cast<int64_t>(d2.size())) return false;
    dims.push_back(d2[d]);
  }
  out.attrs.dimensions = std::move(dims);
  out.shape = b2->shape();
  return true;
}

bool ComposeSlices(RewriteContext&, NewInstruction& out, const HloInstruction* s1, const HloInstruction* s2) {
  const auto& a = s1->attrs().slice;
  const auto& b = s2->attrs().slice;
  if (a.size() != b.size() || static_cast<int64_t>(b.size()) != s2->shape().rank()) return false;
  std::vector<SliceDimension> composed(a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].stride < 1 || b[i].stride < 1) return false;
    int64_t n = s2->shape().dimensions(static_cast<int64_t>(i));
    SliceDimension& c = composed[i];
    c.start = a[i].start + b[i].start * a[i].stride;
    c.stride = a[i].stride * b[i].stride;
    // The smallest limit that yields exactly n elements.
    c.limit = n == 0 ? c.start : c.start + (n - 1) * c.stride + 1;
  }
  out.attrs.slice = std::move(composed);
  return true;
}

bool MergeAdjacentSlices(RewriteContext&, NewInstruction& out, const HloInstruction* c, const HloInstruction* s1,
                         const HloInstruction* s2) {
  if (c->attrs().dimensions.size() != 1) return false;
  int64_t k = c->attrs().dimensions[0];
  std::vector<SliceDimension> merged = s1->attrs().slice;
  if (k < 0 || k >= static_cast<int64_t>(merged.size()) || s2->attrs().slice.size() != merged.size()) return false;
  merged[k].limit = s2->attrs().slice[k].limit;
  out.attrs.slice = std::move(merged);
  return true;
}

bool InverseDirectionOf(RewriteContext&, NewInstruction& out, const HloInstruction* c) {
  if (c->opcode() != HloOpcode::kCompare || !c->attrs().comparison_direction) return false;
  ComparisonDirection d = *c->attrs().comparison_direction;
  ComparisonDirection inv;
  switch (d) {
    case ComparisonDirection::kEq: inv = ComparisonDirection::kNe; break;
    case ComparisonDirection::kNe: inv = ComparisonDirection::kEq; break;
    case ComparisonDirection::kLt: inv = ComparisonDirection::kGe; break;
    case ComparisonDirection::kGe: inv = ComparisonDirection::kLt; break;
    case ComparisonDirection::kGt: inv = ComparisonDirection::kLe; break;
    case ComparisonDirection::kLe: inv = ComparisonDirection::kGt; break;
    default: return false;
  }
  out.attrs.comparison_direction = inv;
  out.attrs.comparison_type = c->attrs().comparison_type;
  return true;
}

// --- Builders ---------------------------------------------------------------------------------

HloInstruction* SliceOfConcatOperand(RewriteContext& ctx, const HloInstruction* s) {
  if (s->opcode() != HloOpcode::kSlice || s->operand(0)->opcode() != HloOpcode::kConcatenate) return nullptr;
  const HloInstruction* concat = s->operand(0);
  if (concat->attrs().dimensions.size() != 1) return nullptr;
  int64_t k = concat->attrs().dimensions[0];
  const auto& sl = s->attrs().slice;
  if (k < 0 || k >= static_cast<int64_t>(sl.size()) || k >= s->shape().rank()) return nullptr;
  int64_t n = s->shape().dimensions(k);
  if (n == 0 || sl[k].stride < 1) return nullptr;
  int64_t first = sl[k].start, last = sl[k].start + (n - 1) * sl[k].stride;
  int64_t offset = 0;
  for (HloInstruction* op : concat->operands()) {
    int64_t size = op->shape().dimensions(k);
    if (first >= offset && last < offset + size) {
      std::vector<SliceDimension> inner = sl;
      inner[k].start -= offset;
      inner[k].limit = inner[k].start + (n - 1) * inner[k].stride + 1;
      if (s->shape().EqualIgnoringLayout(op->shape())) return op;  // the whole operand
      NewInstruction spec;
      spec.attrs.slice = std::move(inner);
      return ctx.Create(HloOpcode::kSlice, {op}, std::move(spec));
    }
    offset += size;
  }
  return nullptr;  // straddles operands
}

HloInstruction* BroadcastOfSlice(RewriteContext& ctx, const HloInstruction* s) {
  if (s->opcode() != HloOpcode::kSlice || s->operand(0)->opcode() != HloOpcode::kBroadcast) return nullptr;
  const HloInstruction* b = s->operand(0);
  HloInstruction* x = b->operand(0);
  const std::vector<int64_t>& dims = b->attrs().dimensions;
  const auto& sl = s->attrs().slice;
  HloInstruction* sliced = x;
  if (x->shape().rank() > 0) {
    std::vector<SliceDimension> inner(x->shape().rank());
    for (int64_t i = 0; i < x->shape().rank(); ++i) {
      if (dims[i] < 0 || dims[i] >= static_cast<int64_t>(sl.size())) return nullptr;
      inner[i] = sl[dims[i]];
    }
    NewInstruction spec;
    spec.attrs.slice = std::move(inner);
    sliced = ctx.Create(HloOpcode::kSlice, {x}, std::move(spec));
    if (sliced == nullptr) return nullptr;
  }
  NewInstruction bspec;
  bspec.shape = s->shape();
  bspec.attrs.dimensions = dims;
  return ctx.Create(HloOpcode::kBroadcast, {sliced}, std::move(bspec));
}

namespace {

// One dot operand without its contracting dimensions (all of size 1), converted to the dot's
// element type and broadcast into the dot's output; `pos` maps each kept dimension (in order)
// to its output dimension.
HloInstruction* DotOperandBroadcast(RewriteContext& ctx, HloInstruction* x, const std::vector<int64_t>& contracting,
                                    const std::vector<int64_t>& batch, int64_t free_base, const Shape& out) {
  const Shape& s = x->shape();
  std::vector<int64_t> kept_dims, pos;
  int64_t free_index = 0;
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (std::find(contracting.begin(), contracting.end(), i) != contracting.end()) continue;
    kept_dims.push_back(s.dimensions(i));
    auto it = std::find(batch.begin(), batch.end(), i);
    pos.push_back(it != batch.end() ? it - batch.begin() : free_base + free_index++);
  }
  HloInstruction* v = x;
  if (static_cast<int64_t>(kept_dims.size()) != s.rank()) {
    NewInstruction r;
    r.shape = Shape(s.element_type(), kept_dims);
    v = ctx.Create(HloOpcode::kReshape, {v}, std::move(r));
    if (v == nullptr) return nullptr;
  }
  if (v->shape().element_type() != out.element_type()) {
    NewInstruction c;
    c.shape = Shape(out.element_type(), kept_dims);
    v = ctx.Create(HloOpcode::kConvert, {v}, std::move(c));
    if (v == nullptr) return nullptr;
  }
  NewInstruction b;
  b.shape = Shape(out.element_type(), out.dimensions());
  b.attrs.dimensions = std::move(pos);
  return ctx.Create(HloOpcode::kBroadcast, {v}, std::move(b));
}

int64_t CountFree(int64_t rank, const std::vector<int64_t>& contracting, const std::vector<int64_t>& batch) {
  return rank - static_cast<int64_t>(contracting.size()) - static_cast<int64_t>(batch.size());
}

}  // namespace

HloInstruction* DotAsMultiply(RewriteContext& ctx, const HloInstruction* d) {
  if (!DotContractsOnlySizeOne(ctx, d)) return nullptr;
  const DotDimensionNumbers& dn = *d->attrs().dot_dimension_numbers;
  const Shape& out = d->shape();
  if (!out.IsArray() || IsComplex(out.element_type()) != IsComplex(d->operand(0)->shape().element_type())) return nullptr;
  int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  int64_t lhs_free = CountFree(d->operand(0)->shape().rank(), dn.lhs_contracting_dimensions, dn.lhs_batch_dimensions);
  HloInstruction* a = DotOperandBroadcast(ctx, d->operand(0), dn.lhs_contracting_dimensions, dn.lhs_batch_dimensions,
                                          nb, out);
  if (a == nullptr) return nullptr;
  HloInstruction* b = DotOperandBroadcast(ctx, d->operand(1), dn.rhs_contracting_dimensions, dn.rhs_batch_dimensions,
                                          nb + lhs_free, out);
  if (b == nullptr) return nullptr;
  return ctx.Create(HloOpcode::kMultiply, {a, b});
}

HloInstruction* DotWithSwappedOperands(RewriteContext& ctx, const HloInstruction* t) {
  const HloInstruction* d = t->operand(0);
  if (d->opcode() != HloOpcode::kDot || !d->attrs().dot_dimension_numbers || !t->shape().IsArray()) return nullptr;
  const DotDimensionNumbers& dn = *d->attrs().dot_dimension_numbers;
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  const int64_t lhs_free = CountFree(d->operand(0)->shape().rank(), dn.lhs_contracting_dimensions, dn.lhs_batch_dimensions);
  const int64_t rhs_free = CountFree(d->operand(1)->shape().rank(), dn.rhs_contracting_dimensions, dn.rhs_batch_dimensions);
  if (lhs_free == 0 || rhs_free == 0) return nullptr;
  // The dot's result is [batch..., a's free..., b's free...]; the transpose must give
  // [batch..., b's free..., a's free...].
  std::vector<int64_t> want;
  for (int64_t i = 0; i < nb; ++i) want.push_back(i);
  for (int64_t i = 0; i < rhs_free; ++i) want.push_back(nb + lhs_free + i);
  for (int64_t i = 0; i < lhs_free; ++i) want.push_back(nb + i);
  if (t->attrs().dimensions != want) return nullptr;
  NewInstruction spec;
  spec.shape = t->shape();
  spec.attrs.dot_dimension_numbers = DotDimensionNumbers{dn.rhs_batch_dimensions, dn.lhs_batch_dimensions,
                                                         dn.rhs_contracting_dimensions, dn.lhs_contracting_dimensions};
  spec.attrs.precision_config = d->attrs().precision_config;
  std::vector<Precision>& prec = spec.attrs.precision_config.operand_precision;
  if (prec.size() == 2) std::swap(prec[0], prec[1]);
  return ctx.Create(HloOpcode::kDot, {d->operand(1), d->operand(0)}, std::move(spec));
}

HloInstruction* DynamicSliceAsSlice(RewriteContext& ctx, const HloInstruction* d) {
  if (!IsDynamicSliceWithConstantIndices(d)) return nullptr;
  const Shape& in = d->operand(0)->shape();
  const std::vector<int64_t>& sizes = d->attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != in.rank()) return nullptr;
  std::vector<SliceDimension> sl(in.rank());
  for (int64_t i = 0; i < in.rank(); ++i) {
    int64_t idx;
    IsScalarIntConstant(d->operand(1 + i), &idx);
    // XLA clamps start indices so the slice stays in bounds.
    int64_t start = std::clamp<int64_t>(idx, 0, std::max<int64_t>(0, in.dimensions(i) - sizes[i]));
    sl[i] = SliceDimension{start, start + sizes[i], 1};
  }
  NewInstruction spec;
  spec.attrs.slice = std::move(sl);
  return ctx.Create(HloOpcode::kSlice, {d->operand(0)}, std::move(spec));
}

HloInstruction* ConcatWithoutEmpty(RewriteContext& ctx, const HloInstruction* c) {
  std::vector<HloInstruction*> kept;
  for (HloInstruction* op : c->operands())
    if (ElementCountOrMinusOne(op->shape()) != 0) kept.push_back(op);
  if (kept.empty() || kept.size() == c->operands().size()) return nullptr;
  if (kept.size() == 1) return kept[0];
  NewInstruction spec;
  spec.attrs.dimensions = c->attrs().dimensions;
  return ctx.Create(HloOpcode::kConcatenate, std::move(kept), std::move(spec));
}

HloInstruction* AllOnesLike(RewriteContext& ctx, const HloInstruction* like) {
  if (!like->shape().IsArray()) return nullptr;
  PrimitiveType t = like->shape().element_type();
  if (t == PrimitiveType::PRED) return ctx.ScalarLike(like, 1.0);
  if (IsSignedIntegral(t)) return ctx.ScalarLike(like, -1.0);
  if (!IsUnsignedIntegral(t)) return nullptr;
  // The unsigned maximum does not survive a trip through double for u64: set the bits.
  Literal literal = Literal::ScalarInt(t, 0);
  literal.SetRawBits(0, AllOnesMask(t));
  NewInstruction c;
  c.attrs.literal = std::move(literal);
  HloInstruction* constant = ctx.Create(HloOpcode::kConstant, {}, std::move(c));
  if (constant == nullptr || like->shape().rank() == 0) return constant;
  NewInstruction b;
  b.shape = like->shape();
  return ctx.Create(HloOpcode::kBroadcast, {constant}, std::move(b));
}

HloInstruction* ReciprocalOf(RewriteContext& ctx, const HloInstruction* c) {
  const Literal* lit = LiteralOf(c);
  if (lit == nullptr || lit->element_count() < 1 || !c->shape().IsArray()) return nullptr;
  const PrimitiveType t = c->shape().element_type();
  if (t != PrimitiveType::F16 && t != PrimitiveType::BF16 && t != PrimitiveType::F32 && t != PrimitiveType::F64)
    return nullptr;
  // One value (a scalar constant or a broadcast of one): 1/v in the type's own arithmetic
  // (float for the 16- and 32-bit types, then rounded to the type by ScalarLike).
  const double v = lit->GetDouble(0);
  for (int64_t i = 1; i < lit->element_count(); ++i)
    if (lit->GetDouble(i) != v) return nullptr;
  const double r = t == PrimitiveType::F64 ? 1.0 / v : static_cast<double>(1.0f / static_cast<float>(v));
  return ctx.ScalarLike(c, r);
}

HloInstruction* OperandOf(RewriteContext&, const HloInstruction* x, int64_t i) {
  if (i < 0 || i >= x->operand_count()) return nullptr;
  return x->operand(i);
}

}  // namespace algsimp
}  // namespace hloc

namespace hloc::algsimp {
namespace {

// The window of a single-operand reduce-window without dilations (nullptr otherwise).
const Window* PlainReduceWindow(const HloInstruction* w) {
  if (w->opcode() != HloOpcode::kReduceWindow || w->operand_count() != 2 || !w->attrs().window) return nullptr;
  if (!w->operand(0)->shape().IsArray() || !w->shape().IsArray()) return nullptr;
  const Window& win = *w->attrs().window;
  if (static_cast<int64_t>(win.dimensions.size()) != w->operand(0)->shape().rank()) return nullptr;
  for (const WindowDimension& d : win.dimensions)
    if (d.window_dilation != 1 || d.base_dilation != 1 || d.window_reversal) return nullptr;
  return &win;
}

}  // namespace

// XLA's AlgebraicSimplifier::HandleReduceWindow: a window spanning whole dimensions (1 wide
// in the others) is a reduce of those dimensions. A global average pool (ResNet's 1x28x28x1
// window) is then a reduction, not a loop of 784 additions per thread.
HloInstruction* ReduceWindowAsReduce(RewriteContext& ctx, const HloInstruction* w) {
  const Window* win = PlainReduceWindow(w);
  if (win == nullptr) return nullptr;
  const Shape& in = w->operand(0)->shape();
  const Shape& out = w->shape();
  std::vector<int64_t> split, dims;  // the reshaped input, its reduced dimensions
  for (int64_t i = 0; i < in.rank(); ++i) {
    const WindowDimension& d = win->dimensions[i];
    if (d.size == 1 && d.stride == 1 && d.padding_low == 0 && d.padding_high == 0) {
      split.push_back(in.dimensions(i));
      continue;
    }
    // Only windows spanning the whole dimension (one output), as XLA: tiling windows
    // (stride == size, several outputs) would split it into (outputs, window) and reduce the
    // inner part, a reduction with kept and reduced dimensions interleaved that the reduction
    // emitters run far slower than the reduce-window loop (conv_bn_relu_pool's 2x2 max pool:
    // 110 -> 500 us on the H200).
    const int64_t o = out.dimensions(i);
    if (d.padding_low != 0 || d.padding_high != 0 || o != 1 || d.size != in.dimensions(i)) return nullptr;
    if (o > 1) split.push_back(o);
    dims.push_back(static_cast<int64_t>(split.size()));
    split.push_back(d.size);
  }
  if (dims.empty()) return nullptr;
  HloInstruction* x = w->operand(0);
  if (split != in.dimensions()) {
    NewInstruction reshape;
    reshape.shape = Shape(in.element_type(), split);
    x = ctx.Create(HloOpcode::kReshape, {x}, std::move(reshape));
    if (x == nullptr) return nullptr;
  }
  NewInstruction spec;
  spec.attrs.dimensions = dims;
  spec.called_computations = {w->to_apply()};
  HloInstruction* r = ctx.Create(HloOpcode::kReduce, {x, w->operand(1)}, std::move(spec));
  if (r == nullptr) return nullptr;
  if (r->shape().dimensions() == out.dimensions()) return r;
  NewInstruction reshape;
  reshape.shape = Shape(out.element_type(), out.dimensions());
  return ctx.Create(HloOpcode::kReshape, {r}, std::move(reshape));
}

// reduce-window(pad(x, v), init) with v the init value and no interior padding: the pad becomes
// the window's own padding (XLA's HandleReduceWindow folds it the same way), so the padded
// array is never written.
HloInstruction* ReduceWindowFoldPad(RewriteContext& ctx, const HloInstruction* w) {
  const Window* win = PlainReduceWindow(w);
  if (win == nullptr) return nullptr;
  const HloInstruction* pad = w->operand(0);
  if (pad->opcode() != HloOpcode::kPad || !pad->attrs().padding_config) return nullptr;
  const HloInstruction* v = pad->operand(1);
  const HloInstruction* init = w->operand(1);
  if (v != init && !(v->opcode() == HloOpcode::kConstant && init->opcode() == HloOpcode::kConstant &&
                     v->attrs().literal && init->attrs().literal && *v->attrs().literal == *init->attrs().literal))
    return nullptr;
  Window folded = *win;
  const PaddingConfig& pc = *pad->attrs().padding_config;
  for (size_t i = 0; i < folded.dimensions.size(); ++i) {
    const PaddingDimension& p = pc.dimensions[i];
    if (p.interior_padding != 0 || p.edge_padding_low < 0 || p.edge_padding_high < 0) return nullptr;
    folded.dimensions[i].padding_low += p.edge_padding_low;
    folded.dimensions[i].padding_high += p.edge_padding_high;
  }
  NewInstruction spec;
  spec.attrs.window = folded;
  spec.called_computations = {w->to_apply()};
  spec.shape = Shape(w->shape().element_type(), w->shape().dimensions());
  return ctx.Create(HloOpcode::kReduceWindow, {pad->operand(0), const_cast<HloInstruction*>(init)}, std::move(spec));
}

// A reduce-window whose every window, in every dimension, holds exactly the one element of an
// operand dimension of size 1 (or is 1 wide): each output is f(init, x) = x when init is f's
// identity, so the result is a broadcast of x. The gradient of a global average pool (the
// padded 1x1 gradient summed over 28x28 windows) is this.
HloInstruction* ReduceWindowOfSingleton(RewriteContext& ctx, const HloInstruction* w) {
  const Window* win = PlainReduceWindow(w);
  if (win == nullptr || !ReducerInitIsIdentity(w)) return nullptr;
  const Shape& in = w->operand(0)->shape();
  const Shape& out = w->shape();
  bool widened = false;
  std::vector<int64_t> kept_dims, kept_sizes;  // operand dims kept by the broadcast
  for (int64_t i = 0; i < in.rank(); ++i) {
    const WindowDimension& d = win->dimensions[i];
    if (d.size == 1 && d.stride == 1 && d.padding_low == 0 && d.padding_high == 0) {
      kept_dims.push_back(i);
      kept_sizes.push_back(in.dimensions(i));
      continue;
    }
    if (in.dimensions(i) != 1) return nullptr;
    // Output o's window covers padded positions o*stride .. o*stride+size-1; the element is at
    // padding_low. Every window must cover it: the first (o = 0) and the last alike.
    const int64_t last = (out.dimensions(i) - 1) * d.stride;
    if (d.padding_low > d.size - 1 || last > d.padding_low) return nullptr;
    widened = true;
  }
  if (!widened) return nullptr;
  NewInstruction reshape;
  reshape.shape = Shape(in.element_type(), kept_sizes);
  HloInstruction* x = ctx.Create(HloOpcode::kReshape, {w->operand(0)}, std::move(reshape));
  if (x == nullptr) return nullptr;
  NewInstruction bcast;
  bcast.shape = Shape(out.element_type(), out.dimensions());
  bcast.attrs.dimensions = kept_dims;
  return ctx.Create(HloOpcode::kBroadcast, {x}, std::move(bcast));
}

}  // namespace hloc::algsimp
