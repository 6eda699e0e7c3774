// small-gemm-selector (hloc's own; issue 15, "decide each question once, upstream, and record
// it"): the one place that decides whether a GEMM runs on cuBLAS or on hloc's small-GEMM kernel
// (codegen/gpu/gpu_small_gemm.h), recorded in the module so that the optimized HLO says what
// runs and codegen only reads it:
//   - a __cublas$lt$matmul / __cublas$gemm custom-call the kernel takes becomes
//     custom_call_target="__hloc$small_gemm", keeping its operands, result and GemmBackendConfig;
//   - a plain dot the kernel takes (outside fusions: codegen emits those as fusions) gets
//     backend_config={"kind":"__hloc$small_gemm"}, as XLA records "kind":"__triton_gemm" in a
//     fusion's backend_config.
// See ir/custom_calls/library_calls.h (kSmallGemmCallTarget) for why these two forms.
//
// The decision (SmallGemmApplies): f32/bf16/f16 operands of one type, an f32/bf16/f16 result,
// f32 compute, an epilogue the kernel has (DEFAULT, BIAS, RELU, BIAS_RELU, GELU, BIAS_GELU),
// finite alpha and beta, batch*m*n*k <= small_gemm_max_macs and min(m, n) <=
// small_gemm_max_short_side (the profile's tuning; measurements in gpu_small_gemm.cc). The
// custom-calls whose thunk codegen would refuse (an aux output, a bias with beta != 0 or on a
// column-major result) are left alone. `hloc compile --small-gemm-kernels=off` disables this
// pass and `max=N` sets the profile's small_gemm_max_macs (gpu_compiler.cc): one source.
//
// Runs after everything that still changes a GEMM's types, layouts or fusion (cublas-gemm-
// rewriter, layout_normalization, float-normalization, the fusion passes). A no-op under a CPU
// profile.
#pragma once
#include <cstdint>
#include <string_view>

#include "engine/pass.h"
#include "ir/custom_calls/gemm_geometry.h"

namespace hloc {

struct SmallGemmLimits {
  int64_t max_macs = int64_t{1} << 24;  // tuning small_gemm_max_macs
  int64_t max_short_side = 128;         // tuning small_gemm_max_short_side
};

// Whether the kernel computes this GEMM (types, epilogue) and it is small enough to gain from it.
bool SmallGemmApplies(const GemmGeometry& g, double alpha, double beta, std::string_view epilogue,
                      const SmallGemmLimits& limits);

class SmallGemmSelector : public HloPass {
 public:
  static constexpr const char* kName = "small-gemm-selector";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
