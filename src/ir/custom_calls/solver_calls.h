// Dense linear-algebra custom calls as JAX and XLA emit them:
//  - Cholesky: "cusolver_potrf_ffi" (JAX on GPU, backend_config={lower = true}) and
//    "lapack_{s,d,c,z}potrf_ffi" (JAX on CPU, backend_config={uplo = 76 : ui8}, 'L' or 'U');
//    one operand a[..., n, n]; results (factor, info s32[...]). The factor is LAPACK's: the
//    chosen triangle holds L (A = L L^H) or U (A = U^H U), the other triangle keeps a's values;
//    info = k > 0 when the leading minor of order k is not positive definite (the factor is
//    then partial; JAX replaces it with NaN).
//  - LU: "cusolver_getrf_ffi" and "lapack_{s,d,c,z}getrf_ffi", no attributes; a[..., m, n];
//    results (lu, pivots s32[..., min(m, n)] 1-based as LAPACK's ipiv, info s32[...]); info = i
//    when U(i, i) is exactly zero (the factorization still completes).
//  - Triangular solve: XLA:GPU's "__cublas$triangularSolve" (JSON backend_config with
//    left_side/lower/transpose_a/unit_diagonal; results (x, workspace)) and JAX's CPU
//    "lapack_{s,d,c,z}trsm_ffi" (operands a, b, alpha; attrs side/uplo/trans_x/diag as chars).
// JAX asks for column-major matrices (operand_layout_constraints {..., n-2, n-1, batch...});
// the evaluator works on logical indices, so layouts do not change what it computes.
// Codegen (CPU LAPACK thunks, GPU cuSOLVER/cuBLAS thunks) reads the same description.
#pragma once
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace hloc {

inline constexpr std::string_view kCusolverPotrfCallTarget = "cusolver_potrf_ffi";
inline constexpr std::string_view kCusolverGetrfCallTarget = "cusolver_getrf_ffi";
inline constexpr std::string_view kTriangularSolveCallTarget = "__cublas$triangularSolve";

enum class SolverOp { kPotrf, kGetrf, kTrsm };

struct SolverCall {
  SolverOp op = SolverOp::kPotrf;
  bool lower = true;  // potrf, trsm
  // trsm only
  bool left_side = true, unit_diagonal = false, has_alpha = false;
  TriangularTranspose transpose_a = TriangularTranspose::kNoTranspose;
};

// The solver op a custom-call target names; nullopt for any other target.
std::optional<SolverOp> SolverCallKind(std::string_view target);
inline bool IsSolverCallTarget(std::string_view target) { return SolverCallKind(target).has_value(); }

// Reads the target and backend_config of a solver custom call and checks its operand and result
// shapes (ranks, square matrices, element types, info/pivot shapes): errors say what is wrong.
absl::StatusOr<SolverCall> ParseSolverCall(const HloInstruction& inst);


}  // namespace hloc
