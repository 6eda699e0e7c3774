// The CPU runtime's dense linear algebra (linalg_config.h): potrf, getrf, trsm, and (issue 34)
// geqrf, orgqr/ungqr, ormqr/unmqr, syevd/heevd and gesdd through LAPACK and BLAS, one matrix at a time, and
// JAX's pivots-to-permutation. Each matrix is gathered into a column-major scratch matrix (any layout the compiler chose is read through its strides), factored or solved there, and
// scattered to the result. A result that aliases its operand (output_to_operand_aliasing) in the
// same layout is safe that way; in another layout its matrices sit elsewhere, so the operand's
// are all gathered first (OperandMatrices). The O(n^2) copies are small beside the O(n^3) work.
#include "runtime/cpu/linalg.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "runtime/executable/linalg_config.h"

// LAPACK / BLAS (Fortran ABI: everything by pointer, hidden string lengths at the end).
extern "C" {
void spotrf_(const char*, const int*, float*, const int*, int*, size_t);
void dpotrf_(const char*, const int*, double*, const int*, int*, size_t);
void cpotrf_(const char*, const int*, std::complex<float>*, const int*, int*, size_t);
void zpotrf_(const char*, const int*, std::complex<double>*, const int*, int*, size_t);
void sgetrf_(const int*, const int*, float*, const int*, int*, int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void cgetrf_(const int*, const int*, std::complex<float>*, const int*, int*, int*);
void zgetrf_(const int*, const int*, std::complex<double>*, const int*, int*, int*);
void strsm_(const char*, const char*, const char*, const char*, const int*, const int*, const float*, const float*,
            const int*, float*, const int*, size_t, size_t, size_t, size_t);
void dtrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const double*, const double*,
            const int*, double*, const int*, size_t, size_t, size_t, size_t);
void ctrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const std::complex<float>*,
            const std::complex<float>*, const int*, std::complex<float>*, const int*, size_t, size_t, size_t, size_t);
void ztrsm_(const char*, const char*, const char*, const char*, const int*, const int*, const std::complex<double>*,
            const std::complex<double>*, const int*, std::complex<double>*, const int*, size_t, size_t, size_t,
            size_t);
// QR, eigh, SVD (issue 34).
#define HLOC_QR_DECL(p, T, R)                                                                                    \
  void p##geqrf_(const int*, const int*, T*, const int*, T*, T*, const int*, int*);                            \
  void p##gesdd_(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,     \
                 const int*, HLOC_GESDD_RWORK(R) int*, int*, size_t);
#define HLOC_GESDD_RWORK(R)
HLOC_QR_DECL(s, float, float)
HLOC_QR_DECL(d, double, double)
#undef HLOC_GESDD_RWORK
#define HLOC_GESDD_RWORK(R) R*,
HLOC_QR_DECL(c, std::complex<float>, float)
HLOC_QR_DECL(z, std::complex<double>, double)
#undef HLOC_GESDD_RWORK
#undef HLOC_QR_DECL
void sorgqr_(const int*, const int*, const int*, float*, const int*, const float*, float*, const int*, int*);
void dorgqr_(const int*, const int*, const int*, double*, const int*, const double*, double*, const int*, int*);
void cungqr_(const int*, const int*, const int*, std::complex<float>*, const int*, const std::complex<float>*,
             std::complex<float>*, const int*, int*);
void zungqr_(const int*, const int*, const int*, std::complex<double>*, const int*, const std::complex<double>*,
             std::complex<double>*, const int*, int*);
// ?ormqr / ?unmqr: side, trans, m, n, k, a, lda, tau, c, ldc, work, lwork, info.
#define HLOC_ORMQR_DECL(fn, T)                                                                                   \
  void fn(const char*, const char*, const int*, const int*, const int*, const T*, const int*, const T*, T*,     \
          const int*, T*, const int*, int*, size_t, size_t);
