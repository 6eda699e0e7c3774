// A misspelt op in an op set is an undefined name: TableGen reports it at its line and column.
// RUN: not hloc-tblgen --gen-fusion -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
include "base/Fusion.td"
// CHECK: op-set-undefined.td:[[@LINE+2]]:32: error: Variable not defined: 'Negat'
// CHECK: note: did you mean 'Negate'?
def Typo : Fusible<OpSet<[Abs, Negat]>, [LoopFusion]>;
