#include "passes/simplify/control_flow_util.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "eval/evaluator.h"

namespace hloc::cf {
absl::Status RemoveInstruction(HloComputation* comp, HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kFusion)
    for (HloComputation* c : inst->called_computations())
      if (c != nullptr && c->FusionInstruction() == inst) c->SetFusionInstruction(nullptr);
  return comp->RemoveInstruction(inst);
}

const std::vector<HloInstruction*>& CallerMap::Of(const HloComputation* comp) {
  if (stale_) {
    map_ = ComputeCallers(module_);
    stale_ = false;
  }
  auto it = map_.find(comp);
  return it == map_.end() ? none_ : it->second;
}

HloInstruction* Builder::Add(HloComputation* comp, std::unique_ptr<HloInstruction> inst,
                             const HloInstruction* before, std::string_view base) {
  if (!inst->called_computations().empty()) callers.Invalidate();
  std::string hint(base.empty() ? HloOpcodeString(inst->opcode()) : base);
  inst->set_name(names.instructions.GetUniqueName(hint));
  return comp->AddInstructionBefore(std::move(inst), before);
}

HloInstruction* Builder::Gte(HloComputation* comp, HloInstruction* tuple, int64_t index,
                             const HloInstruction* before) {
  auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes(index));
  gte->mutable_attrs().tuple_index = index;
  gte->AppendOperand(tuple);
  return Add(comp, std::move(gte), before, "get-tuple-element");
}

HloInstruction* Builder::Tuple(HloComputation* comp, absl::Span<HloInstruction* const> elements,
                               const HloInstruction* before, std::string_view base) {
  std::vector<Shape> shapes;
  for (HloInstruction* e : elements) shapes.push_back(e->shape());
  auto tuple = std::make_unique<HloInstruction>(HloOpcode::kTuple, Shape::Tuple(std::move(shapes)));
  for (HloInstruction* e : elements) tuple->AppendOperand(e);
  return Add(comp, std::move(tuple), before, base);
}

HloInstruction* Builder::Reshape(HloComputation* comp, const Shape& shape, HloInstruction* operand,
                                 const HloInstruction* before) {
  auto reshape = std::make_unique<HloInstruction>(HloOpcode::kReshape, shape);
  reshape->AppendOperand(operand);
  return Add(comp, std::move(reshape), before);
}

HloInstruction* Builder::Transpose(HloComputation* comp, HloInstruction* operand,
                                   absl::Span<const int64_t> permutation, const HloInstruction* before) {
  std::vector<int64_t> dims;
  for (int64_t p : permutation) dims.push_back(operand->shape().dimensions(p));
  auto transpose = std::make_unique<HloInstruction>(HloOpcode::kTranspose,
                                                    Shape(operand->shape().element_type(), dims));
  transpose->mutable_attrs().dimensions.assign(permutation.begin(), permutation.end());
  transpose->AppendOperand(operand);
  return Add(comp, std::move(transpose), before);
}

HloInstruction* Builder::Convert(HloComputation* comp, HloInstruction* operand, PrimitiveType type,
                                 const HloInstruction* before) {
  auto convert = std::make_unique<HloInstruction>(HloOpcode::kConvert, Shape(type, operand->shape().dimensions()));
  convert->AppendOperand(operand);
  return Add(comp, std::move(convert), before);
}

HloInstruction* Builder::Broadcast(HloComputation* comp, const Shape& shape, HloInstruction* operand,
                                   absl::Span<const int64_t> dimensions, const HloInstruction* before) {
  auto broadcast = std::make_unique<HloInstruction>(HloOpcode::kBroadcast, shape);
  broadcast->mutable_attrs().dimensions.assign(dimensions.begin(), dimensions.end());
  broadcast->AppendOperand(operand);
  return Add(comp, std::move(broadcast), before);
}

HloInstruction* Builder::Constant(HloComputation* comp, Literal literal, const HloInstruction* before) {
  Shape shape = literal.shape();
  if (!shape.has_layout() && shape.IsArray()) shape.SetDefaultLayout();
  auto constant = std::make_unique<HloInstruction>(HloOpcode::kConstant, shape);
  constant->mutable_attrs().literal = std::move(literal);
  return Add(comp, std::move(constant), before);
}

