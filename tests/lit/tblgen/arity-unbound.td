// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
// A wrong operand count is one error that says the arity, not also "unbound" errors for the
// names written in that node (issue 36, item 4).
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: arity-unbound.td:[[@LINE+1]]:5: error: in rule 'AddOne': Add takes 2 operand(s), but the pattern gives it 1 ((Add $a))
def AddOne : Rule<(Add $a), (replaceWith $a)>;
// CHECK: arity-unbound.td:[[@LINE+1]]:5: error: in rule 'NegTwo': Negate takes 1 operand(s), but the pattern gives it 2 ((Negate $x, $y))
def NegTwo : Rule<(Multiply (Negate $x, $y), $z), (Multiply $x, $z), [(SameShape $y, $z)]>;
// CHECK-NOT: unbound
}