HLOC_ORMQR_DECL(sormqr_, float)
HLOC_ORMQR_DECL(dormqr_, double)
HLOC_ORMQR_DECL(cunmqr_, std::complex<float>)
HLOC_ORMQR_DECL(zunmqr_, std::complex<double>)
#undef HLOC_ORMQR_DECL
void ssyevd_(const char*, const char*, const int*, float*, const int*, float*, float*, const int*, int*, const int*,
             int*, size_t, size_t);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*,
             const int*, int*, size_t, size_t);
void cheevd_(const char*, const char*, const int*, std::complex<float>*, const int*, float*, std::complex<float>*,
             const int*, float*, const int*, int*, const int*, int*, size_t, size_t);
void zheevd_(const char*, const char*, const int*, std::complex<double>*, const int*, double*, std::complex<double>*,
             const int*, double*, const int*, int*, const int*, int*, size_t, size_t);
}

namespace hloc::runtime {
namespace {

// The decompositions with their workspace queries (lwork = -1) folded in: each call sizes its
// work arrays itself (they are small beside the matrices).
template <typename T> struct Decomp;
#define HLOC_DECOMP_REAL(T, p, orgqr)                                                                          \
  template <> struct Decomp<T> {                                                                               \
    static int geqrf(int m, int n, T* a, T* tau) {                                                             \
      int info = 0, lwork = -1;                                                                                \
      T q = 0;                                                                                                 \
      p##geqrf_(&m, &n, a, &m, tau, &q, &lwork, &info);                                                        \
      lwork = std::max(1, static_cast<int>(q));                                                                \
      std::vector<T> w(lwork);                                                                                 \
      p##geqrf_(&m, &n, a, &m, tau, w.data(), &lwork, &info);                                                  \
      return info;                                                                                             \
    }                                                                                                          \
    static int orgqr_(int m, int n, int k, T* a, const T* tau) {                                               \
      int info = 0, lwork = -1;                                                                                \
      T q = 0;                                                                                                 \
      p##orgqr(&m, &n, &k, a, &m, tau, &q, &lwork, &info);                                                     \
      lwork = std::max(1, static_cast<int>(q));                                                                \
      std::vector<T> w(lwork);                                                                                 \
      p##orgqr(&m, &n, &k, a, &m, tau, w.data(), &lwork, &info);                                               \
      return info;                                                                                             \
    }                                                                                                          \
    static int syevd(char uplo, int n, T* a, T* w) {                                                           \
      const char jobz = 'V';                                                                                   \
      int info = 0, lwork = -1, liwork = -1, iq = 0;                                                           \
      T q = 0;                                                                                                 \
      p##syevd_(&jobz, &uplo, &n, a, &n, w, &q, &lwork, &iq, &liwork, &info, 1, 1);                            \
      lwork = std::max(1, static_cast<int>(q));                                                                \
      liwork = std::max(1, iq);                                                                                \
      std::vector<T> work(lwork);                                                                              \
      std::vector<int> iwork(liwork);                                                                          \
      p##syevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);          \
      return info;                                                                                             \
    }                                                                                                          \
    static int gesdd(char jobz, int m, int n, T* a, T* s, T* u, T* vt) {                                       \
      int info = 0, lwork = -1;                                                                                \
      const int mn = std::min(m, n), ldu = std::max(1, m), ldvt = std::max(1, jobz == 'S' ? mn : n);          \
      std::vector<int> iwork(std::max(1, 8 * mn));                                                             \
      T q = 0;                                                                                                 \
      p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, &q, &lwork, iwork.data(), &info, 1);              \
      lwork = std::max(1, static_cast<int>(q));                                                                \
      std::vector<T> work(lwork);                                                                              \
      p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work.data(), &lwork, iwork.data(), &info, 1);     \
      return info;                                                                                             \
    }                                                                                                          \
  };
