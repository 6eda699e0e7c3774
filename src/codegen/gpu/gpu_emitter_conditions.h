// The pure applicability conditions of the GPU emitters that are not launch-plan files of their
// own (gpu_reduction_row_plan.h and gpu_reduction_split.h are): shapes and the device only, no
// IR and no buffers. Each is the whole of its emitter's Try* check except what buffer
// assignment decides later (OutputsOverlapOperands) and generator failures, so that the fusion
// emitter analysis (fusion_emitter_kind.h) and the emitters cannot disagree.
// `outputs`: the kernel's result shapes, the array leaves of the instruction's shape, each with
// its layout (the default one where it has none), as KernelArguments gives them.
#pragma once
#include <vector>

#include "codegen/gpu/gpu_kernel_util.h"
#include "ir/computation.h"

namespace hloc::codegen::gpu {

// gpu_transpose_emitter.cc: TryEmitTransposeFusion's heroes and roots fit its tiles.
bool TransposeFusionApplies(const HloComputation& fused, const std::vector<Shape>& outputs, const GpuDeviceInfo& dev);
// gpu_transpose_emitter.cc: a transpose root TryEmitTiledTranspose tiles.
bool TiledTransposeApplies(const HloInstruction& transpose, const std::vector<Shape>& outputs);
// gpu_scan_emitter.cc: a reduce-window root that is a cumulative reduction.
bool CumulativeReduceWindowApplies(const HloInstruction& reduce_window, const std::vector<Shape>& outputs);

}  // namespace hloc::codegen::gpu
