// kConvolution thunks on cuDNN 9's convolution API (cudnnConvolutionForward / BackwardData /
// BackwardFilter / BiasActivationForward), loaded at run time (dlopen libcudnn.so.9). XLA:
// xla/stream_executor/cuda/cuda_dnn.cc, xla/service/gpu/runtime/convolution_thunk.cc.
//
// THE CONFIG (Thunk::backend_config, one line of JSON; the GPU compiler writes it in
// src/codegen/gpu/gpu_library_calls.cc, this reader is the other half of that contract):
//   {"kind": "forward" | "backward_input" | "backward_filter" | "bias_activation_forward",
//    "input":  {"type": "f32", "dims": [N, H, W, C], "minor_to_major": [3, 2, 1, 0]},
//    "filter": {...}, "output": {...},      // the FORWARD convolution's three tensors
//    "input_batch_dim": 0, "input_feature_dim": 3, "input_spatial_dims": [1, 2],
//    "kernel_input_feature_dim": 2, "kernel_output_feature_dim": 3, "kernel_spatial_dims": [0, 1],
//    "output_batch_dim": 0, "output_feature_dim": 3, "output_spatial_dims": [1, 2],
//    "window": [{"size": 3, "stride": 1, "pad_low": 1, "pad_high": 1, "lhs_dilation": 1,
//                "rhs_dilation": 1, "reversal": false}, ...],   // one per spatial dim, in order
//    "feature_group_count": 1, "batch_group_count": 1,
//    "conv_result_scale": 1, "side_input_scale": 0, "activation": "kNone", "leakyrelu_alpha": 0,
//    "arguments": ["input", "filter", "output"]}
// `arguments` names the role of each thunk argument in order: forward [input, filter, output];
// backward_input [output, filter, input] (dy in, dx out); backward_filter [input, output,
// filter] (x, dy in, dw out); bias_activation_forward [input, filter, bias, output] or
// [input, filter, bias, side_input, output]. The bias is a vector of the output feature count
// in the output's type; a side input has the output's shape and layout.
//
// What cuDNN's legacy API takes, and so what this runtime runs (anything else is an
// Unimplemented error naming the reason, for the compiler to avoid): 1 to 3 spatial dims; f32,
// f16, bf16, f64 with all three tensors of one type; the filter stored with its dims in the
// physical order [out-feature, in-feature, spatial...] (cuDNN's NCHW) or [out-feature,
// spatial..., in-feature] (NHWC), input/output any layout (strides); lhs_dilation 1 (the
// compiler makes input-dilated convolutions backward_input ones); reversal all false or all
// true; padding whose low side alone gives the output size (symmetric in cuDNN's terms: a larger
// pad_high that changes no output is fine); batch_group_count 1; activations kNone, kRelu,
// kRelu6, kElu, kTanh and kSigmoid for bias_activation_forward.
//
// Two paths run these convolutions. forward, backward_input and backward_filter go through
// cuDNN's graph (backend) API first (cudnn_graph.h: the engines and knobs XLA autotunes over,
// e.g. the sm90 kernels the legacy Find never offers; chosen by timing, cached in the autotune
// cache under "cudnn-graph-VERSION" with the engine/knob text); any graph-API failure (no plan,
// no plan that runs, a buffer not 16-byte aligned) falls back to the legacy API below, and
// --verbose's "algorithm by legacy ... (graph API: why)" says so. bias_activation_forward builds
// conv + side input + bias + activation graphs (cudnn_graph.h) with the same fallback.
// HLOC_CUDNN_GRAPH=0 in the environment turns the graph path off (for comparisons); HLOC_CUDNN_GRAPH_1D=0
// only for 1-D convolutions, HLOC_CUDNN_FUSED_GRAPH=0 only for fused ones.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

struct ConvTensorSpec {
  std::string type;
  std::vector<int64_t> dims, minor_to_major;
};
struct ConvWindowDim {
  int64_t size = 1, stride = 1, pad_low = 0, pad_high = 0, lhs_dilation = 1, rhs_dilation = 1;
  bool reversal = false;
};
struct ConvSpec {
  std::string kind;
  ConvTensorSpec input, filter, output;
  int64_t input_batch_dim = 0, input_feature_dim = 0, kernel_input_feature_dim = 0, kernel_output_feature_dim = 0,
          output_batch_dim = 0, output_feature_dim = 0;
  std::vector<int64_t> input_spatial_dims, kernel_spatial_dims, output_spatial_dims;
  std::vector<ConvWindowDim> window;
  int64_t feature_group_count = 1, batch_group_count = 1;
  double conv_result_scale = 1, side_input_scale = 0, leakyrelu_alpha = 0;
  std::string activation = "kNone";
  std::vector<std::string> arguments;  // roles, in thunk argument order
};

// Parses and checks the config (dims in range, one window entry per spatial dim, roles that
// fit the kind); errors say which key is wrong. Needs no GPU.
absl::StatusOr<ConvSpec> ParseConvSpec(const std::string& backend_config);

// Why cuDNN cannot be loaded, or OK.
absl::Status CudnnAvailable();

struct ConvOptions {
  bool allow_tf32 = true;
  bool autotune = true;
  std::string profile;
  AutotuneCache* cache = nullptr;
};

#if HLOC_HAVE_CUDA

struct ConvPlanState;

class CudnnConvolution {
 public:
  // `argument_bytes`: the thunk's slice sizes (checked against the tensors).
  static absl::StatusOr<std::unique_ptr<CudnnConvolution>> Create(const CudaContext& context, const ConvSpec& spec,
                                                                 const std::vector<int64_t>& argument_bytes,
                                                                 const ConvOptions& options, const std::string& name);
  ~CudnnConvolution();
  // The workspace the heuristic's preferred algorithms need (the executable's shared workspace
  // is sized to the largest of these and cuBLASLt's).
  int64_t workspace_bytes() const;
  // Chooses the algorithm (may run the convolution on the given buffers while timing).
  absl::Status Prepare(CUstream stream, const std::vector<CUdeviceptr>& arguments, CUdeviceptr workspace,
                       int64_t workspace_bytes);
  absl::Status Run(CUstream stream, const std::vector<CUdeviceptr>& arguments, CUdeviceptr workspace,
                   int64_t workspace_bytes) const;
  const std::string& description() const;
  const std::string& chosen_by() const;

 private:
  CudnnConvolution() = default;
  std::unique_ptr<ConvPlanState> state_;
};

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
