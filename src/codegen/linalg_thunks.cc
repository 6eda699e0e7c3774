// Builds the linalg.* thunks (linalg_thunks.h, runtime/executable/linalg_config.h).
#include "codegen/linalg_thunks.h"

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/solver_calls.h"
#include "runtime/executable/linalg_config.h"

namespace hloc::codegen {

bool IsLinalgOp(const HloInstruction& hlo) {
  return hlo.opcode() == HloOpcode::kCholesky || hlo.opcode() == HloOpcode::kTriangularSolve ||
         (hlo.opcode() == HloOpcode::kCustomCall && IsSolverCallTarget(hlo.attrs().custom_call_target));
}

absl::StatusOr<std::optional<runtime::Thunk>> LinalgThunk(const HloInstruction& hlo,
                                                          const std::vector<KernelArgument>& arguments) {
  if (!IsLinalgOp(hlo)) return std::optional<runtime::Thunk>();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("%", hlo.name(), ": ", why));
  };
  runtime::LinalgConfig c;
  if (hlo.opcode() == HloOpcode::kCustomCall) {
    absl::StatusOr<SolverCall> call = ParseSolverCall(hlo);
    if (!call.ok()) return call.status();
    switch (call->op) {
      case SolverOp::kPotrf: c.op = "potrf"; break;
      case SolverOp::kGetrf: c.op = "getrf"; break;
      case SolverOp::kTrsm: c.op = "trsm"; break;
      case SolverOp::kGeqrf: c.op = "geqrf"; break;
      case SolverOp::kOrgqr: c.op = "orgqr"; break;
      case SolverOp::kOrmqr: c.op = "ormqr"; break;
      case SolverOp::kSyevd: c.op = "syevd"; break;
      case SolverOp::kGesvd: c.op = "gesvd"; break;
      case SolverOp::kPivotsToPermutation: c.op = "perm"; break;
    }
    c.full_matrices = call->full_matrices;
    c.compute_uv = call->compute_uv;
    c.jacobi = call->jacobi;
    c.transposed = call->transposed;
    c.lower = call->lower;
    c.left_side = call->left_side;
    c.unit_diagonal = call->unit_diagonal;
    c.has_alpha = call->has_alpha;
    c.transpose = call->transpose_a == TriangularTranspose::kNoTranspose ? 'N'
                  : call->transpose_a == TriangularTranspose::kTranspose ? 'T' : 'C';
    if (call->op == SolverOp::kOrmqr) {
      // LAPACK's side and trans: Q^H is 'C' for unmqr, 'T' for ormqr (real).
      c.left_side = call->left;
      const PrimitiveType t = hlo.operand(0)->shape().element_type();
      const bool complex = t == PrimitiveType::C64 || t == PrimitiveType::C128;
      c.transpose = !call->transpose ? 'N' : complex ? 'C' : 'T';
    }
  } else {
    // The ops' shapes are what shape inference checked; the runtime re-checks the config.
    const InstructionAttributes& at = hlo.attrs();
    if (hlo.opcode() == HloOpcode::kCholesky) {
      c.op = "potrf";
      c.lower = at.lower;
      c.has_info = false;
      c.cholesky_op = true;
    } else {
      c.op = "trsm";
      c.lower = at.lower;
      c.left_side = at.left_side;
      c.unit_diagonal = at.unit_diagonal;
      c.transpose = at.transpose_a == TriangularTranspose::kNoTranspose ? 'N'
                    : at.transpose_a == TriangularTranspose::kTranspose ? 'T' : 'C';
    }
  }
  if (arguments.empty() || !arguments[0].shape.IsArray()) return bad("expects an array operand");
  const PrimitiveType t = arguments[0].shape.element_type();
  if (c.op != "perm" && t != PrimitiveType::F32 && t != PrimitiveType::F64 && t != PrimitiveType::C64 &&
      t != PrimitiveType::C128)
    return absl::UnimplementedError(absl::StrCat("%", hlo.name(), ": linear algebra on ",
                                                 std::string(PrimitiveTypeName(t)), " (only f32, f64, c64, c128)"));
  c.type = std::string(PrimitiveTypeName(t));
  runtime::Thunk thunk;
  thunk.kind = runtime::ThunkKind::kCustomCall;
  thunk.name = hlo.name();
  thunk.target = runtime::LinalgTargetOf(c.op);
  for (const KernelArgument& a : arguments) {
    c.shapes.push_back(ToArrayShape(a.shape));
    thunk.arguments.push_back(a.slice);
    thunk.written.push_back(a.is_output);
  }
  thunk.backend_config = c.ToString();
  if (absl::Status s = runtime::ValidateLinalgThunk(thunk, c); !s.ok()) return bad(std::string(s.message()));
  return std::optional<runtime::Thunk>(std::move(thunk));
}

}  // namespace hloc::codegen
