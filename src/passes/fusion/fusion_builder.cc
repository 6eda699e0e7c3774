#include "passes/fusion/fusion_builder.h"

#include <algorithm>
#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "passes/fusion/fusion_analysis.h"

namespace hloc::fusion {
namespace {

using O = HloOpcode;

// Members in an order where each comes after the members it uses.
std::vector<HloInstruction*> TopologicalMembers(const std::vector<HloInstruction*>& members,
                                                const absl::flat_hash_set<HloInstruction*>& group) {
  absl::flat_hash_map<HloInstruction*, int> pending;
  absl::flat_hash_map<HloInstruction*, std::vector<HloInstruction*>> users;
  auto member_of = [&](HloInstruction* op) -> HloInstruction* {
    if (group.contains(op)) return op;
    if (op->opcode() == O::kGetTupleElement && group.contains(op->operand(0))) return op->operand(0);
    return nullptr;
  };
  for (HloInstruction* m : members) {
    absl::flat_hash_set<HloInstruction*> deps;
    for (HloInstruction* op : m->operands())
      if (HloInstruction* d = member_of(op); d != nullptr && d != m) deps.insert(d);
    pending[m] = static_cast<int>(deps.size());
    for (HloInstruction* d : deps) users[d].push_back(m);
  }
  std::vector<HloInstruction*> order;
  std::vector<HloInstruction*> ready;
  for (HloInstruction* m : members)
    if (pending[m] == 0) ready.push_back(m);
  while (!ready.empty()) {
    HloInstruction* m = ready.front();
    ready.erase(ready.begin());
    order.push_back(m);
    for (HloInstruction* u : users[m])
      if (--pending[u] == 0) ready.push_back(u);
  }
  return order;
}

}  // namespace

absl::StatusOr<HloInstruction*> FusionBuilder::Merge(const std::vector<HloInstruction*>& members_in,
                                                     const absl::flat_hash_set<HloInstruction*>& duplicated) {
  if (members_in.empty()) return absl::InvalidArgumentError("nothing to fuse");
  if (members_in.size() == 2 && !duplicated.contains(members_in[1]) &&
      CanFuseInPlace(members_in[0], members_in[1], duplicated.contains(members_in[0])))
    return FuseInPlace(members_in[0], members_in[1], duplicated.contains(members_in[0]));
  HloComputation* comp = members_in.front()->parent();
  absl::flat_hash_set<HloInstruction*> group(members_in.begin(), members_in.end());
  for (HloInstruction* m : members_in) {
    if (m->parent() != comp) return absl::InvalidArgumentError("fusion members must share one computation");
    if (m->opcode() == O::kParameter) return absl::InvalidArgumentError("a parameter cannot be fused");
  }
  std::vector<HloInstruction*> members = TopologicalMembers(members_in, group);
  if (members.size() != group.size()) return absl::InternalError("fusion members form a cycle");
  // A multi-output member read whole (the computation's root, or an operand of a tuple):
  // read its outputs through get-tuple-elements into a tuple instead, so its outputs are
  // wired like any other.
  for (HloInstruction* m : members) {
    if (!IsMultiOutputFusion(m) || duplicated.contains(m)) continue;
    std::vector<HloInstruction*> whole_readers;
    for (HloInstruction* u : m->users())
      if (u->opcode() != O::kGetTupleElement && !group.contains(u) &&
          std::find(whole_readers.begin(), whole_readers.end(), u) == whole_readers.end())
        whole_readers.push_back(u);
    if (!m->IsRoot() && whole_readers.empty()) continue;
    auto tuple = std::make_unique<HloInstruction>(O::kTuple, m->shape(), names_.GetUniqueName("tuple"));
    for (int64_t i = 0; i < static_cast<int64_t>(m->shape().tuple_shapes().size()); ++i) {
      auto gte = std::make_unique<HloInstruction>(O::kGetTupleElement, m->shape().tuple_shapes(i),
                                                  names_.GetUniqueName("get-tuple-element"));
      gte->mutable_attrs().tuple_index = i;
      gte->AppendOperand(m);
      tuple->AppendOperand(comp->AddInstruction(std::move(gte)));
    }
    HloInstruction* t = comp->AddInstruction(std::move(tuple));
    for (HloInstruction* u : whole_readers)
      for (int64_t j = 0; j < u->operand_count(); ++j)
        if (u->operand(j) == m) u->ReplaceOperandWith(j, t);
    if (m->IsRoot()) comp->set_root_instruction(t);
  }

  auto fused = std::make_unique<HloComputation>(computation_names_.GetUniqueName("fused_computation"));
  std::vector<HloInstruction*> externals;
  absl::flat_hash_map<HloInstruction*, HloInstruction*> param_of;  // external operand -> parameter
  absl::flat_hash_map<HloInstruction*, std::vector<HloInstruction*>> outputs_of;  // member -> its values
  std::vector<std::pair<HloInstruction*, std::string>> renames;  // clones to name uniquely at the end

  auto resolve = [&](HloInstruction* op) -> HloInstruction* {
    if (group.contains(op)) return outputs_of[op].size() == 1 ? outputs_of[op][0] : nullptr;
    if (op->opcode() == O::kGetTupleElement && group.contains(op->operand(0))) {
      std::vector<HloInstruction*>& outs = outputs_of[op->operand(0)];
      const int64_t i = op->attrs().tuple_index;
      if (outs.size() > 1) return i < static_cast<int64_t>(outs.size()) ? outs[i] : nullptr;
      // A plain tuple-shaped member (variadic reduce): read its element inside the kernel.
      auto gte = CloneInstruction(*op, {outs[0]});
      renames.push_back({gte.get(), op->name()});
      return fused->AddInstruction(std::move(gte));
    }
    auto it = param_of.find(op);
    if (it != param_of.end()) return it->second;
    const int64_t n = static_cast<int64_t>(externals.size());
    auto p = std::make_unique<HloInstruction>(O::kParameter, op->shape(), names_.GetUniqueName(absl::StrCat("param_", n)));
    p->mutable_attrs().parameter_number = n;
    HloInstruction* raw = fused->AddInstruction(std::move(p));
    externals.push_back(op);
    param_of[op] = raw;
    return raw;
  };

  // The consumer's operands keep their order as the fusion's first parameters; what its
  // producers bring in follows (as XLA's FuseInstruction appends).
  for (HloInstruction* op : members.back()->operands()) {
    if (group.contains(op)) continue;
    if (op->opcode() == O::kGetTupleElement && group.contains(op->operand(0))) continue;
    resolve(op);
  }
  for (HloInstruction* m : members) {
    const bool dup = duplicated.contains(m);
    if (m->opcode() == O::kFusion) {
      const HloComputation* body = m->fused_instructions_computation();
      absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
      for (HloInstruction* inst : body->MakeInstructionPostOrder()) {
        if (inst->opcode() == O::kParameter) {
          const int64_t k = inst->attrs().parameter_number;
          if (k < 0 || k >= m->operand_count()) return absl::InternalError("fusion parameter out of range");
          HloInstruction* v = resolve(m->operand(k));
          if (v == nullptr) return absl::InternalError(absl::StrCat("cannot read ", m->operand(k)->name()));
          map[inst] = v;
          continue;
        }
        if (inst == body->root_instruction() && inst->opcode() == O::kTuple) continue;
        std::vector<HloInstruction*> ops;
        for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
        auto c = CloneInstruction(*inst, ops);
        if (dup) renames.push_back({c.get(), inst->name()});
        map[inst] = fused->AddInstruction(std::move(c));
      }
      const HloInstruction* root = body->root_instruction();
      if (root->opcode() == O::kTuple) {
        for (HloInstruction* op : root->operands()) outputs_of[m].push_back(map.at(op));
      } else {
        outputs_of[m] = {map.at(root)};
      }
    } else {
      std::vector<HloInstruction*> ops;
      for (HloInstruction* op : m->operands()) {
        HloInstruction* v = resolve(op);
        if (v == nullptr) return absl::InternalError(absl::StrCat("cannot read ", op->name()));
        ops.push_back(v);
      }
      auto c = CloneInstruction(*m, ops);
      if (dup) renames.push_back({c.get(), m->name()});
      outputs_of[m] = {fused->AddInstruction(std::move(c))};
    }
  }

  // The values used outside the group become the fusion's outputs.
  struct Exposed {
    HloInstruction* member;
    HloInstruction* gte;  // the member's get-tuple-element read outside (multi-output members)
    HloInstruction* value;
  };
  std::vector<Exposed> exposed;
  for (HloInstruction* m : members) {
    if (duplicated.contains(m)) continue;
    const bool multi = outputs_of[m].size() > 1;
    if (multi) {
      for (HloInstruction* u : m->users()) {
        if (group.contains(u)) continue;
        if (u->opcode() != O::kGetTupleElement)
          return absl::UnimplementedError(absl::StrCat(u->name(), " reads multi-output ", m->name(), " whole"));
        bool outside = u->IsRoot();
        for (HloInstruction* uu : u->users()) outside |= !group.contains(uu);
        if (outside) exposed.push_back({m, u, outputs_of[m][u->attrs().tuple_index]});
      }
      if (m->IsRoot()) return absl::UnimplementedError("a multi-output fusion at the root cannot be merged");
    } else {
      bool outside = m->IsRoot();
      for (HloInstruction* u : m->users()) outside |= !group.contains(u);
      if (outside) exposed.push_back({m, nullptr, outputs_of[m][0]});
    }
  }
  // Nothing reads the group (a dead consumer): keep its last value as the (dead) fusion's
  // output; dce removes it.
  if (exposed.empty()) {
    HloInstruction* m = members.back();
    if (duplicated.contains(m)) return absl::InvalidArgumentError("the fused group has no value of its own");
    exposed.push_back({m, nullptr, outputs_of[m][0]});
  }
  // An output whose value is already another output's (a duplicate) still gets its own slot.
  HloInstruction* root;
  const bool tuple_root = exposed.size() > 1;
  if (!tuple_root) {
    root = exposed[0].value;
  } else {
    std::vector<Shape> shapes;
    for (const Exposed& e : exposed) shapes.push_back(e.value->shape());
    auto t = std::make_unique<HloInstruction>(O::kTuple, Shape::Tuple(shapes), names_.GetUniqueName("tuple"));
    for (const Exposed& e : exposed) t->AppendOperand(e.value);
    root = fused->AddInstruction(std::move(t));
  }
  fused->set_root_instruction(root);
  // Instructions left without users (unused outputs of a merged multi-output member) go.
  for (bool removed = true; removed;) {
    removed = false;
    for (const auto& inst : fused->instructions()) {
      if (inst.get() != root && inst->user_count() == 0 && inst->opcode() != O::kParameter) {
        HloInstruction* dead = inst.get();
        renames.erase(std::remove_if(renames.begin(), renames.end(), [&](auto& r) { return r.first == dead; }),
                      renames.end());
        if (absl::Status s = fused->RemoveInstruction(dead); !s.ok()) return s;
        removed = true;
        break;
      }
    }
  }

  std::vector<const HloInstruction*> fused_insts;
  for (const auto& inst : fused->instructions()) fused_insts.push_back(inst.get());
  const FusionKind kind = FusionKindFor(fused_insts);

  HloInstruction* last = members.back();
  auto f = std::make_unique<HloInstruction>(O::kFusion, root->shape(), names_.GetUniqueName("fusion"));
  f->mutable_attrs().fusion_kind = kind;
  f->mutable_attrs().metadata = last->attrs().metadata;
  f->set_text_location(last->text_location());  // errors in its code point at the text
  for (HloInstruction* op : externals) f->AppendOperand(op);
  HloComputation* fused_raw = module_.AddComputation(std::move(fused));
  built_.insert(fused_raw);
  f->mutable_called_computations() = {fused_raw};
  // Placed where the last member was: after every external operand (each precedes the member
  // that reads it). Users of earlier members that come before it are moved by
  // EnsureDefinitionOrder.
  HloInstruction* fusion = comp->AddInstructionBefore(std::move(f), last);
  fused_raw->SetFusionInstruction(fusion);

  // Point the outside uses at the fusion.
  for (size_t k = 0; k < exposed.size(); ++k) {
    const Exposed& e = exposed[k];
    HloInstruction* value = fusion;
    if (tuple_root) {
      auto gte = std::make_unique<HloInstruction>(O::kGetTupleElement, root->operand(k)->shape(),
                                                  names_.GetUniqueName("get-tuple-element"));
      gte->mutable_attrs().tuple_index = static_cast<int64_t>(k);
      gte->AppendOperand(fusion);
      value = comp->AddInstructionBefore(std::move(gte), last);
    }
    HloInstruction* old = e.gte != nullptr ? e.gte : e.member;
    // Only uses outside the group move; members still reading `old` are removed below.
    std::vector<HloInstruction*> users = old->users();
    for (HloInstruction* u : users) {
      if (group.contains(u)) continue;
      for (int64_t j = 0; j < u->operand_count(); ++j)
        if (u->operand(j) == old) u->ReplaceOperandWith(j, value);
    }
    if (old->IsRoot()) comp->set_root_instruction(value);
  }

  // Remove the old members (users first), their get-tuple-elements, and their fused
  // computations.
  std::vector<HloComputation*> dead_computations;
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    HloInstruction* m = *it;
    if (duplicated.contains(m) && (m->user_count() > 0 || m->IsRoot())) {
      // Still used elsewhere: drop only the uses by other members, which are going away.
      continue;
    }
    std::vector<HloInstruction*> users = m->users();
    for (HloInstruction* u : users) {
      if (u->opcode() == O::kGetTupleElement && u->user_count() == 0 && !u->IsRoot()) {
        if (absl::Status s = RemoveInstruction(u); !s.ok()) return s;
      }
    }
    if (m->user_count() > 0 || m->IsRoot()) {
      // Its remaining users are later members (already removed) or the fusion's wiring
      // failed; the latter would be a bug.
      return absl::InternalError(absl::StrCat("fused ", m->name(), " is still used after the merge"));
    }
    if (m->opcode() == O::kFusion) dead_computations.push_back(m->fused_instructions_computation());
    if (absl::Status s = RemoveInstruction(m); !s.ok()) return s;
  }
  for (HloComputation* c : dead_computations) {
    built_.erase(c);
    if (absl::Status s = module_.RemoveFusedComputation(c); !s.ok()) return s;
  }
  for (auto& [inst, name] : renames) inst->set_name(names_.GetUniqueName(name));
  return fusion;
}

