//===- rules/simplify/AlgsimpHelpers.td - algsimp's own rule vocabulary -------===//
//
// Matchers, constraints, attribute functions and builders used only by the algebraic
// simplifier's rule files (rules/simplify/Algsimp*.td). Their C++ is in
// src/passes/simplify/algsimp_helpers.{h,cc} (namespace hloc::algsimp). This file defines no
// rules; the general-purpose vocabulary is rules/base/Common.td.
//===----------------------------------------------------------------------===//

#ifndef HLOC_SIMPLIFY_ALGSIMP_HELPERS_TD
#define HLOC_SIMPLIFY_ALGSIMP_HELPERS_TD

include "base/Common.td"

def : CppHeader<"passes/simplify/algsimp_helpers.h">;

//===- Matchers ---------------------------------------------------------------===//
def AllOnesBits : Matcher<"a constant with every bit set (true, -1, the unsigned maximum)",
                          "algsimp::IsAllOnesBits">;
def LowestValue : Matcher<"a constant equal to the type's least value (-inf, INT_MIN, false)",
                          "algsimp::IsLowestValue">;
def HighestValue : Matcher<"a constant equal to the type's greatest value (+inf, INT_MAX, true)",
                           "algsimp::IsHighestValue">;
def DynamicSliceWithConstantIndices
    : Matcher<"a dynamic-slice whose start indices are scalar constants",
              "algsimp::IsDynamicSliceWithConstantIndices">;
def AnyConcatenate : Matcher<"a concatenate of any number of operands", "algsimp::IsConcatenate">;
def FullDynamicSlice : Matcher<"a dynamic-slice that reads its whole operand",
                               "algsimp::IsFullDynamicSlice">;
def FullDynamicUpdateSlice : Matcher<"a dynamic-update-slice whose update covers the whole operand",
                                     "algsimp::IsFullDynamicUpdateSlice">;

//===- Constraints ------------------------------------------------------------===//
def IsEffectiveConstant : Constraint<"$x is a constant or a broadcast of one",
                                     "algsimp::IsEffectiveConstant">;
def IsKnownNonNegative : Constraint<"every element of $x is >= +0 or NaN",
                                    "algsimp::IsKnownNonNegative">;
def ConvertPreservesValues : Constraint<"$x's element type converts to $y's without changing a value",
                                        "algsimp::ConvertPreservesValues">;
def IsIdentityBroadcast : Constraint<"$b maps each operand dimension to itself",
                                     "algsimp::IsIdentityBroadcast">;
def IsNoopReverse : Constraint<"$r reverses only dimensions of size <= 1", "algsimp::IsNoopReverse">;
def IsNoopPad : Constraint<"$p pads nothing", "algsimp::IsNoopPad">;
def IsNoopReducePrecision : Constraint<"$rp keeps every exponent and mantissa bit of its type",
                                       "algsimp::IsNoopReducePrecision">;
def IsReflexiveCompare : Constraint<"$c is EQ, LE or GE (true for equal operands)",
                                    "algsimp::IsReflexiveCompare">;
def IsIrreflexiveCompare : Constraint<"$c is NE, LT or GT (false for equal operands)",
                                      "algsimp::IsIrreflexiveCompare">;
def ReduceInitIsIdentity : Constraint<"$r reduces with one add/mul/max/min/and/or/xor and its identity as init",
                                      "algsimp::ReduceInitIsIdentity">;
def ReducesNoDimensions : Constraint<"$r reduces over no dimensions", "algsimp::ReducesNoDimensions">;
def ReducesOnlySizeOneDimensions : Constraint<"$r reduces only dimensions of size 1",
                                              "algsimp::ReducesOnlySizeOneDimensions">;
def IsEmptyArray : Constraint<"$x has zero elements", "algsimp::IsEmptyArray">;
def DotContractsOnlySizeOne : Constraint<"$d's contracting dimensions all have size 1",
                                         "algsimp::DotContractsOnlySizeOne">;
def DotContractsEmpty : Constraint<"$d contracts a dimension of size 0", "algsimp::DotContractsEmpty">;
def AreAdjacentSlices : Constraint<"$s1 and $s2 are unit-stride slices of one array, adjacent along $c's dimension",
                                   "algsimp::AreAdjacentSlices">;
def HasEmptyOperand : Constraint<"$c has an operand with zero elements", "algsimp::HasEmptyOperand">;

//===- Attribute functions ----------------------------------------------------===//
def ComposeBroadcastDims : AttrFn<"the dimensions (and shape) of broadcast(broadcast(x, b1), b2) as one",
                                  "algsimp::ComposeBroadcastDims">;
def ComposeSlices : AttrFn<"the slice of slice(slice(x, s1), s2) as one", "algsimp::ComposeSlices">;
def MergeAdjacentSlices : AttrFn<"the slice covering two adjacent slices", "algsimp::MergeAdjacentSlices">;
def InverseDirectionOf : AttrFn<"$c's comparison with the inverse direction", "algsimp::InverseDirectionOf">;

//===- Builders ---------------------------------------------------------------===//
def SliceOfConcatOperand : Builder<"the one concatenate operand a slice reads, sliced",
                                   "algsimp::SliceOfConcatOperand">;
def BroadcastOfSlice : Builder<"slice(broadcast(x)) as broadcast(slice(x))", "algsimp::BroadcastOfSlice">;
def ReduceWindowAsReduce : Builder<"a reduce-window spanning whole dimensions (1 wide elsewhere) as reshape(reduce)",
                                   "algsimp::ReduceWindowAsReduce">;
def ReduceWindowFoldPad : Builder<"reduce-window(pad(x, init)) as a reduce-window of x with the pad as window padding",
                                  "algsimp::ReduceWindowFoldPad">;
def ReduceWindowOfSingleton : Builder<"a reduce-window whose every window holds the one element of size-1 dims, as a broadcast",
                                      "algsimp::ReduceWindowOfSingleton">;
def DotAsMultiply : Builder<"a dot over size-1 contracting dims as a multiply of broadcasts",
                            "algsimp::DotAsMultiply">;
def DotWithSwappedOperands : Builder<"transpose(dot(a, b)) as dot(b, a) (batch dimensions kept, free ones swapped)",
                                     "algsimp::DotWithSwappedOperands">;
def DynamicSliceAsSlice : Builder<"a dynamic-slice with constant indices as a slice (clamped)",
                                  "algsimp::DynamicSliceAsSlice">;
def ConcatWithoutEmpty : Builder<"a concatenate without its zero-element operands",
                                 "algsimp::ConcatWithoutEmpty">;
def AllOnesLike : Builder<"every bit set (true, -1, the unsigned maximum) in $like's shape",
                          "algsimp::AllOnesLike">;
def OperandOf : Builder<"operand i of $x", "algsimp::OperandOf">;
def ReciprocalOf : Builder<"1/v in $c's shape for a floating-point constant (or broadcast) holding one value v",
                           "algsimp::ReciprocalOf">;

#endif  // HLOC_SIMPLIFY_ALGSIMP_HELPERS_TD