HLOC_DECOMP_REAL(float, s, orgqr_)
HLOC_DECOMP_REAL(double, d, orgqr_)
#undef HLOC_DECOMP_REAL
#define HLOC_DECOMP_COMPLEX(T, R, p)                                                                           \
  template <> struct Decomp<T> {                                                                               \
    static int geqrf(int m, int n, T* a, T* tau) {                                                             \
      int info = 0, lwork = -1;                                                                                \
      T q = 0;                                                                                                 \
      p##geqrf_(&m, &n, a, &m, tau, &q, &lwork, &info);                                                        \
      lwork = std::max(1, static_cast<int>(q.real()));                                                         \
      std::vector<T> w(lwork);                                                                                 \
      p##geqrf_(&m, &n, a, &m, tau, w.data(), &lwork, &info);                                                  \
      return info;                                                                                             \
    }                                                                                                          \
    static int orgqr_(int m, int n, int k, T* a, const T* tau) {                                               \
      int info = 0, lwork = -1;                                                                                \
      T q = 0;                                                                                                 \
      p##ungqr_(&m, &n, &k, a, &m, tau, &q, &lwork, &info);                                                    \
      lwork = std::max(1, static_cast<int>(q.real()));                                                         \
      std::vector<T> w(lwork);                                                                                 \
      p##ungqr_(&m, &n, &k, a, &m, tau, w.data(), &lwork, &info);                                              \
      return info;                                                                                             \
    }                                                                                                          \
    static int syevd(char uplo, int n, T* a, R* w) {                                                           \
      const char jobz = 'V';                                                                                   \
      int info = 0, lwork = -1, lrwork = -1, liwork = -1, iq = 0;                                              \
      T q = 0;                                                                                                 \
      R rq = 0;                                                                                                \
      p##heevd_(&jobz, &uplo, &n, a, &n, w, &q, &lwork, &rq, &lrwork, &iq, &liwork, &info, 1, 1);              \
      lwork = std::max(1, static_cast<int>(q.real()));                                                         \
      lrwork = std::max(1, static_cast<int>(rq));                                                              \
      liwork = std::max(1, iq);                                                                                \
      std::vector<T> work(lwork);                                                                              \
      std::vector<R> rwork(lrwork);                                                                            \
      std::vector<int> iwork(liwork);                                                                          \
      p##heevd_(&jobz, &uplo, &n, a, &n, w, work.data(), &lwork, rwork.data(), &lrwork, iwork.data(), &liwork, \
                &info, 1, 1);                                                                                  \
      return info;                                                                                             \
    }                                                                                                          \
    static int gesdd(char jobz, int m, int n, T* a, R* s, T* u, T* vt) {                                       \
      int info = 0, lwork = -1;                                                                                \
      const int mn = std::min(m, n), mx = std::max(m, n), ldu = std::max(1, m);                              \
      const int ldvt = std::max(1, jobz == 'S' ? mn : n);                                                      \
      std::vector<int> iwork(std::max(1, 8 * mn));                                                             \
      /* LAPACK 3.7's lrwork bound (the largest, for jobz = 'A' / 'S'). */                                     \
      std::vector<R> rwork(std::max<size_t>(1, static_cast<size_t>(mn) *                                       \
                                                   std::max(5 * mn + 7, 2 * mx + 2 * mn + 1)));                 \
      T q = 0;                                                                                                 \
      p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, &q, &lwork, rwork.data(), iwork.data(), &info, 1); \
      lwork = std::max(1, static_cast<int>(q.real()));                                                         \
      std::vector<T> work(lwork);                                                                              \
      p##gesdd_(&jobz, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, work.data(), &lwork, rwork.data(), iwork.data(),   \
                &info, 1);                                                                                     \
      return info;                                                                                             \
    }                                                                                                          \
  };
HLOC_DECOMP_COMPLEX(std::complex<float>, float, c)
HLOC_DECOMP_COMPLEX(std::complex<double>, double, z)
#undef HLOC_DECOMP_COMPLEX

