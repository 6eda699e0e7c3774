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
  HloModule& module_;
  NameUniquer names_;
  NameUniquer computation_names_;
};

// Puts the computation's instructions back in definition order (operands before users) when
// a merge left a user ahead of its new definition; keeps the existing order otherwise.
absl::Status EnsureDefinitionOrder(HloComputation& computation);

}  // namespace hloc::fusion
