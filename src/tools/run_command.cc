// hloc run FILE|EXE.hlox --backend cpu [--inputs IN.npz] [--expect E.npz] [--outputs OUT.npz]
// [--bench N]: compiles an HLO module for the CPU (or loads a compiled executable), runs it with
// the CPU runtime (runtime/cpu) and checks or writes its outputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/cpu/cpu_compiler.h"
#include "ir/hlo_parser.h"
#include "ir/verifier.h"
#include "runtime/cpu/cpu_executable.h"
#include "runtime/executable/executable.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

constexpr char kHelp[] = R"HELP(Usage: hloc run [options] FILE|EXE.hlox [--inputs IN.npz]

Runs an HLO module on a backend. FILE is HLO text (compiled first, as `hloc compile` does) or
an executable written by `hloc compile -o EXE.hlox` (recognised by its "HLOX" header). Prints
one line per output, or with --expect the comparison with the expected outputs.

Options:
  --backend B         cpu (default). gpu is not built yet.
  --inputs IN.npz     the entry parameters, in order: arrays named arg0..argN, or, when no
                      array is named like that, the arrays in file order (as `hloc eval`).
                      bf16 parameters are read from uint16 bit patterns, f8 from uint8.
                      Without it the parameters are random, from --seed: floating-point
                      (and complex parts) uniform in [-1, 1), integers uniform in [0, 10) (so
                      index-like parameters stay in range), pred 0 or 1 with equal chance.
  --seed N            seed of the random inputs (default 0; the same seed gives the same
                      inputs on every machine)
  --expect EXP.npz    compare each output with EXP.npz's array of the same name (out0..outM,
                      or file order) with the thresholds of `hloc eval --expect`; exit 1 on
                      any mismatch
  --tol T             threshold for every floating-point output (overrides the defaults)
  --outputs OUT.npz   write the outputs as out0..outM (row-major; bf16 as uint16)
  --bench N           after one warm-up run, time N more runs and print
                      "bench: module=NAME backend=cpu threads=T runs=N median_ms=X min_ms=X
                      mean_ms=X compile_ms=X load_ms=X" (compile_ms is 0 for an .hlox)
  --threads N         threads of the CPU runtime (default: all cores)
  --profile C         when compiling FILE: a CPU hardware profile, a path or a name looked up
                      as C.yaml in the configs folder (default: cpu)
  --no-passes         when compiling FILE: no HLO passes (each instruction its own kernel)
  --config-dir DIR    where profile names are looked up first
  --pipeline-dir DIR  where pipeline names are looked up first
  -h, --help          show this help

Exit status: 0 when the run succeeds (and all outputs match with --expect), 1 on a bad input
file, a compile or run error or a mismatch, 2 on a command-line error.
)HELP";

int Fail(const std::string& message) {
  std::cerr << "hloc: error: " << message << "\n";
  return kExitFailure;
}

double Millis(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path) {
  if (path == "-") return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not an HLO or executable file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read '", path, "'"));
  return bytes.str();
}

// The ir Shape of an executable's array (row-major: literals hold their data that way).
absl::StatusOr<Shape> IrShape(const runtime::ArrayShape& s) {
  std::optional<PrimitiveType> type = ParsePrimitiveType(s.element_type);
  if (!type || !IsArrayType(*type)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown element type '", s.element_type, "'"));
  }
  return Shape(*type, s.dimensions);
}

// A literal's bytes as the runtime argument for `param` (row-major; the runtime moves it into
// the parameter's layout).
absl::StatusOr<runtime::HostBuffer> ToHostBuffer(const Literal& literal, const runtime::ArrayShape& param) {
  runtime::HostBuffer b;
  b.shape = param;
  b.shape.minor_to_major.clear();
  if (literal.size_bytes() != param.byte_size()) {
    return absl::UnimplementedError(absl::StrCat(param.element_type, " arrays of ", literal.size_bytes(),
                                                 " bytes do not match the runtime's ", param.byte_size()));
  }
  b.data.assign(literal.untyped_data(), literal.untyped_data() + literal.size_bytes());
  return b;
}

absl::StatusOr<Literal> ToLiteral(const runtime::HostBuffer& buffer) {
  auto shape = IrShape(buffer.shape);
  if (!shape.ok()) return shape.status();
  auto row_major = runtime::ToLayout(buffer, {});
  if (!row_major.ok()) return row_major.status();
  auto literal = Literal::Create(*shape);
  if (!literal.ok()) return literal.status();
  if (literal->size_bytes() != static_cast<int64_t>(row_major->data.size())) {
    return absl::UnimplementedError(absl::StrCat("output of type ", buffer.shape.element_type, " holds ",
                                                 row_major->data.size(), " bytes, a literal ",
                                                 literal->size_bytes()));
  }
  if (!row_major->data.empty()) std::memcpy(literal->untyped_data(), row_major->data.data(), row_major->data.size());
  return std::move(*literal);
}

