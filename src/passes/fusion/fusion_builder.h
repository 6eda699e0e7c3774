// Building fusions: one operation, Merge, serves every fusion pass. It folds a group of
// instructions of one computation (plain instructions and fusions alike) into a single new
// fusion, as XLA's HloInstruction::FuseInstruction / FuseInstructionIntoMultiOutput /
// MergeFusionInstruction do between them:
//   - PriorityFusion merges {producer, consumer} with the producer "duplicated" when it has
//     other consumers (a copy is computed in the new kernel; the original stays for the rest);
//   - producer-consumer multi-output fusion merges {producer, consumer}: the producer's value
//     becomes an extra output that its other users read through get-tuple-element;
//   - sibling multi-output fusion merges two consumers of a common operand.
// Fused computations are cloned flat (fusions never nest); names follow XLA ("fusion",
// "fused_computation", "param_0"); rename_fusions gives them their final names.
#pragma once
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass_util.h"

namespace hloc::fusion {

class FusionBuilder {
 public:
  explicit FusionBuilder(HloModule& module)
      : module_(module), names_(InstructionNameUniquer(module)), computation_names_(ComputationNameUniquer(module)) {}

  // Folds `members` (instructions of one non-fusion computation; fusions or fusible plain
  // instructions; any order) into one new fusion and returns it. Members in `duplicated` are
  // copied in but keep their originals (removed only if nothing else uses them); every other
  // member's value that is used outside the group (or is the root) becomes an output, so
  // several such values make a multi-output fusion with a tuple root. The old members and
  // their fused computations are removed.
  absl::StatusOr<HloInstruction*> Merge(const std::vector<HloInstruction*>& members,
                                        const absl::flat_hash_set<HloInstruction*>& duplicated = {});

  // Wraps one plain instruction into a fusion of its own (XLA's FusionWrapper).
  absl::StatusOr<HloInstruction*> Wrap(HloInstruction* inst) { return Merge({inst}); }

  NameUniquer& instruction_names() { return names_; }
  NameUniquer& computation_names() { return computation_names_; }

 private:
  // XLA's HloFusionInstruction::FuseInstruction: when `consumer` is a single-output fusion this
  // builder made, fuses `producer` into its body in place, cloning only the producer, and
  // returns the consumer; null (nothing changed) when the result could differ from what
  // Merge({producer, consumer}) builds. The grown fusion is the one Merge would build, down to
  // names, parameter numbers, the order of its body and of the module's computations, and a
  // new unique id (analyses cached by id see a new fusion). Rebuilding cloned the consumer's
  // whole body on every merge: a fusion that absorbs its producers one by one (a constant
  // shared by hundreds of consumers, a reduction over every layer) made priority-fusion
  // quadratic in the module.
  absl::StatusOr<HloInstruction*> FuseInPlace(HloInstruction* producer, HloInstruction* consumer, bool duplicate);
  bool CanFuseInPlace(const HloInstruction* producer, const HloInstruction* consumer, bool duplicate) const;

  HloModule& module_;
  NameUniquer names_;
  NameUniquer computation_names_;
  // Fused computations this builder made (Merge or FuseInPlace) and that still exist: their
  // instructions are in definition order with operands first and none dead, so their order is
  // their post order, which is what Merge's clone would keep.
  absl::flat_hash_set<const HloComputation*> built_;
};

// Puts the computation's instructions back in definition order (operands before users) when
// a merge left a user ahead of its new definition; keeps the existing order otherwise.
absl::Status EnsureDefinitionOrder(HloComputation& computation);

}  // namespace hloc::fusion
