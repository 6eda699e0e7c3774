// What the collective passes ask of a program per device: the value a scalar index expression
// takes on each device, and whether a dynamic-slice takes each device's own chunk of a gathered
// or reduced value (reduce-scatter-creator, all-gather-dynamic-slice-simplifier).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "ir/collective_groups.h"
#include "ir/module.h"

namespace hloc {

// The value of a scalar integer expression on device `device` (constants, partition-id /
// replica-id, reshape / convert / copy / bitcast, add / subtract / multiply, a one-element
// dynamic-slice of a constant rank-1 table), or nullopt.
std::optional<int64_t> ValueOnDevice(const HloInstruction* x, int64_t device, DeviceCounts counts);

// The one dimension of `full` that dynamic-slice `ds` (of a value of shape `full`) cuts into
// group-size chunks, taking on every device the chunk at the device's position in its group
// (and offset 0 in every other dimension); nullopt when it does not.
std::optional<int64_t> OwnChunkDimension(const HloInstruction& ds, const Shape& full,
                                         const std::vector<std::vector<int64_t>>& groups, DeviceCounts counts);

}  // namespace hloc
