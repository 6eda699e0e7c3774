// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: unbound-constraint.td:[[@LINE+1]]:5: error: in rule 'C': $z in constraint IsIntegral is unbound: bind it in the pattern
def C : Rule<(Subtract $x, $x), (ZeroLike $x), [(IsIntegral $z)]>;
// CHECK: unbound-constraint.td:[[@LINE+1]]:5: error: in rule 'U': (Unless ...) takes exactly one constraint DAG
def U : Rule<(Subtract $x, $x), (ZeroLike $x), [(Unless $x)]>;
// CHECK: unbound-constraint.td:[[@LINE+1]]:5: error: in rule 'K': unknown constraint 'Zero': a constraint DAG's operator must be a Constraint record, but it is a Matcher
def K : Rule<(Subtract $x, $x), (ZeroLike $x), [(Zero $x)]>;
}
