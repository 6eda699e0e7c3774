// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
// An opcode written as XLA's text name ("sine") instead of its Op (Sin): TableGen's own error,
// then which Op was meant (issue 36, item 4).
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: unknown-op-suggest.td:[[@LINE+2]]:22: error: Variable not defined: 'Sine'
// CHECK: unknown-op-suggest.td:[[@LINE+1]]:22: note: did you mean 'Sin'? (the Op for XLA's 'sine', rules/base/Ops.td)
def SinOfNeg : Rule<(Sine (Negate $a)), (Negate (Sin $a))>;
}
