// sharding-propagation (XLA's ShardingPropagation): gives every instruction of the
// computations the entry reaches through while, conditional and call a normalized sharding
// (ir/sharding_util.h), written into its `sharding` attribute, so spmd-partitioning only reads.
//
// Annotated instructions (parameters, Sharding custom calls, shard_map boundaries) keep what
// they say. The others take, to a fixed point, the most specific sharding the per-op rules
// (sharding_rules.h) derive: first from operands only (XLA's forward-first order, so a
// user's wish does not override what the data already has), then also from users. A while's
// operand, result, body parameter, body root and condition parameter share one sharding; a
// conditional's branch parameters follow their operands and its result the branch roots; a
// call's parameters and result likewise. Anything still without one is replicated; the entry
// result's leaves are replicated where allow_spmd_sharding_propagation_to_output says false.
#pragma once
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/spmd/sharding_rules.h"

namespace hloc::spmd {

// The computations a partitioned program runs per device: the entry and what it reaches
// through while, conditional and call (not reduce/sort/scatter appliers, not fusions).
std::vector<HloComputation*> PartitionedComputations(const HloModule& module);

// Runs the propagation; returns whether any sharding attribute changed.
absl::StatusOr<bool> PropagateShardings(HloModule& module, const RuleOptions& options = {});

}  // namespace hloc::spmd
