// The collective simplifiers of XLA's collective-optimizations, under XLA's names:
//   all-reduce-simp (AllReduceSimplifier): an all-reduce whose groups each hold one device is its
//     operand; one whose operand is already the same on every device of its group (replication:
//     constants, iotas and what is computed only from them or from collectives over covering
//     groups) is computed locally: add -> operand * group size, min / max / and / or -> operand.
//   all-gather-simp (AllGatherSimplifier): an all-gather over one-device groups (result shape ==
//     operand shape) is its operand.
//   all-gather-dynamic-slice-simplifier: a dynamic-slice that takes, on every device, the
//     device's own chunk of an all-gather along its gather dimension is the all-gather's operand
//     (the partitioner's all-gather + dynamic-slice reshard between equal shardings).
#pragma once
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

absl::StatusOr<bool> SimplifyAllReduces(HloModule& module);
absl::StatusOr<bool> SimplifyAllGathers(HloModule& module);
absl::StatusOr<bool> SimplifyAllGatherDynamicSlices(HloModule& module);

}  // namespace hloc
