// The C++ side of rules/simplify/AlgsimpHelpers.td: matchers, constraints, attribute functions
// and builders used only by the algebraic simplifier's rules (rules/simplify/Algsimp*.td). Each
// record's summary is in AlgsimpHelpers.td; keep the two in step. General-purpose ones live in
// rules/base/Common.td (src/engine/rule_helpers.h).
#pragma once
#include <cstdint>

#include "engine/rewrite.h"
#include "ir/instruction.h"
#include "ir/primitive_type.h"

namespace hloc {
namespace algsimp {

// Whether converting any value of `from` to `to` and back gives the value back (XLA's
// primitive_util::CastPreservesValues, conservative for the f8/f4 types).
bool TypeCastPreservesValues(PrimitiveType from, PrimitiveType to);

// --- Matchers (effective constants: a constant or a broadcast of one) ----------------------
// Every bit set: true for pred, -1 for signed and the maximum for unsigned integers.
bool IsAllOnesBits(const HloInstruction* inst);
// The least value of the type: -inf for floats with infinities, the minimum integer, false.
bool IsLowestValue(const HloInstruction* inst);
// The greatest value of the type: +inf, the maximum integer, true.
bool IsHighestValue(const HloInstruction* inst);
// dynamic-slice whose start indices are all scalar constants.
bool IsDynamicSliceWithConstantIndices(const HloInstruction* inst);
// concatenate, with any number of operands.
bool IsConcatenate(const HloInstruction* inst);
// dynamic-slice that takes all of its operand (any start index clamps to 0).
bool IsFullDynamicSlice(const HloInstruction* inst);
// dynamic-update-slice whose update covers the whole operand.
bool IsFullDynamicUpdateSlice(const HloInstruction* inst);

// --- Constraints ---------------------------------------------------------------------------
// x is a constant (or broadcast of one): rules that move constants use (Unless ...) of it.
bool IsEffectiveConstant(RewriteContext& ctx, const HloInstruction* x);
// x >= 0 or NaN for every element (unsigned, abs, exp, x*x for floats, constants >= +0).
bool IsKnownNonNegative(RewriteContext& ctx, const HloInstruction* x);
// x's element type converts to y's element type without changing any value.
bool ConvertPreservesValues(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);
// A broadcast that only maps each operand dimension to itself (same shape, dims 0..r-1).
bool IsIdentityBroadcast(RewriteContext& ctx, const HloInstruction* b);
// A reverse whose reversed dimensions all have size <= 1.
bool IsNoopReverse(RewriteContext& ctx, const HloInstruction* r);
// A pad with no low/high/interior padding.
bool IsNoopPad(RewriteContext& ctx, const HloInstruction* p);
// A reduce-precision keeping at least the exponent and mantissa bits of its element type.
bool IsNoopReducePrecision(RewriteContext& ctx, const HloInstruction* rp);
// A compare whose direction holds for equal operands (EQ, LE, GE).
bool IsReflexiveCompare(RewriteContext& ctx, const HloInstruction* c);
// A compare whose direction fails for equal operands (NE, LT, GT).
bool IsIrreflexiveCompare(RewriteContext& ctx, const HloInstruction* c);
// A single-operand reduce whose computation is one add/multiply/max/min/and/or of its two
// parameters and whose init value is that operation's identity (0, 1, lowest, highest, ...).
bool ReduceInitIsIdentity(RewriteContext& ctx, const HloInstruction* r);
// A reduce over no dimensions.
bool ReducesNoDimensions(RewriteContext& ctx, const HloInstruction* r);
// A reduce over at least one dimension, each of size 1.
bool ReducesOnlySizeOneDimensions(RewriteContext& ctx, const HloInstruction* r);
// x has zero elements.
bool IsEmptyArray(RewriteContext& ctx, const HloInstruction* x);
// A dot (no sparsity) whose contracting dimensions all have size 1 (or that has none).
bool DotContractsOnlySizeOne(RewriteContext& ctx, const HloInstruction* d);
// A dot that contracts a dimension of size 0 (so every output element is an empty sum).
bool DotContractsEmpty(RewriteContext& ctx, const HloInstruction* d);
// concatenate c = concat(s1, s2) of two unit-stride slices of one array, adjacent along c's
// dimension and equal along every other.
bool AreAdjacentSlices(RewriteContext& ctx, const HloInstruction* c, const HloInstruction* s1,
                       const HloInstruction* s2);
// A concatenate with at least one operand of zero elements.
bool HasEmptyOperand(RewriteContext& ctx, const HloInstruction* c);

// --- Attribute functions -------------------------------------------------------------------
// broadcast(broadcast(x, b1), b2) as one broadcast of x: dims[i] = b2.dims[b1.dims[i]].
bool ComposeBroadcastDims(RewriteContext& ctx, NewInstruction& out, const HloInstruction* b1,
                          const HloInstruction* b2);
// slice(slice(x, s1), s2) as one slice of x.
bool ComposeSlices(RewriteContext& ctx, NewInstruction& out, const HloInstruction* s1,
                   const HloInstruction* s2);
// The slice covering two adjacent slices (see AreAdjacentSlices).
bool MergeAdjacentSlices(RewriteContext& ctx, NewInstruction& out, const HloInstruction* c,
                         const HloInstruction* s1, const HloInstruction* s2);
// c's comparison with the inverse direction (EQ<->NE, LT<->GE, GT<->LE), same type.
bool InverseDirectionOf(RewriteContext& ctx, NewInstruction& out, const HloInstruction* c);

// --- Builders ------------------------------------------------------------------------------
// slice(concatenate(...)) reading within one operand: that operand, or a slice of it.
HloInstruction* SliceOfConcatOperand(RewriteContext& ctx, const HloInstruction* s);
// slice(broadcast(x)) as broadcast(slice(x)).
HloInstruction* BroadcastOfSlice(RewriteContext& ctx, const HloInstruction* s);
// dot with only size-1 contracting dimensions as multiply(broadcast(a'), broadcast(b')).
HloInstruction* DotAsMultiply(RewriteContext& ctx, const HloInstruction* d);
// transpose(dot(a, b)) as dot(b, a) when the transpose keeps the batch dimensions and puts b's
// free dimensions before a's (XLA's HandleTranspose): the result comes out in the transposed
// order directly, so a bias along b's free dimension stays minor (cuBLASLt's BIAS epilogue).
HloInstruction* DotWithSwappedOperands(RewriteContext& ctx, const HloInstruction* t);
HloInstruction* ReduceWindowAsReduce(RewriteContext& ctx, const HloInstruction* w);
HloInstruction* ReduceWindowFoldPad(RewriteContext& ctx, const HloInstruction* w);
HloInstruction* ReduceWindowOfSingleton(RewriteContext& ctx, const HloInstruction* w);
// dynamic-slice with constant start indices as a slice (indices clamped as XLA does).
HloInstruction* DynamicSliceAsSlice(RewriteContext& ctx, const HloInstruction* d);
// concatenate without its zero-element operands (or the one remaining operand).
HloInstruction* ConcatWithoutEmpty(RewriteContext& ctx, const HloInstruction* c);
// Every bit set in like's shape: true for pred, -1 for signed, the maximum for unsigned
// integers; nullptr for other types.
HloInstruction* AllOnesLike(RewriteContext& ctx, const HloInstruction* like);
// 1/c in c's shape for a floating-point constant c holding one value (XLA's InvertConstant); null otherwise.
HloInstruction* ReciprocalOf(RewriteContext& ctx, const HloInstruction* c);
// Operand i of x (an existing instruction).
HloInstruction* OperandOf(RewriteContext& ctx, const HloInstruction* x, int64_t i);

}  // namespace algsimp
}  // namespace hloc
