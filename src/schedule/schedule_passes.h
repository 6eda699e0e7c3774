// The scheduling passes, under XLA's names (registered by src/schedule/register_schedule.cc):
//   hlo-memory-scheduler      HloMemoryScheduler with XLA's DefaultMemoryScheduler
//   hlo-rematerialization     HloRematerialization (simplified: cheap values recomputed near
//                             their later uses until the peak fits the memory limit)
//   latency-hiding-scheduler  LatencyHidingScheduler (simplified: async starts early, dones late)
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "engine/pass.h"
#include "ir/module.h"
#include "schedule/latency_estimator.h"

namespace hloc {

// hlo-memory-scheduler, hlo-rematerialization, latency-hiding-scheduler under XLA's names
// (src/schedule/register_schedule.cc; called by RegisterAllPasses).
void RegisterSchedulePasses(PassRegistry& registry);

class HloMemorySchedulerPass : public HloPass {
 public:
  static constexpr const char* kName = "hlo-memory-scheduler";
  explicit HloMemorySchedulerPass(bool report) : report_(report) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool report_;
};

struct RematerializationOptions {
  // Peak bytes to get under; <0: the profile's memory_size (no limit without a profile); 0: no
  // limit (the pass only schedules).
  int64_t memory_limit_bytes = -1;
  // Most instructions recomputed together for one use (a chain such as broadcast -> multiply).
  int64_t max_chain_length = 3;
  bool report = false;
};

struct RematerializationStats {
  int64_t peak_before = 0, peak_after = 0, limit = 0;
  int64_t rematerialized = 0;  // clones added
  int64_t removed = 0;         // originals left without users and removed
};

class HloRematerializationPass : public HloPass {
 public:
  static constexpr const char* kName = "hlo-rematerialization";
  explicit HloRematerializationPass(RematerializationOptions options) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
  // The work without a pass context: `limit` in bytes (> 0). Schedules the module first when it
  // is not scheduled.
  static absl::StatusOr<RematerializationStats> Rematerialize(HloModule& module, int64_t limit,
                                                              int64_t max_chain_length = 3);

 private:
  RematerializationOptions options_;
};

struct LatencyHidingOptions {
  // Peak bytes the moves may not push the computation above; <0: the profile's memory_size (no
  // limit without one); 0: no limit.
  int64_t memory_limit_bytes = -1;
  // Without a profile that knows its link (schedule/latency_estimator.h): the cost units an
  // async operation takes to finish; other instructions cost 1 (cheap elementwise/data movement)
  // or 10 (fusions, dots, convolutions, custom calls) as XLA's ApproximateLatencyEstimator's
  // low/medium/high classes.
  int64_t async_latency = 50;
  bool report = false;
};

class LatencyHidingSchedulerPass : public HloPass {
 public:
  static constexpr const char* kName = "latency-hiding-scheduler";
  explicit LatencyHidingSchedulerPass(LatencyHidingOptions options) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
  // Returns how many async start/done instructions moved. Schedules the module first when it is
  // not scheduled. `limit` <= 0: none.
  static absl::StatusOr<int64_t> ScheduleAsync(HloModule& module, int64_t limit, int64_t async_latency,
                                               std::ostream* report = nullptr);
  // With the estimates of `estimator`; `schedule`, when given, receives the schedule of every
  // computation with async operations and what each overlaps (the --dump-to file).
  static absl::StatusOr<int64_t> ScheduleAsync(HloModule& module, int64_t limit, const LatencyEstimator& estimator,
                                               std::ostream* report, std::string* schedule);

 private:
  LatencyHidingOptions options_;
};

// One line per sequential computation: the chosen memory scheduler and the peaks, for the
// benchmark table (what hlo-memory-scheduler prints with report=true).
absl::StatusOr<std::string> ScheduleReport(HloModule& module);

}  // namespace hloc