bool FusionBuilder::CanFuseInPlace(const HloInstruction* producer, const HloInstruction* consumer,
                                   bool duplicate) const {
  if (consumer->opcode() != O::kFusion || consumer->called_computations().size() != 1) return false;
  const HloComputation* body = consumer->fused_instructions_computation();
  if (!built_.contains(body) || body->root_instruction()->opcode() == O::kTuple) return false;
  if (producer->parent() != consumer->parent() || producer->opcode() == O::kParameter) return false;
  if (!consumer->control_predecessors().empty() || !consumer->control_successors().empty() ||
      !producer->control_predecessors().empty() || !producer->control_successors().empty())
    return false;
  // The consumer reads the producer once, directly, and its operands are distinct (one
  // parameter each), so Merge would number the parameters as removing one does.
  int64_t reads = 0;
  absl::flat_hash_set<const HloInstruction*> operands;
  for (int64_t i = 0; i < consumer->operand_count(); ++i) {
    const HloInstruction* op = consumer->operand(i);
    if (!operands.insert(op).second) return false;
    if (op->opcode() == O::kGetTupleElement && op->operand(0) == producer) return false;
    if (op != producer) continue;
    ++reads;
    const HloInstruction* param = i < body->num_parameters() ? body->parameter_instruction(i) : nullptr;
    if (param == nullptr || param->user_count() == 0) return false;  // Merge would drop a dead clone
  }
  if (reads != 1 || body->num_parameters() != consumer->operand_count()) return false;
  // Kept as the fusion's second output unless duplicated or read only here.
  if (!duplicate && (producer->IsRoot() || producer->user_count() != 1)) return false;
  if (producer->opcode() != O::kFusion) return true;
  // A fused producer: one output, no dead instructions for Merge to drop after cloning.
  const HloComputation* pbody = producer->fused_instructions_computation();
  const HloInstruction* proot = pbody->root_instruction();
  if (proot->opcode() == O::kTuple || pbody->num_parameters() != producer->operand_count()) return false;
  for (const auto& inst : pbody->instructions())
    if (inst.get() != proot && inst->opcode() != O::kParameter && inst->user_count() == 0) return false;
  return true;
}

