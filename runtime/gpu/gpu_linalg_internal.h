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
  X(cusolverDnSpotrfBatched) X(cusolverDnDpotrfBatched) X(cusolverDnCpotrfBatched) X(cusolverDnZpotrfBatched)
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
};

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
