#include "passes/pass_util.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace hloc {

using O = HloOpcode;

// --- Side effects ----------------------------------------------------------------------------

namespace {
bool IsSpmdModule(const HloInstruction& inst) {
  const HloComputation* c = inst.parent();
  const HloModule* m = c != nullptr ? c->parent() : nullptr;
  return m != nullptr && m->config().num_partitions > 1;
}
}  // namespace

bool HasSideEffectNoRecurse(const HloInstruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case O::kSend: case O::kSendDone: case O::kRecv: case O::kRecvDone: case O::kRng:
    case O::kRngGetAndUpdateState: case O::kInfeed: case O::kOutfeed: case O::kAllReduceStart:
    case O::kAllReduceDone: case O::kAllGatherStart: case O::kAllGatherDone: case O::kCollectiveBroadcast:
    case O::kCollectivePermuteStart: case O::kCollectivePermuteDone:
      return true;
    case O::kAllToAll: case O::kAllGather: case O::kAllReduce: case O::kReduceScatter:
      if (a.constrain_layout) return true;
      [[fallthrough]];
    case O::kCollectivePermute:
      // XLA: a channel id makes a collective side-effecting unless the module is SPMD
      // partitioned (use_spmd_partitioning). HLO text does not carry that flag; JAX sets it
      // whenever it compiles for several partitions, so hloc takes num_partitions > 1 for it.
      return a.channel_id.has_value() && !IsSpmdModule(inst);
    case O::kCustomCall:
      return a.custom_call_has_side_effect;
    default:
      return false;
  }
}

namespace {
// Whether anything reachable through `roots` (computations) has a side effect; iterative.
bool AnyComputationHasSideEffect(std::vector<const HloComputation*> stack) {
  absl::flat_hash_set<const HloComputation*> seen(stack.begin(), stack.end());
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    for (const auto& inst : c->instructions()) {
      if (HasSideEffectNoRecurse(*inst)) return true;
      for (const HloComputation* callee : inst->called_computations())
        if (callee != nullptr && seen.insert(callee).second) stack.push_back(callee);
    }
  }
  return false;
}
}  // namespace

bool HasSideEffect(const HloInstruction& inst) {
  if (HasSideEffectNoRecurse(inst)) return true;
  std::vector<const HloComputation*> callees;
  for (const HloComputation* c : inst.called_computations())
    if (c != nullptr) callees.push_back(c);
  return !callees.empty() && AnyComputationHasSideEffect(std::move(callees));
}

bool ComputationHasSideEffect(const HloComputation& computation) {
  return AnyComputationHasSideEffect({&computation});
}

// --- Structure ---------------------------------------------------------------------------------

bool IsSafelyRemovable(const HloInstruction& inst, bool ignore_control_dependencies) {
  if (!ignore_control_dependencies && HasControlDependencies(inst)) return false;
  return inst.opcode() != O::kParameter;
}

// --- Removal and replacement --------------------------------------------------------------------

absl::Status RemoveInstruction(HloInstruction* inst) {
  HloComputation* comp = inst->parent();
  if (comp == nullptr) return absl::InvalidArgumentError(absl::StrCat(inst->name(), " is not in a computation"));
  if (inst->opcode() == O::kFusion)
    for (HloComputation* c : inst->called_computations())
      if (c != nullptr && c->FusionInstruction() == inst) c->SetFusionInstruction(nullptr);
  return comp->RemoveInstruction(inst);
}

