// Convolutions on cuDNN's graph (backend) API: the path XLA takes for every convolution on
// cuDNN 9 (xla/stream_executor/cuda/cuda_dnn.cc: GetCudnnOperationGraph, the engine-config
// runners and their autotuning). cuDNN's legacy API (cudnn_conv.cc) offers only a few fixed
// algorithms per problem; the graph API offers the engines and knob settings its heuristics
// rank, which on Hopper include the sm90 kernels the legacy Find never returns.
//
// One CudnnGraphConv is one graph (a forward, backward-data or backward-filter convolution,
// alpha * conv, beta 0; or a forward one followed by the side-input add, the bias add and the
// activation) with the execution plans that finalized:
// heuristic modes A then FALLBACK, engines whose numerical notes the options forbid left out,
// runtime-compiled engines left out (their NVRTC compile costs seconds per plan; the
// precompiled ones cover the common convolutions). The caller (cudnn_conv.cc) picks a plan by
// timing them (Autotune) or from the autotune cache (by PlanInfo::text), then Executes it.
// Internal to runtime/gpu; the caller holds the cuDNN handle's mutex around every call that
// takes the handle and has set the handle's stream.
#pragma once
#if HLOC_HAVE_CUDA
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

struct GraphConvTensor {
  std::vector<int64_t> dims, strides;  // cuDNN order: N (or K), C, spatial...
};

struct GraphConvProblem {
  // "forward" | "backward_input" | "backward_filter" | "bias_activation_forward" (XLA's
  // __cudnn$convBiasActivationForward: y = act(alpha * conv(x, w) + side_scale * z + bias),
  // one graph of the convolution and pointwise operations on virtual tensors)
  std::string kind;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  GraphConvTensor x, w, y;  // the forward convolution's input, filter, output
  std::vector<int64_t> pre_padding, post_padding, stride, dilation;  // one per spatial dim
  bool reversed = false;    // CUDNN_CONVOLUTION (a reversed window) instead of cross-correlation
  bool allow_tf32 = true;   // f32 only: false drops engines noted TENSOR_CORE
  double alpha = 1;
  int64_t alignment = 16;   // the byte alignment the tensors are declared with
  // bias_activation_forward only:
  GraphConvTensor bias;     // [1, C, 1, ...]
  bool has_side = false;    // a side input z (the shape of y)
  double side_scale = 0;
  std::string activation = "kNone";  // XLA's names: kNone, kRelu (others: Unimplemented)
};

// The device pointers of one call: x, w, y the forward convolution's tensors (for
// backward_filter w is written, for backward_input x); bias and side for
// bias_activation_forward (side 0 without a side input).
struct GraphConvArgs {
  CUdeviceptr x = 0, w = 0, y = 0, bias = 0, side = 0;
};

struct GraphPlanInfo {
  std::string text;          // "eng67{k2=1,k13=0,...}": engine global index and knob choices
  int64_t workspace = 0;
  bool tensor_core = false;  // noted TENSOR_CORE: f32 data computed in TF32
};

class CudnnGraphConv {
 public:
  // Builds the graph and every plan that finalizes; an error (Unimplemented when cuDNN offers
  // no usable plan) says why, for the caller's fallback note. `workspace_cap` drops hungrier
  // plans.
  static absl::StatusOr<std::unique_ptr<CudnnGraphConv>> Create(cudnnHandle_t handle, const GraphConvProblem& problem,
                                                               int64_t workspace_cap);
  ~CudnnGraphConv();

  const std::vector<GraphPlanInfo>& plans() const { return infos_; }
  // How the plans were found ("9 plans from 14 engine configs; 2 dropped by numerical notes").
  const std::string& summary() const { return summary_; }

  // Runs plan `plan` on the handle's stream.
  absl::Status Execute(cudnnHandle_t handle, size_t plan, const GraphConvArgs& args, CUdeviceptr workspace,
                       int64_t workspace_bytes);

  struct Timing {
    int64_t best = -1;        // plan index, -1 when none ran
    double best_us = -1;
    int tried = 0, failed = 0;
    std::string table;        // "eng67{..}=98.1us eng12{..}=140.3us ..." for --verbose
  };
  // Times each plan whose workspace fits: one warm-up call, then the mean of a few (more for
  // short ones), with CUDA events on `stream` (the handle's stream).
  absl::StatusOr<Timing> Autotune(const CudaDriver& driver, cudnnHandle_t handle, CUstream stream,
                                  const GraphConvArgs& args, CUdeviceptr workspace, int64_t workspace_bytes);

 private:
  CudnnGraphConv() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<GraphPlanInfo> infos_;
  std::string summary_;
};

}  // namespace hloc::runtime::gpu
#endif  // HLOC_HAVE_CUDA
