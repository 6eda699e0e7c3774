// fusion-emitter-assignment (issue 15 item 1): the emitter each fusion gets, decided once after
// the last fusion pass and recorded in its backend_config as XLA records its custom fusions'
// kinds, {"fusion_backend_config":{"kind":"__hloc_row_reduction","block":[..],"grid":[..]}}
// (ir/fusion_backend_config.h). Codegen then only reads it, and the optimized HLO dump says which
// kernel each fusion becomes.
//
// Layering: which emitter takes a fusion is a question about codegen's emitters, answered by
// their pure applicability conditions (codegen/gpu/fusion_emitter_kind.h, over the launch-plan
// files). Those live in hloc_codegen, which links hloc_passes; passes must not include or link
// codegen. So this pass holds only a pointer to the analysis, which codegen installs when it is
// linked in (fusion_emitter_kind.cc, at static initialization). Without it (a binary or test
// with the passes but no GPU codegen) the pass records nothing, and codegen, which then finds no
// kind, asks the same analysis itself. Either way there is one analysis.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/pass.h"

namespace hloc {

struct HardwareProfile;

// What the analysis says of one fusion: its kind ("__hloc_..."), and its launch plan where the
// kind's emitter plans it before any IR (x, y, z; empty: decided while emitting).
struct FusionEmitterRecord {
  std::string kind;
  std::vector<int64_t> block, grid;
};
using FusionEmitterAnalysis = FusionEmitterRecord (*)(const HloInstruction& fusion, const HardwareProfile* profile);

void SetFusionEmitterAnalysis(FusionEmitterAnalysis analysis);
// Null when no codegen installed one.
FusionEmitterAnalysis GetFusionEmitterAnalysis();

class FusionEmitterAssignment : public HloPass {
 public:
  static constexpr const char* kName = "fusion-emitter-assignment";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
