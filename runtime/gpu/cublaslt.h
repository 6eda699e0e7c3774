// kGemm thunks on cuBLASLt, loaded at run time (dlopen libcublasLt.so.13, then .12). XLA:
// xla/stream_executor/cuda/cuda_blas_lt.cc and xla/service/gpu/runtime/gemm_thunk.cc.
//
// runtime::GemmConfig describes row-major [batch, rows, cols] views (executable.h): A is stored
// [m, k] ([k, m] when lhs_transposed), B [k, n] ([n, k]), D [m, n], leading dims are the stored
// row strides. cuBLAS is column-major, and a row-major X with leading dim ld is the column-major
// X^T with the same ld, so we ask cuBLASLt for D^T = op(B)^T op(A)^T: its "A" is our B, its "B"
// our A, its M our n and its N our m. A BIAS epilogue's vector (n elements, added to every row
// of D) is then cuBLASLt's per-row bias of D^T, which is what it implements.
//
// Types: f32 (TF32 tensor cores when GpuGemmOptions::allow_tf32, as XLA's DEFAULT precision;
// compute_type "f32_highest" never), f64, bf16 and f16 (f32 accumulation), s8 -> s32 (int32
// accumulation), f8e4m3fn/f8e5m2 (f32 accumulation; cuBLASLt takes them in its "TN" layout:
// A row-major [m, k] and B stored [n, k]). Epilogues DEFAULT, BIAS, RELU, BIAS_RELU, GELU,
// BIAS_GELU (GELU is the tanh approximation; beta is ignored with a bias, as the CPU runtime).
// Complex: c64 (CUDA_C_32F; f32 accumulation, TF32 under the f32 rule, as XLA's kTF32AsF32 for
// C64) and c128 (CUDA_C_64F, f64), all three operands one type, complex alpha (alpha,
// alpha_imag) and real beta in a complex scale type, no epilogue. HLO's dot never conjugates,
// so the operations stay N/T as for real types (never CUBLAS_OP_C).
//
// Algorithms: GemmConfig::algorithm >= 0 picks the heuristic's candidate of that index; else
// the autotune cache's entry for (profile, library version, problem) when it still checks, else
// the heuristic's candidates are timed once (autotune on) or its first is taken (off).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

// Why cuBLASLt cannot be loaded, or OK (tests skip on it).
absl::Status CublasLtAvailable();
// "cublasLt-130100" (the loaded library's version), or an error.
absl::StatusOr<std::string> CublasLtVersionString();

struct GemmOptions {
  bool allow_tf32 = true;
  bool autotune = true;
  std::string profile;                // part of the autotune key
  AutotuneCache* cache = nullptr;     // may be null
};

#if HLOC_HAVE_CUDA

struct GemmPlanState;

// One kGemm thunk's descriptors and chosen algorithm. Create checks the config against the
// buffer sizes; Prepare picks the algorithm (it may run the GEMM on the given buffers while
// timing, so call it before they hold data); Run enqueues the product on `stream` (it may be
// captured into a CUDA graph: no allocation, no synchronization).
class CublasLtGemm {
 public:
  // `has_c`: a third argument (bias for BIAS* epilogues, else C); sizes are the slices' bytes.
  static absl::StatusOr<std::unique_ptr<CublasLtGemm>> Create(const CudaContext& context, const GemmConfig& config,
                                                             bool has_c, int64_t a_bytes, int64_t b_bytes,
                                                             int64_t c_bytes, int64_t d_bytes,
                                                             const GemmOptions& options, const std::string& name);
  ~CublasLtGemm();
  absl::Status Prepare(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                       CUdeviceptr workspace, int64_t workspace_bytes);
  absl::Status Run(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                   CUdeviceptr workspace, int64_t workspace_bytes) const;
  // "bf16 x bf16 -> bf16 [batch 1] 1024x1024x512 NT epilogue BIAS_RELU" for messages.
  const std::string& description() const;
  const std::string& key() const;          // the autotune cache's problem key
  const std::string& chosen_by() const;    // "cache", "autotune (8 candidates)", "heuristic", "config"

 private:
  CublasLtGemm() = default;
  std::unique_ptr<GemmPlanState> state_;
};

// The normalized config (compact leading dims / batch strides filled in) or an error.
absl::StatusOr<GemmConfig> NormalizeGpuGemmConfig(const GemmConfig& config);

#endif  // HLOC_HAVE_CUDA

// The workspace each executable gives cuBLASLt (XLA: 32 MiB on Hopper).
constexpr int64_t kCublasLtWorkspaceBytes = int64_t{32} << 20;

}  // namespace hloc::runtime::gpu
