// LLVM module -> PTX text through LLVM's NVPTX backend (XLA's llvm_gpu_backend/nvptx_backend.cc):
// libdevice linked in for the __nv_* math functions the module calls (only those, internalized),
// the O3 pipeline for the target sm, then the PTX assembly printer.
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen::gpu {

struct NvptxOptions {
  std::string sm = "sm_90";      // compute capability as PTX names it
  std::string ptx_version = "+ptx80";
  int opt_level = 3;
  // Where libdevice.10.bc is looked for (first hit wins) when the module calls __nv_*; the
  // defaults cover $HLOC_LIBDEVICE (a file), $CUDA_HOME, /usr/local/cuda and Debian's layout.
  std::vector<std::string> libdevice_paths;
};

// The oldest compute capability hloc compiles for: PTX ISA 8.0 (ptx_version above, CUDA 12)
// has no targets before sm_50, and the kernels use warp shuffles and atomics of later GPUs.
inline constexpr int kMinComputeCapability = 50;

// The NVPTX targets this build can compile for: those LLVM's NVPTX backend knows ("sm_50",
// ..., "sm_90a"), from kMinComputeCapability on.
std::vector<std::string> SupportedNvptxTargets();
// OK when `sm` is one of SupportedNvptxTargets(); LLVM would otherwise abort ("Cannot select")
// on the first instruction its unknown subtarget lacks.
absl::Status CheckNvptxTarget(const std::string& sm);

// The triple and data layout NVPTX kernels use; set on the module before emitting kernels.
void ConfigureNvptxModule(llvm::Module& module, const NvptxOptions& options);

// Links libdevice (when needed), optimizes, and returns the PTX text. A non-empty
// `local_suffix` is appended to every internal symbol after optimization, so that the PTX of
// modules compiled apart can be joined into one (CombinePtx); kernels keep their names.
absl::StatusOr<std::string> CompileToPtx(llvm::Module& module, const NvptxOptions& options,
                                         const std::string& local_suffix = "");

// One PTX module from several compiled for the same target with distinct local suffixes:
// the first header, then each body; identical .extern declarations are kept once.
absl::StatusOr<std::string> CombinePtx(const std::vector<std::string>& parts);

// The libdevice path found (empty when none).
std::string FindLibdevice(const NvptxOptions& options);

}  // namespace hloc::codegen::gpu
