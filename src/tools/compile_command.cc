// hloc compile FILE --profile cpu -o OUT.hlox [--dump-to DIR]: compiles an HLO module for the
// CPU into a serialized executable (runtime/executable/executable.h) that `hloc run` loads.
#include <filesystem>
#include <iostream>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/gpu/gpu_compiler.h"
#include "engine/compile_recorder.h"
#include "engine/profile_loader.h"
#include "support/file_io.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

namespace fs = std::filesystem;

constexpr char kHelp[] = R"HELP(Usage: hloc compile [options] FILE -o OUT.hlox

Compiles the HLO module in FILE ('-' for standard input) for the host CPU: the profile's
pipeline (pipelines/cpu.yaml) runs, the module is scheduled, buffers are assigned, the entry
computation becomes a thunk sequence whose kernels are emitted as LLVM IR, optimized and
compiled to an ELF object. The result (object code, thunks, buffers, optimized HLO) is
written as one executable file that `hloc run OUT.hlox` loads.

Options:
  -o, --output OUT    the executable file to write (required unless --dump-to is given)
  --profile C         a hardware profile: a path, or a name looked up as C.yaml in the
                      configs folder (default: cpu). It names the pipeline and patches it.
                      A GPU profile (h200, h100, a100) compiles for that GPU, deviceless:
                      the gpu pipeline, 256-byte aligned buffers, NVPTX kernels as PTX for
                      its compute capability (sm_90, sm_80), cuBLAS/cuDNN library thunks and
                      CUDA-graph command buffers; `hloc run OUT.hlox --backend gpu` runs it.
                      GPU dumps add module_0000.NAME.ptx and ...ir-no-opt.ll.
  --command-buffers K GPU: thunk kinds CUDA graphs hold, as XLA's xla_gpu_enable_command_buffer
                      (default FUSION,CUBLAS,CUBLASLT,COPY; "" or "none": none)
  --min-graph-size N  GPU: the shortest run of thunks made a graph (default 2)
  --small-gemm-kernels S  GPU: on (default), off, or ROWSxWARPS[xDEPTH] and/or max=MACS, comma-
                      separated (a tile and a size limit for measurements): small GEMMs
                      (batch*m*n*k <= 2^24 or MACS, min(m, n) <= 128) as our own kernel
                      instead of cuBLAS
  --deterministic-ops GPU: results that repeat bit for bit (XLA's xla_gpu_deterministic_ops):
                      no floating-point atomics (such scatters update serially, in order)
  --pipeline P        run this pipeline manifest instead of the one the profile names: a path,
                      or a name looked up as P.yaml in the pipelines folder; the profile's
                      patches apply to it (as hloc opt --pipeline)
  --disable-passes a,b
                      switch off these passes, groups or labels of the profile's pipeline
  --tuning K=V,...    set tuning numbers of the profile (keys of its tuning: section, with
                      the same units and ranges; hloc opt --profile P --print-profile lists
                      them), e.g. --tuning kernel_launch_overhead_s=3e-6
  --no-passes         compile the module as it is (no HLO passes; each instruction then
                      becomes its own kernel)
  --dump-to DIR       write XLA-named dumps to DIR: module_0000.NAME.before_optimizations.txt,
                      ...after_optimizations.txt (the scheduled module),
                      ...after_optimizations-buffer-assignment.txt, ...thunk_sequence.txt
                      and module_0000.NAME.ll (the optimized LLVM IR)
  --dump-html         with --dump-to: also module_0000.NAME.html, a self-contained page of the
                      passes (diffs, times), rule firings, fusion decisions, the fusion graph,
                      buffer live ranges and the thunk sequence
  -O LEVEL            LLVM optimization level 0-3 (default 2)
  --target-cpu CPU    the CPU to compile for: host (default: this machine's CPU and
                      features) or an LLVM CPU name (x86-64, x86-64-v3, skylake-avx512, ...)
                      for an executable that runs on other machines
  -v, --verbose       print each pass and compile stage with its time to stderr (without it,
                      on a terminal or with HLOC_PROGRESS=1: the compile stages and any pass
                      of a second or more, as they finish)
  --pipeline-dir DIR  where pipeline names are looked up first
  --config-dir DIR    where profile names are looked up first
  -h, --help          show this help

Exit status: 0 on success, 1 when the module is bad or cannot be compiled (the message names
the stage and the instruction), 2 on a command-line error.
)HELP";

