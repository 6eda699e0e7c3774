// The evaluator's core: walks a computation's instructions in post order (iteratively; only
// called computations nest, to a fixed depth), dispatches each to its kernel, and manages
// the values' lifetimes.
//
// Values are immutable once computed, so ops that only route a value (get-tuple-element,
// copy, opt-barrier, async-done, ...) alias their operand instead of copying it; a value is
// freed as soon as its last user (and last alias) is done. When an op is the last use of a
// value it owns, it takes the value over instead of copying it: a tuple moves its elements
// in, dynamic-update-slice updates in place, and a while loop hands its state to the body,
// whose parameter then owns it — so a loop that updates a large buffer does not copy it on
// every trip.
#include "eval/evaluator.h"

#include <memory>
#include <new>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "eval/eval_internal.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using namespace eval_internal;  // NOLINT: the evaluator's own internals

// Called computations nest one level per call; deeper nesting than this is an error (bad
// or recursive input), not a stack overflow.
constexpr int kMaxCallDepth = 64;

// What the evaluator precomputes once per computation.
struct Plan {
  std::vector<const HloInstruction*> order;    // reachable from the root, operands first
  std::vector<std::vector<int>> operands;      // operand slots, per instruction
  std::vector<int> uses;                       // operand uses (+1 for the root)
  std::vector<char> gte_may_steal;             // see GteMayStealFrom
  int root = -1;
};

struct Slot {
  Literal value;                // the value, when this slot owns it
  const Literal* ptr = nullptr; // the value (into `value`, an argument, a constant, or an alias)
  bool owned = false;
  int remaining = 0;            // uses not yet done
  int alias_parent = -1;        // slot that `ptr` points into (kept alive while aliased)
};

// A get-tuple-element may move its element out of its (owned) operand when every user of
// the operand is a get-tuple-element and none other reads the same index.
bool GteMayStealFrom(const HloInstruction& gte) {
  const HloInstruction* tuple = gte.operand(0);
  if (tuple->IsRoot()) return false;
  for (const HloInstruction* u : tuple->users()) {
    if (u->opcode() != HloOpcode::kGetTupleElement) return false;
    if (u != &gte && u->attrs().tuple_index == gte.attrs().tuple_index) return false;
  }
  return true;
}

// Ops whose value is (part of) their operand 0's value, unchanged.
bool IsRoutingOp(const HloInstruction& inst) {
  using O = HloOpcode;
  switch (inst.opcode()) {
    case O::kGetTupleElement: case O::kOptimizationBarrier: case O::kDomain: case O::kAddDependency:
    case O::kAsyncUpdate: case O::kAsyncDone: case O::kCopyDone:
      return inst.operand_count() >= 1;
    case O::kCopy:
      return inst.operand_count() == 1 && inst.operand(0)->shape().EqualIgnoringLayout(inst.shape());
    case O::kCustomCall:
      return inst.operand_count() == 1 && IsIdentityCustomCall(inst) &&
             inst.operand(0)->shape().EqualIgnoringLayout(inst.shape());
    default:
      return false;
  }
}

// The tuple index a routing op selects from operand 0, or -1 for the whole value.
int64_t RoutedIndex(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kGetTupleElement: return inst.attrs().tuple_index;
    case HloOpcode::kAsyncDone: return 1;
    case HloOpcode::kCopyDone: return 0;
    default: return -1;
  }
}

// Bytes a value of `shape` occupies, or an error when its size overflows or passes `limit`.
absl::Status CheckValueSize(const Shape& shape, int64_t limit) {
  __int128 total = 0;
  std::vector<const Shape*> stack = {&shape};
  while (!stack.empty()) {
    const Shape* s = stack.back();
    stack.pop_back();
    if (s->IsTuple()) {
      for (const Shape& e : s->tuple_shapes()) stack.push_back(&e);
      continue;
    }
    if (!s->IsArray()) continue;
    auto n = s->ElementCount();
    if (!n.ok()) return n.status();
    total += static_cast<__int128>(*n) * ByteWidth(s->element_type());
    if (total > limit)
      return absl::ResourceExhaustedError(absl::StrCat("the result ", shape.ToString(false), " needs more than ", limit,
                                                       " bytes (EvaluatorOptions::max_value_bytes)"));
  }
  return absl::OkStatus();
}

