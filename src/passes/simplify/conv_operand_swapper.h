// conv-operand-swapper (XLA's ConvOperandSwapper, once part of AlgebraicSimplifier): a
// convolution whose "kernel" is larger than its input along the spatial dimensions (the
// weight gradient of a transposed convolution: the input base-dilated, the 128x128 gradient as
// the window) is computed with the operands' roles swapped: the input becomes a reversed,
// dilated window over the kernel. The base dilation (zeros the convolution would multiply)
// becomes a window dilation cuDNN takes natively; XLA does the same swap.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ConvOperandSwapper : public HloPass {
 public:
  static constexpr const char* kName = "conv-operand-swapper";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

void RegisterConvOperandSwapperPass(PassRegistry& registry);

}  // namespace hloc
