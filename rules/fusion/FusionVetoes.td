//===- rules/fusion/FusionVetoes.td - producer/consumer pairs that must not fuse --===//
//
// Each veto names a reason (`hloc opt --explain-fusion A,B` prints it with this file and line)
// and holds when all of its conditions do. $producer and $consumer are instructions of a
// non-fusion computation: plain instructions or fusions built so far. PriorityFusion fuses a
// producer into all of its consumers or none, so a veto on one consumer keeps the producer
// unfused. (A multi-output producer needs no veto: its users read it through
// get-tuple-element, which never fuses.) These are XLA's refusals (gpu_fusible.cc, priority_fusion.cc,
// instruction_fusion.cc); the cost model then decides among the legal fusions.
//===----------------------------------------------------------------------===//

include "base/Common.td"
include "base/Fusion.td"

def : CppHeader<"passes/fusion/fusion_constraints.h">;

def IsExpensive : Constraint<"$x computes an expensive op (exp/log/tanh/power..., f64 divide)", "fusion::IsExpensive">;
def ReusesElementsOf : Constraint<"$consumer reads elements of $producer more than once per output element",
                                  "fusion::ReusesElementsOf">;
def IsReductionNode : Constraint<"$x is a reduction or a fusion with a reduction hero", "fusion::IsReductionNode">;
def HasOneUser : Constraint<"$x has exactly one user and is not a root", "fusion::HasOneUser">;
def IsReductionEpilogue : Constraint<"$consumer only applies elementwise ops to the reduced values of $producer",
                                     "fusion::IsReductionEpilogue">;
def FormsRowNormalization : Constraint<"$producer and $consumer form a row-normalization chain (softmax, layer norm)",
                                       "fusion::FormsRowNormalization">;
def RowFitsInSharedMemory : Constraint<"the chain's row fits in the GPU's shared memory per block",
                                       "fusion::RowFitsInSharedMemory">;
def HasScatter : Constraint<"$x is a scatter or a fusion with a scatter", "fusion::HasScatter">;
def IsConstantOp : Constraint<"$x is a constant", "fusion::IsConstantOp">;
def IsFusionOp : Constraint<"$x is a fusion", "fusion::IsFusionOp">;
def IsLibraryCall : Constraint<"$x is a library call (custom-call or kCustom fusion)", "fusion::IsLibraryCall">;
def IsInPlaceOperandOf : Constraint<"$consumer updates $producer's value in place", "fusion::IsInPlaceOperandOf">;
def HeroesIncompatible : Constraint<"the heroes of $producer and $consumer need different tilings",
                                    "fusion::HeroesIncompatible">;
def FusionOperandsExceed : Constraint<"the fusion would have more than n operands and outputs",
                                      "fusion::FusionOperandsExceed">;
def ComputedValueUsersExceed : Constraint<"$x computes values (more than constants, iotas and ops that move values) and has more than n users",
                                          "fusion::ComputedValueUsersExceed">;
def ProducerPathsExceed : Constraint<"the consumer's emitter would generate $producer's code for more than n indexings",
                                     "fusion::ProducerPathsExceed">;

// Recomputing an expensive value for every element that reads it costs more than the memory
// round trip it saves (XLA: "the producer is expensive, and the consumer reuses inputs").
def ExpensiveProducerReused : FusionVeto<
    "the producer is expensive and the consumer reads each of its elements more than once (fusing would recompute it)",
    [(IsExpensive $producer), (ReusesElementsOf $consumer, $producer)]>;

// A reduction is never duplicated: each copy would redo the whole reduction
// (XLA: "reduction output fusion only works for single user").
let Duplication = 1 in
def ReductionWithManyUsers : FusionVeto<
    "a reduction fuses into its consumer only when that consumer is its single user (it is never computed twice)",
    [(IsReductionNode $producer), (Unless (HasOneUser $producer))]>;

// XLA's reduction epilogue fusion: elementwise ops on the reduced values join the reduction's
// kernel. Beyond that, only row-normalization chains (softmax, layer norm: row reduction ->
// elementwise -> row reduction over the same rows) share a kernel; anything else would need
// the reduced values of other rows.
def ReductionIntoNonEpilogue : FusionVeto<
    "a reduction fuses only into an epilogue (elementwise ops on its reduced values) or into a row-normalization chain over the same rows",
    [(IsReductionNode $producer), (Unless (IsReductionEpilogue $producer, $consumer)),
     (Unless (FormsRowNormalization $producer, $consumer))]>;

