// Rules for tests/unit/rewrite_test.cc: compiled into the unit-test binary only (tests/CMakeLists.txt),
// never into hloc. Each exercises one feature of the generator or the driver; the tests pick
// rules by name through PassContext::enabled_rules.
include "base/Common.td"

def : CppHeader<"unit/rules/test_rule_helpers.h">;

// The test passes (a rule's Pass must be a declared RewritePass).
def : RewritePass<"test-rewrite">;
def : RewritePass<"test-pingpong">;

def IsNegative : Constraint<"$x is a constant whose elements are all negative", "TestIsNegativeConstant">;

// An op set (rules/base/Dsl.td): TOpOfBroadcast below is one rule per member.
def TNegAbs : OpSet<[Negate, Abs]>;

let Pass = "test-rewrite" in {

let Group = "identities" in {
// A + 0 => A
def TAddZero : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Commutative = 1; }
// A * 1 => A (only one operand order: no Commutative)
def TMulOne : Rule<(Multiply $a, One), (replaceWith $a)>;
}

// transpose(transpose(A)) => transpose(A) with the composed permutation
def TTransposeTranspose : Rule<(Transpose:$t2 (Transpose:$t1 $a)), (Transpose $a, (ComposePerm $t1, $t2))>;

def TMulTwo : Rule<(Multiply $x, (ScalarConstant 2)), (Add $x, $x)>;

// x * 4 => (x + x) + (x + x), building the sum once
def TMulFour : Rule<(Multiply $x, (ScalarConstant 4)), (Add (Add:$d $x, $x), $d)>;

// x - x => 0 for integers
def TSubSelf : Rule<(Subtract $x, $x), (ZeroLike $x), [(IsIntegral $x)]>;

// -broadcast(s) => broadcast(-s) for a scalar s
def TNegBroadcast : Rule<(Negate (Broadcast:$b $s)),
                         (Broadcast (Negate $s), (ShapeOf $b), (DimensionsOf $b)), [(IsScalar $s)]>;

// op(broadcast(s)) => broadcast(op(s)) for op in negate, abs: one row and function per op
def TOpOfBroadcast : Rule<(TNegAbs (Broadcast:$b $s)),
                          (Broadcast (TNegAbs $s), (ShapeOf $b), (DimensionsOf $b)), [(IsScalar $s)]>;

// Priorities: both match negate(negate(x)); the higher one wins.
let Group = "prio" in {
def TNegNegLow : Rule<(Negate (Negate $x)), (Abs $x)>;
def TNegNegHigh : Rule<(Negate (Negate $x)), (replaceWith $x)> { let Priority = 10; }
}

// Refusals: an attribute function that fails, and a shape that cannot be inferred.
def TAbsBadDims : Rule<(Abs $x), (Transpose $x, (Dimensions "x,y"))>;
def TSqrtNoShape : Rule<(Sqrt $x), (Reshape $x)>;
// Refuses in Replace (the shape changes): the created negate must not be left behind.
def TExpWrongShape : Rule<(Exp $x), (Negate (Convert $x, (ShapeOfWithElementType $x, "s32")))>;

// Constraint negation, and a rule file's own constraint.
def TMaxNotNegative : Rule<(Maximum $x, $c), (replaceWith $x), [(IsNegative $c), (Unless (IsFloat $x))]>;

// Requires: only with a profile that has the capability (a Requirement of rules/base/Requirements.td:
// the test rule files may not define their own, as hloc's enum of requirements is generated from there).
def TNeedsCap : Rule<(Floor $x), (Ceil $x)> { let Requires = [HasTma]; }

// Any root: a matcher at the root (every scalar constant 7 becomes 8).
def TSevenToEight : Rule<(ScalarConstant:$c 7), (ScalarLike $c, 8), [(IsScalar $c)]>;

// The escape hatch: C++ replaces tanh(x) by x when x is a constant 0.
def TNativeTanh : NativeRule<(Tanh $x), "TestNativeTanhOfZero">;

// Bare `?` matches anything; repeated names must be the same instruction.
def TSelectSame : Rule<(Select ?, $a, $a), (replaceWith $a)>;
}

// Two rules that undo each other: the driver must still stop.
let Pass = "test-pingpong" in {
def TSinToCos : Rule<(Sin $x), (Cos $x)>;
def TCosToSin : Rule<(Cos $x), (Sin $x)>;
}
