#include "passes/simplify/conv_operand_swapper.h"

#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

struct Swap {
  Window window;
  ConvolutionDimensionNumbers dnums;
  std::vector<int64_t> reverse;  // kernel dimensions to reverse first
};

// The swapped window, or nullopt when the swap does not shrink the window's element count.
std::optional<Swap> PlanSwap(const HloInstruction& conv) {
  const ConvolutionDimensionNumbers& d = *conv.attrs().convolution_dimension_numbers;
  const Window& w = *conv.attrs().window;
  const Shape& in = conv.operand(0)->shape();
  Swap s;
  int64_t kernel_product = 1, swapped_product = 1;
  for (size_t i = 0; i < d.input_spatial_dimensions.size(); ++i) {
    const WindowDimension& wd = w.dimensions[i];
    const int64_t k = wd.size, n = in.dimensions(d.input_spatial_dimensions[i]);
    const bool plain = !wd.window_reversal && wd.padding_low == 0 && wd.padding_high == 0 && wd.window_dilation == 1;
    // Dimensions that are a grouping (base dilation k, stride k-1) or a full contraction stay.
    if (plain && ((wd.base_dilation == k && wd.stride == k - 1) || (k == n && wd.base_dilation == 1 && wd.stride == 1))) {
      s.window.dimensions.push_back(wd);
      continue;
    }
    const int64_t dilated_k = 1 + (k - 1) * wd.window_dilation;
    const int64_t dilated_n = 1 + (n - 1) * wd.base_dilation;
    kernel_product *= k;
    const bool broadcast_like = n == 1 && wd.stride == 1 && wd.window_dilation == 1 && wd.padding_low == k - 1 &&
                                wd.padding_high == k - 1;
    swapped_product *= broadcast_like ? k : n;
    WindowDimension nd;
    nd.size = n;
    if (!wd.window_reversal) s.reverse.push_back(d.kernel_spatial_dimensions[i]);
    nd.window_reversal = true;
    nd.base_dilation = wd.window_dilation;
    nd.window_dilation = wd.base_dilation;
    nd.stride = wd.stride;
    nd.padding_low = dilated_n + wd.padding_low - dilated_k;
    nd.padding_high = dilated_n + wd.padding_high - dilated_k;
    s.window.dimensions.push_back(nd);
  }
  if (kernel_product <= swapped_product) return std::nullopt;
  ConvolutionDimensionNumbers& n = s.dnums;
  n.output_spatial_dimensions = d.output_spatial_dimensions;
  n.output_batch_dimension = d.output_feature_dimension;
  n.output_feature_dimension = d.output_batch_dimension;
  n.input_spatial_dimensions = d.kernel_spatial_dimensions;
  n.input_batch_dimension = d.kernel_output_feature_dimension;
  n.input_feature_dimension = d.kernel_input_feature_dimension;
  n.kernel_spatial_dimensions = d.input_spatial_dimensions;
  n.kernel_output_feature_dimension = d.input_batch_dimension;
  n.kernel_input_feature_dimension = d.input_feature_dimension;
  return s;
}

absl::StatusOr<bool> SwapIfBeneficial(HloInstruction* conv, NameUniquer& names) {
  if (conv->attrs().feature_group_count != 1 || conv->attrs().batch_group_count != 1) return false;
  if (!conv->attrs().convolution_dimension_numbers || !conv->attrs().window || conv->operand_count() != 2) return false;
  if (conv->attrs().window->dimensions.size() != conv->attrs().convolution_dimension_numbers->input_spatial_dimensions.size())
    return false;
  std::optional<Swap> s = PlanSwap(*conv);
  if (!s) return false;
  expanders::ExpanderBuilder b(conv->parent(), &names, conv);
  b.set_metadata(&conv->attrs().metadata);
  HloInstruction* kernel = conv->operand(1);
  if (!s->reverse.empty()) kernel = b.Reverse(kernel, s->reverse);
  if (kernel == nullptr) return b.status();
  auto swapped = std::make_unique<HloInstruction>(HloOpcode::kConvolution, conv->shape(), "convolution");
  swapped->AppendOperand(kernel);
  swapped->AppendOperand(conv->operand(0));
  InstructionAttributes& a = swapped->mutable_attrs();
  a.window = s->window;
  a.convolution_dimension_numbers = s->dnums;
  const std::vector<Precision>& p = conv->attrs().precision_config.operand_precision;
  if (p.size() == 2) a.precision_config.operand_precision = {p[1], p[0]};
  a.precision_config.algorithm = conv->attrs().precision_config.algorithm;
  HloInstruction* added = b.Add(std::move(swapped));
  if (added == nullptr) {
    b.Discard();
    return false;  // shape inference disagrees: leave the convolution as it is
  }
  ReplaceOptions options;
  options.relay_control_dependency = true;
  return ReplaceInstruction(conv, added, options);
}

}  // namespace

absl::StatusOr<bool> ConvOperandSwapper::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kConvolution) continue;
      absl::StatusOr<bool> r = SwapIfBeneficial(inst, names);
      if (!r.ok()) return r.status();
      changed |= *r;
    }
  }
  return changed;
}

void RegisterConvOperandSwapperPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      ConvOperandSwapper::kName,
      "convolutions whose window is larger than their input: swap input and kernel (reversed, dilated)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<ConvOperandSwapper>(); }});
}

}  // namespace hloc