namespace {

// Keeps the ordering a removed instruction imposed: each control predecessor now precedes
// each control successor directly.
void RelayControlEdgesAround(HloInstruction* inst) {
  std::vector<HloInstruction*> preds = inst->control_predecessors();
  std::vector<HloInstruction*> succs = inst->control_successors();
  for (HloInstruction* p : preds)
    for (HloInstruction* s : succs)
      if (p != s) p->AddControlDependencyTo(s);
}

// Removes the dead, removable instructions of `worklist` and, transitively, operands that
// become dead through them. `first` (may be null) is removed even if side-effecting.
absl::Status RemoveDeadFrom(HloComputation& comp, std::deque<HloInstruction*> worklist, const HloInstruction* first,
                            bool ignore_control_dependencies, std::vector<const HloInstruction*>* removed_out) {
  // Holds only removed pointers, compared before any dereference (a twice-used operand is
  // queued twice and may be gone by its second turn).
  absl::flat_hash_set<const HloInstruction*> removed;
  while (!worklist.empty()) {
    HloInstruction* item = worklist.front();
    worklist.pop_front();
    if (removed.contains(item)) continue;
    if (!IsDead(*item) || !IsSafelyRemovable(*item, ignore_control_dependencies)) continue;
    if (item != first && HasSideEffect(*item)) continue;
    if (ignore_control_dependencies) RelayControlEdgesAround(item);
    for (HloInstruction* op : item->operands()) worklist.push_back(op);
    absl::Status st = RemoveInstruction(item);
    if (!st.ok()) return st;
    removed.insert(item);
    if (removed_out != nullptr) removed_out->push_back(item);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RemoveInstructionAndUnusedOperands(HloInstruction* inst, bool ignore_control_dependencies,
                                                std::vector<const HloInstruction*>* removed) {
  HloComputation* comp = inst->parent();
  if (comp == nullptr) return absl::InvalidArgumentError(absl::StrCat(inst->name(), " is not in a computation"));
  if (inst->IsRoot()) return absl::FailedPreconditionError(absl::StrCat("cannot remove root ", inst->name()));
  if (!IsDead(*inst)) return absl::FailedPreconditionError(absl::StrCat("cannot remove ", inst->name(), ": it has users"));
  if (!IsSafelyRemovable(*inst, ignore_control_dependencies))
    return absl::FailedPreconditionError(absl::StrCat("cannot safely remove ", inst->name()));
  return RemoveDeadFrom(*comp, {inst}, inst, ignore_control_dependencies, removed);
}

absl::StatusOr<bool> ReplaceInstruction(HloInstruction* old_inst, HloInstruction* replacement,
                                        const ReplaceOptions& options) {
  HloComputation* comp = old_inst->parent();
  if (comp == nullptr || replacement->parent() != comp)
    return absl::InvalidArgumentError(absl::StrCat("cannot replace ", old_inst->name(), " with ", replacement->name(),
                                                   ": not in the same computation"));
  if (old_inst == replacement) return false;
  if (old_inst->opcode() == O::kParameter)
    return absl::InvalidArgumentError(absl::StrCat("cannot replace parameter ", old_inst->name()));
  InstructionAttributes& na = replacement->mutable_attrs();
  const InstructionAttributes& oa = old_inst->attrs();
  if (options.preserve_sharding && na.sharding && oa.sharding && !(*na.sharding == *oa.sharding)) return false;
  if (options.relay_control_dependency) {
    for (HloInstruction* p : old_inst->control_predecessors())
      if (p != replacement) p->AddControlDependencyTo(replacement);
    for (HloInstruction* s : old_inst->control_successors())
      if (s != replacement) replacement->AddControlDependencyTo(s);
  } else if (HasControlDependencies(*old_inst)) {
    return false;
  }
  // The replacement computes the same value, so it most likely came from the same source op.
  if (na.metadata.op_name.empty() && !oa.metadata.op_name.empty()) na.metadata = oa.metadata;
  if (na.frontend_attributes.empty()) na.frontend_attributes = oa.frontend_attributes;
  if (!na.sharding && oa.sharding) na.sharding = oa.sharding;

  old_inst->ReplaceAllUsesWith(replacement);
  std::vector<HloInstruction*> operands = old_inst->operands();
  // Removing detaches old's control edges, which were relayed above (or there were none).
  absl::Status st = RemoveInstruction(old_inst);
  if (!st.ok()) return st;
  if (options.remove_unused_operands) {
    st = RemoveDeadFrom(*comp, std::deque<HloInstruction*>(operands.begin(), operands.end()), nullptr,
                        options.relay_control_dependency, nullptr);
    if (!st.ok()) return st;
  }
  return true;
}

// --- Names ------------------------------------------------------------------------------------

namespace {
// "base.N" -> (base, N); anything else -> (name, 0) with has_number false. A view into `name`:
// fusion passes ask for a name per instruction they clone, and the copies were a good part of it.
void SplitName(absl::string_view name, absl::string_view* base, int64_t* number, bool* has_number) {
  size_t dot = name.rfind('.');
  *has_number = false;
  *number = 0;
  *base = name;
  if (dot == absl::string_view::npos || dot == 0 || dot + 1 >= name.size() || name.size() - dot - 1 > 18) return;
  for (size_t i = dot + 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return;
  int64_t n = 0;
  if (!absl::SimpleAtoi(name.substr(dot + 1), &n)) return;
  *base = name.substr(0, dot);
  *number = n;
  *has_number = true;
}

// The map's entry for `base`, made on first use (looked up by view, copied only then).
template <typename Map>
auto& IdsOf(Map& bases, absl::string_view base) {
  auto it = bases.find(base);
  if (it == bases.end()) it = bases.try_emplace(std::string(base)).first;
  return it->second;
}
}  // namespace

bool NameUniquer::Ids::Contains(int64_t n) const {
  if (n < 0 || n >= kDense) return sparse.contains(n);
  const size_t w = static_cast<size_t>(n / 64);
  return w < dense.size() && ((dense[w] >> (n % 64)) & 1);
}

bool NameUniquer::Ids::Insert(int64_t n) {
  if (n < 0 || n >= kDense) return sparse.insert(n).second;
  const size_t w = static_cast<size_t>(n / 64);
  if (w >= dense.size()) dense.resize(std::max(w + 1, 2 * dense.size()), 0);
  const uint64_t bit = uint64_t{1} << (n % 64);
  if (dense[w] & bit) return false;
  dense[w] |= bit;
  return true;
}

void NameUniquer::Register(const std::string& name) {
  absl::string_view base;
  int64_t n;
  bool has;
  SplitName(name, &base, &n, &has);
  IdsOf(bases_, base).Insert(n);
}

std::string NameUniquer::GetUniqueName(const std::string& hint) {
  absl::string_view base;
  int64_t n;
  bool has;
  SplitName(hint.empty() ? absl::string_view("name") : absl::string_view(hint), &base, &n, &has);
  Ids& ids = IdsOf(bases_, base);
  if (ids.Insert(n)) return n == 0 && !has ? std::string(base) : absl::StrCat(base, ".", n);
  while (ids.Contains(ids.next)) ++ids.next;
  int64_t fresh = ids.next++;
  ids.Insert(fresh);
  return absl::StrCat(base, ".", fresh);
}

NameUniquer InstructionNameUniquer(const HloModule& module) {
  NameUniquer u;
  for (const auto& c : module.computations())
    for (const auto& i : c->instructions()) u.Register(i->name());
  return u;
}

NameUniquer ComputationNameUniquer(const HloModule& module) {
  NameUniquer u;
  for (const auto& c : module.computations()) u.Register(c->name());
  return u;
}

// --- Cloning ------------------------------------------------------------------------------------

std::unique_ptr<HloInstruction> CloneInstruction(const HloInstruction& inst, absl::Span<HloInstruction* const> operands) {
  auto clone = std::make_unique<HloInstruction>(inst.opcode(), inst.shape(), inst.name());
  clone->mutable_attrs() = inst.attrs();
  clone->set_inline_gte(inst.is_inline_gte());
  clone->set_text_location(inst.text_location());
  clone->mutable_called_computations() = inst.called_computations();
  for (HloInstruction* op : operands) clone->AppendOperand(op);
  return clone;
}

HloInstruction* AddInstructionWithUniqueName(HloComputation& computation, std::unique_ptr<HloInstruction> inst,
                                             NameUniquer& names, const HloInstruction* before) {
  inst->set_name(names.GetUniqueName(inst->name()));
  return computation.AddInstructionBefore(std::move(inst), before);
}

namespace {

// XLA's AddSuffixToInstructionName: "x" -> "x.clone", "x.clone" -> "x.clone2",
// "x.clone2" -> "x.clone3".
std::string AddInstructionSuffix(const std::string& name, const std::string& suffix) {
  const std::string dot_suffix = absl::StrCat(".", suffix);
  size_t index = name.rfind(dot_suffix);
  if (index == std::string::npos) return absl::StrCat(name, dot_suffix);
  std::string after = name.substr(index + dot_suffix.size());
  if (after.empty()) return absl::StrCat(name, "2");
  int64_t n = 0;
  if (after.size() <= 18 && absl::SimpleAtoi(after, &n) && n >= 0)
    return absl::StrCat(name.substr(0, index), dot_suffix, n + 1);
  return absl::StrCat(name, dot_suffix);
}

// Fused and async-wrapped computations nest only a few levels in real modules.
constexpr int kMaxCloneDepth = 64;

absl::StatusOr<HloComputation*> CloneComputationImpl(const HloComputation& computation, HloModule& module,
                                                     CloneNames& names, const std::string& suffix, int depth);

absl::Status CloneOwnedCalleesImpl(const HloInstruction& inst, HloInstruction& clone, HloModule& module,
                                   CloneNames& names,
                                   absl::flat_hash_map<const HloComputation*, HloComputation*>& cloned, int depth) {
  const bool owns = inst.opcode() == O::kFusion || inst.opcode() == O::kAsyncStart;
  const bool follows = inst.opcode() == O::kAsyncUpdate || inst.opcode() == O::kAsyncDone;
  if (!owns && !follows) return absl::OkStatus();
  std::vector<HloComputation*>& callees = clone.mutable_called_computations();
  for (size_t k = 0; k < callees.size(); ++k) {
    const HloComputation* callee = inst.called_computations()[k];
    if (callee == nullptr) continue;
    auto it = cloned.find(callee);
    if (it != cloned.end()) {
      callees[k] = it->second;
      continue;
    }
    if (!owns) continue;
    auto copy = CloneComputationImpl(*callee, module, names, "clone", depth + 1);
    if (!copy.ok()) return copy.status();
    cloned[callee] = *copy;
    callees[k] = *copy;
  }
  if (inst.opcode() == O::kFusion && !callees.empty() && callees[0] != nullptr) callees[0]->SetFusionInstruction(&clone);
  return absl::OkStatus();
}

absl::StatusOr<HloComputation*> CloneComputationImpl(const HloComputation& computation, HloModule& module,
                                                     CloneNames& names, const std::string& suffix, int depth) {
  if (depth > kMaxCloneDepth)
    return absl::ResourceExhaustedError(absl::StrCat("computations nest deeper than ", kMaxCloneDepth,
                                                     " levels below ", computation.name()));
  if (computation.root_instruction() == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(), " has no root"));
  std::string name = suffix.empty() ? computation.name() : absl::StrCat(computation.name(), ".", suffix);
  auto copy = std::make_unique<HloComputation>(names.computations.GetUniqueName(name));
  copy->set_execution_thread(computation.execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  absl::flat_hash_map<const HloComputation*, HloComputation*> cloned;
  std::vector<HloInstruction*> order = computation.MakeInstructionPostOrder();
  for (HloInstruction* inst : order) {
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end())
        return absl::InvalidArgumentError(absl::StrCat("cannot clone ", computation.name(), ": operand ", op->name(),
                                                       " of ", inst->name(), " is not defined before it"));
      operands.push_back(it->second);
    }
    std::unique_ptr<HloInstruction> c = CloneInstruction(*inst, operands);
    c->set_name(names.instructions.GetUniqueName(suffix.empty() ? inst->name() : AddInstructionSuffix(inst->name(), suffix)));
    absl::Status st = CloneOwnedCalleesImpl(*inst, *c, module, names, cloned, depth);
    if (!st.ok()) return st;
    map[inst] = copy->AddInstruction(std::move(c));
  }
  for (HloInstruction* inst : order)
    for (HloInstruction* p : inst->control_predecessors()) {
      auto it = map.find(p);
      if (it != map.end()) it->second->AddControlDependencyTo(map[inst]);
    }
  copy->set_root_instruction(map[computation.root_instruction()]);
  return module.AddComputation(std::move(copy));
}

}  // namespace

absl::Status CloneOwnedCallees(const HloInstruction& inst, HloInstruction& clone, HloModule& module, CloneNames& names,
                               absl::flat_hash_map<const HloComputation*, HloComputation*>& cloned) {
  return CloneOwnedCalleesImpl(inst, clone, module, names, cloned, 0);
}

absl::StatusOr<HloComputation*> CloneComputation(const HloComputation& computation, HloModule& module,
                                                 CloneNames& names, const std::string& suffix) {
  return CloneComputationImpl(computation, module, names, suffix, 0);
}

// --- Equality -------------------------------------------------------------------------------------

bool IsBinaryCommutative(HloOpcode op) {
  switch (op) {
    case O::kAdd: case O::kMultiply: case O::kMaximum: case O::kMinimum: case O::kAnd: case O::kOr: case O::kXor:
      return true;
    default:
      return false;
  }
}

namespace {

// Raw attributes that carry meaning for equality: all but XLA's original-value annotation.
std::vector<std::pair<std::string, std::string>> MeaningfulRaw(const InstructionAttributes& a) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& kv : a.raw_attributes)
    if (kv.first != "origin") out.push_back(kv);
  return out;
}

// Every field of InstructionAttributes that gives an instruction its meaning. Metadata,
// frontend attributes, statistics and sharding are deliberately absent (XLA's Identical ignores
// them; sharding is the caller's choice). A field added to InstructionAttributes belongs here.
bool SameMeaningfulAttributes(const InstructionAttributes& a, const InstructionAttributes& b) {
  return a.dimensions == b.dimensions && a.slice == b.slice && a.dynamic_slice_sizes == b.dynamic_slice_sizes &&
         a.window == b.window && a.convolution_dimension_numbers == b.convolution_dimension_numbers &&
         a.feature_group_count == b.feature_group_count && a.batch_group_count == b.batch_group_count &&
         a.dot_dimension_numbers == b.dot_dimension_numbers &&
         a.ragged_dot_dimension_numbers == b.ragged_dot_dimension_numbers &&
         a.gather_dimension_numbers == b.gather_dimension_numbers &&
         a.scatter_dimension_numbers == b.scatter_dimension_numbers && a.indices_are_sorted == b.indices_are_sorted &&
         a.unique_indices == b.unique_indices && a.padding_config == b.padding_config &&
         a.comparison_direction == b.comparison_direction && a.comparison_type == b.comparison_type &&
         a.precision_config == b.precision_config && a.tuple_index == b.tuple_index &&
         a.parameter_number == b.parameter_number && a.parameter_replication == b.parameter_replication &&
         a.literal.has_value() == b.literal.has_value() && (!a.literal || *a.literal == *b.literal) &&
         a.iota_dimension == b.iota_dimension && a.exponent_bits == b.exponent_bits &&
         a.mantissa_bits == b.mantissa_bits && a.epsilon == b.epsilon && a.feature_index == b.feature_index &&
         a.distribution == b.distribution && a.rng_algorithm == b.rng_algorithm && a.fft_type == b.fft_type &&
         a.fft_length == b.fft_length && a.left_side == b.left_side && a.lower == b.lower &&
         a.unit_diagonal == b.unit_diagonal && a.transpose_a == b.transpose_a && a.k == b.k &&
         a.largest == b.largest && a.is_stable == b.is_stable && a.num_carries == b.num_carries &&
         a.is_associative == b.is_associative && a.is_reverse == b.is_reverse && a.fusion_kind == b.fusion_kind &&
         a.custom_call_target == b.custom_call_target && a.api_version == b.api_version &&
         a.custom_call_has_side_effect == b.custom_call_has_side_effect &&
         a.custom_call_schedule == b.custom_call_schedule &&
         a.operand_layout_constraints == b.operand_layout_constraints &&
         a.output_to_operand_aliasing == b.output_to_operand_aliasing && a.opaque == b.opaque &&
         a.replica_groups == b.replica_groups && a.channel_id == b.channel_id &&
         a.use_global_device_ids == b.use_global_device_ids && a.constrain_layout == b.constrain_layout &&
         a.source_target_pairs == b.source_target_pairs && a.is_host_transfer == b.is_host_transfer &&
         a.infeed_config == b.infeed_config && a.outfeed_config == b.outfeed_config &&
         a.outfeed_shape == b.outfeed_shape && a.async_execution_thread == b.async_execution_thread &&
         a.backend_config == b.backend_config && MeaningfulRaw(a) == MeaningfulRaw(b);
}

}  // namespace

