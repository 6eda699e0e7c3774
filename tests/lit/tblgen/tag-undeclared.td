// A tag no Tag record declares is an undefined name: TableGen reports it at its line and
// column, and nothing is generated.
// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: tag-undeclared.td:[[@LINE+2]]:71: error: Variable not defined: 'InexactLikeXLA'
// CHECK: note: did you mean 'InexactLikeXla'?
def AddZeroT : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Tags = [InexactLikeXLA]; }
}
