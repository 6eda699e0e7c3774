// Shape inference for contractions and linear algebra: dot, ragged-dot, convolution, fft,
// cholesky, triangular-solve and the batch-norm family.
#include <algorithm>
#include <numeric>

#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The instruction's own element type acts as XLA's preferred_element_type; without an array
// shape (a parser still inferring it) the operands' higher-precision type is the result.
PrimitiveType ResultType(const HloInstruction& inst, const Shape& lhs, const Shape& rhs) {
  if (inst.shape().IsArray()) return inst.shape().element_type();
  return HigherPrecisionElementType(lhs.element_type(), rhs.element_type());
}

absl::Status CheckPackedNibble(const HloInstruction& inst, std::string_view what) {
  const auto& precisions = inst.attrs().precision_config.operand_precision;
  int64_t nibbles = std::count(precisions.begin(), precisions.end(), Precision::kPackedNibble);
  if (nibbles == 0) return absl::OkStatus();
  if (nibbles == 1) return InvalidArgument("%s cannot have a single packed nibble argument", std::string(what));
  if (inst.opcode() == HloOpcode::kConvolution &&
      (inst.attrs().feature_group_count != 1 || inst.attrs().batch_group_count != 1)) {
    return InvalidArgument("Packed nibble precision does not support feature or batch group counts.");
  }
  for (int i = 0; i < 2; ++i) {
    PrimitiveType t = inst.operand(i)->shape().element_type();
    if (!IsIntegral(t) || BitWidth(t) != 8) {
      return InvalidArgument("Packed nibble precision can only apply to 8 bit integers. %s is %s.",
                             i == 0 ? "LHS" : "RHS", Str(inst.operand(i)->shape()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateDotDimensionNumbers(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d) {
  auto in_range = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    auto ok = [rank](int64_t i) { return 0 <= i && i < rank; };
    return std::all_of(a.begin(), a.end(), ok) && std::all_of(b.begin(), b.end(), ok);
  };
  if (!in_range(lhs.rank(), d.lhs_contracting_dimensions, d.lhs_batch_dimensions) ||
      !in_range(rhs.rank(), d.rhs_contracting_dimensions, d.rhs_batch_dimensions)) {
    return InvalidArgument("A dimension number is out of range in Dot: %s %s.", Str(lhs), Str(rhs));
  }
  auto unique = [](const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> all = a;
    all.insert(all.end(), b.begin(), b.end());
    std::sort(all.begin(), all.end());
    return std::adjacent_find(all.begin(), all.end()) == all.end();
  };
  if (!unique(d.lhs_contracting_dimensions, d.lhs_batch_dimensions) ||
      !unique(d.rhs_contracting_dimensions, d.rhs_batch_dimensions)) {
    return InvalidArgument("A dimension number is not unique in Dot.");
  }
  return absl::OkStatus();
}

absl::Status CheckDotDimensionConstraints(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                                          bool sparse) {
  auto fail = [&](std::string_view why) {
    return InvalidArgument("Cannot infer shape for dot operation: %s <dot> %s. %s", Str(lhs), Str(rhs),
                           std::string(why));
  };
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return fail("Must specify the same number of contracting dimensions for lhs and rhs.");
  }
  // With N:M sparsity the contracting sizes differ by the sparsity ratio; XLA checks them
  // against the sparsity descriptor, which hloc keeps as text.
  if (!sparse) {
    for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
      if (!CompatibleDims(lhs.dimensions(d.lhs_contracting_dimensions[i]),
                          rhs.dimensions(d.rhs_contracting_dimensions[i]))) {
        return fail("Contracting dimension sizes are not compatible.");
      }
    }
  }
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return fail("Must the same number of batch dimensions for lhs and rhs.");
  }
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    if (!CompatibleDims(lhs.dimensions(d.lhs_batch_dimensions[i]), rhs.dimensions(d.rhs_batch_dimensions[i]))) {
      return fail("Batch dimension sizes are not compatible.");
    }
  }
  return absl::OkStatus();
}

