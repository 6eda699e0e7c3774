// How long the latency-hiding scheduler takes an instruction and an async operation to be.
// With a profile that knows its link (hardware link_bandwidth / link_latency) the estimates are
// seconds: a kernel moves its operand and result bytes at the memory bandwidth or does its FLOPs
// at the peak, plus a launch; a collective is a ring over its group (all-reduce 2(k-1) steps of
// B/k bytes, all-gather / reduce-scatter / all-to-all k-1 steps, a permute one step), each step
// the link latency plus its bytes at the link bandwidth (XLA's analytical estimator, simplified).
// Without one they are XLA's ApproximateLatencyEstimator's units: cheap ops 1, kernels 10, every
// async operation `async_latency`.
#pragma once
#include <cstdint>
#include <string>

#include "engine/profile.h"
#include "ir/collective_groups.h"
#include "ir/module.h"

namespace hloc {

class LatencyEstimator {
 public:
  static LatencyEstimator Units(int64_t async_latency);
  static LatencyEstimator FromProfile(const HardwareProfile* profile, int64_t async_latency, DeviceCounts counts);

  bool timed() const { return timed_; }
  // The cost of running `inst` where it stands (0 for what only moves pointers).
  double Cost(const HloInstruction& inst) const;
  // How long the async operation started by `start` takes to finish.
  double AsyncLatency(const HloInstruction& start) const;
  // "us" or "units", and a value in it.
  std::string Unit() const { return timed_ ? "us" : "units"; }
  double InUnit(double v) const { return timed_ ? v * 1e6 : v; }
  // One line: where the numbers come from.
  std::string Describe() const;

 private:
  double KernelSeconds(const HloInstruction& inst) const;
  double CollectiveSeconds(const HloInstruction& collective) const;

  bool timed_ = false;
  int64_t async_latency_ = 50;
  std::string profile_name_;
  double memory_bandwidth_ = 0, peak_flops_ = 0, launch_ = 0, link_bandwidth_ = 0, link_latency_ = 0;
  DeviceCounts counts_;
};

bool IsAsyncStartOpcode(HloOpcode op);
bool IsAsyncDoneOpcode(HloOpcode op);

}  // namespace hloc
