// latency-hiding-scheduler: XLA's LatencyHidingScheduler, simplified. The memory scheduler's
// order stays as it is except for async pairs (all-reduce-start/done, all-gather-start/done,
// collective-permute-start/done, copy-start/done, async-start/done; send/recv stay where they
// are, since their order across channels is the program's): each done moves as late as its first user allows, then each start moves
// early enough that the work between it and its done covers the operation's estimated latency
// (no earlier, so its buffers are not held longer than needed), never above its operands. A move
// that would push the computation's heap-simulated peak over the memory limit is shortened.
#include <algorithm>
#include <ostream>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "schedule/buffer_model.h"
#include "schedule/latency_estimator.h"
#include "schedule/hlo_scheduling.h"
#include "schedule/schedule_passes.h"

namespace hloc {
namespace {

using O = HloOpcode;
using namespace schedule_internal;

class ComputationLatencyHider {
 public:
  ComputationLatencyHider(HloComputation& computation, int64_t limit, const LatencyEstimator& estimator,
                          bool include_parameters, const MemoryByComputation& memory, std::ostream* report)
      : computation_(computation), limit_(limit), estimator_(estimator), include_parameters_(include_parameters),
        memory_(memory), report_(report) {}

  // The (start, done) pairs of the computation in schedule order.
  const std::vector<std::pair<HloInstruction*, HloInstruction*>>& pairs() const { return pairs_; }

  absl::StatusOr<int64_t> Run() {
    for (const auto& inst : computation_.instructions()) sequence_.push_back(inst.get());
    absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(computation_);
    if (!buffers.ok()) return buffers.status();
    buffers_ = std::move(*buffers);
    absl::StatusOr<int64_t> peak = PeakOfSequence(sequence_, buffers_, memory_, include_parameters_);
    if (!peak.ok()) return peak.status();
    // Within the limit; a computation already above it may not get worse.
    allowed_peak_ = limit_ > 0 ? std::max(limit_, *peak) : -1;

    std::vector<std::pair<HloInstruction*, HloInstruction*>>& pairs = pairs_;  // (start, done)
    for (HloInstruction* inst : sequence_) {
      if (!IsAsyncDoneOpcode(inst->opcode()) || inst->operand_count() == 0) continue;
      HloInstruction* start = inst->operand(0);
      for (int guard = 0; start->opcode() == O::kAsyncUpdate && start->operand_count() > 0 && guard < 1000; ++guard)
        start = start->operand(0);
      if (IsAsyncStartOpcode(start->opcode()) && start->parent() == &computation_) pairs.push_back({start, inst});
    }
    if (pairs.empty()) return 0;
    int64_t moved = 0;
    // Dones late, the last one first so earlier dones see the final positions of later ones.
    for (auto it = pairs.rbegin(); it != pairs.rend(); ++it) {
      absl::StatusOr<bool> m = SinkDone(it->second);
      if (!m.ok()) return m.status();
      moved += *m;
    }
    for (const auto& [start, done] : pairs) {
      absl::StatusOr<bool> m = HoistStart(start, done);
      if (!m.ok()) return m.status();
      moved += *m;
    }
    // Moving starts and dones alone cannot cover a collective whose operand is computed just
    // before it and whose result is used just after (a gradient all-reduce): independent work
    // is moved into the window instead, as XLA's list scheduler would place it.
    for (const auto& [start, done] : pairs) {
      absl::StatusOr<bool> m = PullIndependentWork(start, done);
      if (!m.ok()) return m.status();
      moved += *m;
    }
    if (absl::Status s = CheckSequence(computation_, sequence_); !s.ok()) return s;
    if (absl::Status s = computation_.SetInstructionOrder(sequence_); !s.ok()) return s;
    return moved;
  }

 private:
  int64_t Position(const HloInstruction* inst) const {
    return std::find(sequence_.begin(), sequence_.end(), inst) - sequence_.begin();
  }

  // The sequence with the instruction at `from` moved to index `to` (in the result).
  std::vector<HloInstruction*> Moved(int64_t from, int64_t to) const {
    std::vector<HloInstruction*> s = sequence_;
    HloInstruction* inst = s[from];
    s.erase(s.begin() + from);
    s.insert(s.begin() + to, inst);
    return s;
  }

  absl::StatusOr<bool> FitsMemory(const std::vector<HloInstruction*>& s) const {
    if (allowed_peak_ < 0) return true;
    absl::StatusOr<int64_t> peak = PeakOfSequence(s, buffers_, memory_, include_parameters_);
    if (!peak.ok()) return peak.status();
    return *peak <= allowed_peak_;
  }