int Fail(const std::string& message) {
  std::cerr << "hloc: error: " << message << "\n";
  return kExitFailure;
}

int WriteExecutable(const ParsedArgs& parsed, const runtime::Executable& exe) {
  if (auto out_path = parsed.Get("--output")) {
    const std::string bytes = exe.Serialize();
    if (absl::Status s = WriteFileAtomically(*out_path, bytes); !s.ok()) return Fail(std::string(s.message()));
    if (parsed.Has("--verbose"))
      std::cerr << "compile: wrote " << *out_path << " (" << bytes.size() << " bytes, " << exe.thunks.size()
                << " thunks)\n";
  }
  return kExitOk;
}

// The GPU branch: codegen/gpu/gpu_compiler.h, no GPU needed.
int RunGpuCompile(const ParsedArgs& parsed, const std::vector<std::string>& config_dirs, const Profile& profile) {
  if (parsed.Has("--target-cpu")) return UsageError("compile", "--target-cpu needs a CPU profile");
  codegen::gpu::GpuCompileOptions options;
  if (auto level = parsed.Get("--opt-level")) {
    int l = 0;
    if (!absl::SimpleAtoi(*level, &l) || l < 0 || l > 3)
      return UsageError("compile", absl::StrCat("-O expects 0, 1, 2 or 3, got '", *level, "'"));
    options.opt_level = l == 0 ? 0 : 3;
  }
  if (auto kinds = parsed.Get("--command-buffers")) {
    if (*kinds == "none" || kinds->empty()) {
      options.command_buffers = false;
    } else {
      absl::StatusOr<std::set<runtime::ThunkKind>> k = codegen::gpu::ParseCommandBufferKinds(*kinds);
      if (!k.ok()) return UsageError("compile", std::string(k.status().message()));
      options.command_buffer_options.kinds = *k;
    }
  }
  if (auto v = parsed.Get("--small-gemm-kernels")) {
    absl::StatusOr<codegen::gpu::SmallGemmOptions> o = codegen::gpu::ParseSmallGemmOptions(*v);
    if (!o.ok()) return UsageError("compile", std::string(o.status().message()));
    options.small_gemm = *o;
  }
  options.deterministic_ops = parsed.Has("--deterministic-ops");
  options.warnings = &std::cerr;
  if (auto n = parsed.Get("--min-graph-size")) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(*n, &v) || v < 1)
      return UsageError("compile", absl::StrCat("--min-graph-size expects a positive number, got '", *n, "'"));
    options.command_buffer_options.min_graph_size = v;
  }
  absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline(
      *parsed.Get("--profile"), config_dirs,
      DataSearchDirs(parsed.Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options, &profile);
  if (!s.ok()) return Fail(std::string(s.message()));
  bool usage = false;
  if (absl::Status d = ApplyPipelineOptions(parsed, options.profile, options.pipeline, &usage); !d.ok())
    return usage ? UsageError("compile", std::string(d.message())) : Fail(std::string(d.message()));
  if (auto dir = parsed.Get("--dump-to")) options.dump_to = *dir;
  CompileProgress progress(parsed.Has("--verbose"));
  options.log = progress.Log();
  CompileRecorder recorder;
  if (parsed.Has("--dump-html")) options.recorder = &recorder;
  std::unique_ptr<HloModule> module = LoadModule(parsed.positional[0]);
  if (!module) return kExitFailure;
  absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(*module, options);
  if (!exe.ok()) return Fail(absl::StrCat(DisplayName(parsed.positional[0]), ": ", exe.status().message()));
  return WriteExecutable(parsed, *exe);
}

}  // namespace