// Result dimensions: batch, then lhs free, then rhs free (skipping rhs group dimensions).
void DotResultDimensions(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                         std::vector<int64_t>& dims, std::vector<bool>& dyn,
                         const std::vector<int64_t>& rhs_group_dims = {}) {
  for (int64_t b : d.lhs_batch_dimensions) {
    dims.push_back(lhs.dimensions(b));
    dyn.push_back(lhs.is_dynamic_dimension(b));
  }
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (Contains(d.lhs_contracting_dimensions, i) || Contains(d.lhs_batch_dimensions, i)) continue;
    dims.push_back(lhs.dimensions(i));
    dyn.push_back(lhs.is_dynamic_dimension(i));
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (Contains(d.rhs_contracting_dimensions, i) || Contains(d.rhs_batch_dimensions, i) ||
        Contains(rhs_group_dims, i))
      continue;
    dims.push_back(rhs.dimensions(i));
    dyn.push_back(rhs.is_dynamic_dimension(i));
  }
}

absl::StatusOr<Shape> InferDotShape(const HloInstruction& inst) {
  bool sparse = false;
  for (const auto& [name, value] : inst.attrs().raw_attributes) sparse |= name == "sparsity";
  absl::Status s = sparse ? CheckMinOperandCount(inst, 2) : CheckOperandCount(inst, 2);
  if (!s.ok()) return s;
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  s = ExpectArray(lhs, "lhs of dot");
  if (s.ok()) s = ExpectArray(rhs, "rhs of dot");
  if (!s.ok()) return s;
  DotDimensionNumbers d = inst.attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
  s = ValidateDotDimensionNumbers(lhs, rhs, d);
  if (s.ok()) s = CheckDotDimensionConstraints(lhs, rhs, d, sparse);
  if (s.ok()) s = CheckPackedNibble(inst, "Dot");
  if (!s.ok()) return s;
  std::vector<int64_t> dims;
  std::vector<bool> dyn;
  DotResultDimensions(lhs, rhs, d, dims, dyn);
  return MakeShape(ResultType(inst, lhs, rhs), dims, dyn);
}

// Ragged dot has one lhs ragged dimension: non-contracting ([b,m,k],[g,b,k,n],[g] -> [b,m,n]),
// contracting ([b,m,k],[b,k,n],[g] -> [g,b,m,n]) or batch ([b,m,k],[b,k,n],[g] -> [b,m,n]).
absl::StatusOr<Shape> InferRaggedDotShape(const HloInstruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& group_sizes = inst.operand(2)->shape();
  absl::Status s = ExpectArray(lhs, "lhs of ragged dot");
  if (s.ok()) s = ExpectArray(rhs, "rhs of ragged dot");
  if (s.ok()) s = ExpectArray(group_sizes, "group_sizes of ragged dot");
  if (!s.ok()) return s;
  if (!inst.attrs().ragged_dot_dimension_numbers) return InvalidArgument("ragged-dot has no dimension numbers.");
  const RaggedDotDimensionNumbers& r = *inst.attrs().ragged_dot_dimension_numbers;
  const DotDimensionNumbers& d = r.dot_dimension_numbers;
  auto fail = [&](const std::string& why) {
    return InvalidArgument("Cannot infer shape for ragged dot operation: %s <ragged_dot> %s. %s", Str(lhs),
                           Str(rhs), why);
  };
  if (group_sizes.rank() != 1) {
    return fail(absl::StrCat("group_sizes is expected to have rank=1, got ", group_sizes.rank()));
  }
  s = ValidateDotDimensionNumbers(lhs, rhs, d);
  if (s.ok()) s = CheckDotDimensionConstraints(lhs, rhs, d, /*sparse=*/false);
  if (!s.ok()) return s;
  if (r.lhs_ragged_dimensions.size() != 1) return fail("There must be exactly one ragged dimension in the lhs.");
  int64_t ragged = r.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.rank()) return fail("The lhs ragged dimension is out of range.");
  for (int64_t g : r.rhs_group_dimensions) {
    if (g < 0 || g >= rhs.rank()) {
      return fail(absl::StrCat("rhs group dimension ", g, " is out of range [0, ", rhs.rank(), ")"));
    }
    if (Contains(d.rhs_batch_dimensions, g) || Contains(d.rhs_contracting_dimensions, g)) {
      return fail("rhs group dimension cannot be a batch or contracting dimension");
    }
  }
  int64_t num_groups = group_sizes.dimensions(0);
  bool ragged_contracting = Contains(d.lhs_contracting_dimensions, ragged);
  if (Contains(d.lhs_batch_dimensions, ragged) || ragged_contracting) {
    if (!r.rhs_group_dimensions.empty()) {
      return fail("There must be zero group dimensions in the rhs when the ragged dimension is batch or contracting.");
    }
  } else {
    if (r.rhs_group_dimensions.size() != 1) {
      return fail("There must be exactly one group dimension in the rhs when the lhs ragged dimension is non-contracting.");
    }
    int64_t g = r.rhs_group_dimensions[0];
    if (!CompatibleDims(num_groups, rhs.dimensions(g))) {
      return fail(absl::StrCat("group_sizes is expected to have shape=[", rhs.dimensions(g), "], got [",
                               num_groups, "]"));
    }
  }
  std::vector<int64_t> dims;
  std::vector<bool> dyn;
  if (ragged_contracting) {
    dims.push_back(num_groups);
    dyn.push_back(group_sizes.is_dynamic_dimension(0));
  }
  DotResultDimensions(lhs, rhs, d, dims, dyn, r.rhs_group_dimensions);
  return MakeShape(ResultType(inst, lhs, rhs), dims, dyn);
}

