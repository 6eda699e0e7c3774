#include "passes/library/conv_rewriter.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/library_calls.h"
#include "passes/library/library_util.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;
using library::DimVec;

struct ConvMatch {
  Window window;
  ConvolutionDimensionNumbers dnums;
  HloInstruction* operand;  // the new lhs (backward filter) or rhs (backward input)
};

const ConvolutionDimensionNumbers& Dnums(const HloInstruction* conv) { return *conv->attrs().convolution_dimension_numbers; }
const Window& Win(const HloInstruction* conv) {
  static const Window kEmpty;
  return conv->attrs().window ? *conv->attrs().window : kEmpty;
}
bool HasWindowDilation(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(), [](const WindowDimension& d) { return d.window_dilation != 1; });
}
bool HasBaseDilation(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(), [](const WindowDimension& d) { return d.base_dilation != 1; });
}

// XLA's CheckTypes: cuDNN takes floating-point and integral convolutions (FP8 only e4m3fn/e5m2).
bool TypesOk(const HloInstruction* conv) {
  const HloInstruction* parts[] = {conv, conv->operand(0), conv->operand(1)};
  for (const HloInstruction* x : parts) {
    const PrimitiveType t = x->shape().element_type();
    if (!IsFloatingPoint(t) && !IsIntegral(t)) return false;
    if (IsF8OrF4(t) && t != PrimitiveType::F8E4M3FN && t != PrimitiveType::F8E5M2) return false;
  }
  return true;
}

// The filter is reshape(f) inserting one size-1 kernel spatial dimension: a 1D convolution
// written as 2D (XLA's MaybeConv1dToConv2d).
bool MaybeConv1dToConv2d(const HloInstruction* conv) {
  if (Win(conv).dimensions.size() != 2) return false;
  const HloInstruction* filter = conv->operand(1);
  if (filter->opcode() != HloOpcode::kReshape) return false;
  const DimVec& to = filter->shape().dimensions();
  const DimVec& from = filter->operand(0)->shape().dimensions();
  if (to.size() != from.size() + 1) return false;
  for (size_t p = 0; p < to.size(); ++p) {
    if (to[p] != 1) continue;
    DimVec without = to;
    without.erase(without.begin() + p);
    if (without != from) continue;
    const DimVec& ks = Dnums(conv).kernel_spatial_dimensions;
    if (std::find(ks.begin(), ks.end(), static_cast<int64_t>(p)) != ks.end()) return true;
  }
  return false;
}

bool LooksLikeForwardConvolution(const HloInstruction* conv) {
  const ConvolutionDimensionNumbers& d = Dnums(conv);
  const Shape& lhs = conv->operand(0)->shape();
  const Shape& rhs = conv->operand(1)->shape();
  const Shape& out = conv->shape();
  if (lhs.dimensions(d.input_batch_dimension) != out.dimensions(d.output_batch_dimension)) return false;
  if (rhs.dimensions(d.kernel_output_feature_dimension) != out.dimensions(d.output_feature_dimension)) return false;
  for (size_t i = 0; i < d.kernel_spatial_dimensions.size(); ++i)
    if (rhs.dimensions(d.kernel_spatial_dimensions[i]) > out.dimensions(d.output_spatial_dimensions[i])) return false;
  return true;
}

bool CanImplementAsForwardConv(const HloInstruction* conv) {
  const ConvolutionDimensionNumbers& d = Dnums(conv);
  if (d.input_spatial_dimensions.size() > 3) return false;
  if (conv->operand(0)->shape().num_elements() == 0 || conv->operand(1)->shape().num_elements() == 0) return false;
  const Window& w = Win(conv);
  const int64_t reversed = std::count_if(w.dimensions.begin(), w.dimensions.end(),
                                         [](const WindowDimension& x) { return x.window_reversal; });
  // cuDNN does cross-correlation or (2D only) convolution with every dimension reversed.
  if (d.input_spatial_dimensions.size() == 2 ? (reversed != 0 && reversed != 2) : reversed != 0) return false;
  return true;
}

