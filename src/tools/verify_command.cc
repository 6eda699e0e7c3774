// hloc verify FILE: parse, then run the verifier (structure and shape inference).
#include <iostream>

#include "ir/verifier.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

constexpr char kHelp[] = R"HELP(Usage: hloc verify [options] FILE

Parses the HLO module in FILE ('-' for standard input) and runs the verifier: structural
checks and shape inference for every instruction. Prints 'FILE: ok (...)' on success.

Options:
  --allow-mixed-precision   accept mixed float precisions on elementwise ops (as XLA's
                            verifier option of that name)
  -h, --help                show this help

Exit status: 0 when the module parses and verifies, 1 on a parse error (printed as
FILE:LINE:COL: message) or a verification error, 2 on a command-line error.
)HELP";

}  // namespace

int RunVerify(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("verify", args, {{"--allow-mixed-precision", "", false}});
  if (!parsed.ok()) return UsageError("verify", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return UsageError("verify", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  const std::string path = DisplayName(parsed->positional[0]);
  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  VerifierOptions options;
  options.allow_mixed_precision = parsed->Has("--allow-mixed-precision");
  absl::Status status = VerifyModule(*module, options);
  if (!status.ok()) {
    std::cerr << path << ": verification failed: " << status.message() << "\n";
    return kExitFailure;
  }
  std::cout << path << ": ok (module " << module->name() << ": " << module->computations().size()
            << " computations, " << CountInstructions(*module) << " instructions)\n";
  return kExitOk;
}

}  // namespace hloc::cli
