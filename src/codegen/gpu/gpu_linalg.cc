// GPU linear-algebra thunks: the backend-neutral linalg thunk (codegen/linalg_thunks.h) plus the
// layout rules of cuSOLVER and cuBLAS, which read dense column-major matrices. A row-major
// matrix is the column-major transpose, which potrf and trsm absorb by flipping uplo (and, for
// trsm, the side) in the runtime; getrf cannot (LU of A^T is not LU of A), and JAX's getrf asks
// for column-major operands anyway (operand_layout_constraints), which layout assignment keeps.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/gpu/gpu_library_calls.h"
#include "codegen/linalg_thunks.h"
#include "runtime/executable/linalg_config.h"

namespace hloc::codegen::gpu {

absl::StatusOr<std::optional<runtime::Thunk>> GpuLinalgThunk(const HloInstruction& hlo,
                                                             const std::vector<KernelArgument>& arguments) {
  absl::StatusOr<std::optional<runtime::Thunk>> thunk = LinalgThunk(hlo, arguments);
  if (!thunk.ok() || !thunk->has_value()) return thunk;
  absl::StatusOr<runtime::LinalgConfig> c = runtime::LinalgConfig::Parse((*thunk)->backend_config);
  if (!c.ok()) return c.status();
  if (c->op != "potrf" && c->op != "getrf" && c->op != "trsm") {
    // The decompositions (issue 34) follow jaxlib's handlers: every matrix dense column-major
    // (the transposed gesvd: all row-major, the column-major A^T it factors), every vector and
    // s32 result in the default layout, as JAX's operand/result layouts ask.
    if (c->op == "gesvd" && !c->jacobi && !c->transposed) {
      absl::StatusOr<runtime::MatrixView> a = runtime::MatrixViewOf(c->shapes[0]);
      if (!a.ok()) return a.status();
      if (a->rows < a->cols)
        return absl::UnimplementedError(absl::StrCat("%", hlo.name(), ": cuSOLVER's gesvd needs m >= n; JAX's GPU "
                                                     "lowering passes a wide matrix transposed (transposed = true)"));
    }
    for (size_t i = 0; i < c->shapes.size(); ++i) {
      const runtime::ArrayShape& sh = c->shapes[i];
      const size_t r = sh.dimensions.size();
      const bool matrix = c->op != "perm" && r == c->shapes[0].dimensions.size() &&
                          !((c->op == "orgqr" || c->op == "ormqr") && i == 1) &&
                          !(c->op == "gesvd" && (i == 2 || i == 5)) && !(c->op == "syevd" && (i == 2 || i == 3)) &&
                          !(c->op == "geqrf" && i == 2);
      bool ok = true;
      if (matrix) {
        absl::StatusOr<runtime::MatrixView> v = runtime::MatrixViewOf(sh);
        if (!v.ok()) return v.status();
        ok = c->transposed ? v->RowMajorDense() : v->ColumnMajorDense();
      } else {
        for (size_t d = 0; d < r; ++d) ok = ok && sh.minor_to_major[d] == static_cast<int64_t>(r - 1 - d);
      }
      if (!ok)
        return absl::UnimplementedError(absl::StrCat(
            "%", hlo.name(), ": ", c->op, " on the GPU needs ",
            matrix ? (c->transposed ? "row-major" : "column-major") : "default-layout", " argument ", i,
            " (as JAX's layouts ask), got layout {", absl::StrJoin(sh.minor_to_major, ","), "}"));
    }
    return thunk;
  }
  const size_t matrices = c->op == "potrf" ? 2 : c->op == "getrf" ? 2 : 3;
  std::optional<bool> column_major;
  for (size_t i = 0, seen = 0; i < c->shapes.size() && seen < matrices; ++i) {
    if (c->op == "trsm" && c->has_alpha && i == 2) continue;  // the scalar alpha
    ++seen;
    absl::StatusOr<runtime::MatrixView> v = runtime::MatrixViewOf(c->shapes[i]);
    if (!v.ok()) return v.status();
    const bool cm = v->ColumnMajorDense(), rm = v->RowMajorDense();
    if (!cm && !rm)
      return absl::UnimplementedError(absl::StrCat(
          "%", hlo.name(), ": the GPU runtime takes matrices whose batch dimensions are major and whose last two "
          "dimensions are row- or column-major; argument ", i, " has layout {",
          absl::StrJoin(c->shapes[i].minor_to_major, ","), "}"));
    const bool this_cm = cm && !(rm && column_major.has_value() && !*column_major);  // a 1xN matrix is both
    if (column_major.has_value() && *column_major != this_cm && !(cm && rm))
      return absl::UnimplementedError(absl::StrCat("%", hlo.name(),
                                                   ": the GPU runtime needs all matrices of one call in one order "
                                                   "(row- or column-major); argument ", i, " differs"));
    if (!column_major.has_value() || !(cm && rm)) column_major = this_cm;
  }
  if (c->op == "getrf" && column_major.has_value() && !*column_major)
    return absl::UnimplementedError(absl::StrCat("%", hlo.name(), ": getrf on the GPU needs column-major matrices "
                                                 "(layout {n-2, n-1, batch...}), as JAX's operand_layout_constraints "
                                                 "ask"));
  return thunk;
}

}  // namespace hloc::codegen::gpu