absl::StatusOr<Shape> InferConvolutionShape(const HloInstruction& inst) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  absl::Status s = ExpectArray(lhs, "lhs of convolution");
  if (s.ok()) s = ExpectArray(rhs, "rhs of convolution");
  if (!s.ok()) return s;
  const InstructionAttributes& a = inst.attrs();
  if (!a.convolution_dimension_numbers) return InvalidArgument("convolution has no dim_labels.");
  const ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
  Window window = a.window.value_or(Window{});
  int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc <= 0) return InvalidArgument("feature_group_count must be a positive number, got %d", fgc);
  if (bgc <= 0) return InvalidArgument("batch_group_count must be a positive number, got %d", bgc);
  if (bgc > 1 && fgc > 1) {
    return InvalidArgument("both batch_group_count %d and feature_group_count %d cannot be greater than 1", bgc, fgc);
  }
  size_t spatial = dn.input_spatial_dimensions.size();
  if (spatial != dn.kernel_spatial_dimensions.size() || spatial != dn.output_spatial_dimensions.size()) {
    return InvalidArgument("Input, kernel and output of convolution must have the same number of spatial dimensions.");
  }
  if (window.dimensions.size() != spatial) {
    return InvalidArgument("Window must have same number of dimensions (%d) as dimension numbers (%d).",
                           window.dimensions.size(), spatial);
  }
  int64_t num_dims = spatial + 2;
  if (lhs.rank() != num_dims) {
    return InvalidArgument("The LHS argument to a convolution should have rank %d; lhs: %s.", num_dims, Str(lhs));
  }
  if (rhs.rank() != num_dims) {
    return InvalidArgument("The RHS argument to a convolution should have rank %d; rhs: %s.", num_dims, Str(rhs));
  }
  auto is_permutation = [num_dims](int64_t x, int64_t y, const std::vector<int64_t>& rest) {
    std::vector<int64_t> all = {x, y};
    all.insert(all.end(), rest.begin(), rest.end());
    std::sort(all.begin(), all.end());
    for (int64_t i = 0; i < num_dims; ++i)
      if (all[i] != i) return false;
    return true;
  };
  if (!is_permutation(dn.input_batch_dimension, dn.input_feature_dimension, dn.input_spatial_dimensions)) {
    return InvalidArgument("Input dimensions of convolution must contain each dimension exactly once.");
  }
  if (!is_permutation(dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                      dn.kernel_spatial_dimensions)) {
    return InvalidArgument("Window dimensions of convolution must contain each dimension exactly once.");
  }
  if (!is_permutation(dn.output_batch_dimension, dn.output_feature_dimension, dn.output_spatial_dimensions)) {
    return InvalidArgument("Output dimensions of convolution must contain each dimension exactly once.");
  }
  int64_t input_features = lhs.dimensions(dn.input_feature_dimension);
  int64_t input_batch = lhs.dimensions(dn.input_batch_dimension);
  int64_t kernel_input_features = rhs.dimensions(dn.kernel_input_feature_dimension);
  int64_t kernel_output_features = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (kernel_output_features % bgc != 0) {
    return InvalidArgument("Expected output feature dimension size (value %d) to be a multiple of batch group count %d.",
                           kernel_output_features, bgc);
  }
  if (input_features % fgc != 0 || input_features / fgc != kernel_input_features) {
    return InvalidArgument(
        "Expected LHS feature dimension (value %d) to be a multiple of feature_group_count (value %d), "
        "and LHS feature dimension / feature_group_count = RHS feature dimension (value %d); got "
        "<conv>(%s, %s).",
        input_features, fgc, kernel_input_features, Str(lhs), Str(rhs));
  }
  if (kernel_output_features % fgc > 0) {
    return InvalidArgument("Expected output feature dimension (value %d) to be divisible by feature_group_count (value %d).",
                           kernel_output_features, fgc);
  }
  if (input_batch % bgc != 0) {
    return InvalidArgument("Expected input batch dimension (value %d) to be divisible by batch_group_count (value %d).",
                           input_batch, bgc);
  }
  std::vector<int64_t> input_spatial(spatial);
  std::vector<bool> input_spatial_dyn(spatial);
  for (size_t i = 0; i < spatial; ++i) {
    int64_t ksize = rhs.dimensions(dn.kernel_spatial_dimensions[i]);
    if (ksize != window.dimensions[i].size) {
      return InvalidArgument("Window dimensions do not match RHS shape: RHS shape %s, window size %d in spatial dimension %d.",
                             Str(rhs), window.dimensions[i].size, i);
    }
    input_spatial[i] = lhs.dimensions(dn.input_spatial_dimensions[i]);
    input_spatial_dyn[i] = IsUnbounded(input_spatial[i]);
  }
  absl::StatusOr<Shape> window_out =
      InferWindowOutputShape(MakeShape(lhs.element_type(), input_spatial, input_spatial_dyn), window, lhs.element_type());
  if (!window_out.ok()) return window_out.status();
  std::vector<int64_t> dims(num_dims);
  std::vector<bool> dyn(num_dims);
  dims[dn.output_batch_dimension] = input_batch / bgc;
  dims[dn.output_feature_dimension] = kernel_output_features;
  for (size_t i = 0; i < spatial; ++i) dims[dn.output_spatial_dimensions[i]] = window_out->dimensions(i);
  for (int64_t i = 0; i < num_dims; ++i) {
    if (lhs.is_dynamic_dimension(i)) {
      if (i == dn.input_batch_dimension) dyn[dn.output_batch_dimension] = true;
      for (size_t j = 0; j < spatial; ++j)
        if (i == dn.input_spatial_dimensions[j]) dyn[dn.output_spatial_dimensions[j]] = true;
    }
    if (rhs.is_dynamic_dimension(i)) {
      if (i == dn.kernel_output_feature_dimension) {
        return InvalidArgument("Dynamic output feature dim on convolution kernel is not supported: rhs shape is %s",
                               Str(rhs));
      }
      for (size_t j = 0; j < spatial; ++j)
        if (i == dn.kernel_spatial_dimensions[j]) dyn[dn.output_spatial_dimensions[j]] = true;
    }
  }
  s = CheckPackedNibble(inst, "Convolution");
  if (!s.ok()) return s;
  return MakeShape(ResultType(inst, lhs, rhs), dims, dyn);
}

