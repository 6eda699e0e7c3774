// hloc: the command-line driver. `hloc SUBCOMMAND ...`; each subcommand is in its own file.
#include <iostream>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "engine/yaml_util.h"
#include "support/file_io.h"
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
  --version                    show the version, the commit, the LLVM and CUDA versions hloc
                               was built with and the GPU libraries found on this machine

FILE may be '-' to read standard input. Exit status: 0 on success, 1 when the input is bad
or a check fails (parse or verification error, evaluation error, output mismatch), 2 on a
command-line error.
)HELP";

using Command = int (*)(const std::vector<std::string>&);

// Every subcommand, in the order the usage lists them (dispatch, `hloc help NAME` and the
// unknown-command message all read this table, so none of them can miss one).
constexpr std::pair<const char*, Command> kCommands[] = {
    {"verify", hloc::cli::RunVerify}, {"print", hloc::cli::RunPrint},     {"eval", hloc::cli::RunEval},
    {"opt", hloc::cli::RunOpt},       {"compile", hloc::cli::RunCompile}, {"run", hloc::cli::RunRun},
};

Command FindCommand(const std::string& name) {
  for (const auto& [n, run] : kCommands)
    if (name == n) return run;
  return nullptr;
}

int UnknownCommand(const std::string& name) {
  std::string names;
  for (const auto& [n, run] : kCommands) names += std::string(names.empty() ? "" : ", ") + n;
  std::vector<std::string> candidates;
  for (const auto& [n, run] : kCommands) candidates.push_back(n);
  candidates.push_back("help");
  candidates.push_back("version");
  return hloc::cli::UsageError("", "unknown command '" + name + "'" + hloc::yaml::DidYouMean(name, candidates) +
                                       " (commands: " + names + ")");
}

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
      if (Command run = FindCommand(rest[0])) return run({"--help"});
      return UnknownCommand(rest[0]);
    }
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "--version" || command == "version") {
    PrintVersion(std::cout);
    return kExitOk;
  }
  if (Command run = FindCommand(command)) return run(rest);
  if (!command.empty() && command[0] == '-') return UsageError("", "unknown option '" + command + "'");
  return UnknownCommand(command);
}

}  // namespace

// Inputs too large for memory are refused up front (CheckParametersFit, Literal::Create,
// ReadWholeFile); an allocation that still fails ends the command with an error, not an abort.
int main(int argc, char** argv) {
  // Ctrl-C or a kill during a long compile, autotuning or an output write: one line on stderr,
  // no half-written output, cache or dump left behind, exit status 130 / 143.
  hloc::InstallInterruptCleanup();
  try {
    return Dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const std::bad_alloc&) {
    std::cerr << "hloc: error: out of memory (an allocation failed)\n";
    return hloc::cli::kExitFailure;
  }
}