// op(Q) C or C op(Q) on the column-major rows x cols `c` in place (LAPACK's ?ormqr / ?unmqr),
// the reflectors in the first k columns of the column-major `a` (leading dimension lda), with
// its workspace query folded in as Decomp's.
template <typename T> struct Ormqr;
#define HLOC_ORMQR(T, fn)                                                                                      \
  template <> struct Ormqr<T> {                                                                                \
    static int Run(char side, char trans, int rows, int cols, int k, const T* a, int lda, const T* tau, T* c) { \
      int info = 0, lwork = -1;                                                                                \
      T q = 0;                                                                                                 \
      fn(&side, &trans, &rows, &cols, &k, a, &lda, tau, c, &rows, &q, &lwork, &info, 1, 1);                    \
      lwork = std::max(1, static_cast<int>(std::real(q)));                                                     \
      std::vector<T> w(lwork);                                                                                 \
      fn(&side, &trans, &rows, &cols, &k, a, &lda, tau, c, &rows, w.data(), &lwork, &info, 1, 1);              \
      return info;                                                                                             \
    }                                                                                                          \
  };
HLOC_ORMQR(float, sormqr_)
HLOC_ORMQR(double, dormqr_)
HLOC_ORMQR(std::complex<float>, cunmqr_)
HLOC_ORMQR(std::complex<double>, zunmqr_)
#undef HLOC_ORMQR