// Seeded inputs; see --inputs in the help for the distributions.
absl::StatusOr<Literal> RandomLiteral(const runtime::ArrayShape& param, std::mt19937_64& rng) {
  auto shape = IrShape(param);
  if (!shape.ok()) return shape.status();
  auto literal = Literal::Create(*shape);
  if (!literal.ok()) return literal.status();
  const PrimitiveType t = shape->element_type();
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
  return std::move(*literal);
}

struct Loaded {
  runtime::Executable executable;
  std::unique_ptr<HloModule> module;  // for output thresholds; null when the text does not parse
  double compile_ms = 0;
};

}  // namespace

int RunRun(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("run", args,
                          {{"--backend", "", true},
                           {"--inputs", "", true},
                           {"--expect", "", true},
                           {"--outputs", "", true},
                           {"--tol", "", true},
                           {"--bench", "", true},
                           {"--seed", "", true},
                           {"--threads", "", true},
                           {"--profile", "", true},
                           {"--no-passes", "", false},
                           {"--config-dir", "", true},
                           {"--pipeline-dir", "", true}});
  if (!parsed.ok()) return UsageError("run", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->positional.size() != 1) {
    return UsageError("run", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  const std::string backend = parsed->Get("--backend").value_or("cpu");
  if (backend == "gpu") return Fail("--backend gpu: the GPU runtime is not built yet; use --backend cpu");
  if (backend != "cpu") return UsageError("run", absl::StrCat("unknown backend '", backend, "' (cpu or gpu)"));
  auto int_flag = [&](const char* name, int64_t min, int64_t max, int64_t fallback, int64_t* out) -> bool {
    *out = fallback;
    auto v = parsed->Get(name);
    if (!v) return true;
    return absl::SimpleAtoi(*v, out) && *out >= min && *out <= max;
  };
  int64_t bench = 0, seed = 0, threads = 0;
  if (!int_flag("--bench", 1, 1000000, 0, &bench)) {
    return UsageError("run", absl::StrCat("--bench needs a number of runs from 1 to 1000000, got '",
                                          *parsed->Get("--bench"), "'"));
  }
  if (!int_flag("--seed", 0, INT64_MAX, 0, &seed)) {
    return UsageError("run", absl::StrCat("--seed needs a non-negative integer, got '", *parsed->Get("--seed"), "'"));
  }
  if (!int_flag("--threads", 1, 4096, 0, &threads)) {
    return UsageError("run", absl::StrCat("--threads needs a number from 1 to 4096, got '",
                                          *parsed->Get("--threads"), "'"));
  }
  std::optional<double> tol;
  if (auto t = parsed->Get("--tol")) {
    double v;
    if (!absl::SimpleAtod(*t, &v) || !std::isfinite(v) || v < 0) {
      return UsageError("run", absl::StrCat("--tol needs a non-negative number, got '", *t, "'"));
    }
    tol = v;
  }
  if (parsed->Has("--inputs") && parsed->Has("--seed")) {
    return UsageError("run", "--seed makes random inputs; it cannot be combined with --inputs");
  }
  if (parsed->Has("--no-passes") && parsed->Has("--profile")) {
    return UsageError("run", "--no-passes and --profile cannot be combined");
  }

  // --- the executable: deserialized, or compiled from HLO text ---
  const std::string& file = parsed->positional[0];
  const std::string path = DisplayName(file);
  auto bytes = ReadFileBytes(file);
  if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
  Loaded loaded;
  if (bytes->compare(0, 4, "HLOX") == 0) {
    if (parsed->Has("--profile") || parsed->Has("--no-passes")) {
      return UsageError("run", absl::StrCat("--profile and --no-passes apply when compiling HLO text; ", path,
                                            " is compiled already"));
    }
    auto exe = runtime::Executable::Deserialize(*bytes, path);
    if (!exe.ok()) return Fail(std::string(exe.status().message()));
    loaded.executable = std::move(*exe);
    if (!loaded.executable.hlo_text.empty()) {
      auto module = ParseHloModule(loaded.executable.hlo_text, path + " (embedded HLO)");
      if (module.ok()) loaded.module = std::move(*module);
    }
  } else {
    auto module = ParseHloModule(*bytes, path);
    if (!module.ok()) {
      std::cerr << module.status().message() << "\n";
      return kExitFailure;
    }
    if (absl::Status s = VerifyModule(**module); !s.ok()) {
      return Fail(absl::StrCat(path, ": verification failed: ", s.message()));
    }
    codegen::cpu::CpuCompileOptions options;
    if (!parsed->Has("--no-passes")) {
      absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline(
          parsed->Get("--profile").value_or("cpu"),
          DataSearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"),
          DataSearchDirs(parsed->Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options);
      if (!s.ok()) return Fail(std::string(s.message()));
    }
    const auto start = std::chrono::steady_clock::now();
    auto exe = codegen::cpu::CpuCompiler::Compile(**module, options);
    loaded.compile_ms = Millis(std::chrono::steady_clock::now() - start);
    if (!exe.ok()) return Fail(absl::StrCat(path, ": ", exe.status().message()));
    loaded.executable = std::move(*exe);
    loaded.module = std::move(*module);
  }
  const runtime::Executable& exe_ref = loaded.executable;
  const std::vector<runtime::ArrayShape> params = exe_ref.parameter_shapes;
  const std::string module_name = exe_ref.module_name;

  // --- inputs ---
  std::vector<runtime::HostBuffer> arguments;
  if (auto inputs_path = parsed->Get("--inputs")) {
    auto arrays = ReadArrays(*inputs_path);
    if (!arrays.ok()) return Fail(std::string(arrays.status().message()));
    auto matched = MatchArrays(*arrays, params.size(), "arg", *inputs_path, "parameters");
    if (!matched.ok()) return Fail(std::string(matched.status().message()));
    for (size_t i = 0; i < params.size(); ++i) {
      auto shape = IrShape(params[i]);
      if (!shape.ok()) return Fail(absl::StrCat(path, ": parameter ", i, ": ", shape.status().message()));
      auto literal = ReinterpretAs(*(*matched)[i], *shape);
      if (!literal.ok()) {
        return Fail(absl::StrCat(*inputs_path, ": parameter ", i, ": ", literal.status().message()));
      }
      auto buffer = ToHostBuffer(*literal, params[i]);
      if (!buffer.ok()) return Fail(absl::StrCat("parameter ", i, ": ", buffer.status().message()));
      arguments.push_back(std::move(*buffer));
    }
  } else {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    for (size_t i = 0; i < params.size(); ++i) {
      auto literal = RandomLiteral(params[i], rng);
      if (!literal.ok()) return Fail(absl::StrCat(path, ": parameter ", i, ": ", literal.status().message()));
      auto buffer = ToHostBuffer(*literal, params[i]);
      if (!buffer.ok()) return Fail(absl::StrCat("parameter ", i, ": ", buffer.status().message()));
      arguments.push_back(std::move(*buffer));
    }
  }

  // --- load (JIT link) and run ---
  runtime::CpuRunOptions run_options;
  run_options.num_threads = static_cast<int>(threads);
  auto load_start = std::chrono::steady_clock::now();
  auto executable = runtime::CpuExecutable::Load(std::move(loaded.executable), run_options);
  const double load_ms = Millis(std::chrono::steady_clock::now() - load_start);
  if (!executable.ok()) return Fail(std::string(executable.status().message()));
  auto results = (*executable)->Run(arguments);
  if (!results.ok()) return Fail(absl::StrCat(path, ": run failed: ", results.status().message()));

  if (bench > 0) {
    std::vector<double> times;
    for (int64_t i = 0; i < bench; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto again = (*executable)->Run(arguments);
      times.push_back(Millis(std::chrono::steady_clock::now() - start));
      if (!again.ok()) return Fail(absl::StrCat(path, ": run failed: ", again.status().message()));
    }
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    double mean = 0;
    for (double t : times) mean += t / static_cast<double>(n);
    std::cout << absl::StrFormat(
        "bench: module=%s backend=cpu threads=%d runs=%d median_ms=%.4f min_ms=%.4f mean_ms=%.4f compile_ms=%.1f "
        "load_ms=%.1f\n",
        module_name.empty() ? std::string("module") : module_name,
        threads > 0 ? static_cast<int>(threads) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency())),
        n, median, sorted.front(), mean, loaded.compile_ms, load_ms);
  }

  // --- outputs ---
  std::vector<Literal> literals;
  for (size_t i = 0; i < results->size(); ++i) {
    auto literal = ToLiteral((*results)[i]);
    if (!literal.ok()) return Fail(absl::StrCat("output ", i, ": ", literal.status().message()));
    literals.push_back(std::move(*literal));
  }
  std::vector<const Literal*> outputs;
  for (const Literal& l : literals) outputs.push_back(&l);
  if (auto out_path = parsed->Get("--outputs")) {
    absl::Status status = WriteOutputsNpz(*out_path, outputs);
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (auto expect_path = parsed->Get("--expect")) {
    return CheckOutputs(outputs, *expect_path, loaded.module.get(), tol, path);
  }
  if (bench == 0) PrintOutputs(outputs);
  return kExitOk;
}

}  // namespace hloc::cli
