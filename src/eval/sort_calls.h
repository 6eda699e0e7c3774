// The reference evaluator's radix-sort call (the call's vocabulary, targets and backend_config, is
// ir/custom_calls/sort_calls.h, shared with the passes and codegen).
#pragma once
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/custom_calls/sort_calls.h"
#include "ir/literal.h"

namespace hloc {

// Evaluates the call: a stable sort of each row of (key, value) pairs by the keys' low key_bits.
absl::StatusOr<Literal> EvalRadixSortCall(const HloInstruction& inst, absl::Span<const Literal* const> operands);

}  // namespace hloc
