// Scheduling: the order in which each non-fused computation's instructions run. A scheduled
// module (HloModule::is_scheduled) keeps its schedule as each computation's instruction order
// (HloComputation::SetInstructionOrder), which is what XLA prints for a scheduled module and what
// the verifier checks. Passes (registered in src/schedule/register_schedule.cc, XLA's names):
//   hlo-memory-scheduler     list, DFS and post-order schedulers; keeps the one whose heap-simulated
//                            peak memory is least (XLA's DefaultMemoryScheduler)
//   hlo-rematerialization    recomputes cheap values to get under a memory limit (option
//                            memory_limit_bytes; default: the profile's memory_size)
//   latency-hiding-scheduler moves async starts early and dones late (collectives, copies) within
//                            the memory limit
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

// Bytes a value of `shape` occupies (tuples: the pointer table, 8 bytes per element).
int64_t ShapeSizeBytes(const Shape& shape);

struct MemorySchedulerResult {
  std::string algorithm;         // "list", "dfs" or "post-order"
  int64_t peak_memory_bytes = 0;
  // Each scheduler's peak (the chosen one is the least; ties prefer list, then DFS). Entry
  // computations count their parameters; called computations do not (they are the caller's).
  int64_t list_peak_bytes = 0, dfs_peak_bytes = 0, post_order_peak_bytes = 0;
};

// Schedules every non-fused computation of `module` in place and sets is_scheduled. Returns, per
// computation name, which scheduler won and its peak.
absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> ScheduleModule(HloModule& module);

// Peak bytes of the computation run in its current instruction order (heap-simulated; values
// that alias their operand — bitcast, get-tuple-element, tuple — add nothing).
absl::StatusOr<int64_t> PeakMemoryOfCurrentOrder(const HloComputation& computation);

}  // namespace hloc
