// The GPU kernel emitters behind GpuKernelEmitter (gpu_kernel_emitter.cc picks one per kernel):
//   loop        gpu_loop_emitter.cc       thread per element (or per vector of 2-8 elements with
//                                         16-byte stores when contiguous), grid-stride;
//   reduction   gpu_reduction_emitter.cc  row reductions and the reduce -> elementwise -> reduce
//                                         chains fusion makes (warp shuffles, shared memory);
//   transpose   gpu_transpose_emitter.cc  32x32 tiles through shared memory, with the
//                                         elementwise roots above the transposes fused in;
//   sort, top-k gpu_sort_emitter.cc       dispatch: bitonic sort in registers + shuffles
//                                         (gpu_sort_registers.cc), warp top-k (gpu_topk_warp.cc);
//                                         fallbacks in shared / global memory for long rows;
//   radix sort  gpu_radix_sort.cc         hloc's "__hloc$radix_sort" custom call: LSD radix,
//                                         a 1024-thread block per row;
//   others      gpu_special_emitters.cc   scatter (atomics or a serial deterministic path),
//                                         in-place dynamic-update-slice, scan, select-and-scatter.
// Each fills the kernel body and k.launch.
#pragma once
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/gpu/gpu_kernel_util.h"

namespace hloc::codegen::gpu {

// One output leaf of a loop kernel: `gen` evaluated at the output's logical index; when
// `member` >= 0 the generator yields a struct (variadic reduce, reduce-window) and the leaf is
// that member.
struct LoopOutput {
  size_t output = 0;
  ElementGenerator gen;
  int member = -1;
};
absl::Status EmitLoopKernel(GpuKernel& k, const std::vector<LoopOutput>& outputs);

// Row reductions: every reduce of the fused computation reduces the trailing dimensions of one
// input shape and everything that depends on a reduce maps rows to rows. Returns false (and
// emits nothing) exactly when RowReductionFor (gpu_reduction_row_plan.h) refuses the fusion.
absl::StatusOr<bool> TryEmitRowReduction(GpuKernel& k, const HloComputation& fused,
                                         const std::function<ElementGenerator(int64_t)>& parameter);
// Column reductions, and rows split across blocks (gpu_reduction_split.cc). Returns false (and
// emits nothing) exactly when SplitReductionFor (gpu_reduction_split.h) refuses the fusion.
absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter);
// A fusion with reduces that the loop kernel computes (neither rows nor a split reduction):
// warns on stderr when that recomputes a large reduce for every element of a chain.
void WarnLoopReduction(const GpuKernel& k, const HloComputation& fused);

// A transpose root whose minor dimension moves: tiles through shared memory. Returns false
// when the root is not such a transpose (or too small to gain from tiling).
absl::StatusOr<bool> TryEmitTiledTranspose(GpuKernel& k, const HloInstruction& transpose,
                                           const ElementGenerator& operand);
// A fusion with a transpose "hero" (a transpose or layout-changing copy that moves the minor
// dimension) under elementwise roots (XLA's TransposeFusion): the heroes' operands go through
// shared-memory tiles, roots without a hero are written at the heroes' operand positions.
// Returns false (emitting nothing) when the fusion has no such hero.
absl::StatusOr<bool> TryEmitTransposeFusion(GpuKernel& k, const HloComputation& fused,
                                            const std::function<ElementGenerator(int64_t)>& parameter);

absl::Status EmitSortKernel(GpuKernel& k, const HloInstruction& sort);
// "__hloc$radix_sort" custom calls (eval/sort_calls.h): gpu_radix_sort.cc.
absl::Status EmitRadixSortKernel(GpuKernel& k, const HloInstruction& call);
absl::Status EmitTopKKernel(GpuKernel& k, const HloInstruction& topk);
absl::Status EmitScanKernel(GpuKernel& k, const HloInstruction& scan);
// gpu_scan_emitter.cc: a scan of one associative carry (cumsum, cumprod) as a parallel block
// scan; a reduce-window whose window spans one whole dimension, padded n-1 on one side (a
// cumulative reduction), likewise. Return false (emitting nothing) for other forms.
absl::StatusOr<bool> TryEmitParallelScan(GpuKernel& k, const HloInstruction& scan);
absl::StatusOr<bool> TryEmitCumulativeReduceWindow(GpuKernel& k, const HloInstruction& reduce_window,
                                                   const ElementGenerator& operand, const ElementGenerator& init);
absl::Status EmitSelectAndScatterKernel(GpuKernel& k, const HloInstruction& sas);
// `operand_gen(i)`: operand i of the scatter / dynamic-update-slice; `operand_leaf(i)`: the
// kernel operand leaf operand i reads directly (a fusion parameter or an unfused operand), or -1.
absl::Status EmitScatterKernel(GpuKernel& k, const HloInstruction& scatter,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<int64_t(int64_t)>& operand_leaf);
absl::Status EmitDynamicUpdateSliceKernel(GpuKernel& k, const HloInstruction& dus,
                                          const std::function<ElementGenerator(int64_t)>& operand_gen,
                                          const std::function<int64_t(int64_t)>& operand_leaf);
// A multi-output fusion whose outputs are dynamic-update-slices with updates of one shape
// (horizontal-in-place-fusion): one thread per update element writes every in-place update.
// `gen_of(i)`: the generator of fused instruction i; `leaf_of(i)`: the kernel operand leaf a
// fused parameter reads, or -1.
absl::Status EmitMultiDynamicUpdateSliceKernel(GpuKernel& k, const std::vector<const HloInstruction*>& dus,
                                               const std::function<ElementGenerator(const HloInstruction*)>& gen_of,
                                               const std::function<int64_t(const HloInstruction*)>& leaf_of);

}  // namespace hloc::codegen::gpu
