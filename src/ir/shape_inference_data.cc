// Shape inference for opcodes that move data without computing on it: broadcast, reshape,
// dynamic-reshape, transpose, slice, concatenate, pad, reverse, iota, bitcast and the dynamic
// dimension-size ops.
#include <algorithm>
#include <limits>

#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

// Element count, with unbounded dimensions counted as their (meaningless) bound 0 so that
// comparisons stay defined; error on overflow.
absl::StatusOr<int64_t> ElementsIn(const Shape& s) {
  Shape copy = StripLayout(s);
  for (int64_t& d : copy.mutable_dimensions())
    if (IsUnbounded(d)) d = 0;
  return copy.ElementCount();
}

bool IsPermutation(const std::vector<int64_t>& dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

absl::StatusOr<Shape> InferBroadcastShape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  absl::Status s = ExpectArray(operand, "operand of broadcast");
  if (s.ok()) s = ExpectArray(out, "result of broadcast");
  if (!s.ok()) return s;
  // HLO's broadcast has no client-level analog: XLA's verifier checks the result directly.
  if (operand.element_type() != out.element_type()) {
    return InvalidArgument("Broadcast must not change the element type: operand %s, result %s.",
                           Str(operand), Str(out));
  }
  const auto& dims = inst.attrs().dimensions;
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return InvalidArgument(
        "Broadcast has %d dimensions in dimensions={%s} but its operand %s has rank %d.",
        dims.size(), Join(dims), Str(operand), operand.rank());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= out.rank()) {
      return InvalidArgument("Broadcast dimension %d (for operand dimension %d) is out of range for result %s.",
                             d, i, Str(out));
    }
    if (out.dimensions(d) != operand.dimensions(i)) {
      return InvalidArgument(
          "Broadcast maps operand dimension %d (size %d) to result dimension %d of a different "
          "size (%d): operand %s, result %s.",
          i, operand.dimensions(i), d, out.dimensions(d), Str(operand), Str(out));
    }
  }
  return StripLayout(out);
}

absl::StatusOr<Shape> InferReshapeShape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  absl::Status s = ExpectArray(operand, "operand of reshape");
  if (s.ok()) s = ExpectArray(out, "result of reshape");
  if (!s.ok()) return s;
  if (operand.element_type() != out.element_type()) {
    return InvalidArgument("Reshape must not change the element type: operand %s, result %s.",
                           Str(operand), Str(out));
  }
  absl::StatusOr<int64_t> in_count = ElementsIn(operand);
  if (!in_count.ok()) return in_count.status();
  absl::StatusOr<int64_t> out_count = ElementsIn(out);
  if (!out_count.ok()) return out_count.status();
  if (inst.opcode() == HloOpcode::kDynamicReshape) {
    if (inst.operand_count() != out.rank() + 1) {
      return InvalidArgument("dynamic-reshape to rank %d needs %d size operands, has %d.", out.rank(),
                             out.rank(), inst.operand_count() - 1);
    }
    for (int64_t i = 1; i < inst.operand_count(); ++i) {
      if (inst.operand(i)->shape().element_type() != PrimitiveType::S32) {
        return InvalidArgument("dynamic-reshape size operand %d must be s32, got %s.", i,
                               Str(inst.operand(i)->shape()));
      }
    }
  }
  if (*in_count != *out_count && !IsUnboundedDynamic(operand)) {
    return InvalidArgument("Reshape operation has mismatched element counts: from=%d (%s) to=%d (%s).",
                           *in_count, Str(operand), *out_count, Str(out));
  }
  return StripLayout(out);
}

absl::StatusOr<Shape> InferTransposeShape(const Shape& operand, const std::vector<int64_t>& dims) {
  absl::Status s = ExpectArray(operand, "transpose");
  if (!s.ok()) return s;
  if (!IsPermutation(dims, operand.rank())) {
    return InvalidArgument(
        "Transpose dimensions [%s] are not a permutation of the operand dimensions (operand shape "
        "is %s).",
        Join(dims), Str(operand));
  }
  std::vector<int64_t> out(dims.size());
  std::vector<bool> dyn(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    out[i] = operand.dimensions(dims[i]);
    dyn[i] = operand.is_dynamic_dimension(dims[i]);
  }
  return MakeShape(operand.element_type(), out, dyn);
}

