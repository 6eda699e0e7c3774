// hloc eval FILE --inputs IN.npz [--outputs OUT.npz] [--expect EXPECTED.npz] [--tol T] [--atol A]
// [--bench N] [--seed S]: runs the entry computation on the reference evaluator and checks its
// outputs (or times it: scripts/bench-cpu sets the evaluator's time beside `hloc run`'s).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "eval/spmd_eval.h"
#include "tools/cli.h"
#include "passes/spmd/device_io.h"

namespace hloc::cli {
namespace {

using spmd::IsMultiDevice;
using spmd::JoinOutputs;
using spmd::PrepareSpmd;
using spmd::SpmdLayout;
using spmd::SplitInputs;

// `hloc run`'s seeded inputs (run_command.cc RandomLiteral), for the parameter's row-major
// array: the same distributions in the same order, so a seed means the same values in both.
absl::StatusOr<Literal> RandomParameter(const Shape& param, std::mt19937_64& rng) {
  if (!param.IsArray()) {
    return absl::UnimplementedError("random inputs are made for array parameters only; give --inputs");
  }
  auto literal = Literal::Create(Shape(param.element_type(), param.dimensions()));
  if (!literal.ok()) return literal.status();
  const PrimitiveType t = param.element_type();
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> small(0, 9);
  for (int64_t i = 0; i < literal->element_count(); ++i) {
    if (t == PrimitiveType::PRED) {
      literal->SetInt(i, static_cast<int64_t>(rng() & 1));
    } else if (IsComplex(t)) {
      const double re = real(rng);
      literal->SetComplex(i, {re, real(rng)});
    } else if (IsFloatingPoint(t)) {
      literal->SetDouble(i, real(rng));
    } else {
      literal->SetInt(i, small(rng));
    }
  }
  // A bounded dynamic dimension (f32[<=4,10]) is drawn at its bound, as `hloc run` draws and runs
  // it; the argument then carries the parameter's dynamic dimensions.
  literal->mutable_shape().mutable_dynamic_dimensions() = param.dynamic_dimensions();
  return std::move(*literal);
}

// Every device of the per-device program on its own thread (EvaluatePartitioned), the inputs
// cut into shards and the outputs joined.
absl::StatusOr<Literal> EvaluateOnDevices(const HloModule& module, const SpmdLayout& layout,
                                          const std::vector<Literal>& inputs, const EvaluatorOptions& options) {
  auto args = SplitInputs(layout, inputs);
  if (!args.ok()) return args.status();
  auto results = EvaluatePartitioned(module, *args, options);
  if (!results.ok()) return results.status();
  return JoinOutputs(layout, *results);
}

constexpr char kHelp[] = R"HELP(Usage: hloc eval [options] FILE --inputs IN.npz

Runs the entry computation of the HLO module in FILE on the host reference evaluator and
prints one line per output: its name, type and shape, and with --expect the relative-norm
error ||out - ref|| / ||ref||, the threshold and the verdict.

A module for several devices (num_partitions or replica_count above 1) runs on that many
simulated devices, one thread each: a module with global shapes (as JAX hands it to XLA) is
partitioned first (sharding-propagation, spmd-partitioning); the inputs are the global arrays,
cut into each device's shard by the entry parameters' shardings, and the outputs are joined
by the result's. A per-device module (hloc's partitioned output, or XLA's optimized dump) is
run as it is, its global shapes being the local ones times the tiles.

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
  --atol A            absolute floor for every floating-point output: it also matches when
                      the root-mean-square of the difference is at most A. Default (the
                      corpus README's): f32/f64 1e-7, or 1e-6 where a dot or convolution can
                      feed it; f16/bf16/f8 1e-3 (a mathematically zero output is rounding
                      noise on both sides)
  --seed N            without --inputs: random parameters from seed N, drawn as `hloc run`
                      draws them (floating point uniform in [-1, 1), integers 0..9, pred a
                      random bit; parameter by parameter, element by element), so the
                      same seed gives both commands the same inputs
  --bench N           evaluate N times and print "bench: module=NAME backend=eval runs=N
                      median_ms=X min_ms=X mean_ms=X": only the evaluation is timed, not
                      parsing, verifying or reading inputs. Without --inputs the inputs
                      are random (--seed, default 0). The outputs are not printed unless
                      --outputs or --expect asks for them.
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
                           {"--atol", "", true},
                           {"--seed", "", true},
                           {"--bench", "", true},
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
  std::optional<double> atol;
  if (auto t = parsed->Get("--atol")) {
    double v;
    if (!absl::SimpleAtod(*t, &v) || !std::isfinite(v) || v < 0) {
      return UsageError("eval", absl::StrCat("--atol needs a non-negative number, got '", *t, "'"));
    }
    atol = v;
  }
  int64_t bench = 0, seed = 0;
  if (auto v = parsed->Get("--bench"); v && (!absl::SimpleAtoi(*v, &bench) || bench < 1 || bench > 1000000)) {
    return UsageError("eval", absl::StrCat("--bench needs a number of runs from 1 to 1000000, got '", *v, "'"));
  }
  if (auto v = parsed->Get("--seed"); v && (!absl::SimpleAtoi(*v, &seed) || seed < 0)) {
    return UsageError("eval", absl::StrCat("--seed needs a non-negative integer, got '", *v, "'"));
  }
  if (parsed->Has("--inputs") && parsed->Has("--seed")) {
    return UsageError("eval", "--seed makes random inputs; it cannot be combined with --inputs");
  }
  const bool random_inputs = !parsed->Has("--inputs") && (parsed->Has("--seed") || bench > 0);
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

  // A module for several devices becomes the per-device program first; inputs and outputs
  // stay global (spmd_driver.h).
  std::optional<spmd::SpmdLayout> spmd;
  if (IsMultiDevice(*module)) {
    auto layout = PrepareSpmd(*module, /*partition=*/true);
    if (!layout.ok()) {
      std::cerr << path << ": SPMD partitioning failed: " << layout.status().message() << "\n";
      return kExitFailure;
    }
    spmd = std::move(*layout);
  }
  auto param_shape = [&](size_t i) -> const Shape& {
    return spmd ? spmd->global_params.at(i) : entry->parameter_instruction(static_cast<int64_t>(i))->shape();
  };

  // Inputs, matched to parameters by position and reinterpreted by the parameter's type.
  std::vector<Literal> inputs;
  const size_t num_params = static_cast<size_t>(entry->num_parameters());
  std::optional<std::string> inputs_path = parsed->Get("--inputs");
  if (!inputs_path && num_params > 0 && !random_inputs) {
    return UsageError("eval", absl::StrCat("--inputs is required: the entry computation takes ", num_params,
                                           " parameter", num_params == 1 ? "" : "s"));
  }
  // Before any input is read or made: parameters that cannot be held make evaluation impossible.
  std::vector<Shape> param_shapes;
  for (size_t i = 0; i < num_params; ++i) param_shapes.push_back(param_shape(i));
  if (absl::Status s = CheckParametersFit(param_shapes, path); !s.ok()) {
    std::cerr << "hloc: error: " << s.message() << "\n";
    return kExitFailure;
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
      const Shape& shape = param_shape(i);
      auto lit = ReinterpretAs(*(*matched)[i], shape);
      if (!lit.ok()) {
        std::cerr << "hloc: error: " << *inputs_path << ": parameter " << i << ": " << lit.status().message()
                  << "\n";
        return kExitFailure;
      }
      inputs.push_back(std::move(*lit));
    }
  } else if (random_inputs) {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    for (size_t i = 0; i < num_params; ++i) {
      auto lit = RandomParameter(param_shape(i), rng);
      if (!lit.ok()) {
        std::cerr << "hloc: error: " << path << ": parameter " << i << ": " << lit.status().message() << "\n";
        return kExitFailure;
      }
      inputs.push_back(std::move(*lit));
    }
  }

