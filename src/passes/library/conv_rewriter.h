// conv-rewriter (XLA's ConvRewriter, xla/service/gpu/transforms/conv_rewriter.cc): every
// convolution cuDNN can run becomes a custom-call returning (result, u8[0] scratch):
//  - "__cudnn$convBackwardInput" when it is the gradient of a forward convolution with respect
//    to its input (a reversed filter, or a base-dilated 1x1/constant filter; stride 1),
//  - "__cudnn$convBackwardFilter" when it is the gradient with respect to the filter (batch and
//    feature roles swapped, kernel larger than the output, or window dilation; stride 1),
//  - "__cudnn$convForward" otherwise (batch_group_count > 1 first turned into feature groups),
// with the forward convolution's window and dim_labels, as XLA's heuristics decide, and
// XLA's default CudnnConvBackendConfig (conv_result_scale 1, activation kNone). Convolutions
// cuDNN cannot run (more than 3 spatial dims, zero elements, partial window reversal, types
// other than floating point and integers) stay convolutions. A no-op under a CPU profile.
#pragma once
#include "engine/pass.h"

namespace hloc {

// Option depthwise_to_cudnn (default true, XLA's choice): false leaves depthwise convolutions
// (feature_group_count > 1 with one input feature per group, batch_group_count 1: the forward
// pass and its input gradient) as HLO convolutions, which the fusion passes make loop kernels
// (the elemental convolution, one thread per output element, feature dimension minor), fused
// with their producers and consumers. Their filter gradients (batch_group_count > 1) still go
// to cuDNN: as a loop each output element would sum a whole batch.
class ConvRewriter : public HloPass {
 public:
  static constexpr const char* kName = "conv-rewriter";
  explicit ConvRewriter(bool depthwise_to_cudnn = true) : depthwise_to_cudnn_(depthwise_to_cudnn) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool depthwise_to_cudnn_;
};

// A convolution whose every feature group holds one input feature (depthwise), batch groups 1.
bool IsDepthwiseConvolution(const HloInstruction& conv);

}  // namespace hloc
