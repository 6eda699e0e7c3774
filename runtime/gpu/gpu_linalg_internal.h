// Internals of GpuLinalg shared by gpu_linalg.cc (loading, the per-matrix path) and
// gpu_linalg_batched.cc (the batched path); not for users of the runtime.
#pragma once
#if HLOC_HAVE_CUDA
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "runtime/executable/linalg_config.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/linalg_batch.h"

namespace hloc::runtime::gpu::linalg_internal {

// cuSOLVER's and cuBLAS's entry points, dlsym'ed by their C names.
#define HLOC_CUSOLVER_ENTRIES(X)                                                                               \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream)                                              \
  X(cusolverDnSpotrf_bufferSize) X(cusolverDnDpotrf_bufferSize) X(cusolverDnCpotrf_bufferSize)                 \
  X(cusolverDnZpotrf_bufferSize) X(cusolverDnSpotrf) X(cusolverDnDpotrf) X(cusolverDnCpotrf) X(cusolverDnZpotrf) \
  X(cusolverDnSgetrf_bufferSize) X(cusolverDnDgetrf_bufferSize) X(cusolverDnCgetrf_bufferSize)                 \
  X(cusolverDnZgetrf_bufferSize) X(cusolverDnSgetrf) X(cusolverDnDgetrf) X(cusolverDnCgetrf) X(cusolverDnZgetrf) \
  X(cusolverDnSpotrfBatched) X(cusolverDnDpotrfBatched) X(cusolverDnCpotrfBatched) X(cusolverDnZpotrfBatched) \
  HLOC_CUSOLVER_DECOMPOSITION_ENTRIES(X)
// QR, eigh, SVD (issue 34; gpu_linalg_decomp.cc).
#define HLOC_CUSOLVER_DECOMPOSITION_ENTRIES(X)                                                                   \
  X(cusolverDnSgeqrf_bufferSize) X(cusolverDnDgeqrf_bufferSize) X(cusolverDnCgeqrf_bufferSize)                   \
  X(cusolverDnZgeqrf_bufferSize) X(cusolverDnSgeqrf) X(cusolverDnDgeqrf) X(cusolverDnCgeqrf) X(cusolverDnZgeqrf)   \
  X(cusolverDnSorgqr_bufferSize) X(cusolverDnDorgqr_bufferSize) X(cusolverDnCungqr_bufferSize)                   \
  X(cusolverDnZungqr_bufferSize) X(cusolverDnSorgqr) X(cusolverDnDorgqr) X(cusolverDnCungqr) X(cusolverDnZungqr)   \
  X(cusolverDnSormqr_bufferSize) X(cusolverDnDormqr_bufferSize) X(cusolverDnCunmqr_bufferSize)                   \
  X(cusolverDnZunmqr_bufferSize) X(cusolverDnSormqr) X(cusolverDnDormqr) X(cusolverDnCunmqr) X(cusolverDnZunmqr)   \
  X(cusolverDnSsyevd_bufferSize) X(cusolverDnDsyevd_bufferSize) X(cusolverDnCheevd_bufferSize)                   \
  X(cusolverDnZheevd_bufferSize) X(cusolverDnSsyevd) X(cusolverDnDsyevd) X(cusolverDnCheevd) X(cusolverDnZheevd)   \
  X(cusolverDnSgesvd_bufferSize) X(cusolverDnDgesvd_bufferSize) X(cusolverDnCgesvd_bufferSize)                   \
  X(cusolverDnZgesvd_bufferSize) X(cusolverDnSgesvd) X(cusolverDnDgesvd) X(cusolverDnCgesvd) X(cusolverDnZgesvd)   \
  X(cusolverDnCreateGesvdjInfo) X(cusolverDnDestroyGesvdjInfo) X(cusolverDnSgesvdj_bufferSize)                   \
  X(cusolverDnDgesvdj_bufferSize) X(cusolverDnCgesvdj_bufferSize) X(cusolverDnZgesvdj_bufferSize)                \
  X(cusolverDnSgesvdj) X(cusolverDnDgesvdj) X(cusolverDnCgesvdj) X(cusolverDnZgesvdj)                             \
  X(cusolverDnCreateSyevjInfo) X(cusolverDnDestroySyevjInfo) X(cusolverDnSsyevjBatched_bufferSize)               \
  X(cusolverDnDsyevjBatched_bufferSize) X(cusolverDnCheevjBatched_bufferSize)                                   \
  X(cusolverDnZheevjBatched_bufferSize) X(cusolverDnSsyevjBatched) X(cusolverDnDsyevjBatched)                   \
  X(cusolverDnCheevjBatched) X(cusolverDnZheevjBatched) X(cusolverDnSgesvdjBatched_bufferSize)                  \
  X(cusolverDnDgesvdjBatched_bufferSize) X(cusolverDnCgesvdjBatched_bufferSize)                                 \
  X(cusolverDnZgesvdjBatched_bufferSize) X(cusolverDnSgesvdjBatched) X(cusolverDnDgesvdjBatched)                \
  X(cusolverDnCgesvdjBatched) X(cusolverDnZgesvdjBatched)
#define HLOC_CUBLAS_ENTRIES(X)                                                                     \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetPointerMode_v2)          \
  X(cublasStrsm_v2) X(cublasDtrsm_v2) X(cublasCtrsm_v2) X(cublasZtrsm_v2)                          \
  X(cublasStrsmBatched) X(cublasDtrsmBatched) X(cublasCtrsmBatched) X(cublasZtrsmBatched)          \
  X(cublasSgetrfBatched) X(cublasDgetrfBatched) X(cublasCgetrfBatched) X(cublasZgetrfBatched)

struct Libs {
#define HLOC_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUSOLVER_ENTRIES(HLOC_MEMBER)
  HLOC_CUBLAS_ENTRIES(HLOC_MEMBER)
#undef HLOC_MEMBER
};

absl::Status SolverCheck(cusolverStatus_t s, const char* fn, const std::string& what);
absl::Status BlasCheck(cublasStatus_t s, const char* fn, const std::string& what);

struct Handles {
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
};

// A trsm call's column-major arguments, shared by both paths (see GpuLinalg::Run).
struct TrsmCall {
  cublasSideMode_t side;
  cublasFillMode_t uplo;
  cublasOperation_t op;
  cublasDiagType_t diag;
  int rows = 0, cols = 0, lda = 0;
  const void* alpha = nullptr;  // host (1) or device (the alpha operand), per the pointer mode set
};

struct GpuLinalgState {
  const Libs* libs = nullptr;
  const CudaContext* ctx = nullptr;
  Handles handles;
  LinalgConfig config;
  MatrixView a, out, b;  // potrf/getrf: a, out (factor); trsm: a, b, out (x)
  bool row_major = false;
  size_t out_index = 1;
  int lwork = 0;                 // elements of the workspace
  CUdeviceptr workspace = 0;     // lwork elements
  CUdeviceptr info_scratch = 0;  // potrf without an info result: batch ints
  LinalgBatchPlan plan;          // the path; for the batched one, its pointer arrays
  CUdeviceptr pointers = 0;      // plan.scratch_bytes
  CUfunction make_pointers = nullptr;
  std::string name;
  // The decompositions (gpu_linalg_decomp.cc): the matrix cuSOLVER sees is m x n column-major
  // (the transposed gesvd's: a's transpose), kt = orgqr's reflector count; gesvdj's parameters.
  // ormqr: m x n is c (the matrix written), kt the reflectors, a's leading dimension st.a.rows.
  int m = 0, n = 0, kt = 0;
  gesvdjInfo_t gesvdj = nullptr;
  // jaxlib's small-matrix paths: a batch of matrices up to 32 x 32 in one syevjBatched (eigh)
  // or gesvdjBatched (full-matrices SVD) call.
  bool jacobi_batched = false;
  syevjInfo_t syevj = nullptr;
};

// Whether `op` is one of the decompositions gpu_linalg_decomp.cc runs (geqrf, orgqr, ormqr,
// syevd, gesvd, perm) rather than potrf/getrf/trsm.
bool IsDecompositionOp(const std::string& op);
// Sizes and allocates a decomposition's workspace and scratch (st.a is argument 0's view).
absl::Status PrepareDecomposition(GpuLinalgState& st);
// Runs it on `stream`: per matrix, in place on the result as jaxlib's handlers do.
absl::Status RunDecomposition(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args);

int64_t Bytes(const std::string& type);

// The kernel that fills pointer arrays (BatchPointersPtx), loaded once per context.
absl::StatusOr<CUfunction> BatchPointersFunction(const CudaContext& ctx);

// The batched path on `stream` (the stream already set on the handles): fills the plan's
// pointer arrays on the device, then one potrfBatched / getrfBatched over the factor in `out`
// (info into `info`), or one trsmBatched.
absl::Status FactorBatched(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args,
                           cublasFillMode_t uplo, CUdeviceptr info);
absl::Status TrsmBatched(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args,
                         const TrsmCall& call);

}  // namespace hloc::runtime::gpu::linalg_internal
#endif  // HLOC_HAVE_CUDA