absl::StatusOr<Shape> InferFftShape(const Shape& in, FftType type, const std::vector<int64_t>& length) {
  absl::Status s = ExpectArray(in, "operand of fft");
  if (!s.ok()) return s;
  int64_t rank = length.size();
  if (rank < 1 || rank > 3) return InvalidArgument("FFT only supports ranks 1-3; got %d.", rank);
  if (in.rank() < rank) {
    return InvalidArgument("FFT of rank %d requires input of at least same rank; got input of rank %d", rank,
                           in.rank());
  }
  PrimitiveType t = in.element_type();
  switch (type) {
    case FftType::kFft: case FftType::kIfft:
      if (!IsComplex(t)) return InvalidArgument("FFT/IFFT requires complex input type, found %s.", TypeName(t));
      return StripLayout(in);
    case FftType::kRfft: {
      if (t != PrimitiveType::F32 && t != PrimitiveType::F64) {
        return InvalidArgument("RFFT requires F32 or F64 input type, found %s.", TypeName(t));
      }
      for (int64_t i = 0; i < rank; ++i) {
        int64_t d = in.dimensions(in.rank() - rank + i);
        if (!IsUnbounded(d) && d != length[i]) {
          return InvalidArgument("RFFT requires innermost dimensions match fft_length but dimension %d is %d and should be %d.",
                                 in.rank() - rank + i, d, length[i]);
        }
      }
      Shape result = ChangeElementType(in, t == PrimitiveType::F32 ? PrimitiveType::C64 : PrimitiveType::C128);
      if (length[rank - 1] != 0) {
        result.mutable_dimensions()[result.rank() - 1] = length[rank - 1] / 2 + 1;
        SetDynamicDimension(result, result.rank() - 1, false);
      }
      return result;
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) return InvalidArgument("IRFFT requires complex input type, found %s.", TypeName(t));
      Shape result = ChangeElementType(in, ComplexComponentType(t));
      for (int64_t i = 0; i + 1 < rank; ++i) {
        int64_t d = in.dimensions(in.rank() - rank + i);
        if (d != length[i]) {
          return InvalidArgument(
              "IRFFT requires all but one innermost dimensions match fft_length, but dimension %d is %d and should be %d.",
              in.rank() - rank + i, d, length[i]);
        }
      }
      int64_t last = in.dimensions(in.rank() - 1);
      if ((last != 0 || length[rank - 1] != 0) && !IsUnbounded(last) && last != length[rank - 1] / 2 + 1) {
        return InvalidArgument("IRFFT requires innermost dimension matches fft_length/2+1, but dimension %d is %d and should be %d.",
                               in.rank() - 1, last, length[rank - 1] / 2 + 1);
      }
      result.mutable_dimensions()[result.rank() - 1] = length[rank - 1];
      SetDynamicDimension(result, result.rank() - 1, false);
      return result;
    }
  }
  return InvalidArgument("Unexpected fft_type.");
}

