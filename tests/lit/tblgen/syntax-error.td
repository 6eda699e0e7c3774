// TableGen's own errors (undefined records, syntax) are located too.
// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: syntax-error.td:[[@LINE+1]]:28: error: Variable not defined: 'Nonexistent'
def Undefined : Rule<(Add (Nonexistent $a), $b), (replaceWith $b)>;
}
