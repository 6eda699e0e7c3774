#include "passes/fusion/fusion_emitter_assignment.h"

#include "engine/profile.h"
#include "ir/fusion_backend_config.h"
#include "ir/module.h"

namespace hloc {

namespace {
FusionEmitterAnalysis& Installed() {
  static FusionEmitterAnalysis analysis = nullptr;
  return analysis;
}
}  // namespace

void SetFusionEmitterAnalysis(FusionEmitterAnalysis analysis) { Installed() = analysis; }
FusionEmitterAnalysis GetFusionEmitterAnalysis() { return Installed(); }

absl::StatusOr<bool> FusionEmitterAssignment::Run(HloModule& module, PassContext& context) {
  if (context.profile != nullptr && context.profile->kind != "gpu") return false;
  FusionEmitterAnalysis analysis = GetFusionEmitterAnalysis();
  if (analysis == nullptr) return false;
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& i : comp->instructions()) {
      HloInstruction* inst = i.get();
      if (inst->opcode() != HloOpcode::kFusion || inst->fused_instructions_computation() == nullptr) continue;
      // A kind XLA recorded (its custom fusions) is not ours to replace.
      const std::string& config = inst->attrs().backend_config;
      if (std::optional<std::string> kind = FusionBackendConfigKind(config);
          kind && kind->rfind(kHlocFusionKindPrefix, 0) != 0)
        continue;
      const FusionEmitterRecord record = analysis(*inst, context.profile);
      std::optional<std::string> updated = WithFusionBackendConfig(config, record.kind, record.block, record.grid);
      if (!updated || *updated == config) continue;  // a backend_config that is not a JSON object: left alone
      inst->mutable_attrs().backend_config = *updated;
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