  // Moves sequence_[from] to `target`, or as close to it as memory allows (binary search on the
  // distance from `from`). Returns whether it moved.
  absl::StatusOr<bool> MoveWithinLimit(int64_t from, int64_t target, const char* what) {
    if (target == from) return false;
    int64_t lo = 0, hi = std::abs(target - from);  // lo: known to fit (0 = no move)
    const int64_t dir = target > from ? 1 : -1;
    absl::StatusOr<bool> fits = FitsMemory(Moved(from, target));
    if (!fits.ok()) return fits.status();
    if (!*fits) {
      while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        absl::StatusOr<bool> f = FitsMemory(Moved(from, from + dir * mid));
        if (!f.ok()) return f.status();
        (*f ? lo : hi) = mid;
      }
      hi = lo;
    }
    if (hi == 0) return false;
    const int64_t to = from + dir * hi;
    if (report_ != nullptr) {
      *report_ << "latency-hiding-scheduler: computation=" << computation_.name() << " moved " << what << " "
               << sequence_[from]->name() << " from " << from << " to " << to
               << (to != target ? " (memory limit)" : "") << "\n";
    }
    sequence_ = Moved(from, to);
    return true;
  }

  absl::StatusOr<bool> SinkDone(HloInstruction* done) {
    const int64_t from = Position(done);
    int64_t first_user = static_cast<int64_t>(sequence_.size());
    for (const HloInstruction* u : done->users()) first_user = std::min(first_user, Position(u));
    for (const HloInstruction* u : done->control_successors()) first_user = std::min(first_user, Position(u));
    // After removing `done` from `from`, index first_user - 1 is just before its first user.
    return MoveWithinLimit(from, first_user - 1, "done");
  }

  absl::StatusOr<bool> HoistStart(HloInstruction* start, HloInstruction* done) {
    const int64_t from = Position(start);
    const int64_t done_at = Position(done);
    int64_t earliest = 0;
    for (const HloInstruction* op : start->operands()) earliest = std::max(earliest, Position(op) + 1);
    for (const HloInstruction* p : start->control_predecessors()) earliest = std::max(earliest, Position(p) + 1);
    double covered = 0;
    for (int64_t i = from + 1; i < done_at; ++i) covered += estimator_.Cost(*sequence_[i]);
    const double latency = estimator_.AsyncLatency(*start);
    int64_t target = from;
    while (covered < latency && target > earliest) {
      --target;
      covered += estimator_.Cost(*sequence_[target]);
    }
    return MoveWithinLimit(from, target, "start");
  }

  double Covered(int64_t from, int64_t to) const {
    double covered = 0;
    for (int64_t i = from + 1; i < to; ++i) covered += estimator_.Cost(*sequence_[i]);
    return covered;
  }

  static bool IsAsyncOp(const HloInstruction* x) {
    return IsAsyncStartOpcode(x->opcode()) || IsAsyncDoneOpcode(x->opcode()) || x->opcode() == O::kAsyncUpdate;
  }

  // Work after `done` that does not depend on it moves before it, then work before `start`
  // that it does not depend on moves after it, until the window covers the estimated latency.
  // Other async operations stay (and so does what they order). Kept only within the memory limit.
  absl::StatusOr<bool> PullIndependentWork(HloInstruction* start, HloInstruction* done) {
    const double latency = estimator_.AsyncLatency(*start);
    double covered = Covered(Position(start), Position(done));
    if (covered >= latency) return false;
    std::vector<HloInstruction*> s = sequence_;
    // After the done: an instruction stays when it (transitively) uses the done or a staying one.
    absl::flat_hash_set<const HloInstruction*> stays = {done};
    std::vector<HloInstruction*> pulled, kept;
    const int64_t d = Position(done);
    bool crossed = false;
    for (int64_t j = d + 1; j < static_cast<int64_t>(s.size()); ++j) {
      HloInstruction* x = s[j];
      // Past another async operation, work stays: it may be that operation's window.
      bool stay = IsAsyncOp(x) || covered >= latency || crossed;
      crossed = crossed || IsAsyncOp(x);
      for (const HloInstruction* op : x->operands()) stay = stay || stays.contains(op);
      for (const HloInstruction* p : x->control_predecessors()) stay = stay || stays.contains(p);
      (stay ? kept : pulled).push_back(x);
      if (stay) stays.insert(x);
      else covered += estimator_.Cost(*x);
    }
    std::vector<HloInstruction*> next(s.begin(), s.begin() + d);
    next.insert(next.end(), pulled.begin(), pulled.end());
    next.push_back(done);
    next.insert(next.end(), kept.begin(), kept.end());
    // Before the start: an instruction stays when the start or a staying one (transitively) uses it.
    const int64_t st = std::find(next.begin(), next.end(), start) - next.begin();
    absl::flat_hash_set<const HloInstruction*> needed = {start};
    std::vector<HloInstruction*> after;  // in reverse order of discovery
    std::vector<HloInstruction*> before;
    bool crossed_async = false;
    for (int64_t i = st - 1; i >= 0; --i) {
      HloInstruction* x = next[i];
      bool stay = IsAsyncOp(x) || covered >= latency || x->opcode() == O::kParameter || crossed_async;
      crossed_async = crossed_async || IsAsyncOp(x);
      for (const HloInstruction* u : x->users()) stay = stay || needed.contains(u);
      for (const HloInstruction* c : x->control_successors()) stay = stay || needed.contains(c);
      if (stay) {
        needed.insert(x);
        before.push_back(x);
      } else {
        after.push_back(x);
        covered += estimator_.Cost(*x);
      }
    }
    std::vector<HloInstruction*> result(before.rbegin(), before.rend());
    result.push_back(start);
    result.insert(result.end(), after.rbegin(), after.rend());
    result.insert(result.end(), next.begin() + st + 1, next.end());
    if (pulled.empty() && after.empty()) return false;
    absl::StatusOr<bool> fits = FitsMemory(result);
    if (!fits.ok()) return fits.status();
    if (!*fits) return false;
    if (report_ != nullptr) {
      *report_ << "latency-hiding-scheduler: computation=" << computation_.name() << " moved " << pulled.size() + after.size()
               << " independent instructions between " << start->name() << " and " << done->name() << "\n";
    }
    sequence_ = std::move(result);
    return true;
  }

