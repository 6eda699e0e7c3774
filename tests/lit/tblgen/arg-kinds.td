// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'LiteralOperand': operand 1 of Add is 2; a pattern operand is $name, ?, (Op ...) or (Matcher ...)
def LiteralOperand : Rule<(Add $a, 2), (replaceWith $a)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'MatcherName': matcher ScalarConstant takes literal arguments only
def MatcherName : Rule<(Add $a, (ScalarConstant $a)), (replaceWith $a)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'DagArg': argument (Add $x, $x) of constraint IsIntegral must be an int or a string literal
def DagArg : Rule<(Add $x, $x), (replaceWith $x), [(IsIntegral (Add $x, $x))]>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'ResultLiteral': argument 1 of result Add must be $name, (Op ...), (AttrFn ...) or (Builder ...)
def ResultLiteral : Rule<(Negate $a), (Add $a, 1)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'BareOp': operand 1 of Add is the record 'Negate' (an Op); write a sub-pattern in parentheses
def BareOp : Rule<(Add $a, Negate), (replaceWith $a)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'ReplaceTwo': (replaceWith $x) takes exactly one bound $name
def ReplaceTwo : Rule<(Add $a, $b), (replaceWith $a, $b)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'MatcherResult': unknown operator 'Zero' in the result: expected replaceWith, an Op or a Builder, but it is a Matcher
def MatcherResult : Rule<(Add $a, $b), (Zero $a)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'RootConstraint': the pattern's root must be an Op (rules/base/Ops.td) or a Matcher; 'HasOneUse' is a Constraint
def RootConstraint : Rule<(HasOneUse $a), (replaceWith $a)>;
// CHECK: arg-kinds.td:[[@LINE+1]]:5: error: in rule 'ReuseName': result node $a reuses a name the pattern binds
def ReuseName : Rule<(Negate $a), (Negate (Abs:$a $a))>;
}
