//===- rules/simplify/AlgsimpReduceDot.td - algsimp: reduce and dot ------------===//
//
// Reductions that reduce nothing, and dots that contract nothing, as XLA's
// AlgebraicSimplifier rewrites them. A reduction of one element per output computes
// f(init, x); it equals x only when init is f's identity, which the rules check (XLA assumes
// it). For add the identity is taken as +0 as XLA does, so -0 comes out +0 before and x after.
//===----------------------------------------------------------------------===//

include "base/Common.td"
include "simplify/AlgsimpHelpers.td"

let Pass = "algsimp" in {

let Group = "reduce" in {
// reduce(A, init, dimensions={}) => A when init is the reducer's identity
def ReduceNoDimensions : Rule<(Reduce:$r $a, ?), (replaceWith $a),
                              [(ReducesNoDimensions $r), (ReduceInitIsIdentity $r), (SameShape $r, $a)]> {
  let Tags = [InexactLikeXla];
}
// reduce(A, init) over size-1 dimensions => reshape(A) when init is the reducer's identity
def ReduceSizeOneDimensions : Rule<(Reduce:$r $a, ?), (Reshape $a, (ShapeOf $r)),
                                   [(ReducesOnlySizeOneDimensions $r), (ReduceInitIsIdentity $r)]> {
  let Tags = [InexactLikeXla];
}
// reduce(A, init) of an empty A => broadcast(init): every output is the empty reduction
def ReduceOfEmpty : Rule<(Reduce:$r $a, $init), (Broadcast $init, (ShapeOf $r), (Dimensions "")),
                         [(IsEmptyArray $a), (IsScalar $init), (IsArray $r)]>;
}

let Group = "reduce-window" in {
// reduce-window(A, init) with windows spanning whole dimensions => reshape(reduce(A, init))
def ReduceWindowToReduce : Rule<(ReduceWindow:$w $a, $init), (ReduceWindowAsReduce $w)>;
// reduce-window(pad(A, init), init) without interior padding => reduce-window(A, init), padded
def ReduceWindowOfPad : Rule<(ReduceWindow:$w (Pad $a, $v), $init), (ReduceWindowFoldPad $w)>;
// reduce-window(A, identity) where every window holds one element of A => broadcast(A)
def ReduceWindowOfOneElement : Rule<(ReduceWindow:$w $a, $init), (ReduceWindowOfSingleton $w)>;
}

let Group = "dot" in {
// dot(A, B) with only size-1 contracting dimensions => broadcast(A') * broadcast(B')
// (an outer product: every output element is one product, so no rounding changes)
def DotToMultiply : Rule<(Dot:$d $a, $b), (DotAsMultiply $d), [(DotContractsOnlySizeOne $d)]>;
// dot(A, B) contracting an empty dimension => 0 (every output is an empty sum)
// XLA's HandleTranspose: transpose(dot(a, b)) -> dot(b, a), for a dot with no other use.
def TransposeOfDot : Rule<(Transpose:$t (Dot:$d $a, $b)), (DotWithSwappedOperands $t), [(HasOneUse $d)]>;

def DotEmptyContraction : Rule<(Dot:$d $a, $b), (ZeroLike $d), [(DotContractsEmpty $d)]> { let Priority = 1; }
// dot(A, 0) => 0 for integers (floats: inf * 0 is NaN)
def DotZeroOperand : Rule<(Dot:$d $a, Zero), (ZeroLike $d), [(IsIntegral $a)]> { let Commutative = 1; }
}

}  // let Pass = "algsimp"
