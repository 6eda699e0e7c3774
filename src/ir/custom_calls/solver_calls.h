// Dense linear-algebra custom calls as JAX and XLA emit them:
//  - Cholesky: "cusolver_potrf_ffi" (JAX on GPU, backend_config={lower = true}) and
//    "lapack_{s,d,c,z}potrf_ffi" (JAX on CPU, backend_config={uplo = 76 : ui8}, 'L' or 'U');
//    one operand a[..., n, n]; results (factor, info s32[...]). The factor is LAPACK's: the
//    chosen triangle holds L (A = L L^H) or U (A = U^H U), the other triangle keeps a's values;
//    info = k > 0 when the leading minor of order k is not positive definite (the factor is
//    then partial; JAX replaces it with NaN).
//  - LU: "cusolver_getrf_ffi" and "lapack_{s,d,c,z}getrf_ffi", no attributes; a[..., m, n];
//    results (lu, pivots s32[..., min(m, n)] 1-based as LAPACK's ipiv, info s32[...]); info = i
//    when U(i, i) is exactly zero (the factorization still completes).
//  - Triangular solve: XLA:GPU's "__cublas$triangularSolve" (JSON backend_config with
//    left_side/lower/transpose_a/unit_diagonal; results (x, workspace)) and JAX's CPU
//    "lapack_{s,d,c,z}trsm_ffi" (operands a, b, alpha; attrs side/uplo/trans_x/diag as chars).
//  - QR (issue 34): "cusolver_geqrf_ffi" / "lapack_?geqrf_ffi": a[..., m, n] -> (a overwritten
//    with R above the diagonal and the Householder vectors below it (implicit unit head), tau
//    [..., min(m, n)]), LAPACK's geqrf convention H_i = I - tau_i v_i v_i^H.
//    "cusolver_orgqr_ffi" / "lapack_?orgqr_ffi" / "lapack_?ungqr_ffi" (householder product):
//    (a[..., m, n], tau[..., k]) -> q[..., m, n], the first n columns of H_1 ... H_k (m >= n >= k).
//    "cusolver_ormqr_ffi" / "lapack_?ormqr_ffi" / "lapack_?unmqr_ffi" (backend_config {left, transpose},
//    bools): (a[..., m, ka], tau[..., k], c[..., rows, cols]) -> c's shape, aliased to c (operand 2):
//    op(Q) c (left: rows == m) or c op(Q) (right: cols == m) for Q = H_1 ... H_k, op = Q^H (plain
//    transpose for real types) when transpose, without forming Q; k <= min(m, ka).
//  - Hermitian eigendecomposition: "cusolver_syevd_ffi" (backend_config {algorithm, lower}) and
//    "lapack_?syevd_ffi" / "lapack_?heevd_ffi" (mode 'V'/'N', uplo): a[..., n, n] -> (v[..., n, n]
//    eigenvectors as columns, w[..., n] real eigenvalues ascending, info). Only the `lower` (or
//    upper) triangle of a is read.
//  - SVD: "cusolver_gesvdj_ffi" (full_matrices, compute_uv) -> (a, s[..., k], u[..., m, m|k],
//    v[..., n, n|k] (V itself, not V^H), info); "cusolver_gesvd_ffi" (full_matrices, compute_uv,
//    transposed) -> (a, s, u, vt, info) where for transposed = true the call factors A^T (JAX
//    passes a row-major a with m < n), so logically its results are (a, s, vt, u, info);
//    "lapack_?gesdd_ffi" / "lapack_?gesvd_ffi" (mode 'A'/'S'/'N') -> (a, s, u, vt, info). Singular values descending.
//    The overwritten a is scratch (JAX drops it); u/v are unspecified when compute_uv is false.
//  - "cu_lu_pivots_to_permutation": pivots s32[..., k] (0-based: JAX subtracts 1 from ipiv) -> the permutation
//    s32[..., p] (0-based) that applying the row swaps in order to iota(p) gives.
// JAX asks for column-major matrices (operand_layout_constraints {..., n-2, n-1, batch...});
// the evaluator works on logical indices, so layouts do not change what it computes.
// Codegen (CPU LAPACK thunks, GPU cuSOLVER/cuBLAS thunks) reads the same description.
#pragma once
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace hloc {

inline constexpr std::string_view kCusolverPotrfCallTarget = "cusolver_potrf_ffi";
inline constexpr std::string_view kCusolverGetrfCallTarget = "cusolver_getrf_ffi";
inline constexpr std::string_view kTriangularSolveCallTarget = "__cublas$triangularSolve";

enum class SolverOp { kPotrf, kGetrf, kTrsm, kGeqrf, kOrgqr, kOrmqr, kSyevd, kGesvd, kPivotsToPermutation };

struct SolverCall {
  SolverOp op = SolverOp::kPotrf;
  bool lower = true;  // potrf, trsm
  // trsm only
  bool left_side = true, unit_diagonal = false, has_alpha = false;
  TriangularTranspose transpose_a = TriangularTranspose::kNoTranspose;
  // ormqr only (JAX's attribute names): Q from the left (else the right), Q^H (else Q).
  bool left = true, transpose = false;
  // syevd: compute_uv = whether eigenvectors are wanted (lapack mode 'N' leaves v unspecified).
  // gesvd: full_matrices / compute_uv; jacobi (gesvdj): result 3 is V rather than V^H;
  // transposed (cusolver_gesvd_ffi with m < n): results 2 and 3 are vt and u.
  bool full_matrices = true, compute_uv = true, jacobi = false, transposed = false;
};

// The solver op a custom-call target names; nullopt for any other target.
std::optional<SolverOp> SolverCallKind(std::string_view target);
inline bool IsSolverCallTarget(std::string_view target) { return SolverCallKind(target).has_value(); }

// Reads the target and backend_config of a solver custom call and checks its operand and result
// shapes (ranks, square matrices, element types, info/pivot shapes): errors say what is wrong.
absl::StatusOr<SolverCall> ParseSolverCall(const HloInstruction& inst);


}  // namespace hloc