template <typename T> struct Lapack;
#define HLOC_LAPACK(T, p)                                                                                     \
  template <> struct Lapack<T> {                                                                              \
    static void potrf(char uplo, int n, T* a, int lda, int* info) { p##potrf_(&uplo, &n, a, &lda, info, 1); } \
    static void getrf(int m, int n, T* a, int lda, int* ipiv, int* info) { p##getrf_(&m, &n, a, &lda, ipiv, info); } \
    static void trsm(char side, char uplo, char trans, char diag, int m, int n, T alpha, const T* a, int lda, T* b, \
                     int ldb) {                                                                               \
      p##trsm_(&side, &uplo, &trans, &diag, &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);                    \
    }                                                                                                         \
  };
HLOC_LAPACK(float, s)
HLOC_LAPACK(double, d)
HLOC_LAPACK(std::complex<float>, c)
HLOC_LAPACK(std::complex<double>, z)
#undef HLOC_LAPACK

template <typename T> T NaNValue() {
  if constexpr (std::is_floating_point_v<T>) return std::numeric_limits<T>::quiet_NaN();
  else {
    using R = typename T::value_type;
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  }
}

// Matrix b of `v` in `base` <-> a column-major rows x cols scratch.
template <typename T> void Gather(const T* base, const MatrixView& v, int64_t b, std::vector<T>& w) {
  w.resize(v.rows * v.cols);
  const T* m = base + v.Offset(b);
  for (int64_t j = 0; j < v.cols; ++j)
    for (int64_t i = 0; i < v.rows; ++i) w[j * v.rows + i] = m[i * v.row_stride + j * v.col_stride];
}
template <typename T> void Scatter(const std::vector<T>& w, const MatrixView& v, int64_t b, T* base) {
  T* m = base + v.Offset(b);
  for (int64_t j = 0; j < v.cols; ++j)
    for (int64_t i = 0; i < v.rows; ++i) m[i * v.row_stride + j * v.col_stride] = w[j * v.rows + i];
}

// Whether matrix b of both views is at the same elements, for every b.
bool SamePlacement(const MatrixView& a, const MatrixView& b) {
  return a.rows == b.rows && a.cols == b.cols && a.row_stride == b.row_stride && a.col_stride == b.col_stride &&
         a.batch_dims == b.batch_dims && a.batch_strides == b.batch_strides;
}

// The matrices of an operand, gathered one at a time, or all before the first result is
// written when the result is the same buffer (aliased; buffer assignment gives an aliased
// result its operand's slice, never an overlapping one) with its matrices placed elsewhere:
// then writing result b can overwrite operand matrix b+1 before it is read.
template <typename T> class OperandMatrices {
 public:
  OperandMatrices(const void* base, const MatrixView& v, const void* result, const MatrixView& result_view)
      : base_(static_cast<const T*>(base)), v_(v) {
    if (base != result || SamePlacement(v, result_view)) return;
    staged_.resize(v.batch);
    for (int64_t b = 0; b < v.batch; ++b) Gather(base_, v_, b, staged_[b]);
  }
  void Read(int64_t b, std::vector<T>& w) const {
    if (staged_.empty()) Gather(base_, v_, b, w);
    else w = staged_[b];
  }

 private:
  const T* base_;
  const MatrixView& v_;
  std::vector<std::vector<T>> staged_;
};

// Element offset of logical (row-major) element `i` of an array in its layout.
int64_t LogicalOffset(const ArrayShape& s, int64_t i) {
  const int64_t r = static_cast<int64_t>(s.dimensions.size());
  std::vector<int64_t> strides(r, 0);
  int64_t st = 1;
  for (int64_t d : s.minor_to_major) strides[d] = st, st *= s.dimensions[d];
  int64_t off = 0;
  for (int64_t d = r - 1; d >= 0; --d) {
    off += (i % s.dimensions[d]) * strides[d];
    i /= s.dimensions[d];
  }
  return off;
}

template <typename T> struct RealOf { using type = T; };
template <typename R> struct RealOf<std::complex<R>> { using type = R; };

// A vector argument (tau, w, s: [batch..., len]) element (b, i) through its layout.
template <typename V> V& VecAt(void* base, const ArrayShape& s, int64_t len, int64_t b, int64_t i) {
  return static_cast<V*>(base)[LogicalOffset(s, b * len + i)];
}

// ormqr: c's matrices, gathered (staged when the aliased result is placed otherwise), have op(Q)
// applied from the side the config names, then go to the result; a and tau are only read.
template <typename T> absl::Status RunOrmqr(const LinalgConfig& c, void** args, const MatrixView& av) {
  absl::StatusOr<MatrixView> cv = MatrixViewOf(c.shapes[2]), ov = MatrixViewOf(c.shapes[3]);
  if (!cv.ok()) return cv.status();
  if (!ov.ok()) return ov.status();
  const OperandMatrices<T> cm(args[2], *cv, args[3], *ov);
  const ArrayShape& ts = c.shapes[1];
  const int kt = static_cast<int>(ts.dimensions.back());
  const int rows = static_cast<int>(cv->rows), cols = static_cast<int>(cv->cols);
  const int lda = std::max(1, static_cast<int>(av.rows));
  std::vector<T> a, w, tau(std::max(kt, 1));
  for (int64_t b = 0; b < av.batch; ++b) {
    Gather(static_cast<const T*>(args[0]), av, b, a);
    cm.Read(b, w);
    for (int i = 0; i < kt; ++i) tau[i] = VecAt<const T>(args[1], ts, kt, b, i);
    if (rows > 0 && cols > 0)
      Ormqr<T>::Run(c.left_side ? 'L' : 'R', c.transpose, rows, cols, kt, a.data(), lda, tau.data(), w.data());
    Scatter(w, *ov, b, static_cast<T*>(args[3]));
  }
  return absl::OkStatus();
}

// geqrf, orgqr, syevd, gesvd (LAPACK) and the pivot permutation (linalg_config.h's lists).
template <typename T> absl::Status RunDecomposition(const LinalgConfig& c, void** args, const MatrixView& av) {
  using R = typename RealOf<T>::type;
  const int m = static_cast<int>(av.rows), n = static_cast<int>(av.cols), k = std::min(m, n);
  std::vector<T> w;
  if (c.op == "geqrf") {
    absl::StatusOr<MatrixView> ov = MatrixViewOf(c.shapes[1]);
    if (!ov.ok()) return ov.status();
    const OperandMatrices<T> a(args[0], av, args[1], *ov);
    std::vector<T> tau(std::max(k, 1));
    for (int64_t b = 0; b < av.batch; ++b) {
      a.Read(b, w);
      if (k > 0) Decomp<T>::geqrf(m, n, w.data(), tau.data());
      Scatter(w, *ov, b, static_cast<T*>(args[1]));
      for (int i = 0; i < k; ++i) VecAt<T>(args[2], c.shapes[2], k, b, i) = tau[i];
    }
    return absl::OkStatus();
  }
  if (c.op == "orgqr") {
    absl::StatusOr<MatrixView> ov = MatrixViewOf(c.shapes[2]);
    if (!ov.ok()) return ov.status();
    const OperandMatrices<T> a(args[0], av, args[2], *ov);
    const ArrayShape& ts = c.shapes[1];
    const int kt = static_cast<int>(ts.dimensions.back());
    std::vector<T> tau(std::max(kt, 1));
    for (int64_t b = 0; b < av.batch; ++b) {
      a.Read(b, w);
      for (int i = 0; i < kt; ++i) tau[i] = VecAt<const T>(args[1], ts, kt, b, i);
      if (m > 0 && n > 0) Decomp<T>::orgqr_(m, n, kt, w.data(), tau.data());
      Scatter(w, *ov, b, static_cast<T*>(args[2]));
    }
    return absl::OkStatus();
  }
  if (c.op == "ormqr") return RunOrmqr<T>(c, args, av);
  if (c.op == "syevd") {
    absl::StatusOr<MatrixView> vv = MatrixViewOf(c.shapes[1]);
    if (!vv.ok()) return vv.status();
    const OperandMatrices<T> a(args[0], av, args[1], *vv);
    std::vector<R> ev(std::max(n, 1));
    for (int64_t b = 0; b < av.batch; ++b) {
      a.Read(b, w);
      int info = 0;
      if (n > 0) info = Decomp<T>::syevd(c.lower ? 'L' : 'U', n, w.data(), ev.data());
      Scatter(w, *vv, b, static_cast<T*>(args[1]));
      for (int i = 0; i < n; ++i) VecAt<R>(args[2], c.shapes[2], n, b, i) = ev[i];
      VecAt<int32_t>(args[3], c.shapes[3], 1, b, 0) = info;
    }
    return absl::OkStatus();
  }
  // gesvd: gesdd computes U (m x m, or m x k for the economy form) and V^H (n x n, or k x n)
  // (or neither), then the call's blocks are copied out: u [m, m|k], and V^H [n|k, n] or
  // (jacobi) V [n, n|k].
  absl::StatusOr<MatrixView> ov = MatrixViewOf(c.shapes[1]);
  if (!ov.ok()) return ov.status();
  const bool uv = c.compute_uv || c.jacobi;
  const size_t ui = c.transposed ? 4 : 3, vi = c.transposed ? 3 : 4;
  absl::StatusOr<MatrixView> uvw = uv ? MatrixViewOf(c.shapes[ui]) : absl::StatusOr<MatrixView>(MatrixView{});
  absl::StatusOr<MatrixView> vvw = uv ? MatrixViewOf(c.shapes[vi]) : absl::StatusOr<MatrixView>(MatrixView{});
  if (!uvw.ok()) return uvw.status();
  if (!vvw.ok()) return vvw.status();
  const OperandMatrices<T> a(args[0], av, args[1], *ov);
  std::vector<R> sv(std::max(k, 1));
  const char jobz = !uv ? 'N' : c.full_matrices ? 'A' : 'S';
  const int ucols = jobz == 'S' ? k : m, vtrows = jobz == 'S' ? k : n;
  std::vector<T> u(uv ? std::max(m * ucols, 1) : 1), vt(uv ? std::max(vtrows * n, 1) : 1), blk;
  for (int64_t b = 0; b < av.batch; ++b) {
    a.Read(b, w);
    int info = 0;
    if (k > 0) info = Decomp<T>::gesdd(jobz, m, n, w.data(), sv.data(), u.data(), vt.data());
    Scatter(w, *ov, b, static_cast<T*>(args[1]));  // scratch (JAX drops it)
    for (int i = 0; i < k; ++i) VecAt<R>(args[2], c.shapes[2], k, b, i) = sv[i];
    if (uv) {
      // u: the first uvw->cols columns of the column-major m x m U.
      blk.assign(u.begin(), u.begin() + static_cast<int64_t>(m) * uvw->cols);
      Scatter(blk, *uvw, b, static_cast<T*>(args[ui]));
      blk.resize(vvw->rows * vvw->cols);
      for (int64_t j = 0; j < vvw->cols; ++j)
        for (int64_t i = 0; i < vvw->rows; ++i) {
          // V^H (i, j) = vt[i + j * vtrows]; V (i, j) = conj(vt[j + i * vtrows]).
          if (c.jacobi) {
            T x = vt[j + i * vtrows];
            if constexpr (!std::is_floating_point_v<T>) x = std::conj(x);
            blk[j * vvw->rows + i] = x;
          } else {
            blk[j * vvw->rows + i] = vt[i + j * vtrows];
          }
        }
      Scatter(blk, *vvw, b, static_cast<T*>(args[vi]));
    }
    VecAt<int32_t>(args[5], c.shapes[5], 1, b, 0) = info;
  }
  return absl::OkStatus();
}

absl::Status RunPermutation(const LinalgConfig& c, void** args) {
  const ArrayShape& ps = c.shapes[0];
  const ArrayShape& os = c.shapes[1];
  const int64_t k = ps.dimensions.back(), p = os.dimensions.back();
  int64_t batch = 1;
  for (size_t d = 0; d + 1 < ps.dimensions.size(); ++d) batch *= ps.dimensions[d];
  std::vector<int32_t> perm(p);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < p; ++i) perm[i] = static_cast<int32_t>(i);
    for (int64_t i = 0; i < k && i < p; ++i) {
      const int64_t j = VecAt<const int32_t>(args[0], ps, k, b, i);
      if (j >= 0 && j < p) std::swap(perm[i], perm[j]);
    }
    for (int64_t i = 0; i < p; ++i) VecAt<int32_t>(args[1], os, p, b, i) = perm[i];
  }
  return absl::OkStatus();
}

