#include "passes/library/conv_padding_legalization.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/library_calls.h"
#include "passes/library/library_util.h"
#include "passes/passes.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;
using library::DimVec;

enum class ConvKind { kForward, kBackwardInput, kBackwardFilter, kNone };

ConvKind KindOf(const HloInstruction* inst) {
  if (inst->opcode() != HloOpcode::kCustomCall || !inst->attrs().window ||
      !inst->attrs().convolution_dimension_numbers || !inst->shape().IsTuple() ||
      inst->shape().tuple_shapes().empty() || inst->operand_count() < 2)
    return ConvKind::kNone;
  const std::string& t = inst->attrs().custom_call_target;
  if (t == kCudnnConvForwardCallTarget || t == kCudnnConvBiasActivationForwardCallTarget) return ConvKind::kForward;
  if (t == kCudnnConvBackwardInputCallTarget) return ConvKind::kBackwardInput;
  if (t == kCudnnConvBackwardFilterCallTarget) return ConvKind::kBackwardFilter;
  return ConvKind::kNone;
}

bool HasSymmetricPadding(const Window& w) {
  return std::all_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.padding_low == d.padding_high; });
}
bool HasNegativePadding(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(),
                     [](const WindowDimension& d) { return d.padding_low < 0 || d.padding_high < 0; });
}
bool HasBaseDilation(const Window& w) {
  return std::any_of(w.dimensions.begin(), w.dimensions.end(), [](const WindowDimension& d) { return d.base_dilation != 1; });
}

// pipelines/gpu.yaml runs the pass before layout assignment (XLA's conv_canonicalization), where
// layouts are only what the text wrote; run after layout assignment, a new pad or slice keeps
// its operand's layout, so the cuDNN call still sees the layout layout-assignment chose for it.
void KeepLayout(HloInstruction* inst, const Shape& like) {
  if (inst != nullptr && like.has_layout()) inst->mutable_shape().set_layout(like.layout());
}

HloInstruction* Pad(ExpanderBuilder& b, HloInstruction* x, const PaddingConfig& config) {
  if (x == nullptr || !b.ok()) return nullptr;
  HloInstruction* zero = b.ScalarConstant(x->shape().element_type(), 0);
  if (zero == nullptr) return nullptr;
  Shape shape = x->shape();
  for (size_t d = 0; d < config.dimensions.size(); ++d) {
    const PaddingDimension& p = config.dimensions[d];
    const int64_t n = shape.dimensions()[d];
    shape.mutable_dimensions()[d] = n + p.edge_padding_low + p.edge_padding_high + std::max<int64_t>(n - 1, 0) * p.interior_padding;
  }
  auto pad = std::make_unique<HloInstruction>(HloOpcode::kPad, shape, "pad");
  pad->AppendOperand(x);
  pad->AppendOperand(zero);
  pad->mutable_attrs().padding_config = config;
  return b.Add(std::move(pad));
}

HloInstruction* SliceKeepingLayout(ExpanderBuilder& b, HloInstruction* x, const DimVec& starts, const DimVec& limits) {
  if (x == nullptr) return nullptr;
  const Shape like = x->shape();
  HloInstruction* s = b.Slice(x, starts, limits);
  KeepLayout(s, like);
  return s;
}

PaddingConfig NoPadding(int64_t rank) {
  PaddingConfig c;
  c.dimensions.resize(static_cast<size_t>(rank));
  return c;
}

// Adds `replacement` in place of `call` (same shape) and removes the old call.
absl::StatusOr<bool> Replace(HloInstruction* call, HloInstruction* replacement) {
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> ok = ReplaceInstruction(call, replacement, options);
  if (!ok.ok()) return ok.status();
  if (!*ok) return absl::InternalError(absl::StrCat("gpu-conv-padding-legalization: could not replace ", call->name()));
  return true;
}

HloInstruction* CloneCall(ExpanderBuilder& b, const HloInstruction* call, const Shape& shape,
                          std::vector<HloInstruction*> operands, const Window& window) {
  for (HloInstruction* x : operands)
    if (x == nullptr) return nullptr;
  std::unique_ptr<HloInstruction> clone = CloneInstruction(*call, operands);
  clone->mutable_shape() = shape;
  clone->mutable_attrs().window = window;
  return b.Add(std::move(clone));
}

