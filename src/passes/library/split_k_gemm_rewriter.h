// split-k-gemm-rewriter: an f32 GEMM whose output is too small to fill the GPU but whose K is
// long (a weight gradient: m and n the layer's widths, K the tokens of the batch) is computed as
// S GEMMs over slices of K, batched in one cuBLAS call, and a reduce that adds the S partial
// products. XLA gets the same from its Triton GEMM fusions' split-K configurations
// (split_k_gemm_rewriter.cc, MakeDotSplitKBatch): eqx_mlp_lion's 1024x1024x8192 weight gradient
// is a [2,1024,1024] batched cuBLAS call there.
//
// Why: cuBLAS tiles the output (128x128 on Hopper f32), one CTA a tile; 64 tiles leave half of
// an H200's 132 SMs idle for the whole of a long K. cuBLASLt's own split-K configurations are
// autotuned too (runtime/gpu/cublaslt.cc) but are not always among the fastest.
//
// Which: a dot with one contracting dimension and no batch dimensions, f32 operands and result,
// 2-D operands whose contracting dimension is physically the most major (after layout
// assignment), so each slice of K is a bitcast of the operand. S is the power of two (at most
// split_k_max_split, dividing K, each slice at least split_k_min_depth long) that brings
// tiles * S closest to the SM count; GEMMs whose tiles (split_k_tile a side) already fill half
// the SMs are left alone. All three numbers are the profile's tuning knobs (engine/tuning.cc).
// Runs only under a GPU profile with an SM count.
#pragma once

#include "engine/pass.h"

namespace hloc {

class SplitKGemmRewriter : public HloPass {
 public:
  static constexpr const char* kName = "split-k-gemm-rewriter";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

// The split chosen for an m x n x k GEMM (1: none), exposed for tests.
int64_t ChooseSplitK(int64_t m, int64_t n, int64_t k, int64_t sm_count, int64_t tile, int64_t min_depth,
                     int64_t max_split);

}  // namespace hloc
