//===- rules/base/Layout.td - layout requirements and preferences --------------===//
//
// Layout assignment reads these as data: which layout an opcode's operand (or its result)
// must have, or would like to have. hloc-tblgen --gen-layout turns every LayoutConstraint
// record of a rules/layout/*.td file into a row of a LayoutConstraintInfo table
// (src/engine/rule_tables.h); the propagation engine in C++ computes the LayoutKind, switching
// over its enumerator (src/passes/layout/layout_kinds.h lists the kinds it knows; hloc-tblgen
// refuses a LayoutKind record that is not there).
//
//   // A dot's operands with the contracting dimension most minor.
//   def DotLhsContractingMinor : LayoutConstraint<Dot, 0, ContractingMinor>;
//   let Requires = [HasTensorCores] in
//   def ConvNhwc : LayoutPreference<Convolution, 0, ChannelsLast>;
//   def SortOperandsAlike : LayoutConstraint<Sort, EveryOperand.Index, SameAsOperand0>;
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_LAYOUT_TD
#define HLOC_BASE_LAYOUT_TD

include "base/Dsl.td"
include "base/Ops.td"

// A layout the engine knows how to compute for an instruction.
class LayoutKind<string summary> {
  string Summary = summary;
}
def DefaultLayout : LayoutKind<"dimensions major-to-minor: {rank-1, ..., 1, 0}">;
def ContractingMinor : LayoutKind<"the contracting dimensions most minor (dot operands)">;
def BatchMajor : LayoutKind<"the batch dimensions most major (dot operands and result)">;
def ChannelsLast : LayoutKind<"the feature dimension most minor (NHWC convolutions)">;
def SameAsOperand0 : LayoutKind<"the same layout as operand 0">;
def SameAsResult : LayoutKind<"the same layout as the instruction's result">;

// Operand positions besides 0, 1, ...
class LayoutOperand<int index> {
  int Index = index;
}
def Result : LayoutOperand<-1>;
def EveryOperand : LayoutOperand<-2>;

class LayoutConstraint<Op op, int operand, LayoutKind layout> {
  Op Opcode = op;
  int Operand = operand;          // 0, 1, ..., Result.Index (-1) or EveryOperand.Index (-2)
  LayoutKind Layout = layout;
  bit Required = 1;               // 0: a preference, which a requirement elsewhere overrides
  int Priority = 0;               // between preferences: higher wins
  list<Requirement> Requires = [];
  string Summary = "";            // defaults to the comment above the def
}

class LayoutPreference<Op op, int operand, LayoutKind layout>
    : LayoutConstraint<op, operand, layout> {
  let Required = 0;
}

#endif  // HLOC_BASE_LAYOUT_TD
