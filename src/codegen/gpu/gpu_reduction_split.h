// The plan of a split reduction (gpu_reduction_split.cc): how a fusion's reduce input is viewed as
// [B, R, C], and which parameters its reduces read through elementwise ops and transposes only.
#pragma once
#include <map>
#include <optional>
#include <vector>

#include "codegen/gpu/gpu_kernel_util.h"

namespace hloc::codegen::gpu {

// What both reduction emitters start from: the fusion's reduces in post order, the first one's
// input dimensions and its reduced dimensions (sorted, not empty); nullopt without a reduce.
struct ReduceHead {
  std::vector<const HloInstruction*> reduces;
  std::vector<int64_t> in_dims;
  std::vector<int64_t> reduced;
};
std::optional<ReduceHead> AnalyzeReduceHead(const HloComputation& fused);

// Fused computations longer than this are "long chains": the split emitter plans them at half
// occupancy without vectors or unrolling, the row emitter gives rows shorter than a warp one
// thread each. The corpus's reductions at full occupancy without spills (softmax, layernorm,
// optimizer norms) have under 40 instructions; numpyro's 376-instruction chains spilled.
inline constexpr int64_t kLongChainInstructions = 96;
// Reductions of one result whose fused element costs at most this (the cost model's relative
// op costs, rules/fusion/FusionCosts.td, summed over the fused computation) are planned at full
// occupancy (32 registers a thread); the others at half (64), where their unrolled, vectorized
// folds fit without spilling. The bound is the profile's tuning split_reduction_light_cost
// (GpuDeviceInfo; engine/tuning.h has the measurement): SplitLaunchPlan::light.

struct SplitPlan {
  std::vector<int64_t> in_dims;
  std::vector<int64_t> b_dims, r_dims, c_dims;  // positions in in_dims
  std::vector<int64_t> kept_dims;               // the reduced shape's dimensions
  int64_t B = 1, R = 1, C = 1;
  std::vector<const HloInstruction*> reduces;
  struct Output {
    const HloInstruction* inst;
    int member;    // >= 0: a member of a variadic reduce root
    bool is_input;  // of the input's shape, written while folding
    bool reshaped = false;  // a reshape of a kept-shaped value (keepdims): written by linear index
  };
  std::vector<Output> outputs;
};

// The plan of `fused` when every reduce reduces the same dimensions of operands of one shape and
// nothing reads a reduce but elementwise epilogues of the reduced shape; nullopt otherwise.
std::optional<SplitPlan> AnalyzeSplit(const HloComputation& fused);

// Parameters whose elements the reduces read through elementwise ops, copies and transposes only:
// parameter index[i] = reduce input index[map[i]].
std::map<int64_t, std::vector<int64_t>> TraceParameters(const SplitPlan& p);

// How a split reduction is launched and how its threads read (XLA: the tiling of ReductionInfo
// and reduction_utils' split of R): vector loads, block and column tiles, splits of R and the
// fold's unrolling. Numbers only, decided before any IR.
struct SplitLaunchPlan {
  bool column = false;      // C > 1: 32 x 32V tiles of columns; else blocks fold slices of rows
  bool long_chain = false;  // see kLongChainInstructions: no vectors, no unrolling, half occupancy
  bool light = false;       // full occupancy (the bound above: split_reduction_light_cost)
  int64_t V = 1;            // elements (rows) or adjacent columns (columns) per vector load
  int64_t fast_dim = -1;    // the input dimension the V elements of a vector step along
  std::map<int64_t, std::vector<int64_t>> vector_params;  // read V at a time: parameter -> index map
  int64_t block = 256;      // threads per block
  int64_t tile_cols = 1;    // columns per block
  int64_t tiles = 1;        // column tiles per b
  int64_t per_sm = 1;       // blocks planned per SM
  int64_t S = 1;            // splits of R (S > 1: partials in global scratch, the last block folds)
  int64_t chunk = 1;        // R elements per split, a multiple of V
  int64_t units = 1;        // (b, column tile, split) units the blocks stride over
  int64_t grid = 1;         // blocks launched
  int64_t U = 1;            // loop trips folded together (loads in flight)
  int64_t min_blocks_per_sm = 0;  // occupancy asked of ptxas; 0: none
  bool column_vector() const { return column && V > 1; }
  int64_t warps() const { return block / 32; }
};

// Whether AnalyzeSplit finds a plan (the row emitter defers to the split emitter for a few long
// rows without chains, when SplitReductionFor also accepts the fusion).
bool SplitReductionApplies(const HloComputation& fused);

// Small column reductions the loop kernel computes faster than the split emitter's tiles.
bool ColumnPrefersLoop(const SplitPlan& p);

// The plan of `fused` when the split emitter takes it with `num_outputs` kernel results (the
// array leaves of the fusion's shape): AnalyzeSplit's plan with as many outputs, something to
// reduce (B * C and R positive; else the loop kernel writes the inits), and not a column
// reduction the loop kernel does faster. nullopt otherwise. This is the whole condition:
// TryEmitSplitReduction emits every fusion it accepts (fusion_emitter_kind.h relies on that).
std::optional<SplitPlan> SplitReductionFor(const HloComputation& fused, size_t num_outputs);

// The launch plan of `p` (B * C and R positive) for kernel operands of shapes `operands` (the
// array leaves of the fusion's operands, with their layouts) and `num_outputs` results. For rows
// it also orders p.r_dims: the reduced dimensions are walked in the physical order of the
// largest parameter the reduces read.
SplitLaunchPlan ComputeSplitLaunchPlan(SplitPlan& p, const HloComputation& fused, const std::vector<Shape>& operands,
                                       size_t num_outputs, const GpuDeviceInfo& dev);

// The row-major index of `linear` into `dims`, with 32-bit division where the product allows.
IrArray::Index DelinearizeNarrow(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b);

}  // namespace hloc::codegen::gpu