bool InstructionsIdentical(const HloInstruction& a, const HloInstruction& b,
                           const std::function<bool(const HloInstruction*, const HloInstruction*)>& eq_operands,
                           const std::function<bool(const HloComputation*, const HloComputation*)>& eq_computations,
                           const IdenticalOptions& options) {
  if (&a == &b) return true;
  if (a.opcode() != b.opcode()) return false;
  if (options.layout_sensitive ? !(a.shape() == b.shape()) : !a.shape().EqualIgnoringLayout(b.shape())) return false;
  const auto& sa = a.attrs().sharding;
  const auto& sb = b.attrs().sharding;
  if (options.sharding_sensitive && sa && sb && !(*sa == *sb)) return false;
  if (a.operand_count() != b.operand_count()) return false;
  // XLA: these have special behaviour (tokens out of thin air, scheduling edges).
  if (a.opcode() == O::kAfterAll || a.opcode() == O::kAddDependency) return false;
  if (options.ignore_commutative_operand_order && IsBinaryCommutative(a.opcode()) && a.operand_count() == 2) {
    if (!(eq_operands(a.operand(0), b.operand(0)) && eq_operands(a.operand(1), b.operand(1))) &&
        !(eq_operands(a.operand(0), b.operand(1)) && eq_operands(a.operand(1), b.operand(0))))
      return false;
  } else {
    for (int64_t i = 0; i < a.operand_count(); ++i)
      if (!eq_operands(a.operand(i), b.operand(i))) return false;
  }
  if (a.called_computations().size() != b.called_computations().size()) return false;
  for (size_t i = 0; i < a.called_computations().size(); ++i) {
    const HloComputation* ca = a.called_computations()[i];
    const HloComputation* cb = b.called_computations()[i];
    if (ca == cb) continue;
    if (ca == nullptr || cb == nullptr || !eq_computations(ca, cb)) return false;
  }
  return SameMeaningfulAttributes(a.attrs(), b.attrs());
}

