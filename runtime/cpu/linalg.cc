// The CPU runtime's dense linear algebra (linalg_config.h): potrf, getrf and trsm through LAPACK
// and BLAS, one matrix at a time. Each matrix is gathered into a column-major scratch matrix
// (any layout the compiler chose is read through its strides), factored or solved there, and
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
}

namespace hloc::runtime {
namespace {

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

template <typename T> absl::Status Run(const LinalgConfig& c, void** args) {
  absl::StatusOr<MatrixView> av = MatrixViewOf(c.shapes[0]);
  if (!av.ok()) return av.status();
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
  if (c->type == "f32") return Run<float>(*c, args);
  if (c->type == "f64") return Run<double>(*c, args);
  if (c->type == "c64") return Run<std::complex<float>>(*c, args);
  return Run<std::complex<double>>(*c, args);
}

}  // namespace

std::vector<std::pair<std::string, CpuCustomCall>> LinalgCustomCalls() {
  std::vector<std::pair<std::string, CpuCustomCall>> calls;
  for (const char* target : {kLinalgPotrfTarget, kLinalgGetrfTarget, kLinalgTrsmTarget}) {
    std::string t = target;
    calls.push_back({t, [t](void** args, const std::vector<int64_t>& sizes, const std::string& config) {
                       return RunLinalg(t, args, sizes, config);
                     }});
  }
  return calls;
}

}  // namespace hloc::runtime
