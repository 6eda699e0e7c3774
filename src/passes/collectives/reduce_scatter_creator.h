// reduce-scatter-creator (XLA's ReduceScatterCreator): an all-reduce whose result each device
// only slices, taking the chunk of one dimension at its own position in the all-reduce's group,
// is a reduce-scatter: each device receives only its chunk of the sum, (k-1)/k of the bytes of
// the all-reduce's ring. The SPMD partitioner emits the pattern when a partial sum (a dot over
// a split contraction) is resharded to a split result.
//
// The slice offsets are checked per device: the start index of the sliced dimension is
// evaluated for every device id (constants, partition-id / replica-id, lookups in constant
// tables, reshape / convert / add / subtract / multiply), and must equal the device's position
// in its group times the chunk; every other start index must be 0 on every device.
#pragma once
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

absl::StatusOr<bool> CreateReduceScatters(HloModule& module);

}  // namespace hloc
