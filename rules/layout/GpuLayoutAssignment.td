//===- rules/layout/GpuLayoutAssignment.td - XLA:GPU's layout constraints -------------===//
//
// GpuLayoutAssignment (xla/service/gpu/transforms/layout_assignment.cc): what cuBLAS and
// cuDNN want from their operands. Rows apply under a GPU profile (Requires = [IsGpu]); the
// convolution rows choose NHWC where tensor cores run it and NCHW otherwise, as XLA's
// HeuristicLayoutAssignment does.
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
