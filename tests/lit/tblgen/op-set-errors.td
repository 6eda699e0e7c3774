// Op-set mistakes are errors at the record that uses the set (file:line:col), with a note at
// a named set's def; every one of a file is reported, and generation fails.
// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s --check-prefix=RULES
// RUN: not hloc-tblgen --gen-fusion -I %rules %s 2>&1 | FileCheck %s --check-prefix=FUSION
include "base/Common.td"
include "base/Fusion.td"

// An Op whose text name is not an HLO opcode.
def Frobnicate : Op<"frobnicate">;
def Nothing : OpSet<[]>;
def WithBogus : OpSet<[Negate, Frobnicate]>;
def NegAbs : OpSet<[Negate, Abs]>;
def AddSub : OpSet<[Add, Subtract]>;

let Pass = "algsimp" in {
// RULES: op-set-errors.td:[[@LINE+2]]:5: error: op set 'Nothing' is empty
// RULES-NEXT: def EmptySetRule
def EmptySetRule : Rule<(Nothing $x), (replaceWith $x)>;
// RULES: op-set-errors.td:10:5: note: op set 'Nothing' is defined here
// RULES: op-set-errors.td:[[@LINE+1]]:5: error: op set 'WithBogus' names 'Frobnicate', which names no HLO opcode (not in src/ir/opcode.h)
def UnknownOpRule : Rule<(WithBogus $x), (replaceWith $x)>;
// RULES: op-set-errors.td:11:5: note: op set 'WithBogus' is defined here
// RULES: op-set-errors.td:[[@LINE+1]]:5: error: in rule 'TwoSets': it names two op sets, 'NegAbs' and 'AddSub'; a rule ranges over one op set
def TwoSets : Rule<(NegAbs (AddSub $x, $y)), (replaceWith $x)>;
// Each member is checked as written: negate and abs take one operand, not two.
// RULES: op-set-errors.td:[[@LINE+1]]:5: error: in rule 'Arity' (for Negate of its op set): Negate takes 1 operand(s), but the pattern gives it 2
def Arity : Rule<(NegAbs $x, $y), (replaceWith $x)>;
}

// FUSION: op-set-errors.td:[[@LINE+1]]:5: error: op set 'OpSet<...>' is empty
def EmptyFusible : Fusible<OpSet<[]>, [LoopFusion]>;
// FUSION: op-set-errors.td:[[@LINE+1]]:5: error: op set 'WithBogus' names 'Frobnicate', which names no HLO opcode
def BogusCost : OpCost<WithBogus, CheapOp>;
// FUSION: op-set-errors.td:[[@LINE+1]]:5: error: op set 'OpSet<...>' excepts 'Add', which is not a member
def ExceptNonMember : Fusible<OpSet<[Negate], [], [Add]>, [LoopFusion]>;
// FUSION: op-set-errors.td:[[@LINE+1]]:5: error: op set 'OpSet<...>' lists 'Negate' twice
def Twice : Fusible<OpSet<[Negate, Abs, Negate]>, [LoopFusion]>;
// A second row for an op in one file: the engines would read only one of them.
def NegAbsCost : OpCost<NegAbs, CheapOp>;
// FUSION: op-set-errors.td:[[@LINE+2]]:5: error: OpCost 'NegCost' gives 'Negate' a second row; it already has one from 'NegAbsCost'
// FUSION: op-set-errors.td:[[@LINE-2]]:5: note: the first row is here
def NegCost : OpCost<Negate, ExpensiveOp>;
