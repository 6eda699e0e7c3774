// Which emitter a fusion gets (issue 15 item 1; XLA: HloFusionAnalysis::GetEmitterFusionKind).
// One analysis, over the emitters' pure conditions (the launch-plan files and
// gpu_emitter_conditions.h), in the order codegen always tried them: row reduction, split
// reduction, transpose fusion, dynamic-update-slice, then by the root: scatter, cumulative
// reduce-window, tiled transpose, else the loop kernel.
//   - fusion-emitter-assignment (passes/fusion/fusion_emitter_assignment.h) records it in each
//     fusion's backend_config, through the pointer this file installs;
//   - GpuKernelEmitter dispatches on the recorded kind, and calls this analysis itself only
//     where none is recorded (--no-passes, .hlox written before the pass existed);
//   - --explain-fusion names the same kinds (through the same pointer).
// Layering: this file depends on ir/, the launch-plan files and the conditions header only (no
// emitter, nothing in passes/ but the pointer's declaration): codegen -> passes, never back.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "codegen/gpu/gpu_kernel_util.h"
#include "ir/instruction.h"

namespace hloc {
struct HardwareProfile;
}

namespace hloc::codegen::gpu {

enum class FusionEmitterKind {
  kLoop,
  kRowReduction,
  kSplitReduction,
  kTranspose,              // a fusion with transpose heroes (XLA's TransposeFusion)
  kTiledTranspose,         // a transpose root tiled on its own
  kDynamicUpdateSlice,
  kScatter,
  kCumulativeReduceWindow,
};

struct FusionEmitterChoice {
  FusionEmitterKind kind = FusionEmitterKind::kLoop;
  // Threads per block and blocks (x, y, z) where the kind's emitter plans them before any IR,
  // from the same plan functions the emitter calls (row and split reductions, the loop kernel,
  // the transpose tiles, the cumulative reduce-window scan, the multi-output
  // dynamic-update-slice); empty: decided while emitting (a single dynamic-update-slice and
  // scatter: in place or not, which buffer assignment decides after the pass) or for an unfused
  // instruction.
  std::vector<int64_t> block, grid;
};

// "__hloc_loop", "__hloc_row_reduction", ...: the kind as recorded in backend_config.
std::string_view FusionEmitterKindName(FusionEmitterKind kind);
std::optional<FusionEmitterKind> FusionEmitterKindFromName(std::string_view name);
// The kernel thunk's emitter name ("loop", "row-reduction", "split-reduction", ...).
std::string_view FusionEmitterThunkName(FusionEmitterKind kind);

// The emitter `hlo` gets: a fusion, or an unfused instruction that becomes a kernel on its own
// (then only its opcode's emitters apply). Instructions with an emitter of their own (sort,
// top-k, scan, select-and-scatter, custom calls) are not asked about.
FusionEmitterChoice ChooseFusionEmitter(const HloInstruction& hlo, const GpuDeviceInfo& dev);

// The recorded kind of a fusion (fusion_backend_config.kind starting with "__hloc_"); nullopt
// when none is recorded. An "__hloc_" kind this build does not know is an error.
absl::StatusOr<std::optional<FusionEmitterKind>> RecordedFusionEmitterKind(const HloInstruction& hlo);

// The kernel emitters' device facts from a hardware profile (null or not a GPU: the defaults).
GpuDeviceInfo GpuDeviceInfoFromProfile(const HardwareProfile* profile);

}  // namespace hloc::codegen::gpu
