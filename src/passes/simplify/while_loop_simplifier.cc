#include "passes/simplify/while_loop_simplifier.h"

#include <algorithm>
#include <map>

#include "eval/evaluator.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

using cf::Builder;

constexpr std::string_view kDisableWhileLoopDceKeys[] = {"_xla_disable_while_loop_dce", "xla.disable_while_loop_dce",
                                                         "_xla_preserve_tuple_indices", "xla.preserve_tuple_indices"};

bool DceDisabled(const HloInstruction* w) { return cf::HasTrueFrontendAttribute(*w, kDisableWhileLoopDceKeys); }

// The instruction after `inst` in its computation's order (null when it is last): where new
// instructions go that must follow `inst` and precede its users.
const HloInstruction* InstructionAfter(const HloInstruction* inst) {
  const auto& list = inst->parent()->instructions();
  for (size_t i = 0; i + 1 < list.size(); ++i)
    if (list[i].get() == inst) return list[i + 1].get();
  return nullptr;
}

bool AllWhileParamConsumersGte(const HloInstruction* w) {
  for (const HloComputation* comp : {w->while_body(), w->while_condition()}) {
    if (comp->num_parameters() != 1) return false;
    for (const HloInstruction* user : comp->parameter_instruction(0)->users())
      if (user->opcode() != HloOpcode::kGetTupleElement) return false;
  }
  return true;
}

bool IsGteOfParam(const HloInstruction* inst, int64_t index) {
  return inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0)->opcode() == HloOpcode::kParameter &&
         inst->operand(0) == inst->parent()->parameter_instruction(0) && inst->attrs().tuple_index == index;
}

// Element `k` of `tuple` as an instruction: the operand of a tuple(...), else a new
// get-tuple-element placed before `before`.
HloInstruction* TupleElement(Builder& b, HloInstruction* tuple, int64_t k, const HloInstruction* before) {
  if (tuple->opcode() == HloOpcode::kTuple) return tuple->operand(k);
  return b.Gte(before->parent(), tuple, k, before);
}

// Rewrites the loop in place to carry only the elements `keep` (sorted old indices). What
// read a dropped element after the loop reads the surviving element it maps to in
// `dead_to_surviving`, or else the init's element (dropped elements pass through unchanged
// or are unread). Returns false, changing nothing, when the body or condition still needs a
// dropped element.
absl::StatusOr<bool> RemoveDeadTupleIndices(Builder& b, HloInstruction* w, const std::vector<int64_t>& keep,
                                            const std::map<int64_t, int64_t>* dead_to_surviving,
                                            cf::DeferredCleanup& cleanup) {
  HloComputation* parent = w->parent();
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  HloInstruction* body_root = body->root_instruction();
  const Shape old_shape = w->shape();
  const int64_t n = old_shape.tuple_shapes().size();
  std::vector<int64_t> old_to_new(n, -1);
  std::vector<Shape> new_elements;
  for (int64_t k : keep) {
    old_to_new[k] = new_elements.size();
    new_elements.push_back(old_shape.tuple_shapes(k));
  }
  const Shape new_shape = Shape::Tuple(new_elements);

  // What reads a dropped element inside the loop (transitively) goes with it; it may only
  // feed dropped outputs of the body.
  absl::flat_hash_map<HloComputation*, std::vector<HloInstruction*>> doomed_in;
  for (HloComputation* comp : {body, cond}) {
    absl::flat_hash_set<const HloInstruction*> doomed;
    std::vector<HloInstruction*> work;
    for (HloInstruction* gte : comp->parameter_instruction(0)->users())
      if (old_to_new[gte->attrs().tuple_index] < 0 && doomed.insert(gte).second) work.push_back(gte);
    while (!work.empty()) {
      HloInstruction* inst = work.back();
      work.pop_back();
      if (cf::HasControlDependencies(*inst) || cf::HasSideEffect(*inst)) return false;
      for (HloInstruction* user : inst->users())
        if (user != body_root && doomed.insert(user).second) work.push_back(user);
      if (inst->IsRoot()) return false;
    }
    if (comp == body)
      for (int64_t k : keep)
        if (doomed.contains(body_root->operand(k))) return false;
    std::vector<HloInstruction*>& list = doomed_in[comp];
    for (HloInstruction* inst : comp->MakeInstructionPostOrder())
      if (doomed.contains(inst)) list.push_back(inst);
  }

  // Body and condition.
  std::vector<HloInstruction*> root_elements;
  for (int64_t k : keep) root_elements.push_back(body_root->operand(k));
  body->set_root_instruction(b.Tuple(body, root_elements, nullptr, body_root->name()));
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstruction(body, body_root));
  for (HloComputation* comp : {body, cond}) {
    std::vector<HloInstruction*>& list = doomed_in[comp];
    for (auto it = list.rbegin(); it != list.rend(); ++it) HLOC_CF_RETURN_IF_ERROR(cf::RemoveInstruction(comp, *it));
    HloInstruction* param = comp->parameter_instruction(0);
    for (HloInstruction* gte : param->users()) gte->mutable_attrs().tuple_index = old_to_new[gte->attrs().tuple_index];
    param->mutable_shape() = new_shape;
  }

  // The init and the loop.
  HloInstruction* old_init = w->operand(0);
  std::vector<HloInstruction*> init_elements;
  for (int64_t k : keep) init_elements.push_back(TupleElement(b, old_init, k, w));
  w->ReplaceOperandWith(0, b.Tuple(parent, init_elements, w, old_init->name()));
  w->mutable_shape() = new_shape;

  // Readers after the loop.
  auto new_index_for = [&](int64_t k) -> int64_t {
    if (old_to_new[k] >= 0) return old_to_new[k];
    if (dead_to_surviving != nullptr) return old_to_new[dead_to_surviving->at(k)];
    return -1;
  };
  std::vector<HloInstruction*> users = w->users();
  bool all_gte = !w->IsRoot();
  for (const HloInstruction* user : users) all_gte &= user->opcode() == HloOpcode::kGetTupleElement;
  const HloInstruction* after = InstructionAfter(w);
  if (all_gte) {
    for (HloInstruction* user : users) {
      int64_t k = user->attrs().tuple_index;
      if (int64_t m = new_index_for(k); m >= 0) {
        user->mutable_attrs().tuple_index = m;
      } else {
        user->ReplaceAllUsesWith(TupleElement(b, old_init, k, user));
        cleanup.Add(user);
      }
    }
  } else {
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < n; ++k) {
      int64_t m = new_index_for(k);
      elements.push_back(m >= 0 ? b.Gte(parent, w, m, after) : TupleElement(b, old_init, k, after));
    }
    HloInstruction* rebuilt = b.Tuple(parent, elements, after);
    for (HloInstruction* user : users)
      for (int64_t i = 0; i < user->operand_count(); ++i)
        if (user->operand(i) == w) user->ReplaceOperandWith(i, rebuilt);
    if (w->IsRoot()) parent->set_root_instruction(rebuilt);
  }
  cleanup.Add(old_init);
  return true;
}