// Names the instruction that failed as code generation does: "FILE:4:8: %c (custom-call): ..."
// after its place in the text when it has one. The innermost instruction is the cause: an error
// already located (from inside a called computation) passes through its callers unchanged.
constexpr char kLocatedPayload[] = "hloc.eval.located";
absl::Status Annotate(const absl::Status& st, const HloInstruction& inst) {
  if (st.GetPayload(kLocatedPayload).has_value()) return st;
  absl::Status out(st.code(), absl::StrCat(inst.LocationPrefix(), "%", inst.name(), " (",
                                           std::string(HloOpcodeString(inst.opcode())), "): ", st.message()));
  if (!inst.LocationPrefix().empty()) out.SetPayload(kLocatedPayload, absl::Cord("1"));
  return out;
}

class Evaluator {
 public:
  explicit Evaluator(const EvaluatorOptions& options) : options_(options) {
    ctx_.options = &options_;
    ctx_.call = [this](const HloComputation& c, absl::Span<const Literal* const> a) { return Run(c, a, nullptr); };
    ctx_.call_owned = [this](const HloComputation& c, std::vector<Literal>&& a) { return Run(c, {}, &a); };
    ctx_.rng = &rng_;
  }
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  // Runs `comp` on `args`, or, when `donated` is given, on those literals, which it takes over.
  absl::StatusOr<Literal> Run(const HloComputation& comp, absl::Span<const Literal* const> args,
                              std::vector<Literal>* donated);

 private:
  absl::StatusOr<const Plan*> GetPlan(const HloComputation& comp);
  absl::StatusOr<Literal> Dispatch(const HloInstruction& inst, Operands ops);

  EvaluatorOptions options_;
  InternalContext ctx_;
  RngState rng_;
  int depth_ = 0;
  absl::flat_hash_map<const HloComputation*, std::unique_ptr<Plan>> plans_;
};

absl::StatusOr<const Plan*> Evaluator::GetPlan(const HloComputation& comp) {
  auto it = plans_.find(&comp);
  if (it != plans_.end()) return it->second.get();
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr) return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " has no root"));
  // Only what the root depends on (through operands and control edges) is evaluated.
  absl::flat_hash_set<const HloInstruction*> reachable = {root};
  std::vector<const HloInstruction*> stack = {root};
  while (!stack.empty()) {
    const HloInstruction* inst = stack.back();
    stack.pop_back();
    auto visit = [&](const HloInstruction* dep) -> absl::Status {
      if (dep->parent() != &comp)
        return absl::InvalidArgumentError(absl::StrCat("%", inst->name(), " uses %", dep->name(), " of another computation"));
      if (reachable.insert(dep).second) stack.push_back(dep);
      return absl::OkStatus();
    };
    for (const HloInstruction* op : inst->operands())
      if (auto st = visit(op); !st.ok()) return st;
    for (const HloInstruction* p : inst->control_predecessors())
      if (auto st = visit(p); !st.ok()) return st;
  }
  auto plan = std::make_unique<Plan>();
  absl::flat_hash_map<const HloInstruction*, int> slot;
  for (const HloInstruction* inst : comp.MakeInstructionPostOrder()) {
    if (!reachable.contains(inst)) continue;
    const int me = static_cast<int>(plan->order.size());
    std::vector<int> ops;
    for (const HloInstruction* op : inst->operands()) {
      auto s = slot.find(op);
      if (s == slot.end())  // post order puts operands first unless there is a cycle
        return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " has a cycle through %", inst->name()));
      ops.push_back(s->second);
    }
    plan->order.push_back(inst);
    plan->operands.push_back(std::move(ops));
    plan->gte_may_steal.push_back(inst->opcode() == HloOpcode::kGetTupleElement && inst->operand_count() == 1 &&
                                  GteMayStealFrom(*inst));
    slot[inst] = me;
  }
  if (plan->order.size() != reachable.size())
    return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), " has a cycle"));
  plan->uses.assign(plan->order.size(), 0);
  for (const auto& ops : plan->operands)
    for (int s : ops) ++plan->uses[s];
  plan->root = slot[root];
  ++plan->uses[plan->root];
  const Plan* p = plan.get();
  plans_[&comp] = std::move(plan);
  return p;
}