// A row-normalization kernel keeps each row in shared memory between its reductions; a row
// that does not fit would be re-read from memory by every reduction.
def RowTooLongForSharedMemory : FusionVeto<
    "a row-normalization fusion keeps each row in shared memory, and this row does not fit in the GPU's shared memory per block",
    [(IsReductionNode $producer), (Unless (IsReductionEpilogue $producer, $consumer)),
     (FormsRowNormalization $producer, $consumer), (Unless (RowFitsInSharedMemory $producer, $consumer))]>;

// The CPU backend emits reductions only as the roots of their fusions.
let Requires = [IsCpu] in
def CpuReductionOnlyAsRoot : FusionVeto<
    "the CPU backend emits a reduction only as the root of its fusion (no epilogues or reduction chains)",
    [(IsReductionNode $producer)]>;

// The CPU backend emits scatter as a loop of its own (kInput fusions there have reduce roots).
let Requires = [IsCpu] in
def CpuNoScatterFusion : FusionVeto<
    "the CPU backend emits a scatter on its own (no scatter fusions)",
    [(HasScatter $consumer)]>;

// Large constants stay buffers the kernels read (XLA: "not fusing constant").
def NonScalarConstant : FusionVeto<
    "a constant with more than one element stays a buffer that kernels read",
    [(IsConstantOp $producer), (Unless (IsEffectiveScalar $producer))]>;

// A scalar constant joins a fusion that exists; it never makes a fusion of a lone consumer.
let QueueOnly = 1 in
def ConstantIntoPlainOp : FusionVeto<
    "a constant fuses only into an existing fusion (it never makes a fusion by itself)",
    [(IsConstantOp $producer), (Unless (IsFusionOp $consumer))]>;

// Library calls (cuBLAS GEMMs, cuDNN convolutions) take their operands from memory; XLA fuses
// epilogues into them through the library rewriters, never through PriorityFusion.
def IntoLibraryCall : FusionVeto<
    "the consumer is a library call (custom-call or kCustom fusion); its operands come from memory",
    [(IsLibraryCall $consumer)]>;
def LibraryCallProducer : FusionVeto<
    "the producer is a library call (custom-call or kCustom fusion); its result is written to memory",
    [(IsLibraryCall $producer)]>;

// Scatter updates its operand in place, so that operand must be a buffer of its own
// (XLA's CanEmitInputFusedScatter).
def InPlaceOperand : FusionVeto<
    "the consumer updates this operand in place (scatter), so it must come from memory",
    [(IsInPlaceOperandOf $producer, $consumer)]>;

// A tiled transpose and a reduction tile their input differently (XLA's
// FusionHeroesAreCompatible).
def IncompatibleHeroes : FusionVeto<
    "the producer's and the consumer's heroes need different tilings (a tiled transpose with a reduction, or two different transposes)",
    [(HeroesIncompatible $producer, $consumer)]>;

// Kernel parameters are limited (XLA's kMaxOperandsAndOutputsPerFusion).
def TooManyOperands : FusionVeto<
    "the fusion would have more than 96 operands and outputs (kernel parameter space)",
    [(FusionOperandsExceed $producer, $consumer, 96)]>;

// Each distinct index the consumer reads the producer at emits the producer's code again
// (XLA's IsFusedIrEmitterInefficient, kAllowedCodeDuplication = 15).
def CodeDuplication : FusionVeto<
    "the consumer would emit the producer's code for more than 15 different indexings (code size)",
    [(ProducerPathsExceed $producer, $consumer, 15)]>;

// Fusing a producer copies its computation into every consumer. Copies into a few kernels save
// a memory round trip; copies into many multiply code and work. Without a bound, a value every
// layer extends (a residual stream, the running sum of its gradient) is copied into each later
// layer's kernels together with the copies before it: kernels quadratic in the depth (163
// copies of one add in a 40-layer transformer step). Constants, iotas and ops that only move
// values (broadcast, reshape, transpose, slice, concatenate...) compute nothing and may go
// everywhere.
let Duplication = 1 in
def ComputationCopiedTooOften : FusionVeto<
    "the producer computes values and has more than 8 users (fusing would copy its computation into each)",
    [(ComputedValueUsersExceed $producer, 8)]>;
