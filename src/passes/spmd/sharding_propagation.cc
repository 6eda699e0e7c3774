#include "passes/spmd/sharding_propagation.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/sharding_util.h"
#include "passes/spmd/sharding_rules.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {
namespace {

using O = HloOpcode;
using Kind = HloSharding::Kind;

// Calls of the computations the program runs per device, for linking parameters and roots.
struct CallSites {
  absl::flat_hash_map<const HloComputation*, const HloInstruction*> caller;
};

bool Partitioned(const HloInstruction& inst) {
  return inst.opcode() == O::kWhile || inst.opcode() == O::kConditional || inst.opcode() == O::kCall;
}

class Propagation {
 public:
  Propagation(HloModule& module, const RuleOptions& options)
      : module_(module), options_(options), n_(std::max<int64_t>(1, module.config().num_partitions)) {}

  absl::StatusOr<bool> Run();

 private:
  absl::Status Seed();
  bool Update(const HloInstruction* inst, const std::optional<HloSharding>& cand);
  std::optional<HloSharding> FromLinks(const HloInstruction* inst) const;
  std::optional<HloSharding> FromUsers(const HloInstruction* inst) const;
  bool Sweep(bool backward);
  void FixOutput();

  HloModule& module_;
  const RuleOptions& options_;
  int64_t n_;
  std::vector<HloComputation*> computations_;
  ShardingMap known_;
  absl::flat_hash_set<const HloInstruction*> fixed_;
  CallSites sites_;
};

absl::Status Propagation::Seed() {
  for (HloComputation* c : computations_) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      for (HloComputation* callee : inst->called_computations())
        if (Partitioned(*inst)) sites_.caller.emplace(callee, inst);
      if (!inst->attrs().sharding) continue;
      auto s = NormalizeSharding(*inst->attrs().sharding, inst->shape());
      if (!s.ok())
        return absl::InvalidArgumentError(absl::StrCat("sharding of ", inst->name(), ": ", s.status().message()));
      // One device computing alone is, per device, the same as every device computing it.
      HloSharding v = *s;
      if (v.kind == Kind::kMaximal) v = ReplicatedSharding();
      for (HloSharding& e : v.tuple_elements)
        if (e.kind == Kind::kMaximal) e = ReplicatedSharding();
      known_[inst] = ExpandSharding(v, inst->shape());
      fixed_.insert(inst);
    }
  }
  // Entry parameters nobody annotated stay replicated unless propagation to them is allowed.
  const HloComputation* entry = module_.entry_computation();
  const auto& allow = module_.config().allow_spmd_sharding_propagation_to_parameters;
  for (const HloInstruction* p : entry->parameters()) {
    if (known_.contains(p)) continue;
    int64_t i = p->attrs().parameter_number;
    bool allowed = !allow.empty() && (allow.size() == 1 ? allow[0] : (i < (int64_t)allow.size() && allow[i]));
    if (allowed) continue;
    known_[p] = UniformSharding(p->shape(), ReplicatedSharding());
    fixed_.insert(p);
  }
  return absl::OkStatus();
}

// Keeps the more specific of the two, leaf by leaf for tuples; returns whether it changed.
bool Propagation::Update(const HloInstruction* inst, const std::optional<HloSharding>& cand_in) {
  if (!cand_in || fixed_.contains(inst)) return false;
  HloSharding cand = ExpandSharding(*cand_in, inst->shape());
  auto it = known_.find(inst);
  if (it == known_.end()) {
    if (cand.kind == Kind::kTuple && (int64_t)cand.tuple_elements.size() != LeafCount(inst->shape())) return false;
    known_[inst] = cand;
    return true;
  }
  HloSharding& old = it->second;
  if (old.kind == Kind::kTuple && cand.kind == Kind::kTuple) {
    if (old.tuple_elements.size() != cand.tuple_elements.size()) return false;
    bool changed = false;
    for (size_t i = 0; i < old.tuple_elements.size(); ++i) {
      if (Specificity(cand.tuple_elements[i]) > Specificity(old.tuple_elements[i]) ||
          (IsManual(cand.tuple_elements[i]) && !IsManual(old.tuple_elements[i]))) {
        old.tuple_elements[i] = cand.tuple_elements[i];
        changed = true;
      }
    }
    return changed;
  }
  if (Specificity(cand) > Specificity(old) || (IsManual(cand) && !IsManual(old))) {
    old = cand;
    return true;
  }
  return false;
}

