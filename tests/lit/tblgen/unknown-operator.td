// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// A constraint is not a pattern operator.
// CHECK: unknown-operator.td:[[@LINE+1]]:5: error: in rule 'BadOp': unknown operator 'IsIntegral' in the pattern: expected an Op (rules/base/Ops.td) or a Matcher, but it is a Constraint
def BadOp : Rule<(Add $a, (IsIntegral $a)), (replaceWith $a)>;
// CHECK-NEXT: def BadOp
// CHECK-NEXT: {{^    \^}}
}
