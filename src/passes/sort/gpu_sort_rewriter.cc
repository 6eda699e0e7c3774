#include "passes/sort/gpu_sort_rewriter.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>

#include "ir/custom_calls/sort_calls.h"
#include "passes/expanders/expander_util.h"
#include "passes/layout/layout_util.h"
#include "passes/passes.h"
#include "passes/simplify/control_flow_util.h"
#include "passes/sort/stable_sort_expander.h"

namespace hloc {
namespace {

using O = HloOpcode;

// What a key comparator orders by: compare(g(p[2i]), g(p[2i+1])), `direction` LT or GT.
struct KeyComparator {
  int64_t operand = 0;                     // i: the sort operand g reads
  const HloInstruction* key = nullptr;     // g(p[2i]) in the comparator
  ComparisonDirection direction = ComparisonDirection::kLt;
};

// Comparators are small; a walk of more nodes than this (shared subexpressions are walked once
// per use) is not a JAX key function and gives up rather than take exponential time.
constexpr int kMaxKeyNodes = 4096;

// Structural equality of two comparator expressions, parameters equal by number (the clones
// stable-sort-expander inlines are new instructions).
bool SameExpression(const HloInstruction* a, const HloInstruction* b, int* budget) {
  if (a == b) return true;
  if (--*budget < 0) return false;
  if (a->opcode() == O::kParameter || b->opcode() == O::kParameter)
    return a->opcode() == b->opcode() && a->attrs().parameter_number == b->attrs().parameter_number;
  return InstructionsIdentical(
      *a, *b, [&](const HloInstruction* x, const HloInstruction* y) { return SameExpression(x, y, budget); },
      [](const HloComputation* x, const HloComputation* y) { return x == y; }, {.layout_sensitive = false});
}
bool SameExpression(const HloInstruction* a, const HloInstruction* b) {
  int budget = kMaxKeyNodes;
  return SameExpression(a, b, &budget);
}

// Whether `rhs` is `lhs` with every parameter 2i replaced by 2i+1, all of lhs's parameters
// being 2i for one i (set in *operand), and every node a scalar elementwise op or constant.
bool MirroredKey(const HloInstruction* lhs, const HloInstruction* rhs, int64_t* operand, int* budget) {
  if (--*budget < 0 || !lhs->shape().IsArray() || lhs->shape().rank() != 0) return false;
  if (lhs->opcode() == O::kParameter) {
    const int64_t p = lhs->attrs().parameter_number;
    if (p % 2 != 0 || (*operand >= 0 && p / 2 != *operand)) return false;
    *operand = p / 2;
    return rhs->opcode() == O::kParameter && rhs->attrs().parameter_number == p + 1;
  }
  if (lhs->opcode() == O::kConstant) return SameExpression(lhs, rhs, budget);
  // Elementwise and deterministic (g is evaluated once per element instead of per comparison).
  if (!lhs->IsElementwise() || lhs->opcode() == O::kStochasticConvert || !lhs->called_computations().empty())
    return false;
  if (!InstructionsIdentical(*lhs, *rhs, [](const HloInstruction*, const HloInstruction*) { return true; },
                             [](const HloComputation*, const HloComputation*) { return false; }))
    return false;
  for (int64_t k = 0; k < lhs->operand_count(); ++k)
    if (!MirroredKey(lhs->operand(k), rhs->operand(k), operand, budget)) return false;
  return true;
}

// Key types the radix sort orders exactly: floats under the total order, integers.
bool IsKeyCompare(const HloInstruction* cmp) {
  if (cmp->opcode() != O::kCompare || cmp->operand(0)->shape().rank() != 0) return false;
  const ComparisonDirection dir = *cmp->attrs().comparison_direction;
  if (dir != ComparisonDirection::kLt && dir != ComparisonDirection::kGt) return false;
  const PrimitiveType t = cmp->operand(0)->shape().element_type();
  const int bits = BitWidth(t);
  if (bits != 8 && bits != 16 && bits != 32 && bits != 64) return false;
  const ComparisonType type = cmp->attrs().comparison_type;
  if (IsFloatingPoint(t)) return type == ComparisonType::kTotalOrder;
  if (IsSignedIntegral(t)) return type == ComparisonType::kDefault || type == ComparisonType::kSigned;
  if (IsUnsignedIntegral(t)) return type == ComparisonType::kDefault || type == ComparisonType::kUnsigned;
  return false;
}

std::optional<KeyComparator> MatchKeyCompare(const HloInstruction* cmp) {
  if (!IsKeyCompare(cmp)) return std::nullopt;
  KeyComparator key;
  key.operand = -1;
  int budget = kMaxKeyNodes;
  if (!MirroredKey(cmp->operand(0), cmp->operand(1), &key.operand, &budget) || key.operand < 0) return std::nullopt;
  key.key = cmp->operand(0);
  key.direction = *cmp->attrs().comparison_direction;
  return key;
}

ComparisonDirection Negated(ComparisonDirection d) {  // !(a d b) == a Negated(d) b
  switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLe;
    case ComparisonDirection::kLe: return ComparisonDirection::kGt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLt;
    default: return d;  // EQ, NE: not needed here
  }
}
ComparisonDirection Swapped(ComparisonDirection d) {  // a d b == b Swapped(d) a
  switch (d) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return d;
  }
}

