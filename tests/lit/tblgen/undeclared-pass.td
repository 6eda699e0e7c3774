// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
// A Pass no RewritePass record declares would become a pass no pipeline runs: an error at
// generation, with the closest declared pass (issue 36, item 4).
include "base/Common.td"
let Pass = "algsimpp" in {
// CHECK: undeclared-pass.td:[[@LINE+1]]:5: error: in rule 'AddZeroTypo': Pass 'algsimpp' is not a rewrite pass (did you mean 'algsimp'?): no pipeline runs it. Declared (RewritePass records): algsimp, my-pass; a new rule-driven pass needs `def : RewritePass<"algsimpp">;` (rules/base/Dsl.td) and an entry in a pipeline (pipelines/*.yaml)
def AddZeroTypo : Rule<(Add $a, (Zero)), (replaceWith $a)>;
}
// A declared pass is accepted.
def : RewritePass<"my-pass">;
let Pass = "my-pass" in {
def AddZeroMine : Rule<(Add $a, (Zero)), (replaceWith $a)>;
// CHECK-NOT: AddZeroMine
}