template <typename T> absl::Status Run(const LinalgConfig& c, void** args) {
  absl::StatusOr<MatrixView> av = MatrixViewOf(c.shapes[0]);
  if (!av.ok()) return av.status();
  if (c.op != "potrf" && c.op != "getrf" && c.op != "trsm") return RunDecomposition<T>(c, args, *av);
  std::vector<T> w, bw;
  if (c.op == "potrf") {
    absl::StatusOr<MatrixView> fv = MatrixViewOf(c.shapes[1]);
    if (!fv.ok()) return fv.status();
    const int n = static_cast<int>(av->rows);
    const OperandMatrices<T> a(args[0], *av, args[1], *fv);
    for (int64_t b = 0; b < av->batch; ++b) {
      a.Read(b, w);
      int info = 0;
      if (n > 0) Lapack<T>::potrf(c.lower ? 'L' : 'U', n, w.data(), n, &info);
      if (c.cholesky_op) {
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i)
            if (info != 0) w[j * n + i] = NaNValue<T>();
            else if (c.lower ? i < j : i > j) w[j * n + i] = T(0);
      }
      Scatter(w, *fv, b, static_cast<T*>(args[1]));
      if (c.has_info) static_cast<int32_t*>(args[2])[LogicalOffset(c.shapes[2], b)] = info;
    }
    return absl::OkStatus();
  }
  if (c.op == "getrf") {
    absl::StatusOr<MatrixView> fv = MatrixViewOf(c.shapes[1]);
    if (!fv.ok()) return fv.status();
    const int m = static_cast<int>(av->rows), n = static_cast<int>(av->cols), k = std::min(m, n);
    std::vector<int> ipiv(std::max(k, 1));
    const OperandMatrices<T> a(args[0], *av, args[1], *fv);
    for (int64_t b = 0; b < av->batch; ++b) {
      a.Read(b, w);
      int info = 0;
      if (m > 0 && n > 0) Lapack<T>::getrf(m, n, w.data(), m, ipiv.data(), &info);
      Scatter(w, *fv, b, static_cast<T*>(args[1]));
      for (int j = 0; j < k; ++j) static_cast<int32_t*>(args[2])[LogicalOffset(c.shapes[2], b * k + j)] = ipiv[j];
      static_cast<int32_t*>(args[3])[LogicalOffset(c.shapes[3], b)] = info;
    }
    return absl::OkStatus();
  }
  // trsm: op(A) X = alpha B (left) or X op(A) = alpha B (right), both column-major here.
  const size_t xi = c.has_alpha ? 3 : 2;
  absl::StatusOr<MatrixView> bv = MatrixViewOf(c.shapes[1]), xv = MatrixViewOf(c.shapes[xi]);
  if (!bv.ok()) return bv.status();
  if (!xv.ok()) return xv.status();
  const T alpha = c.has_alpha ? *static_cast<const T*>(args[2]) : T(1);
  const int k = static_cast<int>(av->rows), rows = static_cast<int>(bv->rows), cols = static_cast<int>(bv->cols);
  const OperandMatrices<T> a(args[0], *av, args[xi], *xv), rhs(args[1], *bv, args[xi], *xv);
  for (int64_t b = 0; b < av->batch; ++b) {
    a.Read(b, w);
    rhs.Read(b, bw);
    if (rows > 0 && cols > 0)
      Lapack<T>::trsm(c.left_side ? 'L' : 'R', c.lower ? 'L' : 'U', c.transpose, c.unit_diagonal ? 'U' : 'N', rows,
                      cols, alpha, w.data(), std::max(k, 1), bw.data(), rows);
    Scatter(bw, *xv, b, static_cast<T*>(args[xi]));
  }
  return absl::OkStatus();
}

