#include "passes/simplify/conditional_simplifier.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

using cf::Builder;

int64_t BranchCount(const HloInstruction* cond) { return static_cast<int64_t>(cond->called_computations().size()); }
HloComputation* Branch(const HloInstruction* cond, int64_t i) { return cond->called_computations()[i]; }

// XLA's HloChannelInstruction family: send/recv and the collectives. Cloning a computation
// holding one would duplicate its channel.
bool IsChannelInstruction(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
      return true;
    default:
      return IsCollective(inst.opcode());
  }
}

bool CallsChannelInstructions(const HloInstruction& inst) {
  std::vector<const HloComputation*> work(inst.called_computations().begin(), inst.called_computations().end());
  absl::flat_hash_set<const HloComputation*> seen;
  while (!work.empty()) {
    const HloComputation* comp = work.back();
    work.pop_back();
    if (comp == nullptr || !seen.insert(comp).second) continue;
    for (const auto& i : comp->instructions()) {
      if (IsChannelInstruction(*i)) return true;
      work.insert(work.end(), i->called_computations().begin(), i->called_computations().end());
    }
  }
  return false;
}

// Branch i of `cond` as a computation only this use reaches, so it may be edited in place:
// the branch itself when nothing else calls it, otherwise a fresh clone (as XLA clones).
absl::StatusOr<HloComputation*> ExclusiveBranch(Builder& b, HloInstruction* cond, int64_t i) {
  HloComputation* comp = Branch(cond, i);
  int64_t uses = 0;
  for (HloInstruction* caller : b.callers.Of(comp))
    for (const HloComputation* callee : caller->called_computations()) uses += callee == comp;
  if (uses == 1) return comp;
  HLOC_CF_ASSIGN_OR_RETURN(HloComputation * clone, b.CloneComputation(*comp));
  cond->mutable_called_computations()[i] = clone;
  b.callers.Invalidate();
  return clone;
}

// Makes `new_root` the root of `comp` and drops what only the old root needed.
absl::Status SetRoot(Builder& b, HloComputation* comp, HloInstruction* new_root) {
  HloInstruction* old_root = comp->root_instruction();
  comp->set_root_instruction(new_root);
  if (old_root == new_root || !cf::IsRemovableDead(*old_root)) return absl::OkStatus();
  b.callers.Invalidate();  // what goes may have called computations
  return cf::RemoveInstructionAndUnusedOperands(old_root);
}

bool AllUsersAreGte(const HloInstruction* inst) {
  for (const HloInstruction* user : inst->users())
    if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  return true;
}

// Two result indices that every branch fills from the same instruction are one value: point
// the get-tuple-elements of the later index at the earlier (RemoveUnusedTupleElements then
// drops it).
bool MergeDuplicateTupleElements(HloInstruction* cond) {
  if (cond->user_count() == 0 || cond->IsRoot() || !cond->shape().IsTuple() || !AllUsersAreGte(cond)) return false;
  for (int64_t i = 0; i < BranchCount(cond); ++i)
    if (Branch(cond, i)->root_instruction()->opcode() != HloOpcode::kTuple) return false;
  std::map<std::vector<const HloInstruction*>, int64_t> first_index;
  bool changed = false;
  for (int64_t k = 0; k < static_cast<int64_t>(cond->shape().tuple_shapes().size()); ++k) {
    std::vector<const HloInstruction*> sources;
    for (int64_t i = 0; i < BranchCount(cond); ++i) sources.push_back(Branch(cond, i)->root_instruction()->operand(k));
    auto [it, inserted] = first_index.emplace(sources, k);
    if (inserted) continue;
    for (HloInstruction* user : cond->users()) {
      if (user->attrs().tuple_index == k) {
        user->mutable_attrs().tuple_index = it->second;
        changed = true;
      }
    }
  }
  return changed;
}

