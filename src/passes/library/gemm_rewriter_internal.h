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
  // --trace-rules / --dump-html: each replacement, printed when Replace makes it (null otherwise).
  std::vector<std::string>* trace_after = nullptr;
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

// The epilogue patterns (gemm_epilogues.cc): the Fns and LibraryConstraints of the
// LibraryPattern records in rules/library/GemmEpilogues.td, which the generated table calls (the
// pass tries the records of an instruction's opcode in file order; see GemmRewriter::Run).
absl::Status AbsorbAlpha(Rewrite& rw, HloInstruction* multiply);
absl::Status AbsorbGelu(Rewrite& rw, HloInstruction* multiply);
absl::Status AbsorbVectorBias(Rewrite& rw, HloInstruction* add);
absl::Status AbsorbMatrixAddend(Rewrite& rw, HloInstruction* add);
absl::Status AbsorbRelu(Rewrite& rw, HloInstruction* maximum);
absl::Status AbsorbOutputConvert(Rewrite& rw, HloInstruction* convert);
bool ReadsGemmCall(const Rewrite& rw, const HloInstruction* x);
bool ReadsLtMatmul(const Rewrite& rw, const HloInstruction* x);
bool HasBroadcastOperand(const Rewrite& rw, const HloInstruction* x);
bool HasScalarConstantBroadcastOperand(const Rewrite& rw, const HloInstruction* x);
bool HasZeroBroadcastOperand(const Rewrite& rw, const HloInstruction* x);
bool NarrowsFloat(const Rewrite& rw, const HloInstruction* x);
bool FuseBiasOn(const Rewrite& rw);
bool FuseOutputConvertOn(const Rewrite& rw);
// GemmWorkspaceRewriteVisitor: (D[, aux]) -> (D[, aux], s8[workspace]).
absl::Status AddWorkspace(Rewrite& rw, HloInstruction* gemm);

}  // namespace hloc::library::gemm
