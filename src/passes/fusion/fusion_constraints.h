// The constraints fusion vetoes are written with (rules/fusion/FusionVetoes.td names them by
// these functions). Each takes the veto's $producer and $consumer (instructions of a
// non-fusion computation: fusions or plain instructions) and answers one question; the
// generated veto holds when all of its conditions do. RewriteContext gives the pass context
// (the hardware profile).
#pragma once
#include <cstdint>

#include "engine/rewrite.h"
#include "ir/instruction.h"

namespace hloc::fusion {

// Any instruction of the node has an expensive cost class (rules/fusion/FusionCosts.td:
// relative cost >= 20, or a FastMathOp on f64, which has no fast hardware path).
bool IsExpensive(RewriteContext& ctx, const HloInstruction* node);
// The consumer reads some element of the producer's value more than once per output element
// (XLA's ReusesOperandElements): broadcasts, reduce-window, dot, gather of a fused value.
bool ReusesElementsOf(RewriteContext& ctx, const HloInstruction* consumer, const HloInstruction* producer);
// The node is a reduce or a fusion containing an input-fusible reduce.
bool IsReductionNode(RewriteContext& ctx, const HloInstruction* node);
// Exactly one user instruction (it may use the value more than once) and not a root.
bool HasOneUser(RewriteContext& ctx, const HloInstruction* node);
// Every instruction of the consumer is an epilogue op (elementwise, bitcast, reshape, copy)
// whose other inputs are constants or broadcast scalars, and the consumer has no reduction:
// XLA's reduction epilogue fusion.
bool IsReductionEpilogue(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer);
// Producer and consumer together form a row-normalization chain (softmax, layer norm): every
// reduce is a row reduction of the same [rows, cols] input over the same dimensions, and
// every value computed from a reduced value stays in its row: elementwise ops, reshapes that
// only add or drop size-1 dimensions, and broadcasts of [rows] values back along the reduced
// dimensions. Values that do not depend on a reduction may be anything a loop fusion computes.
bool FormsRowNormalization(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer);
// The row of such a chain (cols elements at 4 bytes, the f32 accumulator width, and at least
// the input's element width) fits in the profile's shared memory per block (48 KiB, CUDA's
// limit without the opt-in, when no profile gives it).
bool RowFitsInSharedMemory(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer);
// The node is a scatter or a fusion with a scatter.
bool HasScatter(RewriteContext& ctx, const HloInstruction* node);
bool IsConstantOp(RewriteContext& ctx, const HloInstruction* node);
bool IsFusionOp(RewriteContext& ctx, const HloInstruction* node);
// A library call: a custom-call (cuBLAS, cuDNN, ... targets) or a kCustom fusion.
bool IsLibraryCall(RewriteContext& ctx, const HloInstruction* node);
// The consumer updates the producer's value in place: operand 0 of a scatter (or of a
// fusion whose scatter root updates that parameter).
bool IsInPlaceOperandOf(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer);
// A tiled transpose meets a reduction (either way round), or two tiled transposes permute
// differently: the emitters need different tilings (XLA's FusionHeroesAreCompatible).
bool HeroesIncompatible(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer);
// The fused node would have more than `limit` operands plus outputs.
bool FusionOperandsExceed(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer,
                          int64_t limit);
// The producer's value reaches the consumer's outputs along more than `limit` paths, and the
// producer is more than a single cheap instruction: its code would be emitted that many times.
bool ProducerPathsExceed(RewriteContext& ctx, const HloInstruction* producer, const HloInstruction* consumer,
                         int64_t limit);
// The producer computes values (holds an instruction other than a parameter, constant, iota or
// one that only moves values: broadcast, bitcast, reshape, copy, transpose, slice, concatenate,
// pad, reverse) and has more than `limit` distinct users: fusing it copies
// that computation into each of them.
bool ComputedValueUsersExceed(RewriteContext& ctx, const HloInstruction* producer, int64_t limit);

}  // namespace hloc::fusion
