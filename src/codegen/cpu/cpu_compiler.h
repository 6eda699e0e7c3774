// CpuCompiler: HLO module -> runtime::Executable for the host CPU (XLA's CpuCompiler).
//   1. the cpu pipeline (pipelines/cpu.yaml, patched by the profile) runs on the module;
//   2. a module the pipeline left unscheduled is scheduled (src/schedule ScheduleModule);
//   3. buffers are assigned (src/buffers AssignBuffers, 64-byte alignment);
//   4. the scheduled entry computation is walked into a ThunkSequence (codegen/thunk_emitter.h)
//      while the CPU kernel emitter writes one LLVM function per kernel thunk;
//   5. the LLVM module is optimized (O2, host CPU features) and emitted as an ELF object.
// The result holds everything `hloc run` and CpuExecutable need; nothing refers back to src/.
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "absl/status/statusor.h"
#include "engine/compile_recorder.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen::cpu {

struct CpuCompileOptions {
  // The HLO pipeline to run (loaded and already patched by the profile). nullopt: no
  // optimization (each instruction then becomes its own kernel); only copy-insertion runs,
  // which correctness needs.
  std::optional<Pipeline> pipeline;
  // Hardware facts for the passes and the profile's name recorded in the executable.
  std::optional<Profile> profile;
  // XLA-named dumps (NAME.after_optimizations.txt, NAME.after_optimizations-buffer-assignment.txt,
  // NAME.thunk_sequence.txt, NAME.ll) are written here when not empty.
  std::string dump_to;
  std::ostream* log = nullptr;  // one line per pass and per compile stage (verbose); null: silent
  // --dump-html: what the compilation did, for the browser view written with the dumps.
  CompileRecorder* recorder = nullptr;
  int opt_level = 2;            // LLVM optimization level (0..3)
  // The CPU the code is for: "" or "host" = this machine's CPU and features; otherwise an LLVM
  // CPU name ("x86-64", "x86-64-v3", "skylake-avx512", ...) with its default features, for
  // executables that must run elsewhere (or under valgrind, which lacks AVX-512).
  std::string target_cpu;
  // Multi-threaded kernels: the most parts one kernel is split into (0: the profile's core count,
  // else 16).
  int64_t max_kernel_partitions = 0;
};

// What a compile produced besides the executable (for dumps, tests and `hloc compile -v`).
struct CpuCompileArtifacts {
  std::string optimized_hlo;      // the scheduled module, printed
  std::string buffer_assignment;  // BufferAssignment::ToString()
  std::string thunk_sequence;     // runtime::ThunkSequenceToString
  std::string llvm_ir;            // the optimized LLVM module, as text
  int64_t num_kernels = 0;
};

class CpuCompiler {
 public:
  // Compiles `module` in place (the pipeline rewrites it) into an executable. Errors name the
  // stage and the instruction (e.g. an unsupported custom-call target).
  static absl::StatusOr<runtime::Executable> Compile(HloModule& module, const CpuCompileOptions& options,
                                                     CpuCompileArtifacts* artifacts = nullptr);
};

// Loads the profile `profile_name_or_path` (a path or a name looked up as NAME.yaml in
// `config_dirs`) and the pipeline it names (looked up in `pipeline_dirs`, then beside the profile
// in ../pipelines), patched. With an empty name: pipelines/cpu.yaml unpatched and no profile.
absl::Status LoadCpuProfileAndPipeline(const std::string& profile_name_or_path,
                                       const std::vector<std::string>& config_dirs,
                                       const std::vector<std::string>& pipeline_dirs, CpuCompileOptions& options,
                                       const Profile* preloaded = nullptr);

// The LLVM target triple the compiler emits for (the host's).
std::string HostTargetTriple();

}  // namespace hloc::codegen::cpu
