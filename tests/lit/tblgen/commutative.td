// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
let Pass = "algsimp", Commutative = 1 in {
// CHECK: commutative.td:[[@LINE+1]]:5: error: in rule 'NegComm': Commutative is set but the root (Negate) has 1 operands in the pattern; it needs exactly two
def NegComm : Rule<(Negate $a), (replaceWith $a)>;
// CHECK: commutative.td:[[@LINE+1]]:5: error: in rule 'SelComm': Commutative is set but the root (Select) has 3 operands
def SelComm : Rule<(Select $p, $a, $a), (replaceWith $a)>;
// CHECK: commutative.td:[[@LINE+1]]:5: error: in rule 'MatchComm': Commutative is set but the root is a Matcher
def MatchComm : Rule<(Zero:$z), (replaceWith $z)>;
}
