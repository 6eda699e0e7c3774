// The reference evaluator's cuSOLVER / LAPACK / cuBLAS-trsm custom calls (solver_calls.h).
// Arithmetic in double (complex<double>), one rounding per result element, unblocked forms of
// LAPACK's potf2 / getf2 so info and pivots follow LAPACK's rules exactly.
#include <cmath>
#include <complex>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

}  // namespace

absl::StatusOr<Literal> EvalSolverCall(const HloInstruction& inst, absl::Span<const Literal* const> ops) {
  absl::StatusOr<SolverCall> call = ParseSolverCall(inst);
  if (!call.ok()) return call.status();
  if (static_cast<int64_t>(ops.size()) != inst.operand_count()) return Bad(inst, "wrong number of operands");
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
