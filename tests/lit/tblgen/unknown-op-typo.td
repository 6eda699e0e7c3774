// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
// A misspelt Op or matcher: the closest def is suggested (issue 36, item 4).
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: unknown-op-typo.td:[[@LINE+2]]:21: error: Variable not defined: 'Negat'
// CHECK: unknown-op-typo.td:[[@LINE+1]]:21: note: did you mean 'Negate'?
def NegNeg2 : Rule<(Negat (Negate $a)), (replaceWith $a)>;
}
