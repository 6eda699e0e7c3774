#include "passes/library/onednn_convolution_rewriter.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "passes/library/library_util.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Multiply-adds of the convolution: output elements x kernel elements per output feature.
int64_t Flops(const HloInstruction* conv) {
  const Shape& rhs = conv->operand(1)->shape();
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  return 2 * Product(conv->shape().dimensions()) * (Product(rhs.dimensions()) / rhs.dimensions(dn.kernel_output_feature_dimension));
}

bool Eligible(const HloInstruction* conv) {
  if (conv->operand_count() != 2 || !conv->attrs().convolution_dimension_numbers || !conv->attrs().window) return false;
  const Shape& lhs = conv->operand(0)->shape();
  const Shape& rhs = conv->operand(1)->shape();
  const Shape& out = conv->shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return false;
  if (lhs.element_type() != PrimitiveType::F32 || rhs.element_type() != PrimitiveType::F32 ||
      out.element_type() != PrimitiveType::F32)
    return false;
  const ConvolutionDimensionNumbers& dn = *conv->attrs().convolution_dimension_numbers;
  const Window& w = *conv->attrs().window;
  const size_t ns = dn.input_spatial_dimensions.size();
  if (ns < 1 || ns > 3 || w.dimensions.size() != ns || dn.kernel_spatial_dimensions.size() != ns ||
      dn.output_spatial_dimensions.size() != ns)
    return false;
  if (lhs.rank() != static_cast<int64_t>(ns) + 2 || rhs.rank() != lhs.rank() || out.rank() != lhs.rank()) return false;
  if (Product(lhs.dimensions()) == 0 || Product(rhs.dimensions()) == 0 || Product(out.dimensions()) == 0) return false;
  if (conv->attrs().batch_group_count != 1) return false;
  const int64_t groups = conv->attrs().feature_group_count;
  if (groups < 1) return false;
  const int64_t in_features = lhs.dimensions(dn.input_feature_dimension);
  const int64_t out_features = rhs.dimensions(dn.kernel_output_feature_dimension);
  if (in_features % groups != 0 || out_features % groups != 0 ||
      rhs.dimensions(dn.kernel_input_feature_dimension) * groups != in_features ||
      out.dimensions(dn.output_feature_dimension) != out_features)
    return false;
  bool base_dilated = false;
  for (const WindowDimension& d : w.dimensions) base_dilated |= d.base_dilation != 1;
  for (size_t i = 0; i < ns; ++i) {
    const WindowDimension& d = w.dimensions[i];
    if (d.stride < 1 || d.base_dilation < 1 || d.window_dilation < 1 || d.window_reversal) return false;
    if (d.size != rhs.dimensions(dn.kernel_spatial_dimensions[i])) return false;
    if (!base_dilated) {
      if (d.padding_low < 0 || d.padding_high < 0) return false;
      continue;
    }
    // Base (lhs) dilation: a transposed convolution, oneDNN's deconvolution with the window
    // flipped, strides = base dilation and padding (size - 1) * window_dilation - HLO's padding.
    // Window strides must be 1 there, and that padding non-negative.
    const int64_t span = (d.size - 1) * d.window_dilation;
    if (d.stride != 1 || span - d.padding_low < 0 || span - d.padding_high < 0) return false;
  }
  return true;
}

absl::StatusOr<bool> Rewrite(HloInstruction* conv, HloComputation* comp, NameUniquer& names) {
  ExpanderBuilder b(comp, &names, conv);
  b.set_metadata(&conv->attrs().metadata);
  auto call = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, conv->shape(), "onednn-conv");
  call->AppendOperand(conv->operand(0));
  call->AppendOperand(conv->operand(1));
  InstructionAttributes& a = call->mutable_attrs();
  a.custom_call_target = kOneDnnConvolutionTarget;
  a.window = conv->attrs().window;
  a.convolution_dimension_numbers = conv->attrs().convolution_dimension_numbers;
  a.feature_group_count = conv->attrs().feature_group_count;
  a.precision_config = conv->attrs().precision_config;
  a.metadata = conv->attrs().metadata;
  HloInstruction* added = b.Add(std::move(call));
  if (!b.ok() || added == nullptr) {
    absl::Status st = b.ok() ? absl::InternalError("onednn-convolution-rewriter: could not build the call") : b.status();
    b.Discard();
    return st;
  }
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> ok = ReplaceInstruction(conv, added, options);
  if (!ok.ok()) return ok.status();
  if (!*ok) return absl::InternalError(absl::StrCat("onednn-convolution-rewriter: could not replace ", conv->name()));
  return true;
}

}  // namespace

bool OneDnnConvolutionsAvailable() {
#if defined(HLOC_HAVE_ONEDNN) && HLOC_HAVE_ONEDNN
  return true;
#else
  return false;
#endif
}

absl::StatusOr<bool> OneDnnConvolutionRewriter::Run(HloModule& module, PassContext& context) {
  if (!OneDnnConvolutionsAvailable()) return false;
  if (context.profile != nullptr && context.profile->kind != "cpu") return false;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> convs;
    for (const auto& i : comp->instructions())
      if (i->opcode() == HloOpcode::kConvolution && Eligible(i.get()) && Flops(i.get()) >= min_flops_)
        convs.push_back(i.get());
    for (HloInstruction* conv : convs) {
      absl::StatusOr<bool> r = Rewrite(conv, comp, names);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
  }
  return changed;
}

}  // namespace hloc
