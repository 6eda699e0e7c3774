// Householder QR, Jacobi eigen and SVD for the reference evaluator (decompositions.h).
#include "eval/decompositions.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace hloc::decomp {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr int kMaxSweeps = 100;

// The unitary J = [[c, s e], [-s conj(e)... ]] that diagonalizes the Hermitian 2 x 2
// [[app, apq], [conj(apq), aqq]] as J^H M J: with e = apq / |apq|, D = diag(1, conj(e)) makes the
// off-diagonal real, then Golub and Van Loan's symmetric Schur rotation R; J = D R.
struct Rot {
  C jpp, jpq, jqp, jqq;
};
Rot JacobiRotation(double app, double aqq, C apq) {
  const double r = std::abs(apq);
  const C e = apq / r;
  const double tau = (aqq - app) / (2 * r);
  const double t = (tau >= 0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1 + tau * tau));
  const double c = 1 / std::sqrt(1 + t * t), s = t * c;
  // R = [[c, s], [-s, c]]; D R = [[c, s], [-s conj(e), c conj(e)]].
  return Rot{C(c), C(s), -s * std::conj(e), c * std::conj(e)};
}

// Columns p, q of the row-major rows x cols `m` times J.
void RotateColumns(std::vector<C>& m, int64_t rows, int64_t cols, int64_t p, int64_t q, const Rot& j) {
  for (int64_t i = 0; i < rows; ++i) {
    const C x = m[i * cols + p], y = m[i * cols + q];
    m[i * cols + p] = x * j.jpp + y * j.jqp;
    m[i * cols + q] = x * j.jpq + y * j.jqq;
  }
}

// Replaces the columns of row-major rows x cols `m` not marked `valid` with an orthonormal
// completion of the valid ones (which are orthonormal): Gram-Schmidt, twice, on unit vectors.
void Complete(std::vector<C>& m, int64_t rows, int64_t cols, std::vector<bool> valid) {
  int64_t next_unit = 0;
  for (int64_t c = 0; c < cols; ++c) {
    if (valid[c]) continue;
    while (next_unit < rows) {
      std::vector<C> x(rows, C(0));
      x[next_unit++] = 1;
      for (int pass = 0; pass < 2; ++pass)
        for (int64_t o = 0; o < cols; ++o) {
          if (!valid[o]) continue;
          C dot = 0;
          for (int64_t i = 0; i < rows; ++i) dot += std::conj(m[i * cols + o]) * x[i];
          for (int64_t i = 0; i < rows; ++i) x[i] -= dot * m[i * cols + o];
        }
      double nrm = 0;
      for (const C& v : x) nrm += std::norm(v);
      nrm = std::sqrt(nrm);
      if (nrm < 0.5) continue;
      for (int64_t i = 0; i < rows; ++i) m[i * cols + c] = x[i] / nrm;
      valid[c] = true;
      break;
    }
  }
}

}  // namespace

void Geqrf(std::vector<C>& a, int64_t rows, int64_t cols, std::vector<C>& tau) {
  const int64_t k = std::min(rows, cols);
  tau.assign(k, C(0));
  for (int64_t j = 0; j < k; ++j) {
    // larfg on x = a[j:, j]: H^H x = beta e_1, H = I - tau v v^H, v = [1; x[1:] / (alpha - beta)].
    const C alpha = a[j * cols + j];
    double xnorm2 = 0;
    for (int64_t i = j + 1; i < rows; ++i) xnorm2 += std::norm(a[i * cols + j]);
    if (xnorm2 == 0 && alpha.imag() == 0) continue;  // H = I
    const double beta = -std::copysign(std::sqrt(std::norm(alpha) + xnorm2), alpha.real());
    const C t = (C(beta) - alpha) / beta;
    const C scale = C(1) / (alpha - beta);
    for (int64_t i = j + 1; i < rows; ++i) a[i * cols + j] *= scale;
    a[j * cols + j] = beta;
    tau[j] = t;
    // Apply H^H = I - conj(tau) v v^H to a[j:, j+1:].
    for (int64_t c = j + 1; c < cols; ++c) {
      C dot = a[j * cols + c];
      for (int64_t i = j + 1; i < rows; ++i) dot += std::conj(a[i * cols + j]) * a[i * cols + c];
      const C f = std::conj(t) * dot;
      a[j * cols + c] -= f;
      for (int64_t i = j + 1; i < rows; ++i) a[i * cols + c] -= f * a[i * cols + j];
    }
  }
}

