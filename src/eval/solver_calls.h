// The reference evaluator's solver calls (cuSOLVER/cuBLAS) (the call's vocabulary, targets and backend_config, is
// ir/custom_calls/solver_calls.h, shared with the passes and codegen).
#pragma once
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/custom_calls/solver_calls.h"
#include "ir/literal.h"

namespace hloc {

// Evaluates a solver custom call (LAPACK's semantics, arithmetic in double or complex<double>,
// each result element rounded once).
absl::StatusOr<Literal> EvalSolverCall(const HloInstruction& inst, absl::Span<const Literal* const> operands);

}  // namespace hloc