// Row-major bit sets: rows of `bits` bits each.
class DenseBitSets {
 public:
  DenseBitSets(int64_t rows, int64_t bits) : words_per_row_((bits + 63) / 64), words_(rows * words_per_row_, 0) {}
  void Set(int64_t row, int64_t bit) { words_[row * words_per_row_ + bit / 64] |= Mask(bit); }
  bool Test(int64_t row, int64_t bit) const { return (words_[row * words_per_row_ + bit / 64] & Mask(bit)) != 0; }
  void Or(int64_t row, int64_t other) {
    for (int64_t w = 0; w < words_per_row_; ++w) words_[row * words_per_row_ + w] |= words_[other * words_per_row_ + w];
  }
  void OrWithout(int64_t row, int64_t other, int64_t bit) {
    for (int64_t w = 0; w < words_per_row_; ++w) {
      uint64_t keep = w == bit / 64 ? ~Mask(bit) : ~uint64_t{0};
      words_[row * words_per_row_ + w] |= words_[other * words_per_row_ + w] & keep;
    }
  }

 private:
  static uint64_t Mask(int64_t bit) { return uint64_t{1} << (bit % 64); }
  int64_t words_per_row_;
  std::vector<uint64_t> words_;
};

// XLA's TryRemoveDeadWhileParams. An element can go when (1) nothing reads it after the loop
// and neither the condition, a side effect nor another element's update depends on it (it
// may update itself), or (2) it belongs to a group of interdependent elements, each unread
// after the loop or passed through unchanged, that no side effect or condition depends on.
absl::StatusOr<bool> TryRemoveDeadWhileParams(Builder& b, HloInstruction* w, cf::DeferredCleanup& cleanup) {
  if (DceDisabled(w) || cf::HasControlDependencies(*w)) return false;
  HloInstruction* init = w->operand(0);
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  HloInstruction* body_root = body->root_instruction();
  if (!init->shape().IsTuple() || body_root->opcode() != HloOpcode::kTuple || !AllWhileParamConsumersGte(w))
    return false;
  const int64_t n = init->shape().tuple_shapes().size();
  if (n == 0) return false;
  std::vector<bool> used_after(n, w->IsRoot());
  for (const HloInstruction* user : w->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement) {
      used_after.assign(n, true);
      break;
    }
    used_after[user->attrs().tuple_index] = true;
  }
  const HloInstruction* body_param = body->parameter_instruction(0);
  const HloInstruction* cond_param = cond->parameter_instruction(0);
  auto passed_through = [&](int64_t k) {
    const HloInstruction* out = body_root->operand(k);
    return out->opcode() == HloOpcode::kGetTupleElement && out->operand(0) == body_param &&
           out->attrs().tuple_index == k;
  };
  // Only elements unread after the loop or passed through can go; their bits index the
  // dependency sets.
  std::vector<int64_t> bit(n, -1);
  int64_t num_bits = 0;
  for (int64_t k = 0; k < n; ++k)
    if (!used_after[k] || passed_through(k)) bit[k] = num_bits++;
  if (num_bits == 0) return false;

  absl::flat_hash_map<const HloInstruction*, int64_t> slot;
  auto tracked = [&](const HloInstruction* inst) {
    return inst != body_param && inst != cond_param && inst != body_root;
  };
  for (HloComputation* comp : {body, cond})
    for (const auto& inst : comp->instructions())
      if (tracked(inst.get())) slot.emplace(inst.get(), static_cast<int64_t>(slot.size()));
  const int64_t num_slots = slot.size();
  const int64_t side_effect_row = num_slots, affects_others_row = num_slots + 1;
  DenseBitSets deps(num_slots + 2, num_bits);
  std::vector<int64_t> set_parent(num_slots);
  for (int64_t i = 0; i < num_slots; ++i) set_parent[i] = i;
  auto find = [&](int64_t s) {
    while (set_parent[s] != s) s = set_parent[s] = set_parent[set_parent[s]];
    return s;
  };
  auto merge = [&](int64_t a, int64_t c) { set_parent[find(a)] = find(c); };

  // Union-find over connected instructions; a get-tuple-element of the parameter joins the
  // body output of its index and is seeded with its element's bit. Sinks: side effects and
  // the condition's root.
  std::vector<const HloInstruction*> sinks;
  for (HloComputation* comp : {body, cond}) {
    const HloInstruction* param = comp->parameter_instruction(0);
    for (const auto& ptr : comp->instructions()) {
      const HloInstruction* inst = ptr.get();
      if (!tracked(inst)) continue;
      const int64_t s = slot.at(inst);
      if (inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0) == param) {
        const int64_t k = inst->attrs().tuple_index;
        if (bit[k] >= 0) deps.Set(s, bit[k]);
        const HloInstruction* out = body_root->operand(k);
        if (out != inst && tracked(out)) merge(slot.at(out), s);
      } else {
        for (const HloInstruction* op : inst->operands())
          if (tracked(op)) merge(slot.at(op), s);
      }
      if (cf::HasSideEffect(*inst) || inst == cond->root_instruction()) sinks.push_back(inst);
    }
  }
  // deps[s] |= deps of every tracked operand, for `target` and all it depends on.
  enum class Visit : uint8_t { kNew, kOnStack, kDone };
  std::vector<Visit> state(num_slots, Visit::kNew);
  auto compute_deps = [&](const HloInstruction* target) {
    std::vector<const HloInstruction*> stack = {target};
    while (!stack.empty()) {
      const HloInstruction* inst = stack.back();
      const int64_t s = slot.at(inst);
      if (state[s] == Visit::kDone) {
        stack.pop_back();
        continue;
      }
      if (state[s] == Visit::kNew) {
        state[s] = Visit::kOnStack;
        for (const HloInstruction* op : inst->operands())
          if (tracked(op) && state[slot.at(op)] == Visit::kNew) stack.push_back(op);
        continue;
      }
      for (const HloInstruction* op : inst->operands())
        if (tracked(op)) deps.Or(s, slot.at(op));
      state[s] = Visit::kDone;
      stack.pop_back();
    }
  };
  for (const HloInstruction* sink : sinks) {
    compute_deps(sink);
    deps.Or(side_effect_row, slot.at(sink));
  }
  for (int64_t k = 0; k < n; ++k) {
    const HloInstruction* out = body_root->operand(k);
    if (!tracked(out)) return false;
    compute_deps(out);
    if (bit[k] >= 0) {
      deps.OrWithout(affects_others_row, slot.at(out), bit[k]);  // updating itself is fine
    } else {
      deps.Or(affects_others_row, slot.at(out));
    }
  }
  std::vector<bool> keep(n, true);
  for (int64_t k = 0; k < n; ++k)
    if (!used_after[k] && !deps.Test(affects_others_row, bit[k]) && !deps.Test(side_effect_row, bit[k]))
      keep[k] = false;
  // Groups: (set, index) for every output and every parameter read.
  std::vector<std::pair<int64_t, int64_t>> members;
  for (int64_t k = 0; k < n; ++k) members.push_back({find(slot.at(body_root->operand(k))), k});
  for (HloComputation* comp : {body, cond})
    for (const HloInstruction* gte : comp->parameter_instruction(0)->users())
      members.push_back({find(slot.at(gte)), gte->attrs().tuple_index});
  std::sort(members.begin(), members.end());
  auto blocks = [&](int64_t k) { return bit[k] < 0 || deps.Test(side_effect_row, bit[k]); };
  for (size_t begin = 0; begin < members.size();) {
    size_t end = begin;
    bool blocked = false;
    while (end < members.size() && members[end].first == members[begin].first) blocked |= blocks(members[end++].second);
    if (!blocked)
      for (size_t i = begin; i < end; ++i) keep[members[i].second] = false;
    begin = end;
  }
  std::vector<int64_t> kept;
  for (int64_t k = 0; k < n; ++k)
    if (keep[k]) kept.push_back(k);
  if (static_cast<int64_t>(kept.size()) == n) return false;
  return RemoveDeadTupleIndices(b, w, kept, nullptr, cleanup);
}