// Whether `x` computes !less(b, a) for the key compare less(a, b) = compare(ka, kb, D): as
// not(compare(kb, ka, D)), or as algsimp leaves it, compare(kb, ka, !D) or compare(ka, kb,
// swapped !D). Keys are integers or totally ordered floats, so negation is exact.
bool IsNotLessSwapped(const HloInstruction* x, const HloInstruction* less) {
  const HloInstruction* ka = less->operand(0);
  const HloInstruction* kb = less->operand(1);
  const ComparisonDirection d = *less->attrs().comparison_direction;
  auto is_compare = [&](const HloInstruction* c, const HloInstruction* l, const HloInstruction* r,
                        ComparisonDirection dir) {
    return c->opcode() == O::kCompare && c->attrs().comparison_direction == dir &&
           c->attrs().comparison_type == less->attrs().comparison_type && SameExpression(c->operand(0), l) &&
           SameExpression(c->operand(1), r);
  };
  if (x->opcode() == O::kNot) return is_compare(x->operand(0), kb, ka, d);
  return is_compare(x, kb, ka, Negated(d)) || is_compare(x, ka, kb, Swapped(Negated(d)));
}

// Whether `x` is pos(a) < pos(b) for the parameters of a sort operand that is a position iota.
bool IsEarlier(const HloInstruction* x, const HloInstruction& sort, int64_t key_operand) {
  if (x->opcode() != O::kCompare) return false;
  const ComparisonDirection d = *x->attrs().comparison_direction;
  if (d != ComparisonDirection::kLt && d != ComparisonDirection::kGt) return false;
  const HloInstruction* pa = x->operand(d == ComparisonDirection::kLt ? 0 : 1);
  const HloInstruction* pb = x->operand(d == ComparisonDirection::kLt ? 1 : 0);
  if (pa->opcode() != O::kParameter || pb->opcode() != O::kParameter) return false;
  const int64_t p = pa->attrs().parameter_number;
  return p % 2 == 0 && pb->attrs().parameter_number == p + 1 && p / 2 != key_operand &&
         p / 2 < sort.operand_count() && IsPositionIota(*sort.operand(p / 2), sort.attrs().dimensions[0]);
}

