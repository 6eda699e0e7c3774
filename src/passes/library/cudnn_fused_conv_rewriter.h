// cudnn-fused-convolution-rewriter (XLA's CudnnFusedConvRewriter, non-FP8 part): folds what a
// cuDNN forward convolution can apply itself into "__cudnn$convBiasActivationForward":
//   alpha * conv                       -> conv_result_scale = alpha
//   conv + broadcast(bias over features) -> bias operand (a zero bias otherwise)
//   conv + z                           -> side input z (side_input_scale = 1)
//   conv + alpha * z                   -> side_input_scale = alpha
//   max(conv, 0)                       -> activation_mode kRelu
//   clamp(0, conv, 6) (f16)            -> kRelu6, only with use_runtime_fusion (cuDNN's runtime
//                                         fusion engine; XLA's xla_gpu_use_runtime_fusion, off)
// in XLA's order ("inside out": alpha, bias/side input twice, side-input alpha, activation,
// then bias/side input and activation again). Depthwise convolutions are left alone (cuDNN's
// fused kernels are slower for them), as are convolutions with more than one user of their
// result. Not modelled (yet): the s8/f16 convert fusions and the ELU/leaky-ReLU runtime fusions.
// A no-op under a CPU profile.
#pragma once
#include "engine/pass.h"

namespace hloc {

class CudnnFusedConvRewriter : public HloPass {
 public:
  static constexpr const char* kName = "cudnn-fused-convolution-rewriter";
  explicit CudnnFusedConvRewriter(bool use_runtime_fusion) : use_runtime_fusion_(use_runtime_fusion) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool use_runtime_fusion_;
};

}  // namespace hloc