// What the instructions sharing a value with `inst` across a call boundary have.
std::optional<HloSharding> Propagation::FromLinks(const HloInstruction* inst) const {
  std::vector<const HloInstruction*> links;
  const HloComputation* c = inst->parent();
  auto site = sites_.caller.find(c);
  const HloInstruction* caller = site == sites_.caller.end() ? nullptr : site->second;
  if (inst->opcode() == O::kWhile) {
    links = {inst->operand(0), inst->while_body()->root_instruction(), inst->while_body()->parameter_instruction(0)};
  } else if (inst->opcode() == O::kConditional || inst->opcode() == O::kCall) {
    for (const HloComputation* b : inst->called_computations()) links.push_back(b->root_instruction());
  }
  if (caller != nullptr && inst->opcode() == O::kParameter) {
    if (caller->opcode() == O::kWhile) {
      links = {caller};
    } else if (caller->opcode() == O::kConditional) {
      for (size_t b = 0; b < caller->called_computations().size(); ++b)
        if (caller->called_computations()[b] == c) links = {caller->operand(b + 1)};
    } else if (caller->opcode() == O::kCall) {
      links = {caller->operand(inst->attrs().parameter_number)};
    }
  }
  // A callee's root is the caller's value, except a while condition's (a predicate).
  if (caller != nullptr && inst == c->root_instruction() &&
      !(caller->opcode() == O::kWhile && caller->while_condition() == c))
    links.push_back(caller);
  std::optional<HloSharding> best;
  for (const HloInstruction* l : links) {
    auto it = known_.find(l);
    if (it == known_.end()) continue;
    if (!best || Specificity(it->second) > Specificity(*best)) best = it->second;
  }
  return best;
}

std::optional<HloSharding> Propagation::FromUsers(const HloInstruction* inst) const {
  std::optional<HloSharding> best;
  for (const HloInstruction* user : inst->users()) {
    if (!known_.contains(user)) continue;
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) != inst) continue;
      auto s = InferForOperand(*user, i, known_, n_);
      if (s && (!best || Specificity(*s) > Specificity(*best))) best = s;
    }
  }
  return best;
}

bool Propagation::Sweep(bool backward) {
  bool changed = false;
  for (HloComputation* c : computations_) {
    std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
    for (HloInstruction* inst : order) {
      changed |= Update(inst, InferFromOperands(*inst, known_, n_, options_));
      changed |= Update(inst, FromLinks(inst));
    }
    if (!backward) continue;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      changed |= Update(*it, FromUsers(*it));
      changed |= Update(*it, FromLinks(*it));
    }
  }
  return changed;
}

void Propagation::FixOutput() {
  const HloInstruction* root = module_.entry_computation()->root_instruction();
  const auto& allow = module_.config().allow_spmd_sharding_propagation_to_output;
  if (fixed_.contains(root)) return;
  HloSharding& s = known_[root];
  s = ExpandSharding(s, root->shape());
  auto allowed = [&](size_t i) { return !allow.empty() && (allow.size() == 1 ? allow[0] : i < allow.size() && allow[i]); };
  if (s.kind != Kind::kTuple) {
    if (!allowed(0)) s = ReplicatedSharding();
    return;
  }
  for (size_t i = 0; i < s.tuple_elements.size(); ++i)
    if (!allowed(i)) s.tuple_elements[i] = ReplicatedSharding();
}

absl::StatusOr<bool> Propagation::Run() {
  computations_ = PartitionedComputations(module_);
  if (absl::Status st = Seed(); !st.ok()) return st;
  for (int i = 0; i < 100 && Sweep(false); ++i) {}
  for (int i = 0; i < 100 && Sweep(true); ++i) {}
  FixOutput();
  bool changed = false;
  for (HloComputation* c : computations_) {
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      auto it = known_.find(inst);
      HloSharding s = it == known_.end() ? UniformSharding(inst->shape(), ReplicatedSharding()) : it->second;
      if (inst->attrs().sharding != s) {
        inst->mutable_attrs().sharding = s;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace

std::vector<HloComputation*> PartitionedComputations(const HloModule& module) {
  std::vector<HloComputation*> out = {module.entry_computation()};
  absl::flat_hash_set<const HloComputation*> seen = {module.entry_computation()};
  for (size_t i = 0; i < out.size(); ++i)
    for (HloInstruction* inst : out[i]->MakeInstructionPostOrder())
      if (Partitioned(*inst))
        for (HloComputation* callee : inst->called_computations())
          if (seen.insert(callee).second) out.push_back(callee);
  return out;
}

absl::StatusOr<bool> PropagateShardings(HloModule& module, const RuleOptions& options) {
  if (module.config().num_partitions <= 1 && module.config().replica_count <= 1) return false;
  return Propagation(module, options).Run();
}

}  // namespace hloc::spmd
