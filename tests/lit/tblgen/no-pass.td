// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
// CHECK: no-pass.td:[[@LINE+1]]:5: error: in rule 'NoPass': rule 'NoPass' has no Pass
def NoPass : Rule<(Add $a, (Zero)), (replaceWith $a)>;
// CHECK: no-pass.td:[[@LINE+1]]:1: error: in rule 'anonymous_{{[0-9]+}}': a rule needs a name
def : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Pass = "algsimp"; }