absl::StatusOr<Shape> InferTriangularSolveShape(const Shape& a, const Shape& b, bool left_side) {
  absl::Status s = ExpectArray(a, "a of triangular-solve");
  if (s.ok()) s = ExpectArray(b, "b of triangular-solve");
  if (!s.ok()) return s;
  if ((!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) || a.element_type() != b.element_type()) {
    return InvalidArgument(
        "Expected element types in shape to be floating or complex and identical for "
        "TriangularSolve; got %s and %s.",
        TypeName(a.element_type()), TypeName(b.element_type()));
  }
  if (a.rank() < 2) return InvalidArgument("The 'a' argument to TriangularSolve must have rank >= 2, got shape %s", Str(a));
  if (b.rank() != a.rank()) {
    return InvalidArgument("Arguments to triangular solve must have equal rank; got %s and %s.", Str(b), Str(a));
  }
  if (!CompatibleDims(a.dimensions(a.rank() - 2), a.dimensions(a.rank() - 1))) {
    return InvalidArgument("The two minor dimensions of 'a' must have equal size, got %s.", Str(a));
  }
  if (!CompatibleDims(a.dimensions(a.rank() - 1), b.dimensions(b.rank() - (left_side ? 2 : 1)))) {
    return InvalidArgument("The shared dimension of 'a' and 'b' does not match, got shapes %s and %s", Str(a), Str(b));
  }
  for (int64_t i = 0; i + 2 < a.rank(); ++i) {
    if (a.dimensions(i) != b.dimensions(i)) {
      return InvalidArgument("The leading batch dimensions of the arguments to triangular solve must be equal; got %s and %s.",
                             Str(b), Str(a));
    }
  }
  return StripLayout(b);
}

