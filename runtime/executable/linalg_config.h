// The dense linear-algebra thunks (kCustomCall with a target of kLinalgTargets): Cholesky
// (potrf), LU (getrf) and triangular solves (trsm), batched over every dimension but the last
// two. The CPU runtime runs them with LAPACK/BLAS (runtime/cpu/linalg.cc), the GPU runtime with
// cuSOLVER and cuBLAS (runtime/gpu/gpu_linalg.cc). The compiler writes the config as the thunk's
// backend_config text (so .hlox files carry it unchanged); arguments are the operands' slices
// then the results', in the order `shapes` lists them:
//   potrf:  a, factor[, info s32[batch]]      (no info: the HLO cholesky op, see `cholesky_op`)
//   getrf:  a, lu, pivots s32[batch, min(m,n)], info s32[batch]
//   trsm:   a, b[, alpha scalar], x[, workspace]
//   geqrf:  a, a_out, tau[batch, min(m,n)]                      (issue 34: JAX's QR, eigh, SVD)
//   orgqr:  a, tau[batch, k], q (a's shape)
//   ormqr:  a [batch, m, ka], tau[batch, k], c, out (c's shape, aliased to c): op(Q) c with
//           `left`, else c op(Q); op per `transpose` ('N', 'T' real, 'C' complex), as LAPACK's
//           ?ormqr / ?unmqr take side and trans
//   syevd:  a, v, w[batch, n] (real), info s32[batch]
//   gesvd:  a, a_out, s[batch, min(m,n)] (real), u, v, info s32[batch]: u [m, m|k] and v [n|k, n]
//           (V^H) in the call's result order: with `transposed` (cusolver_gesvd_ffi on a row-major
//           wide matrix) argument 3 is V^H and 4 is U; with `jacobi` (gesvdj) argument 4 is V [n, n|k]
//   perm:   pivots s32[batch, k] (0-based), permutation s32[batch, p]   (type s32)
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {

// Thunk targets (the CPU and GPU runtimes each implement all three).
inline constexpr const char* kLinalgPotrfTarget = "linalg.potrf";
inline constexpr const char* kLinalgGetrfTarget = "linalg.getrf";
inline constexpr const char* kLinalgTrsmTarget = "linalg.trsm";
inline constexpr const char* kLinalgGeqrfTarget = "linalg.geqrf";
inline constexpr const char* kLinalgOrgqrTarget = "linalg.orgqr";
inline constexpr const char* kLinalgOrmqrTarget = "linalg.ormqr";
inline constexpr const char* kLinalgSyevdTarget = "linalg.syevd";
inline constexpr const char* kLinalgGesvdTarget = "linalg.gesvd";
inline constexpr const char* kLinalgPermTarget = "linalg.perm";
// The thunk target of a config op ("potrf" -> "linalg.potrf"); empty for an unknown op.
std::string LinalgTargetOf(const std::string& op);
bool IsLinalgTarget(const std::string& target);

struct LinalgConfig {
  std::string op;       // "potrf", "getrf", "trsm"
  std::string type;     // f32, f64, c64, c128 (the matrices' element type)
  bool lower = true;    // potrf / trsm: the triangle read
  bool left_side = true, unit_diagonal = false;  // trsm; left_side also ormqr's side
  char transpose = 'N';                          // trsm, ormqr: 'N', 'T' or 'C' (adjoint)
  bool has_alpha = false;                        // trsm: b is scaled by a scalar operand first
  bool has_info = true;                          // potrf: an info result follows the factor
  // potrf as XLA's cholesky op: the other triangle zeroed, an all-NaN matrix where the
  // factorization fails (what the reference evaluator does).
  bool cholesky_op = false;
  // gesvd: full (u/v square, else economy), uv (u/v wanted; unspecified otherwise), jacobi
  // (argument 4 is V, not V^H), transposed (arguments 3 and 4 swap roles). syevd: lower.
  bool full_matrices = true, compute_uv = true, jacobi = false, transposed = false;
  std::vector<ArrayShape> shapes;  // one per thunk argument, with layouts

  std::string ToString() const;
  static absl::StatusOr<LinalgConfig> Parse(const std::string& text);
};

// How to reach element (batch b, row i, col j) of a matrix argument: the matrices' batch
// dimensions are every dimension but the last two, in logical row-major order over b.
struct MatrixView {
  int64_t batch = 1, rows = 0, cols = 0;
  int64_t row_stride = 0, col_stride = 0;  // in elements
  std::vector<int64_t> batch_dims, batch_strides;
  int64_t Offset(int64_t b) const;  // element offset of matrix b's (0, 0)
  // Whether matrix b starts at b * rows * cols and holds a column-major (or row-major) matrix
  // with leading dimension rows (cols): what libraries take directly.
  bool ColumnMajorDense() const { return row_stride == 1 && col_stride == rows && DenseBatch(); }
  bool RowMajorDense() const { return col_stride == 1 && row_stride == cols && DenseBatch(); }
  bool DenseBatch() const;
};
absl::StatusOr<MatrixView> MatrixViewOf(const ArrayShape& shape);

// Checks a config against its thunk: the argument count, each slice's size against its shape,
// matching matrix sizes and types. Both runtimes run it when they prepare the thunk.
absl::Status ValidateLinalgThunk(const Thunk& thunk, const LinalgConfig& config);

}  // namespace hloc::runtime
