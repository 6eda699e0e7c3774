// The options of the small-GEMM kernel (gpu_small_gemm.h), apart so that the compiler's options
// (gpu_compiler.h) need no LLVM headers.
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace hloc::codegen::gpu {

struct SmallGemmOptions {
  bool enabled = true;
  // Tile overrides for measurements (0: chosen per GEMM): output rows per block, warps per block,
  // vector steps (4 K values each) whose loads are issued together.
  int64_t rows = 0;
  int64_t warps = 0;
  int64_t depth = 0;
  // The largest batch*m*n*k given to the kernel and the largest min(m, n) (0: the profile's
  // tuning small_gemm_max_macs / _max_short_side). Not read by codegen: GpuCompiler::Compile
  // writes them into the profile's tuning for small-gemm-selector, the one place that decides,
  // and disables that pass when `enabled` is false.
  int64_t max_macs = 0;
  int64_t max_short_side = 0;
};

// Comma-separated "on", "off", "ROWSxWARPS[xDEPTH]" (e.g. "8x8" or "8x8x4": on with that tile),
// "max=MACS" (e.g. "max=67108864") -> options; an error otherwise.
absl::StatusOr<SmallGemmOptions> ParseSmallGemmOptions(const std::string& text);

}  // namespace hloc::codegen::gpu
