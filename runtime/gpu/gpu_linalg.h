// The GPU runtime's dense linear algebra (runtime/executable/linalg_config.h; QR, eigh, SVD and
// the pivot permutation: gpu_linalg_decomp.cc): potrf and getrf through cuSOLVER's dense API (libcusolver.so.12, dlopen'ed), trsm through cuBLAS
// (libcublas.so.13/.12), on the executable's stream. A batch of many small matrices takes one
// batched call (cuSOLVER potrfBatched, cuBLAS getrfBatched / trsmBatched over device pointer
// arrays a small kernel fills); a few large ones one call per matrix (linalg_batch.h says which,
// HLOC_GPU_LINALG=batched|per-matrix forces it). As XLA:GPU's CholeskyThunk /
// TriangularSolveThunk and jaxlib's cuSOLVER FFI handlers: the factor is computed in place in
// the result buffer (the operand is copied there first unless it already aliases it), the
// libraries write info (and pivots, 1-based) straight into the results. Matrices are dense
// column-major (or all row-major: the transpose, absorbed by flipping uplo and, for trsm, the
// side); the compiler guarantees it (src/codegen/gpu/gpu_linalg.cc). Workspace and pointer
// arrays are allocated once per thunk at load time.
#pragma once
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

// Why cuSOLVER / cuBLAS cannot be loaded, or OK (tests skip on it).
absl::Status GpuLinalgAvailable();

#if HLOC_HAVE_CUDA

namespace linalg_internal {
struct GpuLinalgState;
}

class GpuLinalg {
 public:
  // Checks the thunk's config against its slices, loads the libraries, sizes and allocates the
  // workspace. Everything but the cholesky op (which reads info back) only enqueues work on
  // the stream, so it could be captured into a CUDA graph; the executor does not capture
  // custom-call thunks today.
  static absl::StatusOr<std::unique_ptr<GpuLinalg>> Create(const CudaContext& context, const Thunk& thunk);
  ~GpuLinalg();
  // `arguments`: the device addresses of the thunk's slices, in order.
  absl::Status Run(CUstream stream, const std::vector<CUdeviceptr>& arguments) const;

 private:
  GpuLinalg() = default;
  std::unique_ptr<linalg_internal::GpuLinalgState> state_;
};

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
