// GpuCompiler: HLO module -> runtime::Executable for an NVIDIA GPU, deviceless (no GPU needed;
// XLA's GpuCompiler / NVPTXCompiler). Stages: the gpu pipeline (pipelines/gpu.yaml patched by the
// profile: layout, library rewrites, fusion, copy insertion, scheduling), buffer assignment (256-byte
// alignment), thunk emission (codegen/thunk_emitter.h with the GPU backend: NVPTX kernels for
// fusions, kGemm for __cublas$lt$matmul / __cublas$gemm custom calls, kConvolution for __cudnn$*),
// the CommandBufferConversionPass over the thunks, and PTX for the profile's compute capability
// (sm_90 for h200/h100, sm_80 for a100) from LLVM's NVPTX backend.
#pragma once
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/compile_recorder.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"
#include "codegen/gpu/command_buffer_conversion.h"
#include "codegen/gpu/gpu_small_gemm_options.h"

namespace hloc::codegen::gpu {

struct GpuCompileOptions {
  std::optional<Pipeline> pipeline;  // nullopt: no HLO passes
  std::optional<Profile> profile;    // h200 when absent
  std::string dump_to;               // XLA-named dumps + NAME.ptx
  std::ostream* log = nullptr;
  // --dump-html: what the compilation did, for the browser view written with the dumps.
  CompileRecorder* recorder = nullptr;
  bool command_buffers = true;       // run CommandBufferConversionPass
  // Which thunk kinds graphs hold and the shortest run converted (XLA's
  // xla_gpu_enable_command_buffer / xla_gpu_graph_min_graph_size); `enabled` is ANDed with
  // command_buffers.
  CommandBufferConversionOptions command_buffer_options;
  int opt_level = 3;                 // LLVM optimization level for the kernels (0 or 3)
  std::string libdevice;             // path of libdevice.10.bc; empty: searched (nvptx_backend.h)
  // Small GEMMs (cuBLAS custom-calls and dots) as our own kernel (gpu_small_gemm.h).
  SmallGemmOptions small_gemm;
  // XLA's xla_gpu_deterministic_ops: no floating-point atomics (a scatter whose combiner would
  // use them takes the serial path, updates in order), so results repeat bit for bit.
  bool deterministic_ops = false;
  // Where the launch check's warnings go (launch_check.h; limits from the profile), one
  // "hloc: warning: ..." line each; null: not checked.
  std::ostream* warnings = nullptr;
};

struct GpuCompileArtifacts {
  std::string optimized_hlo, buffer_assignment, thunk_sequence, llvm_ir, ptx;
  int64_t num_kernels = 0;         // kernel thunks
  int64_t num_unique_kernels = 0;  // kernels compiled (identical ones share one; kernel_modules.h)
  std::vector<std::string> launch_warnings;  // the launch check's findings (always filled)
};

class GpuCompiler {
 public:
  static absl::StatusOr<runtime::Executable> Compile(HloModule& module, const GpuCompileOptions& options,
                                                     GpuCompileArtifacts* artifacts = nullptr);
};

// Loads the GPU profile `profile_name_or_path` (a path or NAME.yaml in `config_dirs`; "h200"
// when empty) and the pipeline it names (from `pipeline_dirs`, then ../pipelines beside the
// profile), patched, into options.profile / options.pipeline. A non-GPU profile is an error.
// `preloaded`: the profile already read by the caller (a compile reads it once).
absl::Status LoadGpuProfileAndPipeline(const std::string& profile_name_or_path,
                                       const std::vector<std::string>& config_dirs,
                                       const std::vector<std::string>& pipeline_dirs, GpuCompileOptions& options,
                                       const Profile* preloaded = nullptr);

}  // namespace hloc::codegen::gpu