absl::StatusOr<Shape> InferSliceShape(const Shape& arg, const std::vector<SliceDimension>& slice) {
  absl::Status s = ExpectArray(arg, "operand of slice");
  if (!s.ok()) return s;
  if (static_cast<int64_t>(slice.size()) != arg.rank()) {
    return InvalidArgument("Slice index count does not match argument rank: %d vs %d.", slice.size(),
                           arg.rank());
  }
  std::vector<int64_t> sizes;
  std::vector<bool> dyn(arg.rank());
  for (int64_t d = 0; d < arg.rank(); ++d) {
    const SliceDimension& sd = slice[d];
    if (sd.start < 0) return InvalidArgument("Negative start index to slice: %d.", sd.start);
    int64_t size = arg.dimensions(d);
    if (!IsUnbounded(size) && sd.limit > size) {
      return InvalidArgument(
          "limit index (%d) must be less than or equal to dimension size (%d) in slice operation; "
          "argument shape: %s.",
          sd.limit, size, Str(arg));
    }
    if (sd.start > sd.limit) {
      return InvalidArgument(
          "limit index (%d) must be greater or equal to start index (%d) in slice with positive "
          "stride; argument shape: %s.",
          sd.limit, sd.start, Str(arg));
    }
    if (sd.stride <= 0) return InvalidArgument("Stride (%d) must be positive.", sd.stride);
    // (limit - start + stride - 1) / stride without overflow.
    int64_t n = sd.limit - sd.start;
    sizes.push_back(n / sd.stride + (n % sd.stride != 0 ? 1 : 0));
    // Slicing one element out of a dynamic dimension makes it static.
    dyn[d] = sizes.back() != 1 && IsBoundedDynamicDimension(arg, d);
  }
  return MakeShape(arg.element_type(), sizes, dyn);
}

absl::StatusOr<Shape> InferConcatenateShape(const HloInstruction& inst) {
  if (inst.operand_count() == 0) return InvalidArgument("Concatenate expects at least one argument.");
  absl::StatusOr<int64_t> dim_or = SingleDimension(inst, "concatenate");
  if (!dim_or.ok()) return dim_or.status();
  int64_t dim = *dim_or;
  const Shape& first = inst.operand(0)->shape();
  absl::Status s = ExpectArray(first, "operand of concatenation");
  if (!s.ok()) return s;
  if (dim < 0 || dim >= first.rank()) return InvalidArgument("Concatenate dimension out of bounds: %d.", dim);
  PrimitiveType type = first.element_type();
  std::vector<int64_t> dims = first.dimensions();
  std::vector<bool> dyn(first.rank());
  for (int64_t i = 0; i < first.rank(); ++i) dyn[i] = first.is_dynamic_dimension(i);
  constexpr int64_t kLimit = int64_t{1} << 62;
  for (int64_t k = 1; k < inst.operand_count(); ++k) {
    const Shape& shape = inst.operand(k)->shape();
    s = ExpectArray(shape, "operand of concatenation");
    if (!s.ok()) return s;
    if (shape.rank() != first.rank()) {
      return InvalidArgument("Cannot concatenate arrays with different ranks: %d (%s) vs %d (%s).",
                             first.rank(), Str(first), shape.rank(), Str(shape));
    }
    if (!SameElementTypeIgnoringFpPrecision(first, shape)) {
      return InvalidArgument("Cannot concatenate arrays with different element types: %s vs %s.",
                             TypeName(first.element_type()), TypeName(shape.element_type()));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      int64_t size = shape.dimensions(d);
      dyn[d] = dyn[d] || shape.is_dynamic_dimension(d);
      if (d == dim) {
        if (IsUnbounded(size) || IsUnbounded(dims[d])) {
          dims[d] = Shape::kUnboundedSize;
        } else if (dims[d] > kLimit - size) {
          return InvalidArgument("Concatenate result dimension %d is too large.", d);
        } else {
          dims[d] += size;
        }
        continue;
      }
      if (!CompatibleDims(dims[d], size)) {
        return InvalidArgument(
            "Cannot concatenate arrays that differ in dimensions other than the one being "
            "concatenated. Dimension %d in both shapes must be equal (or compatible): %s vs %s.",
            d, Str(first), Str(shape));
      }
      if (IsUnbounded(dims[d])) dims[d] = size;
    }
    type = HigherPrecisionElementType(type, shape.element_type());
  }
  return MakeShape(type, dims, dyn);
}

