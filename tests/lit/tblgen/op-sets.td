// Op sets (rules/base/Dsl.td): a rule, a Fusible row or an OpCost row that names an OpSet is
// generated as if written once per member op, each copy with the record's name and line.
// RUN: hloc-tblgen --gen-rules -I %rules %s | FileCheck %s --check-prefix=RULES
// RUN: hloc-tblgen --gen-fusion -I %rules %s | FileCheck %s --check-prefix=FUSION
include "base/Common.td"
include "base/Fusion.td"

def NegAbs : OpSet<[Negate, Abs]>;
let Pass = "algsimp" in {
// op(op(x)) => op(x) for op in negate, abs (only the expansion is tested here)
def Twice : Rule<(NegAbs (NegAbs:$i $x)), (replaceWith $i)>;
}
// One symbol for the rule's name, one function per member, each matching that op only.
// RULES: extern "C" const char hloc_rule_name_Twice[] = "{{.*}}op-sets.td:11";
// RULES: static bool Rule_Twice_Negate(
// RULES-NEXT: if (root->opcode() != HloOpcode::kNegate || root->operand_count() != 1) return ctx.Refuse("no Negate at (NegAbs (NegAbs:$i $x))");
// RULES-NEXT: HloInstruction* n0 = root->operand(0);
// RULES-NEXT: if (n0->opcode() != HloOpcode::kNegate || n0->operand_count() != 1) return ctx.Refuse("no Negate at (NegAbs:$i $x)");
// RULES: static bool Rule_Twice_Abs(
// RULES-NEXT: if (root->opcode() != HloOpcode::kAbs || root->operand_count() != 1) return ctx.Refuse("no Abs at (NegAbs (NegAbs:$i $x))");
// RULES-NEXT: HloInstruction* n0 = root->operand(0);
// RULES-NEXT: if (n0->opcode() != HloOpcode::kAbs || n0->operand_count() != 1) return ctx.Refuse("no Abs at (NegAbs:$i $x)");
// RULES: const RuleInfo kRules[] = {
// RULES-NEXT: {"Twice", "algsimp", "", 0, "{{.*}}op-sets.td", 11, static_cast<int>(HloOpcode::kNegate),
// RULES-NEXT: "op(op(x)) => op(x) for op in negate, abs (only the expansion is tested here)", Rule_Twice_Negate, nullptr, 0},
// RULES-NEXT: {"Twice", "algsimp", "", 0, "{{.*}}op-sets.td", 11, static_cast<int>(HloOpcode::kAbs),
// RULES-NEXT: Rule_Twice_Abs, nullptr, 0},
// RULES: // 1 rule(s), 2 after expanding op sets.

// A trait query: the explicit ops first, then every op with the trait (rules/base/Ops.td
// order), less the exceptions.
def MovesFusible : Fusible<OpSet<[Iota], [MovesValuesOnly], [Copy, Gather]>, [LoopFusion]>;
// FUSION: const FusibleInfo kFusible[] = {
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kIota), kKinds_MovesFusible, 1, true, true,
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kBitcast),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kBroadcast),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kConcatenate),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kDynamicSlice),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kDynamicUpdateSlice),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kPad),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kReshape),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kReverse),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kSlice),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: {"MovesFusible", static_cast<int>(HloOpcode::kTranspose),
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 32},
// FUSION-NEXT: };

// A named set in an OpCost row: one row per op, each with the class's facts.
def NegAbsCost : OpCost<NegAbs, ExpensiveOp>;
// FUSION: const OpCostInfo kOpCosts[] = {
// FUSION-NEXT: {"NegAbsCost", static_cast<int>(HloOpcode::kNegate), "ExpensiveOp", 20,
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 59, false, true},
// FUSION-NEXT: {"NegAbsCost", static_cast<int>(HloOpcode::kAbs), "ExpensiveOp", 20,
// FUSION-NEXT: "{{.*}}", "{{.*}}op-sets.td", 59, false, true},
// FUSION-NEXT: };
