// The HLO verifier, after XLA's HloVerifier: module and computation structure (parents,
// operands, roots, parameter numbering, called computations, call graph and data-flow cycles),
// per-instruction checks (shape inference, mixed precision, implicit broadcasts, comparison
// types, execution threads, fusion invariants), async and channel pairing, the entry
// computation layout, input/output aliasing, buffer donors and the schedule.
#include "ir/verifier.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/shape_inference.h"

namespace hloc {
namespace {

using O = HloOpcode;

std::string OpName(HloOpcode op) { return std::string(HloOpcodeString(op)); }
std::string Thread(const std::string& t) { return t.empty() ? "main" : t; }
std::string Str(const Shape& s) { return s.ToString(/*print_layout=*/false); }

absl::Status InstError(const HloInstruction& inst, absl::string_view message) {
  std::string comp = inst.parent() != nullptr ? inst.parent()->name() : "<none>";
  return absl::InvalidArgumentError(absl::StrCat(inst.LocationPrefix(), "computation ", comp, ", instruction ",
                                                 inst.name(), " (", OpName(inst.opcode()), "): ", message));
}
absl::Status CompError(const HloComputation& comp, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("computation ", comp.name(), ": ", message));
}
absl::Status ModuleError(const HloModule& module, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), ": ", message));
}

#define HLOC_RETURN_IF_ERROR(expr)         \
  do {                                     \
    absl::Status _status = (expr);         \
    if (!_status.ok()) return _status;     \
  } while (0)

// How many computations an opcode calls: n >= 0 exactly, -1 any number, -2 zero or one.
int ExpectedCalledCount(HloOpcode op) {
  switch (op) {
    case O::kFusion: case O::kCall: case O::kMap: case O::kReduce: case O::kReduceWindow:
    case O::kScatter: case O::kSort: case O::kAllReduce: case O::kAllReduceStart:
    case O::kReduceScatter: case O::kScan: case O::kAsyncStart:
      return 1;
    case O::kWhile: case O::kSelectAndScatter:
      return 2;
    case O::kConditional: case O::kCustomCall:
      return -1;
    case O::kAsyncUpdate: case O::kAsyncDone:
      return -2;
    default:
      return 0;
  }
}
bool IsAsync(HloOpcode op) { return op == O::kAsyncStart || op == O::kAsyncUpdate || op == O::kAsyncDone; }

// Opcodes whose result XLA compares with the inferred shape exactly, even when mixed precision
// is allowed: they reinterpret or pass data through rather than compute a new value.
bool IsPassThrough(HloOpcode op) {
  switch (op) {
    case O::kBitcast: case O::kCall: case O::kConditional: case O::kConstant: case O::kCopyDone:
    case O::kCopyStart: case O::kCustomCall: case O::kGetTupleElement: case O::kInfeed:
    case O::kOutfeed: case O::kOptimizationBarrier: case O::kParameter: case O::kRecv:
    case O::kRecvDone: case O::kSend: case O::kSendDone: case O::kTuple: case O::kWhile:
    case O::kDynamicUpdateSlice:
      return true;
    default:
      return false;
  }
}

// XLA's CheckMixedPrecisionOperands allow-list, plus the opcodes XLA's ShapeVerifier never
// runs CheckShape on (so the operand check never happens for them).
bool MixedPrecisionOperandsAllowed(HloOpcode op) {
  switch (op) {
    case O::kCall: case O::kConditional: case O::kConstant: case O::kConvolution: case O::kDot:
    case O::kAllReduce: case O::kAllReduceStart: case O::kAllReduceDone: case O::kAllGather:
    case O::kAllGatherStart: case O::kAllGatherDone: case O::kAsyncDone: case O::kAsyncUpdate:
    case O::kAsyncStart: case O::kCopyDone: case O::kCopyStart: case O::kCustomCall:
    case O::kDomain: case O::kFusion: case O::kGetTupleElement: case O::kOptimizationBarrier:
    case O::kInfeed: case O::kOutfeed: case O::kParameter: case O::kRecv: case O::kRecvDone:
    case O::kReducePrecision: case O::kReduceWindow: case O::kSend: case O::kSendDone:
    case O::kSort: case O::kTuple: case O::kWhile:
    case O::kBroadcast: case O::kReshape: case O::kDynamicReshape: case O::kBitcast: case O::kIota:
    case O::kRng: case O::kRngBitGenerator: case O::kRngGetAndUpdateState: case O::kScan:
      return true;
    default:
      return false;
  }
}

void CollectFloatTypes(const Shape& s, std::vector<PrimitiveType>& out) {
  if (s.IsTuple()) {
    for (const Shape& t : s.tuple_shapes()) CollectFloatTypes(t, out);
  } else if (IsFloatingPoint(s.element_type())) {
    out.push_back(s.element_type());
  }
}

