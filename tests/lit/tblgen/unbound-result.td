// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: unbound-result.td:[[@LINE+1]]:5: error: in rule 'Unbound': $y in the result is unbound: bind it in the pattern
def Unbound : Rule<(Add $a, (Zero)), (replaceWith $y)>;
// CHECK: unbound-result.td:[[@LINE+1]]:5: error: in rule 'UnboundOperand': $b in the result is unbound
def UnboundOperand : Rule<(Negate $a), (Add $a, $b)>;
// CHECK: unbound-result.td:[[@LINE+1]]:5: error: in rule 'UnboundAttr': $q in attribute function ShapeOf is unbound
def UnboundAttr : Rule<(Negate $a), (Broadcast $a, (ShapeOf $q))>;
}
