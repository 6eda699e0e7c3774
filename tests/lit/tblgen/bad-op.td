// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
// An Op whose text name is not an HLO opcode.
def Frobnicate : Op<"frobnicate">;
let Pass = "algsimp" in {
// CHECK: bad-op.td:[[@LINE+1]]:5: error: in rule 'UsesBadOp': Op 'Frobnicate' names no HLO opcode (its Name is not in src/ir/opcode.h)
def UsesBadOp : Rule<(Frobnicate $a), (replaceWith $a)>;
}
