// Dense linear algebra as library thunks (runtime/executable/linalg_config.h), for both
// backends: XLA's cholesky and triangular-solve ops, and the solver custom calls JAX and XLA
// emit (cusolver_potrf_ffi, cusolver_getrf_ffi, lapack_*_ffi, __cublas$triangularSolve, and
// JAX's QR, eigh, SVD and pivots-to-permutation calls; ir/custom_calls/solver_calls.h). The CPU runtime runs the thunk with LAPACK, the GPU runtime with
// cuSOLVER / cuBLAS; the compiler only records what to compute and where.
#pragma once
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/thunk_emitter.h"

namespace hloc::codegen {

// Whether `hlo` is one of the ops LinalgThunk takes.
bool IsLinalgOp(const HloInstruction& hlo);

// The kCustomCall thunk for `hlo` over `arguments` (operands then results, as the thunk emitter
// lists them); nullopt when `hlo` is not a linear-algebra op. Errors name what does not fit.
absl::StatusOr<std::optional<runtime::Thunk>> LinalgThunk(const HloInstruction& hlo,
                                                          const std::vector<KernelArgument>& arguments);

}  // namespace hloc::codegen