int RunCompile(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("compile", args,
                          {{"--output", "-o", true},
                           {"--profile", "", true},
                           {"--no-passes", "", false},
                           {"--disable-passes", "", true},
                           {"--pipeline", "", true},
                           {"--tuning", "", true},
                           {"--dump-to", "", true},
                           {"--dump-html", "", false},
                           {"--opt-level", "-O", true},
                           {"--verbose", "-v", false},
                           {"--target-cpu", "", true},
                           {"--pipeline-dir", "", true},
                           {"--config-dir", "", true},
                           {"--command-buffers", "", true},
                           {"--min-graph-size", "", true},
                           {"--small-gemm-kernels", "", true},
                           {"--deterministic-ops", "", false}});
  if (!parsed.ok()) return UsageError("compile", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1)
    return UsageError("compile", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  if (parsed->Has("--dump-html") && !parsed->Has("--dump-to"))
    return UsageError("compile", "--dump-html needs --dump-to DIR");
  if (!parsed->Has("--output") && !parsed->Has("--dump-to"))
    return UsageError("compile", "missing -o OUT.hlox (or --dump-to DIR)");
  if (parsed->Has("--no-passes") && parsed->Has("--profile"))
    return UsageError("compile", "--no-passes and --profile cannot be combined");
  if (parsed->Has("--no-passes") &&
      (parsed->Has("--pipeline") || parsed->Has("--disable-passes") || parsed->Has("--tuning")))
    return UsageError("compile", "--pipeline, --disable-passes and --tuning change the passes; they cannot be combined "
                                 "with --no-passes");

  // A GPU profile takes the GPU compiler. The profile is read once here and handed on (a profile
  // that cannot be read is reported by the CPU branch, which reads it again).
  std::optional<Profile> profile;
  if (!parsed->Has("--no-passes") && parsed->Has("--profile")) {
    const std::vector<std::string> config_dirs = DataSearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs");
    absl::StatusOr<std::string> path = FindProfileFile(*parsed->Get("--profile"), config_dirs);
    if (path.ok()) {
      absl::StatusOr<Profile> loaded = LoadProfileFile(*path);
      if (loaded.ok()) profile = std::move(*loaded);
      if (profile && profile->hardware.kind == "gpu") return RunGpuCompile(*parsed, config_dirs, *profile);
    }
  }
  if (parsed->Has("--command-buffers") || parsed->Has("--min-graph-size") || parsed->Has("--small-gemm-kernels") ||
      parsed->Has("--deterministic-ops"))
    return UsageError("compile",
                      "--command-buffers, --min-graph-size, --small-gemm-kernels and --deterministic-ops need a GPU "
                      "--profile");

  codegen::cpu::CpuCompileOptions options;
  if (auto level = parsed->Get("--opt-level")) {
    int l = 0;
    if (!absl::SimpleAtoi(*level, &l) || l < 0 || l > 3)
      return UsageError("compile", absl::StrCat("-O expects 0, 1, 2 or 3, got '", *level, "'"));
    options.opt_level = l;
  }
  if (!parsed->Has("--no-passes")) {
    absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline(
        parsed->Get("--profile").value_or("cpu"), DataSearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"),
        DataSearchDirs(parsed->Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options,
        profile ? &*profile : nullptr);
    if (!s.ok()) return Fail(std::string(s.message()));
    bool usage = false;
    if (absl::Status d = ApplyPipelineOptions(*parsed, options.profile, options.pipeline, &usage); !d.ok())
      return usage ? UsageError("compile", std::string(d.message())) : Fail(std::string(d.message()));
  }
  if (auto dir = parsed->Get("--dump-to")) options.dump_to = *dir;
  if (auto cpu = parsed->Get("--target-cpu")) options.target_cpu = *cpu;
  CompileProgress progress(parsed->Has("--verbose"));
  options.log = progress.Log();
  CompileRecorder recorder;
  if (parsed->Has("--dump-html")) options.recorder = &recorder;

  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  absl::StatusOr<runtime::Executable> exe = codegen::cpu::CpuCompiler::Compile(*module, options);
  if (!exe.ok()) return Fail(absl::StrCat(DisplayName(parsed->positional[0]), ": ", exe.status().message()));

  return WriteExecutable(*parsed, *exe);
}

}  // namespace hloc::cli
