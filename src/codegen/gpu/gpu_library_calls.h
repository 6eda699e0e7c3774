// Library thunks of the GPU backend: cuBLAS(Lt) GEMMs and cuDNN convolutions.
//
// kGemm (from "__cublas$lt$matmul" / "__cublas$gemm" custom-calls and plain dots cuBLAS can
// take): runtime::GemmConfig in the row-major convention runtime/executable/executable.h
// documents (the runtime turns it into cuBLAS's column-major D^T = B^T A^T); arguments
// {A, B, D} or {A, B, C-or-bias, D}: the bias (BIAS* epilogues, n elements) or C (beta != 0).
// The custom-call's workspace result is not an argument (the runtime owns its workspace).
//
// kConvolution (from "__cudnn$convForward", "$convBackwardInput", "$convBackwardFilter",
// "$convBiasActivationForward"): Thunk::backend_config holds this JSON (one line):
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
// `arguments` names the role of each thunk argument, in order (the custom-call's operands then
// its result): forward ["input","filter","output"]; backward_input ["output","filter","input"]
// (the gradient of the output in, the gradient of the input out); backward_filter
// ["input","output","filter"]; bias_activation_forward ["input","filter","bias","output"] or
// with a side input ["input","filter","bias","side_input","output"]. Written flags mark the last.
#pragma once
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/thunk_emitter.h"

namespace hloc::codegen::gpu {

// The GEMM for a plain dot, when cuBLAS takes its types and layouts; nullopt otherwise.
std::optional<GemmPlan> GpuGemmPlanForDot(const HloInstruction& dot);

// The GEMM of operand shapes and dot dimension numbers (shared by dots and custom-calls).
std::optional<GemmPlan> GpuGemmPlan(const Shape& lhs, const Shape& rhs, const Shape& out, const DotDimensionNumbers& dn);

// kGemm / kConvolution for the library custom-calls; nullopt for other instructions; an error
// for a library call the runtime cannot run (unsupported epilogue, layout or type).
absl::StatusOr<std::optional<runtime::Thunk>> LibraryCallThunk(const HloInstruction& hlo,
                                                               const std::vector<KernelArgument>& arguments);

// cholesky, triangular-solve and the solver custom calls as cuSOLVER / cuBLAS thunks
// (gpu_linalg.cc): the linalg thunk, checked for layouts the libraries take.
absl::StatusOr<std::optional<runtime::Thunk>> GpuLinalgThunk(const HloInstruction& hlo,
                                                             const std::vector<KernelArgument>& arguments);

}  // namespace hloc::codegen::gpu
