// Shape inference for the indexing opcodes: dynamic-slice, dynamic-update-slice, gather,
// scatter (variadic), sort (variadic) and topk.
#include <algorithm>

#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

bool HasDuplicates(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}
bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The start indices of dynamic-(update-)slice: either one s32[rank] vector (the old form) or one
// scalar per operand dimension, all of the same integral type.
absl::Status CheckStartIndices(const HloInstruction& inst, int64_t first_index, const Shape& operand,
                               std::string_view what) {
  std::string op(what);
  int64_t n = inst.operand_count() - first_index;
  if (n >= 1 && inst.operand(first_index)->shape().rank() == 1) {
    if (n != 1) return InvalidArgument("%s should have exactly 1 index operand, has %d.", op, n);
    const Shape& idx = inst.operand(first_index)->shape();
    if (!IsIntegral(idx.element_type())) {
      return InvalidArgument("%s start indices must be of integral type.", op);
    }
    if (idx.dimensions(0) != operand.rank()) {
      return InvalidArgument("%s start number of dimensions %d (%s) must match rank %d of slice input (%s).",
                             op, idx.dimensions(0), Str(idx), operand.rank(), Str(operand));
    }
    return absl::OkStatus();
  }
  if (n != operand.rank()) {
    return InvalidArgument("%s start number of dimensions %d must match rank %d of slice input (%s).", op,
                           n, operand.rank(), Str(operand));
  }
  if (n == 0) return absl::OkStatus();
  const Shape& first = inst.operand(first_index)->shape();
  if (!IsScalar(first)) return InvalidArgument("%s indices must be scalar, not %s.", op, Str(first));
  if (!IsIntegral(first.element_type())) return InvalidArgument("%s start indices must be of integral type.", op);
  for (int64_t i = first_index; i < inst.operand_count(); ++i) {
    const Shape& idx = inst.operand(i)->shape();
    if (!ShapesCompatible(first, idx)) {
      return InvalidArgument("%s start indices must all have the same shape, got mismatching indices with shapes %s and %s.",
                             op, Str(first), Str(idx));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDynamicSliceShape(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  const Shape& operand = inst.operand(0)->shape();
  s = ExpectArray(operand, "operand of dynamic slice");
  if (s.ok()) s = CheckStartIndices(inst, 1, operand, "Dynamic slice");
  if (!s.ok()) return s;
  const auto& sizes = inst.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand.rank()) {
    return InvalidArgument("Dynamic slice index count does not match argument rank: %d vs %d.", sizes.size(),
                           operand.rank());
  }
  std::vector<bool> dyn(operand.rank());
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t in = operand.dimensions(d), size = sizes[d];
    if (size < 0) return InvalidArgument("Negative size index to dynamic slice: %d.", size);
    if (!IsUnbounded(in) && size > in) {
      return InvalidArgument("Slice dim size %d greater than dynamic slice dimension: %d.", size, in);
    }
    dyn[d] = operand.is_dynamic_dimension(d) && size > 1 && size == in;
  }
  return MakeShape(operand.element_type(), sizes, dyn);
}

absl::StatusOr<Shape> InferDynamicUpdateSliceShape(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 2);
  if (!s.ok()) return s;
  const Shape& operand = inst.operand(0)->shape();
  const Shape& update = inst.operand(1)->shape();
  s = ExpectArray(operand, "operand of dynamic update slice");
  if (s.ok()) s = ExpectArray(update, "update of dynamic update slice");
  if (s.ok()) s = CheckStartIndices(inst, 2, operand, "Dynamic update slice");
  if (!s.ok()) return s;
  if (update.rank() != operand.rank()) {
    return InvalidArgument("Dynamic update slice update rank does not match argument rank: %d vs %d.",
                           update.rank(), operand.rank());
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, update)) {
    return InvalidArgument(
        "Dynamic update slice update element type does not match argument. operand.element_type: "
        "%s vs update.element_type: %s.",
        TypeName(operand.element_type()), TypeName(update.element_type()));
  }
  Shape result = StripLayout(operand);
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (update.dimensions(d) > operand.dimensions(d)) {
      return InvalidArgument("Update dim size %d greater than dynamic slice dimension: %d.",
                             update.dimensions(d), operand.dimensions(d));
    }
    if (update.is_dynamic_dimension(d) && update.dimensions(d) == operand.dimensions(d))
      SetDynamicDimension(result, d, true);
  }
  return result;
}

