// cuSOLVER potrf/getrf and cuBLAS trsm thunks (see gpu_linalg.h).
#include "runtime/gpu/gpu_linalg.h"

#include <dlfcn.h>

#include <algorithm>
#include <complex>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/executable/linalg_config.h"

#if HLOC_HAVE_CUDA
#include <cublas_v2.h>
#include <cusolverDn.h>
#endif

namespace hloc::runtime::gpu {

#if !HLOC_HAVE_CUDA
absl::Status GpuLinalgAvailable() { return absl::UnavailableError("hloc was built without the CUDA headers"); }
#else

namespace {

#define HLOC_CUSOLVER_ENTRIES(X)                                                                               \
  X(cusolverDnCreate) X(cusolverDnDestroy) X(cusolverDnSetStream)                                              \
  X(cusolverDnSpotrf_bufferSize) X(cusolverDnDpotrf_bufferSize) X(cusolverDnCpotrf_bufferSize)                 \
  X(cusolverDnZpotrf_bufferSize) X(cusolverDnSpotrf) X(cusolverDnDpotrf) X(cusolverDnCpotrf) X(cusolverDnZpotrf) \
  X(cusolverDnSgetrf_bufferSize) X(cusolverDnDgetrf_bufferSize) X(cusolverDnCgetrf_bufferSize)                 \
  X(cusolverDnZgetrf_bufferSize) X(cusolverDnSgetrf) X(cusolverDnDgetrf) X(cusolverDnCgetrf) X(cusolverDnZgetrf)
#define HLOC_CUBLAS_ENTRIES(X)                                                                     \
  X(cublasCreate_v2) X(cublasDestroy_v2) X(cublasSetStream_v2) X(cublasSetPointerMode_v2)          \
  X(cublasStrsm_v2) X(cublasDtrsm_v2) X(cublasCtrsm_v2) X(cublasZtrsm_v2)

struct Libs {
#define HLOC_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUSOLVER_ENTRIES(HLOC_MEMBER)
  HLOC_CUBLAS_ENTRIES(HLOC_MEMBER)
#undef HLOC_MEMBER
};

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

absl::Status SolverCheck(cusolverStatus_t s, const char* fn, const std::string& what) {
  if (s == CUSOLVER_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(fn, " failed with cusolverStatus ", static_cast<int>(s), " (", what, ")"));
}
absl::Status BlasCheck(cublasStatus_t s, const char* fn, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(fn, " failed with cublasStatus ", static_cast<int>(s), " (", what, ")"));
}

// One cuSOLVER and one cuBLAS handle per device, made once (creation is slow; calls go to the
// stream set right before them).
struct Handles {
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
};
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

int64_t Bytes(const std::string& t) { return t == "f32" ? 4 : t == "f64" || t == "c64" ? 8 : 16; }

bool DefaultLayout(const ArrayShape& s) {
  for (size_t i = 0; i < s.minor_to_major.size(); ++i)
    if (s.minor_to_major[i] != static_cast<int64_t>(s.minor_to_major.size() - 1 - i)) return false;
  return true;
}

}  // namespace

absl::Status GpuLinalgAvailable() { return Load().status(); }

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
  std::string name;
};

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
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  const Libs& l = **libs;
  const int n = static_cast<int>(st->a.rows), m = static_cast<int>(st->a.cols);
  const std::string& ty = c->type;
  const cublasFillMode_t uplo = (c->lower != st->row_major) ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  cusolverStatus_t s = CUSOLVER_STATUS_SUCCESS;
  if (c->op == "potrf" && n > 0) {
    if (ty == "f32") s = l.cusolverDnSpotrf_bufferSize(h->solver, uplo, n, nullptr, n, &st->lwork);
    else if (ty == "f64") s = l.cusolverDnDpotrf_bufferSize(h->solver, uplo, n, nullptr, n, &st->lwork);
    else if (ty == "c64") s = l.cusolverDnCpotrf_bufferSize(h->solver, uplo, n, nullptr, n, &st->lwork);
    else s = l.cusolverDnZpotrf_bufferSize(h->solver, uplo, n, nullptr, n, &st->lwork);
  } else if (c->op == "getrf" && n > 0 && m > 0) {
    if (ty == "f32") s = l.cusolverDnSgetrf_bufferSize(h->solver, n, m, nullptr, n, &st->lwork);
    else if (ty == "f64") s = l.cusolverDnDgetrf_bufferSize(h->solver, n, m, nullptr, n, &st->lwork);
    else if (ty == "c64") s = l.cusolverDnCgetrf_bufferSize(h->solver, n, m, nullptr, n, &st->lwork);
    else s = l.cusolverDnZgetrf_bufferSize(h->solver, n, m, nullptr, n, &st->lwork);
  }
  if (absl::Status e = SolverCheck(s, "cusolverDn<t>{potrf,getrf}_bufferSize", t.name); !e.ok()) return e;
  const CudaDriver& d = *ctx.driver;
  if (st->lwork > 0) {
    if (absl::Status e = HLOC_CU(d, cuMemAlloc, "allocating the cuSOLVER workspace", &st->workspace,
                                 static_cast<size_t>(st->lwork) * Bytes(ty));
        !e.ok())
      return e;
  }
  if (c->op == "potrf" && !c->has_info && st->a.batch > 0) {
    if (absl::Status e = HLOC_CU(d, cuMemAlloc, "allocating cuSOLVER's info", &st->info_scratch,
                                 static_cast<size_t>(st->a.batch) * 4);
        !e.ok())
      return e;
  }
  std::unique_ptr<GpuLinalg> g(new GpuLinalg());
  g->state_ = std::move(st);
  return g;
}

