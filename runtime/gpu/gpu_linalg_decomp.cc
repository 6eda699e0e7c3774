// The GPU runtime's QR, eigh and SVD thunks and JAX's pivot permutation (issue 34), as jaxlib's
// cuSOLVER FFI handlers run them: the operand is copied into the result that aliases it (unless
// it already is that buffer), then one cuSOLVER call per matrix (geqrf, orgqr/ungqr, ormqr/unmqr,
// syevd/heevd, gesvd, gesvdj) on the executable's stream, or, as jaxlib, one syevjBatched /
// gesvdjBatched for a batch of matrices up to 32 x 32; the workspace sized by the library's
// bufferSize once at load time. Matrices are dense column-major (the transposed gesvd: row-major,
// which is the column-major A^T it factors, as jaxlib does); src/codegen/gpu/gpu_linalg.cc
// guarantees it. The pivot permutation goes through the host (it waits on the stream, as the
// cholesky op's fixup does; custom-call thunks are not captured into CUDA graphs).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/gpu_linalg_internal.h"

#if HLOC_HAVE_CUDA
namespace hloc::runtime::gpu::linalg_internal {
namespace {

int64_t RealBytes(const std::string& t) { return t == "c64" ? 4 : t == "c128" ? 8 : Bytes(t); }

// Element count of the batch dimensions (all but the last two) of argument 0.
int64_t BatchOf(const GpuLinalgState& st) { return st.a.batch; }

cusolverEigMode_t Jobz(const LinalgConfig& c) {
  return c.compute_uv || c.op == "syevd" ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
}

// ormqr's side and op(Q) in cuBLAS's enums (the config holds LAPACK's 'N' / 'T' / 'C').
cublasSideMode_t OrmqrSide(const LinalgConfig& c) { return c.left_side ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
cublasOperation_t OrmqrTrans(const LinalgConfig& c) {
  return c.transpose == 'C' ? CUBLAS_OP_C : c.transpose == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
}

absl::Status SizeDecompositionWorkspace(GpuLinalgState& st) {
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const cusolverDnHandle_t h = st.handles.solver;
  const std::string& ty = c.type;
  const int m = st.m, n = st.n;
  if (m == 0 || n == 0) return absl::OkStatus();
  cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
  int* lw = &st.lwork;
  if (c.op == "geqrf") {
    if (ty == "f32") s = l.cusolverDnSgeqrf_bufferSize(h, m, n, nullptr, m, lw);
    else if (ty == "f64") s = l.cusolverDnDgeqrf_bufferSize(h, m, n, nullptr, m, lw);
    else if (ty == "c64") s = l.cusolverDnCgeqrf_bufferSize(h, m, n, nullptr, m, lw);
    else s = l.cusolverDnZgeqrf_bufferSize(h, m, n, nullptr, m, lw);
  } else if (c.op == "orgqr") {
    const int k = st.kt;
    if (ty == "f32") s = l.cusolverDnSorgqr_bufferSize(h, m, n, k, nullptr, m, nullptr, lw);
    else if (ty == "f64") s = l.cusolverDnDorgqr_bufferSize(h, m, n, k, nullptr, m, nullptr, lw);
    else if (ty == "c64") s = l.cusolverDnCungqr_bufferSize(h, m, n, k, nullptr, m, nullptr, lw);
    else s = l.cusolverDnZungqr_bufferSize(h, m, n, k, nullptr, m, nullptr, lw);
  } else if (c.op == "ormqr") {
    const cublasSideMode_t side = OrmqrSide(c);
    const cublasOperation_t tr = OrmqrTrans(c);
    const int k = st.kt, lda = std::max(1, static_cast<int>(st.a.rows));
    if (ty == "f32") s = l.cusolverDnSormqr_bufferSize(h, side, tr, m, n, k, nullptr, lda, nullptr, nullptr, m, lw);
    else if (ty == "f64") s = l.cusolverDnDormqr_bufferSize(h, side, tr, m, n, k, nullptr, lda, nullptr, nullptr, m, lw);
    else if (ty == "c64") s = l.cusolverDnCunmqr_bufferSize(h, side, tr, m, n, k, nullptr, lda, nullptr, nullptr, m, lw);
    else s = l.cusolverDnZunmqr_bufferSize(h, side, tr, m, n, k, nullptr, lda, nullptr, nullptr, m, lw);
  } else if (c.op == "syevd" && st.jacobi_batched) {
    const cublasFillMode_t uplo = c.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cusolverEigMode_t jobz = Jobz(c);
    const int batch = static_cast<int>(BatchOf(st));
    syevjInfo_t p = st.syevj;
    if (ty == "f32") s = l.cusolverDnSsyevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw, p, batch);
    else if (ty == "f64") s = l.cusolverDnDsyevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw, p, batch);
    else if (ty == "c64") s = l.cusolverDnCheevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw, p, batch);
    else s = l.cusolverDnZheevjBatched_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw, p, batch);
  } else if (c.op == "gesvd" && st.jacobi_batched) {
    const cusolverEigMode_t jobz = Jobz(c);
    const int batch = static_cast<int>(BatchOf(st));
    gesvdjInfo_t p = st.gesvdj;
    if (ty == "f32")
      s = l.cusolverDnSgesvdjBatched_bufferSize(h, jobz, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p, batch);
    else if (ty == "f64")
      s = l.cusolverDnDgesvdjBatched_bufferSize(h, jobz, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p, batch);
    else if (ty == "c64")
      s = l.cusolverDnCgesvdjBatched_bufferSize(h, jobz, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p, batch);
    else
      s = l.cusolverDnZgesvdjBatched_bufferSize(h, jobz, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p, batch);
  } else if (c.op == "syevd") {
    const cublasFillMode_t uplo = c.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const cusolverEigMode_t jobz = Jobz(c);
    if (ty == "f32") s = l.cusolverDnSsyevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw);
    else if (ty == "f64") s = l.cusolverDnDsyevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw);
    else if (ty == "c64") s = l.cusolverDnCheevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw);
    else s = l.cusolverDnZheevd_bufferSize(h, jobz, uplo, n, nullptr, n, nullptr, lw);
  } else if (c.op == "gesvd" && !c.jacobi) {
    if (ty == "f32") s = l.cusolverDnSgesvd_bufferSize(h, m, n, lw);
    else if (ty == "f64") s = l.cusolverDnDgesvd_bufferSize(h, m, n, lw);
    else if (ty == "c64") s = l.cusolverDnCgesvd_bufferSize(h, m, n, lw);
    else s = l.cusolverDnZgesvd_bufferSize(h, m, n, lw);
  } else if (c.op == "gesvd") {
    const cusolverEigMode_t jobz = Jobz(c);
    const int econ = c.full_matrices ? 0 : 1;
    gesvdjInfo_t p = st.gesvdj;
    if (ty == "f32")
      s = l.cusolverDnSgesvdj_bufferSize(h, jobz, econ, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p);
    else if (ty == "f64")
      s = l.cusolverDnDgesvdj_bufferSize(h, jobz, econ, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p);
    else if (ty == "c64")
      s = l.cusolverDnCgesvdj_bufferSize(h, jobz, econ, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p);
    else
      s = l.cusolverDnZgesvdj_bufferSize(h, jobz, econ, m, n, nullptr, m, nullptr, nullptr, m, nullptr, n, lw, p);
  }
  return SolverCheck(s, "cusolverDn<t><op>_bufferSize", st.name);
}

