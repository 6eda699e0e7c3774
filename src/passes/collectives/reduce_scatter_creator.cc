#include "passes/collectives/reduce_scatter_creator.h"

#include <algorithm>
#include <optional>

#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "passes/collectives/collective_util.h"
#include "passes/pass_util.h"

namespace hloc {

using O = HloOpcode;

absl::StatusOr<bool> CreateReduceScatters(HloModule& module) {
  const DeviceCounts counts = DeviceCountsOf(module);
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* ds : c->MakeInstructionPostOrder()) {
      if (ds->opcode() != O::kDynamicSlice) continue;
      HloInstruction* ar = ds->operand(0);
      if (ar->opcode() != O::kAllReduce || ar->operand_count() != 1 || !ar->shape().IsArray()) continue;
      auto groups = CollectiveDeviceGroups(*ar, counts);
      if (!groups.ok() || groups->empty()) continue;
      auto dim = OwnChunkDimension(*ds, ar->shape(), *groups, counts);
      if (!dim) continue;
      auto rs = std::make_unique<HloInstruction>(O::kReduceScatter, ds->shape(), "reduce-scatter");
      rs->AppendOperand(ar->operand(0));
      rs->mutable_attrs() = ar->attrs();
      rs->mutable_attrs().dimensions = {*dim};
      rs->mutable_attrs().metadata = ds->attrs().metadata;
      rs->mutable_called_computations() = ar->called_computations();
      HloInstruction* added = AddInstructionWithUniqueName(*c, std::move(rs), names, ds);
      ds->ReplaceAllUsesWith(added);
      if (c->root_instruction() == ds) c->set_root_instruction(added);
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