// XLA's CanonicalizeForwardConvolution.
absl::StatusOr<bool> LegalizeForward(HloInstruction* conv, ExpanderBuilder& b) {
  const Window& old = *conv->attrs().window;
  // Window (filter) dilation stays in the call: cuDNN takes dilations natively, and XLA (as JAX
  // 0.11.2 dumps it) keeps `rhs_dilate` on __cudnn$convForward. Made explicit as interior padding
  // of the filter, a weight gradient written as a forward convolution (ViT's patch embedding:
  // a 14x14 window dilated by 16) became a 209x209 filter of zeros, 220x the work.
  if (HasSymmetricPadding(old) && !HasNegativePadding(old) && !HasBaseDilation(old)) return false;
  const ConvolutionDimensionNumbers& d = *conv->attrs().convolution_dimension_numbers;
  Window window = old;
  HloInstruction* input = conv->operand(0);
  const int64_t spatial = static_cast<int64_t>(window.dimensions.size());
  // Positive (and, for base dilation, interior) padding goes into an explicit pad.
  if (!HasSymmetricPadding(window) || HasBaseDilation(window)) {
    PaddingConfig config = NoPadding(input->shape().rank());
    for (int64_t i = 0; i < spatial; ++i) {
      WindowDimension& w = window.dimensions[i];
      PaddingDimension& p = config.dimensions[d.input_spatial_dimensions[i]];
      if (w.padding_low > 0) p.edge_padding_low = w.padding_low, w.padding_low = 0;
      if (w.padding_high > 0) p.edge_padding_high = w.padding_high, w.padding_high = 0;
      if (w.base_dilation != 1) p.interior_padding = w.base_dilation - 1, w.base_dilation = 1;
    }
    const Shape like = input->shape();
    input = Pad(b, input, config);
    KeepLayout(input, like);
  }
  // Negative padding becomes a slice of the (padded) input.
  if (input != nullptr && HasNegativePadding(window)) {
    DimVec starts(input->shape().rank(), 0), limits = input->shape().dimensions();
    for (int64_t i = 0; i < spatial; ++i) {
      WindowDimension& w = window.dimensions[i];
      const int64_t dim = d.input_spatial_dimensions[i];
      if (w.padding_low < 0) starts[dim] += -w.padding_low, w.padding_low = 0;
      if (w.padding_high < 0) limits[dim] -= -w.padding_high, w.padding_high = 0;
    }
    input = SliceKeepingLayout(b, input, starts, limits);
  }
  HloInstruction* kernel = conv->operand(1);
  std::vector<HloInstruction*> operands(conv->operands().begin(), conv->operands().end());
  operands[0] = input;
  operands[1] = kernel;
  HloInstruction* call = CloneCall(b, conv, conv->shape(), operands, window);
  if (!b.ok() || call == nullptr) return b.ok() ? absl::InternalError("gpu-conv-padding-legalization: no call") : b.status();
  return Replace(conv, call);
}

// XLA's CanonicalizeBackwardFilterConvolution: pad the activations by the difference.
absl::StatusOr<bool> LegalizeBackwardFilter(HloInstruction* conv, ExpanderBuilder& b) {
  const Window& old = *conv->attrs().window;
  if (HasSymmetricPadding(old)) return false;
  // Negative padding is not moved (XLA's b/32744257); cuDNN will refuse it at run time.
  if (HasNegativePadding(old)) return false;
  const ConvolutionDimensionNumbers& d = *conv->attrs().convolution_dimension_numbers;
  HloInstruction* input = conv->operand(0);
  Window window = old;
  PaddingConfig config = NoPadding(input->shape().rank());
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    WindowDimension& w = window.dimensions[i];
    const int64_t keep = std::min(w.padding_low, w.padding_high);
    PaddingDimension& p = config.dimensions[d.input_spatial_dimensions[i]];
    p.edge_padding_low = w.padding_low - keep;
    p.edge_padding_high = w.padding_high - keep;
    w.padding_low = w.padding_high = keep;
  }
  const Shape like = input->shape();
  HloInstruction* padded = Pad(b, input, config);
  KeepLayout(padded, like);
  std::vector<HloInstruction*> operands(conv->operands().begin(), conv->operands().end());
  operands[0] = padded;
  HloInstruction* call = CloneCall(b, conv, conv->shape(), operands, window);
  if (!b.ok() || call == nullptr) return b.ok() ? absl::InternalError("gpu-conv-padding-legalization: no call") : b.status();
  return Replace(conv, call);
}