// One ormqr / unmqr: op(Q) applied to the column-major m x n C in place (ldc = m), Q's
// reflectors in the column-major A (lda = a's rows), as jaxlib's handler calls it.
cusolverStatus_t Ormqr(const GpuLinalgState& st, cusolverDnHandle_t h, const void* A, const void* tau, void* C,
                       int* info) {
  const Libs& l = *st.libs;
  const std::string& ty = st.config.type;
  const cublasSideMode_t side = OrmqrSide(st.config);
  const cublasOperation_t tr = OrmqrTrans(st.config);
  const int m = st.m, n = st.n, k = st.kt, lda = std::max(1, static_cast<int>(st.a.rows)), lw = st.lwork;
  void* w = reinterpret_cast<void*>(st.workspace);
  if (ty == "f32")
    return l.cusolverDnSormqr(h, side, tr, m, n, k, (const float*)A, lda, (const float*)tau, (float*)C, m, (float*)w,
                              lw, info);
  if (ty == "f64")
    return l.cusolverDnDormqr(h, side, tr, m, n, k, (const double*)A, lda, (const double*)tau, (double*)C, m,
                              (double*)w, lw, info);
  if (ty == "c64")
    return l.cusolverDnCunmqr(h, side, tr, m, n, k, (const cuComplex*)A, lda, (const cuComplex*)tau, (cuComplex*)C, m,
                              (cuComplex*)w, lw, info);
  return l.cusolverDnZunmqr(h, side, tr, m, n, k, (const cuDoubleComplex*)A, lda, (const cuDoubleComplex*)tau,
                            (cuDoubleComplex*)C, m, (cuDoubleComplex*)w, lw, info);
}