absl::StatusOr<HloInstruction*> FusionBuilder::FuseInPlace(HloInstruction* producer, HloInstruction* consumer,
                                                           bool duplicate) {
  HloComputation* body = consumer->fused_instructions_computation();
  // Names are asked for in Merge's order, so every uniquer hands out what it would.
  body->set_name(computation_names_.GetUniqueName("fused_computation"));
  int64_t k = 0;
  while (consumer->operand(k) != producer) ++k;
  // The consumer's other operands stay the first parameters, renumbered past the producer's.
  std::vector<HloInstruction*> externals;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> param_of;
  for (int64_t i = 0; i < consumer->operand_count(); ++i) {
    if (i == k) continue;
    HloInstruction* p = body->parameter_instruction(i);
    p->set_name(names_.GetUniqueName(absl::StrCat("param_", externals.size())));
    param_of[consumer->operand(i)] = p;
    externals.push_back(consumer->operand(i));
  }
  HloInstruction* old_param = body->parameter_instruction(k);
  // The producer goes after the parameters and before the consumer's own instructions, its new
  // parameters where it first reads them, as Merge's clone orders them.
  HloInstruction* first = body->MoveParametersToFront();
  auto resolve = [&](HloInstruction* op) {
    auto it = param_of.find(op);
    if (it != param_of.end()) return it->second;
    // Numbered after the old parameters for now; RemoveParameter below shifts it to its place.
    const int64_t n = static_cast<int64_t>(externals.size());
    auto p = std::make_unique<HloInstruction>(O::kParameter, op->shape(), names_.GetUniqueName(absl::StrCat("param_", n)));
    p->mutable_attrs().parameter_number = n + 1;
    HloInstruction* raw = body->AddInstructionBefore(std::move(p), first);
    externals.push_back(op);
    param_of[op] = raw;
    return raw;
  };
  std::vector<HloInstruction*> clones;
  HloInstruction* value = nullptr;
  if (producer->opcode() == O::kFusion) {
    const HloComputation* pbody = producer->fused_instructions_computation();
    absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
    for (HloInstruction* inst : pbody->MakeInstructionPostOrder()) {
      if (inst->opcode() == O::kParameter) {
        map[inst] = resolve(producer->operand(inst->attrs().parameter_number));
        continue;
      }
      std::vector<HloInstruction*> ops;
      for (HloInstruction* op : inst->operands()) ops.push_back(map.at(op));
      clones.push_back(body->AddInstructionBefore(CloneInstruction(*inst, ops), first));
      map[inst] = clones.back();
    }
    value = map.at(pbody->root_instruction());
  } else {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : producer->operands()) ops.push_back(resolve(op));
    clones.push_back(body->AddInstructionBefore(CloneInstruction(*producer, ops), first));
    value = clones.back();
  }
  old_param->ReplaceAllUsesWith(value);
  if (absl::Status s = body->RemoveParameter(k); !s.ok()) return s;

  // The fusion instruction: the operands its parameters stand for, a fresh id and name, and
  // only the attributes Merge gives a new fusion.
  const FusionKind kind = consumer->attrs().fusion_kind;
  std::vector<const HloInstruction*> added(clones.begin(), clones.end());
  OpMetadata metadata = consumer->attrs().metadata;
  consumer->mutable_attrs() = InstructionAttributes{};
  consumer->mutable_attrs().fusion_kind = kind == FusionKind::kInput ? kind : FusionKindFor(added);
  consumer->mutable_attrs().metadata = std::move(metadata);
  consumer->DetachFromOperandsAndUsers();
  for (HloInstruction* op : externals) consumer->AppendOperand(op);
  const int64_t old_id = consumer->unique_id();
  consumer->set_unique_id(module_.NextUniqueId());
  consumer->set_name(names_.GetUniqueName("fusion"));
  // The body is now its parameters, then the clones, then the old instructions: the facts
  // cache keeps what it knew of the old ones.
  FusionFactsCache::GrewInPlace(old_id, consumer, added);
  // Merge points each outside user at the new fusion in turn, so a user reading it twice is
  // listed twice in a row.
  std::vector<HloInstruction*> users = consumer->users();
  absl::flat_hash_set<const HloInstruction*> distinct(users.begin(), users.end());
  if (distinct.size() != users.size()) {
    distinct.clear();
    for (HloInstruction* u : users) {
      if (!distinct.insert(u).second) continue;
      for (int64_t j = 0; j < u->operand_count(); ++j)
        if (u->operand(j) == consumer) u->ReplaceOperandWith(j, consumer);
    }
  }
  if (absl::Status s = module_.MoveComputationToEnd(body); !s.ok()) return s;

  if (producer->user_count() == 0 && !producer->IsRoot()) {
    HloComputation* dead = producer->opcode() == O::kFusion ? producer->fused_instructions_computation() : nullptr;
    if (absl::Status s = RemoveInstruction(producer); !s.ok()) return s;
    if (dead != nullptr) {
      built_.erase(dead);
      if (absl::Status s = module_.RemoveFusedComputation(dead); !s.ok()) return s;
    }
  }
  if (duplicate)
    for (HloInstruction* c : clones) c->set_name(names_.GetUniqueName(c->name()));
  return consumer;
}

