// The boundary between global arrays and per-device shards (`hloc eval`, `hloc run`, tests): a
// module for num_partitions > 1 that is not yet a per-device program is partitioned
// (sharding-propagation, spmd-partitioning), global inputs are cut into each device's shards
// by the entry parameters' shardings, and the devices' outputs are joined by the result's
// sharding, so the user sees the same global arrays as from one device.
#pragma once
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/sharding.h"

namespace hloc::spmd {

struct SpmdLayout {
  int64_t num_partitions = 1;
  int64_t replica_count = 1;
  std::vector<Shape> global_params;   // what the user's inputs are
  std::vector<HloSharding> params;    // normalized, one per entry parameter
  Shape global_result;
  HloSharding result;                 // normalized (a tuple sharding for a tuple result)
  bool global_known = false;          // the global shapes were recorded before partitioning
  int64_t num_devices() const { return num_partitions * replica_count; }
};

// Whether the module runs on more than one device.
bool IsMultiDevice(const HloModule& module);

// The global shapes and shardings of the entry's parameters and result, recorded before
// partitioning (`partition`: runs the SPMD passes when the module is not per-device yet) or,
// for a per-device module, read from its recorded shardings (global dims = local dims x tiles).
absl::StatusOr<SpmdLayout> PrepareSpmd(HloModule& module, bool partition);

// The same in two steps, for callers whose compiler partitions in its pipeline: BeginSpmd on
// the module as given (it records the global shapes unless the module is per-device already),
// FinishSpmd on the module once compiled.
SpmdLayout BeginSpmd(const HloModule& module);
absl::Status FinishSpmd(SpmdLayout& layout, const HloModule& partitioned);

// args[d] = device d's shard of each global input (device d = replica * num_partitions + partition).
absl::StatusOr<std::vector<std::vector<Literal>>> SplitInputs(const SpmdLayout& layout,
                                                              const std::vector<Literal>& global);
// The global result from every device's result (replica 0's partitions).
absl::StatusOr<Literal> JoinOutputs(const SpmdLayout& layout, const std::vector<Literal>& per_device);

}  // namespace hloc::spmd
