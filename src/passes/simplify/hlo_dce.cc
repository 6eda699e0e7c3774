// dce, after XLA's HloDCE (xla/hlo/transforms/simplifiers/hlo_dce.cc): computations are
// visited from the entry, callers before callees (so a fusion's unused outputs are cut before
// its fused computation is cleaned); each drops its dead roots in reverse post order together
// with the operands that die with them; computations left without a live caller are removed.
// Dead parameters stay: removing them would renumber the rest (XLA keeps entry parameters too).
#include "passes/simplify/hlo_dce.h"

#include <set>
#include <stack>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// XLA lets a frontend say that a side-effecting op may (or may not) be removed when dead.
constexpr char kDceSideEffectAttribute[] = "xla_allow_dce_side_effecting_op";

bool HasDceAttr(const HloInstruction* inst, const char* value) {
  if (inst == nullptr) return false;
  auto it = inst->attrs().frontend_attributes.find(kDceSideEffectAttribute);
  return it != inst->attrs().frontend_attributes.end() && it->second == value;
}

bool IsAsync(const HloInstruction& inst) {
  return inst.opcode() == O::kAsyncStart || inst.opcode() == O::kAsyncUpdate || inst.opcode() == O::kAsyncDone;
}

// The async-start an async-update/done belongs to; null for other instructions.
const HloInstruction* AsyncChainStart(const HloInstruction& inst) {
  if (!IsAsync(inst)) return nullptr;
  const HloInstruction* cur = &inst;
  // Chains are short; the bound keeps a malformed cycle from looping.
  for (int steps = 0; cur != nullptr && steps < 1 << 20; ++steps) {
    if (cur->opcode() == O::kAsyncStart) return cur;
    if (!IsAsync(*cur) || cur->operand_count() == 0) return nullptr;
    cur = cur->operand(0);
  }
  return nullptr;
}

