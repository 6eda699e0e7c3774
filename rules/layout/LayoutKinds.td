//===- rules/layout/LayoutKinds.td - layouts and requirements the layout rules name ---===//
//
// rules/base/Layout.td defines the generic kinds (DefaultLayout, ContractingMinor, BatchMajor,
// ChannelsLast, SameAsOperand0, SameAsResult). The kinds below are the ones the layout stage
// adds; src/passes/layout/layout_constraints.cc computes each one (a switch over the
// enumerators of src/passes/layout/layout_kinds.h), and hloc-tblgen refuses a LayoutKind record
// that header does not list. The requirements the rows name (IsGpu, HasTensorCores, ...) are
// in rules/base/Requirements.td.
//===----------------------------------------------------------------------===//

#ifndef HLOC_LAYOUT_KINDS_TD
#define HLOC_LAYOUT_KINDS_TD

include "base/Layout.td"

def ChannelsFirst : LayoutKind<"the feature dimension right after the batch dimension (NCHW convolutions)">;
def Int8ContractingMinor
    : LayoutKind<"for 8-bit integer operands: the contracting dimensions most minor, else no constraint">;
def OperandLayoutConstraints
    : LayoutKind<"the layout a custom-call's operand_layout_constraints give the operand">;
def AsWritten : LayoutKind<"the layout the instruction's shape already carries (kept as written)">;

#endif  // HLOC_LAYOUT_KINDS_TD