bool HasUnboundedDimension(const Shape& s) {
  for (const Shape& t : s.tuple_shapes())
    if (HasUnboundedDimension(t)) return true;
  for (int64_t d : s.dimensions())
    if (d == Shape::kUnboundedSize) return true;
  return false;
}

// A present layout must name every dimension exactly once.
absl::Status CheckLayout(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& t : s.tuple_shapes()) HLOC_RETURN_IF_ERROR(CheckLayout(t));
    return absl::OkStatus();
  }
  if (!s.IsArray() || !s.has_layout()) return absl::OkStatus();
  const std::vector<int64_t>& m2m = s.layout().minor_to_major;
  if (static_cast<int64_t>(m2m.size()) != s.rank()) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", s.ToString(true),
                                                   " has mismatched minor-to-major size and dimension size"));
  }
  std::vector<bool> seen(s.rank(), false);
  for (int64_t d : m2m) {
    if (d < 0 || d >= s.rank() || seen[d]) {
      return absl::InvalidArgumentError(absl::StrCat("layout of ", s.ToString(true), " is not a permutation"));
    }
    seen[d] = true;
  }
  return absl::OkStatus();
}

// Layout-sensitive comparison: minor-to-major orders agree wherever both sides have layouts.
bool SameMinorToMajor(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i)
      if (!SameMinorToMajor(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    return true;
  }
  if (!a.IsArray() || !b.IsArray() || !a.has_layout() || !b.has_layout()) return true;
  return a.layout().minor_to_major == b.layout().minor_to_major;
}

std::vector<const HloInstruction*> UniqueUsers(const HloInstruction& inst) {
  std::vector<const HloInstruction*> users;
  for (const HloInstruction* u : inst.users())
    if (std::find(users.begin(), users.end(), u) == users.end()) users.push_back(u);
  return users;
}

class Verifier {
 public:
  Verifier(const HloModule& module, const VerifierOptions& options) : module_(module), options_(options) {}

