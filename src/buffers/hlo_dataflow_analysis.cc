// HloDataflowAnalysis: values and value sets by a monotone fixed point (sets only grow), as in
// XLA's hlo_dataflow_analysis.cc with ssa_form=true and bitcast_defines_value=false.
#include "buffers/hlo_dataflow_analysis.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace hloc {

namespace {

const std::vector<int64_t>& EmptySet() {
  static const std::vector<int64_t>* empty = new std::vector<int64_t>();
  return *empty;
}

// Merges `from` into sorted `into`; returns whether `into` grew.
bool UnionInto(std::vector<int64_t>& into, const std::vector<int64_t>& from) {
  bool changed = false;
  for (int64_t v : from) {
    auto it = std::lower_bound(into.begin(), into.end(), v);
    if (it == into.end() || *it != v) {
      into.insert(it, v);
      changed = true;
    }
  }
  return changed;
}

ShapeIndex Prepend(int64_t first, const ShapeIndex& rest) {
  ShapeIndex out;
  out.reserve(rest.size() + 1);
  out.push_back(first);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// Ops that pass their operand 0 through unchanged (no new value).
bool IsPassThrough(HloOpcode op) {
  return op == HloOpcode::kBitcast || op == HloOpcode::kOptimizationBarrier || op == HloOpcode::kDomain ||
         op == HloOpcode::kAddDependency;
}

}  // namespace

HloValue::HloValue(int64_t id, const HloInstruction* instruction, ShapeIndex index, bool is_phi)
    : id_(id), defining_{instruction, std::move(index)}, is_phi_(is_phi) {
  absl::StatusOr<const Shape*> s = GetSubshape(instruction->shape(), defining_.index);
  shape_ = s.ok() ? *s : &instruction->shape();
}

std::string HloValue::ToShortString() const {
  return absl::StrCat("<", id_, " ", defining_instruction()->name(),
                      defining_instruction()->shape().IsTuple() ? ShapeIndexToString(defining_index()) : "",
                      is_phi_ ? " (phi)" : "", " @0>");
}

std::vector<ShapeIndex> AllShapeIndices(const Shape& shape) {
  std::vector<ShapeIndex> out;
  // Iterative pre-order walk (shapes nest, but never deeply enough to need recursion limits).
  std::vector<std::pair<const Shape*, ShapeIndex>> stack = {{&shape, {}}};
  while (!stack.empty()) {
    auto [s, index] = std::move(stack.back());
    stack.pop_back();
    out.push_back(index);
    if (s->IsTuple())
      for (int64_t i = static_cast<int64_t>(s->tuple_shapes().size()) - 1; i >= 0; --i) {
        ShapeIndex child = index;
        child.push_back(i);
        stack.push_back({&s->tuple_shapes(i), std::move(child)});
      }
  }
  return out;
}

int64_t BufferSizeOfShape(const Shape& shape) {
  if (shape.IsTuple()) return 8 * static_cast<int64_t>(shape.tuple_shapes().size());
  if (!shape.IsArray()) return 0;
  absl::StatusOr<int64_t> n = shape.ElementCount();
  if (!n.ok()) return 0;
  // Elements take whole bytes (pred, s4, f4 included: one byte each, as the emitters store them)
  // unless the layout packs them (E(n), XLA's element_size_in_bits).
  if (shape.has_layout() && shape.layout().element_size_in_bits > 0 &&
      shape.layout().element_size_in_bits < 8) {
    return (*n * shape.layout().element_size_in_bits + 7) / 8;
  }
  return *n * std::max(1, ByteWidth(shape.element_type()));
}

// ---- in-place pairs and buffer sharing --------------------------------------------------------

namespace {

const HloInstruction* SkipBitcasts(const HloInstruction* h) {
  int guard = 0;
  while (h->opcode() == HloOpcode::kBitcast && guard++ < 1000) h = h->operand(0);
  return h;
}

// In-place (operand number, output index) pairs of an instruction inside a fused computation,
// traced back to the fusion's parameters.
void AddFusedInPlacePairs(const HloInstruction* fused_output, const ShapeIndex& output_index,
                          std::vector<std::pair<std::pair<int64_t, ShapeIndex>, ShapeIndex>>& out) {
  const HloInstruction* h = SkipBitcasts(fused_output);
  std::vector<int64_t> in_place_operands;
  if (h->opcode() == HloOpcode::kDynamicUpdateSlice) {
    in_place_operands.push_back(0);
  } else if (h->opcode() == HloOpcode::kScatter && h->operand_count() == 3) {
    in_place_operands.push_back(0);
  }
  for (int64_t k : in_place_operands) {
    const HloInstruction* src = SkipBitcasts(h->operand(k));
    if (src->opcode() != HloOpcode::kParameter) continue;
    // The fused parameter must feed only this in-place op: another reader would see the update.
    if (src->user_count() != 1) continue;
    out.push_back({{src->attrs().parameter_number, {}}, output_index});
  }
}

bool IsFusedParamElementwiseOnly(const HloInstruction* param) {
  // Every transitive use keeps element positions: elementwise ops of the parameter's dims, up to
  // the root (or a root tuple).
  std::vector<const HloInstruction*> stack = {param};
  absl::flat_hash_map<const HloInstruction*, bool> seen;
  while (!stack.empty()) {
    const HloInstruction* h = stack.back();
    stack.pop_back();
    if (seen[h]) continue;
    seen[h] = true;
    for (const HloInstruction* u : h->users()) {
      if (u->opcode() == HloOpcode::kTuple && u->IsRoot()) continue;
      if (!u->IsElementwise() || !u->shape().IsArray() ||
          u->shape().dimensions() != param->shape().dimensions())
        return false;
      stack.push_back(u);
    }
  }
  return true;
}

}  // namespace

std::vector<std::pair<std::pair<int64_t, ShapeIndex>, ShapeIndex>> GetInPlaceInputOutputPairs(
    const HloInstruction* instruction) {
  std::vector<std::pair<std::pair<int64_t, ShapeIndex>, ShapeIndex>> out;
  switch (instruction->opcode()) {
    case HloOpcode::kDynamicUpdateSlice:
      out.push_back({{0, {}}, {}});
      break;
    case HloOpcode::kScatter: {
      int64_t n = (instruction->operand_count() - 1) / 2;
      for (int64_t i = 0; i < n; ++i) out.push_back({{i, {}}, n > 1 ? ShapeIndex{i} : ShapeIndex{}});
      break;
    }
    case HloOpcode::kFusion:
    case HloOpcode::kCustomCall: {
      for (const OutputOperandAlias& a : instruction->attrs().output_to_operand_aliasing)
        out.push_back({{a.operand_number, a.operand_index}, a.output_index});
      if (!out.empty() || instruction->opcode() != HloOpcode::kFusion) break;
      if (instruction->called_computations().empty()) break;
      const HloInstruction* root = instruction->fused_instructions_computation()->root_instruction();
      if (root == nullptr) break;
      if (root->opcode() == HloOpcode::kTuple) {
        for (int64_t i = 0; i < root->operand_count(); ++i) AddFusedInPlacePairs(root->operand(i), {i}, out);
      } else {
        AddFusedInPlacePairs(root, {}, out);
      }
      break;
    }
    default:
      break;
  }
  return out;
}

bool CanShareOperandBufferWithUser(const HloInstruction* operand, const ShapeIndex& operand_index,
                                   const HloInstruction* user, const ShapeIndex& user_index) {
  for (const auto& [in, out_index] : GetInPlaceInputOutputPairs(user)) {
    if (out_index == user_index && in.second == operand_index && in.first < user->operand_count() &&
        user->operand(in.first) == operand)
      return true;
  }
  absl::StatusOr<const Shape*> op_shape = GetSubshape(operand->shape(), operand_index);
  absl::StatusOr<const Shape*> user_shape = GetSubshape(user->shape(), user_index);
  if (!op_shape.ok() || !user_shape.ok()) return false;
  const Shape& a = **op_shape;
  const Shape& b = **user_shape;
  if (!a.IsArray() || !b.IsArray() || a.dimensions() != b.dimensions()) return false;
  if (BufferSizeOfShape(a) != BufferSizeOfShape(b)) return false;
  if (a.has_layout() && b.has_layout() && a.layout().minor_to_major != b.layout().minor_to_major) return false;
  if (user->IsElementwise()) return user_index.empty();
  // A loop or input (reduction) fusion may write an output into an operand's buffer when every
  // use of that operand is elementwise up to the outputs (XLA's AreTransitiveUsesElementwiseOrTuple
  // for loop and input fusions): each element is then read and written at one index, by one
  // thread (a reduction's epilogue reads it after the reduce; an operand that feeds the reduce
  // is not elementwise-only). A scan step's bias-gradient accumulators (acc + reduce(dy)) then
  // stay in place instead of a copy each per step (flax_gru_train).
  if (user->opcode() == HloOpcode::kFusion &&
      (user->attrs().fusion_kind == FusionKind::kLoop || user->attrs().fusion_kind == FusionKind::kInput) &&
      !user->called_computations().empty()) {
    const HloComputation* fused = user->fused_instructions_computation();
    bool any = false;
    for (int64_t k = 0; k < user->operand_count(); ++k) {
      if (user->operand(k) != operand) continue;
      if (k >= fused->num_parameters()) return false;
      if (!IsFusedParamElementwiseOnly(fused->parameter_instruction(k))) return false;
      any = true;
    }
    return any;
  }
  return false;
}

// ---- the analysis -------------------------------------------------------------------------------

absl::Status HloDataflowAnalysis::ComputeContexts() {
  const HloComputation* entry = module_.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  contexts_[entry] = ComputationKind::kSequential;
  std::vector<HloComputation*> order = module_.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());  // callers before callees
  for (const HloComputation* c : order) {
    auto it = contexts_.find(c);
    if (it == contexts_.end()) continue;  // unreachable from the entry
    ComputationKind ctx = it->second;
    for (const auto& inst : c->instructions()) {
      HloOpcode op = inst->opcode();
      for (const HloComputation* callee : inst->called_computations()) {
        ComputationKind sub;
        if (op == HloOpcode::kFusion) {
          sub = ComputationKind::kFused;
        } else if (ctx == ComputationKind::kSequential &&
                   (op == HloOpcode::kWhile || op == HloOpcode::kConditional || op == HloOpcode::kCall ||
                    op == HloOpcode::kAsyncStart)) {
          sub = ComputationKind::kSequential;
          auto [cit, inserted] = callers_.emplace(callee, inst.get());
          if (!inserted && cit->second != inst.get())
            return absl::InvalidArgumentError(
                absl::StrCat("computation ", callee->name(), " is called from ", cit->second->name(), " and ",
                             inst->name(), "; buffer assignment needs one call site per computation "
                             "(run flatten-call-graph)"));
        } else {
          sub = ComputationKind::kEmbedded;
        }
        auto [sit, inserted] = contexts_.emplace(callee, sub);
        if (!inserted && sit->second != sub) {
          if (sit->second == ComputationKind::kSequential || sub == ComputationKind::kSequential)
            return absl::InvalidArgumentError(
                absl::StrCat("computation ", callee->name(),
                             " is called both sequentially and from an embedded context (run flatten-call-graph)"));
          sit->second = ComputationKind::kEmbedded;
        }
      }
    }
  }
  return absl::OkStatus();
}

