#include "passes/expanders/patch_convolution_to_dot.h"

#include <algorithm>

#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

// How one spatial dimension of the input splits: index = outer * inner_size + inner.
struct SpatialSplit {
  int64_t outer = 1, inner = 1;
  bool outer_is_output = true;  // patch: outer = output position, inner = tap; gradient: swapped
};

std::optional<std::vector<SpatialSplit>> PlanSplits(const HloInstruction& conv) {
  const ConvolutionDimensionNumbers& d = *conv.attrs().convolution_dimension_numbers;
  const Window& w = *conv.attrs().window;
  const Shape& in = conv.operand(0)->shape();
  const Shape& out = conv.shape();
  std::vector<SpatialSplit> splits;
  bool wide = false;
  for (size_t i = 0; i < d.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& wd = w.dimensions[i];
    if (wd.padding_low != 0 || wd.padding_high != 0 || wd.base_dilation != 1) return std::nullopt;
    const int64_t n = in.dimensions(d.input_spatial_dimensions[i]);
    const int64_t o = out.dimensions(d.output_spatial_dimensions[i]);
    SpatialSplit s;
    if (wd.window_dilation == 1 && wd.stride == wd.size && n == o * wd.size) {
      s = {o, wd.size, true};
    } else if (wd.stride == 1 && wd.window_dilation > 1 && n == wd.size * wd.window_dilation && o == wd.window_dilation) {
      s = {wd.size, wd.window_dilation, false};
    } else {
      return std::nullopt;
    }
    wide = wide || wd.size > 1;
    splits.push_back(s);
  }
  if (!wide) return std::nullopt;  // a 1x1 convolution
  return splits;
}

absl::StatusOr<HloInstruction*> Rewrite(HloInstruction* conv, const std::vector<SpatialSplit>& splits,
                                        NameUniquer& names) {
  const ConvolutionDimensionNumbers& d = *conv->attrs().convolution_dimension_numbers;
  const Shape& in = conv->operand(0)->shape();
  // The reshaped input: every spatial dimension becomes (outer, inner) in place.
  std::vector<int64_t> dims;
  std::vector<int64_t> new_pos(in.rank());  // input dim -> first dim of it in the reshape
  for (int64_t k = 0; k < in.rank(); ++k) {
    new_pos[k] = static_cast<int64_t>(dims.size());
    auto it = std::find(d.input_spatial_dimensions.begin(), d.input_spatial_dimensions.end(), k);
    if (it == d.input_spatial_dimensions.end()) {
      dims.push_back(in.dimensions(k));
    } else {
      const SpatialSplit& s = splits[it - d.input_spatial_dimensions.begin()];
      dims.push_back(s.outer);
      dims.push_back(s.inner);
    }
  }
  DotDimensionNumbers dn;
  std::vector<int64_t> free_spatial(splits.size());  // reshaped lhs dim of each output position
  for (size_t i = 0; i < splits.size(); ++i) {
    const int64_t outer = new_pos[d.input_spatial_dimensions[i]];
    const int64_t tap = splits[i].outer_is_output ? outer + 1 : outer;
    free_spatial[i] = splits[i].outer_is_output ? outer : outer + 1;
    dn.lhs_contracting_dimensions.push_back(tap);
    dn.rhs_contracting_dimensions.push_back(d.kernel_spatial_dimensions[i]);
  }
  dn.lhs_contracting_dimensions.push_back(new_pos[d.input_feature_dimension]);
  dn.rhs_contracting_dimensions.push_back(d.kernel_input_feature_dimension);
  ExpanderBuilder b(conv->parent(), &names, conv);
  b.set_metadata(&conv->attrs().metadata);
  HloInstruction* lhs = b.Reshape(conv->operand(0), dims);
  // A reversed window dimension reads the kernel back to front: reverse the kernel instead.
  HloInstruction* kernel = conv->operand(1);
  std::vector<int64_t> reversed;
  for (size_t i = 0; i < splits.size(); ++i)
    if (conv->attrs().window->dimensions[i].window_reversal) reversed.push_back(d.kernel_spatial_dimensions[i]);
  if (!reversed.empty()) kernel = b.Reverse(kernel, reversed);
  HloInstruction* dot = b.Dot(lhs, kernel, dn, conv->attrs().precision_config, conv->shape().element_type());
  if (dot == nullptr) return b.status();
  // The dot's dimensions: lhs free dims in order (batch and output positions), then the
  // kernel's output feature. Where each convolution output dimension comes from:
  std::vector<int64_t> lhs_free;
  for (int64_t k = 0; k < static_cast<int64_t>(dims.size()); ++k)
    if (std::find(dn.lhs_contracting_dimensions.begin(), dn.lhs_contracting_dimensions.end(), k) ==
        dn.lhs_contracting_dimensions.end())
      lhs_free.push_back(k);
  auto dot_dim_of = [&](int64_t lhs_dim) {
    return static_cast<int64_t>(std::find(lhs_free.begin(), lhs_free.end(), lhs_dim) - lhs_free.begin());
  };
  std::vector<int64_t> perm(conv->shape().rank());
  perm[d.output_batch_dimension] = dot_dim_of(new_pos[d.input_batch_dimension]);
  perm[d.output_feature_dimension] = static_cast<int64_t>(lhs_free.size());
  for (size_t i = 0; i < splits.size(); ++i) perm[d.output_spatial_dimensions[i]] = dot_dim_of(free_spatial[i]);
  bool identity = true;
  for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == static_cast<int64_t>(i);
  if (identity) return dot;
  HloInstruction* result = b.Transpose(dot, perm);
  if (result == nullptr || !b.ok()) return b.status();
  return result;
}

}  // namespace

absl::StatusOr<bool> PatchConvolutionToDot::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  return expanders::RunOpExpander(
      module,
      [](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kConvolution && inst.operand_count() == 2 &&
               inst.attrs().feature_group_count == 1 && inst.attrs().batch_group_count == 1 &&
               inst.attrs().convolution_dimension_numbers && inst.attrs().window && inst.shape().IsArray() &&
               inst.attrs().window->dimensions.size() ==
                   inst.attrs().convolution_dimension_numbers->input_spatial_dimensions.size() &&
               PlanSplits(inst).has_value();
      },
      [&](HloInstruction* conv) -> absl::StatusOr<HloInstruction*> { return Rewrite(conv, *PlanSplits(*conv), names); });
}

}  // namespace hloc
