// Every bad rule of a file is reported in one run, and nothing is written.
// RUN: rm -f %t.cc
// RUN: not hloc-tblgen --gen-rules -I %rules %s -o %t.cc 2>&1 | FileCheck %s
// RUN: not test -e %t.cc
include "base/Common.td"
let Pass = "algsimp" in {
// CHECK: multiple-errors.td:[[@LINE+1]]:5: error: in rule 'First'
def First : Rule<(Add $a, $b), (replaceWith $c)>;
def Fine : Rule<(Add $a, (Zero)), (replaceWith $a)>;
// CHECK: multiple-errors.td:[[@LINE+1]]:5: error: in rule 'Second'
def Second : Rule<(Negate $a, $b), (replaceWith $a)>;
}
