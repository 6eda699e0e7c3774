// hloc eval FILE --inputs IN.npz [--outputs OUT.npz] [--expect EXPECTED.npz] [--tol T]:
// runs the entry computation on the reference evaluator and checks its outputs.
#include <cmath>
#include <cstdlib>
#include <iostream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

constexpr char kHelp[] = R"HELP(Usage: hloc eval [options] FILE --inputs IN.npz

Runs the entry computation of the HLO module in FILE on the host reference evaluator and
prints one line per output: its name, type and shape, and with --expect the relative-norm
error ||out - ref|| / ||ref||, the threshold and the verdict.

Options:
  --inputs IN.npz     the entry parameters, in order: arrays named arg0..argN, or, when no
                      array is named like that, the arrays in file order. A .npy file gives
                      the only parameter. bf16 parameters are read from uint16 bit patterns
                      and f8 parameters from uint8 (numpy has neither type). Not needed when
                      the entry computation takes no parameters.
  --outputs OUT.npz   write the outputs as out0..outM: the flattened leaves of the entry
                      root (a tuple's elements in order, nested tuples flattened). bf16 is
                      written as uint16 and f8 as uint8 bit patterns.
  --expect EXP.npz    compare each output with EXP.npz's array of the same name (out0..outM,
                      or file order when no array is named so); exit 1 on any mismatch
  --tol T             threshold for every floating-point output. Default, per element type
                      (the corpus README's): f32/f64/c64/c128 1e-4, or 2e-3 where a dot or a
                      convolution can feed the output (found by a conservative walk of the
                      module, so approximate); f16 1e-2; bf16 and f8 3e-2. Integers and pred
                      always compare exactly; NaN equals NaN.
  --no-verify         do not run the verifier before evaluating
  -h, --help          show this help

Exit status: 0 when evaluation succeeds (and all outputs match with --expect), 1 on a bad
input file, an evaluation error or a mismatch, 2 on a command-line error.
)HELP";

}  // namespace

int RunEval(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("eval", args,
                          {{"--inputs", "", true},
                           {"--outputs", "", true},
                           {"--expect", "", true},
                           {"--tol", "", true},
                           {"--no-verify", "", false}});
  if (!parsed.ok()) return UsageError("eval", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return UsageError("eval", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  std::optional<double> tol;
  if (auto t = parsed->Get("--tol")) {
    double v;
    if (!absl::SimpleAtod(*t, &v) || !std::isfinite(v) || v < 0) {
      return UsageError("eval", absl::StrCat("--tol needs a non-negative number, got '", *t, "'"));
    }
    tol = v;
  }
  const std::string path = DisplayName(parsed->positional[0]);
  std::unique_ptr<HloModule> module = LoadModule(parsed->positional[0]);
  if (!module) return kExitFailure;
  if (!parsed->Has("--no-verify")) {
    absl::Status status = VerifyModule(*module);
    if (!status.ok()) {
      std::cerr << path << ": verification failed: " << status.message() << "\n";
      return kExitFailure;
    }
  }
  const HloComputation* entry = module->entry_computation();
  if (entry == nullptr) {
    std::cerr << path << ": the module has no entry computation\n";
    return kExitFailure;
  }

  // Inputs, matched to parameters by position and reinterpreted by the parameter's type.
  std::vector<Literal> inputs;
  const size_t num_params = static_cast<size_t>(entry->num_parameters());
  std::optional<std::string> inputs_path = parsed->Get("--inputs");
  if (!inputs_path && num_params > 0) {
    return UsageError("eval", absl::StrCat("--inputs is required: the entry computation takes ", num_params,
                                           " parameter", num_params == 1 ? "" : "s"));
  }
  if (inputs_path) {
    auto arrays = ReadArrays(*inputs_path);
    if (!arrays.ok()) {
      std::cerr << "hloc: error: " << arrays.status().message() << "\n";
      return kExitFailure;
    }
    auto matched = MatchArrays(*arrays, num_params, "arg", *inputs_path, "parameters");
    if (!matched.ok()) {
      std::cerr << "hloc: error: " << matched.status().message() << "\n";
      return kExitFailure;
    }
    for (size_t i = 0; i < num_params; ++i) {
      const Shape& shape = entry->parameter_instruction(static_cast<int64_t>(i))->shape();
      auto lit = ReinterpretAs(*(*matched)[i], shape);
      if (!lit.ok()) {
        std::cerr << "hloc: error: " << *inputs_path << ": parameter " << i << ": " << lit.status().message()
                  << "\n";
        return kExitFailure;
      }
      inputs.push_back(std::move(*lit));
    }
  }

  EvaluatorOptions eval_options;
  eval_options.replica_count = module->config().replica_count;
  auto result = EvaluateModule(*module, inputs, eval_options);
  if (!result.ok()) {
    std::cerr << path << ": evaluation failed: " << result.status().message() << "\n";
    return kExitFailure;
  }
  std::vector<const Literal*> outputs = FlattenLeaves(*result);
  if (auto out_path = parsed->Get("--outputs")) {
    absl::Status status = WriteOutputsNpz(*out_path, outputs);
    if (!status.ok()) {
      std::cerr << "hloc: error: " << status.message() << "\n";
      return kExitFailure;
    }
  }
  std::optional<std::string> expect_path = parsed->Get("--expect");
  if (!expect_path) {
    PrintOutputs(outputs);
    return kExitOk;
  }
  return CheckOutputs(outputs, *expect_path, module.get(), tol, path);
}

}  // namespace hloc::cli
