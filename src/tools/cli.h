// Shared pieces of the `hloc` command line: option parsing, exit codes, module loading.
// Each subcommand lives in its own file (verify_command.cc, print_command.cc, eval_command.cc).
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "io/npy.h"
#include "ir/literal.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "ir/module.h"

namespace hloc::cli {

// Exit codes: 0 success, 1 the work failed (bad input file, verification or evaluation
// error, output mismatch), 2 the command line itself is wrong.
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

inline constexpr char kVersion[] = "0.1.0";

struct OptionSpec {
  std::string name;         // "--inputs"
  std::string short_name;   // "-o", or empty
  bool takes_value = false;
  // A flag that may also be given as --name=VALUE (--trace-rules=all); Get returns "" without it.
  bool value_optional = false;
};

struct ParsedArgs {
  std::vector<std::string> positional;
  absl::flat_hash_map<std::string, std::string> values;  // by long name; "" for plain flags
  bool help = false;

  bool Has(const std::string& name) const { return values.contains(name); }
  std::optional<std::string> Get(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

// Parses `args` (after the subcommand name) against `specs`. Accepts "--name value",
// "--name=value", "-o value", "--" (all that follows is positional) and "-" (stdin) as a
// positional. -h/--help anywhere sets `help`. Errors (unknown option, missing value, an
// option given twice) name the command so the message can be printed as it is.
absl::StatusOr<ParsedArgs> ParseArgs(const std::string& command, const std::vector<std::string>& args,
                                     const std::vector<OptionSpec>& specs);

// Prints "hloc: error: MESSAGE" and a pointer to the command's help; returns kExitUsage.
int UsageError(const std::string& command, const std::string& message);

// Reads and parses an HLO module ("-" reads standard input). Errors are printed to stderr
// (parse errors as FILE:LINE:COL: message) and nullptr is returned.
std::unique_ptr<HloModule> LoadModule(const std::string& path);

// --disable-passes a,b (hloc opt, compile, run): switches off these passes, groups or labels of
// the pipeline the profile chose; an error names what is unknown. Nothing without the option.
absl::Status ApplyDisablePasses(const ParsedArgs& args, std::optional<Pipeline>& pipeline);

// --pipeline P, --disable-passes a,b and --tuning K=V,... (hloc compile, run), applied to what the
// profile loaded: P (a path, or a name looked up as P.yaml like the profile's own pipeline)
// replaces the profile's pipeline and is patched by the profile as `hloc opt --pipeline` does;
// then the passes are disabled (ApplyDisablePasses) and the tuning numbers set. Nothing
// without the options. `command_line_error` says whether an error is the command line's (exit
// 2) or the pipeline file's (exit 1).
absl::Status ApplyPipelineOptions(const ParsedArgs& args, std::optional<Profile>& profile,
                                  std::optional<Pipeline>& pipeline, bool* command_line_error);
// The options above, for each command's table.
inline const std::vector<OptionSpec>& PipelineOptionSpecs() {
  static const std::vector<OptionSpec> specs = {{"--pipeline", "", true}, {"--tuning", "", true}};
  return specs;
}

// How messages name the module file ("<stdin>" for "-").
inline std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// --- arrays in and out (eval_command.cc, run_command.cc) ---
// The arrays of an .npz file, or the one array of a .npy file.
absl::StatusOr<std::vector<NpyArray>> ReadArrays(const std::string& path);
// Picks the arrays for `count` slots: by name PREFIX0..PREFIX{count-1} when any array is named
// that way, else in file order. Errors say which array is missing or extra.
absl::StatusOr<std::vector<const NpyArray*>> MatchArrays(const std::vector<NpyArray>& arrays, size_t count,
                                                         const std::string& prefix, const std::string& file,
                                                         const std::string& what);
// Refuses entry parameters (their global shapes, as the user supplies them) that cannot all be
// held in this process's memory, before any work is done: "WHERE: cannot allocate N bytes for
// parameter P (SHAPE): ...". Random inputs and --inputs alike need them in memory.
absl::Status CheckParametersFit(const std::vector<Shape>& params, const std::string& where);
// Writes outputs as out0..outM (bf16 as uint16, f8 as uint8 bit patterns).
absl::Status WriteOutputsNpz(const std::string& path, const std::vector<const Literal*>& outputs);
// Warns on stderr when the module's text elided constants as {...} (XLA's dumps do unless
// --xla_dump_large_constants): they parse as zeros, so results computed from it are not the
// program's. LoadModule calls it; so does every other path that parses a module to run it.
void WarnElidedConstants(const HloModule& module, const std::string& display_path);
// One line per output: "outI TYPE[DIMS]", with the values when there are at most 16.
void PrintOutputs(const std::vector<const Literal*>& outputs);
// Compares outputs with EXPECT.npz (out0..outM or file order) using src/eval/compare.h's
// thresholds and absolute floors (`tol` and `atol` override them; `module`, when given, finds the
// outputs a dot or convolution feeds), prints one line per output and "PATH: N of N outputs
// match"; returns the exit code.
int CheckOutputs(const std::vector<const Literal*>& outputs, const std::string& expect_path, const HloModule* module,
                 std::optional<double> tol, std::optional<double> atol, const std::string& display_path);
// Folders to look for a resource folder in ("configs", "pipelines"): the flag's, the
// environment variable's, `extra` when not empty (e.g. beside a profile file), beside the hloc
// binary's folder (and ../share/hloc, where `cmake --install` puts them), then ./folder, and
// last the copies built into hloc ("<built-in>/folder", src/engine/builtin_data.h).
std::vector<std::string> DataSearchDirs(const std::optional<std::string>& flag, const char* env_var,
                                        const char* folder, const std::string& extra = "");

// Counts for a one-line summary of a module.
int64_t CountInstructions(const HloModule& module);

// Progress of a long compile (hloc compile, run): with -v every pass and stage line goes to
// stderr; without it, on a terminal (or with HLOC_PROGRESS=1; HLOC_PROGRESS=0 silences it), the
// compile stages' lines ("compile: STAGE  T s") and the passes that took a second or more, so a
// 40-second compile is not silent. Log() is what to hand the compiler (null: nothing).
class CompileProgress {
 public:
  explicit CompileProgress(bool verbose);
  ~CompileProgress();
  std::ostream* Log() { return log_; }

 private:
  class Filter;
  std::unique_ptr<Filter> filter_;
  std::unique_ptr<std::ostream> stream_;
  std::ostream* log_ = nullptr;
};

// `hloc --version` (version.cc): the version, commit, what hloc was built with and the GPU
// libraries found on this machine.
void PrintVersion(std::ostream& out);

// Subcommands: each takes the arguments after its name and returns the exit code.
int RunVerify(const std::vector<std::string>& args);
int RunPrint(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);
int RunOpt(const std::vector<std::string>& args);  // opt_command.cc
int RunCompile(const std::vector<std::string>& args);  // compile_command.cc
int RunRun(const std::vector<std::string>& args);      // run_command.cc

}  // namespace hloc::cli
