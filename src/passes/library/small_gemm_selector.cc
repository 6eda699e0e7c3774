// small-gemm-selector: see small_gemm_selector.h.
#include "passes/library/small_gemm_selector.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "engine/profile.h"
#include "engine/tuning.h"
#include "ir/custom_calls/library_calls.h"
#include "ir/module.h"

namespace hloc {
namespace {

bool FloatType(const std::string& t) { return t == "f32" || t == "bf16" || t == "f16"; }

bool KernelEpilogue(std::string_view e) {
  return e == "DEFAULT" || e == "BIAS" || e == "RELU" || e == "BIAS_RELU" || e == "GELU" || e == "BIAS_GELU";
}

Shape WithLayout(Shape s) {
  if (s.IsArray() && !s.has_layout()) s.SetDefaultLayout();
  return s;
}

// A cuBLAS custom-call the kernel should run (the conditions of codegen's GemmThunk included, so
// that a call codegen would refuse is never marked).
bool TakeCustomCall(const HloInstruction& hlo, const SmallGemmLimits& limits) {
  if (!IsCublasGemmTarget(hlo.attrs().custom_call_target)) return false;
  absl::StatusOr<GemmBackendConfig> cfg = ParseGemmBackendConfig(hlo.attrs().backend_config);
  if (!cfg.ok() || hlo.operand_count() < 2 || EpilogueHasAux(cfg->epilogue)) return false;
  const Shape& result = hlo.shape();
  if (result.IsTuple() && result.tuple_shapes().empty()) return false;
  const Shape& d = result.IsTuple() ? result.tuple_shapes()[0] : result;
  std::optional<GemmGeometry> g = GemmGeometryOf(WithLayout(hlo.operand(0)->shape()),
                                                 WithLayout(hlo.operand(1)->shape()), WithLayout(d),
                                                 cfg->dot_dimension_numbers);
  if (!g || cfg->alpha_imag != 0) return false;
  const bool bias = EpilogueAddsBias(cfg->epilogue);
  if (bias && (cfg->beta != 0 || g->swap_operands)) return false;
  if ((bias || cfg->beta != 0) && hlo.operand_count() < 3) return false;
  return SmallGemmApplies(*g, cfg->alpha_real, cfg->beta, GemmEpilogueName(cfg->epilogue), limits);
}

// A plain dot the kernel should run (alpha 1, beta 0, no epilogue).
bool TakeDot(const HloInstruction& dot, const SmallGemmLimits& limits) {
  if (dot.operand_count() != 2 || !dot.attrs().dot_dimension_numbers) return false;
  std::optional<GemmGeometry> g = GemmGeometryOf(WithLayout(dot.operand(0)->shape()), WithLayout(dot.operand(1)->shape()),
                                                 WithLayout(dot.shape()), *dot.attrs().dot_dimension_numbers);
  return g && SmallGemmApplies(*g, 1.0, 0.0, "DEFAULT", limits);
}

}  // namespace

// The limits (moved here from codegen/gpu/gpu_small_gemm.cc with the decision):
// Problems up to this many multiply-adds (batch*m*n*k) may take the kernel: at the few TFLOP/s
// of CUDA-core FMAs it reaches, 2^24 MACs are ~5 us, about what cuBLAS spends on a GEMM that
// only fills a few SMs (tile setup, split-K reduction kernel). Measured on the H200 (whole
// modules, `hloc run --bench 20 --small-gemm-kernels on|off`, one lease): scan_rnn.large, whose
// step GEMMs are 2^23 and 2^24 MACs, 1.78 ms with the kernel against 2.37 ms on cuBLAS;
// flax_gru_train.large, whose 128x512x512 steps are 2^25, 7.38 ms with it against 6.61 ms on
// cuBLAS (an earlier --per-thunk reading had the kernel ahead at 2^25; the whole module says
// otherwise); mlp_train_step_f32 0.72 vs 0.71 ms.
// (The default of tuning small_gemm_max_macs, 2^24.)
// ...and only when one output side is short: cuBLAS's 64x64+ tiles then leave SMs idle.
// (The default of tuning small_gemm_max_short_side, 128.)
bool SmallGemmApplies(const GemmGeometry& g, double alpha, double beta, std::string_view epilogue,
                      const SmallGemmLimits& limits) {
  if (!FloatType(g.lhs_type) || g.lhs_type != g.rhs_type || !FloatType(g.output_type)) return false;
  if (g.compute_type != "f32") return false;
  if (!KernelEpilogue(epilogue)) return false;
  if (!std::isfinite(alpha) || !std::isfinite(beta)) return false;
  if (g.batch < 1 || g.m < 1 || g.n < 1 || g.k < 1) return false;
  if (std::min(g.m, g.n) > limits.max_short_side) return false;
  // Overflow-safe batch*m*n*k <= max_macs.
  int64_t macs = 1;
  for (int64_t v : {g.batch, g.m, g.n, g.k}) {
    if (v > limits.max_macs || macs > limits.max_macs / v) return false;
    macs *= v;
  }
  return true;
}

absl::StatusOr<bool> SmallGemmSelector::Run(HloModule& module, PassContext& context) {
  if (context.profile != nullptr && context.profile->kind != "gpu") return false;
  const Tuning tuning = context.profile != nullptr ? context.profile->tuning : Tuning();
  SmallGemmLimits limits;
  limits.max_macs = tuning.Get(TuningKnob::kSmallGemmMaxMacs);
  limits.max_short_side = tuning.Get(TuningKnob::kSmallGemmMaxShortSide);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& i : comp->instructions()) {
      HloInstruction* inst = i.get();
      if (IsSmallGemmMarked(*inst)) continue;
      if (inst->opcode() == HloOpcode::kCustomCall && TakeCustomCall(*inst, limits)) {
        inst->mutable_attrs().custom_call_target = std::string(kSmallGemmCallTarget);
        changed = true;
      } else if (inst->opcode() == HloOpcode::kDot && TakeDot(*inst, limits)) {
        std::optional<std::string> config = DotConfigWithSmallGemmKind(inst->attrs().backend_config);
        if (!config) continue;  // a backend_config that is not a JSON object: leave it to cuBLAS
        inst->mutable_attrs().backend_config = *config;
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace hloc
