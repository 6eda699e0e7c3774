//===- rules/layout/CpuLayoutAssignment.td - XLA:CPU's layout constraints -------------===//
//
// CpuLayoutAssignment (xla/service/cpu/cpu_layout_assignment.cc): the Eigen matmul and
// convolution kernels take row-major operands and write row-major results.
//===----------------------------------------------------------------------===//

include "layout/LayoutKinds.td"

let Requires = [IsCpu] in {
// Eigen's matrix product: row-major operands and result.
def CpuDotLhsRowMajor : LayoutConstraint<Dot, 0, DefaultLayout>;
// ... the rhs row-major ...
def CpuDotRhsRowMajor : LayoutConstraint<Dot, 1, DefaultLayout>;
// ... and a row-major result.
def CpuDotResultRowMajor : LayoutConstraint<Dot, Result.Index, DefaultLayout>;
// Eigen's spatial convolution: row-major input, filter and output.
def CpuConvInputRowMajor : LayoutConstraint<Convolution, 0, DefaultLayout>;
// ... a row-major filter ...
def CpuConvFilterRowMajor : LayoutConstraint<Convolution, 1, DefaultLayout>;
// ... and a row-major output.
def CpuConvOutputRowMajor : LayoutConstraint<Convolution, Result.Index, DefaultLayout>;
}