// Merges the elements of each group in `groups` (old indices, ascending) into its first.
absl::StatusOr<bool> RemoveRepeatedWhileTupleIndices(Builder& b, HloInstruction* w,
                                                     const std::vector<std::vector<int64_t>>& groups,
                                                     bool replace_with_init, cf::DeferredCleanup& cleanup) {
  std::map<int64_t, int64_t> dead_to_surviving;
  for (const std::vector<int64_t>& group : groups)
    for (size_t i = 1; i < group.size(); ++i) dead_to_surviving[group[i]] = group[0];
  if (dead_to_surviving.empty()) return false;
  // Inside the loop, reads of a merged element read the survivor.
  for (HloComputation* comp : {w->while_body(), w->while_condition()}) {
    HloInstruction* param = comp->parameter_instruction(0);
    std::map<int64_t, HloInstruction*> survivor_gte;
    std::vector<HloInstruction*> gtes = param->users();
    for (HloInstruction* gte : gtes) {
      auto it = dead_to_surviving.find(gte->attrs().tuple_index);
      if (it == dead_to_surviving.end()) continue;
      HloInstruction*& survivor = survivor_gte[it->second];
      if (survivor == nullptr) survivor = b.Gte(comp, param, it->second, InstructionAfter(param));
      gte->ReplaceAllUsesWith(survivor);
    }
  }
  const int64_t n = w->shape().tuple_shapes().size();
  std::vector<int64_t> keep;
  for (int64_t k = 0; k < n; ++k)
    if (!dead_to_surviving.contains(k)) keep.push_back(k);
  return RemoveDeadTupleIndices(b, w, keep, replace_with_init ? nullptr : &dead_to_surviving, cleanup);
}

