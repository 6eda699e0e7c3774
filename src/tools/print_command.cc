// hloc print FILE: parse and print back in XLA's text format (default, long or short form).
#include <iostream>

#include "ir/hlo_printer.h"
#include "support/file_io.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

constexpr char kHelp[] = R"HELP(Usage: hloc print [options] FILE

Parses the HLO module in FILE ('-' for standard input) and prints it in XLA's text format.
The output parses back to the same module, and printing it again gives the same text.

Options:
  --long          XLA's long form: operand shapes printed ("add(f32[] %a, f32[] %b)")
  --short         XLA's short parsable form: no operand shapes, metadata, % names or
                  backend configs
  -o, --output OUT
                  write to OUT instead of standard output
  -h, --help      show this help

Without --long or --short, modules print as XLA's dumps do: % names, operands without
shapes, metadata, backend configs and JAX's stack-frame tables kept.
Exit status: 0 on success, 1 on a parse error (FILE:LINE:COL: message) or write error,
2 on a command-line error.
)HELP";

}  // namespace

int RunPrint(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("print", args,
                          {{"--long", "", false}, {"--short", "", false}, {"--output", "-o", true}});
  if (!parsed.ok()) return UsageError("print", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return UsageError("print", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  if (parsed->Has("--long") && parsed->Has("--short")) {
    return UsageError("print", "--long and --short cannot be combined");
  }
  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  HloPrintOptions options;
  if (parsed->Has("--long")) options = HloPrintOptions::Long();
  if (parsed->Has("--short")) options = HloPrintOptions::ShortParsable();
  std::string text = PrintModule(*module, options);
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  if (auto out_path = parsed->Get("--output"); out_path && *out_path != "-") {
    if (absl::Status s = WriteFileAtomically(*out_path, text); !s.ok()) {
      std::cerr << "hloc: error: " << s.message() << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }
  std::cout << text;
  std::cout.flush();
  return std::cout ? kExitOk : kExitFailure;
}

}  // namespace hloc::cli