void Orgqr(std::vector<C>& a, int64_t rows, int64_t cols, const std::vector<C>& tau) {
  const int64_t k = static_cast<int64_t>(tau.size());
  std::vector<C> q(rows * cols, C(0));
  for (int64_t j = 0; j < cols && j < rows; ++j) q[j * cols + j] = 1;
  for (int64_t h = k - 1; h >= 0; --h) {
    // q[h:, :] = (I - tau v v^H) q[h:, :], v = [1; a[h+1:, h]].
    for (int64_t c = 0; c < cols; ++c) {
      C dot = q[h * cols + c];
      for (int64_t i = h + 1; i < rows; ++i) dot += std::conj(a[i * cols + h]) * q[i * cols + c];
      const C f = tau[h] * dot;
      q[h * cols + c] -= f;
      for (int64_t i = h + 1; i < rows; ++i) q[i * cols + c] -= f * a[i * cols + h];
    }
  }
  a = std::move(q);
}

namespace {

// c := H c (rows x cols, `c` row-major) for H = I - t v v^H, v = [1; a[h+1:, h]] from row h on.
void ReflectRows(const std::vector<C>& a, int64_t a_cols, int64_t h, C t, std::vector<C>& c, int64_t rows,
                 int64_t cols) {
  for (int64_t j = 0; j < cols; ++j) {
    C dot = c[h * cols + j];  // v^H c[:, j]
    for (int64_t i = h + 1; i < rows; ++i) dot += std::conj(a[i * a_cols + h]) * c[i * cols + j];
    const C f = t * dot;
    c[h * cols + j] -= f;
    for (int64_t i = h + 1; i < rows; ++i) c[i * cols + j] -= f * a[i * a_cols + h];
  }
}

// c := c H for the same H, acting on c's columns h on: c v, then minus t (c v) v^H.
void ReflectColumns(const std::vector<C>& a, int64_t a_cols, int64_t h, C t, std::vector<C>& c, int64_t rows,
                    int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    C dot = c[i * cols + h];
    for (int64_t j = h + 1; j < cols; ++j) dot += c[i * cols + j] * a[j * a_cols + h];
    const C f = t * dot;
    c[i * cols + h] -= f;
    for (int64_t j = h + 1; j < cols; ++j) c[i * cols + j] -= f * std::conj(a[j * a_cols + h]);
  }
}

}  // namespace

void Ormqr(const std::vector<C>& a, int64_t a_rows, int64_t a_cols, const std::vector<C>& tau, std::vector<C>& c,
           int64_t rows, int64_t cols, bool left, bool transpose) {
  (void)a_rows;  // == rows (left) or cols (right); ParseSolverCall checked it
  const int64_t k = static_cast<int64_t>(tau.size());
  // Q = H_0 ... H_{k-1} and Q^H = H_{k-1}^H ... H_0^H with H_h^H = I - conj(tau_h) v v^H. The
  // reflector next to c goes first: from the left that is H_{k-1} for Q, H_0^H for Q^H; from
  // the right the opposite. So the order is reversed exactly when left != transpose.
  const bool reverse = left != transpose;
  for (int64_t s = 0; s < k; ++s) {
    const int64_t h = reverse ? k - 1 - s : s;
    const C t = transpose ? std::conj(tau[h]) : tau[h];
    if (left) ReflectRows(a, a_cols, h, t, c, rows, cols);
    else ReflectColumns(a, a_cols, h, t, c, rows, cols);
  }
}