// Drops result elements no get-tuple-element reads, in every branch.
absl::StatusOr<bool> RemoveUnusedTupleElements(Builder& b, HloInstruction* cond) {
  if (cond->user_count() == 0 || cond->IsRoot() || !cond->shape().IsTuple() || !AllUsersAreGte(cond)) return false;
  const Shape old_shape = cond->shape();
  const int64_t n = old_shape.tuple_shapes().size();
  std::vector<bool> used(n, false);
  for (const HloInstruction* user : cond->users()) used[user->attrs().tuple_index] = true;
  if (std::count(used.begin(), used.end(), true) == n) return false;
  for (int64_t i = 0; i < BranchCount(cond); ++i) {
    const Shape& root_shape = Branch(cond, i)->root_instruction()->shape();
    if (!root_shape.IsTuple() || !root_shape.EqualIgnoringLayout(old_shape)) return false;
  }
  std::vector<int64_t> old_to_new(n, -1);
  std::vector<Shape> new_elements;
  for (int64_t k = 0; k < n; ++k) {
    if (!used[k]) continue;
    old_to_new[k] = new_elements.size();
    new_elements.push_back(old_shape.tuple_shapes(k));
  }
  for (int64_t i = 0; i < BranchCount(cond); ++i) {
    HLOC_CF_ASSIGN_OR_RETURN(HloComputation * branch, ExclusiveBranch(b, cond, i));
    HloInstruction* root = branch->root_instruction();
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < n; ++k) {
      if (!used[k]) continue;
      elements.push_back(root->opcode() == HloOpcode::kTuple ? root->operand(k) : b.Gte(branch, root, k, nullptr));
    }
    HLOC_CF_RETURN_IF_ERROR(SetRoot(b, branch, b.Tuple(branch, elements, nullptr, root->name())));
  }
  cond->mutable_shape() = Shape::Tuple(std::move(new_elements));
  for (HloInstruction* user : cond->users()) user->mutable_attrs().tuple_index = old_to_new[user->attrs().tuple_index];
  return true;
}

// A conditional kept only for its effects returns nothing.
absl::StatusOr<bool> ReplaceRootWithEmptyTupleIfNoUsers(Builder& b, HloInstruction* cond) {
  const Shape empty = Shape::Tuple({});
  if (cond->user_count() != 0 || cond->IsRoot() || cond->shape().EqualIgnoringLayout(empty)) return false;
  for (int64_t i = 0; i < BranchCount(cond); ++i) {
    HLOC_CF_ASSIGN_OR_RETURN(HloComputation * branch, ExclusiveBranch(b, cond, i));
    HLOC_CF_RETURN_IF_ERROR(SetRoot(b, branch, b.Tuple(branch, {}, nullptr, branch->root_instruction()->name())));
  }
  cond->mutable_shape() = empty;
  return true;
}

// Only parameters, tuples and get-tuple-elements, returning at least one array: running
// such a branch is cheaper than a select.
bool ComputationIsEmptyWithArrayRoot(const HloComputation& comp) {
  for (const auto& inst : comp.instructions()) {
    HloOpcode op = inst->opcode();
    if (op != HloOpcode::kTuple && op != HloOpcode::kGetTupleElement && op != HloOpcode::kParameter) return false;
  }
  std::vector<const Shape*> work = {&comp.root_instruction()->shape()};
  while (!work.empty()) {
    const Shape* s = work.back();
    work.pop_back();
    if (s->IsArray()) return true;
    for (const Shape& e : s->tuple_shapes()) work.push_back(&e);
  }
  return false;
}

bool InstructionIsExpensive(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kBroadcast:
    case HloOpcode::kConcatenate:
    case HloOpcode::kDynamicSlice:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kReduce:
    case HloOpcode::kReshape:
    case HloOpcode::kPad:
    case HloOpcode::kParameter:
    case HloOpcode::kSlice:
    case HloOpcode::kTuple:
      return false;
    default:
      return !inst.IsElementwise();
  }
}