absl::StatusOr<HloInstruction*> Builder::CloneWithNewOperands(
    const HloInstruction& inst, const Shape& shape, absl::Span<HloInstruction* const> operands,
    const HloInstruction* before, absl::flat_hash_map<const HloComputation*, HloComputation*>* cloned) {
  std::unique_ptr<HloInstruction> copy = CloneInstruction(inst, operands);
  copy->mutable_shape() = shape;
  absl::flat_hash_map<const HloComputation*, HloComputation*> local;
  HLOC_CF_RETURN_IF_ERROR(CloneOwnedCallees(inst, *copy, module, names, cloned != nullptr ? *cloned : local));
  return Add(before != nullptr ? before->parent() : inst.parent(), std::move(copy), before, inst.name());
}

absl::StatusOr<HloComputation*> Builder::CloneComputation(const HloComputation& comp,
                                                          const std::vector<int64_t>* kept_parameters) {
  callers.Invalidate();
  if (kept_parameters == nullptr) return hloc::CloneComputation(comp, module, names);
  auto clone = std::make_unique<HloComputation>(names.computations.GetUniqueName(comp.name() + ".clone"));
  clone->set_execution_thread(comp.execution_thread());
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  absl::flat_hash_map<int64_t, int64_t> new_parameter_number;
  for (size_t j = 0; j < kept_parameters->size(); ++j) new_parameter_number[(*kept_parameters)[j]] = j;
  for (HloInstruction* inst : comp.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kFusion || inst->opcode() == HloOpcode::kAsyncStart ||
        inst->opcode() == HloOpcode::kAsyncUpdate || inst->opcode() == HloOpcode::kAsyncDone)
      return absl::UnimplementedError(absl::StrCat("cannot drop parameters of ", comp.name(), ": it owns computations"));
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end()) return absl::InternalError(absl::StrCat(op->name(), " is not in ", comp.name()));
      operands.push_back(it->second);
    }
    std::unique_ptr<HloInstruction> copy = CloneInstruction(*inst, operands);
    if (inst->opcode() == HloOpcode::kParameter) {
      auto it = new_parameter_number.find(inst->attrs().parameter_number);
      if (it == new_parameter_number.end()) {
        if (inst->user_count() != 0 || inst->IsRoot())
          return absl::InternalError(absl::StrCat("cannot drop used parameter ", inst->name(), " of ", comp.name()));
        continue;
      }
      copy->mutable_attrs().parameter_number = it->second;
    }
    copy->set_name(names.instructions.GetUniqueName(absl::StrCat(inst->name(), ".clone")));
    map[inst] = clone->AddInstruction(std::move(copy));
  }
  for (const auto& [old_inst, new_inst] : map)
    for (HloInstruction* succ : old_inst->control_successors())
      if (auto it = map.find(succ); it != map.end()) new_inst->AddControlDependencyTo(it->second);
  auto root = map.find(comp.root_instruction());
  if (root == map.end()) return absl::InternalError(absl::StrCat(comp.name(), " has no root to clone"));
  clone->set_root_instruction(root->second);
  return module.AddComputation(std::move(clone));
}

absl::StatusOr<HloInstruction*> Builder::Inline(HloComputation* target, const HloComputation& callee,
                                                absl::Span<HloInstruction* const> args,
                                                const HloInstruction* before) {
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (int64_t i = 0; i < callee.num_parameters(); ++i) {
    const HloInstruction* p = callee.parameter_instruction(i);
    if (p == nullptr || i >= static_cast<int64_t>(args.size()))
      return absl::InvalidArgumentError(absl::StrCat("cannot inline ", callee.name(), ": parameter ", i, " has no argument"));
    map[p] = args[i];
  }
  // Every instruction is copied, not just what the root reaches: a side effect nobody uses
  // must survive inlining (as in XLA's CallInliner).
  absl::flat_hash_map<const HloComputation*, HloComputation*> cloned;
  for (HloInstruction* inst : callee.MakeInstructionPostOrder()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) {
      auto it = map.find(op);
      if (it == map.end()) return absl::InternalError(absl::StrCat("cannot inline ", callee.name(), ": ", op->name(), " is unmapped"));
      operands.push_back(it->second);
    }
    HLOC_CF_ASSIGN_OR_RETURN(map[inst], CloneWithNewOperands(*inst, inst->shape(), operands, before, &cloned));
    if (map[inst]->parent() != target) return absl::InternalError("inlined instruction landed in the wrong computation");
  }
  for (const auto& inst : callee.instructions()) {
    if (inst->opcode() == HloOpcode::kParameter) continue;
    for (HloInstruction* succ : inst->control_successors())
      if (succ->opcode() != HloOpcode::kParameter) map.at(inst.get())->AddControlDependencyTo(map.at(succ));
  }
  return map.at(callee.root_instruction());
}

