// cuSOLVER potrf/getrf and cuBLAS trsm thunks (see gpu_linalg.h): loading, the per-matrix path,
// and the steps both paths share; the batched calls are in gpu_linalg_batched.cc, QR, eigh, SVD
// and the pivot permutation (issue 34) in gpu_linalg_decomp.cc.
#include "runtime/gpu/gpu_linalg.h"

#include <dlfcn.h>

#include <algorithm>
#include <complex>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/executable/linalg_config.h"
#include "runtime/gpu/gpu_linalg_internal.h"

namespace hloc::runtime::gpu {

#if !HLOC_HAVE_CUDA
absl::Status GpuLinalgAvailable() { return absl::UnavailableError("hloc was built without the CUDA headers"); }
#else

using namespace linalg_internal;  // NOLINT: this file implements them

namespace {

absl::StatusOr<std::unique_ptr<Libs>> LoadOnce() {
  absl::StatusOr<void*> solver =
      OpenLibrary({"libcusolver.so.12", "libcusolver.so.11", "/usr/local/cuda/lib64/libcusolver.so.12", "libcusolver.so"},
                  "cuSOLVER (set LD_LIBRARY_PATH=/usr/local/cuda/lib64)");
  if (!solver.ok()) return solver.status();
  absl::StatusOr<void*> blas = OpenLibrary({"libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
                                            "/usr/local/cuda/lib64/libcublas.so.12", "libcublas.so"},
                                           "cuBLAS (set LD_LIBRARY_PATH=/usr/local/cuda/lib64)");
  if (!blas.ok()) return blas.status();
  auto l = std::make_unique<Libs>();
  std::vector<std::string> missing;
#define HLOC_LOAD_FROM(lib)                                                     \
  [&](auto& fn, const char* name) {                                             \
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name)); \
    if (fn == nullptr) missing.push_back(name);                                 \
  }
  auto from_solver = HLOC_LOAD_FROM(*solver);
  auto from_blas = HLOC_LOAD_FROM(*blas);
#undef HLOC_LOAD_FROM
#define HLOC_S(name) from_solver(l->name, #name);
#define HLOC_B(name) from_blas(l->name, #name);
  HLOC_CUSOLVER_ENTRIES(HLOC_S)
  HLOC_CUBLAS_ENTRIES(HLOC_B)
#undef HLOC_S
#undef HLOC_B
  if (!missing.empty()) return absl::UnavailableError(absl::StrCat("cuSOLVER/cuBLAS lack ", absl::StrJoin(missing, ", ")));
  return l;
}

absl::StatusOr<const Libs*> Load() { return LoadLibraryOnce(LoadOnce); }

// One cuSOLVER and one cuBLAS handle per device, made once (creation is slow; calls go to the
// stream set right before them).
absl::StatusOr<Handles> HandlesFor(const Libs& l, const CudaContext& ctx) {
  static std::mutex mu;
  static auto* all = new std::map<int, Handles>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = all->find(ctx.info.ordinal);
  if (it != all->end()) return it->second;
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  Handles h;
  if (absl::Status s = SolverCheck(l.cusolverDnCreate(&h.solver), "cusolverDnCreate", "creating a handle"); !s.ok())
    return s;
  if (absl::Status s = BlasCheck(l.cublasCreate_v2(&h.blas), "cublasCreate", "creating a handle"); !s.ok()) return s;
  (*all)[ctx.info.ordinal] = h;
  return h;
}

bool DefaultLayout(const ArrayShape& s) {
  for (size_t i = 0; i < s.minor_to_major.size(); ++i)
    if (s.minor_to_major[i] != static_cast<int64_t>(s.minor_to_major.size() - 1 - i)) return false;
  return true;
}

}  // namespace

namespace linalg_internal {
absl::Status SolverCheck(cusolverStatus_t s, const char* fn, const std::string& what) {
  if (s == CUSOLVER_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(fn, " failed with cusolverStatus ", static_cast<int>(s), " (", what, ")"));
}
absl::Status BlasCheck(cublasStatus_t s, const char* fn, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(fn, " failed with cublasStatus ", static_cast<int>(s), " (", what, ")"));
}

int64_t Bytes(const std::string& t) { return t == "f32" ? 4 : t == "f64" || t == "c64" ? 8 : 16; }
}  // namespace linalg_internal

absl::Status GpuLinalgAvailable() { return Load().status(); }

