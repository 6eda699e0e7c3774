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
#include "schedule/buffer_model.h"
#include "schedule/hlo_scheduling.h"
#include "schedule/schedule_passes.h"

namespace hloc {
namespace {

using O = HloOpcode;
using namespace schedule_internal;

bool IsAsyncStart(O op) {
  switch (op) {
    case O::kAllReduceStart: case O::kAllGatherStart: case O::kCollectivePermuteStart: case O::kCopyStart:
    case O::kAsyncStart:
      return true;
    default:
      return false;
  }
}

bool IsAsyncDone(O op) {
  switch (op) {
    case O::kAllReduceDone: case O::kAllGatherDone: case O::kCollectivePermuteDone: case O::kCopyDone:
    case O::kAsyncDone:
      return true;
    default:
      return false;
  }
}

// Cost units in the spirit of XLA's ApproximateLatencyEstimator: what only moves pointers costs
// nothing, kernels that do real work cost kMedium, the rest kLow.
int64_t Cost(const HloInstruction& inst) {
  constexpr int64_t kLow = 1, kMedium = 10;
  const O op = inst.opcode();
  if (IsAsyncStart(op) || IsAsyncDone(op)) return 0;
  switch (op) {
    case O::kParameter: case O::kConstant: case O::kGetTupleElement: case O::kTuple: case O::kBitcast:
    case O::kAsyncUpdate: case O::kAfterAll: case O::kAddDependency: case O::kDomain: case O::kOptimizationBarrier:
      return 0;
    case O::kFusion: case O::kDot: case O::kConvolution: case O::kCustomCall: case O::kReduce: case O::kSort:
    case O::kScatter: case O::kGather: case O::kReduceWindow: case O::kSelectAndScatter: case O::kFft:
    case O::kTriangularSolve: case O::kCholesky: case O::kWhile: case O::kConditional: case O::kCall:
    case O::kAllReduce: case O::kAllGather: case O::kAllToAll: case O::kReduceScatter:
    case O::kCollectivePermute:
      return kMedium;
    default:
      return kLow;
  }
}

class ComputationLatencyHider {
 public:
  ComputationLatencyHider(HloComputation& computation, int64_t limit, int64_t latency, bool include_parameters,
                          const MemoryByComputation& memory, std::ostream* report)
      : computation_(computation), limit_(limit), latency_(latency), include_parameters_(include_parameters),
        memory_(memory), report_(report) {}

  absl::StatusOr<int64_t> Run() {
    for (const auto& inst : computation_.instructions()) sequence_.push_back(inst.get());
    absl::StatusOr<LogicalBuffers> buffers = ComputeLogicalBuffers(computation_);
    if (!buffers.ok()) return buffers.status();
    buffers_ = std::move(*buffers);
    absl::StatusOr<int64_t> peak = PeakOfSequence(sequence_, buffers_, memory_, include_parameters_);
    if (!peak.ok()) return peak.status();
    // Within the limit; a computation already above it may not get worse.
    allowed_peak_ = limit_ > 0 ? std::max(limit_, *peak) : -1;

    std::vector<std::pair<HloInstruction*, HloInstruction*>> pairs;  // (start, done)
    for (HloInstruction* inst : sequence_) {
      if (!IsAsyncDone(inst->opcode()) || inst->operand_count() == 0) continue;
      HloInstruction* start = inst->operand(0);
      for (int guard = 0; start->opcode() == O::kAsyncUpdate && start->operand_count() > 0 && guard < 1000; ++guard)
        start = start->operand(0);
      if (IsAsyncStart(start->opcode()) && start->parent() == &computation_) pairs.push_back({start, inst});
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
    int64_t covered = 0;
    for (int64_t i = from + 1; i < done_at; ++i) covered += Cost(*sequence_[i]);
    int64_t target = from;
    while (covered < latency_ && target > earliest) {
      --target;
      covered += Cost(*sequence_[target]);
    }
    return MoveWithinLimit(from, target, "start");
  }

  HloComputation& computation_;
  const int64_t limit_;
  const int64_t latency_;
  const bool include_parameters_;
  const MemoryByComputation& memory_;
  std::ostream* report_;
  std::vector<HloInstruction*> sequence_;
  LogicalBuffers buffers_;
  int64_t allowed_peak_ = -1;
};

}  // namespace

absl::StatusOr<int64_t> LatencyHidingSchedulerPass::ScheduleAsync(HloModule& module, int64_t limit,
                                                                  int64_t async_latency, std::ostream* report) {
  if (!module.is_scheduled()) {
    absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> s = ScheduleModule(module);
    if (!s.ok()) return s.status();
  }
  absl::StatusOr<MemoryByComputation> memory = CurrentMemoryByComputation(module);
  if (!memory.ok()) return memory.status();
  int64_t moved = 0;
  for (HloComputation* computation : SequentialComputations(module)) {
    const bool is_entry = computation == module.entry_computation();
    ComputationLatencyHider hider(*computation, limit, async_latency, is_entry, *memory, report);
    absl::StatusOr<int64_t> m = hider.Run();
    if (!m.ok()) return m.status();
    moved += *m;
  }
  module.set_is_scheduled(true);
  return moved;
}

}  // namespace hloc