bool IsRemovableDead(const HloInstruction& inst) {
  return inst.user_count() == 0 && !inst.IsRoot() && inst.opcode() != HloOpcode::kParameter &&
         !HasControlDependencies(inst) && !HasSideEffect(inst);
}

void DeferredCleanup::Add(HloInstruction* inst) {
  if (inst != nullptr && inst->parent() != nullptr) pending_.push_back({inst->parent(), inst->unique_id()});
}

absl::Status DeferredCleanup::Run() {
  absl::flat_hash_map<HloComputation*, std::vector<int64_t>> by_comp;
  std::vector<HloComputation*> comps;
  for (auto [comp, id] : pending_) {
    if (!by_comp.contains(comp)) comps.push_back(comp);
    by_comp[comp].push_back(id);
  }
  pending_.clear();
  for (HloComputation* comp : comps) {
    // Ids, not pointers: an instruction removed here may share its address with a later one.
    absl::flat_hash_map<int64_t, HloInstruction*> alive;
    for (const auto& inst : comp->instructions()) alive[inst->unique_id()] = inst.get();
    std::vector<int64_t> work = by_comp[comp];
    while (!work.empty()) {
      int64_t id = work.back();
      work.pop_back();
      auto it = alive.find(id);
      if (it == alive.end() || !IsRemovableDead(*it->second)) continue;
      HloInstruction* inst = it->second;
      for (HloInstruction* op : inst->operands()) work.push_back(op->unique_id());
      alive.erase(it);
      HLOC_CF_RETURN_IF_ERROR(RemoveInstruction(comp, inst));
    }
  }
  return absl::OkStatus();
}

absl::Status ReplaceInstruction(HloInstruction* old_inst, HloInstruction* new_inst, DeferredCleanup* cleanup) {
  if (old_inst == new_inst) return absl::OkStatus();
  // Keep the ordering constraints the old instruction carried.
  for (HloInstruction* pred : old_inst->control_predecessors())
    if (pred != new_inst) pred->AddControlDependencyTo(new_inst);
  for (HloInstruction* succ : old_inst->control_successors())
    if (succ != new_inst) new_inst->AddControlDependencyTo(succ);
  if (new_inst->attrs().metadata.op_name.empty() && new_inst->attrs().metadata.op_type.empty())
    new_inst->mutable_attrs().metadata = old_inst->attrs().metadata;
  old_inst->ReplaceAllUsesWith(new_inst);
  if (old_inst->user_count() != 0 || old_inst->IsRoot()) return absl::OkStatus();
  // Its control edges now live on new_inst; removal drops them from old_inst.
  if (HasSideEffect(*old_inst) || old_inst->opcode() == HloOpcode::kParameter) return absl::OkStatus();
  if (cleanup != nullptr) {
    cleanup->Add(old_inst);
    if (HasControlDependencies(*old_inst)) {
      // Its control edges moved to new_inst; dropping them also drops its operand edges, so
      // the operands are queued themselves.
      for (HloInstruction* op : old_inst->operands()) cleanup->Add(op);
      old_inst->DetachFromOperandsAndUsers();
    }
    return absl::OkStatus();
  }
  if (!HasControlDependencies(*old_inst)) return RemoveInstructionAndUnusedOperands(old_inst);
  // Its control edges moved to new_inst: drop them with the instruction, then the operands
  // that leaves dead.
  std::vector<HloInstruction*> operands = old_inst->operands();
  HloComputation* comp = old_inst->parent();
  old_inst->DetachFromOperandsAndUsers();
  HLOC_CF_RETURN_IF_ERROR(RemoveInstruction(comp, old_inst));
  std::sort(operands.begin(), operands.end());
  operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
  // An operand may go with another's cascade: `removed` is checked before any dereference.
  std::vector<const HloInstruction*> removed;
  for (HloInstruction* op : operands) {
    if (std::find(removed.begin(), removed.end(), op) != removed.end() || !IsRemovableDead(*op)) continue;
    HLOC_CF_RETURN_IF_ERROR(RemoveInstructionAndUnusedOperands(op, false, &removed));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* comp) {
  bool changed = false;
  std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!IsRemovableDead(**it)) continue;
    HLOC_CF_RETURN_IF_ERROR(RemoveInstruction(comp, *it));
    changed = true;
  }
  return changed;
}

