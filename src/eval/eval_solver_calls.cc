// The reference evaluator's cuSOLVER / LAPACK / cuBLAS-trsm custom calls (solver_calls.h).
// Arithmetic in double (complex<double>), one rounding per result element, unblocked forms of
// LAPACK's potf2 / getf2 so info and pivots follow LAPACK's rules exactly.
#include <cmath>
#include <complex>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/decompositions.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"
#include "eval/solver_calls.h"

namespace hloc {
namespace {

using C = std::complex<double>;
using evalops::DimVec;

absl::Status Bad(const HloInstruction& inst, const std::string& why) { return evalops::Malformed(inst, why); }

void Store(Literal& out, int64_t i, C v) {
  if (IsComplex(out.element_type())) out.SetComplex(i, v);
  else out.SetDouble(i, v.real());
}

// LAPACK's potf2 on one n x n matrix `m` (row-major, logical) in place, lower: A = L L^H.
// Returns info. Columns after a failed pivot are left as they were.
int64_t PotrfLower(std::vector<C>& m, int64_t n) {
  for (int64_t j = 0; j < n; ++j) {
    double d = m[j * n + j].real();
    for (int64_t k = 0; k < j; ++k) d -= std::norm(m[j * n + k]);
    if (!(d > 0)) {  // also NaN
      m[j * n + j] = d;
      return j + 1;
    }
    const double piv = std::sqrt(d);
    m[j * n + j] = piv;
    for (int64_t i = j + 1; i < n; ++i) {
      C v = m[i * n + j];
      for (int64_t k = 0; k < j; ++k) v -= m[i * n + k] * std::conj(m[j * n + k]);
      m[i * n + j] = v / piv;
    }
  }
  return 0;
}

// LAPACK's getf2 on one rows x cols matrix in place; ipiv 1-based. The pivot is the first
// largest |re| + |im| (LAPACK's i?amax), so ties and complex pivots match LAPACK and cuSOLVER.
int64_t Getrf(std::vector<C>& m, int64_t rows, int64_t cols, std::vector<int32_t>& ipiv) {
  int64_t info = 0;
  const int64_t steps = std::min(rows, cols);
  for (int64_t j = 0; j < steps; ++j) {
    int64_t p = j;
    double best = -1;
    for (int64_t i = j; i < rows; ++i) {
      const C v = m[i * cols + j];
      const double mag = std::abs(v.real()) + std::abs(v.imag());
      if (mag > best || (best < 0 && std::isnan(mag))) best = mag, p = i;
    }
    ipiv[j] = static_cast<int32_t>(p + 1);
    if (m[p * cols + j] != C(0)) {
      if (p != j)
        for (int64_t k = 0; k < cols; ++k) std::swap(m[p * cols + k], m[j * cols + k]);
      const C piv = m[j * cols + j];
      for (int64_t i = j + 1; i < rows; ++i) m[i * cols + j] /= piv;
    } else if (info == 0) {
      info = j + 1;
    }
    for (int64_t i = j + 1; i < rows; ++i) {
      const C l = m[i * cols + j];
      if (l == C(0)) continue;
      for (int64_t k = j + 1; k < cols; ++k) m[i * cols + k] -= l * m[j * cols + k];
    }
  }
  return info;
}

absl::StatusOr<Literal> Tuple(const Shape& shape, std::vector<Literal> parts) {
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = shape;
  return out;
}

std::vector<C> ReadMatrix(const Literal& l, int64_t base, int64_t count) {
  std::vector<C> m(count);
  for (int64_t i = 0; i < count; ++i) m[i] = l.GetComplex(base + i);
  return m;
}

// Writes the rows x cols top-left block of the row-major `m` (ld columns; `conj_t`: of its
// conjugate transpose) as matrix b of `out` (out's last two dimensions are rows x cols).
void WriteMatrix(Literal& out, int64_t b, const std::vector<C>& m, int64_t ld, bool conj_t) {
  const int64_t r = out.shape().rank();
  const int64_t rows = out.shape().dimensions(r - 2), cols = out.shape().dimensions(r - 1);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      Store(out, b * rows * cols + i * cols + j, conj_t ? std::conj(m[j * ld + i]) : m[i * ld + j]);
}

// ormqr / unmqr: op(Q) c or c op(Q) per batch matrix, Q from a's reflectors (decompositions.h).
absl::StatusOr<Literal> EvalOrmqr(const HloInstruction& inst, const SolverCall& call,
                                  absl::Span<const Literal* const> ops) {
  const Shape& as = ops[0]->shape();
  const Shape& cs = ops[2]->shape();
  const int64_t r = as.rank();
  const int64_t a_rows = as.dimensions(r - 2), a_cols = as.dimensions(r - 1);
  const int64_t k = ops[1]->shape().dimensions(r - 2);
  const int64_t rows = cs.dimensions(r - 2), cols = cs.dimensions(r - 1);
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < r; ++d) batch *= as.dimensions(d);
  const Shape& shape = inst.shape();
  const bool tuple = shape.IsTuple();
  absl::StatusOr<Literal> out = Literal::Create(tuple ? shape.tuple_shapes(0) : shape);
  if (!out.ok()) return out.status();
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<C> a = ReadMatrix(*ops[0], b * a_rows * a_cols, a_rows * a_cols);
    const std::vector<C> tau = ReadMatrix(*ops[1], b * k, k);
    std::vector<C> c = ReadMatrix(*ops[2], b * rows * cols, rows * cols);
    decomp::Ormqr(a, a_rows, a_cols, tau, c, rows, cols, call.left, call.transpose);
    WriteMatrix(*out, b, c, cols, false);
  }
  if (!tuple) return out;
  std::vector<Literal> parts;
  parts.push_back(std::move(*out));
  return Tuple(shape, std::move(parts));
}