ComputationKind HloDataflowAnalysis::context(const HloComputation* computation) const {
  auto it = contexts_.find(computation);
  return it == contexts_.end() ? ComputationKind::kFused : it->second;
}

const HloInstruction* HloDataflowAnalysis::caller(const HloComputation* computation) const {
  auto it = callers_.find(computation);
  return it == callers_.end() ? nullptr : it->second;
}

int64_t HloDataflowAnalysis::NewValue(const HloInstruction* instruction, const ShapeIndex& index, bool is_phi) {
  int64_t id = static_cast<int64_t>(values_.size());
  values_.push_back(std::make_unique<HloValue>(id, instruction, index, is_phi));
  MutableSet(instruction, index)->push_back(id);
  return id;
}

std::vector<int64_t>* HloDataflowAnalysis::MutableSet(const HloInstruction* instruction, const ShapeIndex& index) {
  auto it = sets_.find(instruction);
  if (it == sets_.end()) return nullptr;
  for (auto& [i, s] : it->second)
    if (i == index) return &s;
  return nullptr;
}

const std::vector<std::pair<ShapeIndex, std::vector<int64_t>>>* HloDataflowAnalysis::GetInstructionValueSet(
    const HloInstruction* instruction) const {
  auto it = sets_.find(instruction);
  return it == sets_.end() ? nullptr : &it->second;
}