absl::Status RemoveUncalledComputations(HloModule& module, std::vector<HloComputation*> candidates) {
  // Calls into each computation from the others, counted once; removing a computation takes
  // its own calls off its callees' counts.
  absl::flat_hash_map<const HloComputation*, int64_t> calls;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      for (const HloComputation* callee : inst->called_computations())
        if (callee != c.get()) ++calls[callee];
  absl::flat_hash_set<HloComputation*> removed;
  while (!candidates.empty()) {
    HloComputation* comp = candidates.back();
    candidates.pop_back();
    if (comp == nullptr || removed.contains(comp) || comp == module.entry_computation() || calls[comp] > 0) continue;
    std::vector<HloComputation*> callees;
    for (const auto& inst : comp->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (callee != comp) {
          --calls[callee];
          callees.push_back(callee);
        }
    HLOC_CF_RETURN_IF_ERROR(module.RemoveComputation(comp));
    removed.insert(comp);
    candidates.insert(candidates.end(), callees.begin(), callees.end());
  }
  return absl::OkStatus();
}

bool IsScalar(const Shape& shape) { return shape.IsArray() && shape.rank() == 0; }

bool IsEffectiveScalar(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d : shape.dimensions())
    if (d != 1) return false;
  return true;
}

std::optional<int64_t> LiteralAsScalarInt64(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!IsEffectiveScalar(shape)) return std::nullopt;
  PrimitiveType t = shape.element_type();
  if (t == PrimitiveType::PRED) return literal.GetPred(0) ? 1 : 0;
  if (IsSignedIntegral(t)) return literal.GetInt(0);
  if (IsUnsignedIntegral(t)) {
    uint64_t v = literal.GetUint(0);
    if (v > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(v);
  }
  return std::nullopt;
}

