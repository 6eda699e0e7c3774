//===- rules/layout/CommonLayoutAssignment.td - constraints every target shares -------===//
//
// XLA's LayoutAssignment itself (xla/service/layout_assignment.cc) constrains these for every
// backend. Layout kinds are in rules/base/Layout.td and rules/layout/LayoutKinds.td.
//===----------------------------------------------------------------------===//

include "layout/LayoutKinds.td"

// A sort permutes all its operands alike: one layout for every operand.
def SortOperandsAlike : LayoutConstraint<Sort, EveryOperand.Index, SameAsOperand0>;
// A variadic reduce walks its inputs together: every input takes input 0's layout.
def ReduceInputsAlike : LayoutConstraint<Reduce, EveryOperand.Index, SameAsOperand0>;
// A custom call with operand_layout_constraints gets its operands in exactly those layouts.
def CustomCallOperandLayouts : LayoutConstraint<CustomCall, EveryOperand.Index, OperandLayoutConstraints>;
// ... and its result keeps the layout written on it.
def CustomCallResultAsWritten : LayoutConstraint<CustomCall, Result.Index, AsWritten>;
// An fft is a library call (FFTW, cuFFT) over row-major arrays, as XLA:GPU lays out kFft for
// cuFFT: its operand in the default layout ...
def FftOperandDefault : LayoutConstraint<Fft, 0, DefaultLayout>;
// ... and its result too.
def FftResultDefault : LayoutConstraint<Fft, Result.Index, DefaultLayout>;