absl::StatusOr<Literal> Evaluator::Run(const HloComputation& comp, absl::Span<const Literal* const> args,
                                       std::vector<Literal>* donated) {
  if (depth_ >= kMaxCallDepth)
    return absl::ResourceExhaustedError(absl::StrCat("calls nest deeper than ", kMaxCallDepth, " computations at ", comp.name()));
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);
  auto plan_or = GetPlan(comp);
  if (!plan_or.ok()) return plan_or.status();
  const Plan& plan = **plan_or;
  const int n = static_cast<int>(plan.order.size());
  std::vector<Slot> slots(n);
  for (int i = 0; i < n; ++i) slots[i].remaining = plan.uses[i];

  auto set_owned = [&](int i, Literal v) {
    slots[i].value = std::move(v);
    slots[i].ptr = &slots[i].value;
    slots[i].owned = true;
  };
  // Drops one use of slot j; a freed alias drops the use it held on its parent.
  auto release = [&](int j) {
    while (j >= 0) {
      Slot& s = slots[j];
      if (--s.remaining > 0) return;
      s.value = Literal();
      s.ptr = nullptr;
      s.owned = false;
      j = s.alias_parent;
    }
  };

  absl::InlinedVector<const Literal*, 4> ops;
  std::vector<int> taken;  // slot that took each donated argument
  for (int i = 0; i < n; ++i) {
    const HloInstruction& inst = *plan.order[i];
    const std::vector<int>& opnd = plan.operands[i];
    ops.clear();
    for (int s : opnd) {
      if (slots[s].ptr == nullptr)
        return absl::InternalError(absl::StrCat("evaluating %", inst.name(), ": operand %", plan.order[s]->name(), " was freed"));
      ops.push_back(slots[s].ptr);
    }
    // How often slot s appears among this instruction's operands.
    auto occurrences = [&](int s) {
      int c = 0;
      for (int x : opnd) c += x == s;
      return c;
    };
    // True when this instruction holds the last uses of an owned value.
    auto stealable = [&](int s) { return slots[s].owned && slots[s].remaining == occurrences(s); };
    bool keep_operand0 = false;  // operand 0's use is held by an alias until this slot is freed

    switch (inst.opcode()) {
      case HloOpcode::kParameter: {
        const int64_t p = inst.attrs().parameter_number;
        const int64_t count = donated ? static_cast<int64_t>(donated->size()) : static_cast<int64_t>(args.size());
        if (p < 0 || p >= count)
          return Annotate(absl::InvalidArgumentError(absl::StrCat("parameter ", p, " not given (", count, " arguments)")), inst);
        if (donated) {
          // A donated argument can be taken once; a second parameter instruction with the
          // same number (malformed input) gets a copy of the first one's value.
          if (taken.size() < donated->size()) taken.assign(donated->size(), -1);
          if (taken[p] >= 0 && slots[taken[p]].ptr != nullptr) {
            set_owned(i, *slots[taken[p]].ptr);
          } else {
            set_owned(i, std::move((*donated)[p]));
            taken[p] = i;
          }
        } else {
          slots[i].ptr = args[p];
        }
        break;
      }
      case HloOpcode::kConstant:
        if (!inst.attrs().literal) return Annotate(absl::InvalidArgumentError("constant without a value"), inst);
        slots[i].ptr = &*inst.attrs().literal;
        break;
      case HloOpcode::kTuple: {
        std::vector<Literal> elems;
        elems.reserve(opnd.size());
        for (size_t k = 0; k < opnd.size(); ++k) {
          const int s = opnd[k];
          bool last_occurrence = true;
          for (size_t q = k + 1; q < opnd.size(); ++q) last_occurrence &= opnd[q] != s;
          if (last_occurrence && stealable(s)) elems.push_back(std::move(slots[s].value));
          else elems.push_back(*ops[k]);
        }
        Literal t = Literal::MakeTuple(std::move(elems));
        t.mutable_shape() = inst.shape();
        set_owned(i, std::move(t));
        break;
      }
      case HloOpcode::kWhile: {
        if (opnd.size() != 1) return Annotate(absl::InvalidArgumentError("while takes one operand"), inst);
        Literal state = stealable(opnd[0]) ? std::move(slots[opnd[0]].value) : *ops[0];
        auto r = EvalWhile(inst, std::move(state), ctx_);
        if (!r.ok()) return Annotate(r.status(), inst);
        set_owned(i, std::move(*r));
        break;
      }
      case HloOpcode::kDynamicUpdateSlice:
        if (!opnd.empty() && stealable(opnd[0]) && occurrences(opnd[0]) == 1) {
          Literal target = std::move(slots[opnd[0]].value);
          if (auto st = DynamicUpdateSliceInPlace(inst, target, ops); !st.ok()) return Annotate(st, inst);
          target.mutable_shape() = inst.shape();
          set_owned(i, std::move(target));
          break;
        }
        [[fallthrough]];
      default: {
        if (IsRoutingOp(inst)) {
          const int s = opnd[0];
          const int64_t index = RoutedIndex(inst);
          const Literal& whole = *ops[0];
          if (index >= 0 && (!whole.shape().IsTuple() || index >= whole.tuple_size()))
            return Annotate(absl::InvalidArgumentError(absl::StrCat("operand has no tuple element ", index)), inst);
          const bool steal_whole = stealable(s) && occurrences(s) == 1;
          if (steal_whole || (plan.gte_may_steal[i] && slots[s].owned)) {
            Literal& src = slots[s].value;
            set_owned(i, index >= 0 ? std::move(src.tuple_element(index)) : std::move(src));
          } else {
            slots[i].ptr = index >= 0 ? &whole.tuple_element(index) : &whole;
            slots[i].alias_parent = s;
            keep_operand0 = true;
          }
          break;
        }
        if (auto st = CheckValueSize(inst.shape(), options_.max_value_bytes); !st.ok()) return Annotate(st, inst);
        auto r = Dispatch(inst, Operands(ops.data(), ops.size()));
        if (!r.ok()) return Annotate(r.status(), inst);
        if (!r->shape().EqualIgnoringLayout(inst.shape()))
          return Annotate(absl::InternalError(absl::StrCat("kernel produced ", r->shape().ToString(false), ", expected ",
                                                           inst.shape().ToString(false))), inst);
        r->mutable_shape() = inst.shape();
        set_owned(i, std::move(*r));
      }
    }
    for (size_t k = 0; k < opnd.size(); ++k) {
      if (k == 0 && keep_operand0) continue;
      release(opnd[k]);
    }
    if (slots[i].remaining == 0) {  // nothing reads it (only reached through a control edge)
      ++slots[i].remaining;
      release(i);
    }
  }
  Slot& root = slots[plan.root];
  if (root.ptr == nullptr) return absl::InternalError(absl::StrCat("root of ", comp.name(), " has no value"));
  if (root.owned) return std::move(root.value);
  Literal copy = *root.ptr;
  copy.mutable_shape() = plan.order[plan.root]->shape().EqualIgnoringLayout(copy.shape())
                             ? plan.order[plan.root]->shape() : copy.shape();
  return copy;
}

