//===- rules/simplify/AlgsimpConvertSelect.td - algsimp: convert, compare, select -===//
//
// Conversion chains, comparisons and selects of XLA's AlgebraicSimplifier. Float compares
// are never folded on equal operands (x != x is true for NaN); conversion chains collapse only
// when the middle type holds every value of the source exactly.
//===----------------------------------------------------------------------===//

include "base/Common.td"
include "simplify/AlgsimpHelpers.td"

let Pass = "algsimp" in {

let Group = "convert" in {
// convert(A) => A when the element type does not change
def ConvertNoop : Rule<(Convert:$c $a), (replaceWith $a), [(SameShape $c, $a)]>;
// convert(convert(A: T) : U) : T => A when U holds every value of T (f16 -> f32 -> f16)
def ConvertRoundTrip : Rule<(Convert:$c2 (Convert:$c1 $a)), (replaceWith $a),
                            [(SameShape $c2, $a), (ConvertPreservesValues $a, $c1)]> {
  let Priority = 1;
}
// convert(convert(A: T) : U) : V => convert(A) : V when U holds every value of T (f16 -> f32 -> f64)
def ConvertConvertWiden : Rule<(Convert:$c2 (Convert:$c1 $a)), (Convert $a, (ShapeOf $c2)),
                               [(ConvertPreservesValues $a, $c1)]>;
// bitcast-convert(A) => A when the element type does not change
def BitcastConvertNoop : Rule<(BitcastConvert:$c $a), (replaceWith $a), [(SameShape $c, $a)]>;
// bitcast-convert(bitcast-convert(A)) => A when it comes back to A's shape (bits are kept)
def BitcastConvertRoundTrip : Rule<(BitcastConvert:$c2 (BitcastConvert $a)), (replaceWith $a), [(SameShape $c2, $a)]>;
// reduce-precision(A) => A when it keeps every bit of A's type
def ReducePrecisionNoop : Rule<(ReducePrecision:$rp $a), (replaceWith $a), [(IsNoopReducePrecision $rp)]>;
// real(complex(A, B)) => A
def RealOfComplex : Rule<(Real (Complex $a, $b)), (replaceWith $a)>;
// imag(complex(A, B)) => B
def ImagOfComplex : Rule<(Imag (Complex $a, $b)), (replaceWith $b)>;
// real(A) => A for a real (non-complex) A
def RealOfReal : Rule<(Real:$r $a), (replaceWith $a), [(SameShape $r, $a)]>;
}

let Group = "compare" in {
// compare(A, A) with EQ, LE or GE => true for integers and pred (no NaN)
def CompareSelfTrue : Rule<(Compare:$c $a, $a), (OneLike $c), [(IsIntegralOrPred $a), (IsReflexiveCompare $c)]>;
// compare(A, A) with NE, LT or GT => false for integers and pred
def CompareSelfFalse : Rule<(Compare:$c $a, $a), (ZeroLike $c), [(IsIntegralOrPred $a), (IsIrreflexiveCompare $c)]>;
// not(compare(A, B)) => compare(A, B) with the inverse direction, for integers (a NaN
// makes both LT and GE false)
def NotOfCompare : Rule<(Not (Compare:$c $a, $b)), (Compare $a, $b, (InverseDirectionOf $c)),
                        [(IsIntegralOrPred $a), (HasOneUse $c)]>;
}

let Group = "select" in {
// select(P, A, A) => A
def SelectSame : Rule<(Select ?, $a, $a), (replaceWith $a)>;
// select(true, A, B) => A
def SelectTrue : Rule<(Select One, $a, ?), (replaceWith $a)>;
// select(false, A, B) => B
def SelectFalse : Rule<(Select Zero, ?, $b), (replaceWith $b)>;
// select(not(P), A, B) => select(P, B, A)
def SelectNot : Rule<(Select (Not $p), $a, $b), (Select $p, $b, $a)>;
// select(P, true, false) => P
def SelectPredTrueFalse : Rule<(Select:$s $p, One, Zero), (replaceWith $p), [(IsPred $s), (SameShape $s, $p)]>;
// select(P, false, true) => not(P)
def SelectPredFalseTrue : Rule<(Select:$s $p, Zero, One), (Not $p), [(IsPred $s), (SameShape $s, $p)]>;
// select(P, select(P, A, B), C) => select(P, A, C)
def SelectSelectOnTrue : Rule<(Select $p, (Select $p, $a, ?), $c), (Select $p, $a, $c)>;
// select(P, A, select(P, B, C)) => select(P, A, C)
def SelectSelectOnFalse : Rule<(Select $p, $a, (Select $p, ?, $c)), (Select $p, $a, $c)>;
}

}  // let Pass = "algsimp"
