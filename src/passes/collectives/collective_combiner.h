// all-reduce-combiner, all-gather-combiner, reduce-scatter-combiner (XLA's AllReduceCombiner,
// AllGatherCombiner, ReduceScatterCombiner): independent collectives of one kind over the same
// device groups (and the same reduction, and for all-gather / reduce-scatter the same dimension)
// become one variadic collective whose tuple result feeds get-tuple-elements. One NCCL call for
// many small gradients pays the link latency once: a data-parallel step all-reduces every
// parameter's gradient.
//
// Walks each computation in post order and keeps one open group per key; a collective joins its
// key's group unless it depends on a member (then the group closes: combining would make a
// cycle), or the group would pass the byte threshold (result bytes) or the count threshold
// (tuning: *_combine_threshold_bytes, collective_combine_threshold_count). Collectives with a
// constrain_layout, control edges or a tuple result stay as they are.
#pragma once
#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

struct CombineLimits {
  int64_t threshold_bytes = 30 << 20;
  int64_t threshold_count = 256;
};

// op is kAllReduce, kAllGather or kReduceScatter.
absl::StatusOr<bool> CombineCollectives(HloModule& module, HloOpcode op, CombineLimits limits);

}  // namespace hloc
