// onednn-convolution-rewriter (XLA:CPU's OneDnnConvolutionRewriter,
// xla/service/cpu/onednn_convolution_rewriter.cc; issue 16 part 4): every convolution oneDNN can
// run becomes custom-call(lhs, rhs), custom_call_target="__onednn$convolution", with the
// convolution's window, dim_labels and feature_group_count; the CPU backend emits it as a
// kConvolution thunk that runtime/cpu/onednn_conv.cc runs through a oneDNN primitive made once per
// executable. Eligible (decided here, once, at compile time):
//   - f32 x f32 -> f32 (bf16 convolutions arrive as f32 ones: float-normalization runs first);
//   - 1 to 3 spatial dimensions, any dim_labels (oneDNN reads the operands through strided memory
//     descriptors and reorders them to its own blocked formats);
//   - any feature_group_count (grouped and depthwise convolutions), batch_group_count 1;
//   - window strides, non-negative padding, window (rhs) dilation; no window reversal; no
//     zero-sized operand or result;
//   - base (lhs) dilation, the transposed convolutions of JAX's conv_transpose and of the input
//     gradient of strided convolutions, as oneDNN's deconvolution (window flipped): window strides
//     1 and (size - 1) * rhs_dilation - padding >= 0 on each side.
// Everything else stays a convolution (the elemental kernel). Runs only for CPU targets and only
// when hloc was built with oneDNN (HLOC_HAVE_ONEDNN; not in the static build, see CMakeLists.txt).
#pragma once
#include "engine/pass.h"

namespace hloc {

inline constexpr const char* kOneDnnConvolutionTarget = "__onednn$convolution";

class OneDnnConvolutionRewriter : public HloPass {
 public:
  static constexpr const char* kName = "onednn-convolution-rewriter";
  explicit OneDnnConvolutionRewriter(int64_t min_flops = 0) : min_flops_(min_flops) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t min_flops_;
};

// Whether this build of hloc runs __onednn$convolution (HLOC_HAVE_ONEDNN).
bool OneDnnConvolutionsAvailable();

}  // namespace hloc
