// zero_sized_hlo_elimination, after XLA's ZeroSizedHloElimination
// (xla/hlo/transforms/simplifiers/zero_sized_hlo_elimination.cc): fusion and composite
// computations are left alone; side-effecting instructions, constants, dynamic shapes and
// non-arrays too.
#include "passes/simplify/zero_sized_hlo_elimination.h"

#include "absl/container/flat_hash_set.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

bool IsZeroElementArray(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d : shape.dimensions())
    if (d == 0) return true;
  return false;
}

absl::flat_hash_set<const HloComputation*> CompositeComputations(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> out;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      if (inst->opcode() == O::kCall && !inst->called_computations().empty())
        for (const auto& [k, v] : inst->attrs().raw_attributes)
          if (k == "is_composite" && v == "true") out.insert(inst->called_computations()[0]);
  return out;
}

// An empty constant of `shape` (a default layout when it has none, as XLA's literal does),
// carrying over the replaced instruction's annotations.
std::unique_ptr<HloInstruction> EmptyConstantLike(const HloInstruction& inst) {
  Shape shape = inst.shape();
  if (!shape.has_layout()) shape.SetDefaultLayout();
  auto constant = std::make_unique<HloInstruction>(O::kConstant, shape, "constant");
  InstructionAttributes& a = constant->mutable_attrs();
  a.literal = Literal(shape);
  a.metadata = inst.attrs().metadata;
  a.sharding = inst.attrs().sharding;
  a.frontend_attributes = inst.attrs().frontend_attributes;
  return constant;
}

}  // namespace

absl::StatusOr<bool> ZeroSizedHloEliminationPass::Run(HloModule& module, PassContext&) {
  absl::flat_hash_set<const HloComputation*> composite = CompositeComputations(module);
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    if (computation->IsFusionComputation() || composite.contains(computation)) continue;
    absl::flat_hash_set<const HloInstruction*> removed;
    std::vector<const HloInstruction*> just_removed;
    for (HloInstruction* inst : computation->MakeInstructionPostOrder()) {
      if (removed.contains(inst)) continue;
      const Shape& shape = inst->shape();
      if (!IsZeroElementArray(shape) || !shape.is_static() || inst->opcode() == O::kConstant || HasSideEffect(*inst))
        continue;
      if (IsSafelyRemovable(*inst)) {
        HloInstruction* constant = AddInstructionWithUniqueName(*computation, EmptyConstantLike(*inst), names, inst);
        // XLA's ReplaceWithNewInstruction: uses move, and the instruction goes with the
        // operands only it used.
        inst->ReplaceAllUsesWith(constant);
        just_removed.clear();
        absl::Status st = RemoveInstructionAndUnusedOperands(inst, false, &just_removed);
        if (!st.ok()) return st;
        removed.insert(just_removed.begin(), just_removed.end());
        changed = true;
      } else if (inst->opcode() == O::kParameter && !HasControlDependencies(*inst) && !IsDead(*inst)) {
        // Placed right after the parameter, ahead of every user (the order is the schedule of a
        // scheduled module).
        const HloInstruction* next = nullptr;
        const auto& list = computation->instructions();
        for (size_t k = 0; k + 1 < list.size(); ++k)
          if (list[k].get() == inst) next = list[k + 1].get();
        HloInstruction* constant = AddInstructionWithUniqueName(*computation, EmptyConstantLike(*inst), names, next);
        inst->ReplaceAllUsesWith(constant);
        changed = true;
      }
    }
  }
  return changed;
}

void RegisterZeroSizedHloEliminationPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "zero_sized_hlo_elimination";
  info.description = "replaces instructions of zero-element array shape by empty constants";
  info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> {
    return std::make_unique<ZeroSizedHloEliminationPass>();
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
