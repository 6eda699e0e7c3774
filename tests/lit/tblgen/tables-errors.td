// RUN: not hloc-tblgen --gen-all -I %rules %s 2>&1 | FileCheck %s
include "base/Common.td"
include "base/Layout.td"
include "base/Fusion.td"
// CHECK: tables-errors.td:[[@LINE+1]]:5: error: Operand -7 is not an operand index, Result.Index (-1) or EveryOperand.Index (-2)
def BadOperand : LayoutConstraint<Dot, -7, ContractingMinor>;
// CHECK: tables-errors.td:[[@LINE+1]]:5: error: fusion veto 'NoReason' needs a reason
def NoReason : FusionVeto<"", [(HasOneUse $producer)]>;
// CHECK: tables-errors.td:[[@LINE+1]]:5: error: in fusion veto 'BadName': $other is unbound: a veto's conditions may use $producer and $consumer
def BadName : FusionVeto<"because", [(SameShape $producer, $other)]>;
// CHECK: tables-errors.td:[[@LINE+1]]:5: error: Fusible 'NoKinds' lists no fusion kinds
def NoKinds : Fusible<Add, []>;
