// A GPU cost model after XLA's GpuPerformanceModel (xla/service/gpu/model/
// gpu_performance_model.cc): a kernel's time is its launch overhead plus the overlap of its
// memory time (bytes read and written over the profile's bandwidth, repeated reads served
// faster from L2 when the operand fits there) and its compute time (the op cost table's
// arithmetic over the profile's peak FLOP/s), both scaled by how much of the GPU the kernel
// occupies (its blocks over the SM count). PriorityFusion ranks producers by
//   time(producer and consumers as separate kernels) - time(producer fused into each consumer).
// Everything is estimated from the graph as it is; nothing is built to ask.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "engine/tuning.h"
#include "ir/instruction.h"

namespace hloc {
struct HardwareProfile;
}

namespace hloc::fusion {

// The facts the model uses; from a profile, or H100-class defaults without one.
struct CostModelHardware {
  std::string name = "default";
  bool is_cpu = false;
  double memory_bandwidth = 3.35e12;  // B/s
  double peak_flops = 67e12;          // f32 FLOP/s (the fused kernels' elementwise math)
  int64_t sm_count = 132;
  int64_t l2_cache_size = 50 << 20;
  int64_t shared_memory_per_block = 48 << 10;
  // The profile's tuning block (engine/tuning.h declares each, with its source).
  double launch_overhead = Tuning().GetReal(TuningKnob::kKernelLaunchOverhead);  // s per kernel
  double l2_cache_speedup = Tuning().GetReal(TuningKnob::kFusionL2CacheSpeedup);
  double memory_compute_overlap = Tuning().GetReal(TuningKnob::kFusionMemoryComputeOverlap);
  double blocks_per_sm_to_saturate = Tuning().GetReal(TuningKnob::kFusionBlocksPerSmToSaturate);
  // Rows the row-reduction emitter gives 1024-thread blocks when their chain re-reads them.
  int64_t row_long_row_elements = Tuning().Get(TuningKnob::kRowReductionLongRowElements);
  // The loop emitter's block size (the occupancy estimate counts blocks of it).
  int64_t threads_per_block = Tuning().Get(TuningKnob::kLoopThreadsPerBlock);
  static CostModelHardware FromProfile(const HardwareProfile* profile);
};

struct KernelEstimate {
  double flops = 0;
  int64_t bytes_read = 0;        // distinct bytes from memory
  int64_t bytes_read_total = 0;  // with re-reads
  int64_t bytes_written = 0;
  double occupancy = 1;          // fraction of the GPU the kernel's blocks fill
  double compute_time = 0, memory_time = 0;
  double exec_time = 0;          // without launch overhead
  bool is_kernel = true;         // false: no kernel (parameter, constant, tuple, bitcast, ...)
  std::string ToString() const;
};

struct FusionRunTimes {
  double time_unfused = 0;  // producer and consumers as separate kernels, launches included
  double time_fused = 0;    // the producer fused into each consumer
  double benefit() const { return time_unfused - time_fused; }
};

class GpuCostModel {
 public:
  explicit GpuCostModel(const HardwareProfile* profile) : hw_(CostModelHardware::FromProfile(profile)) {}
  explicit GpuCostModel(CostModelHardware hw) : hw_(std::move(hw)) {}

  // The node (plain instruction or fusion) run as its own kernel.
  KernelEstimate Estimate(const HloInstruction* node) const;
  // `consumer` with `producer` fused into it (its uses of the producer computed in-kernel).
  KernelEstimate EstimateFused(const HloInstruction* producer, const HloInstruction* consumer) const;
  FusionRunTimes EstimateRunTimes(const HloInstruction* producer, const std::vector<HloInstruction*>& consumers) const;
  // The same sums from each consumer's {Estimate(c).exec_time, EstimateFused(producer, c).exec_time}
  // (PriorityFusion keeps those per pair while neither side changes).
  FusionRunTimes RunTimesFrom(const HloInstruction* producer,
                              const std::vector<std::pair<double, double>>& consumer_exec_times) const;
  // The same with the producer's Estimate given.
  FusionRunTimes RunTimesFrom(const KernelEstimate& producer,
                              const std::vector<std::pair<double, double>>& consumer_exec_times) const;
  // A merged kernel of several nodes (multi-output fusion): reads shared operands once.
  KernelEstimate EstimateMerged(const std::vector<const HloInstruction*>& nodes) const;

  const CostModelHardware& hardware() const { return hw_; }
  // Whether the node launches a kernel or library call at all.
  static bool LaunchesKernel(const HloInstruction* node);

 private:
  struct Operand {
    const HloInstruction* inst;
    double utilization;
  };
  KernelEstimate FromParts(const std::vector<Operand>& operands, const std::vector<const HloInstruction*>& outputs_of,
                           double flops, double parallel_elements) const;

  CostModelHardware hw_;
};

}  // namespace hloc::fusion