namespace {

// cuSOLVER's workspace for the per-matrix potrf/getrf (lwork elements, sized once).
absl::Status SizeWorkspace(GpuLinalgState& st) {
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const cusolverDnHandle_t h = st.handles.solver;
  const int n = static_cast<int>(st.a.rows), m = static_cast<int>(st.a.cols);
  const std::string& ty = c.type;
  const cublasFillMode_t uplo = (c.lower != st.row_major) ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
  if (c.op == "potrf" && n > 0) {
    if (ty == "f32") s = l.cusolverDnSpotrf_bufferSize(h, uplo, n, nullptr, n, &st.lwork);
    else if (ty == "f64") s = l.cusolverDnDpotrf_bufferSize(h, uplo, n, nullptr, n, &st.lwork);
    else if (ty == "c64") s = l.cusolverDnCpotrf_bufferSize(h, uplo, n, nullptr, n, &st.lwork);
    else s = l.cusolverDnZpotrf_bufferSize(h, uplo, n, nullptr, n, &st.lwork);
  } else if (c.op == "getrf" && n > 0 && m > 0) {
    if (ty == "f32") s = l.cusolverDnSgetrf_bufferSize(h, n, m, nullptr, n, &st.lwork);
    else if (ty == "f64") s = l.cusolverDnDgetrf_bufferSize(h, n, m, nullptr, n, &st.lwork);
    else if (ty == "c64") s = l.cusolverDnCgetrf_bufferSize(h, n, m, nullptr, n, &st.lwork);
    else s = l.cusolverDnZgetrf_bufferSize(h, n, m, nullptr, n, &st.lwork);
  }
  return SolverCheck(s, "cusolverDn<t>{potrf,getrf}_bufferSize", st.name);
}

// What the thunk needs beyond its slices, allocated once: the per-matrix path's cuSOLVER
// workspace, or the batched path's pointer arrays; potrf's info when the op has no info result.
absl::Status AllocateScratch(GpuLinalgState& st) {
  const CudaDriver& d = *st.ctx->driver;
  const LinalgConfig& c = st.config;
  if (st.plan.path == LinalgPath::kBatched) {
    absl::StatusOr<CUfunction> f = BatchPointersFunction(*st.ctx);
    if (!f.ok()) return f.status();
    st.make_pointers = *f;
    if (absl::Status s = HLOC_CU(d, cuMemAlloc,
                                 absl::StrCat("allocating ", st.plan.scratch_bytes, " bytes for the batch's pointer arrays"),
                                 &st.pointers,
                                 static_cast<size_t>(st.plan.scratch_bytes));
        !s.ok())
      return s;
  } else if (c.op != "trsm") {
    if (absl::Status s = SizeWorkspace(st); !s.ok()) return s;
    if (st.lwork > 0)
      if (absl::Status s = HLOC_CU(d, cuMemAlloc,
                                   absl::StrCat("allocating ", st.lwork * Bytes(c.type), " bytes of cuSOLVER workspace"),
                                   &st.workspace,
                                   static_cast<size_t>(st.lwork) * Bytes(c.type));
          !s.ok())
        return s;
  }
  if (c.op == "potrf" && !c.has_info && st.a.batch > 0)
    return HLOC_CU(d, cuMemAlloc, "allocating cuSOLVER's info", &st.info_scratch, static_cast<size_t>(st.a.batch) * 4);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GpuLinalg>> GpuLinalg::Create(const CudaContext& ctx, const Thunk& t) {
  auto err = [&](const std::string& why) { return absl::InvalidArgumentError(absl::StrCat("thunk '", t.name, "': ", why)); };
  absl::StatusOr<LinalgConfig> c = LinalgConfig::Parse(t.backend_config);
  if (!c.ok()) return err(std::string(c.status().message()));
  if (absl::Status s = ValidateLinalgThunk(t, *c); !s.ok()) return err(std::string(s.message()));
  absl::StatusOr<const Libs*> libs = Load();
  if (!libs.ok()) return libs.status();
  auto st = std::make_unique<GpuLinalgState>();
  st->libs = *libs;
  st->ctx = &ctx;
  st->config = *c;
  st->name = t.name;
  absl::StatusOr<Handles> h = HandlesFor(**libs, ctx);
  if (!h.ok()) return h.status();
  st->handles = *h;
  if (IsDecompositionOp(c->op)) {
    if (c->op != "perm") {
      absl::StatusOr<MatrixView> v = MatrixViewOf(c->shapes[0]);
      if (!v.ok()) return v.status();
      st->a = *v;
    }
    if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
    std::unique_ptr<GpuLinalg> g(new GpuLinalg());
    g->state_ = std::move(st);
    if (absl::Status s = PrepareDecomposition(*g->state_); !s.ok()) return s;
    return g;
  }
  const bool trsm = c->op == "trsm";
  st->out_index = trsm ? (c->has_alpha ? 3 : 2) : 1;
  std::vector<size_t> matrices = {0, st->out_index};
  if (trsm) matrices.push_back(1);
  for (size_t i : matrices) {
    absl::StatusOr<MatrixView> v = MatrixViewOf(c->shapes[i]);
    if (!v.ok()) return v.status();
    (i == 0 ? st->a : i == st->out_index ? st->out : st->b) = *v;
  }
  // One order for all matrices (a 1-row or 1-column matrix is both and fits either).
  auto cm = [](const MatrixView& v) { return v.ColumnMajorDense(); };
  auto rm = [](const MatrixView& v) { return v.RowMajorDense(); };
  std::vector<const MatrixView*> views = {&st->a, &st->out};
  if (trsm) views.push_back(&st->b);
  const bool all_cm = std::all_of(views.begin(), views.end(), [&](const MatrixView* v) { return cm(*v); });
  const bool all_rm = std::all_of(views.begin(), views.end(), [&](const MatrixView* v) { return rm(*v); });
  if (!all_cm && !all_rm) return err("matrices must all be dense column-major or all row-major, batch major");
  st->row_major = !all_cm;
  if (c->op == "getrf" && st->row_major) return err("getrf needs column-major matrices");
  for (size_t i = 0; i < c->shapes.size(); ++i)
    if (c->shapes[i].element_type == "s32" && !DefaultLayout(c->shapes[i]))
      return err(absl::StrCat("the s32 result ", i, " must have the default layout"));
  const int64_t eb = Bytes(c->type);
  const int64_t rows = trsm ? st->out.rows : st->a.rows, cols = trsm ? st->out.cols : st->a.cols;
  const LinalgPath path = ChooseLinalgPath(c->op, st->a.batch, rows, cols, LinalgPathOverrideFromEnv());
  st->plan = PlanLinalgBatch(c->op, path, st->a.batch, st->a.rows * st->a.cols * eb, st->out.rows * st->out.cols * eb,
                             st->out_index);
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  // Owned by g from here, so an allocation that fails frees the ones before it.
  std::unique_ptr<GpuLinalg> g(new GpuLinalg());
  g->state_ = std::move(st);
  if (absl::Status s = AllocateScratch(*g->state_); !s.ok()) return s;
  return g;
}

GpuLinalg::~GpuLinalg() {
  if (!state_) return;
  const CudaDriver& d = *state_->ctx->driver;
  (void)state_->ctx->MakeCurrent();
  if (state_->workspace != 0) d.cuMemFree(state_->workspace);
  if (state_->info_scratch != 0) d.cuMemFree(state_->info_scratch);
  if (state_->pointers != 0) d.cuMemFree(state_->pointers);
  if (state_->gesvdj != nullptr) state_->libs->cusolverDnDestroyGesvdjInfo(state_->gesvdj);
  if (state_->syevj != nullptr) state_->libs->cusolverDnDestroySyevjInfo(state_->syevj);
}

namespace {

absl::Status FactorPerMatrix(const GpuLinalgState& st, const std::vector<CUdeviceptr>& args, cublasFillMode_t uplo,
                             CUdeviceptr info) {
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const cusolverDnHandle_t h = st.handles.solver;
  const int n = static_cast<int>(st.a.rows), m = static_cast<int>(st.a.cols);
  const int k = std::min(n, m);
  const int64_t per = st.out.rows * st.out.cols * Bytes(c.type);
  void* w = reinterpret_cast<void*>(st.workspace);
  for (int64_t b = 0; b < st.a.batch && n > 0 && m > 0; ++b) {
    void* A = reinterpret_cast<void*>(args[st.out_index] + b * per);
    int* dinfo = reinterpret_cast<int*>(info + b * 4);
    cusolverStatus_t s;
    if (c.op == "potrf") {
      if (c.type == "f32") s = l.cusolverDnSpotrf(h, uplo, n, (float*)A, n, (float*)w, st.lwork, dinfo);
      else if (c.type == "f64") s = l.cusolverDnDpotrf(h, uplo, n, (double*)A, n, (double*)w, st.lwork, dinfo);
      else if (c.type == "c64") s = l.cusolverDnCpotrf(h, uplo, n, (cuComplex*)A, n, (cuComplex*)w, st.lwork, dinfo);
      else s = l.cusolverDnZpotrf(h, uplo, n, (cuDoubleComplex*)A, n, (cuDoubleComplex*)w, st.lwork, dinfo);
    } else {
      int* ipiv = reinterpret_cast<int*>(args[2] + b * k * 4);
      if (c.type == "f32") s = l.cusolverDnSgetrf(h, n, m, (float*)A, n, (float*)w, ipiv, dinfo);
      else if (c.type == "f64") s = l.cusolverDnDgetrf(h, n, m, (double*)A, n, (double*)w, ipiv, dinfo);
      else if (c.type == "c64") s = l.cusolverDnCgetrf(h, n, m, (cuComplex*)A, n, (cuComplex*)w, ipiv, dinfo);
      else s = l.cusolverDnZgetrf(h, n, m, (cuDoubleComplex*)A, n, (cuDoubleComplex*)w, ipiv, dinfo);
    }
    if (absl::Status e = SolverCheck(s, c.op == "potrf" ? "cusolverDn<t>potrf" : "cusolverDn<t>getrf", st.name); !e.ok())
      return e;
  }
  return absl::OkStatus();
}

// XLA's cholesky op: zero the other triangle and NaN-fill the matrices whose factorization
// failed (all-ones bytes are a NaN in every float type). Column j of the column-major view
// holds one contiguous run to zero, at the same place in every matrix: one 2-D memset (pitch
// = the matrix) per column covers the batch. Reads info back, so it waits on the stream.
absl::Status CholeskyOpFixup(const GpuLinalgState& st, CUstream stream, CUdeviceptr out, CUdeviceptr info,
                             bool cm_lower) {
  const CudaDriver& d = *st.ctx->driver;
  const int64_t n = st.a.rows, eb = Bytes(st.config.type), per = n * n * eb;
  for (int64_t j = 0; j < n && st.a.batch > 0; ++j) {
    const int64_t first = cm_lower ? 0 : j + 1, count = cm_lower ? j : n - j - 1;
    if (count == 0) continue;
    if (absl::Status s = HLOC_CU(d, cuMemsetD2D8Async, st.name, out + (j * n + first) * eb, static_cast<size_t>(per),
                                 0, static_cast<size_t>(count * eb), static_cast<size_t>(st.a.batch), stream);
        !s.ok())
      return s;
  }
  std::vector<int32_t> host(st.a.batch);
  if (absl::Status s = HLOC_CU(d, cuMemcpyDtoHAsync, st.name, host.data(), info, host.size() * 4, stream); !s.ok())
    return s;
  if (absl::Status s = HLOC_CU(d, cuStreamSynchronize, st.name, stream); !s.ok()) return s;
  for (int64_t b = 0; b < st.a.batch; ++b)
    if (host[b] != 0)
      if (absl::Status s = HLOC_CU(d, cuMemsetD8Async, st.name, out + b * per, 0xff, static_cast<size_t>(per), stream);
          !s.ok())
        return s;
  return absl::OkStatus();
}

// trsm in place on x: op(A) X = alpha B or X op(A) = alpha B. Row-major matrices are the
// column-major transposes: X^T op(A)^T = B^T, i.e. the other side with the other triangle.
TrsmCall TrsmCallOf(const GpuLinalgState& st, const std::vector<CUdeviceptr>& args) {
  static const float one_f = 1;
  static const double one_d = 1;
  static const cuComplex one_c = {1, 0};
  static const cuDoubleComplex one_z = {1, 0};
  const LinalgConfig& c = st.config;
  const bool left = c.left_side != st.row_major, lower = c.lower != st.row_major;
  TrsmCall t;
  t.side = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  t.uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  t.op = c.transpose == 'N' ? CUBLAS_OP_N : c.transpose == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
  t.diag = c.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  t.rows = static_cast<int>(st.row_major ? st.out.cols : st.out.rows);
  t.cols = static_cast<int>(st.row_major ? st.out.rows : st.out.cols);
  t.lda = static_cast<int>(st.a.rows);
  t.alpha = c.has_alpha ? reinterpret_cast<const void*>(args[2])
            : c.type == "f32" ? static_cast<const void*>(&one_f)
            : c.type == "f64" ? static_cast<const void*>(&one_d)
            : c.type == "c64" ? static_cast<const void*>(&one_c) : static_cast<const void*>(&one_z);
  return t;
}

absl::Status TrsmPerMatrix(const GpuLinalgState& st, const std::vector<CUdeviceptr>& args, const TrsmCall& t) {
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const int64_t eb = Bytes(c.type), a_per = st.a.rows * st.a.cols * eb, per = st.out.rows * st.out.cols * eb;
  const cublasHandle_t h = st.handles.blas;
  for (int64_t b = 0; b < st.a.batch; ++b) {
    const void* A = reinterpret_cast<const void*>(args[0] + b * a_per);
    void* X = reinterpret_cast<void*>(args[st.out_index] + b * per);
    cublasStatus_t s;
    if (c.type == "f32") s = l.cublasStrsm_v2(h, t.side, t.uplo, t.op, t.diag, t.rows, t.cols, (const float*)t.alpha, (const float*)A, t.lda, (float*)X, t.rows);
    else if (c.type == "f64") s = l.cublasDtrsm_v2(h, t.side, t.uplo, t.op, t.diag, t.rows, t.cols, (const double*)t.alpha, (const double*)A, t.lda, (double*)X, t.rows);
    else if (c.type == "c64") s = l.cublasCtrsm_v2(h, t.side, t.uplo, t.op, t.diag, t.rows, t.cols, (const cuComplex*)t.alpha, (const cuComplex*)A, t.lda, (cuComplex*)X, t.rows);
    else s = l.cublasZtrsm_v2(h, t.side, t.uplo, t.op, t.diag, t.rows, t.cols, (const cuDoubleComplex*)t.alpha, (const cuDoubleComplex*)A, t.lda, (cuDoubleComplex*)X, t.rows);
    if (absl::Status e = BlasCheck(s, "cublas<t>trsm", st.name); !e.ok()) return e;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status GpuLinalg::Run(CUstream stream, const std::vector<CUdeviceptr>& args) const {
  const GpuLinalgState& st = *state_;
  if (IsDecompositionOp(st.config.op)) return RunDecomposition(st, stream, args);
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const CudaDriver& d = *st.ctx->driver;
  const CUdeviceptr out = args[st.out_index];
  const CUdeviceptr in = c.op == "trsm" ? args[1] : args[0];
  const int64_t out_bytes = st.out.batch * st.out.rows * st.out.cols * Bytes(c.type);
  // In place on the result: copy the operand there unless they share the buffer.
  if (in != out && out_bytes > 0)
    if (absl::Status s = HLOC_CU(d, cuMemcpyDtoDAsync, st.name, out, in, static_cast<size_t>(out_bytes), stream); !s.ok())
      return s;
  const bool batched = st.plan.path == LinalgPath::kBatched;
  // Calls go to the stream set right before them (the handles are shared per device); the
  // batched getrf and every trsm are cuBLAS's, the rest cuSOLVER's.
  const bool blas = c.op == "trsm" || (batched && c.op == "getrf");
  if (blas) {
    if (absl::Status s = BlasCheck(l.cublasSetStream_v2(st.handles.blas, stream), "cublasSetStream", st.name); !s.ok())
      return s;
  } else if (absl::Status s = SolverCheck(l.cusolverDnSetStream(st.handles.solver, stream), "cusolverDnSetStream",
                                          st.name);
             !s.ok()) {
    return s;
  }
  if (c.op == "potrf" || c.op == "getrf") {
    // potrf on a row-major matrix factors its column-major transpose with the other triangle.
    const bool cm_lower = c.lower != st.row_major;
    const cublasFillMode_t uplo = cm_lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const CUdeviceptr info = c.op == "getrf" ? args[3] : c.has_info ? args[2] : st.info_scratch;
    absl::Status s = batched ? FactorBatched(st, stream, args, uplo, info) : FactorPerMatrix(st, args, uplo, info);
    if (!s.ok() || !c.cholesky_op || st.a.rows == 0) return s;
    return CholeskyOpFixup(st, stream, out, info, cm_lower);
  }
  if (absl::Status s = BlasCheck(l.cublasSetPointerMode_v2(st.handles.blas, c.has_alpha ? CUBLAS_POINTER_MODE_DEVICE
                                                                                          : CUBLAS_POINTER_MODE_HOST),
                                 "cublasSetPointerMode", st.name);
      !s.ok())
    return s;
  const TrsmCall t = TrsmCallOf(st, args);
  if (t.rows == 0 || t.cols == 0 || st.a.batch == 0) return absl::OkStatus();
  return batched ? TrsmBatched(st, stream, args, t) : TrsmPerMatrix(st, args, t);
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