const std::vector<int64_t>& HloDataflowAnalysis::GetValueSet(const HloInstruction* instruction,
                                                             const ShapeIndex& index) const {
  auto it = sets_.find(instruction);
  if (it == sets_.end()) return EmptySet();
  for (const auto& [i, s] : it->second)
    if (i == index) return s;
  return EmptySet();
}

bool HloDataflowAnalysis::ValueIsDefinedAt(const HloInstruction* instruction, const ShapeIndex& index) const {
  const std::vector<int64_t>& s = GetValueSet(instruction, index);
  return s.size() == 1 && values_[s[0]]->defining_instruction() == instruction &&
         values_[s[0]]->defining_index() == index;
}

const HloValue& HloDataflowAnalysis::GetValueDefinedAt(const HloInstruction* instruction,
                                                       const ShapeIndex& index) const {
  return *values_[GetValueSet(instruction, index)[0]];
}

void HloDataflowAnalysis::DefineValues(const HloInstruction* inst) {
  ValueSets& sets = sets_[inst];
  for (ShapeIndex& i : AllShapeIndices(inst->shape())) sets.push_back({std::move(i), {}});
  const HloComputation* comp = inst->parent();
  auto define_all = [&](bool phi) {
    for (auto& [i, s] : sets) NewValue(inst, i, phi);
  };
  switch (inst->opcode()) {
    case HloOpcode::kParameter: {
      const HloInstruction* call = caller(comp);
      if (context(comp) != ComputationKind::kSequential || call == nullptr) {
        define_all(false);
      } else if (call->opcode() == HloOpcode::kWhile) {
        define_all(true);
      }  // conditional, call and async parameters carry the caller's operands
      return;
    }
    case HloOpcode::kWhile:
    case HloOpcode::kConditional:
      define_all(true);
      return;
    case HloOpcode::kCall:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kCopyDone:
    case HloOpcode::kAsyncUpdate:
    case HloOpcode::kAsyncDone:
      return;
    case HloOpcode::kAsyncStart:
      // ((operands...), result, context...): {0,k,...} are the operands and {1,...} the wrapped
      // computation's result, both carried; the tuple tables and the context are new.
      for (auto& [i, s] : sets)
        if (i.size() <= 1 ? (i.empty() || i[0] != 1) : i[0] >= 2) NewValue(inst, i, false);
      return;
    case HloOpcode::kTuple:
    case HloOpcode::kCopy:
      NewValue(inst, {}, false);  // a tuple's (or shallow copy's) pointer table only
      return;
    case HloOpcode::kCopyStart:
      // (destination, source, context), as XLA: {1} is the operand itself; the tuple table, the
      // destination {0} (what copy-done returns) and the context are new.
      for (auto& [i, s] : sets)
        if (i.empty() || i[0] != 1) NewValue(inst, i, false);
      return;
    default:
      if (IsPassThrough(inst->opcode())) return;
      define_all(false);
  }
}