// The comparator `sort` orders by, or nullopt. Either a key compare as the root, or
// stable-sort-expander's tie-break on a position iota k:
//   or(less(a, b), and(not(less(b, a)), compare(p[2k], p[2k+1]), direction=LT))
// which orders like less alone under a stable sort.
std::optional<KeyComparator> MatchComparator(const HloInstruction& sort) {
  const HloInstruction* root = sort.to_apply()->root_instruction();
  if (std::optional<KeyComparator> key = MatchKeyCompare(root)) return key;
  if (root->opcode() != O::kOr) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    const HloInstruction* less = root->operand(side);
    const HloInstruction* tie = root->operand(1 - side);
    std::optional<KeyComparator> key = MatchKeyCompare(less);
    if (!key || tie->opcode() != O::kAnd) continue;
    for (int t = 0; t < 2; ++t)
      if (IsNotLessSwapped(tie->operand(t), less) && IsEarlier(tie->operand(1 - t), sort, key->operand)) return key;
  }
  return std::nullopt;
}

class Rewriter {
 public:
  Rewriter(HloInstruction* sort, const KeyComparator& key, NameUniquer& names)
      : sort_(sort), key_(key), dim_(sort->attrs().dimensions[0]),
        dims_(sort->operand(0)->shape().dimensions().begin(), sort->operand(0)->shape().dimensions().end()),
        b_(sort->parent(), &names, sort) {
    b_.set_metadata(&sort->attrs().metadata);
  }

  // The sort's replacement outputs (null where an output is unused), or an error.
  absl::StatusOr<std::vector<HloInstruction*>> Build(const std::vector<bool>& used) {
    HloInstruction* key_operand = sort_->operand(key_.operand);
    absl::StatusOr<HloInstruction*> g = CloneKey(key_.key, key_operand);
    if (!g.ok()) return g.status();
    int key_bits = 0;
    HloInstruction* keys = RadixKeys(*g, &key_bits);
    // The payload: the only used operand itself, else the permutation.
    int64_t only = -1, count = 0;
    for (int64_t i = 0; i < sort_->operand_count(); ++i)
      if (used[i]) ++count, only = i;
    HloInstruction* payload = count == 1 ? sort_->operand(only) : nullptr;
    for (int64_t i = 0; i < sort_->operand_count() && payload == nullptr; ++i)  // argsort's own iota
      if (IsPositionIota(*sort_->operand(i), dim_) && sort_->operand(i)->shape().element_type() == PrimitiveType::S32)
        payload = sort_->operand(i);
    if (payload == nullptr) payload = b_.Iota(expanders::MakeShape(PrimitiveType::S32, dims_), dim_);
    HloInstruction* call = RadixSortCall(keys, payload, key_bits);
    HloInstruction* sorted = b_.GetTupleElement(call, 1);
    std::vector<HloInstruction*> outputs(sort_->operand_count(), nullptr);
    for (int64_t i = 0; i < sort_->operand_count(); ++i) {
      if (!used[i]) continue;
      HloInstruction* op = sort_->operand(i);
      if (count == 1) outputs[i] = sorted;
      else if (IsPositionIota(*op, dim_))  // its sorted values are the permutation
        outputs[i] = op->shape().element_type() == PrimitiveType::S32 ? sorted : b_.Convert(sorted, op->shape().element_type());
      else outputs[i] = TakeAlongSortDim(op, sorted);
    }
    if (!b_.ok()) {
      b_.Discard();
      return b_.status();
    }
    return outputs;
  }

 private:
  // g (a scalar expression of the comparator) applied to the whole key operand.
  absl::StatusOr<HloInstruction*> CloneKey(const HloInstruction* node, HloInstruction* operand) {
    auto it = cloned_.find(node);
    if (it != cloned_.end()) return it->second;
    HloInstruction* out = nullptr;
    const Shape shape = expanders::MakeShape(node->shape().element_type(), dims_);
    if (node->opcode() == O::kParameter) {
      out = operand;
    } else if (node->opcode() == O::kConstant) {
      out = b_.BroadcastScalar(b_.Constant(*node->attrs().literal), shape);
    } else {
      std::vector<HloInstruction*> ops;
      for (const HloInstruction* op : node->operands()) {
        absl::StatusOr<HloInstruction*> c = CloneKey(op, operand);
        if (!c.ok()) return c.status();
        ops.push_back(*c);
      }
      std::unique_ptr<HloInstruction> inst = CloneInstruction(*node, ops);
      inst->mutable_shape() = shape;
      out = b_.Add(std::move(inst));
    }
    if (out == nullptr) return b_.status();
    cloned_[node] = out;
    return out;
  }