bool IsIdentityPermutation(absl::Span<const int64_t> permutation) {
  for (size_t i = 0; i < permutation.size(); ++i)
    if (permutation[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> InversePermutation(absl::Span<const int64_t> permutation) {
  std::vector<int64_t> inverse(permutation.size());
  for (size_t i = 0; i < permutation.size(); ++i) inverse[permutation[i]] = static_cast<int64_t>(i);
  return inverse;
}

namespace {
int64_t Elements(const Shape& shape) {
  if (shape.IsArray()) {
    absl::StatusOr<int64_t> n = shape.ElementCount();
    return n.ok() ? std::max<int64_t>(*n, 1) : kMaxEvaluationCost;
  }
  int64_t total = 1;
  for (const Shape& e : shape.tuple_shapes()) total = std::min(kMaxEvaluationCost, total + Elements(e));
  return total;
}
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) || r > kMaxEvaluationCost ? kMaxEvaluationCost + 1 : r;
}
std::optional<int64_t> CostImpl(const HloComputation& comp, int depth);
std::optional<int64_t> CostImpl(const HloInstruction& inst, int depth) {
  if (depth > 32 || HasSideEffectNoRecurse(inst)) return std::nullopt;
  switch (inst.opcode()) {
    case HloOpcode::kWhile:
    case HloOpcode::kCustomCall:
    case HloOpcode::kInfeed:
    case HloOpcode::kRecv:
      return std::nullopt;
    default:
      break;
  }
  const int64_t out = Elements(inst.shape());
  int64_t widest = 1;
  for (const HloInstruction* op : inst.operands()) widest = std::max(widest, Elements(op->shape()));
  int64_t cost;
  switch (inst.opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kRaggedDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kGather:
    case HloOpcode::kScatter:
    case HloOpcode::kFft:
    case HloOpcode::kTriangularSolve:
    case HloOpcode::kCholesky:
    case HloOpcode::kSort:
    case HloOpcode::kTopK:
      cost = SaturatingMul(out, widest);
      break;
    default:
      cost = std::max(out, widest);
  }
  // Control flow runs its callees; embedded callees (reducers, comparators) are counted by
  // the element counts above.
  if (inst.opcode() == HloOpcode::kCall || inst.opcode() == HloOpcode::kConditional ||
      inst.opcode() == HloOpcode::kFusion || inst.opcode() == HloOpcode::kAsyncStart) {
    for (const HloComputation* callee : inst.called_computations()) {
      std::optional<int64_t> c = CostImpl(*callee, depth + 1);
      if (!c) return std::nullopt;
      cost = std::min(kMaxEvaluationCost + 1, cost + *c);
    }
  } else {
    for (const HloComputation* callee : inst.called_computations())
      if (ComputationHasSideEffect(*callee)) return std::nullopt;
  }
  return cost;
}
std::optional<int64_t> CostImpl(const HloComputation& comp, int depth) {
  int64_t total = 0;
  for (const auto& inst : comp.instructions()) {
    std::optional<int64_t> c = CostImpl(*inst, depth);
    if (!c) return std::nullopt;
    total = std::min(kMaxEvaluationCost + 1, total + *c);
  }
  return total;
}
}  // namespace

std::optional<int64_t> EvaluationCost(const HloInstruction& inst) { return CostImpl(inst, 0); }
std::optional<int64_t> EvaluationCost(const HloComputation& comp) { return CostImpl(comp, 0); }

std::optional<Literal> EvaluateExpression(const HloInstruction* root,
                                          const absl::flat_hash_map<const HloInstruction*, const Literal*>& known) {
  // Small limits: this folds loop counters and bounds, not tensors.
  constexpr int64_t kMaxInstructions = 256;
  constexpr int64_t kMaxElements = int64_t{1} << 16;
  std::vector<const HloInstruction*> order;
  absl::flat_hash_set<const HloInstruction*> visited;
  std::vector<std::pair<const HloInstruction*, bool>> stack = {{root, false}};
  int64_t total_cost = 0;
  while (!stack.empty()) {
    auto [inst, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(inst);
      continue;
    }
    if (!visited.insert(inst).second) continue;
    if (static_cast<int64_t>(visited.size()) > kMaxInstructions) return std::nullopt;
    stack.push_back({inst, true});
    if (known.contains(inst)) continue;
    switch (inst->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kReplicaId:
      case HloOpcode::kPartitionId:
      case HloOpcode::kCustomCall:
      case HloOpcode::kWhile:
      case HloOpcode::kRngBitGenerator:
        return std::nullopt;
      default:
        break;
    }
    if (IsCollective(inst->opcode()) || HasSideEffect(*inst)) return std::nullopt;
    absl::StatusOr<int64_t> count = inst->shape().IsArray() ? inst->shape().ElementCount() : absl::StatusOr<int64_t>(0);
    if (!count.ok() || *count > kMaxElements) return std::nullopt;
    std::optional<int64_t> cost = EvaluationCost(*inst);
    if (!cost) return std::nullopt;
    total_cost += *cost;
    if (total_cost > kMaxEvaluationCost) return std::nullopt;
    for (const HloInstruction* op : inst->operands())
      if (!visited.contains(op)) stack.push_back({op, false});
  }
  HloComputation temp("expression");
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (const HloInstruction* inst : order) {
    std::unique_ptr<HloInstruction> copy;
    if (auto it = known.find(inst); it != known.end()) {
      copy = std::make_unique<HloInstruction>(HloOpcode::kConstant, it->second->shape());
      copy->mutable_attrs().literal = *it->second;
    } else {
      std::vector<HloInstruction*> operands;
      for (const HloInstruction* op : inst->operands()) {
        auto m = map.find(op);
        if (m == map.end()) return std::nullopt;  // a cycle in bad input
        operands.push_back(m->second);
      }
      copy = CloneInstruction(*inst, operands);
    }
    copy->set_name(absl::StrCat("e", map.size()));
    copy->set_inline_gte(false);
    map[inst] = temp.AddInstruction(std::move(copy));
  }
  temp.set_root_instruction(map.at(root));
  EvaluatorOptions options;
  options.max_loop_iterations = 1000;
  options.max_value_bytes = int64_t{64} << 20;
  absl::StatusOr<Literal> result = EvaluateComputation(temp, {}, options);
  if (!result.ok()) return std::nullopt;
  return std::move(*result);
}

absl::StatusOr<Literal> ConvertLiteral(const Literal& literal, PrimitiveType type) {
  if (!literal.shape().IsArray()) return absl::InvalidArgumentError("only array literals convert");
  HloComputation temp("convert");
  auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, literal.shape(), "p");
  HloInstruction* p = temp.AddInstruction(std::move(param));
  auto convert = std::make_unique<HloInstruction>(HloOpcode::kConvert, Shape(type, literal.shape().dimensions()), "c");
  convert->AppendOperand(p);
  temp.set_root_instruction(temp.AddInstruction(std::move(convert)));
  const Literal* args[] = {&literal};
  return EvaluateComputation(temp, args);
}

