// Shared between gemm_rewriter.cc (dot -> GEMM call, workspace) and gemm_epilogues.cc (the
// fusions into an existing GEMM call). Not part of the public API.
#pragma once
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"

#include "ir/custom_calls/library_calls.h"
#include "passes/library/gemm_rewriter.h"
#include "passes/library/library_util.h"

namespace hloc::library::gemm {

struct Rewrite {
  HloComputation* comp = nullptr;
  NameUniquer* names = nullptr;
  const PassContext* pass = nullptr;
  GemmRewriter::Options options;
  bool changed = false;
  // How many instructions of `comp` carry each name, kept while AddWorkspace runs (null
  // otherwise): asking the computation scanned it once per GEMM, quadratic in the layers.
  absl::flat_hash_map<std::string, int64_t>* name_counts = nullptr;
};

bool IsLegacyGemm(const HloInstruction* inst);
bool IsLtMatmul(const HloInstruction* inst);
inline bool IsGemm(const HloInstruction* inst) { return IsLegacyGemm(inst) || IsLtMatmul(inst); }

absl::StatusOr<GemmBackendConfig> Config(const HloInstruction* gemm);
void SetConfig(HloInstruction* gemm, const GemmBackendConfig& config);

// cuBLASLt epilogues only for these output types (XLA's SupportsEpilogueFusion).
bool SupportsEpilogueFusion(PrimitiveType t);
// The (a, b, d) type combinations cuBLASLt / legacy cuBLAS run, with the compute type XLA picks.
bool TypesSupportedByCublasLt(PrimitiveType a, PrimitiveType b, PrimitiveType out);
bool TypesSupportedByLegacyCublas(PrimitiveType a, PrimitiveType b, PrimitiveType out);

// A copy of `gemm` with new operands, shape and config, placed before `before` and named
// `name` (uniquified). Null when shape inference refuses it (the builder's error is kept).
HloInstruction* CloneGemm(Rewrite& rw, const HloInstruction* gemm, std::vector<HloInstruction*> operands,
                          const Shape& shape, const GemmBackendConfig& config, const HloInstruction* before,
                          const std::string& name);
// A copy of a slice/bitcast `like` applied to `operand`, placed before `before`.
HloInstruction* CloneUnary(Rewrite& rw, const HloInstruction* like, HloInstruction* operand,
                           const HloInstruction* before);
// XLA's SetName: "cublas-lt-matmul", "cublas-gemm" or "cublas-batch-gemm".
std::string GemmName(const HloInstruction* gemm, const GemmBackendConfig& config);
// Replaces `old_inst` (its uses and the root) by `replacement`, removing what became dead.
absl::Status Replace(Rewrite& rw, HloInstruction* old_inst, HloInstruction* replacement);

absl::Status HandleDot(Rewrite& rw, HloInstruction* dot);
absl::Status HandleMultiply(Rewrite& rw, HloInstruction* multiply);
absl::Status HandleAdd(Rewrite& rw, HloInstruction* add);
absl::Status HandleMaximum(Rewrite& rw, HloInstruction* maximum);
absl::Status HandleConvert(Rewrite& rw, HloInstruction* convert);
// GemmWorkspaceRewriteVisitor: (D[, aux]) -> (D[, aux], s8[workspace]).
absl::Status AddWorkspace(Rewrite& rw, HloInstruction* gemm);

}  // namespace hloc::library::gemm
