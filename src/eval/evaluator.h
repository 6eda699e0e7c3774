// The reference evaluator: runs an HLO module on the host with XLA's semantics. It is the
// oracle every pass and backend is checked against, so it favours clarity over speed.
#pragma once
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace hloc {

class SpmdRendezvous;  // eval/spmd_eval.h

struct EvaluatorOptions {
  // Collectives run as on one device of a group of this many (all-reduce of one copy, ...).
  int64_t replica_count = 1;
  // What replica-id and partition-id return (the evaluator runs as this one device).
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  // Where the devices of a multi-device run meet at collectives (EvaluatePartitioned in
  // eval/spmd_eval.h sets it; the device is replica_id * num_partitions + partition_id). Null:
  // this is the only device and collectives run in groups of one, as described above.
  SpmdRendezvous* rendezvous = nullptr;
  // Guard against runaway loops in bad input: a while loop stops with an error after this many trips.
  int64_t max_loop_iterations = int64_t{1} << 31;
  // Largest value (one instruction's result, tuples summed) the evaluator allocates; a bigger
  // one fails with an error instead of exhausting the host's memory.
  int64_t max_value_bytes = int64_t{4} << 30;
};

// Evaluates the entry computation on `args` (one literal per entry parameter, shapes must
// match ignoring layout). Errors name the instruction that could not be evaluated.
absl::StatusOr<Literal> EvaluateModule(const HloModule& module, absl::Span<const Literal> args,
                                       const EvaluatorOptions& options = {});

// Evaluates one computation (used for called computations and by constant folding).
absl::StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                            absl::Span<const Literal* const> args,
                                            const EvaluatorOptions& options = {});

}  // namespace hloc
