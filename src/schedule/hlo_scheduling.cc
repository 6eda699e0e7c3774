// The memory schedulers (XLA's hlo_memory_scheduler.cc): list, DFS and post-order, and the
// default module scheduler that runs all three on every sequential computation and keeps the
// order with the least heap-simulated peak.
#include "schedule/hlo_scheduling.h"

#include <algorithm>
#include <climits>
#include <limits>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "schedule/buffer_model.h"

namespace hloc {
namespace schedule_internal {
namespace {

using O = HloOpcode;

bool IsEffectiveScalar(const Shape& shape) {
  if (!shape.IsArray()) return false;
  for (int64_t d : shape.dimensions())
    if (d != 1) return false;
  return true;
}

// Parameters and constants are live throughout whatever the order, so the heuristics ignore them.
bool IgnoreInstruction(const HloInstruction& inst) {
  return inst.opcode() == O::kParameter || inst.opcode() == O::kConstant;
}

// Unique successors (users and control successors) and the number of unique predecessors.
std::vector<HloInstruction*> Successors(const HloInstruction& inst) {
  std::vector<HloInstruction*> out;
  absl::flat_hash_set<const HloInstruction*> seen;
  for (HloInstruction* u : inst.users())
    if (seen.insert(u).second) out.push_back(u);
  for (HloInstruction* s : inst.control_successors())
    if (seen.insert(s).second) out.push_back(s);
  return out;
}
int64_t PredecessorCount(const HloInstruction& inst) {
  absl::flat_hash_set<const HloInstruction*> seen;
  for (const HloInstruction* op : inst.operands()) seen.insert(op);
  for (const HloInstruction* p : inst.control_predecessors()) seen.insert(p);
  return static_cast<int64_t>(seen.size());
}
int64_t UniqueUserCount(const HloInstruction& inst) {
  absl::flat_hash_set<const HloInstruction*> seen(inst.users().begin(), inst.users().end());
  return static_cast<int64_t>(seen.size());
}

// Greedy list scheduling: among the ready instructions, run the one that frees the most bytes
// net of what it defines (then the one with most users); scalars first so they can stay in
// registers. XLA's ListScheduler, including its ready-queue tie order (the most recently
// readied of equal priority goes first).
class ListScheduler {
 public:
  ListScheduler(const HloComputation& computation, const LogicalBuffers& buffers, const MemoryByComputation& memory)
      : computation_(computation), buffers_(buffers), memory_(memory), unscheduled_uses_(buffers.num_buffers(), 0) {
    for (const auto& inst : computation.instructions())
      for (int64_t id : buffers.uses.at(inst.get())) ++unscheduled_uses_[id];
    // Values live out of the computation have one more use at its end.
    for (int64_t id = 0; id < buffers.num_buffers(); ++id)
      if (buffers.live_out[id]) ++unscheduled_uses_[id];
  }

  absl::StatusOr<std::vector<HloInstruction*>> Run() {
    using Priority = std::pair<int64_t, int64_t>;
    std::multimap<Priority, HloInstruction*> ready;
    absl::flat_hash_map<const HloInstruction*, std::multimap<Priority, HloInstruction*>::iterator> ready_at;
    absl::flat_hash_map<const HloInstruction*, int64_t> preds;
    auto add_ready = [&](HloInstruction* inst) { ready_at[inst] = ready.emplace(GetPriority(*inst), inst); };
    for (const auto& inst : computation_.instructions()) {
      const int64_t n = PredecessorCount(*inst);
      preds[inst.get()] = n;
      if (n == 0) add_ready(inst.get());
    }
    std::vector<HloInstruction*> sequence;
    sequence.reserve(computation_.instructions().size());
    while (!ready.empty()) {
      auto best_it = std::prev(ready.end());
      HloInstruction* best = best_it->second;
      ready.erase(best_it);
      ready_at.erase(best);
      sequence.push_back(best);
      bool adjust = false;
      for (int64_t id : buffers_.uses.at(best)) {
        if (--unscheduled_uses_[id] == 1) adjust = true;
      }
      for (HloInstruction* succ : Successors(*best))
        if (--preds[succ] == 0) add_ready(succ);
      // A buffer down to its last use makes that user free it: re-rank the ready users.
      if (adjust) {
        for (const HloInstruction* operand : best->operands()) {
          for (HloInstruction* user : operand->users()) {
            auto it = ready_at.find(user);
            if (it == ready_at.end()) continue;
            Priority p = GetPriority(*user);
            if (p == it->second->first) continue;
            ready.erase(it->second);
            it->second = ready.emplace(p, user);
          }
        }
      }
    }
    if (sequence.size() != computation_.instructions().size())
      return absl::InvalidArgumentError(absl::StrCat("list scheduler: ", computation_.name(),
                                                     " has a dependency cycle"));
    return sequence;
  }