// The pivot permutation: pivots to the host, the swaps applied to iota, the permutation back.
absl::Status RunPermutation(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args) {
  const CudaDriver& d = *st.ctx->driver;
  const ArrayShape& ps = st.config.shapes[0];
  const ArrayShape& os = st.config.shapes[1];
  const int64_t k = ps.dimensions.back(), p = os.dimensions.back();
  const int64_t batch = p > 0 ? os.byte_size() / 4 / p : 0;
  if (batch == 0 || p == 0) return absl::OkStatus();
  std::vector<int32_t> piv(batch * k), perm(batch * p);
  if (k > 0)
    if (absl::Status s = HLOC_CU(d, cuMemcpyDtoHAsync, st.name, piv.data(), args[0], piv.size() * 4, stream); !s.ok())
      return s;
  if (absl::Status s = HLOC_CU(d, cuStreamSynchronize, st.name, stream); !s.ok()) return s;
  for (int64_t b = 0; b < batch; ++b) {
    int32_t* out = perm.data() + b * p;
    std::iota(out, out + p, 0);
    for (int64_t i = 0; i < k && i < p; ++i) {
      const int64_t j = piv[b * k + i];
      if (j >= 0 && j < p) std::swap(out[i], out[j]);
    }
  }
  if (absl::Status s = HLOC_CU(d, cuMemcpyHtoDAsync, st.name, args[1], perm.data(), perm.size() * 4, stream); !s.ok())
    return s;
  return HLOC_CU(d, cuStreamSynchronize, st.name, stream);  // `perm` must outlive the copy
}

}  // namespace

bool IsDecompositionOp(const std::string& op) {
  return op == "geqrf" || op == "orgqr" || op == "ormqr" || op == "syevd" || op == "gesvd" || op == "perm";
}

absl::Status PrepareDecomposition(GpuLinalgState& st) {
  const LinalgConfig& c = st.config;
  if (c.op == "perm") return absl::OkStatus();
  const CudaDriver& d = *st.ctx->driver;
  st.m = static_cast<int>(c.transposed ? st.a.cols : st.a.rows);
  st.n = static_cast<int>(c.transposed ? st.a.rows : st.a.cols);
  if (c.op == "orgqr" || c.op == "ormqr") st.kt = static_cast<int>(c.shapes[1].dimensions.back());
  if (c.op == "ormqr") {  // cuSOLVER's m x n is c's matrix, which it overwrites
    const std::vector<int64_t>& cd = c.shapes[2].dimensions;
    st.m = static_cast<int>(cd[cd.size() - 2]);
    st.n = static_cast<int>(cd.back());
  }
  const int64_t batch = BatchOf(st);
  // As jaxlib: eigh of matrices up to 32 x 32 by Jacobi (syevjBatched; jaxlib takes syevj for a
  // single one, syevd serves that here), the full-matrices gesvdj of a batch of matrices up to
  // 32 x 32 in one gesvdjBatched.
  st.jacobi_batched = batch > 1 && batch <= INT32_MAX && st.m <= 32 && st.n <= 32 &&
                      (c.op == "syevd" || (c.op == "gesvd" && c.jacobi && c.full_matrices));
  if (c.op == "gesvd" && c.jacobi)
    if (absl::Status s = SolverCheck(st.libs->cusolverDnCreateGesvdjInfo(&st.gesvdj), "cusolverDnCreateGesvdjInfo",
                                     st.name);
        !s.ok())
      return s;
  if (c.op == "syevd" && st.jacobi_batched)
    if (absl::Status s = SolverCheck(st.libs->cusolverDnCreateSyevjInfo(&st.syevj), "cusolverDnCreateSyevjInfo",
                                     st.name);
        !s.ok())
      return s;
  if (absl::Status s = SizeDecompositionWorkspace(st); !s.ok()) return s;
  if (st.lwork > 0)
    if (absl::Status s = HLOC_CU(d, cuMemAlloc, "allocating the cuSOLVER workspace", &st.workspace,
                                 static_cast<size_t>(st.lwork) * Bytes(c.type));
        !s.ok())
      return s;
  // geqrf, orgqr and ormqr report info that JAX has no result for.
  if ((c.op == "geqrf" || c.op == "orgqr" || c.op == "ormqr") && BatchOf(st) > 0)
    return HLOC_CU(d, cuMemAlloc, "allocating cuSOLVER's info", &st.info_scratch,
                   static_cast<size_t>(BatchOf(st)) * 4);
  return absl::OkStatus();
}