std::optional<ConvMatch> MatchBackwardFilter(HloInstruction* conv) {
  if (conv->attrs().feature_group_count > 1) return std::nullopt;
  if (LooksLikeForwardConvolution(conv)) return std::nullopt;
  const ConvolutionDimensionNumbers& d = Dnums(conv);
  const Window& w = Win(conv);
  for (const WindowDimension& wd : w.dimensions)
    if (wd.stride != 1 || wd.base_dilation != 1 || wd.padding_low < 0 || wd.window_reversal) return std::nullopt;
  // Forward convolutions have small kernels; backward-filter "kernels" (the output gradients)
  // are large. A 1D convolution written as 2D has one small kernel dimension either way.
  int small = 0;
  for (size_t i = 0; i < d.kernel_spatial_dimensions.size(); ++i)
    if (conv->operand(1)->shape().dimensions(d.kernel_spatial_dimensions[i]) <= conv->shape().dimensions(d.output_spatial_dimensions[i]))
      ++small;
  if ((d.kernel_spatial_dimensions.empty() || small > 1 || (!MaybeConv1dToConv2d(conv) && small == 1)) &&
      !HasWindowDilation(w))
    return std::nullopt;

  ConvMatch m;
  for (size_t i = 0; i < d.input_spatial_dimensions.size(); ++i) {
    WindowDimension dim;
    const int64_t filter_size = conv->shape().dimensions(d.output_spatial_dimensions[i]);
    dim.size = filter_size;
    dim.stride = w.dimensions[i].window_dilation;
    dim.padding_low = w.dimensions[i].padding_low;
    const int64_t input_size = conv->operand(0)->shape().dimensions(d.input_spatial_dimensions[i]);
    const int64_t output_size = w.dimensions[i].size;
    // Any high padding in [min, min + stride - 1] gives the same output; prefer symmetric.
    const int64_t padded = filter_size + (output_size - 1) * dim.stride;
    const int64_t min_high = padded - input_size - dim.padding_low;
    const int64_t max_high = min_high + dim.stride - 1;
    if (dim.padding_low >= min_high && dim.padding_low <= max_high) dim.padding_high = dim.padding_low;
    else dim.padding_high = dim.padding_low < min_high ? min_high : max_high;
    if (dim.padding_high < 0) return std::nullopt;
    m.window.dimensions.push_back(dim);
  }
  // The activations' batch and feature roles swap; the forward output is the gradients.
  ConvolutionDimensionNumbers& b = m.dnums;
  b.input_batch_dimension = d.input_feature_dimension;
  b.input_feature_dimension = d.input_batch_dimension;
  b.input_spatial_dimensions = d.input_spatial_dimensions;
  b.output_batch_dimension = d.kernel_input_feature_dimension;
  b.output_feature_dimension = d.kernel_output_feature_dimension;
  b.output_spatial_dimensions = d.kernel_spatial_dimensions;
  b.kernel_input_feature_dimension = d.output_batch_dimension;
  b.kernel_output_feature_dimension = d.output_feature_dimension;
  b.kernel_spatial_dimensions = d.output_spatial_dimensions;
  m.operand = conv->operand(0);
  return m;
}