// XLA's HloCollectiveInstruction family (all-gather, all-reduce, all-to-all, reduce-scatter,
// collective-broadcast, ragged-all-to-all and the async starts).
bool IsCollectiveInstruction(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case O::kAllGather: case O::kAllGatherStart: case O::kAllReduce: case O::kAllReduceStart:
    case O::kAllToAll: case O::kReduceScatter: case O::kCollectiveBroadcast: case O::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

// A collective that remove_cross_partition_collective_ops lets DCE remove.
bool IsRemovableCollective(const HloInstruction& inst, const DceOptions& options) {
  const HloInstruction* op = &inst;
  if (IsAsync(inst)) {  // the op an async chain wraps
    const HloInstruction* start = AsyncChainStart(inst);
    if (start == nullptr || start->called_computations().empty() || start->called_computations()[0] == nullptr)
      return false;
    op = start->called_computations()[0]->root_instruction();
    if (op == nullptr) return false;
  }
  return options.remove_cross_partition_collective_ops && IsCollectiveInstruction(*op) && !op->attrs().constrain_layout;
}

bool IsRemovableWhile(const HloInstruction& inst, const DceOptions& options) {
  if (inst.opcode() != O::kWhile) return false;
  for (const HloComputation* c : inst.called_computations()) {
    if (c == nullptr) continue;
    for (const auto& called : c->instructions())
      if (HasSideEffect(*called) && !IsRemovableCollective(*called, options)) return false;
  }
  return true;
}

bool CanRemoveInstruction(const HloInstruction& inst, const DceOptions& options) {
  if (!IsDead(inst) || !IsSafelyRemovable(inst)) return false;
  const InstructionAttributes& a = inst.attrs();
  // XLA keeps a dead Sharding annotation whose operand it would otherwise leave unannotated.
  if (inst.opcode() == O::kCustomCall && a.custom_call_target == "Sharding" && inst.operand_count() > 0) {
    const HloInstruction* op = inst.operand(0);
    if (op->IsRoot() || op->opcode() == O::kParameter || op->user_count() != 1) return false;
  }
  if (HasDceAttr(&inst, "false") || HasDceAttr(AsyncChainStart(inst), "false")) return false;
  if (HasSideEffect(inst)) {
    bool allow_collective = IsRemovableCollective(inst, options);
    bool allow_while = IsRemovableWhile(inst, options);
    bool allow_custom_call = ((inst.opcode() == O::kCustomCall && a.custom_call_target == "tpu_custom_call") ||
                              IsAsync(inst)) &&
                             (HasDceAttr(&inst, "true") || HasDceAttr(AsyncChainStart(inst), "true"));
    if (!allow_collective && !allow_while && !allow_custom_call) return false;
  }
  return true;
}

// A multi-output fusion whose users read only some outputs (through get-tuple-elements) keeps
// only those (and side-effecting ones); the fused root tuple shrinks to match.
absl::StatusOr<bool> RemoveMultiOutputFusionsUnusedOutputs(HloComputation& computation) {
  HloInstruction* fusion = computation.FusionInstruction();
  if (fusion == nullptr) return false;
  HloInstruction* root = computation.root_instruction();
  if (root == nullptr || root->opcode() != O::kTuple || root->attrs().sharding ||
      !fusion->attrs().output_to_operand_aliasing.empty() || HasControlDependencies(*fusion) ||
      fusion->attrs().fusion_kind == FusionKind::kCustom || fusion->IsRoot() || fusion->users().empty() ||
      !fusion->shape().IsTuple() || fusion->shape().tuple_shapes().size() != root->operands().size())
    return false;
  std::set<int64_t> used;
  for (HloInstruction* gte : fusion->users()) {
    if (gte->opcode() != O::kGetTupleElement) return false;
    used.insert(gte->attrs().tuple_index);
  }
  for (int64_t i = 0; i < root->operand_count(); ++i)
    if (!used.count(i) && HasSideEffect(*root->operand(i))) used.insert(i);
  if (static_cast<int64_t>(used.size()) == root->operand_count()) return false;
  for (int64_t i : used)
    if (i < 0 || i >= root->operand_count()) return false;

  std::vector<Shape> shapes;
  for (int64_t i : used) shapes.push_back(fusion->shape().tuple_shapes(i));
  const bool single = shapes.size() == 1;
  fusion->mutable_shape() = single ? shapes[0] : Shape::Tuple(shapes);

  if (!single) {
    for (HloInstruction* gte : fusion->users()) {
      int64_t old_index = gte->attrs().tuple_index;
      gte->mutable_attrs().tuple_index = std::distance(used.begin(), used.find(old_index));
    }
  } else {
    std::vector<HloInstruction*> users = fusion->users();
    for (HloInstruction* gte : users) {
      ReplaceOptions opts;
      opts.preserve_sharding = true;
      opts.relay_control_dependency = true;
      auto replaced = ReplaceInstruction(gte, fusion, opts);
      if (!replaced.ok()) return replaced.status();
    }
  }

  if (!single) {
    std::vector<HloInstruction*> operands;
    for (int64_t i : used) operands.push_back(root->operand(i));
    auto tuple = std::make_unique<HloInstruction>(O::kTuple, fusion->shape(), root->name());
    for (HloInstruction* op : operands) tuple->AppendOperand(op);
    NameUniquer names;
    if (computation.parent() != nullptr) names = InstructionNameUniquer(*computation.parent());
    HloInstruction* new_root = AddInstructionWithUniqueName(computation, std::move(tuple), names, root);
    computation.set_root_instruction(new_root);
    if (HasControlDependencies(*root)) return true;  // left for a later run; it is dead now
    absl::Status st = RemoveInstructionAndUnusedOperands(root);
    if (!st.ok()) return st;
  } else {
    // The old root tuple becomes dead and goes with the dead roots.
    computation.set_root_instruction(root->operand(*used.begin()));
  }
  return true;
}

absl::StatusOr<bool> RemoveDeadRoots(HloComputation& computation, const DceOptions& options) {
  bool changed = false;
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  absl::flat_hash_set<const HloInstruction*> removed;
  std::vector<const HloInstruction*> just_removed;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    HloInstruction* inst = *it;
    if (removed.contains(inst)) continue;  // went with an earlier dead root; do not touch it
    if (!CanRemoveInstruction(*inst, options)) continue;
    just_removed.clear();
    absl::Status st = RemoveInstructionAndUnusedOperands(inst, false, &just_removed);
    if (!st.ok()) return st;
    removed.insert(just_removed.begin(), just_removed.end());
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> HloDcePass::RunOnComputation(HloComputation& computation, const DceOptions& options) {
  auto fusion_changed = RemoveMultiOutputFusionsUnusedOutputs(computation);
  if (!fusion_changed.ok()) return fusion_changed.status();
  auto roots_changed = RemoveDeadRoots(computation, options);
  if (!roots_changed.ok()) return roots_changed.status();
  return *fusion_changed || *roots_changed;
}

absl::StatusOr<bool> HloDcePass::RunOnModule(HloModule& module, const DceOptions& options) {
  HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has no entry"));
  bool changed = false;
  // Reachability from the entry through the instructions that survive.
  absl::flat_hash_set<HloComputation*> unreached;
  for (const auto& c : module.computations()) unreached.insert(c.get());
  unreached.erase(entry);
  std::stack<HloComputation*> agenda;
  agenda.push(entry);
  while (!agenda.empty()) {
    HloComputation* computation = agenda.top();
    agenda.pop();
    auto c = RunOnComputation(*computation, options);
    if (!c.ok()) return c.status();
    changed |= *c;
    for (const auto& inst : computation->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (callee != nullptr && unreached.erase(callee) > 0) agenda.push(callee);
  }
  if (!unreached.empty()) {
    // All at once: one walk over the module (one per computation was quadratic).
    absl::Status st = module.RemoveComputations({unreached.begin(), unreached.end()});
    if (!st.ok()) return st;
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> HloDcePass::Run(HloModule& module, PassContext&) { return RunOnModule(module, options_); }

void RegisterDcePass(PassRegistry& registry) {
  PassInfo info;
  info.name = "dce";
  info.description = "dead code elimination: unused instructions, unused fusion outputs, uncalled computations";
  info.options.push_back({"remove_cross_partition_collective_ops", OptionType::kBool, OptionValue(false),
                          "also remove dead collectives (and whiles holding them) that lack constrain_layout"});
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    DceOptions options;
    if (o.Has("remove_cross_partition_collective_ops"))
      options.remove_cross_partition_collective_ops = o.GetBool("remove_cross_partition_collective_ops");
    return std::make_unique<HloDcePass>(options);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