  // Unsigned keys whose ascending order is the comparator's order (see the header).
  HloInstruction* RadixKeys(HloInstruction* g, int* key_bits) {
    const PrimitiveType t = g->shape().element_type();
    const int bits = BitWidth(t);
    const PrimitiveType u = *expanders::UnsignedIntegralTypeForBitWidth(bits);
    const uint64_t sign = uint64_t{1} << (bits - 1);
    HloInstruction* key = t == u ? g : b_.BitcastConvert(g, u);
    if (IsFloatingPoint(t)) {
      // Negative floats order backwards by their bits: flip them all; positive ones go above.
      HloInstruction* negative = b_.Compare(key, b_.ScalarBits(u, sign), ComparisonDirection::kGe, ComparisonType::kUnsigned);
      key = b_.Select(negative, b_.Unary(O::kNot, key), b_.Or(key, b_.ScalarBits(u, sign)));
    } else if (IsSignedIntegral(t)) {
      key = b_.Xor(key, b_.ScalarBits(u, sign));
    }
    if (key_.direction == ComparisonDirection::kGt) key = b_.Unary(O::kNot, key);
    // The kernel reads u32 or u64 keys; narrower ones sort on their own bits only.
    if (bits < 32) key = b_.Convert(key, PrimitiveType::U32);
    *key_bits = bits;
    return key;
  }

  HloInstruction* RadixSortCall(HloInstruction* keys, HloInstruction* payload, int key_bits) {
    if (keys == nullptr || payload == nullptr) return nullptr;
    const Shape& ks = keys->shape();
    const Shape& vs = payload->shape();
    const int64_t elements = ks.num_elements();
    const int64_t scratch =
        RadixSortScratchBytes(elements, ByteWidth(ks.element_type()), ByteWidth(vs.element_type()));
    auto call = std::make_unique<HloInstruction>(
        O::kCustomCall, Shape::Tuple({ks, vs, expanders::MakeShape(PrimitiveType::U8, {scratch})}), "radix-sort");
    call->AppendOperand(keys);
    call->AppendOperand(payload);
    call->mutable_attrs().custom_call_target = std::string(kRadixSortCallTarget);
    call->mutable_attrs().backend_config = RadixSortConfigToJson({dim_, key_bits});
    return b_.Add(std::move(call));
  }

  // out[..., j] = op[..., perm[..., j]] (take_along_axis): a gather whose other dimensions are
  // batch dimensions of both operand and indices.
  HloInstruction* TakeAlongSortDim(HloInstruction* op, HloInstruction* perm) {
    if (perm == nullptr) return nullptr;
    const int64_t rank = static_cast<int64_t>(dims_.size());
    GatherDimensionNumbers g;
    for (int64_t d = 0; d < rank; ++d)
      if (d != dim_) {
        g.operand_batching_dims.push_back(d);
        g.start_indices_batching_dims.push_back(d);
      }
    g.collapsed_slice_dims = {dim_};
    g.start_index_map = {dim_};
    g.index_vector_dim = rank;
    auto gather = std::make_unique<HloInstruction>(O::kGather, expanders::MakeShape(op->shape().element_type(), dims_), "gather");
    gather->AppendOperand(op);
    gather->AppendOperand(perm);
    gather->mutable_attrs().gather_dimension_numbers = g;
    gather->mutable_attrs().dynamic_slice_sizes.assign(rank, 1);
    return b_.Add(std::move(gather));
  }

  HloInstruction* sort_;
  const KeyComparator key_;
  const int64_t dim_;
  const std::vector<int64_t> dims_;
  expanders::ExpanderBuilder b_;
  std::map<const HloInstruction*, HloInstruction*> cloned_;
};

