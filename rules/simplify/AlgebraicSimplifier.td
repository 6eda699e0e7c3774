//===- rules/simplify/AlgebraicSimplifier.td - algsimp: arithmetic identities -===//
//
// The arithmetic, bitwise, min/max, sign and power rules of XLA's AlgebraicSimplifier
// (xla/hlo/transforms/simplifiers/algebraic_simplifier.cc), one rule per rewrite. Shape
// rules are in AlgsimpShapes.td, convert/compare/select in AlgsimpConvertSelect.td, reduce
// and dot in AlgsimpReduceDot.td.
//
// Floating-point honesty: every rule here is exact for every element type it accepts, except
// those tagged InexactLikeXla (`let Tags = [InexactLikeXla]`), which XLA applies anyway; their
// comment says where they differ, and a pipeline drops them all with
// `rules: {disable: [tag:inexact_like_xla]}`. Rules exact only for integers say so with (IsIntegral ...).
//===----------------------------------------------------------------------===//

include "base/Common.td"
include "simplify/AlgsimpHelpers.td"

let Pass = "algsimp" in {

//===- additive and multiplicative identities ------------------------------===//
let Group = "identities" in {
// A + 0 => A (XLA does this for floats too, although -0 + 0 = +0)
def AddZero : Rule<(Add $a, Zero), (replaceWith $a)> { let Commutative = 1; let Tags = [InexactLikeXla]; }
// A - 0 => A (exact: -0 - 0 = -0)
def SubZero : Rule<(Subtract $a, Zero), (replaceWith $a)>;
// A - A => 0 for integers (NaN - NaN and inf - inf are NaN for floats)
def SubSelf : Rule<(Subtract $a, $a), (ZeroLike $a), [(IsIntegral $a)]>;
// A * 1 => A
def MulOne : Rule<(Multiply $a, One), (replaceWith $a)> { let Commutative = 1; }
// A * 0 => 0 for integers (inf * 0 and NaN * 0 are NaN for floats)
def MulZero : Rule<(Multiply $a, Zero:$z), (replaceWith $z), [(IsIntegral $a)]> { let Commutative = 1; }
// A * -1 => -A (exact: wraps like negation for integers, flips the sign for floats; not for
// complex, where (-1 + 0i) * (x + inf i) has a NaN part)
def MulMinusOne : Rule<(Multiply $a, MinusOne), (Negate $a), [(Unless (IsComplex $a))]> { let Commutative = 1; }
// A / 1 => A
def DivOne : Rule<(Divide $a, One), (replaceWith $a)>;
// A / -1 => -A (HLO: INT_MIN / -1 = INT_MIN = -INT_MIN)
def DivMinusOne : Rule<(Divide $a, MinusOne), (Negate $a), [(Unless (IsComplex $a))]>;
// A / C => A * (1/C) for a floating-point constant C holding one value (XLA's HandleDivide:
// "A / Const => A * InvertConstant(Const)"); inexact where 1/C rounds, as in XLA.
def DivByConstant : Rule<(Divide $a, $c), (Multiply $a, (ReciprocalOf $c)),
                         [(IsFloat $a), (IsEffectiveConstant $c), (Unless (IsEffectiveConstant $a))]> {
  let Tags = [InexactLikeXla];
}
// (-A) * (-B) => A * B
def MulNegNeg : Rule<(Multiply (Negate $a), (Negate $b)), (Multiply $a, $b)>;
// A + (-B) => A - B
def AddNegate : Rule<(Add $a, (Negate $b)), (Subtract $a, $b)> { let Commutative = 1; }
// A - (-B) => A + B
def SubNegate : Rule<(Subtract $a, (Negate $b)), (Add $a, $b)>;
// A << 0 => A
def ShiftLeftZero : Rule<(ShiftLeft $a, Zero), (replaceWith $a)>;
// A >> 0 => A (logical)
def ShiftRightLogicalZero : Rule<(ShiftRightLogical $a, Zero), (replaceWith $a)>;
// A >> 0 => A (arithmetic)
def ShiftRightArithmeticZero : Rule<(ShiftRightArithmetic $a, Zero), (replaceWith $a)>;
}

//===- canonical operand order and constant reassociation ------------------===//
let Group = "canonicalize" in {
// C + A => A + C for a non-constant A (puts constants on the right, as XLA does)
def AddConstantToRight : Rule<(Add AnyConstant:$c, $a), (Add $a, $c), [(Unless (IsEffectiveConstant $a))]>;
// C * A => A * C for a non-constant A
def MulConstantToRight : Rule<(Multiply AnyConstant:$c, $a), (Multiply $a, $c),
                              [(Unless (IsEffectiveConstant $a))]>;
// (A + C1) + C2 => A + (C1 + C2) for integers (floats would round differently)
def AddConstantsReassociate : Rule<(Add (Add $a, AnyConstant:$c1), AnyConstant:$c2), (Add $a, (Add $c1, $c2)),
                                   [(IsIntegral $a), (Unless (IsEffectiveConstant $a))]>;
// (A * C1) * C2 => A * (C1 * C2) for integers
def MulConstantsReassociate : Rule<(Multiply (Multiply $a, AnyConstant:$c1), AnyConstant:$c2),
                                   (Multiply $a, (Multiply $c1, $c2)),
                                   [(IsIntegral $a), (Unless (IsEffectiveConstant $a))]>;
}

//===- bitwise and logical ops ---------------------------------------------===//
let Group = "bitwise" in {
// A & A => A
def AndSelf : Rule<(And $a, $a), (replaceWith $a)>;
// A | A => A
def OrSelf : Rule<(Or $a, $a), (replaceWith $a)>;
// A ^ A => 0
def XorSelf : Rule<(Xor $a, $a), (ZeroLike $a), [(IsIntegralOrPred $a)]>;
// A & 0 => 0 (A && false => false)
def AndZero : Rule<(And $a, Zero:$z), (replaceWith $z)> { let Commutative = 1; }
// A | 0 => A (A || false => A)
def OrZero : Rule<(Or $a, Zero), (replaceWith $a)> { let Commutative = 1; }
// A ^ 0 => A
def XorZero : Rule<(Xor $a, Zero), (replaceWith $a)> { let Commutative = 1; }
// A & ~0 => A (A && true => A)
def AndAllOnes : Rule<(And $a, AllOnesBits), (replaceWith $a)> { let Commutative = 1; }
// A | ~0 => ~0 (A || true => true)
def OrAllOnes : Rule<(Or $a, AllOnesBits:$c), (replaceWith $c)> { let Commutative = 1; }
// A ^ ~0 => ~A
def XorAllOnes : Rule<(Xor $a, AllOnesBits), (Not $a)> { let Commutative = 1; }
// A & ~A => 0
def AndNotSelf : Rule<(And $a, (Not $a)), (ZeroLike $a)> { let Commutative = 1; }
// A | ~A => ~0
def OrNotSelf : Rule<(Or $a, (Not $a)), (AllOnesLike $a)> { let Commutative = 1; }
// ~~A => A
def NotNot : Rule<(Not (Not $a)), (replaceWith $a)>;
}

//===- min and max ----------------------------------------------------------===//
let Group = "minmax" in {
// max(A, A) => A
def MaxSelf : Rule<(Maximum $a, $a), (replaceWith $a)>;
// min(A, A) => A
def MinSelf : Rule<(Minimum $a, $a), (replaceWith $a)>;
// max(A, -inf) => A (the type's least value; NaN stays NaN)
def MaxLowest : Rule<(Maximum $a, LowestValue), (replaceWith $a)> { let Commutative = 1; }
// min(A, +inf) => A (the type's greatest value)
def MinHighest : Rule<(Minimum $a, HighestValue), (replaceWith $a)> { let Commutative = 1; }
// max(A, +inf) => +inf for integers and pred (a float NaN would win)
def MaxHighest : Rule<(Maximum $a, HighestValue:$c), (replaceWith $c), [(IsIntegralOrPred $a)]> {
  let Commutative = 1;
}
// min(A, -inf) => -inf for integers and pred
def MinLowest : Rule<(Minimum $a, LowestValue:$c), (replaceWith $c), [(IsIntegralOrPred $a)]> {
  let Commutative = 1;
}
}

//===- sign: negate, abs, sign; idempotent rounding ------------------------===//
let Group = "sign" in {
// -(-A) => A
def NegNeg : Rule<(Negate (Negate $a)), (replaceWith $a)>;
// abs(abs(A)) => abs(A)
def AbsAbs : Rule<(Abs (Abs:$inner $a)), (replaceWith $inner)>;
// abs(-A) => abs(A)
def AbsNeg : Rule<(Abs (Negate $a)), (Abs $a)>;
// abs(A) => A when A >= 0 (unsigned, exp, x*x, non-negative constants)
def AbsNonNegative : Rule<(Abs $a), (replaceWith $a), [(IsKnownNonNegative $a)]>;
// sign(sign(A)) => sign(A)
def SignSign : Rule<(Sign (Sign:$inner $a)), (replaceWith $inner)>;
// floor(floor(A)) => floor(A)
def FloorFloor : Rule<(Floor (Floor:$inner $a)), (replaceWith $inner)>;
// ceil(ceil(A)) => ceil(A)
def CeilCeil : Rule<(Ceil (Ceil:$inner $a)), (replaceWith $inner)>;
// round(round(A)) => round(A) (half to even)
def RoundEvenRoundEven : Rule<(RoundNearestEven (RoundNearestEven:$inner $a)), (replaceWith $inner)>;
// floor(round(A)) => round(A): a rounded value is already integral
def FloorOfRoundEven : Rule<(Floor (RoundNearestEven:$inner $a)), (replaceWith $inner)>;
}

//===- power, exp and log --------------------------------------------------===//
let Group = "power" in {
// pow(A, 0) => 1 (also for NaN: pow(NaN, 0) = 1)
def PowZero : Rule<(Power:$p $a, Zero), (OneLike $p)>;
// pow(A, 1) => A
def PowOne : Rule<(Power $a, One), (replaceWith $a)>;
// pow(A, 2) => A * A
def PowTwo : Rule<(Power $a, (ScalarConstant 2)), (Multiply $a, $a)>;
// pow(A, -1) => 1 / A for floats (integer pow(0, -1) = 0 but 1 / 0 = -1)
def PowMinusOne : Rule<(Power $a, MinusOne), (Divide (OneLike $a), $a), [(IsFloat $a)]>;
// log(exp(A)) => A (XLA does this; exp overflows to inf for large A, where log(exp(A)) = inf)
def LogExp : Rule<(Log (Exp $a)), (replaceWith $a), [(IsFloat $a)]> { let Tags = [InexactLikeXla]; }
}

}  // let Pass = "algsimp"