absl::StatusOr<Shape> InferPadShape(const Shape& operand, const Shape& value, const PaddingConfig& config) {
  if (!operand.IsArray()) return InvalidArgument("Pad operation does not support tuple-shape operands.");
  if (!IsScalar(value)) return InvalidArgument("Pad operation does not support non-scalar padding values.");
  if (static_cast<int64_t>(config.dimensions.size()) != operand.rank()) {
    return InvalidArgument("The rank of the operand and the padding configuration do not match: %s vs %d dimensions.",
                           Str(operand), config.dimensions.size());
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, value)) {
    return InvalidArgument("The element types of the operands to Pad do not match.");
  }
  constexpr int64_t kLimit = int64_t{1} << 62;
  std::vector<int64_t> dims(operand.rank());
  std::vector<bool> dyn(operand.rank());
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = config.dimensions[i];
    if (p.interior_padding < 0) {
      return InvalidArgument("Interior padding cannot be negative: dimension %d has %d.", i, p.interior_padding);
    }
    dyn[i] = operand.is_dynamic_dimension(i);
    int64_t d = operand.dimensions(i);
    if (IsUnbounded(d)) {
      dims[i] = Shape::kUnboundedSize;
      continue;
    }
    // Negative edge padding trims; interior padding inserts between elements.
    __int128 size = static_cast<__int128>(d) + p.edge_padding_low + p.edge_padding_high +
                    static_cast<__int128>(std::max<int64_t>(d - 1, 0)) * p.interior_padding;
    if (size < 0) return InvalidArgument("Padding result in negative size for dimension %d", i);
    if (size > kLimit) return InvalidArgument("Padding result is too large for dimension %d", i);
    dims[i] = static_cast<int64_t>(size);
  }
  return MakeShape(HigherPrecisionElementType(operand.element_type(), value.element_type()), dims, dyn);
}

absl::StatusOr<Shape> InferReverseShape(const Shape& operand, const std::vector<int64_t>& dims) {
  absl::Status s = ExpectArray(operand, "operand of reverse");
  if (!s.ok()) return s;
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return InvalidArgument("a dimension number is duplicated in reverse");
  }
  for (int64_t d : dims) {
    if (d < 0 || d >= operand.rank()) {
      return InvalidArgument("One of the reverse dimensions (%d) is out-of-bounds in shape %s.", d,
                             Str(operand));
    }
  }
  return StripLayout(operand);
}