absl::Status ValidateGatherDimensionNumbers(const Shape& input, const std::vector<int64_t>& indices_dims,
                                            const GatherDimensionNumbers& g) {
  if (!std::is_sorted(g.offset_dims.begin(), g.offset_dims.end()) || HasDuplicates(g.offset_dims)) {
    return InvalidArgument("Output window dimensions in gather op must be ascending and unique; got: %s.",
                           Join(g.offset_dims));
  }
  int64_t output_rank = static_cast<int64_t>(g.offset_dims.size() + indices_dims.size()) - 1;
  for (size_t i = 0; i < g.offset_dims.size(); ++i) {
    if (g.offset_dims[i] < 0 || g.offset_dims[i] >= output_rank) {
      return InvalidArgument("Offset dimension %d in gather op is out of bounds; got %d, but should have been in [0,%d).",
                             i, g.offset_dims[i], output_rank);
    }
  }
  int64_t index_vector_size = indices_dims[g.index_vector_dim];
  if (!IsUnbounded(index_vector_size) && static_cast<int64_t>(g.start_index_map.size()) != index_vector_size) {
    return InvalidArgument(
        "Gather op has %d elements in start_index_map and the bound of dimension "
        "index_vector_dim=%d of start_indices is %d. These two numbers must be equal.",
        g.start_index_map.size(), g.index_vector_dim, index_vector_size);
  }
  for (size_t i = 0; i < g.start_index_map.size(); ++i) {
    if (g.start_index_map[i] < 0 || g.start_index_map[i] >= input.rank()) {
      return InvalidArgument("Invalid start_index_map; domain is [0, %d), got: %d->%d.", input.rank(), i,
                             g.start_index_map[i]);
    }
  }
  if (HasDuplicates(g.start_index_map)) {
    return InvalidArgument("Repeated dimensions are not allowed in start_index_map; got: %s.", Join(g.start_index_map));
  }
  for (int64_t d : g.collapsed_slice_dims) {
    if (d < 0 || d >= input.rank()) {
      return InvalidArgument("Invalid collapsed_slice_dims set in gather op; valid range is [0, %d), got: %d.",
                             input.rank(), d);
    }
  }
  if (!std::is_sorted(g.collapsed_slice_dims.begin(), g.collapsed_slice_dims.end()) ||
      HasDuplicates(g.collapsed_slice_dims)) {
    return InvalidArgument("collapsed_slice_dims in gather op must be sorted and unique; got: %s",
                           Join(g.collapsed_slice_dims));
  }
  if (g.operand_batching_dims.size() != g.start_indices_batching_dims.size()) {
    return InvalidArgument(
        "operand_batching_dims and start_indices_batching_dims in gather op must be of the same "
        "size; got: %d and %d.",
        g.operand_batching_dims.size(), g.start_indices_batching_dims.size());
  }
  for (int64_t d : g.operand_batching_dims) {
    if (d < 0 || d >= input.rank()) {
      return InvalidArgument("Invalid operand_batching_dims set in gather op; valid range is [0, %d), got: %d.",
                             input.rank(), d);
    }
  }
  if (!std::is_sorted(g.operand_batching_dims.begin(), g.operand_batching_dims.end()) ||
      HasDuplicates(g.operand_batching_dims)) {
    return InvalidArgument("operand_batching_dims in gather op must be sorted and unique; got: %s",
                           Join(g.operand_batching_dims));
  }
  for (size_t i = 0; i < g.start_indices_batching_dims.size(); ++i) {
    int64_t d = g.start_indices_batching_dims[i];
    if (d < 0 || d >= static_cast<int64_t>(indices_dims.size())) {
      return InvalidArgument("Invalid start_indices_batching_dims; domain is [0, %d), got: %d->%d.",
                             indices_dims.size(), i, d);
    }
  }
  if (HasDuplicates(g.start_indices_batching_dims)) {
    return InvalidArgument("Repeated dimensions are not allowed in start_indices_batching_dims; got: %s.",
                           Join(g.start_indices_batching_dims));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferGatherShape(const HloInstruction& inst) {
  const Shape& input = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  absl::Status s = ExpectArray(input, "input tensor operand of gather op");
  if (s.ok()) s = ExpectArray(indices, "gather indices operand of gather op");
  if (!s.ok()) return s;
  if (!inst.attrs().gather_dimension_numbers) return InvalidArgument("gather has no dimension numbers.");
  const GatherDimensionNumbers& g = *inst.attrs().gather_dimension_numbers;
  const auto& slice_sizes = inst.attrs().dynamic_slice_sizes;
  if (!IsIntegral(indices.element_type())) {
    return InvalidArgument("Gather indices parameter must be an integral tensor; got %s.", Str(indices));
  }
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices.rank()) {
    return InvalidArgument(
        "Gather index leaf dimension must be within [0, rank(start_indices) + 1). "
        "rank(start_indices) is %d and gather index leaf dimension is %d.",
        indices.rank(), g.index_vector_dim);
  }
  // Indices of shape [A,B] with index_vector_dim == 2 behave as [A,B,1].
  std::vector<int64_t> expanded = indices.dimensions();
  std::vector<bool> expanded_dyn(indices.rank());
  for (int64_t i = 0; i < indices.rank(); ++i) expanded_dyn[i] = indices.is_dynamic_dimension(i);
  if (static_cast<int64_t>(expanded.size()) == g.index_vector_dim) {
    expanded.push_back(1);
    expanded_dyn.push_back(false);
  }
  s = ValidateGatherDimensionNumbers(input, expanded, g);
  if (!s.ok()) return s;
  if (static_cast<int64_t>(slice_sizes.size()) != input.rank()) {
    return InvalidArgument(
        "Gather op must have one slice size for every input dimension; got: len(slice_sizes)=%d, "
        "input_shape.rank=%d.",
        slice_sizes.size(), input.rank());
  }
  if (slice_sizes.size() != g.offset_dims.size() + g.collapsed_slice_dims.size() + g.operand_batching_dims.size()) {
    return InvalidArgument(
        "All components of the offset index in a gather op must either be a offset dimension or "
        "explicitly collapsed or explicitly batched; got len(slice_sizes)=%d, offset_dims=%s, "
        "collapsed_slice_dims=%s, operand_batching_dims=%s.",
        slice_sizes.size(), Join(g.offset_dims), Join(g.collapsed_slice_dims), Join(g.operand_batching_dims));
  }
  for (size_t i = 0; i < slice_sizes.size(); ++i) {
    if (IsUnbounded(input.dimensions(i))) continue;
    if (slice_sizes[i] < 0 || slice_sizes[i] > input.dimensions(i)) {
      return InvalidArgument("Slice size at index %d in gather op is out of range, must be within [0, %d), got %d.",
                             i, input.dimensions(i) + 1, slice_sizes[i]);
    }
  }
  for (int64_t d : g.collapsed_slice_dims) {
    if (slice_sizes[d] > 1) {
      return InvalidArgument("Gather op can only collapse slice dims with bound 1 or 0, but bound is %d for index %d.",
                             slice_sizes[d], d);
    }
  }
  for (int64_t d : g.operand_batching_dims) {
    if (slice_sizes[d] > 1) {
      return InvalidArgument(
          "Gather op can only have operand_batching_dims with bound 1 or 0, but bound is %d for index %d.",
          slice_sizes[d], d);
    }
  }
  int64_t result_rank = static_cast<int64_t>(g.offset_dims.size() + expanded.size()) - 1;
  int64_t offset_seen = 0, gather_seen = 0;
  std::vector<int64_t> out;
  std::vector<bool> out_dyn;
  for (int64_t i = 0; i < result_rank; ++i) {
    if (std::binary_search(g.offset_dims.begin(), g.offset_dims.end(), i)) {
      while (Contains(g.collapsed_slice_dims, offset_seen) || Contains(g.operand_batching_dims, offset_seen))
        ++offset_seen;
      if (offset_seen >= input.rank()) return InvalidArgument("gather offset dimensions exceed the operand rank.");
      out_dyn.push_back(slice_sizes[offset_seen] == input.dimensions(offset_seen) &&
                        input.is_dynamic_dimension(offset_seen));
      out.push_back(slice_sizes[offset_seen++]);
    } else {
      if (gather_seen == g.index_vector_dim) ++gather_seen;
      if (gather_seen >= static_cast<int64_t>(expanded.size()))
        return InvalidArgument("gather batch dimensions exceed the indices rank.");
      out_dyn.push_back(expanded_dyn[gather_seen]);
      out.push_back(expanded[gather_seen++]);
    }
  }
  return MakeShape(input.element_type(), out, out_dyn);
}

absl::Status ValidateScatterDimensionNumbers(const Shape& operand, const std::vector<int64_t>& indices_dims,
                                             const Shape& updates, const ScatterDimensionNumbers& d) {
  if (!std::is_sorted(d.update_window_dims.begin(), d.update_window_dims.end()) ||
      HasDuplicates(d.update_window_dims)) {
    return InvalidArgument("update_window_dims in scatter op must be sorted and unique; got: %s.",
                           Join(d.update_window_dims));
  }
  for (int64_t w : d.update_window_dims) {
    if (w < 0 || w >= updates.rank()) {
      return InvalidArgument("Invalid update_window_dims set in scatter op; valid range is [0, %d). got: %d.",
                             updates.rank(), w);
    }
  }
  if (!std::is_sorted(d.inserted_window_dims.begin(), d.inserted_window_dims.end()) ||
      HasDuplicates(d.inserted_window_dims)) {
    return InvalidArgument("inserted_window_dims in scatter op must be sorted and unique; got: %s.",
                           Join(d.inserted_window_dims));
  }
  for (int64_t w : d.inserted_window_dims) {
    if (w < 0 || w >= operand.rank()) {
      return InvalidArgument("Invalid inserted_window_dims set in scatter op; valid range is [0, %d), got: %d.",
                             operand.rank(), w);
    }
  }
  int64_t window_size = d.update_window_dims.size() + d.inserted_window_dims.size() + d.input_batching_dims.size();
  if (window_size != operand.rank()) {
    return InvalidArgument("Scatter op has window of size %d; doesn't match operand of rank %d.", window_size,
                           operand.rank());
  }
  int64_t index_vector_size = indices_dims[d.index_vector_dim];
  if (!CompatibleDims(d.scatter_dims_to_operand_dims.size(), index_vector_size)) {
    return InvalidArgument(
        "Scatter op has %d elements in scatter_dims_to_operand_dims and the bound of dimension "
        "index_vector_dim=%d of scatter_indices is %d. These two numbers must be equal.",
        d.scatter_dims_to_operand_dims.size(), d.index_vector_dim, index_vector_size);
  }
  for (size_t i = 0; i < d.scatter_dims_to_operand_dims.size(); ++i) {
    int64_t x = d.scatter_dims_to_operand_dims[i];
    if (x < 0 || x >= operand.rank()) {
      return InvalidArgument("Invalid scatter_dims_to_operand_dims mapping; domain is [0, %d), got: %d->%d.",
                             operand.rank(), i, x);
    }
  }
  if (HasDuplicates(d.scatter_dims_to_operand_dims)) {
    return InvalidArgument("Repeated dimensions not allowed in scatter_dims_to_operand_dims; got: %s.",
                           Join(d.scatter_dims_to_operand_dims));
  }
  if (d.input_batching_dims.size() != d.scatter_indices_batching_dims.size()) {
    return InvalidArgument(
        "input_batching_dims and scatter_indices_batching_dims in scatter op must be of the same "
        "size; got: %d and %d.",
        d.input_batching_dims.size(), d.scatter_indices_batching_dims.size());
  }
  if (!std::is_sorted(d.input_batching_dims.begin(), d.input_batching_dims.end()) ||
      HasDuplicates(d.input_batching_dims)) {
    return InvalidArgument("input_batching_dims in scatter op must be sorted and unique; got: %s.",
                           Join(d.input_batching_dims));
  }
  for (int64_t x : d.input_batching_dims) {
    if (x < 0 || x >= operand.rank()) {
      return InvalidArgument("Invalid input_batching_dims set in scatter op; valid range is [0, %d), got: %d.",
                             operand.rank(), x);
    }
  }
  for (int64_t x : d.scatter_indices_batching_dims) {
    if (x < 0 || x >= static_cast<int64_t>(indices_dims.size())) {
      return InvalidArgument("Invalid scatter_indices_batching_dims set in scatter op; valid range is [0, %d), got: %d.",
                             indices_dims.size(), x);
    }
  }
  if (HasDuplicates(d.scatter_indices_batching_dims)) {
    return InvalidArgument("scatter_indices_batching_dims in scatter op must not repeat; got: %s.",
                           Join(d.scatter_indices_batching_dims));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferScatterShape(const HloInstruction& inst) {
  // scatter(operands..., indices, updates...)
  int64_t n = inst.operand_count() / 2;
  if (n < 1 || n * 2 + 1 != inst.operand_count()) {
    return InvalidArgument("Invalid argument count of scatter op: Expected an odd count of at least 3, saw %d",
                           inst.operand_count());
  }
  if (!inst.attrs().scatter_dimension_numbers) return InvalidArgument("scatter has no dimension numbers.");
  const ScatterDimensionNumbers& d = *inst.attrs().scatter_dimension_numbers;
  const Shape& indices = inst.operand(n)->shape();
  absl::Status s = ExpectArray(indices, "scatter indices of scatter op");
  if (!s.ok()) return s;
  if (!IsIntegral(indices.element_type())) {
    return InvalidArgument("Scatter indices parameter must be an integral tensor; got %s.", Str(indices));
  }
  if (d.index_vector_dim < 0 || d.index_vector_dim > indices.rank()) {
    return InvalidArgument(
        "Scatter index leaf dimension must be within [0, rank(scatter_indices) + 1). "
        "rank(scatter_indices) is %d and scatter index leaf dimension is %d.",
        indices.rank(), d.index_vector_dim);
  }
  std::vector<int64_t> expanded = indices.dimensions();
  if (static_cast<int64_t>(expanded.size()) == d.index_vector_dim) expanded.push_back(1);
  std::vector<const Shape*> inits;
  std::vector<Shape> init_storage;
  init_storage.reserve(n);
  std::vector<PrimitiveType> update_types;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& operand = inst.operand(k)->shape();
    const Shape& updates = inst.operand(n + 1 + k)->shape();
    s = ExpectArray(operand, absl::StrCat("operand ", k, " of scatter op"));
    if (s.ok()) s = ExpectArray(updates, absl::StrCat("updates ", k, " of scatter op"));
    if (!s.ok()) return s;
    std::vector<int64_t> max_update_slice_sizes;
    for (int64_t i = 0; i < operand.rank(); ++i) {
      if (!Contains(d.inserted_window_dims, i) && !Contains(d.input_batching_dims, i))
        max_update_slice_sizes.push_back(operand.dimensions(i));
    }
    int64_t expected_rank = static_cast<int64_t>(expanded.size()) - 1 + d.update_window_dims.size();
    if (updates.rank() != expected_rank) {
      return InvalidArgument("Updates tensor must be of rank %d; got %d.", expected_rank, updates.rank());
    }
    s = ValidateScatterDimensionNumbers(operand, expanded, updates, d);
    if (!s.ok()) return s;
    for (size_t i = 0; i < d.update_window_dims.size(); ++i) {
      int64_t w = d.update_window_dims[i];
      if (i >= max_update_slice_sizes.size() || updates.dimensions(w) > max_update_slice_sizes[i]) {
        return InvalidArgument(
            "Bounds of the window dimensions of updates must not exceed the bounds of the "
            "corresponding dimensions of operand. For dimension %d, updates bound is %d.",
            w, updates.dimensions(w));
      }
    }
    int64_t scatter_seen = 0;
    for (int64_t i = 0; i < updates.rank(); ++i) {
      if (std::binary_search(d.update_window_dims.begin(), d.update_window_dims.end(), i)) continue;
      if (scatter_seen == d.index_vector_dim) ++scatter_seen;
      if (scatter_seen >= static_cast<int64_t>(expanded.size()) ||
          !CompatibleDims(updates.dimensions(i), expanded[scatter_seen])) {
        return InvalidArgument(
            "Bounds of the scatter dimensions of updates must be same as the bounds of the "
            "corresponding dimensions of scatter indices. For scatter dimension %d, updates bound is %d.",
            i, updates.dimensions(i));
      }
      ++scatter_seen;
    }
    init_storage.push_back(MakeShape(operand.element_type(), {}));
    update_types.push_back(updates.element_type());
  }
  for (const Shape& sh : init_storage) inits.push_back(&sh);
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  s = VerifyReducerShape(*to_apply, inits, update_types, n);
  if (!s.ok()) return s;
  if (n == 1) return StripLayout(inst.operand(0)->shape());
  std::vector<Shape> parts;
  for (int64_t k = 0; k < n; ++k) parts.push_back(StripLayout(inst.operand(k)->shape()));
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> InferSortShape(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  absl::StatusOr<ProgramShape> compare = CalledProgramShape(inst, 0, "comparator (to_apply)");
  if (!compare.ok()) return compare.status();
  if (!ShapesCompatible(compare->result, MakeShape(PrimitiveType::PRED, {}))) {
    return InvalidArgument("The Sort compare computation shape does not lead to a scalar predicate shape: %s",
                           Str(compare->result));
  }
  if (static_cast<int64_t>(compare->parameters.size()) != inst.operand_count() * 2) {
    return InvalidArgument("Expected the sort comparator to have %d parameters, has %d.",
                           inst.operand_count() * 2, compare->parameters.size());
  }
  for (size_t p = 0; p < compare->parameters.size(); ++p) {
    Shape expected = MakeShape(inst.operand(p / 2)->shape().element_type(), {});
    if (!ShapesCompatibleIgnoringFpPrecision(expected, compare->parameters[p])) {
      return InvalidArgument(
          "Expected the %d-th parameter of the compare computation of sort to have shape %s, but got %s",
          p, Str(expected), Str(compare->parameters[p]));
    }
  }
  const Shape& keys = inst.operand(0)->shape();
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    s = ExpectArray(inst.operand(i)->shape(), "operand of sort");
    if (!s.ok()) return s;
    if (inst.operand(i)->shape().dimensions() != keys.dimensions()) {
      return InvalidArgument(
          "Expected sort to have the same dimensions for all operands. First operand shape is: %s, "
          "shape (operand index %d) is: %s",
          Str(keys), i, Str(inst.operand(i)->shape()));
    }
  }
  absl::StatusOr<int64_t> dim = SingleDimension(inst, "sort");
  if (!dim.ok()) return dim.status();
  if (*dim < 0 || *dim >= keys.rank()) {
    return InvalidArgument("Expected the sort_dimension %d of sort to be smaller than the rank %d of the operand(s).",
                           *dim, keys.rank());
  }
  if (inst.operand_count() == 1) return StripLayout(keys);
  std::vector<Shape> parts;
  for (const HloInstruction* op : inst.operands()) parts.push_back(StripLayout(op->shape()));
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> InferTopKShape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  absl::Status s = ExpectArray(operand, "operand of top-k operation");
  if (!s.ok()) return s;
  int64_t k = inst.attrs().k;
  if (operand.rank() < 1) return InvalidArgument("top-k needs an operand of rank >= 1, got %s.", Str(operand));
  int64_t last = operand.rank() - 1;
  if (k < 0 || operand.dimensions(last) < k) {
    return InvalidArgument("k=%d is larger than the last dimension of size=%d (or negative).", k,
                           operand.dimensions(last));
  }
  std::vector<int64_t> dims = operand.dimensions();
  std::vector<bool> dyn(operand.rank());
  for (int64_t i = 0; i < last; ++i) dyn[i] = operand.is_dynamic_dimension(i);
  dims[last] = k;
  return Shape::Tuple({MakeShape(operand.element_type(), dims, dyn), MakeShape(PrimitiveType::S32, dims, dyn)});
}

}  // namespace

absl::StatusOr<Shape> InferIndexingFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  switch (inst.opcode()) {
    case O::kDynamicSlice: return InferDynamicSliceShape(inst);
    case O::kDynamicUpdateSlice: return InferDynamicUpdateSliceShape(inst);
    case O::kGather: return InferGatherShape(inst);
    case O::kScatter: return InferScatterShape(inst);
    case O::kSort: return InferSortShape(inst);
    case O::kTopK: return InferTopKShape(inst);
    default:
      return absl::InternalError(absl::StrCat("not an indexing opcode: ",
                                              std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
