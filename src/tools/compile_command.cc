// hloc compile FILE --profile cpu -o OUT.hlox [--dump-to DIR]: compiles an HLO module for the
// CPU into a serialized executable (runtime/executable/executable.h) that `hloc run` loads.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "codegen/cpu/cpu_compiler.h"
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
  --profile C         a CPU hardware profile: a path, or a name looked up as C.yaml in the
                      configs folder (default: cpu). It names the pipeline and patches it.
  --no-passes         compile the module as it is (no HLO passes; each instruction then
                      becomes its own kernel)
  --dump-to DIR       write XLA-named dumps to DIR: module_0000.NAME.before_optimizations.txt,
                      ...after_optimizations.txt (the scheduled module),
                      ...after_optimizations-buffer-assignment.txt, ...thunk_sequence.txt
                      and module_0000.NAME.ll (the optimized LLVM IR)
  -O LEVEL            LLVM optimization level 0-3 (default 2)
  --target-cpu CPU    the CPU to compile for: host (default: this machine's CPU and
                      features) or an LLVM CPU name (x86-64, x86-64-v3, skylake-avx512, ...)
                      for an executable that runs on other machines
  -v, --verbose       print each pass and compile stage with its time to stderr
  --pipeline-dir DIR  where pipeline names are looked up first
  --config-dir DIR    where profile names are looked up first
  -h, --help          show this help

Exit status: 0 on success, 1 when the module is bad or cannot be compiled (the message names
the stage and the instruction), 2 on a command-line error.
)HELP";

std::string ExecutableDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::vector<std::string> SearchDirs(const std::optional<std::string>& flag, const char* env_var, const char* folder) {
  std::vector<std::string> dirs;
  if (flag) dirs.push_back(*flag);
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') dirs.push_back(env);
  if (std::string exe = ExecutableDir(); !exe.empty()) {
    dirs.push_back((fs::path(exe) / ".." / folder).lexically_normal().string());
    dirs.push_back((fs::path(exe) / ".." / "share" / "hloc" / folder).lexically_normal().string());
  }
  dirs.push_back(folder);
  return dirs;
}

int Fail(const std::string& message) {
  std::cerr << "hloc: error: " << message << "\n";
  return kExitFailure;
}

}  // namespace

int RunCompile(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("compile", args,
                          {{"--output", "-o", true},
                           {"--profile", "", true},
                           {"--no-passes", "", false},
                           {"--dump-to", "", true},
                           {"--opt-level", "-O", true},
                           {"--verbose", "-v", false},
                           {"--target-cpu", "", true},
                           {"--pipeline-dir", "", true},
                           {"--config-dir", "", true}});
  if (!parsed.ok()) return UsageError("compile", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1)
    return UsageError("compile", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  if (!parsed->Has("--output") && !parsed->Has("--dump-to"))
    return UsageError("compile", "missing -o OUT.hlox (or --dump-to DIR)");
  if (parsed->Has("--no-passes") && parsed->Has("--profile"))
    return UsageError("compile", "--no-passes and --profile cannot be combined");

  codegen::cpu::CpuCompileOptions options;
  if (auto level = parsed->Get("--opt-level")) {
    int l = 0;
    if (!absl::SimpleAtoi(*level, &l) || l < 0 || l > 3)
      return UsageError("compile", absl::StrCat("-O expects 0, 1, 2 or 3, got '", *level, "'"));
    options.opt_level = l;
  }
  if (!parsed->Has("--no-passes")) {
    absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline(
        parsed->Get("--profile").value_or("cpu"), SearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"),
        SearchDirs(parsed->Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options);
    if (!s.ok()) return Fail(std::string(s.message()));
  }
  if (auto dir = parsed->Get("--dump-to")) options.dump_to = *dir;
  if (auto cpu = parsed->Get("--target-cpu")) options.target_cpu = *cpu;
  if (parsed->Has("--verbose")) options.log = &std::cerr;

  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  absl::StatusOr<runtime::Executable> exe = codegen::cpu::CpuCompiler::Compile(*module, options);
  if (!exe.ok()) return Fail(absl::StrCat(DisplayName(parsed->positional[0]), ": ", exe.status().message()));

  if (auto out_path = parsed->Get("--output")) {
    const std::string bytes = exe->Serialize();
    std::ofstream out(*out_path, std::ios::binary | std::ios::trunc);
    if (!out) return Fail(absl::StrCat("cannot write '", *out_path, "'"));
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out) return Fail(absl::StrCat("write to '", *out_path, "' failed"));
    if (parsed->Has("--verbose"))
      std::cerr << "compile: wrote " << *out_path << " (" << bytes.size() << " bytes, " << exe->thunks.size()
                << " thunks)\n";
  }
  return kExitOk;
}

}  // namespace hloc::cli
