#include "passes/sort/sort_merger.h"

#include <map>
#include <utility>

#include "passes/passes.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

// Whether comparator `longer` (2*m parameters) orders like `shorter` (2*n parameters, n < m):
// parameters 2n.. of `longer` are unused and the graphs from the roots are identical, with
// parameters matched by number.
bool ComparatorsAgree(const HloComputation& shorter, const HloComputation& longer) {
  const int64_t n = shorter.num_parameters();
  if (n > longer.num_parameters()) return false;
  for (int64_t i = 0; i < longer.num_parameters(); ++i) {
    const HloInstruction* p = longer.parameter_instruction(i);
    if (p == nullptr) return false;
    if (i >= n) {
      if (p->user_count() > 0 || p->IsRoot()) return false;
    } else {
      const HloInstruction* q = shorter.parameter_instruction(i);
      if (q == nullptr || !(q->shape() == p->shape())) return false;
    }
  }
  if (shorter.root_instruction() == nullptr || longer.root_instruction() == nullptr) return false;
  std::map<std::pair<const HloInstruction*, const HloInstruction*>, bool> memo;
  std::function<bool(const HloInstruction*, const HloInstruction*)> same = [&](const HloInstruction* a,
                                                                               const HloInstruction* b) -> bool {
    const bool pa = a->opcode() == HloOpcode::kParameter, pb = b->opcode() == HloOpcode::kParameter;
    if (pa || pb) return pa && pb && a->attrs().parameter_number == b->attrs().parameter_number;
    auto key = std::make_pair(a, b);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    memo[key] = false;  // a cycle cannot occur in a computation; this only guards the recursion
    const bool r = InstructionsIdentical(
        *a, *b, same, [](const HloComputation* x, const HloComputation* y) { return ComputationsEqual(*x, *y, true); });
    memo[key] = r;
    return r;
  };
  return same(shorter.root_instruction(), longer.root_instruction());
}

// Whether `target` is among the transitive operands of `from` (or is `from`).
bool Reaches(const HloInstruction* from, const HloInstruction* target) {
  std::vector<const HloInstruction*> stack = {from};
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    if (x == target) return true;
    if (!seen.insert(x).second) continue;
    for (const HloInstruction* op : x->operands()) stack.push_back(op);
    for (const HloInstruction* pred : x->control_predecessors()) stack.push_back(pred);
  }
  return false;
}

// Whether `shorter`'s results are the first results of `longer`.
bool Mergeable(const HloInstruction* shorter, const HloInstruction* longer) {
  if (shorter->parent() != longer->parent()) return false;
  if (shorter->operand_count() >= longer->operand_count()) return false;
  if (shorter->attrs().dimensions != longer->attrs().dimensions) return false;
  if (shorter->to_apply() == nullptr || longer->to_apply() == nullptr) return false;
  for (int64_t i = 0; i < shorter->operand_count(); ++i)
    if (shorter->operand(i) != longer->operand(i)) return false;
  if (!ComparatorsAgree(*shorter->to_apply(), *longer->to_apply())) return false;
  // The longer sort's extra operands must not be computed from the shorter sort.
  for (int64_t i = shorter->operand_count(); i < longer->operand_count(); ++i)
    if (Reaches(longer->operand(i), shorter)) return false;
  return true;
}

}  // namespace

absl::StatusOr<bool> SortMerger::Run(HloModule& module, PassContext& context) {
  (void)context;
  cf::Builder b(module);
  bool changed = false;
  std::vector<HloComputation*> computations;
  for (const auto& comp : module.computations())
    if (!comp->IsFusionComputation()) computations.push_back(comp.get());
  std::vector<HloComputation*> orphans;
  for (HloComputation* comp : computations) {
    std::vector<HloInstruction*> sorts;
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kSort && !cf::HasControlDependencies(*inst)) sorts.push_back(inst.get());
    absl::flat_hash_set<const HloInstruction*> removed;
    bool reorder_needed = false;
    for (HloInstruction* shorter : sorts) {
      if (removed.contains(shorter) || shorter->IsRoot()) continue;
      HloInstruction* longer = nullptr;
      for (HloInstruction* candidate : sorts)
        if (candidate != shorter && !removed.contains(candidate) && Mergeable(shorter, candidate)) {
          longer = candidate;
          break;
        }
      if (longer == nullptr) continue;
      // The results are read where the shorter sort stood; when the longer sort comes later
      // in the instruction order, the order is rebuilt (operands first) afterwards, which a
      // scheduled module does not allow.
      int64_t pos_shorter = -1, pos_longer = -1;
      for (int64_t i = 0; i < comp->instruction_count(); ++i) {
        if (comp->instructions()[i].get() == shorter) pos_shorter = i;
        if (comp->instructions()[i].get() == longer) pos_longer = i;
      }
      const bool reorder = pos_longer > pos_shorter;
      if (reorder && module.is_scheduled()) continue;
      reorder_needed |= reorder;
      longer->mutable_attrs().is_stable = longer->attrs().is_stable || shorter->attrs().is_stable;
      HloInstruction* replacement;
      if (shorter->operand_count() == 1) {
        replacement = b.Gte(comp, longer, 0, shorter);
      } else {
        std::vector<HloInstruction*> parts;
        for (int64_t i = 0; i < shorter->operand_count(); ++i) parts.push_back(b.Gte(comp, longer, i, shorter));
        replacement = b.Tuple(comp, parts, shorter);
      }
      replacement->mutable_attrs().metadata = shorter->attrs().metadata;
      orphans.push_back(shorter->to_apply());
      removed.insert(shorter);
      HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(shorter, replacement));
      changed = true;
    }
    if (reorder_needed) HLOC_CF_RETURN_IF_ERROR(comp->SetInstructionOrder(comp->MakeInstructionPostOrder()));
  }
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, orphans));
  return changed;
}

void RegisterSortMergerPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      SortMerger::kName,
      "merge a sort of X into a sort of (X, Y) over the same dimension whose comparator ignores Y",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SortMerger>(); }});
}

}  // namespace hloc
