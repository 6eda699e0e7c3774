// gpu-conv-padding-legalization (XLA's ConvPaddingLegalization,
// xla/service/gpu/transforms/conv_padding_legalization.cc). cuDNN takes one padding value per
// spatial dimension, applied on both sides, never negative, and no base dilation; XLA's windows
// may say more. This pass moves what cuDNN cannot express out of the cuDNN custom-calls:
//  - forward (and bias-activation forward) convolutions: asymmetric padding and base dilation
//    become an explicit `pad` of the input (interior padding for the dilation), negative
//    padding a `slice` of it, and window dilation an interior `pad` of the filter;
//  - backward-filter convolutions: the input is padded by the difference, leaving
//    min(low, high) on both sides;
//  - backward-input convolutions: the smaller padding is kept on both sides, which makes the
//    call produce a larger gradient; a `slice` cuts it back to the original.
// Negative padding of backward convolutions is left alone (as XLA does). pipelines/gpu.yaml runs
// it in conv_canonicalization, before layout assignment, as XLA does; new pads and slices keep
// their operand's layout, so it also stays correct when run after layout assignment.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ConvPaddingLegalization : public HloPass {
 public:
  static constexpr const char* kName = "gpu-conv-padding-legalization";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
