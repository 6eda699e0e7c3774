#include "passes/simplify/while_loop_trip_count_annotator.h"

#include <limits>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

// The constant the loop's induction variable starts from: XLA's MatchTrivialLoopRange wants
// a constant operand of the init tuple (looking through copies and gte(tuple) pairs).
std::optional<int64_t> ConstantInit(const HloInstruction* while_op, int64_t index) {
  const HloInstruction* init = while_op->operand(0);
  if (init->opcode() != HloOpcode::kTuple || index >= init->operand_count()) return std::nullopt;
  const HloInstruction* value = cf::TraceThroughCopyAndGteTupleChain(init->operand(index));
  if (value->opcode() != HloOpcode::kConstant || !value->attrs().literal.has_value()) return std::nullopt;
  return cf::LiteralAsScalarInt64(*value->attrs().literal);
}

// The k > 0 of the body's `i = i + k` (either operand order), if that is the update.
std::optional<int64_t> ConstantStep(const HloInstruction* while_op, int64_t index) {
  const HloComputation* body = while_op->while_body();
  const HloInstruction* root = body->root_instruction();
  if (root->opcode() != HloOpcode::kTuple || index >= root->operand_count()) return std::nullopt;
  const HloInstruction* update = cf::TraceThroughCopyAndGteTupleChain(root->operand(index));
  if (update->opcode() != HloOpcode::kAdd || update->operand_count() != 2) return std::nullopt;
  const HloInstruction* indvar = cf::GetUniqueGteInstruction(body->parameter_instruction(0), index);
  if (indvar == nullptr) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    if (cf::TraceThroughCopyAndGteTupleChain(update->operand(side)) != indvar) continue;
    const HloInstruction* step = update->operand(1 - side);
    if (step->opcode() != HloOpcode::kConstant || !step->attrs().literal.has_value()) return std::nullopt;
    std::optional<int64_t> k = cf::LiteralAsScalarInt64(*step->attrs().literal);
    if (!k || *k <= 0) return std::nullopt;
    return k;
  }
  return std::nullopt;
}

// Whether `v` is representable in the integral type `t` (the induction variable's), so that
// a constant of the final value means what the loop computed (no wrap-around).
bool FitsIn(PrimitiveType t, int64_t v) {
  switch (t) {
    case PrimitiveType::S8: return v >= -128 && v <= 127;
    case PrimitiveType::S16: return v >= -32768 && v <= 32767;
    case PrimitiveType::S32:
      return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
    case PrimitiveType::S64: return true;
    case PrimitiveType::U8: return v >= 0 && v <= 255;
    case PrimitiveType::U16: return v >= 0 && v <= 65535;
    case PrimitiveType::U32: return v >= 0 && v <= int64_t{0xFFFFFFFF};
    case PrimitiveType::U64: return v >= 0;
    default: return false;
  }
}

// XLA's ForwardInductionVarToConstants: after the loop the induction variable is known to be
// init + step * trips, so its get-tuple-elements of the while's result become that constant.
absl::StatusOr<bool> ForwardInductionVarToConstants(cf::Builder& b, HloInstruction* while_op, int64_t index,
                                                    int64_t final_value) {
  std::vector<HloInstruction*> gtes;
  for (HloInstruction* user : while_op->users())
    if (user->opcode() == HloOpcode::kGetTupleElement && user->attrs().tuple_index == index) gtes.push_back(user);
  bool changed = false;
  for (HloInstruction* gte : gtes) {
    if (!gte->shape().IsArray() || !cf::IsScalar(gte->shape()) || !FitsIn(gte->shape().element_type(), final_value))
      continue;
    if (gte->users().empty() && !gte->IsRoot()) continue;  // nothing reads it
    // A gte with control edges keeps them; XLA only redirects uses, so do the same.
    HloInstruction* constant =
        b.Constant(gte->parent(), Literal::ScalarInt(gte->shape().element_type(), final_value), gte);
    gte->ReplaceAllUsesWith(constant);
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> WhileLoopTripCountAnnotator::Run(HloModule& module, PassContext&) {
  std::vector<HloInstruction*> whiles;
  for (const auto& comp : module.computations())
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kWhile) whiles.push_back(inst.get());
  if (whiles.empty()) return false;

  cf::Builder b(module);
  bool changed = false;
  for (HloInstruction* w : whiles) {
    if (w->while_condition() == nullptr || w->while_body() == nullptr) continue;
    std::optional<int64_t> index = cf::GetLoopInductionVarTupleIdx(w);
    if (!index) continue;

    std::string config = absl::StrCat("{\"dynamic_variables\":[],\"known_induction_variable\":{\"tuple_index\":\"",
                                      *index, "\"}");
    std::optional<int64_t> init = ConstantInit(w, *index);
    std::optional<int64_t> step = init ? ConstantStep(w, *index) : std::nullopt;
    std::optional<int64_t> trips;
    if (init && step) {
      // MatchTrivialLoopTripCount checks the condition is `i < c` or `i <= c`; XLA records
      // init and step only for such a bounded, non-empty range with non-negative bounds.
      Literal init_literal = Literal::ScalarInt(PrimitiveType::S64, *init);
      trips = cf::MatchTrivialLoopTripCount(w, *index, init_literal);
      if (trips && *trips > 0 && *init >= 0) {
        absl::StrAppend(&config, ",\"known_init_step\":{\"init\":\"", *init, "\",\"step\":\"", *step, "\"}");
        // The counter leaves the loop at init + step * trips (computed with overflow checks;
        // FitsIn then rejects a value the counter's type cannot hold).
        int64_t final_value;
        if (!__builtin_mul_overflow(*step, *trips, &final_value) &&
            !__builtin_add_overflow(final_value, *init, &final_value)) {
          absl::StatusOr<bool> fwd = ForwardInductionVarToConstants(b, w, *index, final_value);
          if (!fwd.ok()) return fwd.status();
          changed |= *fwd;
        }
      }
    }
    if (!trips) trips = cf::ComputeWhileLoopTripCount(w);
    if (trips) absl::StrAppend(&config, ",\"known_trip_count\":{\"n\":\"", *trips, "\"}");
    absl::StrAppend(&config, "}");
    if (w->attrs().backend_config != config) {
      w->mutable_attrs().backend_config = config;
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