absl::StatusOr<Shape> InferCholeskyShape(const Shape& a) {
  absl::Status s = ExpectArray(a, "operand of cholesky");
  if (!s.ok()) return s;
  if (!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) {
    return InvalidArgument("Expected element type in shape to be floating or complex for Cholesky; got %s.",
                           TypeName(a.element_type()));
  }
  if (a.rank() < 2) return InvalidArgument("The 'a' argument to Cholesky must have rank >= 2, got shape %s", Str(a));
  if (!CompatibleDims(a.dimensions(a.rank() - 2), a.dimensions(a.rank() - 1))) {
    return InvalidArgument("The two minor dimensions of 'a' must have compatible size, got %s.", Str(a));
  }
  return StripLayout(a);
}

// batch-norm-training(operand, scale, offset), -inference(operand, scale, offset, mean, var),
// -grad(operand, scale, mean, var, grad_output).
absl::StatusOr<Shape> InferBatchNormShape(const HloInstruction& inst) {
  std::string op(HloOpcodeString(inst.opcode()));
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    absl::Status s = ExpectArray(inst.operand(i)->shape(), absl::StrCat("operand ", i, " of ", op));
    if (!s.ok()) return s;
  }
  const Shape& operand = inst.operand(0)->shape();
  int64_t feature = inst.attrs().feature_index;
  if (feature < 0 || feature >= operand.rank()) {
    return InvalidArgument("Expected feature_index of %s to be in [0, %d); got %d.", op, operand.rank(), feature);
  }
  if (!IsFloatingPoint(operand.element_type())) {
    return InvalidArgument("The operand to %s must have a floating point element type, but the shape is %s.", op,
                           Str(operand));
  }
  bool grad = inst.opcode() == HloOpcode::kBatchNormGrad;
  int64_t feature_count = operand.dimensions(feature);
  // Every operand but the data (and grad's output gradient) is a rank-1 feature vector.
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!SameElementTypeIgnoringFpPrecision(s, operand)) {
      return InvalidArgument("The inputs should have the same element type for %s, but operand %d is %s and the operand is %s.",
                             op, i, Str(s), Str(operand));
    }
    if (grad && i == 4) {
      if (s.rank() != operand.rank()) {
        return InvalidArgument("Expected operand_shape of %s to have the same rank as output_grad_shape.", op);
      }
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (!CompatibleDims(s.dimensions(d), operand.dimensions(d))) {
          return InvalidArgument("The bounds of operand shape should be compatible with output_grad's: %s vs %s.",
                                 Str(operand), Str(s));
        }
      }
      continue;
    }
    if (s.rank() != 1) return InvalidArgument("Operand %d of %s must have rank 1, but has rank %d.", i, op, s.rank());
    if (!CompatibleDims(s.dimensions(0), feature_count)) {
      return InvalidArgument("The size of operand %d of %s (%d) should be compatible with the feature count %d.", i, op,
                             s.dimensions(0), feature_count);
    }
  }
  if (inst.opcode() == HloOpcode::kBatchNormInference) return StripLayout(operand);
  Shape feature_shape = MakeShape(operand.element_type(), {feature_count}, {operand.is_dynamic_dimension(feature)});
  return Shape::Tuple({StripLayout(operand), feature_shape, feature_shape});
}

}  // namespace

absl::StatusOr<Shape> InferContractionFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  const InstructionAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case O::kDot: return InferDotShape(inst);
    case O::kRaggedDot: return InferRaggedDotShape(inst);
    case O::kConvolution: return InferConvolutionShape(inst);
    case O::kFft: return InferFftShape(inst.operand(0)->shape(), a.fft_type, a.fft_length);
    case O::kCholesky: return InferCholeskyShape(inst.operand(0)->shape());
    case O::kTriangularSolve:
      return InferTriangularSolveShape(inst.operand(0)->shape(), inst.operand(1)->shape(), a.left_side);
    case O::kBatchNormTraining: case O::kBatchNormInference: case O::kBatchNormGrad:
      return InferBatchNormShape(inst);
    default:
      return absl::InternalError(absl::StrCat("not a contraction opcode: ",
                                              std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
