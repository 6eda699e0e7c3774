// flatten-call-graph, after XLA's FlattenCallGraph (xla/service/flatten_call_graph.cc).
//
// The call graph is XLA's: a call site's context is control flow (call, while, conditional,
// async ops) or embedded (reduce, map, sort, fusion, custom-call, ...); a computation's context
// is the union of how it is reached from the roots (computations nothing calls), where anything
// reached through an embedded site is embedded. Nodes are visited callees first; for each, every
// control-flow call site but the first (every one, when the computation is also used embedded)
// gets its own copy of the computation, and the copy's control-flow callees are copied too.
#include "passes/simplify/flatten_call_graph.h"

#include <deque>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

CallContext Union(CallContext a, CallContext b) {
  if (a == CallContext::kNone) return b;
  if (b == CallContext::kNone || a == b) return a;
  return CallContext::kBoth;
}

// XLA's CallGraph node contexts, propagated from the roots.
absl::flat_hash_map<const HloComputation*, CallContext> ComputeContexts(
    const HloModule& module, const absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>>& callers) {
  absl::flat_hash_map<const HloComputation*, CallContext> context;
  std::deque<const HloComputation*> worklist;
  for (const auto& c : module.computations()) {
    auto it = callers.find(c.get());
    if (it == callers.end() || it->second.empty()) {
      context[c.get()] = CallContext::kControlFlow;
      worklist.push_back(c.get());
    } else {
      context[c.get()] = CallContext::kNone;
    }
  }
  while (!worklist.empty()) {
    const HloComputation* c = worklist.front();
    worklist.pop_front();
    const CallContext here = context[c];
    for (const auto& inst : c->instructions()) {
      CallContext site = GetInstructionCallContext(inst->opcode());
      if (site == CallContext::kNone) continue;
      CallContext add = site == CallContext::kEmbedded ? CallContext::kEmbedded : here;
      for (const HloComputation* callee : inst->called_computations()) {
        if (callee == nullptr) continue;
        CallContext& cur = context[callee];
        CallContext merged = Union(cur, add);
        if (merged != cur) {
          cur = merged;
          worklist.push_back(callee);
        }
      }
    }
  }
  return context;
}

// Points exactly one use of `from` by `inst` at `to` (the first, as XLA's
// ReplaceCalledComputation does for a while's condition before its body).
void ReplaceCalledComputation(HloInstruction& inst, const HloComputation* from, HloComputation* to) {
  for (HloComputation*& c : inst.mutable_called_computations()) {
    if (c == from) {
      c = to;
      return;
    }
  }
}

bool IsSequentialCall(HloOpcode op) { return op == O::kCall || op == O::kWhile || op == O::kConditional; }

}  // namespace

absl::StatusOr<bool> FlattenCallGraphPass::Run(HloModule& module, PassContext&) {
  // Caller call sites as XLA lists them: one entry per (instruction, callee) pair, in module
  // then instruction order; only instructions with a call context count.
  absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> callers;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions())
      if (GetInstructionCallContext(inst->opcode()) != CallContext::kNone)
        for (const HloComputation* callee : inst->called_computations())
          if (callee != nullptr) callers[callee].push_back(inst.get());
  absl::flat_hash_map<const HloComputation*, CallContext> context = ComputeContexts(module, callers);
  absl::flat_hash_set<const HloComputation*> async = AsyncComputations(module);
  CloneNames names = CloneNames::ForModule(module);

  bool changed = false;
  for (HloComputation* computation : module.MakeComputationPostOrder()) {
    auto it = callers.find(computation);
    if (it == callers.end()) continue;
    const std::vector<HloInstruction*> sites = it->second;
    for (size_t i = 0; i < sites.size(); ++i) {
      HloInstruction* site = sites[i];
      if (GetInstructionCallContext(site->opcode()) != CallContext::kControlFlow) continue;
      if (context[computation] != CallContext::kBoth && i == 0) continue;
      if (async.contains(computation)) continue;
      auto clone = CloneComputation(*computation, module, names);
      if (!clone.ok()) return clone.status();
      ReplaceCalledComputation(*site, computation, *clone);
      changed = true;
      // The copy's sequential callees now have one more caller each: copy them too.
      std::vector<HloComputation*> worklist = {*clone};
      while (!worklist.empty()) {
        HloComputation* current = worklist.back();
        worklist.pop_back();
        for (const auto& inst : current->instructions()) {
          if (!IsSequentialCall(inst->opcode())) continue;
          const std::vector<HloComputation*> callees = inst->called_computations();
          for (HloComputation* callee : callees) {
            if (callee == nullptr) continue;
            auto callee_clone = CloneComputation(*callee, module, names);
            if (!callee_clone.ok()) return callee_clone.status();
            ReplaceCalledComputation(*inst, callee, *callee_clone);
            worklist.push_back(*callee_clone);
          }
        }
      }
    }
  }
  return changed;
}

void RegisterFlattenCallGraphPass(PassRegistry& registry) {
  PassInfo info;
  info.name = "flatten-call-graph";
  info.description = "copies computations called from several control-flow sites so each has one caller";
  info.factory = [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<FlattenCallGraphPass>(); };
  registry.Register(std::move(info));
}

}  // namespace hloc
