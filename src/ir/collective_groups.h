// Who takes part in a collective: XLA's group modes resolved to explicit groups of global device
// ids (device = replica * num_partitions + partition), and the reduction its to_apply computes.
// Decided once here for every stage that asks (the collective passes, the thunk emitter).
//
// Group modes (XLA's GetCollectiveOpGroupMode; src/ir/shape_inference_collective.cc checks the
// same): no channel_id -> cross-replica (ids are replica ids, one group per partition);
// channel_id on all-to-all / collective-permute / collective-broadcast -> cross-partition (ids are
// partition ids, one group per replica); channel_id on all-reduce / all-gather / reduce-scatter
// (which carry use_global_device_ids) -> cross-replica-and-partition when it is false (replica ids;
// a group holds every partition of its replicas), flattened ids when true. Empty replica groups
// mean all replicas / all partitions (flattened ids require groups).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

struct DeviceCounts {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  int64_t num_devices() const { return replica_count * num_partitions; }
};
// The module's counts (each at least 1).
DeviceCounts DeviceCountsOf(const HloModule& module);

// The participants of collective `inst` as groups of global device ids, in the order pieces are
// concatenated and reductions applied. Every device is in exactly one group (collective-permute:
// the devices that may exchange data, one group per replica or per partition).
absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveDeviceGroups(const HloInstruction& inst,
                                                                         DeviceCounts counts);

// collective-permute's source_target_pairs as global device ids, for every replica (cross-partition)
// or partition (cross-replica).
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermuteDevicePairs(const HloInstruction& inst,
                                                                             DeviceCounts counts);

// The reduction `to_apply` computes ("add", "mul", "min", "max", "and", "or", "xor"): a binary op
// of its two parameters. Anything else is an Unimplemented error naming `inst`.
absl::StatusOr<std::string> CollectiveReduction(const HloInstruction& inst);

// Whether `inst` is the in-place collective-permute form (slice_sizes={...}): operands (input,
// output, input offsets, output offsets), result the output's shape. The offsets are tuples,
// which also tells hand-built ones apart from a 4-operand combined permute.
bool IsInPlacePermute(const HloInstruction& inst);

}  // namespace hloc