absl::Status RunLinalg(const std::string& target, void** args, const std::vector<int64_t>& sizes,
                       const std::string& config_text) {
  absl::StatusOr<LinalgConfig> c = LinalgConfig::Parse(config_text);
  if (!c.ok()) return c.status();
  // The thunk's slices are checked against the config here as well as at load time, since
  // a custom call sees only pointers and sizes.
  Thunk probe;
  probe.target = target;
  for (int64_t s : sizes) probe.arguments.push_back(BufferSlice{0, 0, s});
  if (absl::Status s = ValidateLinalgThunk(probe, *c); !s.ok()) return s;
  if (c->op == "perm") return RunPermutation(*c, args);
  if (c->type == "f32") return Run<float>(*c, args);
  if (c->type == "f64") return Run<double>(*c, args);
  if (c->type == "c64") return Run<std::complex<float>>(*c, args);
  return Run<std::complex<double>>(*c, args);
}

}  // namespace

std::vector<std::pair<std::string, CpuCustomCall>> LinalgCustomCalls() {
  std::vector<std::pair<std::string, CpuCustomCall>> calls;
  for (const char* target : {kLinalgPotrfTarget, kLinalgGetrfTarget, kLinalgTrsmTarget, kLinalgGeqrfTarget,
                             kLinalgOrgqrTarget, kLinalgOrmqrTarget, kLinalgSyevdTarget, kLinalgGesvdTarget,
                             kLinalgPermTarget}) {
    std::string t = target;
    calls.push_back({t, [t](void** args, const std::vector<int64_t>& sizes, const std::string& config) {
                       return RunLinalg(t, args, sizes, config);
                     }});
  }
  return calls;
}

}  // namespace hloc::runtime