absl::StatusOr<Literal> Evaluator::Dispatch(const HloInstruction& inst, Operands ops) {
  using O = HloOpcode;
  const O op = inst.opcode();
  if (IsHandledElementwise(op)) return EvalElementwise(inst, ops);
  if (IsHandledShapeOp(op)) return EvalShapeOp(inst, ops);
  if (IsHandledControl(op)) return EvalControl(inst, ops, ctx_);
  if (IsHandledRng(op)) return EvalRng(inst, ops, rng_);
  switch (op) {
    case O::kDot: return EvalDot(inst, ops, ctx_);
    case O::kRaggedDot: return EvalRaggedDot(inst, ops, ctx_);
    case O::kConvolution: return EvalConvolution(inst, ops, ctx_);
    case O::kReduce: return EvalReduce(inst, ops, ctx_);
    case O::kReduceWindow: return EvalReduceWindow(inst, ops, ctx_);
    case O::kSelectAndScatter: return EvalSelectAndScatter(inst, ops, ctx_);
    case O::kGather: return EvalGather(inst, ops, ctx_);
    case O::kScatter: return EvalScatter(inst, ops, ctx_);
    case O::kSort: return EvalSort(inst, ops, ctx_);
    case O::kTopK: return EvalTopK(inst, ops, ctx_);
    case O::kScan: return EvalScan(inst, ops, ctx_);
    case O::kMap: return EvalMap(inst, ops, ctx_);
    case O::kCholesky: return EvalCholesky(inst, ops, ctx_);
    case O::kTriangularSolve: return EvalTriangularSolve(inst, ops, ctx_);
    case O::kFft: return EvalFft(inst, ops, ctx_);
    case O::kBatchNormGrad: case O::kBatchNormInference: case O::kBatchNormTraining:
      return EvalBatchNorm(inst, ops, ctx_);
    case O::kAllGatherDone: case O::kAllReduceDone: case O::kCollectivePermuteDone:
      return EvalCollective(inst, ops, ctx_);
    default:
      if (IsCollective(op)) return EvalCollective(inst, ops, ctx_);
      return absl::UnimplementedError(absl::StrCat("the evaluator does not handle ", std::string(HloOpcodeString(op))));
  }
}

