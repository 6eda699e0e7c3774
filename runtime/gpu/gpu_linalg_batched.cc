// The batched path of the GPU linalg thunks (linalg_batch.h): pointer arrays built on the device
// by a small kernel (so nothing waits on the host and the sequence stays capturable into a CUDA
// graph), then one cuBLAS / cuSOLVER batched call for the whole batch.
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/gpu_linalg_internal.h"

#if HLOC_HAVE_CUDA
namespace hloc::runtime::gpu::linalg_internal {

absl::StatusOr<CUfunction> BatchPointersFunction(const CudaContext& ctx) {
  static std::mutex mu;
  static auto* functions = new std::map<int, CUfunction>();  // modules live as long as the process
  std::lock_guard<std::mutex> lock(mu);
  auto it = functions->find(ctx.info.ordinal);
  if (it != functions->end()) return it->second;
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  const CudaDriver& d = *ctx.driver;
  CUmodule module = nullptr;
  if (absl::Status s = HLOC_CU(d, cuModuleLoadDataEx, "loading the batch-pointer kernel", &module,
                               BatchPointersPtx(), 0, nullptr, nullptr);
      !s.ok())
    return s;
  CUfunction f = nullptr;
  if (absl::Status s = HLOC_CU(d, cuModuleGetFunction, "finding the batch-pointer kernel", &f, module,
                               kBatchPointersKernel);
      !s.ok())
    return s;
  (*functions)[ctx.info.ordinal] = f;
  return f;
}

namespace {

// Every array of the plan: out[i] = args[argument] + i * stride, on `stream`.
absl::Status MakePointerArrays(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args) {
  const CudaDriver& d = *st.ctx->driver;
  const unsigned count = static_cast<unsigned>(st.plan.count);
  const unsigned blocks = (count + kBatchPointersBlock - 1) / kBatchPointersBlock;
  for (const PointerArray& p : st.plan.arrays) {
    CUdeviceptr base = args[p.argument], out = st.pointers + p.offset;
    uint64_t stride = static_cast<uint64_t>(p.stride_bytes);
    unsigned n = count;
    void* params[] = {&base, &stride, &out, &n};
    if (absl::Status s = HLOC_CU(d, cuLaunchKernel, st.name, st.make_pointers, blocks, 1, 1, kBatchPointersBlock, 1,
                                 1, 0, stream, params, nullptr);
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

template <typename T>
T Array(const GpuLinalgState& st, size_t i) {
  return reinterpret_cast<T>(st.pointers + st.plan.arrays[i].offset);
}

}  // namespace

absl::Status FactorBatched(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args,
                           cublasFillMode_t uplo, CUdeviceptr info) {
  if (absl::Status s = MakePointerArrays(st, stream, args); !s.ok()) return s;
  const Libs& l = *st.libs;
  const std::string& ty = st.config.type;
  const int n = static_cast<int>(st.a.rows), batch = static_cast<int>(st.plan.count);
  int* dinfo = reinterpret_cast<int*>(info);
  if (st.config.op == "potrf") {
    const cusolverDnHandle_t h = st.handles.solver;
    cusolverStatus_t s;
    if (ty == "f32") s = l.cusolverDnSpotrfBatched(h, uplo, n, Array<float**>(st, 0), n, dinfo, batch);
    else if (ty == "f64") s = l.cusolverDnDpotrfBatched(h, uplo, n, Array<double**>(st, 0), n, dinfo, batch);
    else if (ty == "c64") s = l.cusolverDnCpotrfBatched(h, uplo, n, Array<cuComplex**>(st, 0), n, dinfo, batch);
    else s = l.cusolverDnZpotrfBatched(h, uplo, n, Array<cuDoubleComplex**>(st, 0), n, dinfo, batch);
    return SolverCheck(s, "cusolverDn<t>potrfBatched", st.name);
  }
  // getrfBatched writes the pivots of all matrices back to back (n each, 1-based), as the
  // s32[batch, n] result lays them out.
  const cublasHandle_t h = st.handles.blas;
  int* ipiv = reinterpret_cast<int*>(args[2]);
  cublasStatus_t s;
  if (ty == "f32") s = l.cublasSgetrfBatched(h, n, Array<float* const*>(st, 0), n, ipiv, dinfo, batch);
  else if (ty == "f64") s = l.cublasDgetrfBatched(h, n, Array<double* const*>(st, 0), n, ipiv, dinfo, batch);
  else if (ty == "c64") s = l.cublasCgetrfBatched(h, n, Array<cuComplex* const*>(st, 0), n, ipiv, dinfo, batch);
  else s = l.cublasZgetrfBatched(h, n, Array<cuDoubleComplex* const*>(st, 0), n, ipiv, dinfo, batch);
  return BlasCheck(s, "cublas<t>getrfBatched", st.name);
}

absl::Status TrsmBatched(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args,
                         const TrsmCall& c) {
  if (absl::Status s = MakePointerArrays(st, stream, args); !s.ok()) return s;
  const Libs& l = *st.libs;
  const std::string& ty = st.config.type;
  const cublasHandle_t h = st.handles.blas;
  const int batch = static_cast<int>(st.plan.count);
  cublasStatus_t s;
  // Array 0 holds a's matrices, array 1 x's (PlanLinalgBatch).
  if (ty == "f32")
    s = l.cublasStrsmBatched(h, c.side, c.uplo, c.op, c.diag, c.rows, c.cols, static_cast<const float*>(c.alpha),
                             Array<const float* const*>(st, 0), c.lda, Array<float* const*>(st, 1), c.rows, batch);
  else if (ty == "f64")
    s = l.cublasDtrsmBatched(h, c.side, c.uplo, c.op, c.diag, c.rows, c.cols, static_cast<const double*>(c.alpha),
                             Array<const double* const*>(st, 0), c.lda, Array<double* const*>(st, 1), c.rows, batch);
  else if (ty == "c64")
    s = l.cublasCtrsmBatched(h, c.side, c.uplo, c.op, c.diag, c.rows, c.cols, static_cast<const cuComplex*>(c.alpha),
                             Array<const cuComplex* const*>(st, 0), c.lda, Array<cuComplex* const*>(st, 1), c.rows,
                             batch);
  else
    s = l.cublasZtrsmBatched(h, c.side, c.uplo, c.op, c.diag, c.rows, c.cols,
                             static_cast<const cuDoubleComplex*>(c.alpha), Array<const cuDoubleComplex* const*>(st, 0),
                             c.lda, Array<cuDoubleComplex* const*>(st, 1), c.rows, batch);
  return BlasCheck(s, "cublas<t>trsmBatched", st.name);
}

}  // namespace hloc::runtime::gpu::linalg_internal
#endif  // HLOC_HAVE_CUDA
