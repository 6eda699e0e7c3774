//===- rules/layout/GpuLayoutAssignment.td - XLA:GPU's layout constraints -------------===//
//
// GpuLayoutAssignment (xla/service/gpu/transforms/layout_assignment.cc): what cuBLAS and
// cuDNN want from their operands. Rows apply under a GPU profile (Requires = [IsGpu]); the
// convolution rows choose NHWC where tensor cores run it and NCHW otherwise, as XLA's
// HeuristicLayoutAssignment does. conv-rewriter runs before layout assignment (the
// conv_canonicalization group of pipelines/gpu.yaml), so the rows that matter for convolutions
// are the cuDNN custom-call rows at the end; the plain Convolution rows lay out convolutions
// cuDNN cannot run.
//===----------------------------------------------------------------------===//

include "layout/LayoutKinds.td"

let Requires = [IsGpu] in {
// cuBLAS reads row- or column-major matrices: the batch dimensions of a dot operand most major
// (the two matrix dimensions in either order; otherwise the default layout).
def GpuDotLhsBatchMajor : LayoutConstraint<Dot, 0, BatchMajor>;
// ... and the same for the rhs.
def GpuDotRhsBatchMajor : LayoutConstraint<Dot, 1, BatchMajor>;
// The GEMM writes its result row-major.
def GpuDotResultDefault : LayoutConstraint<Dot, Result.Index, DefaultLayout>;
let Priority = 1 in {
// cuBLAS's int8 GEMM (IMMA) only takes the "TN" form: both operands with the contracting
// dimension most minor. This row: the lhs (int8 dots only; others fall through).
def GpuDotS8LhsContractingMinor : LayoutConstraint<Dot, 0, Int8ContractingMinor>;
// ... and the rhs too (int8 only; other dots fall through to GpuDotRhsBatchMajor).
def GpuDotS8RhsContractingMinor : LayoutConstraint<Dot, 1, Int8ContractingMinor>;
}
// Without tensor cores cuDNN's fastest convolutions are NCHW (filter OIHW).
def GpuConvInputNchw : LayoutConstraint<Convolution, 0, ChannelsFirst>;
// The filter OIHW: output feature, input feature, then the spatial dimensions.
def GpuConvFilterOihw : LayoutConstraint<Convolution, 1, ChannelsFirst>;
// The result NCHW.
def GpuConvOutputNchw : LayoutConstraint<Convolution, Result.Index, ChannelsFirst>;
}

// Tensor cores want NHWC: the feature dimension most minor (filter OHWI).
let Requires = [IsGpu, HasTensorCores], Priority = 1 in {
// The input NHWC: batch major, feature minor.
def GpuConvInputNhwc : LayoutConstraint<Convolution, 0, ChannelsLast>;
// The filter OHWI: output feature major, input feature minor.
def GpuConvFilterOhwi : LayoutConstraint<Convolution, 1, ChannelsLast>;
// The result NHWC.
def GpuConvOutputNhwc : LayoutConstraint<Convolution, Result.Index, ChannelsLast>;
}

// ---- cuDNN convolution custom-calls (XLA's AddBackendConstraintsToDnnConvCustomCall) ------------
// The calls conv-rewriter makes: __cudnn$convForward / convBiasActivationForward (input, filter
// [, bias[, side input]]) -> (output, scratch), convBackwardInput (output gradient, filter) ->
// (input gradient, scratch), convBackwardFilter (input, output gradient) -> (filter gradient,
// scratch). Each kind lays out every slot by the tensor it holds (a side input like the output;
// the rank-1 bias is left alone), and decides from the call as a whole (operand 0's type, the
// number of spatial dimensions), so one call's three tensors always share one format. The
// rows are XLA's HeuristicLayoutAssignment, strongest first.

// NHWC activations: batch, spatial dimensions, feature minor; OHWI filters.
def CudnnConvIntegerNhwc : LayoutKind<"cuDNN convolution calls with integer or FP8 operands: NHWC / OHWI">;
def CudnnConvHopperNhwc
    : LayoutKind<"cuDNN convolution calls on Hopper and newer: NHWC / OHWI, except f64 and 3-D convolutions">;
def CudnnConvHalfNhwc : LayoutKind<"cuDNN f16/bf16 2-D convolution calls: NHWC / OHWI">;
// NCHW activations: batch, feature, spatial dimensions; OIHW filters.
def CudnnConvNchw : LayoutKind<"cuDNN convolution calls: NCHW / OIHW">;

let Requires = [IsGpu], Priority = 3 in {
// cuDNN runs integer and FP8 convolutions in NHWC only: operands NHWC / OHWI ...
def GpuCudnnConvIntegerOperandsNhwc : LayoutConstraint<CustomCall, EveryOperand.Index, CudnnConvIntegerNhwc>;
// ... and the result NHWC / OHWI.
def GpuCudnnConvIntegerResultNhwc : LayoutConstraint<CustomCall, Result.Index, CudnnConvIntegerNhwc>;
}
let Requires = [IsGpu, IsHopperOrNewer], Priority = 2 in {
// From Hopper on XLA runs every cuDNN convolution NHWC (f32 too; not f64, not 3-D): operands ...
def GpuCudnnConvHopperOperandsNhwc : LayoutConstraint<CustomCall, EveryOperand.Index, CudnnConvHopperNhwc>;
// ... and the result.
def GpuCudnnConvHopperResultNhwc : LayoutConstraint<CustomCall, Result.Index, CudnnConvHopperNhwc>;
}
let Requires = [IsGpu, HasTensorCores], Priority = 1 in {
// Before Hopper, tensor cores want f16/bf16 2-D convolutions NHWC: operands ...
def GpuCudnnConvHalfOperandsNhwc : LayoutConstraint<CustomCall, EveryOperand.Index, CudnnConvHalfNhwc>;
// ... and the result.
def GpuCudnnConvHalfResultNhwc : LayoutConstraint<CustomCall, Result.Index, CudnnConvHalfNhwc>;
}
let Requires = [IsGpu] in {
// Every other cuDNN convolution NCHW / OIHW: operands ...
def GpuCudnnConvOperandsNchw : LayoutConstraint<CustomCall, EveryOperand.Index, CudnnConvNchw>;
// ... and the result.
def GpuCudnnConvResultNchw : LayoutConstraint<CustomCall, Result.Index, CudnnConvNchw>;
}