// XLA's TryRemoveRepeatedWhileTupleIndices: elements with the same init that the body passes
// through, or updates with the same dynamic-update-slice, always hold the same value.
absl::StatusOr<bool> TryRemoveRepeatedWhileTupleIndices(Builder& b, HloInstruction* w, cf::DeferredCleanup& cleanup) {
  if (DceDisabled(w) || cf::HasControlDependencies(*w)) return false;
  if (w->operand(0)->opcode() != HloOpcode::kTuple || w->while_body()->root_instruction()->opcode() != HloOpcode::kTuple ||
      !AllWhileParamConsumersGte(w))
    return false;
  auto group_by = [&](auto key_of) {
    std::vector<std::pair<std::vector<const HloInstruction*>, std::vector<int64_t>>> groups;
    const HloInstruction* init = w->operand(0);
    const HloInstruction* root = w->while_body()->root_instruction();
    for (int64_t k = 0; k < init->operand_count(); ++k) {
      std::optional<std::vector<const HloInstruction*>> key = key_of(init->operand(k), root->operand(k), k);
      if (!key) continue;
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == *key; });
      if (it == groups.end()) {
        groups.push_back({*key, {k}});
      } else {
        it->second.push_back(k);
      }
    }
    std::vector<std::vector<int64_t>> out;
    for (auto& g : groups) out.push_back(std::move(g.second));
    return out;
  };
  using Key = std::optional<std::vector<const HloInstruction*>>;
  std::vector<std::vector<int64_t>> passed = group_by([](const HloInstruction* init, const HloInstruction* out, int64_t k) -> Key {
    if (!IsGteOfParam(out, k)) return std::nullopt;
    return std::vector<const HloInstruction*>{init};
  });
  HLOC_CF_ASSIGN_OR_RETURN(bool changed, RemoveRepeatedWhileTupleIndices(b, w, passed, true, cleanup));
  if (w->operand(0)->opcode() != HloOpcode::kTuple || w->while_body()->root_instruction()->opcode() != HloOpcode::kTuple)
    return changed;
  std::vector<std::vector<int64_t>> updated = group_by([](const HloInstruction* init, const HloInstruction* out, int64_t k) -> Key {
    if (out->opcode() != HloOpcode::kDynamicUpdateSlice || !IsGteOfParam(out->operand(0), k)) return std::nullopt;
    std::vector<const HloInstruction*> key = {init};
    for (int64_t i = 1; i < out->operand_count(); ++i) key.push_back(out->operand(i));
    return key;
  });
  HLOC_CF_ASSIGN_OR_RETURN(bool merged, RemoveRepeatedWhileTupleIndices(b, w, updated, false, cleanup));
  return changed || merged;
}