// Replaces the conditional by the inlined branch it must take, or by a select between both
// cheap branches. Returns whether it did.
absl::StatusOr<bool> TryRemoveConditional(Builder& b, HloInstruction* cond, cf::DeferredCleanup& cleanup) {
  if (cf::HasControlDependencies(*cond) || cf::HasSideEffect(*cond)) return false;
  HloComputation* comp = cond->parent();
  const int64_t n = BranchCount(cond);
  if (n == 0 || cond->operand_count() != n + 1) return false;
  auto inline_branch = [&](int64_t i) -> absl::Status {
    HloInstruction* arg = cond->operand(i + 1);
    HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * result, b.Inline(comp, *Branch(cond, i), {arg}, cond));
    return cf::ReplaceInstruction(cond, result, &cleanup);
  };
  // One branch runs whatever the index (out-of-range indices pick the last branch).
  if (n == 1) {
    HLOC_CF_RETURN_IF_ERROR(inline_branch(0));
    return true;
  }
  const HloInstruction* selector = cond->operand(0);
  if (selector->opcode() == HloOpcode::kConstant && selector->attrs().literal.has_value() &&
      selector->attrs().literal->element_count() == 1) {
    const Literal& lit = *selector->attrs().literal;
    int64_t index;
    if (lit.element_type() == PrimitiveType::PRED) {
      index = lit.GetPred(0) ? 0 : 1;
    } else {
      index = lit.GetInt(0);
      if (index < 0 || index >= n) index = n - 1;
    }
    HLOC_CF_RETURN_IF_ERROR(inline_branch(index));
    return true;
  }
  // Every branch computes the same function of the same operand: the index does not matter.
  bool identical = true;
  for (int64_t i = 1; i < n && identical; ++i)
    identical = cond->operand(i + 1) == cond->operand(1) && ComputationsEqual(*Branch(cond, i), *Branch(cond, 0));
  if (identical) {
    HLOC_CF_RETURN_IF_ERROR(inline_branch(0));
    return true;
  }

  if (n != 2 || selector->shape().element_type() != PrimitiveType::PRED) return false;
  for (int64_t i = 0; i < 2; ++i)
    for (const auto& inst : Branch(cond, i)->instructions())
      if (InstructionIsExpensive(*inst)) return false;
  // An empty branch is faster to run than a select.
  if (ComputationIsEmptyWithArrayRoot(*Branch(cond, 0)) || ComputationIsEmptyWithArrayRoot(*Branch(cond, 1)))
    return false;

  HloInstruction* pred = cond->operand(0);
  HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * on_true, b.Inline(comp, *Branch(cond, 0), {cond->operand(1)}, cond));
  HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * on_false, b.Inline(comp, *Branch(cond, 1), {cond->operand(2)}, cond));
  std::function<HloInstruction*(HloInstruction*, HloInstruction*)> select = [&](HloInstruction* t,
                                                                              HloInstruction* f) -> HloInstruction* {
    if (f->shape().IsToken()) {
      auto after_all = std::make_unique<HloInstruction>(HloOpcode::kAfterAll, Shape::Token());
      after_all->AppendOperand(t);
      after_all->AppendOperand(f);
      return b.Add(comp, std::move(after_all), cond);
    }
    if (f->shape().IsArray()) {
      HloInstruction* p = pred;
      if (!cf::IsScalar(f->shape()))
        p = b.Broadcast(comp, Shape(PrimitiveType::PRED, f->shape().dimensions()), pred, {}, cond);
      auto sel = std::make_unique<HloInstruction>(HloOpcode::kSelect, f->shape());
      sel->AppendOperand(p);
      sel->AppendOperand(t);
      sel->AppendOperand(f);
      return b.Add(comp, std::move(sel), cond);
    }
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < static_cast<int64_t>(f->shape().tuple_shapes().size()); ++k) {
      HloInstruction* tk = t->opcode() == HloOpcode::kTuple ? t->operand(k) : b.Gte(comp, t, k, cond);
      HloInstruction* fk = f->opcode() == HloOpcode::kTuple ? f->operand(k) : b.Gte(comp, f, k, cond);
      elements.push_back(select(tk, fk));
    }
    return b.Tuple(comp, elements, cond);
  };
  HloInstruction* result = select(on_true, on_false);
  HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(cond, result, &cleanup));
  cleanup.Add(on_true);
  cleanup.Add(on_false);
  return true;
}