// XLA's CanonicalizeBackwardInputConvolution: keep the smaller padding on both sides, so the
// call computes a larger input gradient, and slice the surplus off the side that had more.
absl::StatusOr<bool> LegalizeBackwardInput(HloInstruction* conv, ExpanderBuilder& b) {
  const Window& old = *conv->attrs().window;
  if (HasSymmetricPadding(old)) return false;
  if (HasNegativePadding(old)) return false;  // as XLA (b/32744257)
  const ConvolutionDimensionNumbers& d = *conv->attrs().convolution_dimension_numbers;
  const Shape result = conv->shape().tuple_shapes(0);
  Shape bigger = result;
  Window window = old;
  DimVec starts(result.rank(), 0), limits = result.dimensions();
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    WindowDimension& w = window.dimensions[i];
    const int64_t lo = w.padding_low, hi = w.padding_high;
    // The call's input spatial dimensions are the gradient's (the roles are swapped for cuDNN).
    const int64_t dim = d.input_spatial_dimensions[i];
    bigger.mutable_dimensions()[dim] += std::abs(lo - hi);
    if (lo > hi) starts[dim] += lo - hi;
    w.padding_low = w.padding_high = std::min(lo, hi);
  }
  limits = bigger.dimensions();
  for (size_t i = 0; i < window.dimensions.size(); ++i) {
    const int64_t lo = old.dimensions[i].padding_low, hi = old.dimensions[i].padding_high;
    if (hi > lo) limits[d.input_spatial_dimensions[i]] -= hi - lo;
  }
  Shape tuple = conv->shape();
  tuple.mutable_tuple_shapes()[0] = bigger;
  std::vector<HloInstruction*> operands(conv->operands().begin(), conv->operands().end());
  HloInstruction* call = CloneCall(b, conv, tuple, operands, window);
  HloInstruction* grad = call == nullptr ? nullptr : b.GetTupleElement(call, 0);
  HloInstruction* sliced = SliceKeepingLayout(b, grad, starts, limits);
  HloInstruction* scratch = call == nullptr ? nullptr : b.GetTupleElement(call, 1);
  std::vector<HloInstruction*> parts = {sliced};
  for (int64_t i = 1; i < static_cast<int64_t>(conv->shape().tuple_shapes().size()); ++i)
    parts.push_back(i == 1 ? scratch : (call == nullptr ? nullptr : b.GetTupleElement(call, i)));
  HloInstruction* replacement = b.ok() && sliced != nullptr ? b.Tuple(parts) : nullptr;
  if (!b.ok() || replacement == nullptr)
    return b.ok() ? absl::InternalError("gpu-conv-padding-legalization: no call") : b.status();
  absl::StatusOr<bool> ok = Replace(conv, replacement);
  if (!ok.ok()) return ok;
  // The call's users were get-tuple-elements: point them straight at the parts, so no
  // get-tuple-element(tuple(...)) is left for code generation.
  std::vector<HloInstruction*> users(replacement->users().begin(), replacement->users().end());
  std::sort(users.begin(), users.end());
  users.erase(std::unique(users.begin(), users.end()), users.end());
  for (HloInstruction* u : users) {
    if (u->opcode() != HloOpcode::kGetTupleElement || !u->control_predecessors().empty() ||
        !u->control_successors().empty())
      continue;
    HloInstruction* part = replacement->operand(u->attrs().tuple_index);
    if (!u->shape().EqualIgnoringLayout(part->shape())) continue;
    absl::StatusOr<bool> r = ReplaceInstruction(u, part, ReplaceOptions{.remove_unused_operands = false});
    if (!r.ok()) return r.status();
  }
  if (replacement->user_count() == 0 && !replacement->IsRoot()) {
    if (absl::Status s = RemoveInstructionAndUnusedOperands(replacement); !s.ok()) return s;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> ConvPaddingLegalization::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> convs;
    for (const auto& i : comp->instructions())
      if (KindOf(i.get()) != ConvKind::kNone) convs.push_back(i.get());
    for (HloInstruction* conv : convs) {
      if (conv->attrs().window->dimensions.size() != conv->attrs().convolution_dimension_numbers->input_spatial_dimensions.size())
        continue;
      ExpanderBuilder b(comp, &names, conv);
      b.set_metadata(&conv->attrs().metadata);
      absl::StatusOr<bool> r = false;
      switch (KindOf(conv)) {
        case ConvKind::kForward: r = LegalizeForward(conv, b); break;
        case ConvKind::kBackwardInput: r = LegalizeBackwardInput(conv, b); break;
        case ConvKind::kBackwardFilter: r = LegalizeBackwardFilter(conv, b); break;
        case ConvKind::kNone: break;
      }
      if (!r.ok()) {
        b.Discard();
        return r.status();
      }
      changed |= *r;
    }
  }
  return changed;
}

void RegisterConvPaddingLegalizationPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      ConvPaddingLegalization::kName,
      "move padding and dilation cuDNN cannot express out of cuDNN convolution calls into pad/slice ops",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<ConvPaddingLegalization>(); }});
}

}  // namespace hloc