// XLA's TryRemoveConstantParams: an element that is the same constant in the init and the
// body's result is that constant throughout.
absl::StatusOr<bool> TryRemoveConstantParams(Builder& b, HloInstruction* w, cf::DeferredCleanup& cleanup) {
  if (DceDisabled(w) || cf::HasControlDependencies(*w)) return false;
  HloInstruction* init = w->operand(0);
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  const HloInstruction* root = body->root_instruction();
  if (init->opcode() != HloOpcode::kTuple || root->opcode() != HloOpcode::kTuple || !AllWhileParamConsumersGte(w))
    return false;
  const int64_t n = init->operand_count();
  std::vector<int64_t> keep;
  std::map<int64_t, const Literal*> constants;
  for (int64_t k = 0; k < n; ++k) {
    const HloInstruction* a = init->operand(k);
    const HloInstruction* c = root->operand(k);
    if (a->opcode() == HloOpcode::kConstant && c->opcode() == HloOpcode::kConstant && a->attrs().literal &&
        c->attrs().literal && *a->attrs().literal == *c->attrs().literal && a->shape().EqualIgnoringLayout(c->shape())) {
      constants[k] = &*a->attrs().literal;
    } else {
      keep.push_back(k);
    }
  }
  if (constants.empty()) return false;
  if (keep.empty()) {
    // Nothing is carried: the loop's value is its init. (XLA replaces the loop outright; a
    // loop with side effects is kept here, since they would vanish with it.)
    if (cf::ComputationHasSideEffect(*body) || cf::ComputationHasSideEffect(*cond)) return false;
    HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(w, init, &cleanup));
    return true;
  }
  for (HloComputation* comp : {body, cond}) {
    HloInstruction* param = comp->parameter_instruction(0);
    std::vector<HloInstruction*> gtes = param->users();
    for (HloInstruction* gte : gtes) {
      auto it = constants.find(gte->attrs().tuple_index);
      if (it == constants.end() || gte->user_count() == 0) continue;
      gte->ReplaceAllUsesWith(b.Constant(comp, *it->second, InstructionAfter(gte)));
    }
  }
  return RemoveDeadTupleIndices(b, w, keep, nullptr, cleanup);
}

// XLA's TryPropagateConstant: a scalar element whose init is a constant and which the body
// passes through is that constant inside the loop.
bool TryPropagateConstant(Builder& b, HloInstruction* w) {
  const HloInstruction* init = w->operand(0);
  HloComputation* body = w->while_body();
  const HloInstruction* root = body->root_instruction();
  if (init->opcode() != HloOpcode::kTuple || root->opcode() != HloOpcode::kTuple) return false;
  std::map<int64_t, const Literal*> constants;
  for (int64_t k = 0; k < root->operand_count() && k < init->operand_count(); ++k) {
    const HloInstruction* out = root->operand(k);
    const HloInstruction* in = init->operand(k);
    if (IsGteOfParam(out, k) && cf::IsScalar(out->shape()) && in->opcode() == HloOpcode::kConstant && in->attrs().literal)
      constants[k] = &*in->attrs().literal;
  }
  bool changed = false;
  for (HloComputation* comp : {w->while_condition(), body}) {
    if (comp->num_parameters() != 1) continue;
    std::vector<HloInstruction*> users = comp->parameter_instruction(0)->users();
    for (HloInstruction* gte : users) {
      if (gte->opcode() != HloOpcode::kGetTupleElement || (gte->user_count() == 0 && !gte->IsRoot())) continue;
      auto it = constants.find(gte->attrs().tuple_index);
      if (it == constants.end()) continue;
      gte->ReplaceAllUsesWith(b.Constant(comp, *it->second, InstructionAfter(gte)));
      changed = true;
    }
  }
  return changed;
}

// The trip count when it is 0 or 1, found by running the condition (and once the body) on
// a constant init with the evaluator. The caller has checked the condition is side-effect
// free; the body only runs when it is too.
std::optional<int64_t> EvaluateSmallTripCount(const HloInstruction* w) {
  // Only loops cheap enough to run at compile time.
  std::optional<int64_t> cond_cost = cf::EvaluationCost(*w->while_condition());
  if (!cond_cost || *cond_cost > cf::kMaxEvaluationCost) return std::nullopt;
  std::optional<Literal> init = cf::EvaluateExpression(w->operand(0));
  if (!init) return std::nullopt;
  EvaluatorOptions options;
  options.max_loop_iterations = 1000;
  options.max_value_bytes = int64_t{64} << 20;
  auto condition = [&](const Literal& state) -> std::optional<bool> {
    const Literal* args[] = {&state};
    absl::StatusOr<Literal> r = EvaluateComputation(*w->while_condition(), args, options);
    if (!r.ok() || r->element_type() != PrimitiveType::PRED || r->element_count() != 1) return std::nullopt;
    return r->GetPred(0);
  };
  std::optional<bool> first = condition(*init);
  if (!first) return std::nullopt;
  if (!*first) return 0;
  std::optional<int64_t> body_cost = cf::EvaluationCost(*w->while_body());
  if (!body_cost || *body_cost > cf::kMaxEvaluationCost) return std::nullopt;
  const Literal* args[] = {&*init};
  absl::StatusOr<Literal> next = EvaluateComputation(*w->while_body(), args, options);
  if (!next.ok()) return std::nullopt;
  std::optional<bool> second = condition(*next);
  if (second && !*second) return 1;
  return std::nullopt;
}