std::optional<ConvMatch> MatchBackwardInput(HloInstruction* conv, ExpanderBuilder& builder) {
  // XLA does not use cuDNN's backward-input call for grouped convolutions.
  if (conv->attrs().feature_group_count > 1) return std::nullopt;
  HloInstruction* reverse_filter = conv->operand(1);
  ConvolutionDimensionNumbers dnums = Dnums(conv);
  const Window& old_window = Win(conv);
  auto is_permutation_of_spatial = [&](const std::vector<int64_t>& dims) {
    std::vector<int64_t> a = dims, b = dnums.kernel_spatial_dimensions;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
  };
  const bool reversed = reverse_filter->opcode() == HloOpcode::kReverse &&
                        is_permutation_of_spatial(reverse_filter->attrs().dimensions);
  const bool reversed_conv1d = MaybeConv1dToConv2d(conv) && reverse_filter->operand(0)->opcode() == HloOpcode::kReverse;
  const bool is_1x1 = std::all_of(old_window.dimensions.begin(), old_window.dimensions.end(),
                                  [](const WindowDimension& d) { return d.size == 1; });
  if (!reversed && !reversed_conv1d &&
      !(HasBaseDilation(old_window) && (reverse_filter->opcode() == HloOpcode::kConstant || is_1x1)))
    return std::nullopt;
  for (const WindowDimension& wd : old_window.dimensions)
    if (wd.stride != 1 || wd.window_dilation != 1 || wd.window_reversal) return std::nullopt;

  const ConvolutionDimensionNumbers& cd = Dnums(conv);
  ConvMatch m;
  m.window = old_window;
  for (size_t i = 0; i < cd.input_spatial_dimensions.size(); ++i) {
    WindowDimension& dim = m.window.dimensions[i];
    dim.stride = old_window.dimensions[i].base_dilation;
    dim.base_dilation = 1;
    const int64_t kernel_size = old_window.dimensions[i].size;
    const int64_t low = kernel_size - 1 - old_window.dimensions[i].padding_low;
    if (low < 0) return std::nullopt;
    dim.padding_low = low;
    const int64_t unpadded_input = conv->shape().dimensions(cd.output_spatial_dimensions[i]);
    const int64_t output_size = conv->operand(0)->shape().dimensions(cd.input_spatial_dimensions[i]);
    const int64_t padded_input = kernel_size + dim.stride * (output_size - 1);
    const int64_t min_high = padded_input - unpadded_input - low;
    const int64_t max_high = min_high + dim.stride - 1;
    if (low >= min_high && low <= max_high) dim.padding_high = low;
    else dim.padding_high = low < min_high ? min_high : max_high;
    if (dim.padding_high < 0) return std::nullopt;
  }
  // Input and output swap roles, and so do the kernel's feature dimensions.
  dnums.kernel_input_feature_dimension = cd.kernel_output_feature_dimension;
  dnums.kernel_output_feature_dimension = cd.kernel_input_feature_dimension;
  for (size_t i = 0; i < cd.input_spatial_dimensions.size(); ++i) {
    dnums.input_spatial_dimensions[i] = cd.output_spatial_dimensions[i];
    dnums.output_spatial_dimensions[i] = cd.input_spatial_dimensions[i];
  }
  dnums.input_feature_dimension = cd.output_feature_dimension;
  dnums.input_batch_dimension = cd.output_batch_dimension;
  dnums.output_feature_dimension = cd.input_feature_dimension;
  dnums.output_batch_dimension = cd.input_batch_dimension;
  m.dnums = dnums;

  // cuDNN's backward-input call reverses the filter itself: it takes the unreversed filter.
  HloInstruction* rhs = reverse_filter;
  if (reverse_filter->opcode() == HloOpcode::kReverse) {
    rhs = reverse_filter->operand(0);
  } else if (reversed_conv1d) {
    rhs = builder.ReshapeTo(reverse_filter->operand(0)->operand(0), reverse_filter->shape());
  } else {
    // A constant (or 1x1) filter: reverse(filter) here, which the call undoes.
    rhs = builder.Reverse(reverse_filter, dnums.kernel_spatial_dimensions);
  }
  if (rhs == nullptr) return std::nullopt;
  m.operand = rhs;
  return m;
}

// batch_group_count G > 1: the batch split into G groups moves next to the features, making
// a feature-grouped convolution (XLA's ConvertBatchGroupedToFeatureGroupedConvolution).
HloInstruction* BatchGroupedToFeatureGrouped(ExpanderBuilder& b, HloInstruction* conv, HloInstruction** lhs_out) {
  const int64_t groups = conv->attrs().batch_group_count;
  const ConvolutionDimensionNumbers& d = Dnums(conv);
  HloInstruction* lhs = conv->operand(0);
  const int64_t bdim = d.input_batch_dimension, fdim = d.input_feature_dimension;
  const int64_t features = lhs->shape().dimensions(fdim);
  DimVec dims = lhs->shape().dimensions();
  dims[bdim] /= groups;
  dims.insert(dims.begin() + bdim, groups);
  lhs = b.Reshape(lhs, dims);
  if (lhs == nullptr) return nullptr;
  DimVec perm(lhs->shape().rank());
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
  perm.erase(perm.begin() + bdim);
  perm.insert(perm.begin() + fdim, bdim);
  lhs = b.Transpose(lhs, perm);
  if (lhs == nullptr) return nullptr;
  DimVec merged = lhs->shape().dimensions();
  merged.erase(merged.begin() + fdim);
  merged[fdim] = features * groups;
  lhs = b.Reshape(lhs, merged);
  *lhs_out = lhs;
  return lhs;
}

