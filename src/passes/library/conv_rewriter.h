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

class ConvRewriter : public HloPass {
 public:
  static constexpr const char* kName = "conv-rewriter";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