absl::StatusOr<Shape> InferIotaShape(const HloInstruction& inst) {
  const Shape& shape = inst.shape();
  if (!shape.IsArray()) return InvalidArgument("Iota does not support non-array result.");
  if (shape.rank() == 0) return InvalidArgument("Iota does not support scalars.");
  int64_t d = inst.attrs().iota_dimension;
  if (d < 0 || d >= shape.rank()) {
    return InvalidArgument("The iota dimension (%d) cannot go beyond the operation rank (%d) or be negative.",
                           d, shape.rank());
  }
  PrimitiveType t = shape.element_type();
  if (!IsIntegral(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
    return InvalidArgument("Only support iota of integral, floating point or complex primitive types, got %s",
                           TypeName(t));
  }
  return StripLayout(shape);
}

// Storage size in bits of a static array as its layout describes it; nullopt when the layout
// has tiles (tile padding would need the full tiling rules) or the shape is not a static array.
std::optional<__int128> LayoutBits(const Shape& s) {
  if (!s.IsArray() || !s.has_layout() || !s.layout().tiles.empty() || !s.is_static()) return std::nullopt;
  __int128 bits = s.layout().element_size_in_bits != 0 ? s.layout().element_size_in_bits
                                                       : ByteWidth(s.element_type()) * 8;
  for (int64_t d : s.dimensions()) {
    if (d < 0) return std::nullopt;
    bits *= d;
    if (bits > (static_cast<__int128>(1) << 100)) return std::nullopt;
  }
  return bits;
}

absl::StatusOr<Shape> InferBitcastShape(const HloInstruction& inst) {
  // A bitcast reinterprets the operand's buffer: any shape of the same byte size. Sizes are only
  // meaningful when both sides carry a layout.
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  std::optional<__int128> in_bits = LayoutBits(operand), out_bits = LayoutBits(out);
  if (in_bits && out_bits) {
    __int128 in_bytes = (*in_bits + 7) / 8, out_bytes = (*out_bits + 7) / 8;
    if (in_bytes != out_bytes) {
      return InvalidArgument("Bitcast cannot have different shape sizes of output (%d bytes) and operand (%d bytes): %s vs %s.",
                             static_cast<int64_t>(out_bytes), static_cast<int64_t>(in_bytes),
                             out.ToString(true), operand.ToString(true));
    }
  }
  return StripLayout(out);
}

absl::StatusOr<Shape> InferDimensionSizeShape(const HloInstruction& inst) {
  const Shape& shape = inst.operand(0)->shape();
  absl::Status s = ExpectArray(shape, "operand of get/set-dimension-size");
  if (!s.ok()) return s;
  absl::StatusOr<int64_t> dim_or = SingleDimension(inst, std::string(HloOpcodeString(inst.opcode())));
  if (!dim_or.ok()) return dim_or.status();
  int64_t dim = *dim_or;
  if (dim < 0 || dim >= shape.rank()) {
    return InvalidArgument("%s dimension out of bounds: %d.", std::string(HloOpcodeString(inst.opcode())), dim);
  }
  if (shape.dimensions(dim) > std::numeric_limits<int32_t>::max()) {
    return InvalidArgument("%s's input shape is %s, the %dth dimension exceeds the INT_MAX limit.",
                           std::string(HloOpcodeString(inst.opcode())), Str(shape), dim);
  }
  if (inst.opcode() == HloOpcode::kGetDimensionSize) return MakeShape(PrimitiveType::S32, {});
  const Shape& val = inst.operand(1)->shape();
  if (!IsScalar(val) || val.element_type() != PrimitiveType::S32) {
    return InvalidArgument("SetDimensionSize's value has to be S32 scalar, got %s", Str(val));
  }
  Shape result = StripLayout(shape);
  SetDynamicDimension(result, dim, true);
  return result;
}

}  // namespace

absl::StatusOr<Shape> InferDataMovementFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  const InstructionAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case O::kBroadcast:
      return InferBroadcastShape(inst);
    case O::kReshape:
      return InferReshapeShape(inst);
    case O::kDynamicReshape: {
      absl::Status s = CheckMinOperandCount(inst, 1);
      if (!s.ok()) return s;
      return InferReshapeShape(inst);
    }
    case O::kTranspose:
      return InferTransposeShape(inst.operand(0)->shape(), a.dimensions);
    case O::kSlice:
      return InferSliceShape(inst.operand(0)->shape(), a.slice);
    case O::kConcatenate:
      return InferConcatenateShape(inst);
    case O::kPad:
      if (!a.padding_config) return InvalidArgument("pad instruction has no padding= attribute.");
      return InferPadShape(inst.operand(0)->shape(), inst.operand(1)->shape(), *a.padding_config);
    case O::kReverse:
      return InferReverseShape(inst.operand(0)->shape(), a.dimensions);
    case O::kIota:
      return InferIotaShape(inst);
    case O::kBitcast:
      return InferBitcastShape(inst);
    case O::kGetDimensionSize: case O::kSetDimensionSize:
      return InferDimensionSizeShape(inst);
    default:
      return absl::InternalError(absl::StrCat("not a data-movement opcode: ",
                                              std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
