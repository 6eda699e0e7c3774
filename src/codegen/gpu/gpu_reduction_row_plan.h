// The plan of a row reduction (gpu_reduction_emitter.cc): which fusions reduce rows (the
// trailing dimensions of one input shape, with whatever depends on a reduce staying on its row),
// and how their kernel is launched. Plans only: no IR is emitted here.
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <vector>

#include "codegen/gpu/gpu_kernel_util.h"
#include "ir/computation.h"

namespace hloc::codegen::gpu {

// A fusion as rows: its reduce input [kept..., reduced...] viewed as [rows, row_len].
struct RowPlan {
  using Dims = std::vector<int64_t>;
  Dims in_dims, kept_dims, reduced_dims;
  int64_t rows = 1, row_len = 1;
  std::vector<const HloInstruction*> reduces;  // post order
  std::vector<const HloInstruction*> outputs;
  std::vector<bool> output_is_row;
  // Shapes other than in_dims / kept_dims that values of the row's / the reduced element count
  // take (reshape operands and results, parameters, outputs): each gets its own index of the
  // element being generated, so reshapes between them map indices without div/mod.
  std::set<Dims> row_shapes, kept_shapes;
};

// The fusion's rows, when every reduce reduces the trailing dimensions of one input shape and
// whatever depends on a reduce stays on its row; nullopt otherwise.
std::optional<RowPlan> AnalyzeRows(const HloComputation& fused);

// A reshape, or a bitcast that is one (row-major layouts on both sides, one element type).
bool IsReshapeLike(const HloInstruction* inst);

// How a row-reduction kernel is launched (XLA: the tiling of ReductionInfo): threads per row,
// rows per block, whether a thread keeps its share of a row in registers and with which vector
// width. Numbers only, from the analyzed rows, the fusion and the device; no IR.
struct RowLaunchPlan {
  bool long_rows = false;   // rows of at least the profile's row_reduction_long_row_elements
  int64_t per_row = 32;     // threads per row
  int64_t rows_per_block = 1;
  int64_t vec = 1;          // V: consecutive elements per vector access
  int64_t per_thread = 0;   // K: a thread's elements of each row, kept in registers; 0: not kept
  bool rereads = false;     // a chain's passes after the first read the row from memory again
  int64_t fold_unroll = 1;  // U: elements one fold loop trip reads (rows not in registers)
  int64_t block = 1;        // threads per block
  int64_t groups = 1;       // blocks' worth of rows
  int64_t grid = 1;         // blocks launched; they stride over the groups
  bool in_registers() const { return per_thread > 0; }
  int64_t warps_per_row() const { return per_row / 32; }
};

// The launch plan of the rows `plan` found (rows and row_len both positive).
RowLaunchPlan ComputeRowLaunchPlan(const RowPlan& plan, const HloComputation& fused, const GpuDeviceInfo& dev);

// A few long rows without chains (full reductions): a block per row would leave most SMs idle,
// so the row emitter leaves the fusion to the split emitter when AnalyzeSplit finds a plan.
bool RowDefersToSplit(const RowPlan& plan, const RowLaunchPlan& launch, const HloComputation& fused,
                      const GpuDeviceInfo& dev);

// The rows of `fused` when the row emitter takes it with `num_outputs` kernel results: rows
// with as many outputs, something to reduce (else the loop kernel writes the inits), and not
// deferred to the split emitter. This is the whole condition: TryEmitRowReduction emits every
// fusion it accepts (fusion_emitter_kind.h relies on that).
std::optional<RowPlan> RowReductionFor(const HloComputation& fused, size_t num_outputs, const GpuDeviceInfo& dev);

}  // namespace hloc::codegen::gpu
