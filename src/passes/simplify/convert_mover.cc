#include "passes/simplify/convert_mover.h"

#include <deque>

#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

// Whether `literal` survives a round trip through `type` unchanged.
bool IsLosslesslyConvertibleTo(const Literal& literal, PrimitiveType type) {
  absl::StatusOr<Literal> there = cf::ConvertLiteral(literal, type);
  if (!there.ok()) return false;
  absl::StatusOr<Literal> back = cf::ConvertLiteral(*there, literal.element_type());
  return back.ok() && *back == literal;
}

// Ops with convert(op(x)) == op(convert(x)). Left out as in XLA: ops where only some
// operands would convert (dynamic-slice, gather, ...), bitcast (layout-dependent) and
// reductions (the reducer need not commute with the convert). Five of the MovesValuesOnly
// trait's ops (rules/base/Ops.td), not the trait: XLA moves converts across these only.
bool OpCommutesWithConvert(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kConcatenate:
    case HloOpcode::kPad:
    case HloOpcode::kReshape:
    case HloOpcode::kSlice:
    case HloOpcode::kTranspose:
      return true;
    default:
      return false;
  }
}

// Packed sub-byte types (s4, u4, f4e2m1fn, ...) are not supported by most ops.
bool IsSubByteNonPred(PrimitiveType t) { return t != PrimitiveType::PRED && BitWidth(t) < 8; }

absl::StatusOr<bool> MoveConverts(cf::Builder& b, HloComputation* comp) {
  bool changed = false;
  // Widening converts move down: op(convert(x), ...) -> convert(op(x, ...)). Operands are
  // converts of one source type (each used only here) or constants.
  for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
    if (!OpCommutesWithConvert(inst->opcode()) || inst->operand_count() == 0 || cf::HasControlDependencies(*inst))
      continue;
    const HloInstruction* convert = nullptr;
    bool ok = true;
    for (const HloInstruction* op : inst->operands()) {
      if (op->opcode() == HloOpcode::kConvert && op->user_count() == 1) {
        if (convert == nullptr) convert = op;
        ok &= op->operand(0)->shape().element_type() == convert->operand(0)->shape().element_type();
      } else {
        ok &= op->opcode() == HloOpcode::kConstant;
      }
    }
    if (!ok || convert == nullptr) continue;
    PrimitiveType src = convert->operand(0)->shape().element_type();
    PrimitiveType dst = convert->shape().element_type();
    if (BitWidth(src) >= BitWidth(dst) || IsSubByteNonPred(src)) continue;
    // pad(convert_f32(x_f16), c_f32) becomes convert_f32(pad(x_f16, convert_f16(c_f32))) only
    // when c_f32 is exactly representable in f16.
    bool constants_fit = true;
    for (const HloInstruction* op : inst->operands())
      if (op->opcode() == HloOpcode::kConstant)
        constants_fit &= op->attrs().literal.has_value() && IsLosslesslyConvertibleTo(*op->attrs().literal, src);
    if (!constants_fit) continue;

    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands())
      operands.push_back(op->opcode() == HloOpcode::kConvert ? op->operand(0) : b.Convert(comp, op, src, inst));
    Shape narrow = inst->shape();
    narrow.set_element_type(src);
    HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * moved, b.CloneWithNewOperands(*inst, narrow, operands, inst));
    HloInstruction* widened = b.Convert(comp, moved, dst, inst);
    widened->mutable_shape() = inst->shape();
    HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(inst, widened));
    changed = true;
  }

  // Narrowing converts move up: convert(op(x, ...)) -> op(convert(x), ...). Walked from the
  // bottom, since each move exposes new converts above (they are queued next). The queue
  // holds unique ids: instructions it names may be removed (and their memory reused) before
  // they come up.
  absl::flat_hash_map<int64_t, HloInstruction*> alive;
  std::deque<int64_t> work;
  {
    std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      alive[(*it)->unique_id()] = *it;
      work.push_back((*it)->unique_id());
    }
  }
  while (!work.empty()) {
    auto found = alive.find(work.front());
    work.pop_front();
    if (found == alive.end()) continue;
    HloInstruction* inst = found->second;
    if (inst->opcode() != HloOpcode::kConvert || cf::HasControlDependencies(*inst)) continue;
    HloInstruction* producer = inst->operand(0);
    if (producer->user_count() != 1 || producer->IsRoot() || !OpCommutesWithConvert(producer->opcode()) ||
        cf::HasControlDependencies(*producer))
      continue;
    PrimitiveType src = producer->shape().element_type();
    PrimitiveType dst = inst->shape().element_type();
    if (BitWidth(src) <= BitWidth(dst) || IsSubByteNonPred(dst)) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : producer->operands()) {
      HloInstruction* narrowed = b.Convert(comp, op, dst, producer);
      alive[narrowed->unique_id()] = narrowed;
      work.push_front(narrowed->unique_id());
      operands.push_back(narrowed);
    }
    Shape narrow = producer->shape();
    narrow.set_element_type(dst);
    HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * moved, b.CloneWithNewOperands(*producer, narrow, operands, inst));
    moved->mutable_attrs().metadata = inst->attrs().metadata;
    inst->ReplaceAllUsesWith(moved);
    alive.erase(inst->unique_id());
    alive.erase(producer->unique_id());
    HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstruction(comp, inst));
    HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstruction(comp, producer));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> ConvertMover::Run(HloModule& module, PassContext& context) {
  (void)context;
  cf::Builder b(module);
  bool changed = false;
  std::vector<HloComputation*> comps;
  for (const auto& comp : module.computations())
    if (!comp->IsFusionComputation()) comps.push_back(comp.get());
  for (HloComputation* comp : comps) {
    HLOC_CF_ASSIGN_OR_RETURN(bool c, MoveConverts(b, comp));
    changed |= c;
  }
  return changed;
}

}  // namespace hloc
