// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: arity.td:[[@LINE+1]]:5: error: in rule 'PatArity': Add takes 2 operand(s), but the pattern gives it 3
def PatArity : Rule<(Add $a, $b, $c), (replaceWith $a)>;
// CHECK: arity.td:[[@LINE+1]]:5: error: in rule 'ResArity': result Negate takes 1 operand(s), but it is given 2
def ResArity : Rule<(Add $a, $b), (Negate $a, $b)>;
// Variadic ops take any number of operands.
def VariadicOk : Rule<(Concatenate $a), (replaceWith $a)>;
// CHECK-NOT: VariadicOk
}
