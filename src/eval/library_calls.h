// The reference evaluator's cuBLAS/cuDNN library calls (the call's vocabulary, targets and backend_config, is
// ir/custom_calls/library_calls.h, shared with the passes and codegen).
#pragma once
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/custom_calls/library_calls.h"
#include "ir/literal.h"

namespace hloc {

// Evaluates a library call with the library's semantics, products accumulated in double (or
// wrapping 64-bit integers, or complex<double>) and each output element rounded once:
//  - GEMM: D = epilogue(alpha * dot(A, B) + beta * C [+ bias]); the result is D, a tuple of D
//    (and the pre-activation aux output of the *_AUX epilogues), and a zero workspace.
//  - cuDNN convolutions: forward, backward-input and backward-filter of the forward convolution
//    the window/dim_labels describe; conv-bias-activation computes
//    activation(conv_result_scale * conv + side_input_scale * side_input + bias).
// The result is the custom-call's shape (its scratch/workspace elements zero-filled).
absl::StatusOr<Literal> EvalLibraryCall(const HloInstruction& inst, absl::Span<const Literal* const> operands);

}  // namespace hloc
