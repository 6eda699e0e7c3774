// Shared pieces of the `hloc` command line: option parsing, exit codes, module loading.
// Each subcommand lives in its own file (verify_command.cc, print_command.cc, eval_command.cc).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
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

// How messages name the module file ("<stdin>" for "-").
inline std::string DisplayName(const std::string& path) { return path == "-" ? "<stdin>" : path; }

// Counts for a one-line summary of a module.
int64_t CountInstructions(const HloModule& module);

// Subcommands: each takes the arguments after its name and returns the exit code.
int RunVerify(const std::vector<std::string>& args);
int RunPrint(const std::vector<std::string>& args);
int RunEval(const std::vector<std::string>& args);
int RunOpt(const std::vector<std::string>& args);  // opt_command.cc

}  // namespace hloc::cli
