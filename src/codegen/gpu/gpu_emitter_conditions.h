// The pure applicability conditions and launch plans of the GPU emitters that are not launch-plan
// files of their own (gpu_reduction_row_plan.h and gpu_reduction_split.h are): shapes and the
// device only, no IR and no buffers. Each is the whole of its emitter's Try* check except what buffer
// assignment decides later (OutputsOverlapOperands) and generator failures, so that the fusion
// emitter analysis (fusion_emitter_kind.h) and the emitters cannot disagree.
// `outputs`: the kernel's result shapes, the array leaves of the instruction's shape, each with
// its layout (the default one where it has none), as KernelArguments gives them.
#pragma once
#include <optional>
#include <vector>

#include "codegen/gpu/gpu_kernel_util.h"
#include "ir/computation.h"

namespace hloc::codegen::gpu {

// gpu_transpose_emitter.cc: a transpose root TryEmitTiledTranspose tiles. (Whether a transpose
// fusion's heroes and roots fit TryEmitTransposeFusion's tiles: TransposeFusionLaunch below.)
bool TiledTransposeApplies(const HloInstruction& transpose, const std::vector<Shape>& outputs);
// The launch of the tiles those two emit (blocks of 32x8 threads, a grid-stride loop over the
// tiles); nullopt where the emitter does not apply.
std::optional<runtime::LaunchDimensions> TransposeFusionLaunch(const HloComputation& fused,
                                                               const std::vector<Shape>& outputs,
                                                               const GpuDeviceInfo& dev);
std::optional<runtime::LaunchDimensions> TiledTransposeLaunch(const HloInstruction& transpose,
                                                              const std::vector<Shape>& outputs,
                                                              const GpuDeviceInfo& dev);

// gpu_loop_emitter.cc: the loop kernel's plan for the outputs it writes (`outputs`, in its
// order): outputs of equal dimensions and layout share a grid-stride loop, each loop's threads
// take `vec` consecutive elements (one store of up to 16 bytes) where the minor dimension, the
// size and the slices' byte offsets allow, and the launch covers the largest loop.
// `output_offsets`: the byte offsets of the outputs' slices, as buffer assignment placed them;
// empty (the fusion emitter analysis, before buffers) takes them as aligned, which GPU buffer
// assignment makes them (every slice at a multiple of 256 bytes, the widest store is 16).
struct LoopKernelPlan {
  std::vector<std::vector<size_t>> groups;  // indices into `outputs`, one loop each
  std::vector<int64_t> vec;                 // elements per thread, per group
  runtime::LaunchDimensions launch;
};
LoopKernelPlan PlanLoopKernel(const std::vector<Shape>& outputs, const std::vector<int64_t>& output_offsets,
                              const GpuDeviceInfo& dev);
// gpu_scan_emitter.cc: a reduce-window root that is a cumulative reduction.
bool CumulativeReduceWindowApplies(const HloInstruction& reduce_window, const std::vector<Shape>& outputs);
// Its scan's launch: scanned dimension minor, a block per row (blocks of up to 1024 threads over
// the row's tiles, at most 8 waves of blocks); else blocks of 32 columns x up to 32 chunks.
// nullopt where the emitter does not apply, or the serial form is as good (a scanned dimension
// shorter than 2, no elements).
std::optional<runtime::LaunchDimensions> CumulativeReduceWindowLaunch(const HloInstruction& reduce_window,
                                                                      const std::vector<Shape>& outputs,
                                                                      const GpuDeviceInfo& dev);

// gpu_special_emitters.cc: a multi-output dynamic-update-slice fusion (`dus`: its root tuple's
// operands, one per output): one grid-stride launch over the update's elements (the updates
// have one shape), whichever outputs buffer assignment makes the updated operands' buffers
// (written in place, in the one loop over the update) or not (copied whole, in loops of their
// own under the same launch). nullopt where an operand is not a dynamic-update-slice, the
// updates differ in shape, or the outputs are not one per update.
std::optional<runtime::LaunchDimensions> MultiDynamicUpdateSliceLaunch(const std::vector<const HloInstruction*>& dus,
                                                                       const std::vector<Shape>& outputs,
                                                                       const GpuDeviceInfo& dev);

}  // namespace hloc::codegen::gpu
