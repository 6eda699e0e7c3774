// The reference evaluator's dense decompositions (issue 34): independent, unblocked textbook
// forms in complex<double> on one row-major matrix, in LAPACK's conventions so the evaluator's
// results match what LAPACK and cuSOLVER return (up to rounding and the sign/phase freedom of
// eigen- and singular vectors).
#pragma once
#include <complex>
#include <cstdint>
#include <vector>

namespace hloc::decomp {

using C = std::complex<double>;

// LAPACK's geqr2 on rows x cols `a` in place: R on and above the diagonal, the Householder
// vectors v_j (implicit v_j[j] = 1) below it; tau[min(rows, cols)], A = H_0 ... H_{k-1} R with
// H_j = I - tau_j v_j v_j^H and R's diagonal real.
void Geqrf(std::vector<C>& a, int64_t rows, int64_t cols, std::vector<C>& tau);

// LAPACK's org2r / ung2r: the first `cols` columns of H_0 ... H_{k-1} from the vectors below
// the diagonal of rows x cols `a` (rows >= cols >= k = tau.size()); returns them in `a`.
void Orgqr(std::vector<C>& a, int64_t rows, int64_t cols, const std::vector<C>& tau);

// LAPACK's orm2r / unm2r: c (rows x cols) := op(Q) c (`left`) or c op(Q), Q = H_0 ... H_{k-1}
// from the vectors below the diagonal of the a_rows x a_cols `a` (k = tau.size() <= a_cols),
// op(Q) = Q^H when `transpose`. One reflector at a time; Q is never formed.
void Ormqr(const std::vector<C>& a, int64_t a_rows, int64_t a_cols, const std::vector<C>& tau, std::vector<C>& c,
           int64_t rows, int64_t cols, bool left, bool transpose);

// Cyclic Jacobi on the Hermitian n x n matrix `a` (only the triangle `lower` picks is read):
// eigenvalues ascending in `w`, the eigenvectors as the columns of `v` (row-major n x n).
// Returns false when the sweeps do not converge (NaN input).
bool Eigh(const std::vector<C>& a, int64_t n, bool lower, std::vector<double>& w, std::vector<C>& v);

// One-sided (Hestenes) Jacobi SVD of rows x cols `a`: A = U diag(s) V^H with s descending,
// U rows x rows and V cols x cols unitary (row-major; the columns past the singular vectors are
// an orthonormal completion). Returns false when the sweeps do not converge.
bool Svd(const std::vector<C>& a, int64_t rows, int64_t cols, std::vector<double>& s, std::vector<C>& u,
         std::vector<C>& v);

// JAX's lu_pivots_to_permutation: apply the row swaps `pivots` (0-based: JAX subtracts 1 from
// getrf's ipiv first) in order to iota(size); out-of-range pivots are skipped.
std::vector<int32_t> PivotsToPermutation(const std::vector<int32_t>& pivots, int64_t size);

}  // namespace hloc::decomp
