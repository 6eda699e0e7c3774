#include "passes/simplify/while_loop_invariant_code_motion.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

using cf::Builder;

bool IsGteOfParam(const HloInstruction* inst, const HloInstruction* param) {
  return inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0) == param;
}

// Opcodes never hoisted: control flow and what must stay where it is.
bool Hoistable(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kParameter: case HloOpcode::kWhile: case HloOpcode::kConditional: case HloOpcode::kCall:
    case HloOpcode::kCustomCall: case HloOpcode::kTuple: case HloOpcode::kGetTupleElement:
    case HloOpcode::kAfterAll: case HloOpcode::kPartitionId: case HloOpcode::kReplicaId:
    case HloOpcode::kRng: case HloOpcode::kRngBitGenerator: case HloOpcode::kRngGetAndUpdateState:
      return false;
    default:
      break;
  }
  if (cf::HasSideEffect(inst) || cf::HasControlDependencies(inst)) return false;
  for (const HloInstruction* op : inst.operands())
    if (!op->shape().IsArray()) return false;
  return inst.shape().IsArray();
}

// Worth a slot in the loop state: not a constant alone, not free (bitcast/reshape/transpose of
// state, which cost nothing or fuse), not larger than its operands (XLA's size-inflating ops).
bool WorthHoisting(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kConstant: case HloOpcode::kBitcast: case HloOpcode::kReshape: case HloOpcode::kIota:
      return false;
    default:
      break;
  }
  int64_t in = 0;
  for (const HloInstruction* op : inst.operands()) in += op->shape().byte_size();
  return inst.shape().byte_size() <= in;
}