namespace {

bool ComputationsEqualImpl(const HloComputation& a, const HloComputation& b, bool layout_sensitive, int depth) {
  if (&a == &b) return true;
  if (depth > kMaxCloneDepth) return false;  // too deep to tell: not equal (the safe answer)
  if (a.root_instruction() == nullptr || b.root_instruction() == nullptr) return false;
  if (a.num_parameters() != b.num_parameters() || a.execution_thread() != b.execution_thread()) return false;
  auto eq_operands = [](const HloInstruction*, const HloInstruction*) { return true; };
  auto eq_computations = [&](const HloComputation* x, const HloComputation* y) {
    return ComputationsEqualImpl(*x, *y, layout_sensitive, depth + 1);
  };
  IdenticalOptions options;
  options.layout_sensitive = layout_sensitive;
  std::vector<std::pair<const HloInstruction*, const HloInstruction*>> worklist = {
      {a.root_instruction(), b.root_instruction()}};
  absl::flat_hash_set<std::pair<const HloInstruction*, const HloInstruction*>> visited;
  while (!worklist.empty()) {
    auto pair = worklist.back();
    worklist.pop_back();
    if (!visited.insert(pair).second) continue;
    if (!InstructionsIdentical(*pair.first, *pair.second, eq_operands, eq_computations, options)) return false;
    for (int64_t i = 0; i < pair.first->operand_count(); ++i)
      worklist.push_back({pair.first->operand(i), pair.second->operand(i)});
  }
  return true;
}

}  // namespace