GpuLinalg::~GpuLinalg() {
  if (!state_) return;
  const CudaDriver& d = *state_->ctx->driver;
  (void)state_->ctx->MakeCurrent();
  if (state_->workspace != 0) d.cuMemFree(state_->workspace);
  if (state_->info_scratch != 0) d.cuMemFree(state_->info_scratch);
}

absl::Status GpuLinalg::Run(CUstream stream, const std::vector<CUdeviceptr>& args) const {
  const GpuLinalgState& st = *state_;
  const LinalgConfig& c = st.config;
  const Libs& l = *st.libs;
  const CudaDriver& d = *st.ctx->driver;
  const int64_t eb = Bytes(c.type);
  const CUdeviceptr out = args[st.out_index];
  const CUdeviceptr in = c.op == "trsm" ? args[1] : args[0];
  const int64_t out_bytes = st.out.batch * st.out.rows * st.out.cols * eb;
  // In place on the result: copy the operand there unless they share the buffer.
  if (in != out && out_bytes > 0)
    if (absl::Status s = HLOC_CU(d, cuMemcpyDtoDAsync, st.name, out, in, static_cast<size_t>(out_bytes), stream); !s.ok())
      return s;
  const int64_t per = st.out.rows * st.out.cols * eb;
  if (c.op == "potrf" || c.op == "getrf") {
    if (absl::Status s = SolverCheck(l.cusolverDnSetStream(st.handles.solver, stream), "cusolverDnSetStream", st.name);
        !s.ok())
      return s;
    const int n = static_cast<int>(st.a.rows), m = static_cast<int>(st.a.cols);
    const int k = std::min(n, m);
    // potrf on a row-major matrix factors its column-major transpose with the other triangle.
    const bool cm_lower = c.lower != st.row_major;
    const cublasFillMode_t uplo = cm_lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
    const CUdeviceptr info = c.op == "getrf" ? args[3] : c.has_info ? args[2] : st.info_scratch;
    for (int64_t b = 0; b < st.a.batch && n > 0 && m > 0; ++b) {
      void* A = reinterpret_cast<void*>(out + b * per);
      int* dinfo = reinterpret_cast<int*>(info + b * 4);
      cusolverStatus_t s;
      if (c.op == "potrf") {
        void* w = reinterpret_cast<void*>(st.workspace);
        if (c.type == "f32") s = l.cusolverDnSpotrf(st.handles.solver, uplo, n, (float*)A, n, (float*)w, st.lwork, dinfo);
        else if (c.type == "f64") s = l.cusolverDnDpotrf(st.handles.solver, uplo, n, (double*)A, n, (double*)w, st.lwork, dinfo);
        else if (c.type == "c64") s = l.cusolverDnCpotrf(st.handles.solver, uplo, n, (cuComplex*)A, n, (cuComplex*)w, st.lwork, dinfo);
        else s = l.cusolverDnZpotrf(st.handles.solver, uplo, n, (cuDoubleComplex*)A, n, (cuDoubleComplex*)w, st.lwork, dinfo);
      } else {
        void* w = reinterpret_cast<void*>(st.workspace);
        int* ipiv = reinterpret_cast<int*>(args[2] + b * k * 4);
        if (c.type == "f32") s = l.cusolverDnSgetrf(st.handles.solver, n, m, (float*)A, n, (float*)w, ipiv, dinfo);
        else if (c.type == "f64") s = l.cusolverDnDgetrf(st.handles.solver, n, m, (double*)A, n, (double*)w, ipiv, dinfo);
        else if (c.type == "c64") s = l.cusolverDnCgetrf(st.handles.solver, n, m, (cuComplex*)A, n, (cuComplex*)w, ipiv, dinfo);
        else s = l.cusolverDnZgetrf(st.handles.solver, n, m, (cuDoubleComplex*)A, n, (cuDoubleComplex*)w, ipiv, dinfo);
      }
      if (absl::Status e = SolverCheck(s, c.op == "potrf" ? "cusolverDn<t>potrf" : "cusolverDn<t>getrf", st.name); !e.ok())
        return e;
    }
    if (!c.cholesky_op || n == 0) return absl::OkStatus();
    // XLA's cholesky op: zero the other triangle (per column of the column-major view, one
    // contiguous run each) and NaN-fill the matrices whose factorization failed (all-ones
    // bytes are a NaN in every float type).
    for (int64_t b = 0; b < st.a.batch; ++b)
      for (int64_t j = 0; j < n; ++j) {
        const int64_t first = cm_lower ? 0 : j + 1, count = cm_lower ? j : n - j - 1;
        if (count == 0) continue;
        const CUdeviceptr p = out + b * per + (j * n + first) * eb;
        if (absl::Status s = HLOC_CU(d, cuMemsetD8Async, st.name, p, 0, static_cast<size_t>(count * eb), stream); !s.ok())
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
  if (absl::Status s = BlasCheck(l.cublasSetStream_v2(st.handles.blas, stream), "cublasSetStream", st.name); !s.ok())
    return s;
  const bool left = c.left_side != st.row_major, lower = c.lower != st.row_major;
  const int rows = static_cast<int>(st.row_major ? st.out.cols : st.out.rows);
  const int cols = static_cast<int>(st.row_major ? st.out.rows : st.out.cols);
  const int ka = static_cast<int>(st.a.rows);
  const cublasSideMode_t side = left ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT;
  const cublasFillMode_t uplo = lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER;
  const cublasOperation_t op = c.transpose == 'N' ? CUBLAS_OP_N : c.transpose == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C;
  const cublasDiagType_t diag = c.unit_diagonal ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
  if (absl::Status s = BlasCheck(l.cublasSetPointerMode_v2(st.handles.blas, c.has_alpha ? CUBLAS_POINTER_MODE_DEVICE
                                                                                          : CUBLAS_POINTER_MODE_HOST),
                                 "cublasSetPointerMode", st.name);
      !s.ok())
    return s;
  const float one_f = 1;
  const double one_d = 1;
  const cuComplex one_c = {1, 0};
  const cuDoubleComplex one_z = {1, 0};
  const void* alpha = c.has_alpha ? reinterpret_cast<const void*>(args[2])
                      : c.type == "f32" ? static_cast<const void*>(&one_f)
                      : c.type == "f64" ? static_cast<const void*>(&one_d)
                      : c.type == "c64" ? static_cast<const void*>(&one_c) : static_cast<const void*>(&one_z);
  const int64_t a_per = st.a.rows * st.a.cols * eb;
  for (int64_t b = 0; b < st.a.batch && rows > 0 && cols > 0; ++b) {
    const void* A = reinterpret_cast<const void*>(args[0] + b * a_per);
    void* X = reinterpret_cast<void*>(out + b * per);
    const cublasHandle_t h = st.handles.blas;
    cublasStatus_t s;
    if (c.type == "f32") s = l.cublasStrsm_v2(h, side, uplo, op, diag, rows, cols, (const float*)alpha, (const float*)A, ka, (float*)X, rows);
    else if (c.type == "f64") s = l.cublasDtrsm_v2(h, side, uplo, op, diag, rows, cols, (const double*)alpha, (const double*)A, ka, (double*)X, rows);
    else if (c.type == "c64") s = l.cublasCtrsm_v2(h, side, uplo, op, diag, rows, cols, (const cuComplex*)alpha, (const cuComplex*)A, ka, (cuComplex*)X, rows);
    else s = l.cublasZtrsm_v2(h, side, uplo, op, diag, rows, cols, (const cuDoubleComplex*)alpha, (const cuDoubleComplex*)A, ka, (cuDoubleComplex*)X, rows);
    if (absl::Status e = BlasCheck(s, "cublas<t>trsm", st.name); !e.ok()) return e;
  }
  return absl::OkStatus();
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