absl::StatusOr<bool> Hoist(Builder& b, HloInstruction* w) {
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  if (body->num_parameters() != 1 || cond->num_parameters() != 1) return false;
  if (b.callers.Of(body).size() != 1 || b.callers.Of(cond).size() != 1 || body == cond) return false;
  if (cf::HasControlDependencies(*w)) return false;
  HloInstruction* param = body->parameter_instruction(0);
  HloInstruction* root = body->root_instruction();
  if (!param->shape().IsTuple() || root->opcode() != HloOpcode::kTuple || root == param) return false;
  const int64_t n = static_cast<int64_t>(param->shape().tuple_shapes().size());
  if (root->operand_count() != n) return false;
  // Elements the body passes through unchanged.
  std::vector<bool> passed(n, false);
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* r = root->operand(i);
    passed[i] = IsGteOfParam(r, param) && r->attrs().tuple_index == i;
  }
  // Invariant instructions, in post order.
  absl::flat_hash_set<const HloInstruction*> invariant;
  const std::vector<HloInstruction*> order = body->MakeInstructionPostOrder();
  for (HloInstruction* inst : order) {
    if (IsGteOfParam(inst, param)) {
      if (passed[inst->attrs().tuple_index] && inst->shape().IsArray()) invariant.insert(inst);
      continue;
    }
    if (inst->opcode() == HloOpcode::kConstant) {
      invariant.insert(inst);
      continue;
    }
    if (!Hoistable(*inst)) continue;
    bool all = true;
    for (const HloInstruction* op : inst->operands()) all = all && invariant.count(op) > 0;
    if (all) invariant.insert(inst);
  }
  // The frontier: invariant values worth hoisting that something variant (or the root) reads.
  std::vector<HloInstruction*> frontier;
  for (HloInstruction* inst : order) {
    if (!invariant.count(inst) || IsGteOfParam(inst, param) || !WorthHoisting(*inst)) continue;
    bool read_by_variant = false;
    for (const HloInstruction* u : inst->users()) read_by_variant = read_by_variant || !invariant.count(u);
    if (read_by_variant) frontier.push_back(inst);
  }
  if (frontier.empty()) return false;
  // Clone the frontier's invariant trees before the loop.
  HloComputation* outer = w->parent();
  HloInstruction* init = w->operand(0);
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> outside;
  auto element = [&](int64_t i) -> HloInstruction* {
    if (init->opcode() == HloOpcode::kTuple) return init->operand(i);
    return b.Gte(outer, init, i, w);
  };
  // Only what the frontier reads is cloned.
  absl::flat_hash_set<const HloInstruction*> needed(frontier.begin(), frontier.end());
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    if (needed.count(*it))
      for (const HloInstruction* op : (*it)->operands()) needed.insert(op);
  for (HloInstruction* inst : order) {
    if (!invariant.count(inst) || !needed.count(inst)) continue;
    if (IsGteOfParam(inst, param)) {
      outside[inst] = element(inst->attrs().tuple_index);
      continue;
    }
    std::vector<HloInstruction*> ops;
    for (const HloInstruction* op : inst->operands()) ops.push_back(outside.at(op));
    absl::StatusOr<HloInstruction*> c = b.CloneWithNewOperands(*inst, inst->shape(), ops, w);
    if (!c.ok()) return c.status();
    outside[inst] = *c;
  }
  // The new loop state: the old elements, then the hoisted values.
  std::vector<HloInstruction*> elements;
  for (int64_t i = 0; i < n; ++i) elements.push_back(element(i));
  for (HloInstruction* f : frontier) elements.push_back(outside.at(f));
  HloInstruction* new_init = b.Tuple(outer, elements, w);
  const Shape old_shape = w->shape();
  const Shape state = new_init->shape();
  param->mutable_shape() = state;
  cond->parameter_instruction(0)->mutable_shape() = state;
  for (size_t j = 0; j < frontier.size(); ++j) {
    HloInstruction* in = b.Gte(body, param, n + static_cast<int64_t>(j), root);
    frontier[j]->ReplaceAllUsesWith(in);
    root->AppendOperand(in);
  }
  root->mutable_shape() = state;
  w->ReplaceOperandWith(0, new_init);
  w->mutable_shape() = state;
  // Readers of the whole loop result see the old tuple.
  std::vector<HloInstruction*> whole;
  for (HloInstruction* u : w->users())
    if (u->opcode() != HloOpcode::kGetTupleElement) whole.push_back(u);
  const bool is_root = outer->root_instruction() == w;
  if (!whole.empty() || is_root) {
    std::vector<HloInstruction*> olds;
    const HloInstruction* after = nullptr;
    const auto& list = outer->instructions();
    for (size_t i = 0; i + 1 < list.size(); ++i)
      if (list[i].get() == w) after = list[i + 1].get();
    for (int64_t i = 0; i < n; ++i) olds.push_back(b.Gte(outer, w, i, after));
    HloInstruction* t = b.Tuple(outer, olds, after);
    (void)old_shape;
    for (HloInstruction* u : whole)
      for (int64_t k = 0; k < u->operand_count(); ++k)
        if (u->operand(k) == w) u->ReplaceOperandWith(k, t);
    if (is_root) outer->set_root_instruction(t);
  }
  // The body's now-dead invariant instructions go.
  absl::StatusOr<bool> dead = cf::RemoveDeadInstructions(body);
  if (!dead.ok()) return dead.status();
  // New instructions went next to the loop or at the body's end: definitions before uses.
  for (HloComputation* c : {body, outer})
    if (absl::Status s = c->SetInstructionOrder(c->MakeInstructionPostOrder()); !s.ok()) return s;
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::Run(HloModule& module, PassContext& context) {
  (void)context;
  Builder b(module);
  bool changed = false;
  std::vector<HloInstruction*> loops;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (HloInstruction* inst : comp->MakeInstructionPostOrder())
      if (inst->opcode() == HloOpcode::kWhile) loops.push_back(inst);
  }
  for (HloInstruction* w : loops) {
    absl::StatusOr<bool> r = Hoist(b, w);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  return changed;
}

void RegisterWhileLoopInvariantCodeMotionPass(PassRegistry& registry) {
  PassInfo info;
  info.name = WhileLoopInvariantCodeMotion::kName;
  info.description = "loop-body work on loop state the body passes through -> computed once before the loop";
  info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> {
    return std::make_unique<WhileLoopInvariantCodeMotion>();
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