absl::Status EnsureDefinitionOrder(HloComputation& computation) {
  absl::flat_hash_map<const HloInstruction*, size_t> index;
  const auto& insts = computation.instructions();
  for (size_t i = 0; i < insts.size(); ++i) index[insts[i].get()] = i;
  bool ok = true;
  for (size_t i = 0; i < insts.size() && ok; ++i) {
    for (const HloInstruction* op : insts[i]->operands()) ok &= index.at(op) < i;
    for (const HloInstruction* p : insts[i]->control_predecessors()) ok &= index.at(p) < i;
  }
  if (ok) return absl::OkStatus();
  // Kahn's algorithm, always taking the earliest ready instruction: the old order wherever it
  // was already valid.
  std::vector<int> pending(insts.size(), 0);
  std::vector<std::vector<size_t>> users(insts.size());
  for (size_t i = 0; i < insts.size(); ++i) {
    absl::flat_hash_set<size_t> deps;
    for (const HloInstruction* op : insts[i]->operands()) deps.insert(index.at(op));
    for (const HloInstruction* p : insts[i]->control_predecessors()) deps.insert(index.at(p));
    pending[i] = static_cast<int>(deps.size());
    for (size_t d : deps) users[d].push_back(i);
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < insts.size(); ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<HloInstruction*> order;
  while (!ready.empty()) {
    size_t i = ready.top();
    ready.pop();
    order.push_back(insts[i].get());
    for (size_t u : users[i])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != insts.size()) return absl::InternalError(absl::StrCat(computation.name(), " has a cycle"));
  return computation.SetInstructionOrder(order);
}

}  // namespace hloc::fusion
