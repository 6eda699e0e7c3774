// The one reshard routine (XLA's PartitionedHlo::Reshard): the per-device value of an array
// with sharding `from` becomes its value under sharding `to`, trying in order
//   1. nothing to do (the same tiles on every device, or `to`'s tile is a local slice),
//   2. collective-permute (the same tiling, the tiles on other devices),
//   3. all-to-all (one dimension's split moves to another dimension),
//   4. all-gather of the dimensions that differ, then a local dynamic-slice;
// where step 4 gathers every split dimension only to split again, it is XLA's "involuntary
// full rematerialization" and the caller is told. Strategies 2 and 3 are records of
// rules/spmd/Reshard.td; a pipeline can switch them off by name.
#pragma once
#include <string>

#include "absl/status/statusor.h"
#include "ir/sharding.h"
#include "passes/spmd/spmd_builder.h"

namespace hloc::spmd {

struct ReshardStrategies {
  bool collective_permute = true;  // ReshardByCollectivePermute
  bool all_to_all = true;          // ReshardByAllToAll
};

struct ReshardResult {
  HloInstruction* value = nullptr;
  bool full_rematerialization = false;
};

// Bytes one device sends to reshard an array of `shape` from `from` to `to` (both normalized,
// not tuples), with the strategies allowed.
double ReshardCost(const Shape& shape, const HloSharding& from, const HloSharding& to, int64_t num_devices,
                   const ReshardStrategies& strategies);

absl::StatusOr<ReshardResult> Reshard(SpmdBuilder& b, HloInstruction* x, const Shape& shape, const HloSharding& from,
                                      const HloSharding& to, const ReshardStrategies& strategies);

}  // namespace hloc::spmd
