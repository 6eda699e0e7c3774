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
