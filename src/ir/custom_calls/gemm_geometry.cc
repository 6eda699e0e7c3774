// GEMM geometry from shapes and dot dimension numbers (see gemm_geometry.h); moved here from
// codegen/gpu/gpu_library_calls.cc unchanged.
#include "ir/custom_calls/gemm_geometry.h"

#include <algorithm>
#include <vector>

#include "ir/primitive_type.h"

namespace hloc {
namespace {

std::vector<int64_t> MinorToMajorOf(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

struct MatrixView {
  bool transposed = false;  // stored [cols, rows]
  int64_t rows = 1, cols = 1, batch = 1, leading_dim = 1, batch_stride = 0;
};

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= s.dimensions(d);
  return n;
}

// A batch of matrices whose batch, row and column dimension groups are each physically
// contiguous in their listed order, the batch group most major (XLA's MatrixLayout::For).
// Dimensions of size 1 are placed anywhere.
std::optional<MatrixView> View(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                               const std::vector<int64_t>& cols) {
  std::vector<int64_t> m2m = MinorToMajorOf(s);
  std::vector<int64_t> phys;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it)
    if (s.dimensions(*it) != 1) phys.push_back(*it);
  auto filtered = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> out;
    for (int64_t d : v)
      if (s.dimensions(d) != 1) out.push_back(d);
    return out;
  };
  std::vector<int64_t> fb = filtered(batch), fr = filtered(rows), fc = filtered(cols);
  std::vector<int64_t> normal = fb, transposed = fb;
  normal.insert(normal.end(), fr.begin(), fr.end());
  normal.insert(normal.end(), fc.begin(), fc.end());
  transposed.insert(transposed.end(), fc.begin(), fc.end());
  transposed.insert(transposed.end(), fr.begin(), fr.end());
  MatrixView v;
  v.rows = Product(s, rows);
  v.cols = Product(s, cols);
  v.batch = Product(s, batch);
  if (phys == normal) {
    v.transposed = false;
    v.leading_dim = v.cols;
  } else if (phys == transposed) {
    v.transposed = true;
    v.leading_dim = v.rows;
  } else {
    return std::nullopt;
  }
  v.batch_stride = v.rows * v.cols;
  return v;
}

std::vector<int64_t> Others(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  return out;
}

bool CublasTypes(PrimitiveType a, PrimitiveType b, PrimitiveType out) {
  using P = PrimitiveType;
  const bool f8a = a == P::F8E4M3FN || a == P::F8E5M2, f8b = b == P::F8E4M3FN || b == P::F8E5M2;
  if (f8a && f8b) return out == P::F32 || out == P::BF16 || out == P::F16 || out == a;
  if (a != b) return false;
  switch (a) {
    case P::F32: return out == P::F32;
    case P::F64: return out == P::F64;
    case P::BF16: return out == P::BF16 || out == P::F32;
    case P::F16: return out == P::F16 || out == P::F32;
    case P::S8: return out == P::S32 || out == P::F32;
    case P::C64: return out == P::C64;    // CUDA_C_32F
    case P::C128: return out == P::C128;  // CUDA_C_64F
    default: return false;
  }
}

}  // namespace

std::optional<GemmGeometry> GemmGeometryOf(const Shape& lhs, const Shape& rhs, const Shape& out,
                                           const DotDimensionNumbers& dn) {
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return std::nullopt;
  if (!CublasTypes(lhs.element_type(), rhs.element_type(), out.element_type())) return std::nullopt;
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) return std::nullopt;
  if (dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) return std::nullopt;
  const std::vector<int64_t> lhs_free = Others(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free = Others(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  if (out.rank() != nb + static_cast<int64_t>(lhs_free.size() + rhs_free.size())) return std::nullopt;
  std::vector<int64_t> out_batch, out_m, out_n;
  for (int64_t i = 0; i < nb; ++i) out_batch.push_back(i);
  for (size_t i = 0; i < lhs_free.size(); ++i) out_m.push_back(nb + static_cast<int64_t>(i));
  for (size_t i = 0; i < rhs_free.size(); ++i) out_n.push_back(nb + static_cast<int64_t>(lhs_free.size() + i));
  std::optional<MatrixView> a = View(lhs, dn.lhs_batch_dimensions, lhs_free, dn.lhs_contracting_dimensions);
  std::optional<MatrixView> b = View(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions, rhs_free);
  std::optional<MatrixView> d = View(out, out_batch, out_m, out_n);
  if (!a || !b || !d) return std::nullopt;
  if (a->batch != b->batch || a->batch != d->batch) return std::nullopt;
  if (a->cols != b->rows || a->rows != d->rows || b->cols != d->cols) return std::nullopt;
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i)
    if (lhs.dimensions(dn.lhs_contracting_dimensions[i]) != rhs.dimensions(dn.rhs_contracting_dimensions[i]))
      return std::nullopt;
  GemmGeometry g;
  g.lhs_type = std::string(PrimitiveTypeName(lhs.element_type()));
  g.rhs_type = std::string(PrimitiveTypeName(rhs.element_type()));
  g.output_type = std::string(PrimitiveTypeName(out.element_type()));
  const PrimitiveType in = lhs.element_type();
  g.compute_type = in == PrimitiveType::F64 || in == PrimitiveType::C128 ? "f64"
                   : in == PrimitiveType::S8                             ? "s32"
                                                                         : "f32";
  g.batch = a->batch;
  g.k = a->cols;
  if (!d->transposed) {
    g.m = d->rows;
    g.n = d->cols;
    g.lhs_transposed = a->transposed;
    g.rhs_transposed = b->transposed;
    g.lhs_leading_dim = a->leading_dim;
    g.rhs_leading_dim = b->leading_dim;
    g.lhs_batch_stride = a->batch_stride;
    g.rhs_batch_stride = b->batch_stride;
  } else {
    // A column-major result: D^T = op(B)^T op(A)^T with the operands swapped.
    g.swap_operands = true;
    g.m = d->cols;
    g.n = d->rows;
    g.lhs_transposed = !b->transposed;
    g.rhs_transposed = !a->transposed;
    g.lhs_leading_dim = b->leading_dim;
    g.rhs_leading_dim = a->leading_dim;
    g.lhs_batch_stride = b->batch_stride;
    g.rhs_batch_stride = a->batch_stride;
    std::swap(g.lhs_type, g.rhs_type);
  }
  g.output_leading_dim = d->leading_dim;
  g.output_batch_stride = d->batch_stride;
  if (g.batch == 1) g.lhs_batch_stride = g.rhs_batch_stride = g.output_batch_stride = 0;
  return g;
}

}  // namespace hloc
