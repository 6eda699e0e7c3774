// hloc: the command-line driver. `hloc SUBCOMMAND ...`; each subcommand is in its own file.
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "tools/cli.h"

namespace {

constexpr char kUsage[] = R"HELP(hloc: a compiler for XLA's HLO

Usage: hloc <command> [options] FILE

Commands:
  verify FILE                  parse an HLO module and run the verifier
  print FILE                   parse an HLO module and print it back in XLA's text format
  eval FILE --inputs IN.npz    run the module on the host reference evaluator
  opt FILE [--profile C]       run a pass pipeline (YAML manifest or profile) and print the
                               optimized module
  compile FILE -o OUT.hlox     compile into an executable file for the profile's hardware:
                               the host CPU (default, --profile cpu: an ELF object) or a GPU
                               (--profile h200|h100|a100: PTX, cuBLAS/cuDNN thunks, CUDA
                               graphs; deviceless); --dump-to DIR writes XLA's dumps
  run FILE|EXE.hlox            compile (HLO text) or load an executable and run it on the
                               CPU or, with --backend gpu, on an NVIDIA GPU (--inputs,
                               --expect, --outputs, --bench N, --per-thunk)

Options:
  -h, --help                   show this help (also 'hloc <command> --help')
  --version                    show the version

FILE may be '-' to read standard input. Exit status: 0 on success, 1 when the input is bad
or a check fails (parse or verification error, evaluation error, output mismatch), 2 on a
command-line error.
)HELP";

int Dispatch(const std::vector<std::string>& args) {
  using namespace hloc::cli;
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string command = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "-h" || command == "--help" || command == "help") {
    if (command == "help" && !rest.empty()) {
      // `hloc help eval` is `hloc eval --help`.
      std::vector<std::string> help_args = {"--help"};
      if (rest[0] == "verify") return RunVerify(help_args);
      if (rest[0] == "print") return RunPrint(help_args);
      if (rest[0] == "eval") return RunEval(help_args);
      if (rest[0] == "opt") return RunOpt(help_args);
      if (rest[0] == "compile") return RunCompile(help_args);
      if (rest[0] == "run") return RunRun(help_args);
      return UsageError("", "unknown command '" + rest[0] + "'");
    }
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "--version" || command == "version") {
    std::cout << "hloc " << kVersion << "\n";
    return kExitOk;
  }
  if (command == "verify") return RunVerify(rest);
  if (command == "print") return RunPrint(rest);
  if (command == "eval") return RunEval(rest);
  if (command == "opt") return RunOpt(rest);
  if (command == "compile") return RunCompile(rest);
  if (command == "run") return RunRun(rest);
  if (!command.empty() && command[0] == '-') return UsageError("", "unknown option '" + command + "'");
  return UsageError("", "unknown command '" + command + "' (commands: verify, print, eval, opt)");
}

}  // namespace

// Inputs too large for memory are refused up front (CheckParametersFit, Literal::Create,
// ReadWholeFile); an allocation that still fails ends the command with an error, not an abort.
int main(int argc, char** argv) {
  try {
    return Dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    std::cerr << "hloc: error: out of memory (an allocation failed)\n";
    return hloc::cli::kExitFailure;
  }
}