// Drops the tuple elements of branch `comp`'s parameter that it never reads, in `comp` (or a
// clone, if anything but `callers` calls it) and in the operands every caller passes.
absl::StatusOr<bool> TryRemoveUnusedConditionalOperands(Builder& b, HloComputation* comp,
                                                        const std::vector<HloInstruction*>& callers,
                                                        cf::DeferredCleanup& cleanup) {
  if (comp->num_parameters() != 1) return false;
  HloInstruction* param = comp->parameter_instruction(0);
  if (param == nullptr || param->IsRoot() || !param->shape().IsTuple() || !AllUsersAreGte(param)) return false;
  const Shape old_shape = param->shape();
  const int64_t n = old_shape.tuple_shapes().size();
  std::set<int64_t> keep;
  for (const HloInstruction* user : param->users()) keep.insert(user->attrs().tuple_index);
  if (static_cast<int64_t>(keep.size()) == n) return false;
  std::vector<int64_t> old_to_new(n, -1);
  std::vector<Shape> new_elements;
  for (int64_t k : keep) {
    old_to_new[k] = new_elements.size();
    new_elements.push_back(old_shape.tuple_shapes(k));
  }
  bool exclusive = true;
  for (HloInstruction* caller : b.callers.Of(comp))
    exclusive &= std::find(callers.begin(), callers.end(), caller) != callers.end();
  HloComputation* target = comp;
  if (!exclusive) {
    HLOC_CF_ASSIGN_OR_RETURN(target, b.CloneComputation(*comp));
  }
  HloInstruction* new_param = target->parameter_instruction(0);
  new_param->mutable_shape() = Shape::Tuple(new_elements);
  for (HloInstruction* user : new_param->users()) user->mutable_attrs().tuple_index = old_to_new[user->attrs().tuple_index];

  for (HloInstruction* cond : callers) {
    for (int64_t i = 0; i < BranchCount(cond); ++i) {
      if (Branch(cond, i) != comp) continue;
      cond->mutable_called_computations()[i] = target;
      b.callers.Invalidate();
      HloInstruction* old_operand = cond->operand(i + 1);
      std::vector<HloInstruction*> elements;
      for (int64_t k : keep)
        elements.push_back(old_operand->opcode() == HloOpcode::kTuple ? old_operand->operand(k)
                                                                      : b.Gte(cond->parent(), old_operand, k, cond));
      cond->ReplaceOperandWith(i + 1, b.Tuple(cond->parent(), elements, cond, old_operand->name()));
      cleanup.Add(old_operand);
    }
  }
  return true;
}

// The conditionals this pass may rewrite, callers before callees' users (post order).
std::vector<HloInstruction*> GatherConditionals(const HloModule& module) {
  std::vector<HloInstruction*> conds;
  for (const auto& comp : module.computations()) {
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kConditional) continue;
      // Cloning a branch would duplicate its channels; shardings are not kept up to date.
      if (CallsChannelInstructions(*inst) || inst->attrs().sharding.has_value()) continue;
      if (BranchCount(inst) == 0 || inst->operand_count() != BranchCount(inst) + 1) continue;
      conds.push_back(inst);
    }
  }
  return conds;
}

}  // namespace

absl::StatusOr<bool> ConditionalSimplifier::Run(HloModule& module, PassContext& context) {
  (void)context;
  Builder b(module);
  std::vector<HloComputation*> original_branches;
  bool changed = false;
  cf::DeferredCleanup cleanup;
  for (HloInstruction* cond : GatherConditionals(module)) {
    for (HloComputation* c : cond->called_computations()) original_branches.push_back(c);
    changed |= MergeDuplicateTupleElements(cond);
    HLOC_CF_ASSIGN_OR_RETURN(bool unused, RemoveUnusedTupleElements(b, cond));
    HLOC_CF_ASSIGN_OR_RETURN(bool emptied, ReplaceRootWithEmptyTupleIfNoUsers(b, cond));
    HLOC_CF_ASSIGN_OR_RETURN(bool inlined, TryRemoveConditional(b, cond, cleanup));
    changed |= unused || emptied || inlined;
    for (HloComputation* c : cond->called_computations()) original_branches.push_back(c);
  }
  // Replaced conditionals go now, so they no longer count as callers of their branches.
  HLOC_CF_RETURN_IF_ERROR(cleanup.Run());
  b.callers.Invalidate();

  // Operands the branches never read are dropped from every conditional calling a branch.
  std::vector<HloComputation*> branches;
  absl::flat_hash_map<HloComputation*, std::vector<HloInstruction*>> callers;
  for (HloInstruction* cond : GatherConditionals(module)) {
    for (int64_t i = 0; i < BranchCount(cond); ++i) {
      HloComputation* branch = Branch(cond, i);
      auto& list = callers[branch];
      if (list.empty()) branches.push_back(branch);
      if (std::find(list.begin(), list.end(), cond) == list.end()) list.push_back(cond);
    }
  }
  for (HloComputation* branch : branches) {
    HLOC_CF_ASSIGN_OR_RETURN(bool result, TryRemoveUnusedConditionalOperands(b, branch, callers[branch], cleanup));
    changed |= result;
    original_branches.push_back(branch);
  }
  HLOC_CF_RETURN_IF_ERROR(cleanup.Run());
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, original_branches));
  return changed;
}

}  // namespace hloc
