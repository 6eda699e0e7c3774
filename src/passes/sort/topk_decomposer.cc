#include "passes/sort/topk_decomposer.h"

#include "passes/expanders/expander_util.h"
#include "passes/passes.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

bool Candidate(const HloInstruction& inst, int64_t max_k, int64_t min_row_length) {
  if (inst.opcode() != O::kTopK || inst.operand_count() != 1 || !inst.shape().IsTuple()) return false;
  const Shape& x = inst.operand(0)->shape();
  if (!x.IsArray() || x.rank() < 1 || IsComplex(x.element_type())) return false;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (x.is_dynamic_dimension(d)) return false;
  if (inst.shape().tuple_shapes().size() != 2 || !IsIntegral(inst.shape().tuple_shapes(1).element_type())) return false;
  return inst.attrs().k > max_k && x.dimensions(x.rank() - 1) >= min_row_length && !cf::HasControlDependencies(inst);
}

// compare(p0, p1): GT for the largest first, LT for the smallest; floats under the total order,
// as topk orders them. Parameters 2 and 3 (the positions) are unused: the sort is stable.
HloComputation* Comparator(HloModule& module, NameUniquer& computations, NameUniquer& names, PrimitiveType t,
                           PrimitiveType pos, bool largest, absl::Status* status) {
  HloComputation* cmp = expanders::AddEmptyComputation(module, computations, "topk_compare");
  expanders::ExpanderBuilder b(cmp, &names);
  HloInstruction* lhs = b.Parameter(0, Shape(t, {}), "lhs");
  HloInstruction* rhs = b.Parameter(1, Shape(t, {}), "rhs");
  b.Parameter(2, Shape(pos, {}), "lhs.position");
  b.Parameter(3, Shape(pos, {}), "rhs.position");
  HloInstruction* root = b.Compare(lhs, rhs, largest ? ComparisonDirection::kGt : ComparisonDirection::kLt,
                                   IsFloatingPoint(t) ? ComparisonType::kTotalOrder : ComparisonType::kDefault);
  if (!b.ok()) {
    *status = b.status();
    return nullptr;
  }
  cmp->set_root_instruction(root);
  return cmp;
}

absl::Status Decompose(cf::Builder& cb, HloInstruction* topk) {
  HloComputation* comp = topk->parent();
  HloInstruction* x = topk->operand(0);
  const Shape& xs = x->shape();
  const int64_t dim = xs.rank() - 1;
  const PrimitiveType pos = topk->shape().tuple_shapes(1).element_type();
  absl::Status status;
  HloComputation* cmp = Comparator(cb.module, cb.names.computations, cb.names.instructions, xs.element_type(), pos,
                                   topk->attrs().largest, &status);
  if (cmp == nullptr) return status;
  expanders::ExpanderBuilder b(comp, &cb.names.instructions, topk);
  b.set_metadata(&topk->attrs().metadata);
  HloInstruction* iota = b.Iota(expanders::ShapeWithType(xs, pos), dim);
  if (!b.ok()) return b.status();
  auto sort = std::make_unique<HloInstruction>(O::kSort, Shape::Tuple({xs, iota->shape()}));
  sort->AppendOperand(x);
  sort->AppendOperand(iota);
  sort->mutable_attrs().dimensions = {dim};
  sort->mutable_attrs().is_stable = true;
  sort->mutable_called_computations().push_back(cmp);
  HloInstruction* sorted = b.Add(std::move(sort));
  std::vector<int64_t> starts(xs.rank(), 0), limits(xs.dimensions().begin(), xs.dimensions().end());
  limits[dim] = topk->attrs().k;
  HloInstruction* values = b.Slice(b.GetTupleElement(sorted, 0), starts, limits);
  HloInstruction* positions = b.Slice(b.GetTupleElement(sorted, 1), starts, limits);
  HloInstruction* result = b.Tuple({values, positions});
  if (!b.ok()) return b.status();
  return cf::ReplaceInstruction(topk, result);
}

}  // namespace

absl::StatusOr<bool> TopkDecomposer::Run(HloModule& module, PassContext& context) {
  (void)context;
  std::vector<HloInstruction*> topks;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions())
      if (Candidate(*inst, max_k_, min_row_length_)) topks.push_back(inst.get());
  }
  if (topks.empty()) return false;
  cf::Builder cb(module);
  for (HloInstruction* topk : topks) HLOC_CF_RETURN_IF_ERROR(Decompose(cb, topk));
  return true;
}

void RegisterTopkDecomposerPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      TopkDecomposer::kName,
      "topk with k > max_k over rows of at least min_row_length -> stable sort of (x, iota) + slices "
      "(XLA's TopkDecomposer)",
      {{"max_k", OptionType::kInt, OptionValue(int64_t{0}), "decompose only topk with k above this (0: every k)"},
       {"min_row_length", OptionType::kInt, OptionValue(int64_t{1}),
        "decompose only topk whose rows have at least this many elements"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<TopkDecomposer>(o.Has("max_k") ? o.GetInt("max_k") : 0,
                                                o.Has("min_row_length") ? o.GetInt("min_row_length") : 1);
      }});
}

}  // namespace hloc