  EvaluatorOptions eval_options;
  eval_options.replica_count = module->config().replica_count;
  // Only the evaluation is timed (--bench): parsing, verifying and inputs are done already.
  std::vector<double> times;
  absl::StatusOr<Literal> result = absl::UnknownError("not evaluated");
  for (int64_t run = 0; run < std::max<int64_t>(bench, 1); ++run) {
    const auto start = std::chrono::steady_clock::now();
    result = spmd ? EvaluateOnDevices(*module, *spmd, inputs, eval_options)
                  : EvaluateModule(*module, inputs, eval_options);
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!result.ok()) {
      std::cerr << path << ": evaluation failed: " << result.status().message() << "\n";
      return kExitFailure;
    }
  }
  if (bench > 0) {
    std::sort(times.begin(), times.end());
    const size_t n = times.size();
    const double median = n % 2 ? times[n / 2] : (times[n / 2 - 1] + times[n / 2]) / 2;
    double mean = 0;
    for (double t : times) mean += t / static_cast<double>(n);
    std::cout << absl::StrFormat("bench: module=%s backend=eval runs=%d median_ms=%.4f min_ms=%.4f mean_ms=%.4f\n",
                                 module->name().empty() ? std::string("module") : std::string(module->name()), n,
                                 median, times.front(), mean);
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
    if (bench == 0) PrintOutputs(outputs);
    return kExitOk;
  }
  return CheckOutputs(outputs, *expect_path, module.get(), tol, atol, path);
}

}  // namespace hloc::cli
