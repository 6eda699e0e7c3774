// patch-convolution-to-dot: a convolution whose windows do not overlap is a dot. Two forms:
//   - a patch convolution (every window dimension: stride == size, no padding or dilation; a
//     ViT's 16x16/16 patch embedding): input spatial n splits into (n/s outputs, s taps);
//   - its weight gradient (every window dimension: stride 1, window dilation d, size * d == n;
//     the 14x14 gradient dilated by 16): n splits into (size taps, d outputs).
// A reversed window dimension reverses the kernel first (conv-operand-swapper's swapped weight
// gradients of transposed convolutions are the dilated form, reversed: U-Net's).
// The input is reshaped so that each spatial dimension is (outer, inner), the taps and the
// input feature are contracted with the kernel's spatial and input-feature dimensions, and the
// dot's result is transposed to the convolution's dimension order. cuDNN runs such
// convolutions far below a GEMM's speed (3 input channels; 196 positions of 16x16 taps):
// flax_vit_train's two took 840 us on the H200. Pure 1x1 convolutions are left to cuDNN, which
// runs them well.
#pragma once
#include "engine/pass.h"

namespace hloc {

class PatchConvolutionToDot : public HloPass {
 public:
  static constexpr const char* kName = "patch-convolution-to-dot";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
