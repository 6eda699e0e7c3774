// Our own kernel for small GEMMs (the role XLA's Triton GEMM fusions play for tiny dots):
//   D[b] = alpha * op(A[b]) x op(B[b]) (+ beta * C[b]) (+ bias), then ReLU or GELU (tanh form),
// with the runtime::GemmConfig of a kGemm thunk (row-major [batch, rows, cols] views, transposes,
// leading dims, batch strides; runtime/executable/executable.h). Inputs f32, bf16 or f16 (the
// same type for A and B), f32 accumulation with FMA, output f32 / bf16 / f16.
//
// Why: cuBLAS(Lt) picks 64x64 (or larger) tiles, so a 64x512 output runs on 8 CTAs, plus a
// split-K reduction kernel: ~10 us for what is ~1 us of work (scan_rnn.large's recurrent step).
// Kernel shape: one block computes a tile of `rows` x 32 outputs of one batch; each lane owns one
// output column and `rows` accumulators; the block's `warps` warps split the K range (A read as
// uniform 4-element vector loads, B coalesced across the lanes; the K loop software-pipelined:
// the next batch's loads are issued before this batch's FMAs), and their partial sums are added
// in shared memory in warp order (deterministic) before the epilogue. A 64x512 output is 256
// blocks of 4 x 32 outputs and 8 warps. C may be D's own buffer: each thread reads C before
// writing the same D element.
//
// Used (gpu_kernel_emitter.cc) for the GEMMs small-gemm-selector marked (custom_call_target
// "__hloc$small_gemm", or a dot's backend_config "kind":"__hloc$small_gemm"): by default
// batch*m*n*k <= 2^24 and min(m, n) <= 128 (the profile's tuning), where cuBLAS cannot fill the
// GPU and launches split-K reductions. Larger problems stay on cuBLAS (its tensor cores win there): with the
// limit raised to 2^26 or 2^27 flax_gru_train.large took 6.68 / 7.54 ms against 6.01 (H200,
// 2026-12-02). Still ahead of cuBLAS after its autotuning was timed in graphs with split-K
// candidates: scan_rnn.large 1.77 ms with the kernel, 2.00 ms with cuBLAS.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/gpu/gpu_kernel_util.h"
#include "codegen/gpu/gpu_small_gemm_options.h"
#include "llvm/IR/Module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen::gpu {

// Which kernel parameter holds each GEMM argument (c: C when beta != 0, the bias for BIAS*
// epilogues, -1 for neither).
struct SmallGemmRoles {
  int a = 0, b = 1, c = -1, d = 2;
};

// A checked plan for a GEMM small-gemm-selector marked (passes/library/small_gemm_selector.h
// decides which, with SmallGemmApplies): the kernel can compute it (types, epilogue), the roles
// valid, every view inside its slice, A and B not D's bytes, the tile (options: overrides).
struct SmallGemmPlan {
  runtime::GemmConfig config;  // leading dims and batch strides made explicit
  SmallGemmRoles roles;
  std::vector<runtime::BufferSlice> params;  // the kernel's parameters, in order
  int64_t rows = 8, warps = 4;               // block tile: rows x 32 outputs, warps split K
  int64_t depth = 2;                         // vector steps per pipelined batch of loads
  int64_t m_tiles = 1, n_tiles = 1;
};
std::optional<SmallGemmPlan> PlanSmallGemm(const runtime::GemmConfig& g, const SmallGemmRoles& roles,
                                           const std::vector<runtime::BufferSlice>& params,
                                           const GpuDeviceInfo& device, const SmallGemmOptions& options);

// Emits the kernel `name` (a ptx_kernel with one pointer per plan.params) and returns its launch.
absl::StatusOr<runtime::LaunchDimensions> EmitSmallGemmKernel(llvm::Module* module, const std::string& name,
                                                             const SmallGemmPlan& plan);

}  // namespace hloc::codegen::gpu
