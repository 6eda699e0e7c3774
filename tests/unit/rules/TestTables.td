// Layout and fusion records for tests/unit/rewrite_test.cc (generated tables read by a test).
include "base/Common.td"
include "base/Layout.td"
include "base/Fusion.td"

// A dot's left operand with the contracting dimension most minor.
def DotLhsContractingMinor : LayoutConstraint<Dot, 0, ContractingMinor>;
let Requires = [HasTensorCores] in
def ConvChannelsLast : LayoutPreference<Convolution, Result.Index, ChannelsLast> { let Priority = 2; }
def SortOperandsAlike : LayoutConstraint<Sort, EveryOperand.Index, SameAsOperand0>;

// Elementwise add fuses anywhere.
def AddFusible : Fusible<Add, [LoopFusion, InputFusion, OutputFusion]>;
def DotFusible : Fusible<Dot, [OutputFusion, CustomFusion]> { let AsProducer = 0; }
def ExpCost : OpCost<Exp, ExpensiveOp>;
def AddCost : OpCost<Add, CheapOp>;
// Never duplicate a producer that has several users.
def SharedProducer : FusionVeto<"the producer has other users and would be computed twice",
                                [(Unless (HasOneUse $producer)), (IsArray $consumer)]>;