// XLA's TryRemoveWhileLoop: trip count 0 -> the init; trip count 1 -> the inlined body.
absl::StatusOr<bool> TryRemoveWhileLoop(Builder& b, HloInstruction* w, cf::DeferredCleanup& cleanup) {
  if (DceDisabled(w) || cf::HasControlDependencies(*w)) return false;
  // Removing the loop removes its condition's effects.
  if (cf::ComputationHasSideEffect(*w->while_condition())) return false;
  std::optional<int64_t> trips = cf::ComputeWhileLoopTripCount(w, /*max_brute_force_iters=*/1);
  if (!trips) trips = EvaluateSmallTripCount(w);
  if (!trips) return false;
  if (*trips == 0) {
    HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(w, w->operand(0), &cleanup));
    return true;
  }
  if (*trips != 1 || cf::HasTrueFrontendAttribute(*w, {"skip-simplify-while-loops_trip-count-one"})) return false;
  // Inlining a body with side effects would detach them from the loop's data dependencies
  // (an infeed could move before an earlier one).
  if (cf::ComputationHasSideEffect(*w->while_body())) return false;
  HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * result, b.Inline(w->parent(), *w->while_body(), {w->operand(0)}, w));
  HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(w, result, &cleanup));
  return true;
}

// XLA's TryRemoveTrivialCompare (simplify_compare_instrs): inside a loop whose counter i runs
// from c for k trips, i < x and i > x are constant when x <= c or x >= c + k.
absl::StatusOr<bool> TryRemoveTrivialCompare(Builder& b, HloInstruction* w, cf::DeferredCleanup& cleanup) {
  std::optional<int64_t> index = cf::GetLoopInductionVarTupleIdx(w);
  if (!index) return false;
  const HloInstruction* init = w->operand(0)->operand(*index);
  if (init->opcode() != HloOpcode::kConstant || !init->attrs().literal) return false;
  std::optional<int64_t> trips = cf::MatchTrivialLoopTripCount(w, *index, *init->attrs().literal);
  std::optional<int64_t> start = cf::LiteralAsScalarInt64(*init->attrs().literal);
  if (!trips || !start) return false;
  int64_t end;
  if (__builtin_add_overflow(*start, *trips, &end)) return false;
  HloComputation* body = w->while_body();
  for (HloInstruction* inst : body->MakeInstructionPostOrder()) {
    if (inst->opcode() != HloOpcode::kCompare || !IsGteOfParam(inst->operand(0), *index)) continue;
    const HloInstruction* x = inst->operand(1);
    if (x->opcode() != HloOpcode::kConstant || !x->attrs().literal || !cf::IsScalar(x->shape())) continue;
    std::optional<int64_t> value = cf::LiteralAsScalarInt64(*x->attrs().literal);
    std::optional<ComparisonDirection> dir = inst->attrs().comparison_direction;
    if (!value || (dir != ComparisonDirection::kLt && dir != ComparisonDirection::kGt)) continue;
    std::optional<bool> result;
    if (*value <= *start) result = dir == ComparisonDirection::kGt;
    else if (*value >= end) result = dir == ComparisonDirection::kLt;
    if (!result) continue;
    HloInstruction* constant = b.Constant(body, Literal::ScalarInt(PrimitiveType::PRED, *result ? 1 : 0), inst);
    HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(inst, constant, &cleanup));
    return true;
  }
  return false;
}

