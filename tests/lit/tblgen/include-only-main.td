// Only the main file's rules are emitted; an included rule file's rules are its own file's.
// RUN: hloc-tblgen --gen-rules -I %rules -I %S/Inputs --source-root %S %s | FileCheck %s
include "Included.td"
let Pass = "algsimp" in
// x - 0 => x
def MainRule : Rule<(Subtract $x, (Zero)), (replaceWith $x)>;
// CHECK: // include-only-main.td:[[@LINE-1]]
// CHECK-NEXT: static bool Rule_MainRule(RewriteContext& ctx, HloInstruction* root) {
// CHECK-NEXT:   if (root->opcode() != HloOpcode::kSubtract || root->operand_count() != 2) return ctx.Refuse("no Subtract at (Subtract $x, (Zero))");
// CHECK-NEXT:   {{\[\[maybe_unused\]\]}} HloInstruction* v_x = root->operand(0);
// CHECK-NEXT:   HloInstruction* n0 = root->operand(1);
// CHECK-NEXT:   if (!rules::IsZero(n0)) return ctx.Refuse("matcher (Zero) failed");
// CHECK-NEXT:   return ctx.Replace(root, v_x);
// CHECK: {"MainRule", "algsimp", "", 0, "include-only-main.td", [[@LINE-8]], static_cast<int>(HloOpcode::kSubtract), nullptr, 0,
// CHECK-NEXT: "x - 0 => x", Rule_MainRule, nullptr, 0},
// CHECK: void RegisterRules_include_only_main(RuleRegistry& registry) {
// CHECK-NOT: IncludedRule
