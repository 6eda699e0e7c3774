// The GEMM a dot or a GEMM custom-call computes, from its operand and result shapes (with their
// layouts) and its dot dimension numbers: a batch of row-major [rows, cols] matrix views, as the
// runtime's GemmConfig reads them (runtime/executable/executable.h). XLA reference:
// xla/service/gpu/matmul_utils.cc (MatrixLayout::For, GemmConfig::For).
//
// Here, below both the passes and codegen, so that the pass deciding who runs a GEMM
// (passes/library/small_gemm_selector.h) and the codegen that builds its thunk
// (codegen/gpu/gpu_library_calls.cc) read one geometry.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "ir/attributes.h"
#include "ir/shape.h"

namespace hloc {

struct GemmGeometry {
  std::string lhs_type, rhs_type, output_type, compute_type;  // element type names
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool lhs_transposed = false, rhs_transposed = false;
  int64_t lhs_leading_dim = 0, rhs_leading_dim = 0, output_leading_dim = 0;
  int64_t lhs_batch_stride = 0, rhs_batch_stride = 0, output_batch_stride = 0;  // 0 when batch == 1
  // A column-major result: the geometry computes D^T = B^T A^T, so its A is the dot's rhs.
  bool swap_operands = false;
};

// The geometry when cuBLAS takes the types (f8 pairs, f32, f64, bf16, f16, s8 -> s32/f32, c64,
// c128) and every view is a batch of matrices with contiguous dimension groups; nullopt
// otherwise. Shapes without a layout are read as row-major.
std::optional<GemmGeometry> GemmGeometryOf(const Shape& lhs, const Shape& rhs, const Shape& out,
                                           const DotDimensionNumbers& dn);

}  // namespace hloc