bool HloDataflowAnalysis::Propagate(const HloInstruction* inst) {
  ValueSets& sets = sets_[inst];
  bool changed = false;
  auto from = [&](const HloInstruction* src, const ShapeIndex& src_index, std::vector<int64_t>& into) {
    changed |= UnionInto(into, GetValueSet(src, src_index));
  };
  HloOpcode op = inst->opcode();
  if (IsPassThrough(op)) {
    for (auto& [i, s] : sets) from(inst->operand(0), i, s);
    return changed;
  }
  switch (op) {
    case HloOpcode::kGetTupleElement:
      for (auto& [i, s] : sets) from(inst->operand(0), Prepend(inst->attrs().tuple_index, i), s);
      break;
    case HloOpcode::kTuple:
      for (auto& [i, s] : sets)
        if (!i.empty() && i[0] < inst->operand_count())
          from(inst->operand(i[0]), ShapeIndex(i.begin() + 1, i.end()), s);
      break;
    case HloOpcode::kCopy:
      for (auto& [i, s] : sets)
        if (!i.empty()) from(inst->operand(0), i, s);
      break;
    case HloOpcode::kCopyStart:
      for (auto& [i, s] : sets)
        if (!i.empty() && i[0] == 1) from(inst->operand(0), ShapeIndex(i.begin() + 1, i.end()), s);
      break;
    case HloOpcode::kCopyDone:
      for (auto& [i, s] : sets) from(inst->operand(0), Prepend(0, i), s);
      break;
    case HloOpcode::kCall:
      if (!inst->called_computations().empty() && inst->to_apply()->root_instruction() != nullptr)
        for (auto& [i, s] : sets) from(inst->to_apply()->root_instruction(), i, s);
      break;
    case HloOpcode::kAsyncStart:
      for (auto& [i, s] : sets) {
        if (i.size() >= 2 && i[0] == 0 && i[1] < inst->operand_count())
          from(inst->operand(i[1]), ShapeIndex(i.begin() + 2, i.end()), s);
        if (!i.empty() && i[0] == 1 && !inst->called_computations().empty() &&
            inst->called_computations()[0]->root_instruction() != nullptr)
          from(inst->called_computations()[0]->root_instruction(), ShapeIndex(i.begin() + 1, i.end()), s);
      }
      break;
    case HloOpcode::kAsyncUpdate:
      for (auto& [i, s] : sets) from(inst->operand(0), i, s);
      break;
    case HloOpcode::kAsyncDone:
      for (auto& [i, s] : sets) from(inst->operand(0), Prepend(1, i), s);
      break;
    case HloOpcode::kParameter: {
      const HloInstruction* call = caller(inst->parent());
      if (call == nullptr || context(inst->parent()) != ComputationKind::kSequential) break;
      if (call->opcode() == HloOpcode::kCall || call->opcode() == HloOpcode::kAsyncStart) {
        int64_t k = inst->attrs().parameter_number;
        if (k < call->operand_count())
          for (auto& [i, s] : sets) from(call->operand(k), i, s);
      } else if (call->opcode() == HloOpcode::kConditional) {
        const auto& branches = call->called_computations();
        for (size_t b = 0; b < branches.size(); ++b)
          if (branches[b] == inst->parent() && static_cast<int64_t>(b) + 1 < call->operand_count())
            for (auto& [i, s] : sets) from(call->operand(b + 1), i, s);
      }
      break;
    }
    default:
      break;
  }
  return changed;
}

