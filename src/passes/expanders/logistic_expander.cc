#include "passes/expanders/logistic_expander.h"

#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

// XLA's MakeScalarLike: a constant of x's element type, broadcast to x's shape unless x is a
// scalar.
HloInstruction* ScalarLike(ExpanderBuilder& b, const HloInstruction* x, double v) {
  HloInstruction* c = b.ScalarConstant(x->shape().element_type(), v);
  if (c == nullptr || x->shape().rank() == 0) return c;
  return b.BroadcastScalar(c, x->shape());
}

}  // namespace

absl::StatusOr<bool> LogisticExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  return expanders::RunOpExpander(
      module, [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kLogistic; },
      [&](HloInstruction* logistic) -> absl::StatusOr<HloInstruction*> {
        HloInstruction* x = logistic->operand(0);
        ExpanderBuilder b(logistic->parent(), &names, logistic);
        HloInstruction* result = nullptr;
        if (type_ == ExpansionType::kTanh) {
          // 0.5 + 0.5 * tanh(0.5 * x)
          HloInstruction* half = ScalarLike(b, x, 0.5);
          HloInstruction* tanh = b.Unary(HloOpcode::kTanh, b.Mul(half, x));
          result = b.Add(half, b.Mul(half, tanh));
        } else {
          // 1 / (1 + exp(-x))
          HloInstruction* one = ScalarLike(b, x, 1.0);
          HloInstruction* exp = b.Unary(HloOpcode::kExp, b.Unary(HloOpcode::kNegate, x));
          result = b.Div(one, b.Add(one, exp));
        }
        if (!b.ok()) {
          b.Discard();
          return b.status();
        }
        return result;
      });
}

}  // namespace hloc