const HloInstruction* TraceThroughCopyAndGteTupleChain(const HloInstruction* inst) {
  for (int guard = 0; guard < 10000; ++guard) {
    if (inst->opcode() == HloOpcode::kGetTupleElement && inst->operand(0)->opcode() == HloOpcode::kTuple) {
      inst = inst->operand(0)->operand(inst->attrs().tuple_index);
    } else if (inst->opcode() == HloOpcode::kCopy || inst->opcode() == HloOpcode::kCopyStart ||
               inst->opcode() == HloOpcode::kCopyDone) {
      inst = inst->operand(0);
    } else {
      break;
    }
  }
  return inst;
}

HloInstruction* GetUniqueGteInstruction(const HloInstruction* tuple, int64_t index) {
  HloInstruction* found = nullptr;
  for (HloInstruction* user : tuple->users()) {
    if (user->opcode() != HloOpcode::kGetTupleElement || user->attrs().tuple_index != index) continue;
    if (found != nullptr && found != user) return nullptr;
    found = user;
  }
  return found;
}

namespace {

// The one operand of `inst` that is not a constant (it may appear several times).
const HloInstruction* NonConstantOperand(const HloInstruction* inst) {
  const HloInstruction* result = nullptr;
  for (const HloInstruction* op : inst->operands()) {
    if (op->opcode() == HloOpcode::kConstant) continue;
    if (result != nullptr && result != op) return nullptr;
    result = op;
  }
  return result;
}

// Cheap to run at compile time: a scalar result, no communication or custom code, and the
// same for everything it calls.
bool IsScalarOp(const HloInstruction* op, int depth = 0) {
  if (depth > 64 || IsCollective(op->opcode())) return false;
  switch (op->opcode()) {
    case HloOpcode::kSend:
    case HloOpcode::kSendDone:
    case HloOpcode::kRecv:
    case HloOpcode::kRecvDone:
    case HloOpcode::kCustomCall:
      return false;
    default:
      break;
  }
  for (const HloComputation* callee : op->called_computations())
    for (const auto& inst : callee->instructions())
      if (!IsScalarOp(inst.get(), depth + 1)) return false;
  return IsScalar(op->shape());
}

// The get-tuple-element indices of `in` (a parameter) that `out` is a scalar function of, when
// it depends on nothing else. Calls and fusions are not looked into (nullopt).
std::optional<absl::flat_hash_set<int64_t>> GetGteDependenceIndices(const HloInstruction* out,
                                                                    const HloInstruction* in) {
  if (out->parent() != in->parent() || !in->shape().IsTuple()) return std::nullopt;
  absl::flat_hash_set<int64_t> indices;
  absl::flat_hash_set<const HloInstruction*> visited;
  std::vector<const HloInstruction*> work = {out};
  while (!work.empty()) {
    const HloInstruction* inst = work.back();
    work.pop_back();
    if (!visited.insert(inst).second) continue;
    if (inst == in || inst->opcode() == HloOpcode::kParameter) return std::nullopt;
    if (inst->opcode() == HloOpcode::kGetTupleElement) {
      if (!IsScalar(inst->shape())) return std::nullopt;
      const HloInstruction* operand = inst->operand(0);
      while (operand->opcode() == HloOpcode::kCopy) operand = operand->operand(0);
      if (operand == in) {
        indices.insert(inst->attrs().tuple_index);
      } else if (operand->opcode() == HloOpcode::kTuple) {
        for (const HloInstruction* op : operand->operands()) work.push_back(op);
      } else {
        return std::nullopt;
      }
      continue;
    }
    if (inst->opcode() == HloOpcode::kCopy) {
      work.push_back(inst->operand(0));
      continue;
    }
    if (inst->opcode() == HloOpcode::kFusion || inst->opcode() == HloOpcode::kCall || !IsScalarOp(inst))
      return std::nullopt;
    for (const HloInstruction* op : inst->operands()) work.push_back(op);
  }
  if (indices.empty()) return std::nullopt;
  return indices;
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}
std::optional<int64_t> CheckedSubtract(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace

std::optional<int64_t> GetLoopInductionVarTupleIdx(const HloInstruction* while_op) {
  const HloComputation* cond = while_op->while_condition();
  const HloComputation* body = while_op->while_body();
  if (cond->num_parameters() != 1 || body->num_parameters() != 1) return std::nullopt;
  std::optional<absl::flat_hash_set<int64_t>> cond_indices =
      GetGteDependenceIndices(cond->root_instruction(), cond->parameter_instruction(0));
  if (!cond_indices || cond_indices->size() != 1) return std::nullopt;
  if (while_op->operand(0)->opcode() != HloOpcode::kTuple) return std::nullopt;
  const int64_t index = *cond_indices->begin();
  const HloInstruction* body_root = body->root_instruction();
  if (body_root->opcode() != HloOpcode::kTuple || index >= body_root->operand_count()) return std::nullopt;
  const HloInstruction* inc = TraceThroughCopyAndGteTupleChain(body_root->operand(index));
  std::optional<absl::flat_hash_set<int64_t>> body_indices = GetGteDependenceIndices(inc, body->parameter_instruction(0));
  if (!body_indices || body_indices->size() != 1 || *body_indices->begin() != index) return std::nullopt;
  return index;
}

namespace {
// The step k of `i += k` in the body (k > 0 a constant), if that is how the body updates i.
std::optional<int64_t> MatchTrivialLoopInductionStep(const HloInstruction* while_op, int64_t index) {
  const HloComputation* body = while_op->while_body();
  const HloInstruction* update = TraceThroughCopyAndGteTupleChain(body->root_instruction()->operand(index));
  const HloInstruction* indvar = NonConstantOperand(update);
  if (indvar == nullptr ||
      TraceThroughCopyAndGteTupleChain(indvar) != GetUniqueGteInstruction(body->parameter_instruction(0), index))
    return std::nullopt;
  if (update->opcode() != HloOpcode::kAdd) return std::nullopt;
  const HloInstruction* step = update->operand(0) == indvar ? update->operand(1) : update->operand(0);
  if (step->opcode() != HloOpcode::kConstant || !step->attrs().literal.has_value()) return std::nullopt;
  std::optional<int64_t> value = LiteralAsScalarInt64(*step->attrs().literal);
  if (!value || *value <= 0) return std::nullopt;
  return value;
}
}  // namespace

std::optional<int64_t> MatchTrivialLoopTripCount(const HloInstruction* while_op, int64_t indvar_index,
                                                 const Literal& indvar_init) {
  std::optional<int64_t> init = LiteralAsScalarInt64(indvar_init);
  if (!init) return std::nullopt;
  std::optional<int64_t> step = MatchTrivialLoopInductionStep(while_op, indvar_index);
  if (!step) return std::nullopt;
  const HloComputation* cond = while_op->while_condition();
  const HloInstruction* root = cond->root_instruction();
  const HloInstruction* indvar = NonConstantOperand(root);
  if (indvar == nullptr || indvar != GetUniqueGteInstruction(cond->parameter_instruction(0), indvar_index))
    return std::nullopt;
  if (root->opcode() != HloOpcode::kCompare || root->operand_count() != 2 || root->operand(0) != indvar)
    return std::nullopt;
  const HloInstruction* bound = root->operand(1);
  if (bound->opcode() != HloOpcode::kConstant || !bound->attrs().literal.has_value()) return std::nullopt;
  std::optional<int64_t> n = LiteralAsScalarInt64(*bound->attrs().literal);
  if (!n) return std::nullopt;
  std::optional<ComparisonDirection> dir = root->attrs().comparison_direction;
  if (dir == ComparisonDirection::kLt) {
    std::optional<int64_t> trips = CheckedSubtract(*n, *init);
    if (!trips) return std::nullopt;
    if (*trips <= 0) return 0;
    return CheckedAdd((*trips - 1) / *step, 1);
  }
  if (dir == ComparisonDirection::kLe) {
    std::optional<int64_t> trips = CheckedSubtract(*n, *init);
    if (!trips) return std::nullopt;
    if (*trips < 0) return 0;
    return CheckedAdd(*trips / *step, 1);
  }
  return std::nullopt;
}

std::optional<int64_t> ComputeWhileLoopTripCount(const HloInstruction* while_op, int64_t max_brute_force_iters) {
  std::optional<int64_t> index = GetLoopInductionVarTupleIdx(while_op);
  if (!index) return std::nullopt;
  std::optional<Literal> value =
      EvaluateExpression(TraceThroughCopyAndGteTupleChain(while_op->operand(0)->operand(*index)));
  if (!value) return std::nullopt;
  if (std::optional<int64_t> trips = MatchTrivialLoopTripCount(while_op, *index, *value)) return trips;

  // Brute force: run the condition and the update on the counter alone.
  const HloComputation* body = while_op->while_body();
  const HloInstruction* update = body->root_instruction()->operand(*index);
  const HloInstruction* body_indvar = NonConstantOperand(update);
  if (body_indvar == nullptr || body_indvar != GetUniqueGteInstruction(body->parameter_instruction(0), *index))
    return std::nullopt;
  const HloComputation* cond = while_op->while_condition();
  const HloInstruction* cond_root = cond->root_instruction();
  const HloInstruction* cond_indvar = NonConstantOperand(cond_root);
  if (cond_indvar == nullptr || cond_indvar != GetUniqueGteInstruction(cond->parameter_instruction(0), *index))
    return std::nullopt;
  for (int64_t trips = 0; trips <= max_brute_force_iters; ++trips) {
    std::optional<Literal> keep_going = EvaluateExpression(cond_root, {{cond_indvar, &*value}});
    if (!keep_going || keep_going->element_type() != PrimitiveType::PRED || keep_going->element_count() != 1)
      return std::nullopt;
    if (!keep_going->GetPred(0)) return trips;
    std::optional<Literal> next = EvaluateExpression(update, {{body_indvar, &*value}});
    if (!next) return std::nullopt;
    value = std::move(next);
  }
  return std::nullopt;
}

bool HasTrueFrontendAttribute(const HloInstruction& inst, absl::Span<const std::string_view> keys) {
  const FrontendAttributes& attrs = inst.attrs().frontend_attributes;
  for (std::string_view key : keys) {
    auto it = attrs.find(std::string(key));
    if (it == attrs.end()) continue;
    std::string v = absl::AsciiStrToLower(it->second);
    if (v == "true" || v == "1" || v == "yes") return true;
  }
  return false;
}

}  // namespace hloc::cf