// XLA's TryMergeInductionVariables for elements of type `type`: each induction variable
// (x += constant each trip) is rewritten as init + counter * constant off one trip counter
// (an existing x += 1 from 0, or a new last element), so the loop carries fewer updates.
absl::StatusOr<bool> TryMergeInductionVariables(Builder& b, HloInstruction* w, PrimitiveType type,
                                                cf::DeferredCleanup& cleanup) {
  HloInstruction* init = w->operand(0);
  HloComputation* body = w->while_body();
  HloComputation* cond = w->while_condition();
  HloInstruction* root = body->root_instruction();
  if (init->opcode() != HloOpcode::kTuple || root->opcode() != HloOpcode::kTuple || !AllWhileParamConsumersGte(w) ||
      cf::HasControlDependencies(*w) || !init->shape().EqualIgnoringLayout(root->shape()))
    return false;
  const Shape old_shape = w->shape();
  const int64_t n = old_shape.tuple_shapes().size();
  std::optional<int64_t> counter;
  std::map<int64_t, const HloInstruction*> steps;  // induction variable -> its constant step
  for (int64_t k = 0; k < n; ++k) {
    const HloInstruction* out = root->operand(k);
    if (out->opcode() != HloOpcode::kAdd || out->shape().element_type() != type || !cf::IsEffectiveScalar(out->shape()))
      continue;
    const HloInstruction* gte = out->operand(0);
    const HloInstruction* step = out->operand(1);
    if (!IsGteOfParam(gte, k)) std::swap(gte, step);
    if (!IsGteOfParam(gte, k) || gte->operand(0) != body->parameter_instruction(0) ||
        step->opcode() != HloOpcode::kConstant || !step->attrs().literal)
      continue;
    const HloInstruction* start = init->operand(k);
    if (!counter && cf::LiteralAsScalarInt64(*step->attrs().literal) == 1 && start->opcode() == HloOpcode::kConstant &&
        start->attrs().literal && cf::LiteralAsScalarInt64(*start->attrs().literal) == 0) {
      counter = k;
    } else {
      steps[k] = step;
    }
  }
  if (static_cast<int64_t>(steps.size()) + (counter ? 1 : 0) < 2) return false;

  const bool added_counter = !counter;
  const Shape scalar(type, {});
  Shape new_shape = old_shape;
  if (added_counter) {
    counter = n;
    new_shape.mutable_tuple_shapes().push_back(scalar);
  }
  // init + counter * step, for element k, placed before `before`.
  auto old_form = [&](HloComputation* comp, HloInstruction* start, HloInstruction* trips, int64_t k,
                      const HloInstruction* before) {
    const Shape& shape = old_shape.tuple_shapes(k);
    if (!trips->shape().EqualIgnoringLayout(shape)) trips = b.Reshape(comp, shape, trips, before);
    HloInstruction* step = b.Constant(comp, *steps.at(k)->attrs().literal, before);
    auto mul = std::make_unique<HloInstruction>(HloOpcode::kMultiply, shape);
    mul->AppendOperand(trips);
    mul->AppendOperand(step);
    HloInstruction* product = b.Add(comp, std::move(mul), before);
    auto add = std::make_unique<HloInstruction>(HloOpcode::kAdd, shape);
    add->AppendOperand(start);
    add->AppendOperand(product);
    return b.Add(comp, std::move(add), before);
  };
  // Inside the loop an induction variable's element now holds its init; every read of it
  // becomes init + counter * step.
  for (HloComputation* comp : {body, cond}) {
    HloInstruction* param = comp->parameter_instruction(0);
    param->mutable_shape() = new_shape;
    HloInstruction* trips = b.Gte(comp, param, *counter, InstructionAfter(param));
    std::vector<HloInstruction*> gtes = param->users();
    for (HloInstruction* gte : gtes) {
      int64_t k = gte->attrs().tuple_index;
      if (!steps.contains(k)) continue;
      std::vector<HloInstruction*> readers = gte->users();
      HloInstruction* value = old_form(comp, gte, trips, k, InstructionAfter(gte));
      for (HloInstruction* reader : readers)
        for (int64_t i = 0; i < reader->operand_count(); ++i)
          if (reader->operand(i) == gte) reader->ReplaceOperandWith(i, value);
    }
    if (comp == body) {
      std::vector<HloInstruction*> elements;
      for (int64_t k = 0; k < n; ++k)
        elements.push_back(steps.contains(k) ? b.Gte(body, param, k, nullptr) : root->operand(k));
      if (added_counter) {
        auto add = std::make_unique<HloInstruction>(HloOpcode::kAdd, scalar);
        add->AppendOperand(trips);
        add->AppendOperand(b.Constant(body, Literal::ScalarInt(type, 1), nullptr));
        elements.push_back(b.Add(body, std::move(add), nullptr));
      }
      body->set_root_instruction(b.Tuple(body, elements, nullptr, root->name()));
      cleanup.Add(root);
    }
  }
  HloComputation* parent = w->parent();
  if (added_counter) {
    std::vector<HloInstruction*> elements(init->operands().begin(), init->operands().end());
    elements.push_back(b.Constant(parent, Literal::ScalarInt(type, 0), w));
    w->ReplaceOperandWith(0, b.Tuple(parent, elements, w, init->name()));
    cleanup.Add(init);
  }
  // After the loop: readers see the old form again.
  std::vector<HloInstruction*> users = w->users();
  const bool was_root = w->IsRoot();
  w->mutable_shape() = new_shape;
  const HloInstruction* after = InstructionAfter(w);
  HloInstruction* trips = nullptr;
  auto value_of = [&](int64_t k, const HloInstruction* before) -> HloInstruction* {
    HloInstruction* element = b.Gte(parent, w, k, before);
    if (!steps.contains(k)) return element;
    if (trips == nullptr) trips = b.Gte(parent, w, *counter, before);
    return old_form(parent, element, trips, k, before);
  };
  bool all_gte = !was_root;
  for (const HloInstruction* user : users) all_gte &= user->opcode() == HloOpcode::kGetTupleElement;
  if (all_gte) {
    for (HloInstruction* user : users) {
      if (!steps.contains(user->attrs().tuple_index)) continue;
      user->ReplaceAllUsesWith(value_of(user->attrs().tuple_index, after));
      cleanup.Add(user);
    }
  } else {
    std::vector<HloInstruction*> elements;
    for (int64_t k = 0; k < n; ++k) elements.push_back(value_of(k, after));
    HloInstruction* rebuilt = b.Tuple(parent, elements, after);
    for (HloInstruction* user : users)
      for (int64_t i = 0; i < user->operand_count(); ++i)
        if (user->operand(i) == w) user->ReplaceOperandWith(i, rebuilt);
    if (was_root) parent->set_root_instruction(rebuilt);
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> WhileLoopSimplifier::Run(HloModule& module, PassContext& context) {
  (void)context;
  Builder b(module);
  cf::DeferredCleanup cleanup;
  // Loops by (computation, unique id): a rewrite may delete a loop nested in another's body
  // before the list reaches it, and its memory may be reused.
  std::vector<std::pair<HloComputation*, int64_t>> whiles;
  std::vector<HloComputation*> loop_computations;
  for (const auto& comp : module.computations())
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kWhile) whiles.push_back({comp.get(), inst->unique_id()});
  auto find_loop = [](HloComputation* comp, int64_t id) -> HloInstruction* {
    for (const auto& inst : comp->instructions())
      if (inst->unique_id() == id) return inst->opcode() == HloOpcode::kWhile ? inst.get() : nullptr;
    return nullptr;
  };
  auto contains_opcode = [](const HloComputation* comp, std::initializer_list<HloOpcode> ops) {
    std::vector<const HloComputation*> work = {comp};
    absl::flat_hash_set<const HloComputation*> seen;
    while (!work.empty()) {
      const HloComputation* c = work.back();
      work.pop_back();
      if (!seen.insert(c).second) continue;
      for (const auto& inst : c->instructions()) {
        if (std::find(ops.begin(), ops.end(), inst->opcode()) != ops.end()) return true;
        work.insert(work.end(), inst->called_computations().begin(), inst->called_computations().end());
      }
    }
    return false;
  };

  bool changed = false;
  for (auto [where, id] : whiles) {
    HloInstruction* w = find_loop(where, id);
    if (w == nullptr || w->called_computations().size() != 2 || w->operand_count() != 1) continue;
    // Loops replaced earlier in this run are dead and wait for the cleanup.
    if (w->user_count() == 0 && !w->IsRoot() && !cf::HasSideEffect(*w)) continue;
    HloComputation* body = w->while_body();
    HloComputation* cond = w->while_condition();
    // Each rewrite edits the body and condition in place: they must be this loop's alone.
    if (b.callers.Of(body).size() != 1 || b.callers.Of(cond).size() != 1 || body == cond ||
        DceDisabled(w) || body->num_parameters() != 1 || cond->num_parameters() != 1)
      continue;
    loop_computations.push_back(body);
    loop_computations.push_back(cond);

    HLOC_CF_ASSIGN_OR_RETURN(bool result, TryRemoveRepeatedWhileTupleIndices(b, w, cleanup));
    changed |= result;
    if (result) continue;
    HLOC_CF_ASSIGN_OR_RETURN(result, TryRemoveDeadWhileParams(b, w, cleanup));
    changed |= result;
    if (result) continue;
    HLOC_CF_ASSIGN_OR_RETURN(result, TryRemoveConstantParams(b, w, cleanup));
    changed |= result;
    if (result) continue;
    if (options_.simplify_compare_instrs) {
      HLOC_CF_ASSIGN_OR_RETURN(result, TryRemoveTrivialCompare(b, w, cleanup));
      changed |= result;
      if (result) continue;
    }
    // The matching send and recv sides rely on the loop's structure: leave it.
    std::initializer_list<HloOpcode> send_recv = {HloOpcode::kSend, HloOpcode::kSendDone, HloOpcode::kRecv,
                                                  HloOpcode::kRecvDone};
    if (contains_opcode(body, send_recv) || contains_opcode(cond, send_recv)) continue;
    const bool contains_domain = contains_opcode(body, {HloOpcode::kDomain}) || contains_opcode(cond, {HloOpcode::kDomain});
    changed |= TryPropagateConstant(b, w);
    HLOC_CF_ASSIGN_OR_RETURN(result, TryRemoveWhileLoop(b, w, cleanup));
    changed |= result;
    if (result || contains_domain) continue;
    for (PrimitiveType type : {PrimitiveType::S8, PrimitiveType::U8, PrimitiveType::S32, PrimitiveType::U32,
                               PrimitiveType::S64, PrimitiveType::U64}) {
      HLOC_CF_ASSIGN_OR_RETURN(result, TryMergeInductionVariables(b, w, type, cleanup));
      changed |= result;
    }
  }
  HLOC_CF_RETURN_IF_ERROR(cleanup.Run());
  if (changed) {
    // As XLA, a DCE sweep: the rewrites leave dead values behind in and around the loops.
    for (const auto& comp : module.computations()) HLOC_CF_RETURN_IF_ERROR(cf::RemoveDeadInstructions(comp.get()).status());
    HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, loop_computations));
  }
  return changed;
}

}  // namespace hloc
