//===- rules/simplify/AlgsimpShapes.td - algsimp: data-movement rules ----------===//
//
// Broadcast, reshape, transpose, reverse, slice, concatenate, pad, copy and bitcast rules of
// XLA's AlgebraicSimplifier. Every one moves or drops data without computing on it, so each
// is exact for every element type.
//===----------------------------------------------------------------------===//

include "base/Common.td"
include "simplify/AlgsimpHelpers.td"

// The elementwise ops whose broadcast scalars the broadcast-sink rules below fold (XLA's list).
def BroadcastSinkUnaryOps : OpSet<[Negate, Abs, Exp, Not]>;
def BroadcastSinkBinaryOps : OpSet<[Add, Subtract, Multiply, Maximum, Minimum]>;

let Pass = "algsimp" in {

//===- broadcast --------------------------------------------------------------===//
let Group = "broadcast" in {
// broadcast(A) => A when it maps every dimension to itself
def BroadcastNoop : Rule<(Broadcast:$b $a), (replaceWith $a), [(IsIdentityBroadcast $b)]>;
// broadcast(broadcast(A)) => broadcast(A) with the composed dimensions
def BroadcastBroadcast : Rule<(Broadcast:$b2 (Broadcast:$b1 $a)), (Broadcast $a, (ComposeBroadcastDims $b1, $b2))>;
// reshape(broadcast(s)) => broadcast(s) for a scalar s
def ReshapeOfBroadcastScalar : Rule<(Reshape:$r (Broadcast $s)), (Broadcast $s, (ShapeOf $r), (Dimensions "")),
                                    [(IsScalar $s)]>;
// transpose(broadcast(s)) => broadcast(s) for a scalar s
def TransposeOfBroadcastScalar : Rule<(Transpose:$t (Broadcast $s)), (Broadcast $s, (ShapeOf $t), (Dimensions "")),
                                      [(IsScalar $s)]>;
// reverse(broadcast(s)) => broadcast(s) for a scalar s
def ReverseOfBroadcastScalar : Rule<(Reverse:$r (Broadcast:$b $s)), (replaceWith $b), [(IsScalar $s)]>;
}

// Elementwise ops of broadcast scalars compute once on the scalar (XLA sinks broadcasts). The
// ops are the op sets at the top of this file: each rule over one is one rule per op.
let Group = "broadcast-sink" in {
// op(broadcast(s)) => broadcast(op(s)) for a scalar s and op in negate, abs, exp, not
def UnaryOfBroadcastScalar : Rule<(BroadcastSinkUnaryOps:$u (Broadcast $s)),
                                  (Broadcast (BroadcastSinkUnaryOps $s), (ShapeOf $u), (Dimensions "")),
                                  [(IsScalar $s)]>;
// convert(broadcast(s)) => broadcast(convert(s)) (the new convert's shape is the scalar's, in the
// result's element type)
def ConvertOfBroadcastScalar : Rule<(Convert:$u (Broadcast $s)),
                                    (Broadcast (Convert $s, (ShapeOfWithTypeOf $s, $u)), (ShapeOf $u), (Dimensions "")),
                                    [(IsScalar $s)]>;
// op(broadcast(s), broadcast(t)) => broadcast(op(s, t)) for scalars s, t and op in add, subtract,
// multiply, maximum, minimum
def BinaryOfBroadcastScalars : Rule<(BroadcastSinkBinaryOps:$o (Broadcast $s), (Broadcast $t)),
                                    (Broadcast (BroadcastSinkBinaryOps $s, $t), (ShapeOf $o), (Dimensions "")),
                                    [(IsScalar $s), (IsScalar $t)]>;
}

//===- reshape, bitcast, copy -----------------------------------------------===//
let Group = "reshape" in {
// reshape(A) => A when the shape does not change
def ReshapeNoop : Rule<(Reshape:$r $a), (replaceWith $a), [(SameShape $r, $a)]>;
// reshape(reshape(A)) => reshape(A)
def ReshapeReshape : Rule<(Reshape:$r2 (Reshape $a)), (Reshape $a, (ShapeOf $r2))>;
// bitcast(A) => A when shape and layout do not change
def BitcastNoop : Rule<(Bitcast:$b $a), (replaceWith $a), [(SameLayout $b, $a)]>;
// bitcast(bitcast(A)) => bitcast(A)
def BitcastBitcast : Rule<(Bitcast:$b2 (Bitcast $a)), (Bitcast $a, (ShapeOf $b2))>;
// copy(A) => A when the layout does not change
def CopyNoop : Rule<(Copy:$c $a), (replaceWith $a), [(SameLayout $c, $a)]>;
// copy(copy(A)) => copy(A)
def CopyCopy : Rule<(Copy:$c2 (Copy $a)), (Copy $a, (ShapeOf $c2))>;
}

//===- transpose and reverse --------------------------------------------------===//
let Group = "transpose" in {
// transpose(A, {0,1,...}) => A
def TransposeNoop : Rule<(Transpose:$t $a), (replaceWith $a), [(IsIdentityPermutation $t)]>;
// transpose(transpose(A)) => transpose(A) with the composed permutation
def TransposeTranspose : Rule<(Transpose:$t2 (Transpose:$t1 $a)), (Transpose $a, (ComposePerm $t1, $t2))>;
// reverse(A) => A when the reversed dimensions have size <= 1
def ReverseNoop : Rule<(Reverse:$r $a), (replaceWith $a), [(IsNoopReverse $r)]>;
// reverse(reverse(A)) => A over the same dimensions
def ReverseReverse : Rule<(Reverse:$r2 (Reverse:$r1 $a)), (replaceWith $a), [(SameAttrs $r1, $r2)]>;
}

//===- slice, dynamic slice, concatenate, pad -----------------------------------===//
let Group = "slice" in {
// slice(A) => A when it takes everything
def SliceNoop : Rule<(Slice:$s $a), (replaceWith $a), [(SameShape $s, $a)]>;
// slice(slice(A)) => slice(A) with the composed bounds
def SliceSlice : Rule<(Slice:$s2 (Slice:$s1 $a)), (Slice $a, (ComposeSlices $s1, $s2))>;
// slice(concatenate(A, B, ...)) => slice(A) when it reads within one operand
def SliceOfConcat : Rule<(Slice:$s (AnyConcatenate)), (SliceOfConcatOperand $s)>;
// slice(broadcast(A)) => broadcast(slice(A))
def SliceOfBroadcast : Rule<(Slice:$s (Broadcast $a)), (BroadcastOfSlice $s)>;
// dynamic-slice(A, ...) => A when it reads all of A (start indices clamp to 0)
def DynamicSliceNoop : Rule<(FullDynamicSlice:$d), (OperandOf $d, 0)>;
// dynamic-slice(A, c0, c1, ...) => slice(A) for constant start indices (clamped)
def DynamicSliceConstant : Rule<(DynamicSliceWithConstantIndices:$d), (DynamicSliceAsSlice $d)>;
// dynamic-update-slice(A, U, ...) => U when U covers all of A
def DynamicUpdateSliceFull : Rule<(FullDynamicUpdateSlice:$d), (OperandOf $d, 1)>;
}

let Group = "concat" in {
// concatenate(A) => A
def ConcatSingle : Rule<(Concatenate $a), (replaceWith $a)>;
// concatenate(..., empty, ...) => concatenate without the empty operands
def ConcatDropEmpty : Rule<(AnyConcatenate:$c), (ConcatWithoutEmpty $c), [(HasEmptyOperand $c)]>;
// concatenate(slice(A, [a:b]), slice(A, [b:c])) => slice(A, [a:c])
def ConcatAdjacentSlices : Rule<(Concatenate:$c (Slice:$s1 $a), (Slice:$s2 $a)),
                                (Slice $a, (MergeAdjacentSlices $c, $s1, $s2)), [(AreAdjacentSlices $c, $s1, $s2)]>;
// concatenate(broadcast(s), broadcast(s)) => broadcast(s) for a scalar s
def ConcatOfBroadcastScalar : Rule<(Concatenate:$c (Broadcast $s), (Broadcast $s)),
                                   (Broadcast $s, (ShapeOf $c), (Dimensions "")), [(IsScalar $s)]>;
}

let Group = "pad" in {
// pad(A, v) => A with no padding
def PadNoop : Rule<(Pad:$p $a, ?), (replaceWith $a), [(IsNoopPad $p)]>;
// pad(broadcast(s), s) => broadcast(s): every element is s
def PadOfBroadcastScalar : Rule<(Pad:$p (Broadcast $s), $s), (Broadcast $s, (ShapeOf $p), (Dimensions "")),
                                [(IsScalar $s)]>;
}

}  // let Pass = "algsimp"