HloInstruction* CreateCudnnCall(ExpanderBuilder& b, std::string_view target, const Shape& shape, HloInstruction* lhs,
                                HloInstruction* rhs, const Window& window, const ConvolutionDimensionNumbers& dnums,
                                int64_t feature_group_count, const HloInstruction* conv) {
  if (lhs == nullptr || rhs == nullptr) return nullptr;
  const char* name = target == kCudnnConvForwardCallTarget           ? "cudnn-conv"
                     : target == kCudnnConvBackwardInputCallTarget  ? "cudnn-conv-bw-input"
                     : target == kCudnnConvBackwardFilterCallTarget ? "cudnn-conv-bw-filter"
                                                                    : "cudnn-conv-bias-activation";
  auto call = std::make_unique<HloInstruction>(HloOpcode::kCustomCall,
                                               Shape::Tuple({shape, Shape(PrimitiveType::U8, {0})}), name);
  call->AppendOperand(lhs);
  call->AppendOperand(rhs);
  InstructionAttributes& a = call->mutable_attrs();
  a.custom_call_target = std::string(target);
  a.window = window;
  a.convolution_dimension_numbers = dnums;
  a.feature_group_count = feature_group_count;
  a.precision_config = conv->attrs().precision_config;
  a.metadata = conv->attrs().metadata;
  a.backend_config = CudnnConvBackendConfigToJson(CudnnConvBackendConfig{});
  return b.Add(std::move(call));
}

absl::StatusOr<bool> RewriteConv(HloInstruction* conv, HloComputation* comp, NameUniquer& names) {
  if (conv->operand_count() != 2 || !conv->attrs().convolution_dimension_numbers || !conv->shape().IsArray() ||
      !conv->operand(0)->shape().IsArray() || !conv->operand(1)->shape().IsArray())
    return false;
  if (!TypesOk(conv)) return false;
  if (Dnums(conv).input_spatial_dimensions.size() != Win(conv).dimensions.size()) return false;
  ExpanderBuilder b(comp, &names, conv);
  b.set_metadata(&conv->attrs().metadata);
  HloInstruction* call = nullptr;
  if (auto m = MatchBackwardInput(conv, b)) {
    call = CreateCudnnCall(b, kCudnnConvBackwardInputCallTarget, conv->shape(), conv->operand(0), m->operand, m->window,
                           m->dnums, conv->attrs().feature_group_count, conv);
  } else if (auto m = MatchBackwardFilter(conv)) {
    call = CreateCudnnCall(b, kCudnnConvBackwardFilterCallTarget, conv->shape(), m->operand, conv->operand(1), m->window,
                           m->dnums, conv->attrs().batch_group_count, conv);
  } else if (CanImplementAsForwardConv(conv)) {
    HloInstruction* lhs = conv->operand(0);
    int64_t groups = conv->attrs().feature_group_count;
    if (conv->attrs().batch_group_count > 1) {
      if (conv->attrs().feature_group_count != 1) return false;
      if (BatchGroupedToFeatureGrouped(b, conv, &lhs) == nullptr) lhs = nullptr;
      groups = conv->attrs().batch_group_count;
    }
    call = CreateCudnnCall(b, kCudnnConvForwardCallTarget, conv->shape(), lhs, conv->operand(1), Win(conv), Dnums(conv),
                           groups, conv);
  } else {
    b.Discard();
    return false;
  }
  HloInstruction* gte = call == nullptr ? nullptr : b.GetTupleElement(call, 0);
  if (!b.ok() || gte == nullptr) {
    absl::Status st = b.ok() ? absl::InternalError("conv-rewriter: could not build the cuDNN call") : b.status();
    b.Discard();
    return st;
  }
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> ok = ReplaceInstruction(conv, gte, options);
  if (!ok.ok()) return ok.status();
  if (!*ok) return absl::InternalError(absl::StrCat("conv-rewriter: could not replace ", conv->name()));
  return true;
}

}  // namespace

bool IsDepthwiseConvolution(const HloInstruction& conv) {
  if (conv.opcode() != HloOpcode::kConvolution || conv.operand_count() != 2 ||
      !conv.attrs().convolution_dimension_numbers || conv.attrs().feature_group_count <= 1 ||
      conv.attrs().batch_group_count != 1)
    return false;
  const ConvolutionDimensionNumbers& d = *conv.attrs().convolution_dimension_numbers;
  const Shape& rhs = conv.operand(1)->shape();
  return rhs.IsArray() && d.kernel_input_feature_dimension < rhs.rank() &&
         rhs.dimensions(d.kernel_input_feature_dimension) == 1;
}

absl::StatusOr<bool> ConvRewriter::Run(HloModule& module, PassContext& context) {
  if (!library::TargetsGpu(context)) return false;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> convs;
    for (const auto& i : comp->instructions())
      if (i->opcode() == HloOpcode::kConvolution && (depthwise_to_cudnn_ || !IsDepthwiseConvolution(*i)))
        convs.push_back(i.get());
    for (HloInstruction* conv : convs) {
      absl::StatusOr<bool> r = RewriteConv(conv, comp, names);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
  }
  return changed;
}

}  // namespace hloc