// Which outputs of `sort` anything reads (all of them when something takes the whole result).
std::vector<bool> UsedOutputs(const HloInstruction& sort) {
  std::vector<bool> used(sort.operand_count(), false);
  if (!sort.shape().IsTuple() || sort.IsRoot()) return std::vector<bool>(sort.operand_count(), true);
  for (const HloInstruction* u : sort.users()) {
    if (u->opcode() != O::kGetTupleElement) return std::vector<bool>(sort.operand_count(), true);
    used[u->attrs().tuple_index] = true;
  }
  return used;
}

// Whether some user takes the whole tuple (rather than elements).
bool UsedWhole(const HloInstruction& sort) {
  if (sort.IsRoot()) return true;
  for (const HloInstruction* u : sort.users())
    if (u->opcode() != O::kGetTupleElement) return true;
  return false;
}

bool Candidate(const HloInstruction& sort, int64_t min_row_length) {
  if (sort.opcode() != O::kSort || sort.attrs().dimensions.size() != 1 || sort.to_apply() == nullptr ||
      sort.operand_count() == 0 || HasControlDependencies(sort))
    return false;
  const Shape& s = sort.operand(0)->shape();
  const int64_t dim = sort.attrs().dimensions[0];
  if (!s.IsArray() || dim != s.rank() - 1) return false;  // rows contiguous under the default layout
  const int64_t n = s.dimensions(dim);
  if (n < min_row_length || n > std::numeric_limits<int32_t>::max() || s.num_elements() <= 0) return false;
  for (const HloInstruction* op : sort.operands())
    if (!op->shape().IsArray() || !layout::HasDefaultLayout(op->shape()) || op->shape().dimensions() != s.dimensions())
      return false;
  return layout::HasDefaultLayout(sort.shape());
}

}  // namespace

absl::StatusOr<bool> GpuSortRewriter::Run(HloModule& module, PassContext& context) {
  (void)context;
  std::vector<std::pair<HloInstruction*, KeyComparator>> sorts;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions()) {
      if (!Candidate(*inst, min_row_length_)) continue;
      if (std::optional<KeyComparator> key = MatchComparator(*inst)) sorts.push_back({inst.get(), *key});
    }
  }
  if (sorts.empty()) return false;
  cf::Builder cb(module);
  std::vector<HloComputation*> orphans;
  cf::DeferredCleanup cleanup;
  for (auto& [sort, key] : sorts) {
    const std::vector<bool> used = UsedOutputs(*sort);
    if (std::find(used.begin(), used.end(), true) == used.end()) continue;  // dead: dce's
    absl::StatusOr<std::vector<HloInstruction*>> outputs = Rewriter(sort, key, cb.names.instructions).Build(used);
    if (!outputs.ok()) return outputs.status();
    orphans.push_back(sort->to_apply());
    HloComputation* comp = sort->parent();
    if (!sort->shape().IsTuple()) {
      HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(sort, (*outputs)[0], &cleanup));
      continue;
    }
    if (UsedWhole(*sort)) {
      HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(sort, cb.Tuple(comp, *outputs, sort), &cleanup));
      continue;
    }
    const std::vector<HloInstruction*> users(sort->users().begin(), sort->users().end());
    for (HloInstruction* gte : users)
      HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(gte, (*outputs)[gte->attrs().tuple_index], &cleanup));
    cleanup.Add(sort);
  }
  HLOC_CF_RETURN_IF_ERROR(cleanup.Run());
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, orphans));
  return true;
}

void RegisterGpuSortRewriterPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      GpuSortRewriter::kName,
      "long sort by one key -> key transform + __hloc$radix_sort custom call (XLA's SortRewriter)",
      {{"min_row_length", OptionType::kInt, OptionValue(int64_t{16385}),
        "rewrite only sorts whose sort dimension has at least this many elements (XLA: 16385)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<GpuSortRewriter>(o.Has("min_row_length") ? o.GetInt("min_row_length") : 16385);
      }});
}

}  // namespace hloc