absl::Status RunDecomposition(const GpuLinalgState& st, CUstream stream, const std::vector<CUdeviceptr>& args) {
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const CudaDriver& d = *st.ctx->driver;
  if (absl::Status s = SolverCheck(l.cusolverDnSetStream(st.handles.solver, stream), "cusolverDnSetStream", st.name);
      !s.ok())
    return s;
  if (c.op == "perm") return RunPermutation(st, stream, args);
  const cusolverDnHandle_t h = st.handles.solver;
  const std::string& ty = c.type;
  const int m = st.m, n = st.n, k = std::min(m, n);
  const int64_t eb = Bytes(ty), rb = RealBytes(ty), per = static_cast<int64_t>(m) * n * eb;
  const int64_t batch = BatchOf(st);
  // The result aliases operand 0 (ormqr: operand 2, c); it is computed in place there.
  const size_t out_index = c.op == "orgqr" ? 2 : c.op == "ormqr" ? 3 : 1, in_index = c.op == "ormqr" ? 2 : 0;
  const CUdeviceptr out = args[out_index];
  if (args[in_index] != out && batch * per > 0)
    if (absl::Status s =
            HLOC_CU(d, cuMemcpyDtoDAsync, st.name, out, args[in_index], static_cast<size_t>(batch * per), stream);
        !s.ok())
      return s;
  if (m == 0 || n == 0) return absl::OkStatus();
  void* w = reinterpret_cast<void*>(st.workspace);
  const int lw = st.lwork;
  auto ptr = [](CUdeviceptr base, int64_t offset) { return reinterpret_cast<void*>(base + offset); };
  if (st.jacobi_batched) {
    // One call for the whole batch: the matrices, vectors and infos lie back to back, as the
    // batched routines read them.
    const int nb = static_cast<int>(batch);
    const cusolverEigMode_t jobz = Jobz(c);
    void* A = ptr(out, 0);
    cusolverStatus_t s;
    if (c.op == "syevd") {
      const cublasFillMode_t uplo = c.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
      void* W = ptr(args[2], 0);
      int* info = static_cast<int*>(ptr(args[3], 0));
      syevjInfo_t p = st.syevj;
      if (ty == "f32")
        s = l.cusolverDnSsyevjBatched(h, jobz, uplo, n, (float*)A, n, (float*)W, (float*)w, lw, info, p, nb);
      else if (ty == "f64")
        s = l.cusolverDnDsyevjBatched(h, jobz, uplo, n, (double*)A, n, (double*)W, (double*)w, lw, info, p, nb);
      else if (ty == "c64")
        s = l.cusolverDnCheevjBatched(h, jobz, uplo, n, (cuComplex*)A, n, (float*)W, (cuComplex*)w, lw, info, p, nb);
      else
        s = l.cusolverDnZheevjBatched(h, jobz, uplo, n, (cuDoubleComplex*)A, n, (double*)W, (cuDoubleComplex*)w, lw,
                                      info, p, nb);
    } else {
      void* S = ptr(args[2], 0);
      void* U = ptr(args[3], 0);
      void* V = ptr(args[4], 0);
      int* info = static_cast<int*>(ptr(args[5], 0));
      gesvdjInfo_t p = st.gesvdj;
      if (ty == "f32")
        s = l.cusolverDnSgesvdjBatched(h, jobz, m, n, (float*)A, m, (float*)S, (float*)U, m, (float*)V, n, (float*)w,
                                       lw, info, p, nb);
      else if (ty == "f64")
        s = l.cusolverDnDgesvdjBatched(h, jobz, m, n, (double*)A, m, (double*)S, (double*)U, m, (double*)V, n,
                                       (double*)w, lw, info, p, nb);
      else if (ty == "c64")
        s = l.cusolverDnCgesvdjBatched(h, jobz, m, n, (cuComplex*)A, m, (float*)S, (cuComplex*)U, m, (cuComplex*)V,
                                       n, (cuComplex*)w, lw, info, p, nb);
      else
        s = l.cusolverDnZgesvdjBatched(h, jobz, m, n, (cuDoubleComplex*)A, m, (double*)S, (cuDoubleComplex*)U, m,
                                       (cuDoubleComplex*)V, n, (cuDoubleComplex*)w, lw, info, p, nb);
    }
    return SolverCheck(s, "cusolverDn<t>{syevj,gesvdj}Batched", absl::StrCat(c.op, " (", st.name, ")"));
  }
  for (int64_t b = 0; b < batch; ++b) {
    void* A = ptr(out, b * per);
    cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
    if (c.op == "geqrf") {
      void* tau = ptr(args[2], b * k * eb);
      int* info = static_cast<int*>(ptr(st.info_scratch, b * 4));
      if (ty == "f32") s = l.cusolverDnSgeqrf(h, m, n, (float*)A, m, (float*)tau, (float*)w, lw, info);
      else if (ty == "f64") s = l.cusolverDnDgeqrf(h, m, n, (double*)A, m, (double*)tau, (double*)w, lw, info);
      else if (ty == "c64") s = l.cusolverDnCgeqrf(h, m, n, (cuComplex*)A, m, (cuComplex*)tau, (cuComplex*)w, lw, info);
      else s = l.cusolverDnZgeqrf(h, m, n, (cuDoubleComplex*)A, m, (cuDoubleComplex*)tau, (cuDoubleComplex*)w, lw, info);
    } else if (c.op == "orgqr") {
      const int kt = st.kt;
      const void* tau = ptr(args[1], b * kt * eb);
      int* info = static_cast<int*>(ptr(st.info_scratch, b * 4));
      if (ty == "f32") s = l.cusolverDnSorgqr(h, m, n, kt, (float*)A, m, (const float*)tau, (float*)w, lw, info);
      else if (ty == "f64") s = l.cusolverDnDorgqr(h, m, n, kt, (double*)A, m, (const double*)tau, (double*)w, lw, info);
      else if (ty == "c64")
        s = l.cusolverDnCungqr(h, m, n, kt, (cuComplex*)A, m, (const cuComplex*)tau, (cuComplex*)w, lw, info);
      else
        s = l.cusolverDnZungqr(h, m, n, kt, (cuDoubleComplex*)A, m, (const cuDoubleComplex*)tau, (cuDoubleComplex*)w,
                               lw, info);
    } else if (c.op == "ormqr") {
      s = Ormqr(st, h, ptr(args[0], b * st.a.rows * st.a.cols * eb), ptr(args[1], b * st.kt * eb), A,
                static_cast<int*>(ptr(st.info_scratch, b * 4)));
    } else if (c.op == "syevd") {
      const cublasFillMode_t uplo = c.lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
      const cusolverEigMode_t jobz = Jobz(c);
      void* W = ptr(args[2], b * n * rb);
      int* info = static_cast<int*>(ptr(args[3], b * 4));
      if (ty == "f32") s = l.cusolverDnSsyevd(h, jobz, uplo, n, (float*)A, n, (float*)W, (float*)w, lw, info);
      else if (ty == "f64") s = l.cusolverDnDsyevd(h, jobz, uplo, n, (double*)A, n, (double*)W, (double*)w, lw, info);
      else if (ty == "c64") s = l.cusolverDnCheevd(h, jobz, uplo, n, (cuComplex*)A, n, (float*)W, (cuComplex*)w, lw, info);
      else
        s = l.cusolverDnZheevd(h, jobz, uplo, n, (cuDoubleComplex*)A, n, (double*)W, (cuDoubleComplex*)w, lw, info);
    } else if (!c.jacobi) {
      // gesvd (m >= n, so k = n): u [m, m|n] and vt [n, n] as jaxlib lays them out.
      const signed char job = c.compute_uv ? (c.full_matrices ? 'A' : 'S') : 'N';
      void* S = ptr(args[2], b * k * rb);
      void* U = c.compute_uv ? ptr(args[3], b * m * (c.full_matrices ? m : n) * eb) : nullptr;
      void* VT = c.compute_uv ? ptr(args[4], b * n * n * eb) : nullptr;
      int* info = static_cast<int*>(ptr(args[5], b * 4));
      if (ty == "f32")
        s = l.cusolverDnSgesvd(h, job, job, m, n, (float*)A, m, (float*)S, (float*)U, m, (float*)VT, n, (float*)w, lw,
                               nullptr, info);
      else if (ty == "f64")
        s = l.cusolverDnDgesvd(h, job, job, m, n, (double*)A, m, (double*)S, (double*)U, m, (double*)VT, n,
                               (double*)w, lw, nullptr, info);
      else if (ty == "c64")
        s = l.cusolverDnCgesvd(h, job, job, m, n, (cuComplex*)A, m, (float*)S, (cuComplex*)U, m, (cuComplex*)VT, n,
                               (cuComplex*)w, lw, nullptr, info);
      else
        s = l.cusolverDnZgesvd(h, job, job, m, n, (cuDoubleComplex*)A, m, (double*)S, (cuDoubleComplex*)U, m,
                               (cuDoubleComplex*)VT, n, (cuDoubleComplex*)w, lw, nullptr, info);
    } else {
      // gesvdj: u [m, m|k], v [n, n|k] (V itself), both allocated even without compute_uv.
      const cusolverEigMode_t jobz = Jobz(c);
      const int econ = c.full_matrices ? 0 : 1;
      void* S = ptr(args[2], b * k * rb);
      void* U = ptr(args[3], b * m * (c.full_matrices ? m : k) * eb);
      void* V = ptr(args[4], b * n * (c.full_matrices ? n : k) * eb);
      int* info = static_cast<int*>(ptr(args[5], b * 4));
      gesvdjInfo_t p = st.gesvdj;
      if (ty == "f32")
        s = l.cusolverDnSgesvdj(h, jobz, econ, m, n, (float*)A, m, (float*)S, (float*)U, m, (float*)V, n, (float*)w,
                                lw, info, p);
      else if (ty == "f64")
        s = l.cusolverDnDgesvdj(h, jobz, econ, m, n, (double*)A, m, (double*)S, (double*)U, m, (double*)V, n,
                                (double*)w, lw, info, p);
      else if (ty == "c64")
        s = l.cusolverDnCgesvdj(h, jobz, econ, m, n, (cuComplex*)A, m, (float*)S, (cuComplex*)U, m, (cuComplex*)V, n,
                                (cuComplex*)w, lw, info, p);
      else
        s = l.cusolverDnZgesvdj(h, jobz, econ, m, n, (cuDoubleComplex*)A, m, (double*)S, (cuDoubleComplex*)U, m,
                                (cuDoubleComplex*)V, n, (cuDoubleComplex*)w, lw, info, p);
    }
    if (absl::Status e = SolverCheck(s, "cusolverDn<t>" , absl::StrCat(c.op, " (", st.name, ")")); !e.ok()) return e;
  }
  return absl::OkStatus();
}

}  // namespace hloc::runtime::gpu::linalg_internal
#endif  // HLOC_HAVE_CUDA
