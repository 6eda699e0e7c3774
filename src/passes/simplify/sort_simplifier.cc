#include "passes/simplify/sort_simplifier.h"

#include <set>

#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

// Returns whether `sort` was replaced by a sort of fewer operands.
absl::StatusOr<bool> RemoveUnusedOperandsFromSort(cf::Builder& b, HloInstruction* sort,
                                                  std::vector<HloComputation*>& orphans) {
  if (!sort->shape().IsTuple()) return false;
  HloComputation* comp = sort->parent();
  // The root's users are outside this computation; nothing can be said about them.
  if (sort->IsRoot() || cf::HasControlDependencies(*sort)) return false;
  HloComputation* comparator = sort->to_apply();
  if (comparator == nullptr || comparator->num_parameters() != 2 * sort->operand_count()) return false;

  std::set<int64_t> used;
  for (const HloInstruction* user : sort->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
    used.insert(user->attrs().tuple_index);
  }
  // Operand i is compared through parameters 2i and 2i+1: a comparator that reads either
  // needs the operand to order the others.
  for (int64_t i = 0; i < 2 * sort->operand_count(); ++i) {
    const HloInstruction* p = comparator->parameter_instruction(i);
    if (p == nullptr) return false;
    if (p->user_count() > 0 || p->IsRoot()) used.insert(i / 2);
  }
  if (static_cast<int64_t>(used.size()) == sort->operand_count()) return false;

  std::vector<HloInstruction*> operands;
  std::vector<Shape> shapes;
  std::vector<int64_t> kept_parameters;
  for (int64_t i : used) {
    operands.push_back(sort->operand(i));
    shapes.push_back(sort->operand(i)->shape());
    kept_parameters.push_back(2 * i);
    kept_parameters.push_back(2 * i + 1);
  }
  Shape new_shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  HLOC_CF_ASSIGN_OR_RETURN(HloComputation * new_comparator, b.CloneComputation(*comparator, &kept_parameters));
  HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * new_sort, b.CloneWithNewOperands(*sort, new_shape, operands, sort));
  new_sort->mutable_called_computations()[0] = new_comparator;
  b.callers.Invalidate();

  // Old tuple index -> the value that replaces get-tuple-element(sort), index=i.
  absl::flat_hash_map<int64_t, HloInstruction*> result;
  int64_t new_index = 0;
  for (int64_t i : used) {
    result[i] = new_shape.IsTuple() ? b.Gte(comp, new_sort, new_index, sort) : new_sort;
    ++new_index;
  }
  // Each user is a get-tuple-element (one operand), so it appears once in users().
  std::vector<HloInstruction*> users = sort->users();
  for (HloInstruction* user : users) {
    HloInstruction* replacement = result.at(user->attrs().tuple_index);
    if (replacement->attrs().metadata.op_name.empty()) replacement->mutable_attrs().metadata = user->attrs().metadata;
    user->ReplaceAllUsesWith(replacement);
    if (cf::HasControlDependencies(*user)) continue;
    HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstruction(comp, user));
  }
  if (sort->user_count() == 0) HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstructionAndUnusedOperands(sort));
  orphans.push_back(comparator);
  return true;
}

}  // namespace

absl::StatusOr<bool> SortSimplifier::Run(HloModule& module, PassContext& context) {
  (void)context;
  cf::Builder b(module);
  std::vector<HloInstruction*> sorts;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kSort) sorts.push_back(inst.get());
  }
  bool changed = false;
  std::vector<HloComputation*> orphans;
  for (HloInstruction* sort : sorts) {
    HLOC_CF_ASSIGN_OR_RETURN(bool result, RemoveUnusedOperandsFromSort(b, sort, orphans));
    changed |= result;
  }
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, orphans));
  return changed;
}

}  // namespace hloc