  absl::Status Run() {
    HLOC_RETURN_IF_ERROR(CheckModuleStructure());
    for (const auto& comp : module_.computations()) HLOC_RETURN_IF_ERROR(CheckComputationStructure(*comp));
    HLOC_RETURN_IF_ERROR(CheckCallGraph());
    HLOC_RETURN_IF_ERROR(CheckCallers());
    HLOC_RETURN_IF_ERROR(CheckAsyncPairs());
    HLOC_RETURN_IF_ERROR(CheckChannels());
    absl::flat_hash_map<std::string, const HloInstruction*> names;
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        auto [it, inserted] = names.emplace(inst->name(), inst.get());
        if (!inserted) {
          return InstError(*inst, absl::StrCat("instruction name is not unique within the module; also used in "
                                               "computation ", it->second->parent()->name()));
        }
        HLOC_RETURN_IF_ERROR(CheckInstruction(*inst));
      }
    }
    HLOC_RETURN_IF_ERROR(CheckEntryLayout());
    HLOC_RETURN_IF_ERROR(CheckAliasing());
    HLOC_RETURN_IF_ERROR(CheckSchedule());
    return CheckLayoutConstrainedAllReduce();
  }

 private:
  absl::Status CheckModuleStructure() {
    const HloComputation* entry = module_.entry_computation();
    if (entry == nullptr) return ModuleError(module_, "module has no entry computation");
    absl::flat_hash_set<std::string> names;
    for (const auto& comp : module_.computations()) {
      if (comp == nullptr) return ModuleError(module_, "null computation");
      if (comp->parent() != &module_) return CompError(*comp, "computation's parent is not this module");
      if (!names.insert(comp->name()).second) return CompError(*comp, "computation name is not unique");
      computations_.insert(comp.get());
    }
    if (!computations_.contains(entry)) return ModuleError(module_, "entry computation is not in the module");
    if (entry->IsFusionComputation()) return CompError(*entry, "module entry computation cannot be a fusion computation");
    return absl::OkStatus();
  }

  absl::Status CheckComputationStructure(const HloComputation& comp) {
    const HloInstruction* root = comp.root_instruction();
    if (root == nullptr) return CompError(comp, "computation has no ROOT instruction");
    if (root->parent() != &comp) return CompError(comp, absl::StrCat("ROOT ", root->name(), " is not in this computation"));
    std::vector<const HloInstruction*> params;
    for (const auto& inst : comp.instructions()) {
      if (inst == nullptr) return CompError(comp, "null instruction");
      if (inst->parent() != &comp) return InstError(*inst, "instruction's parent is not the computation that holds it");
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        const HloInstruction* op = inst->operand(i);
        if (op == nullptr) return InstError(*inst, absl::StrCat("operand ", i, " is null"));
        if (op->parent() != &comp) {
          return InstError(*inst, absl::StrCat("operand ", i, " (", op->name(), ") is in a different computation: ",
                                               op->parent() ? op->parent()->name() : "(none)"));
        }
      }
      for (const HloInstruction* p : inst->control_predecessors()) {
        if (p == nullptr || p->parent() != &comp) {
          return InstError(*inst, "control predecessor is not in the same computation");
        }
      }
      int expected = ExpectedCalledCount(inst->opcode());
      int64_t called = inst->called_computations().size();
      if (expected == 0 && called > 0) {
        return InstError(*inst, "called computations specified for non-caller instruction");
      }
      if ((expected > 0 && called != expected) || (expected == -2 && called > 1)) {
        return InstError(*inst, absl::StrCat("expected ", expected > 0 ? expected : 1, " called computation(s), got ",
                                             called));
      }
      for (const HloComputation* callee : inst->called_computations()) {
        if (callee == nullptr || !computations_.contains(callee)) {
          return InstError(*inst, "calls a computation that is not in the module");
        }
        if (callee == module_.entry_computation()) return InstError(*inst, "calls the entry computation");
      }
      if (inst->opcode() == O::kParameter) params.push_back(inst.get());
    }
    // Parameters are numbered 0..n-1, each number once.
    std::vector<const HloInstruction*> by_number(params.size(), nullptr);
    for (const HloInstruction* p : params) {
      int64_t n = p->attrs().parameter_number;
      if (n < 0 || n >= static_cast<int64_t>(params.size())) {
        return InstError(*p, absl::StrCat("parameter number ", n, " is out of range: the computation has ",
                                          params.size(), " parameters (numbers must be 0..n-1)"));
      }
      if (by_number[n] != nullptr) {
        return InstError(*p, absl::StrCat("parameter number ", n, " is also used by ", by_number[n]->name()));
      }
      by_number[n] = p;
    }
    if (comp.num_parameters() != static_cast<int64_t>(params.size())) {
      return CompError(comp, "the computation's parameter table does not match its parameter instructions");
    }
    for (size_t n = 0; n < params.size(); ++n) {
      if (comp.parameter_instruction(n) != by_number[n]) {
        return CompError(comp, absl::StrCat("parameter table entry ", n, " is not the parameter with that number"));
      }
    }
    return CheckNoCycles(comp);
  }

  // Iterative depth-first search over operands and control predecessors.
  absl::Status CheckNoCycles(const HloComputation& comp) {
    absl::flat_hash_map<const HloInstruction*, int> state;  // 1 on the stack, 2 done
    for (const auto& start : comp.instructions()) {
      if (state[start.get()] != 0) continue;
      std::vector<std::pair<const HloInstruction*, size_t>> stack = {{start.get(), 0}};
      state[start.get()] = 1;
      while (!stack.empty()) {
        auto& [inst, next] = stack.back();
        size_t nops = inst->operands().size();
        if (next < nops + inst->control_predecessors().size()) {
          const HloInstruction* dep =
              next < nops ? inst->operand(next) : inst->control_predecessors()[next - nops];
          ++next;
          int& s = state[dep];
          if (s == 1) {
            return InstError(*dep, absl::StrCat("instruction is part of a cycle (through ", inst->name(), ")"));
          }
          if (s == 0) {
            s = 1;
            stack.push_back({dep, 0});
          }
        } else {
          state[inst] = 2;
          stack.pop_back();
        }
      }
    }
    return absl::OkStatus();
  }

  // The call graph must be acyclic: no computation may (indirectly) call itself.
  absl::Status CheckCallGraph() {
    absl::flat_hash_map<const HloComputation*, int> state;
    // (callee, the instruction that calls it): a cycle is reported at the call that closes it.
    using Call = std::pair<const HloComputation*, const HloInstruction*>;
    auto callees = [](const HloComputation* c) {
      std::vector<Call> out;
      for (const auto& inst : c->instructions())
        for (const HloComputation* callee : inst->called_computations()) out.push_back({callee, inst.get()});
      return out;
    };
    for (const auto& root : module_.computations()) {
      if (state[root.get()] != 0) continue;
      std::vector<std::pair<const HloComputation*, std::vector<Call>>> stack;
      stack.push_back({root.get(), callees(root.get())});
      state[root.get()] = 1;
      while (!stack.empty()) {
        auto& [comp, pending] = stack.back();
        if (pending.empty()) {
          state[comp] = 2;
          stack.pop_back();
          continue;
        }
        const auto [next, call] = pending.back();
        pending.pop_back();
        int& s = state[next];
        if (s == 1) {
          return InstError(*call, absl::StrCat("calls computation ", next->name(),
                                               ", which calls itself (the call graph has a cycle)"));
        }
        if (s == 0) {
          s = 1;
          stack.push_back({next, callees(next)});
        }
      }
    }
    return absl::OkStatus();
  }

  // Fusion computations belong to exactly one fusion; an async computation to one async-start.
  absl::Status CheckCallers() {
    for (const auto& comp : module_.computations())
      for (const auto& inst : comp->instructions())
        for (const HloComputation* callee : inst->called_computations()) callers_[callee].push_back(inst.get());
    for (const auto& comp : module_.computations()) {
      const std::vector<const HloInstruction*>& callers = callers_[comp.get()];
      int64_t fusions = 0, async_starts = 0;
      for (const HloInstruction* c : callers) {
        fusions += c->opcode() == O::kFusion;
        async_starts += c->opcode() == O::kAsyncStart;
      }
      // Reported at the second caller (the first that breaks the rule), naming the first.
      if (fusions > 0 && callers.size() != 1) {
        return InstError(*callers[1], absl::StrCat("calls fused computation ", comp->name(), ", which is called by ",
                                                   callers.size(), " instructions (also by ", callers[0]->name(),
                                                   "); it must belong to exactly one fusion"));
      }
      if (comp->IsFusionComputation() &&
          std::find(callers.begin(), callers.end(), comp->FusionInstruction()) == callers.end()) {
        if (comp->FusionInstruction() != nullptr) {
          return InstError(*comp->FusionInstruction(),
                           absl::StrCat("fused computation ", comp->name(), " names this fusion, which does not call it"));
        }
        return CompError(*comp, "computation names a fusion instruction that does not call it");
      }
      if (async_starts > 1) {
        const HloInstruction* first = nullptr;
        for (const HloInstruction* c : callers) {
          if (c->opcode() != O::kAsyncStart) continue;
          if (first == nullptr) {
            first = c;
            continue;
          }
          return InstError(*c, absl::StrCat("calls computation ", comp->name(), ", which is called by more than one "
                                            "async op (also by ", first->name(), ")"));
        }
      }
      if (async_starts == 1) async_computations_.insert(comp.get());
    }
    return absl::OkStatus();
  }

  absl::Status ExpectSingleUser(const HloInstruction& inst, std::initializer_list<HloOpcode> allowed) {
    std::vector<const HloInstruction*> users = UniqueUsers(inst);
    if (users.size() != 1) {
      return InstError(inst, absl::StrCat("the ", OpName(inst.opcode()), " instruction requires one consumer, found ",
                                          users.size()));
    }
    if (std::find(allowed.begin(), allowed.end(), users[0]->opcode()) == allowed.end()) {
      return InstError(inst, absl::StrCat("the consumer of a ", OpName(inst.opcode()), " cannot be ",
                                          OpName(users[0]->opcode()), " (", users[0]->name(), ")"));
    }
    return absl::OkStatus();
  }
  absl::Status ExpectOperand(const HloInstruction& inst, std::initializer_list<HloOpcode> allowed) {
    if (inst.operand_count() != 1) return InstError(inst, "expected exactly one operand");
    HloOpcode op = inst.operand(0)->opcode();
    if (std::find(allowed.begin(), allowed.end(), op) == allowed.end()) {
      return InstError(inst, absl::StrCat("the operand of a ", OpName(inst.opcode()), " cannot be ", OpName(op)));
    }
    return absl::OkStatus();
  }
  bool IsRootOfAsyncComputation(const HloInstruction& inst) const {
    return inst.IsRoot() && async_computations_.contains(inst.parent());
  }

  // Start/done pairs: each start has exactly one done (or update) consumer.
  absl::Status CheckAsyncPairs() {
    for (const auto& comp : module_.computations()) {
      for (const auto& ptr : comp->instructions()) {
        const HloInstruction& inst = *ptr;
        switch (inst.opcode()) {
          case O::kAsyncStart:
            HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kAsyncUpdate, O::kAsyncDone}));
            break;
          case O::kAsyncUpdate:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kAsyncStart, O::kAsyncUpdate}));
            HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kAsyncUpdate, O::kAsyncDone}));
            break;
          case O::kAsyncDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kAsyncStart, O::kAsyncUpdate}));
            break;
          case O::kAllReduceStart:
            HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kAllReduceDone}));
            break;
          case O::kAllReduceDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kAllReduceStart}));
            break;
          case O::kCopyStart:
            HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kCopyDone}));
            break;
          case O::kCopyDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kCopyStart}));
            break;
          case O::kCollectivePermuteStart:
            HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kCollectivePermuteDone}));
            break;
          case O::kCollectivePermuteDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kCollectivePermuteStart}));
            break;
          case O::kSend:
            if (!IsRootOfAsyncComputation(inst)) HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kSendDone, O::kTuple}));
            break;
          case O::kSendDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kSend, O::kGetTupleElement}));
            break;
          case O::kRecv:
            if (!IsRootOfAsyncComputation(inst)) HLOC_RETURN_IF_ERROR(ExpectSingleUser(inst, {O::kRecvDone, O::kTuple}));
            break;
          case O::kRecvDone:
            HLOC_RETURN_IF_ERROR(ExpectOperand(inst, {O::kRecv, O::kGetTupleElement}));
            break;
          default:
            break;
        }
      }
    }
    return absl::OkStatus();
  }

  // Send/recv and their done ops agree on channel and host transfer; a channel used by send/recv
  // is used by nothing else.
  absl::Status CheckChannels() {
    auto is_send_recv = [](HloOpcode op) {
      return op == O::kSend || op == O::kRecv || op == O::kSendDone || op == O::kRecvDone;
    };
    absl::flat_hash_map<int64_t, std::vector<const HloInstruction*>> by_channel;
    for (const auto& comp : module_.computations()) {
      for (const auto& ptr : comp->instructions()) {
        const HloInstruction& inst = *ptr;
        if (!inst.attrs().channel_id) continue;
        by_channel[*inst.attrs().channel_id].push_back(&inst);
        if ((inst.opcode() == O::kSend || inst.opcode() == O::kRecv) && !IsRootOfAsyncComputation(inst)) {
          std::vector<const HloInstruction*> users = UniqueUsers(inst);
          if (users.size() != 1) return InstError(inst, "send/recv must have exactly one user");
          const HloInstruction* done = users[0];
          if (done->opcode() == O::kSendDone || done->opcode() == O::kRecvDone) {
            if (done->attrs().channel_id != inst.attrs().channel_id) {
              return InstError(*done, absl::StrCat("expected the same channel id as ", inst.name()));
            }
            if (done->attrs().is_host_transfer != inst.attrs().is_host_transfer) {
              return InstError(*done, absl::StrCat("expected the same is_host_transfer as ", inst.name()));
            }
          }
        }
      }
    }
    for (const auto& [id, insts] : by_channel) {
      if (!is_send_recv(insts[0]->opcode())) continue;
      for (const HloInstruction* inst : insts) {
        if (!is_send_recv(inst->opcode())) {
          return InstError(*inst, absl::StrCat("channel ", id, " is used for different types of channel instructions"));
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckInstruction(const HloInstruction& inst) {
    int arity = HloOpcodeArity(inst.opcode());
    if (arity != kVariadic && inst.operand_count() != arity) {
      return InstError(inst, absl::StrCat("expected ", arity, " operands, got ", inst.operand_count()));
    }
    if (!options_.allow_unbounded_dynamism && HasUnboundedDimension(inst.shape())) {
      return InstError(inst, "unbounded dynamism ('?' dimensions) is disabled");
    }
    absl::Status layout = CheckLayout(inst.shape());
    if (!layout.ok()) return InstError(inst, layout.message());
    if (options_.verify_shapes) {
      HLOC_RETURN_IF_ERROR(CheckMixedPrecisionOperands(inst));
      absl::StatusOr<Shape> inferred = InferShape(inst);
      if (!inferred.ok()) return InstError(inst, inferred.status().message());
      bool exact = IsPassThrough(inst.opcode()) || !options_.allow_mixed_precision;
      bool same = exact ? ShapesCompatible(inst.shape(), *inferred)
                        : ShapesCompatibleIgnoringFpPrecision(inst.shape(), *inferred);
      if (!same) {
        return InstError(inst, absl::StrCat("Expected instruction to have shape equal to ", Str(*inferred),
                                            ", actual shape is ", Str(inst.shape())));
      }
      if (options_.layout_sensitive) HLOC_RETURN_IF_ERROR(CheckPassThroughLayouts(inst));
    }
    HLOC_RETURN_IF_ERROR(CheckElementwise(inst));
    HLOC_RETURN_IF_ERROR(CheckThreads(inst));
    if (inst.opcode() == O::kFusion) HLOC_RETURN_IF_ERROR(CheckFusion(inst));
    return absl::OkStatus();
  }

  // Elementwise ops take operands of the result's dimensions (HLO has no implicit broadcast;
  // select and clamp may take scalars), and compare's type suits its operands.
  absl::Status CheckElementwise(const HloInstruction& inst) {
    HloOpcode op = inst.opcode();
    if (!IsElementwiseUnary(op) && !IsElementwiseBinary(op)) return absl::OkStatus();
    if (op == O::kBitcastConvert) return absl::OkStatus();
    for (const HloInstruction* operand : inst.operands()) {
      if (!ShapesCompatibleIgnoringElementType(operand->shape(), inst.shape())) {
        return InstError(inst, absl::StrCat("Implicit broadcast is not allowed in HLO: output ", Str(inst.shape()),
                                            ", operand ", Str(operand->shape())));
      }
    }
    if (op != O::kCompare || inst.attrs().comparison_type == ComparisonType::kDefault) return absl::OkStatus();
    PrimitiveType t = inst.operand(1)->shape().element_type();
    ComparisonType type = inst.attrs().comparison_type;
    if (IsFloatingPoint(t)) {
      if (type != ComparisonType::kFloat && type != ComparisonType::kTotalOrder) {
        return InstError(inst, "expected comparison type FLOAT or TOTALORDER for floating-point operands");
      }
      return absl::OkStatus();
    }
    ComparisonType expected = IsComplex(t)          ? ComparisonType::kFloat
                              : IsSignedIntegral(t) ? ComparisonType::kSigned
                                                    : ComparisonType::kUnsigned;
    if (type != expected) {
      const char* name = expected == ComparisonType::kFloat    ? "FLOAT"
                         : expected == ComparisonType::kSigned ? "SIGNED"
                                                               : "UNSIGNED";
      return InstError(inst, absl::StrCat("expected comparison type ", name, " for ", Str(inst.operand(1)->shape()),
                                          " operands"));
    }
    return absl::OkStatus();
  }

  absl::Status CheckMixedPrecisionOperands(const HloInstruction& inst) {
    if (options_.allow_mixed_precision || MixedPrecisionOperandsAllowed(inst.opcode())) return absl::OkStatus();
    // Variadic reduce and scatter carry one value per operand, each of its own type: only the
    // operands that meet in one reduction must agree (XLA accepts a (f32, bf16) tuple scatter).
    int64_t n = inst.operand_count();
    if ((inst.opcode() == O::kReduce && n % 2 == 0) || (inst.opcode() == O::kScatter && n % 2 == 1)) {
      int64_t k = n / 2;
      for (int64_t i = 0; i < k; ++i) {
        int64_t partner = inst.opcode() == O::kReduce ? k + i : k + 1 + i;
        std::vector<PrimitiveType> pair;
        CollectFloatTypes(inst.operand(i)->shape(), pair);
        CollectFloatTypes(inst.operand(partner)->shape(), pair);
        if (pair.size() == 2 && pair[0] != pair[1]) {
          return InstError(inst, "Seen floating point types of different precisions, but mixed precision is disallowed.");
        }
      }
      return absl::OkStatus();
    }
    std::vector<PrimitiveType> types;
    for (const HloInstruction* op : inst.operands()) CollectFloatTypes(op->shape(), types);
    for (PrimitiveType t : types) {
      if (t != types[0]) {
        return InstError(inst, "Seen floating point types of different precisions, but mixed precision is disallowed.");
      }
    }
    return absl::OkStatus();
  }

  // With layout_sensitive, ops that hand a value through keep its minor-to-major order.
  absl::Status CheckPassThroughLayouts(const HloInstruction& inst) {
    std::vector<const Shape*> sources;
    const auto& called = inst.called_computations();
    switch (inst.opcode()) {
      case O::kGetTupleElement: {
        const Shape& t = inst.operand(0)->shape();
        if (t.IsTuple() && inst.attrs().tuple_index < static_cast<int64_t>(t.tuple_shapes().size()))
          sources.push_back(&t.tuple_shapes(inst.attrs().tuple_index));
        break;
      }
      case O::kTuple:
        for (int64_t i = 0; i < inst.operand_count(); ++i) {
          if (!SameMinorToMajor(inst.shape().tuple_shapes(i), inst.operand(i)->shape()))
            return InstError(inst, absl::StrCat("operand ", i, " has a different layout than the tuple element"));
        }
        break;
      case O::kOptimizationBarrier: case O::kDomain: case O::kWhile:
        sources.push_back(&inst.operand(0)->shape());
        break;
      case O::kCopyDone:
        if (inst.operand(0)->shape().IsTuple()) sources.push_back(&inst.operand(0)->shape().tuple_shapes(0));
        break;
      default:
        break;
    }
    if (inst.opcode() == O::kCall || inst.opcode() == O::kWhile || inst.opcode() == O::kConditional) {
      for (size_t i = inst.opcode() == O::kWhile ? 1 : 0; i < called.size(); ++i)
        sources.push_back(&called[i]->root_instruction()->shape());
    }
    for (const Shape* s : sources) {
      if (!SameMinorToMajor(inst.shape(), *s)) {
        return InstError(inst, absl::StrCat("layout of ", inst.shape().ToString(true), " differs from the layout ",
                                            s->ToString(true), " it passes through"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckThreads(const HloInstruction& inst) {
    const auto& called = inst.called_computations();
    if (called.empty()) return absl::OkStatus();
    if (IsAsync(inst.opcode())) {
      // update/done inherit their start's thread when they do not name one.
      if (inst.opcode() != O::kAsyncStart && inst.attrs().async_execution_thread.empty()) return absl::OkStatus();
      std::string want = Thread(inst.attrs().async_execution_thread);
      std::string have = Thread(called[0]->execution_thread());
      if (want != have) {
        return InstError(inst, absl::StrCat("expects the same async thread name as the wrapped computation's thread "
                                            "name (", want, " vs ", have, ")"));
      }
      return absl::OkStatus();
    }
    std::string parent = Thread(inst.parent()->execution_thread());
    for (const HloComputation* c : called) {
      if (Thread(c->execution_thread()) != parent) {
        return InstError(inst, absl::StrCat("called computation ", c->name(), " runs on thread ",
                                            Thread(c->execution_thread()), " but the caller runs on ", parent));
      }
    }
    return absl::OkStatus();
  }

  // XLA's CheckFusionInstruction: the fused computation points back at the fusion, its root has
  // no users and every other fused instruction has one.
  absl::Status CheckFusion(const HloInstruction& fusion) {
    const HloComputation* fused = fusion.called_computations()[0];
    if (fused->FusionInstruction() != &fusion) {
      return InstError(fusion, absl::StrCat("fused computation ", fused->name(),
                                            " does not name this instruction as its fusion instruction"));
    }
    const HloInstruction* root = fused->root_instruction();
    if (root->user_count() != 0) return InstError(fusion, absl::StrCat("root of ", fused->name(), " may not have users"));
    for (const auto& inst : fused->instructions()) {
      if (inst.get() != root && inst->user_count() == 0) {
        return InstError(fusion, absl::StrCat("non-root instruction ", inst->name(), " in ", fused->name(),
                                              " must have users"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckEntryLayout() {
    const auto& layout = module_.config().entry_computation_layout;
    if (!layout) return absl::OkStatus();
    const HloComputation& entry = *module_.entry_computation();
    if (static_cast<int64_t>(layout->parameter_shapes.size()) != entry.num_parameters()) {
      return CompError(entry, absl::StrCat("Number of parameters in entry computation layout (",
                                           layout->parameter_shapes.size(),
                                           ") must be same as number of parameters of entry computation (",
                                           entry.num_parameters(), ")"));
    }
    const Shape& root = entry.root_instruction()->shape();
    if (!ShapesCompatible(root, layout->result_shape) ||
        (options_.layout_sensitive && options_.entry_layout_sensitive && !SameMinorToMajor(root, layout->result_shape))) {
      return InstError(*entry.root_instruction(), absl::StrCat("Shape of the root instruction of entry computation (", root.ToString(true),
                                           ") should be compatible to one specified in module's entry computation "
                                           "layout (", layout->result_shape.ToString(true), ")"));
    }
    for (int64_t i = 0; i < entry.num_parameters(); ++i) {
      const Shape& p = entry.parameter_instruction(i)->shape();
      const Shape& l = layout->parameter_shapes[i];
      absl::Status valid = CheckLayout(l);
      if (!valid.ok()) return CompError(entry, absl::StrCat("entry computation layout: ", valid.message()));
      if (!ShapesCompatible(p, l) ||
          (options_.layout_sensitive && options_.entry_layout_sensitive && !SameMinorToMajor(p, l))) {
        return InstError(*entry.parameter_instruction(i),
                         absl::StrCat("Shape of the entry computation parameter ", i, " is ", p.ToString(true),
                                             " should be compatible to the one specified in module's entry "
                                             "computation layout ", l.ToString(true)));
      }
    }
    return absl::OkStatus();
  }

  // input_output_alias and buffer_donor name existing array buffers, each parameter buffer once.
  absl::Status CheckAliasing() {
    const HloComputation& entry = *module_.entry_computation();
    const HloModuleConfig& config = module_.config();
    const Shape& output = entry.root_instruction()->shape();
    absl::flat_hash_set<std::pair<int64_t, ShapeIndex>> params_seen;
    absl::flat_hash_set<ShapeIndex> outputs_seen;
    auto param_subshape = [&](int64_t number, const ShapeIndex& index, const Shape** out) -> absl::Status {
      if (number < 0 || number >= entry.num_parameters()) {
        return ModuleError(module_, absl::StrCat("aliasing names parameter ", number, " but the entry has ",
                                                 entry.num_parameters(), " parameters"));
      }
      absl::StatusOr<const Shape*> s = GetSubshape(entry.parameter_instruction(number)->shape(), index);
      if (!s.ok() || !(*s)->IsArray()) {
        return ModuleError(module_, absl::StrCat("aliasing names parameter ", number, " at index ",
                                                 ShapeIndexToString(index), ", which is not an array"));
      }
      *out = *s;
      return absl::OkStatus();
    };
    for (const InputOutputAlias& alias : config.input_output_alias) {
      const Shape* param = nullptr;
      HLOC_RETURN_IF_ERROR(param_subshape(alias.parameter_number, alias.parameter_index, &param));
      absl::StatusOr<const Shape*> out = GetSubshape(output, alias.output_index);
      if (!out.ok() || !(*out)->IsArray()) {
        return ModuleError(module_, absl::StrCat("input_output_alias names output index ",
                                                 ShapeIndexToString(alias.output_index), ", which is not an array"));
      }
      if (!outputs_seen.insert(alias.output_index).second) {
        return ModuleError(module_, absl::StrCat("output index ", ShapeIndexToString(alias.output_index),
                                                 " is aliased more than once"));
      }
      if (!params_seen.insert({alias.parameter_number, alias.parameter_index}).second) {
        return ModuleError(module_, absl::StrCat("parameter ", alias.parameter_number, " at ",
                                                 ShapeIndexToString(alias.parameter_index), " is aliased more than once"));
      }
      if (options_.layout_sensitive && (*out)->num_elements() * ByteWidth((*out)->element_type()) !=
                                           param->num_elements() * ByteWidth(param->element_type())) {
        return ModuleError(module_, "aliased input and output buffers differ in size");
      }
      if (alias.must_alias && config.entry_computation_layout) {
        absl::StatusOr<const Shape*> lr = GetSubshape(config.entry_computation_layout->result_shape, alias.output_index);
        const auto& lp = config.entry_computation_layout->parameter_shapes;
        if (lr.ok() && alias.parameter_number < static_cast<int64_t>(lp.size())) {
          absl::StatusOr<const Shape*> lpp = GetSubshape(lp[alias.parameter_number], alias.parameter_index);
          if (lpp.ok() && !(**lr == **lpp)) {
            return ModuleError(module_, absl::StrCat("must-alias output ", ShapeIndexToString(alias.output_index),
                                                     " and its parameter differ in shape or layout in the entry "
                                                     "computation layout"));
          }
        }
      }
    }
    for (const BufferDonor& donor : config.buffer_donor) {
      const Shape* param = nullptr;
      HLOC_RETURN_IF_ERROR(param_subshape(donor.parameter_number, donor.parameter_index, &param));
      if (params_seen.contains(std::make_pair(donor.parameter_number, donor.parameter_index))) {
        return ModuleError(module_, absl::StrCat("parameter ", donor.parameter_number, " at ",
                                                 ShapeIndexToString(donor.parameter_index),
                                                 " is both a buffer donor and aliased"));
      }
    }
    return absl::OkStatus();
  }

  // In a scheduled module each (non-fused) computation's order is its schedule: operands and
  // control predecessors come first.
  absl::Status CheckSchedule() {
    if (!module_.is_scheduled()) return absl::OkStatus();
    for (const auto& comp : module_.computations()) {
      if (comp->IsFusionComputation()) continue;
      absl::flat_hash_map<const HloInstruction*, size_t> position;
      for (size_t i = 0; i < comp->instructions().size(); ++i) position[comp->instructions()[i].get()] = i;
      for (size_t i = 0; i < comp->instructions().size(); ++i) {
        const HloInstruction& inst = *comp->instructions()[i];
        std::vector<const HloInstruction*> deps(inst.operands().begin(), inst.operands().end());
        deps.insert(deps.end(), inst.control_predecessors().begin(), inst.control_predecessors().end());
        for (const HloInstruction* dep : deps) {
          if (position[dep] > i) {
            return InstError(inst, absl::StrCat("the schedule (instruction order of a scheduled module) runs it "
                                                "before its dependency ", dep->name()));
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status CheckLayoutConstrainedAllReduce() {
    const HloInstruction* reference = nullptr;
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        if (inst->opcode() != O::kAllReduce && inst->opcode() != O::kAllReduceStart) continue;
        if (reference == nullptr) reference = inst.get();
        if (reference->attrs().constrain_layout != inst->attrs().constrain_layout) {
          return InstError(*inst, "HloModule has a mix of layout constrained and unconstrained AllReduce instructions");
        }
      }
    }
    return absl::OkStatus();
  }

  const HloModule& module_;
  const VerifierOptions& options_;
  absl::flat_hash_set<const HloComputation*> computations_;
  absl::flat_hash_set<const HloComputation*> async_computations_;
  absl::flat_hash_map<const HloComputation*, std::vector<const HloInstruction*>> callers_;
};

}  // namespace

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options) {
  return Verifier(module, options).Run();
}

}  // namespace hloc