bool Eigh(const std::vector<C>& in, int64_t n, bool lower, std::vector<double>& w, std::vector<C>& v) {
  std::vector<C> a(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const bool stored = lower ? i >= j : i <= j;
      a[i * n + j] = i == j ? C(in[i * n + i].real()) : stored ? in[i * n + j] : std::conj(in[j * n + i]);
    }
  v.assign(n * n, C(0));
  for (int64_t i = 0; i < n; ++i) v[i * n + i] = 1;
  bool converged = n <= 1;
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    // A rotation only where the pair is not yet diagonal to working precision (the classical
    // threshold), so the last sweep rotates nothing.
    bool rotated = false, nan = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        const C apq = a[p * n + q];
        if (std::isnan(apq.real()) || std::isnan(apq.imag())) nan = true;
        if (!(std::abs(apq) > kEps * std::sqrt(std::abs(a[p * n + p].real() * a[q * n + q].real()))) ||
            std::abs(apq) == 0)
          continue;
        rotated = true;
        const Rot j = JacobiRotation(a[p * n + p].real(), a[q * n + q].real(), apq);
        RotateColumns(a, n, n, p, q, j);  // A J
        for (int64_t c = 0; c < n; ++c) {  // J^H (A J)
          const C x = a[p * n + c], y = a[q * n + c];
          a[p * n + c] = std::conj(j.jpp) * x + std::conj(j.jqp) * y;
          a[q * n + c] = std::conj(j.jpq) * x + std::conj(j.jqq) * y;
        }
        a[p * n + q] = a[q * n + p] = 0;
        a[p * n + p] = a[p * n + p].real();
        a[q * n + q] = a[q * n + q].real();
        RotateColumns(v, n, n, p, q, j);
      }
    if (nan) break;
    converged = !rotated;
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t x, int64_t y) { return a[x * n + x].real() < a[y * n + y].real(); });
  w.resize(n);
  std::vector<C> sorted(n * n);
  for (int64_t c = 0; c < n; ++c) {
    w[c] = a[order[c] * n + order[c]].real();
    for (int64_t i = 0; i < n; ++i) sorted[i * n + c] = v[i * n + order[c]];
  }
  v = std::move(sorted);
  return converged;
}

bool Svd(const std::vector<C>& in, int64_t rows, int64_t cols, std::vector<double>& s, std::vector<C>& u,
         std::vector<C>& v) {
  // Work on the tall form B = A (rows >= cols) or B = A^H; B = U' S V'^H.
  const bool flip = rows < cols;
  const int64_t m = flip ? cols : rows, n = flip ? rows : cols;
  std::vector<C> b(m * n), w(n * n, C(0));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) b[i * n + j] = flip ? std::conj(in[j * cols + i]) : in[i * n + j];
  for (int64_t i = 0; i < n; ++i) w[i * n + i] = 1;
  bool converged = n <= 1;
  for (int sweep = 0; sweep < kMaxSweeps && !converged; ++sweep) {
    bool rotated = false, nan = false;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t q = p + 1; q < n; ++q) {
        double alpha = 0, beta = 0;
        C gamma = 0;
        for (int64_t i = 0; i < m; ++i) {
          alpha += std::norm(b[i * n + p]);
          beta += std::norm(b[i * n + q]);
          gamma += std::conj(b[i * n + p]) * b[i * n + q];
        }
        if (std::isnan(alpha) || std::isnan(beta)) nan = true;
        if (!(std::abs(gamma) > kEps * std::sqrt(alpha * beta)) || std::abs(gamma) == 0) continue;
        rotated = true;
        const Rot j = JacobiRotation(alpha, beta, gamma);
        RotateColumns(b, m, n, p, q, j);
        RotateColumns(w, n, n, p, q, j);
      }
    if (nan) break;
    converged = !rotated;
  }
  std::vector<double> norms(n);
  for (int64_t j = 0; j < n; ++j) {
    double x = 0;
    for (int64_t i = 0; i < m; ++i) x += std::norm(b[i * n + j]);
    norms[j] = std::sqrt(x);
  }
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return norms[x] > norms[y]; });
  s.resize(n);
  const double tiny = (n > 0 ? norms[order[0]] : 0) * kEps * static_cast<double>(m);
  std::vector<C> left(m * m, C(0)), right(n * n, C(0));
  std::vector<bool> valid(m, false);
  for (int64_t c = 0; c < n; ++c) {
    const int64_t o = order[c];
    s[c] = norms[o];
    for (int64_t i = 0; i < n; ++i) right[i * n + c] = w[i * n + o];
    if (norms[o] > tiny && norms[o] > 0) {
      for (int64_t i = 0; i < m; ++i) left[i * m + c] = b[i * n + o] / norms[o];
      valid[c] = true;
    }
  }
  Complete(left, m, m, valid);
  if (flip) {
    u = std::move(right);
    v = std::move(left);
  } else {
    u = std::move(left);
    v = std::move(right);
  }
  return converged;
}

std::vector<int32_t> PivotsToPermutation(const std::vector<int32_t>& pivots, int64_t size) {
  std::vector<int32_t> perm(size);
  std::iota(perm.begin(), perm.end(), 0);
  for (int64_t i = 0; i < static_cast<int64_t>(pivots.size()) && i < size; ++i) {
    const int64_t j = pivots[i];
    if (j >= 0 && j < size) std::swap(perm[i], perm[j]);
  }
  return perm;
}

}  // namespace hloc::decomp