// geqrf, orgqr, syevd/heevd, gesvd(j)/gesdd and lu_pivots_to_permutation (decompositions.h).
absl::StatusOr<Literal> EvalDecomposition(const HloInstruction& inst, const SolverCall& call,
                                          absl::Span<const Literal* const> ops) {
  const Literal& a = *ops[0];
  const int64_t r = a.shape().rank();
  const Shape& shape = inst.shape();
  if (call.op == SolverOp::kPivotsToPermutation) {
    absl::StatusOr<Literal> out = Literal::Create(shape);
    if (!out.ok()) return out.status();
    const int64_t k = a.shape().dimensions(r - 1), p = shape.dimensions(r - 1);
    const int64_t batch = k ? a.element_count() / k : (p ? out->element_count() / p : 0);
    std::vector<int32_t> piv(k);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < k; ++i) piv[i] = static_cast<int32_t>(a.GetInt(b * k + i));
      const std::vector<int32_t> perm = decomp::PivotsToPermutation(piv, p);
      for (int64_t i = 0; i < p; ++i) out->SetInt(b * p + i, perm[i]);
    }
    return out;
  }
  const int64_t rows = a.shape().dimensions(r - 2), cols = a.shape().dimensions(r - 1);
  const int64_t per = rows * cols;
  int64_t batch = 1;
  for (int64_t d = 0; d + 2 < r; ++d) batch *= a.shape().dimensions(d);
  std::vector<Literal> parts;
  const int64_t leaves = shape.IsTuple() ? static_cast<int64_t>(shape.tuple_shapes().size()) : 1;
  for (int64_t i = 0; i < leaves; ++i) {
    absl::StatusOr<Literal> z = Literal::Create(shape.IsTuple() ? shape.tuple_shapes(i) : shape);
    if (!z.ok()) return z.status();
    parts.push_back(std::move(*z));
  }
  const int64_t k = std::min(rows, cols);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<C> m = ReadMatrix(a, b * per, per);
    switch (call.op) {
      case SolverOp::kGeqrf: {
        std::vector<C> tau;
        decomp::Geqrf(m, rows, cols, tau);
        WriteMatrix(parts[0], b, m, cols, false);
        for (int64_t i = 0; i < k; ++i) Store(parts[1], b * k + i, tau[i]);
        break;
      }
      case SolverOp::kOrgqr: {
        const int64_t nt = inst.operand(1)->shape().dimensions(r - 2);
        const std::vector<C> tau = ReadMatrix(*ops[1], b * nt, nt);
        decomp::Orgqr(m, rows, cols, tau);
        WriteMatrix(parts[0], b, m, cols, false);
        break;
      }
      case SolverOp::kSyevd: {
        std::vector<double> w;
        std::vector<C> v;
        const bool ok = decomp::Eigh(m, rows, call.lower, w, v);
        WriteMatrix(parts[0], b, v, rows, false);
        for (int64_t i = 0; i < rows; ++i) parts[1].SetDouble(b * rows + i, w[i]);
        parts[2].SetInt(b, ok ? 0 : 1);
        break;
      }
      case SolverOp::kGesvd: {
        std::vector<double> s;
        std::vector<C> u, v;
        const bool ok = decomp::Svd(m, rows, cols, s, u, v);
        WriteMatrix(parts[0], b, m, cols, false);  // scratch: JAX drops it
        for (int64_t i = 0; i < k; ++i) parts[1].SetDouble(b * k + i, s[i]);
        const int64_t ui = call.transposed ? 3 : 2, vi = call.transposed ? 2 : 3;
        if (parts[ui].element_count() > 0 && parts[ui].shape().rank() == r) WriteMatrix(parts[ui], b, u, rows, false);
        if (parts[vi].element_count() > 0 && parts[vi].shape().rank() == r)
          WriteMatrix(parts[vi], b, v, cols, /*conj_t=*/!call.jacobi);  // gesvdj: V, else V^H
        parts[4].SetInt(b, ok ? 0 : 1);
        break;
      }
      default:
        return Bad(inst, "not a decomposition");
    }
  }
  if (!shape.IsTuple()) return std::move(parts[0]);
  return Tuple(shape, std::move(parts));
}

}  // namespace