  HloComputation& computation_;
  const int64_t limit_;
  const LatencyEstimator& estimator_;
  const bool include_parameters_;
  const MemoryByComputation& memory_;
  std::ostream* report_;
  std::vector<HloInstruction*> sequence_;
  LogicalBuffers buffers_;
  int64_t allowed_peak_ = -1;
  std::vector<std::pair<HloInstruction*, HloInstruction*>> pairs_;
};

// The computation's schedule with each async operation's span: what runs between its start and
// its done, and how much of its estimated time that covers (XLA's latency-hiding-scheduler
// dump, in text).
std::string ScheduleText(const HloComputation& computation, const std::vector<std::pair<HloInstruction*, HloInstruction*>>& pairs,
                         const LatencyEstimator& estimator) {
  const std::vector<std::unique_ptr<HloInstruction>>& order = computation.instructions();
  absl::flat_hash_map<const HloInstruction*, int64_t> at;
  for (size_t i = 0; i < order.size(); ++i) at[order[i].get()] = static_cast<int64_t>(i);
  std::string out = absl::StrCat("computation %", computation.name(), "\n");
  for (size_t i = 0; i < order.size(); ++i) {
    const HloInstruction& inst = *order[i];
    std::string note;
    if (IsAsyncStartOpcode(inst.opcode()))
      note = absl::StrFormat("  [async start: estimated %.3f %s]", estimator.InUnit(estimator.AsyncLatency(inst)),
                             estimator.Unit());
    absl::StrAppend(&out, absl::StrFormat("  %5d  %-40s %-24s %10.3f%s\n", i, "%" + inst.name(),
                                          std::string(HloOpcodeString(inst.opcode())),
                                          estimator.InUnit(estimator.Cost(inst)), note));
  }
  for (const auto& [start, done] : pairs) {
    const int64_t from = at[start], to = at[done];
    double covered = 0;
    std::vector<std::string> overlapped;
    for (int64_t i = from + 1; i < to; ++i) {
      const double c = estimator.Cost(*order[i]);
      covered += c;
      if (c > 0) overlapped.push_back("%" + order[i]->name());
    }
    const double latency = estimator.AsyncLatency(*start);
    const double hidden = latency > 0 ? std::min(1.0, covered / latency) : 1.0;
    absl::StrAppend(&out, absl::StrFormat("  overlap %%%s (%d) .. %%%s (%d): async %.3f %s, compute between %.3f %s "
                                          "(%.0f%% hidden): %s\n",
                                          start->name(), from, done->name(), to, estimator.InUnit(latency),
                                          estimator.Unit(), estimator.InUnit(covered), estimator.Unit(),
                                          100.0 * hidden, overlapped.empty() ? "nothing" : absl::StrJoin(overlapped, ", ")));
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> LatencyHidingSchedulerPass::ScheduleAsync(HloModule& module, int64_t limit,
                                                                  int64_t async_latency, std::ostream* report) {
  return ScheduleAsync(module, limit, LatencyEstimator::Units(async_latency), report, nullptr);
}

absl::StatusOr<int64_t> LatencyHidingSchedulerPass::ScheduleAsync(HloModule& module, int64_t limit,
                                                                  const LatencyEstimator& estimator,
                                                                  std::ostream* report, std::string* schedule) {
  if (!module.is_scheduled()) {
    absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> s = ScheduleModule(module);
    if (!s.ok()) return s.status();
  }
  absl::StatusOr<MemoryByComputation> memory = CurrentMemoryByComputation(module);
  if (!memory.ok()) return memory.status();
  if (schedule != nullptr)
    *schedule = absl::StrCat("# latency-hiding-scheduler: module ", module.name(), "; estimates in ",
                             estimator.Unit(), " (", estimator.Describe(), ")\n");
  int64_t moved = 0;
  for (HloComputation* computation : SequentialComputations(module)) {
    const bool is_entry = computation == module.entry_computation();
    ComputationLatencyHider hider(*computation, limit, estimator, is_entry, *memory, report);
    absl::StatusOr<int64_t> m = hider.Run();
    if (!m.ok()) return m.status();
    moved += *m;
    if (schedule != nullptr && !hider.pairs().empty())
      absl::StrAppend(schedule, ScheduleText(*computation, hider.pairs(), estimator));
  }
  module.set_is_scheduled(true);
  return moved;
}

}  // namespace hloc