// A kernel's working buffers can still outgrow the host's memory; that ends the evaluation
// with an error rather than the process.
absl::StatusOr<Literal> RunGuarded(Evaluator& evaluator, const HloComputation& comp,
                                   absl::Span<const Literal* const> args) {
  try {
    return evaluator.Run(comp, args, nullptr);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrCat("out of memory evaluating ", comp.name()));
  }
}

}  // namespace

absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation, absl::Span<const Literal* const> args,
                                            const EvaluatorOptions& options) {
  Evaluator evaluator(options);
  return RunGuarded(evaluator, computation, args);
}

absl::StatusOr<Literal> EvaluateModule(const HloModule& module, absl::Span<const Literal> args,
                                       const EvaluatorOptions& options) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has no entry computation"));
  if (static_cast<int64_t>(args.size()) != entry->num_parameters())
    return absl::InvalidArgumentError(absl::StrCat("the entry computation takes ", entry->num_parameters(),
                                                   " parameters, got ", args.size(), " arguments"));
  std::vector<const Literal*> ptrs;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    if (p == nullptr) return absl::InvalidArgumentError(absl::StrCat("the entry computation has no parameter ", i));
    if (!args[i].shape().EqualIgnoringLayout(p->shape()))
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " has shape ", args[i].shape().ToString(false),
                                                     ", parameter %", p->name(), " expects ", p->shape().ToString(false)));
    ptrs.push_back(&args[i]);
  }
  Evaluator evaluator(options);
  return RunGuarded(evaluator, *entry, ptrs);
}

}  // namespace hloc