void HloDataflowAnalysis::ComputePositionsAndUses() {
  const HloInstruction* root = module_.entry_computation()->root_instruction();
  for (const auto& [inst, sets] : sets_)
    for (const auto& [i, s] : sets)
      for (int64_t v : s) {
        HloValue& value = *values_[v];
        if (!(value.defining_.instruction == inst && value.defining_.index == i))
          value.positions_.push_back({inst, i});
        if (inst == root) value.live_out_of_module_ = true;
      }
  for (const auto& [inst, sets] : sets_) {
    for (int64_t k = 0; k < inst->operand_count(); ++k) {
      const HloInstruction* operand = inst->operand(k);
      HloOpcode op = inst->opcode();
      // Forwarding ops read no bytes of what they pass on.
      if (op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement || IsPassThrough(op) ||
          op == HloOpcode::kAsyncUpdate || op == HloOpcode::kAsyncDone || op == HloOpcode::kCopyDone)
        continue;
      const ValueSets* operand_sets = GetInstructionValueSet(operand);
      if (operand_sets == nullptr) continue;
      for (const auto& [i, s] : *operand_sets) {
        if (op == HloOpcode::kCopy && !i.empty()) continue;
        for (int64_t v : s) values_[v]->uses_.push_back(HloUse{inst, k, i});
      }
    }
  }
  // Deterministic order: positions and uses by instruction id then index.
  for (auto& v : values_) {
    std::stable_sort(v->positions_.begin(), v->positions_.end(), [](const HloPosition& a, const HloPosition& b) {
      if (a.instruction->unique_id() != b.instruction->unique_id())
        return a.instruction->unique_id() < b.instruction->unique_id();
      return a.index < b.index;
    });
    v->positions_.insert(v->positions_.begin(), v->defining_);
    std::stable_sort(v->uses_.begin(), v->uses_.end(), [](const HloUse& a, const HloUse& b) {
      if (a.instruction->unique_id() != b.instruction->unique_id())
        return a.instruction->unique_id() < b.instruction->unique_id();
      return std::tie(a.operand_number, a.operand_index) < std::tie(b.operand_number, b.operand_index);
    });
    // Each use once, removed here after sorting: a search before every insertion cost n^2 for a
    // value read n times (a concatenate of one operand repeated).
    v->uses_.erase(std::unique(v->uses_.begin(), v->uses_.end()), v->uses_.end());
  }
}

absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> HloDataflowAnalysis::Run(const HloModule& module) {
  std::unique_ptr<HloDataflowAnalysis> a(new HloDataflowAnalysis(module));
  if (absl::Status s = a->ComputeContexts(); !s.ok()) return s;
  // Instructions of every analysed computation, operands before users; callees first.
  std::vector<const HloInstruction*> order;
  for (const HloComputation* c : module.MakeComputationPostOrder()) {
    if (a->context(c) == ComputationKind::kFused) continue;
    for (const HloInstruction* inst : c->MakeInstructionPostOrder()) order.push_back(inst);
  }
  for (const HloInstruction* inst : order) a->DefineValues(inst);
  // Sets only grow and are bounded by the number of values, so this settles; the cap guards
  // against a bug turning into a hang.
  const int64_t cap = 64 + static_cast<int64_t>(module.computations().size()) * 4;
  bool changed = true;
  int64_t rounds = 0;
  while (changed) {
    if (++rounds > cap) return absl::InternalError("dataflow analysis did not reach a fixed point");
    changed = false;
    for (const HloInstruction* inst : order) changed |= a->Propagate(inst);
  }
  a->ComputePositionsAndUses();
  return a;
}

std::string HloDataflowAnalysis::ToString() const {
  std::string out = absl::StrCat("HloDataflowAnalysis, module ", module_.name(), "\n");
  for (const auto& v : values_) {
    std::vector<std::string> pos;
    for (const HloPosition& p : v->positions())
      pos.push_back(absl::StrCat(p.instruction->name(), ShapeIndexToString(p.index)));
    std::vector<std::string> uses;
    for (const HloUse& u : v->uses())
      uses.push_back(absl::StrCat(u.instruction->name(), ".", u.operand_number, ShapeIndexToString(u.operand_index)));
    absl::StrAppend(&out, "  ", v->ToShortString(), " positions: ", absl::StrJoin(pos, ", "),
                    "; uses: ", absl::StrJoin(uses, ", "), v->live_out_of_module() ? "; live out" : "", "\n");
  }
  return out;
}

}  // namespace hloc
