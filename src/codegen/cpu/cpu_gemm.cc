// Dots as the CPU runtime's GEMM (kGemm thunks): D = op(A) x op(B), batched, when each operand
// is a batch of matrices whose two matrix dimensions are its most minor ones (so a matrix is one
// contiguous block, row- or column-major) and whose batch dimensions follow in the dot's order.
// Everything else (several contracting or free dimensions, interleaved batch dimensions, types
// the GEMM does not take) stays an elemental dot kernel.
#include <optional>

#include "codegen/cpu/cpu_kernel_emitter.h"

namespace hloc::codegen::cpu {
namespace {

std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

// One operand (or the result) as a batch of row-major [rows, cols] matrices.
struct MatrixView {
  bool transposed = false;  // stored as [cols, rows]
  int64_t leading_dim = 0;
  int64_t batch_stride = 0;
  int64_t rows = 1, cols = 1, batch = 1;
};

// `row`/`col`: the logical dimensions of the matrix rows and columns (-1: absent, size 1).
std::optional<MatrixView> View(const Shape& s, int64_t row, int64_t col, const std::vector<int64_t>& batch_dims) {
  const std::vector<int64_t> m2m = MinorToMajor(s);
  MatrixView v;
  v.rows = row >= 0 ? s.dimensions(row) : 1;
  v.cols = col >= 0 ? s.dimensions(col) : 1;
  const size_t nmat = (row >= 0 ? 1 : 0) + (col >= 0 ? 1 : 0);
  if (nmat + batch_dims.size() != m2m.size()) return std::nullopt;
  if (nmat == 2) {
    if (m2m[0] == col && m2m[1] == row) {
      v.transposed = false;
      v.leading_dim = v.cols;
    } else if (m2m[0] == row && m2m[1] == col) {
      v.transposed = true;
      v.leading_dim = v.rows;
    } else {
      return std::nullopt;
    }
  } else if (nmat == 1) {
    if (m2m[0] != (row >= 0 ? row : col)) return std::nullopt;
    v.leading_dim = v.cols;
  } else {
    v.leading_dim = 1;
  }
  // Batch dimensions: the more major physical ones, the first batch dimension most major.
  for (size_t j = 0; j < batch_dims.size(); ++j) {
    if (m2m[nmat + j] != batch_dims[batch_dims.size() - 1 - j]) return std::nullopt;
    v.batch *= s.dimensions(batch_dims[j]);
  }
  v.batch_stride = v.rows * v.cols;
  return v;
}

// The one dimension of `rank` that is in neither list, -1 when none; nullopt when several.
std::optional<int64_t> FreeDimension(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  int64_t found = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) != a.end() || std::find(b.begin(), b.end(), d) != b.end()) continue;
    if (found >= 0) return std::nullopt;
    found = d;
  }
  return found;
}

bool GemmTypes(PrimitiveType in, PrimitiveType out) {
  using P = PrimitiveType;
  switch (in) {
    case P::F32: return out == P::F32;
    case P::F64: return out == P::F64;
    case P::BF16: return out == P::BF16 || out == P::F32;
    case P::F16: return out == P::F16 || out == P::F32;
    case P::S8: return out == P::S32;
    case P::S32: return out == P::S32;
    default: return false;
  }
}

}  // namespace

std::optional<GemmPlan> CpuGemmPlan(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || !dot.attrs().dot_dimension_numbers)
    return std::nullopt;
  const DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const Shape& out = dot.shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return std::nullopt;
  if (lhs.element_type() != rhs.element_type() || !GemmTypes(lhs.element_type(), out.element_type()))
    return std::nullopt;
  if (dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1) return std::nullopt;
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) return std::nullopt;
  const std::optional<int64_t> m_dim = FreeDimension(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::optional<int64_t> n_dim = FreeDimension(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (!m_dim || !n_dim) return std::nullopt;
  const int64_t k_lhs = dn.lhs_contracting_dimensions[0], k_rhs = dn.rhs_contracting_dimensions[0];
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  if (out.rank() != nb + (*m_dim >= 0) + (*n_dim >= 0)) return std::nullopt;
  std::vector<int64_t> out_batch;
  for (int64_t i = 0; i < nb; ++i) out_batch.push_back(i);
  const int64_t out_m = *m_dim >= 0 ? nb : -1;
  const int64_t out_n = *n_dim >= 0 ? nb + (*m_dim >= 0 ? 1 : 0) : -1;

  std::optional<MatrixView> a = View(lhs, *m_dim, k_lhs, dn.lhs_batch_dimensions);
  std::optional<MatrixView> b = View(rhs, k_rhs, *n_dim, dn.rhs_batch_dimensions);
  std::optional<MatrixView> d = View(out, out_m, out_n, out_batch);
  if (!a || !b || !d) return std::nullopt;
  if (a->batch != b->batch || a->batch != d->batch) return std::nullopt;
  if (a->cols != b->rows || a->rows != d->rows || b->cols != d->cols) return std::nullopt;

  GemmPlan plan;
  runtime::GemmConfig& g = plan.config;
  const std::string in_type(PrimitiveTypeName(lhs.element_type()));
  const std::string out_type(PrimitiveTypeName(out.element_type()));
  g.lhs_type = g.rhs_type = in_type;
  g.output_type = out_type;
  const PrimitiveType in = lhs.element_type();
  g.compute_type = in == PrimitiveType::F64 ? "f64" : (in == PrimitiveType::S8 || in == PrimitiveType::S32) ? "s32" : "f32";
  g.batch = a->batch;
  if (!d->transposed) {
    g.m = d->rows;
    g.n = d->cols;
    g.k = a->cols;
    g.lhs_transposed = a->transposed;
    g.rhs_transposed = b->transposed;
    g.lhs_leading_dim = a->leading_dim;
    g.rhs_leading_dim = b->leading_dim;
    g.lhs_batch_stride = a->batch_stride;
    g.rhs_batch_stride = b->batch_stride;
  } else {
    // A column-major result: D^T = op(B)^T op(A)^T, with the operands swapped.
    plan.swap_operands = true;
    g.m = d->cols;
    g.n = d->rows;
    g.k = a->cols;
    g.lhs_transposed = !b->transposed;
    g.rhs_transposed = !a->transposed;
    g.lhs_leading_dim = b->leading_dim;
    g.rhs_leading_dim = a->leading_dim;
    g.lhs_batch_stride = b->batch_stride;
    g.rhs_batch_stride = a->batch_stride;
  }
  g.output_leading_dim = d->leading_dim;
  g.output_batch_stride = d->batch_stride;
  return plan;
}

}  // namespace hloc::codegen::cpu
