// Collectives over several devices, decided at compile time for the runtime
// (runtime::CollectiveConfig): XLA's group modes resolved to explicit groups of global device ids
// (device = replica * num_partitions + partition), the reduction a to_apply computes, and where
// each participant's piece lies in an operand or result under its layout. The runtime then reads
// no HLO (runtime/ does not include src/).
//
// Who takes part (group modes, device groups, reductions) is ir/collective_groups.h's question.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/collective_groups.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen {

using ::hloc::CollectiveDeviceGroups;
using ::hloc::CollectiveReduction;
using ::hloc::DeviceCounts;
using ::hloc::PermuteDevicePairs;

// The whole config of collective `inst` (all-reduce, all-gather, reduce-scatter, all-to-all,
// collective-permute, collective-broadcast, or an async *-start of one) whose operand leaves and
// result leaves (pairwise, with layouts) are given.
absl::StatusOr<runtime::CollectiveConfig> CollectiveConfigFor(const HloInstruction& inst,
                                                              const std::vector<Shape>& operand_leaves,
                                                              const std::vector<Shape>& result_leaves,
                                                              DeviceCounts counts);

// The index of the results inside a collective's value: {1} for all-gather-start and
// collective-permute-start (whose values are (operands, results, context...)), {} otherwise.
ShapeIndex CollectiveResultIndex(const HloInstruction& inst);

}  // namespace hloc::codegen
