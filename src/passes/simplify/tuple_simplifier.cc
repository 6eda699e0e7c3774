// tuple-simplifier, after XLA's TupleSimplifier
// (xla/hlo/transforms/simplifiers/tuple_simplifier.cc). Replacements keep shardings apart (a
// replacement with a different sharding is refused) and relay control edges.
#include "passes/simplify/tuple_simplifier.h"

#include <algorithm>

#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// tuple(gte(t, 0), ..., gte(t, n-1)) with t of the tuple's shape -> t.
absl::StatusOr<bool> RemoveWholeTuple(HloInstruction* tuple) {
  HloInstruction* top = nullptr;
  for (int64_t i = 0; i < tuple->operand_count(); ++i) {
    HloInstruction* op = tuple->operand(i);
    if (op->opcode() != O::kGetTupleElement || op->attrs().tuple_index != i || op->operand_count() != 1) return false;
    if (top == nullptr) {
      top = op->operand(0);
      if (!top->shape().EqualIgnoringLayout(tuple->shape())) return false;
    } else if (top != op->operand(0)) {
      return false;
    }
  }
  if (top == nullptr) return false;
  ReplaceOptions options;
  options.preserve_sharding = true;
  return ReplaceInstruction(tuple, top, options);
}

// gte(...gte(tuple(...)...)) -> the element the chain selects, when every step is a tuple.
absl::StatusOr<bool> ForwardElement(HloInstruction* inst) {
  std::vector<int64_t> index;  // outermost get-tuple-element last
  HloInstruction* ancestor = inst;
  while (ancestor->opcode() == O::kGetTupleElement && ancestor->operand_count() == 1) {
    index.push_back(ancestor->attrs().tuple_index);
    ancestor = ancestor->operand(0);
  }
  if (ancestor == inst) return false;
  std::reverse(index.begin(), index.end());
  HloInstruction* replacement = ancestor;
  for (int64_t i : index) {
    if (replacement->opcode() != O::kTuple || i < 0 || i >= replacement->operand_count()) return false;
    replacement = replacement->operand(i);
  }
  ReplaceOptions options;
  options.preserve_sharding = true;
  options.relay_control_dependency = true;
  return ReplaceInstruction(inst, replacement, options);
}

}  // namespace

absl::StatusOr<bool> TupleSimplifierPass::Run(HloModule& module, PassContext&) {
  bool changed = false;
  std::vector<HloComputation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (HloComputation* computation : computations) {
    if (options_.exclude_entry_computation && computation == module.entry_computation()) continue;
    // A replacement removes only the replaced instruction and operands that die with it, all
    // earlier in post order than anything still to visit.
    for (HloInstruction* inst : computation->MakeInstructionPostOrder()) {
      auto r = inst->opcode() == O::kTuple ? RemoveWholeTuple(inst) : ForwardElement(inst);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
  }
  return changed;
}

void RegisterTupleSimplifierPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "tuple-simplifier";
  info.description = "forwards tuple elements through get-tuple-element and removes tuples that rebuild their source";
  info.options = {{"exclude_entry_computation", OptionType::kBool, OptionValue(false),
                   "leave the entry computation unchanged"}};
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    TupleSimplifierOptions options;
    if (o.Has("exclude_entry_computation")) options.exclude_entry_computation = o.GetBool("exclude_entry_computation");
    return std::make_unique<TupleSimplifierPass>(options);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