absl::StatusOr<Literal> EvalSolverCall(const HloInstruction& inst, absl::Span<const Literal* const> ops) {
  absl::StatusOr<SolverCall> call = ParseSolverCall(inst);
  if (!call.ok()) return call.status();
  if (static_cast<int64_t>(ops.size()) != inst.operand_count()) return Bad(inst, "wrong number of operands");
  if (call->op == SolverOp::kOrmqr) return EvalOrmqr(inst, *call, ops);
  if (call->op == SolverOp::kGeqrf || call->op == SolverOp::kOrgqr || call->op == SolverOp::kSyevd ||
      call->op == SolverOp::kGesvd || call->op == SolverOp::kPivotsToPermutation)
    return EvalDecomposition(inst, *call, ops);
  const Literal& a = *ops[0];
  const int64_t r = a.shape().rank();
  const int64_t rows = a.shape().dimensions(r - 2), cols = a.shape().dimensions(r - 1);
  const int64_t per = rows * cols;
  const int64_t batch = per ? a.element_count() / per : 0;

  if (call->op == SolverOp::kTrsm) {
    // The HLO op's kernel with the call's attributes; alpha (lapack trsm) scales b first.
    HloInstruction ts(HloOpcode::kTriangularSolve, inst.operand(1)->shape(), inst.name());
    InstructionAttributes& at = ts.mutable_attrs();
    at.left_side = call->left_side;
    at.lower = call->lower;
    at.unit_diagonal = call->unit_diagonal;
    at.transpose_a = call->transpose_a;
    Literal scaled = *ops[1];
    if (call->has_alpha) {
      const C alpha = ops[2]->GetComplex(0);
      for (int64_t i = 0; i < scaled.element_count(); ++i) Store(scaled, i, alpha * scaled.GetComplex(i));
    }
    EvalContext ctx;
    const Literal* ab[] = {&a, &scaled};
    absl::StatusOr<Literal> x = EvalTriangularSolve(ts, ab, ctx);
    if (!x.ok()) return x.status();
    if (!inst.shape().IsTuple()) return x;
    std::vector<Literal> parts;
    parts.push_back(std::move(*x));
    for (size_t i = 1; i < inst.shape().tuple_shapes().size(); ++i) {
      absl::StatusOr<Literal> z = Literal::Create(inst.shape().tuple_shapes(i));  // the workspace
      if (!z.ok()) return z.status();
      parts.push_back(std::move(*z));
    }
    return Tuple(inst.shape(), std::move(parts));
  }

  absl::StatusOr<Literal> factor = Literal::Create(inst.shape().tuple_shapes(0));
  if (!factor.ok()) return factor.status();
  const int64_t info_index = call->op == SolverOp::kPotrf ? 1 : 2;
  absl::StatusOr<Literal> info = Literal::Create(inst.shape().tuple_shapes(info_index));
  if (!info.ok()) return info.status();
  absl::StatusOr<Literal> pivots = Literal::Create(inst.shape().tuple_shapes(call->op == SolverOp::kGetrf ? 1 : 0));
  if (!pivots.ok()) return pivots.status();
  const int64_t steps = std::min(rows, cols);
  std::vector<C> m(per);
  std::vector<int32_t> ipiv(steps);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t base = b * per;
    int64_t status = 0;
    if (call->op == SolverOp::kPotrf) {
      // The upper form factors A^H's lower triangle: U = L^H.
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          m[i * cols + j] = call->lower ? a.GetComplex(base + i * cols + j) : std::conj(a.GetComplex(base + j * cols + i));
      status = PotrfLower(m, rows);
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          const bool in_tri = call->lower ? i >= j : i <= j;
          const C v = !in_tri ? a.GetComplex(base + i * cols + j)
                      : call->lower ? m[i * cols + j] : std::conj(m[j * cols + i]);
          Store(*factor, base + i * cols + j, v);
        }
    } else {
      for (int64_t i = 0; i < per; ++i) m[i] = a.GetComplex(base + i);
      status = Getrf(m, rows, cols, ipiv);
      for (int64_t i = 0; i < per; ++i) Store(*factor, base + i, m[i]);
      for (int64_t j = 0; j < steps; ++j) pivots->SetInt(b * steps + j, ipiv[j]);
    }
    info->SetInt(b, status);
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(*factor));
  if (call->op == SolverOp::kGetrf) parts.push_back(std::move(*pivots));
  parts.push_back(std::move(*info));
  return Tuple(inst.shape(), std::move(parts));
}

}  // namespace hloc