bool ComputationsEqual(const HloComputation& a, const HloComputation& b, bool layout_sensitive) {
  return ComputationsEqualImpl(a, b, layout_sensitive, 0);
}

// --- Call graph --------------------------------------------------------------------------------

CallContext GetInstructionCallContext(HloOpcode op) {
  switch (op) {
    case O::kCall: case O::kConditional: case O::kWhile: case O::kAsyncStart: case O::kAsyncUpdate:
    case O::kAsyncDone:
      return CallContext::kControlFlow;
    case O::kAllReduce: case O::kReduceScatter: case O::kAllReduceStart: case O::kMap: case O::kReduce:
    case O::kReduceWindow: case O::kScatter: case O::kSelectAndScatter: case O::kSort: case O::kTopK:
    case O::kFusion: case O::kCustomCall: case O::kScan:
      return CallContext::kEmbedded;
    default:
      return CallContext::kNone;
  }
}

absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> ComputeCallers(const HloModule& module) {
  absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> callers;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      for (const HloComputation* callee : inst->called_computations())
        if (callee != nullptr) callers[callee].push_back(inst.get());
  return callers;
}

absl::flat_hash_set<const HloComputation*> AsyncComputations(const HloModule& module) {
  absl::flat_hash_set<const HloComputation*> out;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      if (inst->opcode() == O::kAsyncStart || inst->opcode() == O::kAsyncUpdate || inst->opcode() == O::kAsyncDone)
        for (const HloComputation* callee : inst->called_computations())
          if (callee != nullptr) out.insert(callee);
  return out;
}

}  // namespace hloc