 private:
  int64_t BytesFreedIfScheduled(const HloInstruction& inst) const {
    // Outfeeds early and infeeds late give the other side of the transfer more time.
    if (inst.opcode() == O::kOutfeed && !inst.attrs().outfeed_config.empty()) return INT_MAX;
    if (inst.opcode() == O::kInfeed && !inst.attrs().infeed_config.empty()) return INT_MIN;
    int64_t freed = 0;
    for (int64_t id : buffers_.uses.at(&inst))
      if (!IgnoreInstruction(*buffers_.definer[id]) && unscheduled_uses_[id] == 1) freed += buffers_.size[id];
    int64_t defined = 0;
    for (int64_t id : buffers_.defined.at(&inst))
      if (!IgnoreInstruction(*buffers_.definer[id])) defined += buffers_.size[id];
    int64_t sub = 0;
    for (const HloComputation* c : inst.called_computations()) {
      auto it = memory_.find(c);
      if (it != memory_.end()) sub = std::max(sub, it->second);
    }
    const O op = inst.opcode();
    if (sub > 0 && (op == O::kWhile || op == O::kCall || op == O::kConditional)) return freed - sub;
    return freed - (defined + sub);
  }

  std::pair<int64_t, int64_t> GetPriority(const HloInstruction& inst) const {
    if (IsEffectiveScalar(inst.shape()))
      return {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::max()};
    return {BytesFreedIfScheduled(inst), UniqueUserCount(inst)};
  }

