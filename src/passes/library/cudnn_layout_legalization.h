// cudnn-layout-legalization: gives every cuDNN convolution custom-call
// (__cudnn$conv{Forward,BackwardInput,BackwardFilter,BiasActivationForward}) operand and result
// layouts cuDNN accepts. XLA constrains these in GpuLayoutAssignment
// (AddBackendConstraintsToDnnConvCustomCall), and so does hloc: pipelines/gpu.yaml runs
// conv-rewriter before layout assignment and rules/layout/GpuLayoutAssignment.td's GpuCudnnConv*
// rows lay the calls out, so on the corpus this pass finds nothing to do. It stays as the safety
// net for pipelines that make the calls after layout assignment (a plain convolution's layouts,
// chosen for an HLO convolution, then reach the call unchanged: a backward-filter call's result
// filter may come out as e.g. [in, spatial, out], which no cuDNN filter descriptor describes).
//
// Accepted (major to minor, size-1 dimensions ignored, as runtime/gpu/cudnn_conv.cc checks):
//  - filter: [out, in, spatial...] (NCHW) or [out, spatial..., in] (NHWC);
//  - input/output activations: [batch, feature, spatial...] or [batch, spatial..., feature].
// A tensor outside these gets the format of the call's other tensors (NHWC when the call's
// input or output already is NHWC, else NCHW): an operand through a `copy` to that layout, a
// result by changing the call's result layout and copying back to the old layout after its
// get-tuple-element. layout_normalization later turns these copies into transposes + bitcasts.
#pragma once
#include "engine/pass.h"

namespace hloc {

class CudnnLayoutLegalization : public HloPass {
 public:
  static constexpr const char* kName = "cudnn-layout-legalization";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
