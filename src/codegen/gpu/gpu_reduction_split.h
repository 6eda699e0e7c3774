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
// (GpuDeviceInfo; engine/tuning.h has the measurement).

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

// The row-major index of `linear` into `dims`, with 32-bit division where the product allows.
IrArray::Index DelinearizeNarrow(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b);

}  // namespace hloc::codegen::gpu