  const HloComputation& computation_;
  const LogicalBuffers& buffers_;
  const MemoryByComputation& memory_;
  std::vector<int64_t> unscheduled_uses_;
};

}  // namespace

absl::StatusOr<std::vector<HloInstruction*>> ListSchedule(const HloComputation& computation,
                                                          const LogicalBuffers& buffers,
                                                          const MemoryByComputation& memory) {
  return ListScheduler(computation, buffers, memory).Run();
}

absl::StatusOr<std::vector<HloInstruction*>> DfsSchedule(const HloComputation& computation,
                                                         const LogicalBuffers& buffers) {
  // Per instruction, transitively over its operands: how many extra users (fan-out beyond one)
  // and how many bytes lead to it (XLA's DFSMemoryScheduler stats, capped the same way since a
  // DAG double-counts shared ancestors).
  struct Stats {
    int64_t extra_users = 0;
    int64_t total_sizes = 0;
  };
  absl::flat_hash_map<const HloInstruction*, Stats> stats;
  const int64_t total_hlos = computation.instruction_count();
  int64_t cumulative_total_size = 0;
  for (const HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    Stats& s = stats[inst];
    if (IgnoreInstruction(*inst)) continue;
    const int64_t users = UniqueUserCount(*inst);
    s.extra_users = users == 0 ? 0 : users - 1;
    int64_t size = 0;
    for (int64_t id : buffers.defined.at(inst)) size += buffers.size[id];
    s.total_sizes = size;
    cumulative_total_size += size;
    absl::flat_hash_set<const HloInstruction*> unique_operands(inst->operands().begin(), inst->operands().end());
    for (const HloInstruction* op : unique_operands) {
      const Stats& o = stats[op];
      s.extra_users += o.extra_users;
      s.total_sizes += o.total_sizes;
    }
    s.total_sizes = std::min(s.total_sizes, cumulative_total_size);
    s.extra_users = std::min(s.extra_users, total_hlos);
  }
  auto before = [&](const HloInstruction* a, const HloInstruction* b) {
    const Stats& sa = stats[a];
    const Stats& sb = stats[b];
    if (sa.extra_users != sb.extra_users) return sa.extra_users > sb.extra_users;
    if (sa.total_sizes != sb.total_sizes) return sa.total_sizes > sb.total_sizes;
    return a->name() < b->name();
  };
  // Post-order DFS from the unreachable roots (no users, no control successors; in definition
  // order) and then the root, visiting operands and control predecessors in `before` order.
  std::vector<HloInstruction*> starts;
  for (const auto& inst : computation.instructions())
    if (inst.get() != computation.root_instruction() && inst->users().empty() && inst->control_successors().empty())
      starts.push_back(inst.get());
  if (computation.root_instruction() != nullptr) starts.push_back(computation.root_instruction());
  std::vector<HloInstruction*> sequence;
  absl::flat_hash_map<const HloInstruction*, int> state;  // 1 = expanded, 2 = emitted
  for (HloInstruction* start : starts) {
    std::vector<HloInstruction*> stack = {start};
    while (!stack.empty()) {
      HloInstruction* node = stack.back();
      int& st = state[node];
      if (st == 2) {
        stack.pop_back();
        continue;
      }
      if (st == 1) {
        st = 2;
        sequence.push_back(node);
        stack.pop_back();
        continue;
      }
      st = 1;
      std::vector<HloInstruction*> children(node->operands().begin(), node->operands().end());
      children.insert(children.end(), node->control_predecessors().begin(), node->control_predecessors().end());
      std::sort(children.begin(), children.end(), before);
      children.erase(std::unique(children.begin(), children.end()), children.end());
      for (auto it = children.rbegin(); it != children.rend(); ++it)
        if (state[*it] == 0) stack.push_back(*it);  // an expanded one here would be a cycle
    }
  }
  if (absl::Status s = CheckSequence(computation, sequence); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat("dfs scheduler: ", s.message()));
  return sequence;
}

absl::StatusOr<std::vector<HloInstruction*>> PostOrderSchedule(const HloComputation& computation) {
  std::vector<HloInstruction*> sequence = computation.MakeInstructionPostOrder();
  if (absl::Status s = CheckSequence(computation, sequence); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat("post-order scheduler: ", s.message()));
  return sequence;
}

}  // namespace schedule_internal

using namespace schedule_internal;

absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> ScheduleModule(HloModule& module) {
  std::vector<std::pair<std::string, MemorySchedulerResult>> results;
  MemoryByComputation memory;
  const std::vector<HloComputation*> sequential = SequentialComputations(module);
  const absl::flat_hash_set<const HloComputation*> is_sequential(sequential.begin(), sequential.end());
  for (HloComputation* computation : sequential) {
    absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(*computation);
    if (!buffers.ok()) return buffers.status();
    const bool is_entry = computation == module.entry_computation();
    struct Candidate {
      const char* name;
      absl::StatusOr<std::vector<HloInstruction*>> sequence;
      int64_t peak = 0;
    };
    // XLA's order of preference on equal peaks: list, DFS, post-order.
    Candidate candidates[] = {{"list", ListSchedule(*computation, *buffers, memory)},
                              {"dfs", DfsSchedule(*computation, *buffers)},
                              {"post-order", PostOrderSchedule(*computation)}};
    MemorySchedulerResult result;
    const Candidate* best = nullptr;
    for (Candidate& c : candidates) {
      if (!c.sequence.ok()) return c.sequence.status();
      absl::StatusOr<int64_t> peak = PeakOfSequence(*c.sequence, *buffers, memory, is_entry);
      if (!peak.ok()) return peak.status();
      c.peak = *peak;
      if (best == nullptr || c.peak < best->peak) best = &c;
    }
    result.list_peak_bytes = candidates[0].peak;
    result.dfs_peak_bytes = candidates[1].peak;
    result.post_order_peak_bytes = candidates[2].peak;
    result.algorithm = best->name;
    result.peak_memory_bytes = best->peak;
    if (absl::Status s = computation->SetInstructionOrder(*best->sequence); !s.ok()) return s;
    // Callers account for this computation without its parameters (their operands): its peak
    // was simulated that way, since it is not the entry.
    memory[computation] = best->peak;
    results.push_back({computation->name(), result});
  }
  // Reducers, comparators and other embedded computations are not memory-scheduled, but their
  // order must still be a valid schedule for the verifier.
  for (const auto& c : module.computations()) {
    if (c->IsFusionComputation() || is_sequential.contains(c.get())) continue;
    std::vector<HloInstruction*> order;
    for (const auto& inst : c->instructions()) order.push_back(inst.get());
    if (CheckSequence(*c, order).ok()) continue;
    absl::StatusOr<std::vector<HloInstruction*>> post = PostOrderSchedule(*c);
    if (!post.ok()) return post.status();
    if (absl::Status s = c->SetInstructionOrder(*post); !s.ok()) return s;
  }
  module.set_is_scheduled(true);
  return results;
}

absl::StatusOr<int64_t> PeakMemoryOfCurrentOrder(const HloComputation& computation) {
  MemoryByComputation memory;
  if (const HloModule* module = computation.parent(); module != nullptr) {
    absl::StatusOr<MemoryByComputation> m = CurrentMemoryByComputation(*module);
    if (!m.ok()) return m.status();
    memory = std::move(*m);
  }
  absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(computation);
  if (!buffers.ok()) return buffers.status();
  std::vector<HloInstruction*> order;
  for (const auto& inst : computation.instructions()) order.push_back(inst.get());
  if (absl::Status s = CheckSequence(computation, order); !s.ok()) return s;
  const bool is_entry = computation.parent() == nullptr || computation.parent()->entry_computation() == &computation;
  return PeakOfSequence(order, *buffers, memory, is_entry);
}

}  // namespace hloc
