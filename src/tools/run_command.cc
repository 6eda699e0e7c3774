// hloc run FILE|EXE.hlox --backend cpu [--inputs IN.npz] [--expect E.npz] [--outputs OUT.npz]
// [--bench N]: compiles an HLO module for the CPU (or loads a compiled executable), runs it with
// the CPU runtime (runtime/cpu) and checks or writes its outputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/gpu/gpu_compiler.h"
#include "engine/html_report.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "eval/compare.h"
#include "ir/hlo_parser.h"
#include "passes/spmd/device_io.h"
#include "ir/verifier.h"
#include "runtime/cpu/cpu_executable.h"
#include "runtime/gpu/gpu_executable.h"
#include "runtime/gpu/gpu_partitioned.h"
#include "runtime/gpu/gpu_selftest.h"
#include "runtime/executable/executable.h"
#include "support/file_io.h"
#include "tools/cli.h"
#include "tools/input_spec.h"
#include "tools/per_thunk.h"

namespace hloc::cli {
namespace {

constexpr char kHelp[] = R"HELP(Usage: hloc run [options] FILE|EXE.hlox [--inputs IN.npz]

A module for several devices (num_partitions x replica_count above 1) runs on that many
devices of the CPU backend, one thread each, with in-process collectives: HLO text as JAX
hands it to XLA is partitioned by the pipeline (sharding-propagation, spmd-partitioning);
--inputs and --expect hold the global arrays, cut into each device's shards by the entry
parameters' shardings and joined from them by the result's.

Runs an HLO module on a backend. FILE is HLO text (compiled first, as `hloc compile` does) or
an executable written by `hloc compile -o EXE.hlox` (recognised by its "HLOX" header). Prints
one line per output, or with --expect the comparison with the expected outputs.

Options:
  --backend B         cpu or gpu (an NVIDIA GPU through the CUDA driver, loaded at run time;
                      without one the command fails saying why). HLO text is compiled for the
                      GPU as `hloc compile --profile h200` does (deviceless). Default: the
                      platform an EXE.hlox was compiled for, else the kind of --profile (a GPU
                      profile such as h200 means gpu), else cpu.
  --inputs IN.npz     the entry parameters, in order: arrays named arg0..argN, or, when no
                      array is named like that, the arrays in file order (as `hloc eval`).
                      bf16 parameters are read from uint16 bit patterns, f8 from uint8.
                      Without it the parameters are random, from --seed: floating-point
                      (and complex parts) uniform in [-1, 1), integers uniform in [0, 10) (so
                      index-like parameters stay in range), pred 0 or 1 with equal chance.
  --input-spec FILE   random inputs drawn from the ranges of a NAME.large.input_spec.json
                      (per parameter: dtype, shape, min, max as XLA was timed; floats
                      uniform in [min, max], integers and pred from the integers in it)
  --seed N            seed of the random inputs (default 0; the same seed gives the same
                      inputs on every machine)
  --expect EXP.npz    compare each output with EXP.npz's array of the same name (out0..outM,
                      or file order) with the thresholds of `hloc eval --expect`; exit 1 on
                      any mismatch. Needs --inputs (or --seed N when EXP.npz was made from
                      hloc's random inputs): random inputs never match a reference
  --tol T             threshold for every floating-point output (overrides the defaults)
  --atol A            absolute floor for every floating-point output (rms of the difference;
                      overrides the defaults, as for hloc eval)
  --outputs OUT.npz   write the outputs as out0..outM (row-major; bf16 as uint16)
  --bench N           after one warm-up run, time N more runs and print
                      "bench: module=NAME backend=cpu threads=T runs=N median_ms=X min_ms=X
                      mean_ms=X compile_ms=X load_ms=X" (compile_ms is 0 for an .hlox)
  --threads N         threads of the CPU runtime (default: all cores)
  --profile C         when compiling FILE: a hardware profile, a path or a name looked up as
                      C.yaml in the configs folder (default: cpu; with --backend gpu the
                      profile of the GPU present: h100 on an H100, h200 on an H200, else h200);
                      a GPU profile picks --backend gpu
  --pipeline P        when compiling FILE: run this pipeline manifest instead of the profile's
                      (the profile's patches apply to it; as hloc compile --pipeline)
  --disable-passes a,b
                      when compiling FILE: switch off these passes, groups or labels of the
                      profile's pipeline (as hloc opt --disable-passes)
  --tuning K=V,...    when compiling FILE: set tuning numbers of the profile (as hloc compile
                      --tuning)
  --no-passes         when compiling FILE: no HLO passes (each instruction its own kernel)
  --config-dir DIR    where profile names are looked up first
  --pipeline-dir DIR  where pipeline names are looked up first
  GPU options (--backend gpu):
  --bench N           time N back-to-back calls per batch in --batches batches (default 7;
                      20 calls and 7 batches is how XLA's times in tests/corpus were taken),
                      arguments uploaded once, results ready at the end of each batch, CUDA
                      events; prints "bench: module=NAME backend=gpu device=... batches=B
                      calls_per_batch=N runs=B median_ms=X min_ms=X ..." (times per call)
  --batches B         batches for --bench (default 7)
  --per-thunk         with --bench N: then N more calls thunk by thunk, each thunk between
                      CUDA events, printed slowest first beside its floor (its argument bytes
                      at the profile's bandwidth, a GEMM's FLOPs at its peak), and the
                      "worst thunk:" furthest above its floor
  --dump-to DIR       with --per-thunk: also write the times as
                      DIR/module_0000.NAME.thunk_times.json (each leaf thunk's number in
                      thunk_sequence.txt, name, kind, kernel, us per call, floor, runs per call;
                      the device, calls and total), which `hloc compile FILE --dump-to DIR
                      --dump-html` then shows beside the thunk sequence
  --autotune-cache F  read and extend the GEMM/convolution autotuning cache file F
  --no-autotune       take the libraries' heuristic choice instead of timing candidates
  --command-buffers S on (default) or off: CUDA graphs for the command-buffer thunks
  --graph-lanes N     streams a CUDA-graph capture forks onto, overriding each command buffer's
                      compiled choice (the profile's command_buffer_lanes; h200: 2): 1 makes
                      each graph a chain, 2-16 independent thunks parallel branches
  --device-loops S    on (default) or off: while loops as CUDA-graph WHILE nodes (one graph a
                      loop, no host round trip an iteration; needs command buffers and CUDA 12.3+)
  --no-tf32           f32 and c64 GEMMs in full f32 (default: TF32, XLA's default)
  --no-conv-tf32      f32 convolutions without TF32 tensor cores (default: TF32 allowed, as cuDNN's
                      DEFAULT_MATH allows it)
  --small-gemm-kernels S  when compiling FILE: on (default), off, ROWSxWARPS[xDEPTH], max=MACS: small GEMMs as
                      our own kernel instead of cuBLAS (hloc compile --help)
  --deterministic-ops when compiling FILE: no floating-point atomics (hloc compile --help)
  --verbose           describe the device, memory and each library call's algorithm
  --self-test [NAME]  run the GPU runtime's own checks (runtime/gpu/gpu_selftest.h; all, or
                      those named) instead of a module, one PASS/FAIL line each
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
  std::error_code ec;
  if (path != "-" && std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' is a directory, not an HLO or executable file"));
  }
  if (path != "-" && ::access(path.c_str(), R_OK) != 0) {
    return absl::NotFoundError(absl::StrCat("cannot open '", path, "': ", std::strerror(errno)));
  }
  return ReadWholeFile(path);
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

// Seeded inputs; see --inputs in the help for the distributions. `range` (--input-spec) draws
// floating-point values uniformly from [min, max] and integers from the integers in it.
absl::StatusOr<Literal> RandomLiteral(const runtime::ArrayShape& param, std::mt19937_64& rng,
                                      const std::optional<InputRange>& range = std::nullopt) {
  auto shape = IrShape(param);
  if (!shape.ok()) return shape.status();
  auto literal = Literal::Create(*shape);
  if (!literal.ok()) return literal.status();
  const PrimitiveType t = shape->element_type();
  std::uniform_real_distribution<double> real(range ? range->min : -1.0, range ? range->max : 1.0);
  const int64_t int_lo = range ? static_cast<int64_t>(std::ceil(range->min)) : 0;
  const int64_t int_hi = range ? std::max(int_lo, static_cast<int64_t>(std::floor(range->max))) : 9;
  std::uniform_int_distribution<int64_t> small(int_lo, int_hi);
  for (int64_t i = 0; i < literal->element_count(); ++i) {
    if (t == PrimitiveType::PRED) {
      literal->SetInt(i, range ? small(rng) != 0 : static_cast<int64_t>(rng() & 1));
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

// The entry parameters' shapes as the user supplies them: global shapes for an executable of
// several devices (from its embedded HLO), else the executable's own.
absl::StatusOr<std::vector<Shape>> GlobalParameterShapes(const runtime::Executable& exe,
                                                         const std::optional<spmd::SpmdLayout>& layout) {
  std::vector<Shape> shapes;
  for (size_t i = 0; i < exe.parameter_shapes.size(); ++i) {
    if (layout && i < layout->global_params.size()) {
      shapes.push_back(layout->global_params[i]);
      continue;
    }
    auto shape = IrShape(exe.parameter_shapes[i]);
    if (!shape.ok()) return absl::InvalidArgumentError(absl::StrCat("parameter ", i, ": ", shape.status().message()));
    shapes.push_back(std::move(*shape));
  }
  return shapes;
}

struct Loaded {
  runtime::Executable executable;
  std::unique_ptr<HloModule> module;  // for output thresholds; null when the text does not parse
  double compile_ms = 0;
};

// What a backend gives `hloc run`: a compiler for HLO text and a loaded executable to call.
// --backend cpu is below; another backend adds its own pair and a branch in MakeBackend.
class Runner {
 public:
  virtual ~Runner() = default;
  virtual absl::StatusOr<std::vector<runtime::HostBuffer>> Run(const std::vector<runtime::HostBuffer>& args) = 0;
  // Per-call times in milliseconds of `runs` calls (the caller has already made one warm-up call).
  virtual absl::StatusOr<std::vector<double>> Time(const std::vector<runtime::HostBuffer>& args, int64_t runs) {
    std::vector<double> times;
    for (int64_t i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      auto r = Run(args);
      times.push_back(Millis(std::chrono::steady_clock::now() - start));
      if (!r.ok()) return r.status();
    }
    return times;
  }
  // Every device of a multi-device executable once: args[d] are device d's parameter leaves.
  virtual absl::StatusOr<std::vector<std::vector<runtime::HostBuffer>>> RunDevices(
      const std::vector<std::vector<runtime::HostBuffer>>& args) {
    return absl::UnimplementedError(absl::StrCat("this backend runs one device; the executable is for ", args.size(),
                                                 " (num_partitions x replica_count): use --backend cpu"));
  }
  virtual std::string bench_fields() const { return ""; }  // extra "key=value" for the bench line
  // --per-thunk: each thunk's time per call beside its floor (tools/per_thunk.h), as the table
  // printed and as thunk_times.json's text (written with --dump-to).
  struct PerThunkTimes {
    std::string table, times_json;
  };
  virtual absl::StatusOr<PerThunkTimes> PerThunk(const std::vector<runtime::HostBuffer>&, int64_t) {
    return absl::UnimplementedError("--per-thunk needs --backend gpu");
  }
};

struct Backend {
  std::string name;
  // Compiles `module` (already verified) with the command line's --profile/--no-passes.
  std::function<absl::StatusOr<runtime::Executable>(HloModule& module, const ParsedArgs& args)> compile;
  std::function<absl::StatusOr<std::unique_ptr<Runner>>(runtime::Executable executable, const ParsedArgs& args)> load;
};

int64_t ThreadsFlag(const ParsedArgs& args) {
  int64_t threads = 0;
  if (auto v = args.Get("--threads")) (void)absl::SimpleAtoi(*v, &threads);
  return threads;
}

class CpuRunner : public Runner {
 public:
  CpuRunner(std::unique_ptr<runtime::CpuExecutable> exe, int threads) : exe_(std::move(exe)), threads_(threads) {}
  absl::StatusOr<std::vector<runtime::HostBuffer>> Run(const std::vector<runtime::HostBuffer>& args) override {
    return exe_->Run(args);
  }
  absl::StatusOr<std::vector<std::vector<runtime::HostBuffer>>> RunDevices(
      const std::vector<std::vector<runtime::HostBuffer>>& args) override {
    return exe_->RunPartitioned(args);
  }
  std::string bench_fields() const override { return absl::StrCat("threads=", threads_); }

 private:
  std::unique_ptr<runtime::CpuExecutable> exe_;
  int threads_;
};

Backend CpuBackend() {
  Backend b;
  b.name = "cpu";
  b.compile = [](HloModule& module, const ParsedArgs& args) -> absl::StatusOr<runtime::Executable> {
    codegen::cpu::CpuCompileOptions options;
    if (!args.Has("--no-passes")) {
      absl::Status s = codegen::cpu::LoadCpuProfileAndPipeline(
          args.Get("--profile").value_or("cpu"), DataSearchDirs(args.Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"),
          DataSearchDirs(args.Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options);
      if (!s.ok()) return s;
      bool usage = false;
      if (absl::Status d = ApplyPipelineOptions(args, options.profile, options.pipeline, &usage); !d.ok()) return d;
    }
    CompileProgress progress(false);  // the stages on a terminal (HLOC_PROGRESS)
    options.log = progress.Log();
    return codegen::cpu::CpuCompiler::Compile(module, options);
  };
  b.load = [](runtime::Executable executable,
              const ParsedArgs& args) -> absl::StatusOr<std::unique_ptr<Runner>> {
    runtime::CpuRunOptions options;
    options.num_threads = static_cast<int>(ThreadsFlag(args));
    auto exe = runtime::CpuExecutable::Load(std::move(executable), options);
    if (!exe.ok()) return exe.status();
    const int threads = options.num_threads > 0
                            ? options.num_threads
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    return std::unique_ptr<Runner>(new CpuRunner(std::move(*exe), threads));
  };
  return b;
}

// --backend gpu: codegen/gpu/gpu_compiler.h (deviceless) and runtime/gpu/gpu_executable.h.
class GpuRunner : public Runner {
 public:
  GpuRunner(std::unique_ptr<runtime::GpuExecutable> exe, int64_t batches, std::string device, HardwareProfile hw,
            bool verbose)
      : exe_(std::move(exe)), batches_(batches), device_(std::move(device)), hw_(std::move(hw)), verbose_(verbose) {}
  absl::StatusOr<PerThunkTimes> PerThunk(const std::vector<runtime::HostBuffer>& args, int64_t calls) override {
    auto times = exe_->ProfileThunks(args, static_cast<int>(calls));
    if (!times.ok()) return times.status();
    // The times point into the loaded executable's thunks, which number them as the dumps do.
    const runtime::Executable& exe = exe_->executable();
    return PerThunkTimes{PerThunkReport(*times, calls, hw_),
                         ThunkTimesJson(*times, calls, hw_, device_, exe.module_name, exe.thunks)};
  }
  absl::StatusOr<std::vector<runtime::HostBuffer>> Run(const std::vector<runtime::HostBuffer>& args) override {
    auto r = exe_->Run(args);
    // --verbose described the executable at load, before its command buffers were captured.
    if (r.ok() && verbose_ && ++runs_ == 1) std::cerr << exe_->DescribeCommandBuffers();
    return r;
  }
  // DEVICE.md's method: `runs` back-to-back calls per batch, each batch's time per call.
  absl::StatusOr<std::vector<double>> Time(const std::vector<runtime::HostBuffer>& args, int64_t runs) override {
    calls_ = runs;
    auto t = exe_->Benchmark(args, static_cast<int>(batches_), static_cast<int>(runs));
    if (!t.ok()) return t.status();
    // The first call runs plainly (runs_before_capture); by now the command buffers are graphs.
    if (verbose_) std::cerr << exe_->DescribeCommandBuffers();
    std::vector<double> ms;
    for (double us : t->batch_us) ms.push_back(us / 1000.0);
    return ms;
  }
  std::string bench_fields() const override {
    return absl::StrCat("device=\"", device_, "\" batches=", batches_, " calls_per_batch=", calls_,
                        " device_mib=", exe_->device_bytes() >> 20);
  }

 private:
  std::unique_ptr<runtime::GpuExecutable> exe_;
  int64_t batches_, calls_ = 0;
  std::string device_;
  HardwareProfile hw_;  // the executable's profile: bandwidth and peak for --per-thunk's floors
  bool verbose_;
  int64_t runs_ = 0;
};

// An executable for several devices on this host's GPUs (runtime/gpu/gpu_partitioned.h): each
// call loads it on every device and runs them together.
class GpuPartitionedRunner : public Runner {
 public:
  GpuPartitionedRunner(runtime::Executable exe, runtime::GpuRunOptions options, runtime::gpu::NcclBootstrap bootstrap)
      : exe_(std::move(exe)), options_(std::move(options)), bootstrap_(std::move(bootstrap)) {}
  absl::StatusOr<std::vector<runtime::HostBuffer>> Run(const std::vector<runtime::HostBuffer>&) override {
    return absl::FailedPreconditionError(absl::StrCat("the executable runs over ", exe_.num_devices(),
                                                      " devices; it runs with global inputs split per device"));
  }
  absl::StatusOr<std::vector<std::vector<runtime::HostBuffer>>> RunDevices(
      const std::vector<std::vector<runtime::HostBuffer>>& args) override {
    absl::StatusOr<std::vector<std::vector<runtime::HostBuffer>>> r =
        runtime::RunPartitionedOnGpus(exe_, args, options_, bootstrap_);
    if (!r.ok()) return r.status();
    for (const std::vector<runtime::HostBuffer>& d : *r)
      if (d.empty() && !exe_.result_shapes.empty())
        return absl::UnimplementedError(
            "this process ran only its own devices (HLOC_NUM_PROCESSES > 1); joining the global outputs needs every "
            "device's results, which hloc run does not gather across processes yet");
    return r;
  }

 private:
  runtime::Executable exe_;
  runtime::GpuRunOptions options_;
  runtime::gpu::NcclBootstrap bootstrap_;
};

// Without --profile, the profile of the GPU this process runs on (engine/profile_loader.h's
// GpuProfileForDevice: compute capability, then nearest memory size and SM count), as XLA compiles
// for the device present; h200 when no profile has its compute capability.
std::string DefaultGpuProfile(const std::vector<std::string>& config_dirs, bool verbose) {
  std::optional<std::string> chosen;
  if (absl::StatusOr<runtime::GpuDeviceSummary> d = runtime::GpuDeviceSummaryOf(0); d.ok()) {
    GpuDeviceFacts facts;
    facts.compute_capability_major = d->cc_major;
    facts.compute_capability_minor = d->cc_minor;
    facts.sm_count = d->sm_count;
    facts.memory_size = d->total_memory;
    chosen = GpuProfileForDevice(facts, config_dirs);
  }
  if (verbose)
    std::cerr << "gpu: no --profile: compiling with " << (chosen ? *chosen : std::string("h200"))
              << (chosen ? ", the profile of this GPU\n" : " (no profile has this GPU's compute capability)\n");
  return chosen.value_or("h200");
}

Backend GpuBackend() {
  Backend b;
  b.name = "gpu";
  b.compile = [](HloModule& module, const ParsedArgs& args) -> absl::StatusOr<runtime::Executable> {
    // Say at once that there is no GPU rather than after compiling (`hloc compile --profile
    // h200` is the deviceless path).
    if (absl::Status s = runtime::GpuRuntimeAvailable(); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("--backend gpu: no usable GPU here: ", s.message()));
    }
    codegen::gpu::GpuCompileOptions options;
    if (!args.Has("--no-passes")) {
      const std::vector<std::string> config_dirs =
          DataSearchDirs(args.Get("--config-dir"), "HLOC_CONFIG_DIR", "configs");
      const std::string profile = args.Get("--profile").value_or(DefaultGpuProfile(config_dirs, args.Has("--verbose")));
      absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline(
          profile, config_dirs, DataSearchDirs(args.Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), options);
      if (!s.ok()) return s;
      bool usage = false;
      if (absl::Status d = ApplyPipelineOptions(args, options.profile, options.pipeline, &usage); !d.ok()) return d;
    }
    if (args.Get("--command-buffers").value_or("on") == "off") options.command_buffers = false;
    if (auto v = args.Get("--small-gemm-kernels")) {
      absl::StatusOr<codegen::gpu::SmallGemmOptions> o = codegen::gpu::ParseSmallGemmOptions(*v);
      if (!o.ok()) return o.status();
      options.small_gemm = *o;
    }
    options.deterministic_ops = args.Has("--deterministic-ops");
    options.warnings = &std::cerr;
    CompileProgress progress(false);  // the stages on a terminal (HLOC_PROGRESS)
    options.log = progress.Log();
    return codegen::gpu::GpuCompiler::Compile(module, options);
  };
  b.load = [](runtime::Executable executable, const ParsedArgs& args) -> absl::StatusOr<std::unique_ptr<Runner>> {
    if (absl::Status s = runtime::GpuRuntimeAvailable(); !s.ok()) {
      return absl::UnavailableError(absl::StrCat("--backend gpu: no usable GPU here: ", s.message()));
    }
    runtime::GpuRunOptions options;
    options.autotune = !args.Has("--no-autotune");
    options.autotune_cache = args.Get("--autotune-cache").value_or("");
    options.allow_tf32 = !args.Has("--no-tf32");
    options.conv_tf32 = !args.Has("--no-conv-tf32");
    options.verbose = args.Has("--verbose");
    const std::string cb = args.Get("--command-buffers").value_or("on");
    if (cb != "on" && cb != "off") {
      return absl::InvalidArgumentError(absl::StrCat("--command-buffers takes on or off, got '", cb, "'"));
    }
    options.command_buffers.enabled = cb == "on";
    if (auto lanes = args.Get("--graph-lanes")) {
      int64_t n = 0;
      if (!absl::SimpleAtoi(*lanes, &n) || n < 1 || n > 16) {
        return absl::InvalidArgumentError(absl::StrCat("--graph-lanes takes a number from 1 to 16, got '", *lanes, "'"));
      }
      options.command_buffers.lanes = n;
    }
    const std::string loops = args.Get("--device-loops").value_or("on");
    if (loops != "on" && loops != "off") {
      return absl::InvalidArgumentError(absl::StrCat("--device-loops takes on or off, got '", loops, "'"));
    }
    if (loops == "off") {
      auto& k = options.command_buffers.kinds;
      k.erase(std::remove(k.begin(), k.end(), "kWhile"), k.end());
    }
    int64_t batches = 7;
    if (auto v = args.Get("--batches"); v && (!absl::SimpleAtoi(*v, &batches) || batches < 1 || batches > 10000)) {
      return absl::InvalidArgumentError(absl::StrCat("--batches needs a number from 1 to 10000, got '", *v, "'"));
    }
    HardwareProfile hw;
    if (args.Has("--per-thunk")) {
      codegen::gpu::GpuCompileOptions compile;
      absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline(
          args.Get("--profile").value_or(executable.profile), DataSearchDirs(args.Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"),
          DataSearchDirs(args.Get("--pipeline-dir"), "HLOC_PIPELINE_DIR", "pipelines"), compile);
      if (!s.ok()) return s;
      hw = compile.profile->hardware;
    }
    if (executable.num_devices() > 1) {
      absl::StatusOr<runtime::gpu::NcclBootstrap> bootstrap = runtime::gpu::NcclBootstrap::FromEnvironment();
      if (!bootstrap.ok()) return bootstrap.status();
      return std::unique_ptr<Runner>(new GpuPartitionedRunner(std::move(executable), options, *bootstrap));
    }
    auto device = runtime::GpuDeviceDescription(options.device_ordinal);
    auto exe = runtime::GpuExecutable::Load(std::move(executable), options);
    if (!exe.ok()) return exe.status();
    return std::unique_ptr<Runner>(
        new GpuRunner(std::move(*exe), batches, device.ok() ? *device : "?", std::move(hw), options.verbose));
  };
  return b;
}

// `hloc run --backend gpu --self-test [NAME...]`: the GPU runtime's checks, one line each.
int RunGpuSelfTests(const ParsedArgs& args) {
  if (args.Get("--backend").value_or("gpu") != "gpu") return UsageError("run", "--self-test needs --backend gpu");
  if (absl::Status s = runtime::GpuRuntimeAvailable(); !s.ok()) {
    return Fail(absl::StrCat("--self-test: no usable GPU here: ", s.message()));
  }
  if (auto d = runtime::GpuDeviceDescription(0); d.ok()) std::cout << "gpu: " << *d << "\n";
  std::vector<std::string> names = args.positional.empty() ? runtime::gpu::GpuSelfTestNames() : args.positional;
  int failed = 0;
  for (const std::string& name : names) {
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = runtime::gpu::RunGpuSelfTest(name);
    std::cout << absl::StrFormat("gpu self-test %-10s %s (%.0f ms)%s\n", name, s.ok() ? "PASS" : "FAIL",
                                 Millis(std::chrono::steady_clock::now() - start),
                                 s.ok() ? std::string() : absl::StrCat(": ", s.ToString()));
    std::cout.flush();
    failed += !s.ok();
  }
  std::cout << "gpu self-tests: " << names.size() - failed << " passed, " << failed << " failed\n";
  return failed == 0 ? kExitOk : kExitFailure;
}

// The backend --backend names; errors for one that is unknown or not built.
absl::StatusOr<Backend> MakeBackend(const std::string& name) {
  if (name == "cpu") return CpuBackend();
  if (name == "gpu") return GpuBackend();
  return absl::InvalidArgumentError(absl::StrCat("unknown backend '", name, "' (cpu or gpu)"));
}

}  // namespace

// Runs every device once and joins their results into the global result.
static absl::StatusOr<Literal> RunAndJoin(Runner& runner, const spmd::SpmdLayout& layout,
                                   const std::vector<std::vector<runtime::HostBuffer>>& args) {
  auto results = runner.RunDevices(args);
  if (!results.ok()) return results.status();
  std::vector<Literal> per_device;
  for (size_t d = 0; d < results->size(); ++d) {
    std::vector<Literal> leaves;
    for (size_t i = 0; i < (*results)[d].size(); ++i) {
      auto literal = ToLiteral((*results)[d][i]);
      if (!literal.ok()) return absl::InvalidArgumentError(absl::StrCat("device ", d, ", output ", i, ": ",
                                                                        literal.status().message()));
      leaves.push_back(std::move(*literal));
    }
    if (layout.global_result.IsTuple()) per_device.push_back(Literal::MakeTuple(std::move(leaves)));
    else if (!leaves.empty()) per_device.push_back(std::move(leaves[0]));
  }
  return spmd::JoinOutputs(layout, per_device);
}

static absl::StatusOr<std::vector<double>> TimeDevices(Runner& runner, const std::vector<std::vector<runtime::HostBuffer>>& args,
                                                int64_t runs) {
  std::vector<double> times;
  for (int64_t i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    auto r = runner.RunDevices(args);
    times.push_back(Millis(std::chrono::steady_clock::now() - start));
    if (!r.ok()) return r.status();
  }
  return times;
}

int RunRun(const std::vector<std::string>& args) {
  auto parsed = ParseArgs("run", args,
                          {{"--backend", "", true},
                           {"--inputs", "", true},
                           {"--expect", "", true},
                           {"--outputs", "", true},
                           {"--tol", "", true},
                           {"--atol", "", true},
                           {"--bench", "", true},
                           {"--seed", "", true},
                           {"--input-spec", "", true},
                           {"--per-thunk", "", false},
                           {"--dump-to", "", true},
                           {"--threads", "", true},
                           {"--profile", "", true},
                           {"--no-passes", "", false},
                           {"--disable-passes", "", true},
                           {"--pipeline", "", true},
                           {"--tuning", "", true},
                           {"--config-dir", "", true},
                           {"--pipeline-dir", "", true},
                           {"--batches", "", true},
                           {"--autotune-cache", "", true},
                           {"--no-autotune", "", false},
                           {"--command-buffers", "", true},
                           {"--device-loops", "", true},
                           {"--graph-lanes", "", true},
                           {"--no-tf32", "", false},
                           {"--no-conv-tf32", "", false},
                           {"--small-gemm-kernels", "", true},
                           {"--deterministic-ops", "", false},
                           {"--verbose", "", false},
                           {"--self-test", "", false}});
  if (!parsed.ok()) return UsageError("run", std::string(parsed.status().message()));
  if (parsed->help) {
    std::cout << kHelp;
    return kExitOk;
  }
  if (parsed->Has("--self-test")) return RunGpuSelfTests(*parsed);
  if (parsed->positional.size() != 1) {
    return UsageError("run", parsed->positional.empty() ? "missing FILE" : "expected exactly one FILE");
  }
  // Outputs of random inputs never match a reference made from other inputs: --expect needs the
  // inputs it was made from (--inputs), or says which random ones (--seed, --input-spec).
  if (parsed->Has("--expect") && !parsed->Has("--inputs") && !parsed->Has("--seed") && !parsed->Has("--input-spec")) {
    return UsageError("run",
                      "--expect compares with outputs computed from known inputs: give them with --inputs IN.npz "
                      "(or, for a reference made from hloc's random inputs, --seed N)");
  }
  auto int_flag = [&](const char* name, int64_t min, int64_t max, int64_t fallback, int64_t* out) -> bool {
    *out = fallback;
    auto v = parsed->Get(name);
    if (!v) return true;
    return absl::SimpleAtoi(*v, out) && *out >= min && *out <= max;
  };
  int64_t bench = 0, seed = 0, threads = 0;  // --threads is read again by the backend
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
  std::optional<double> atol;
  if (auto t = parsed->Get("--atol")) {
    double v;
    if (!absl::SimpleAtod(*t, &v) || !std::isfinite(v) || v < 0) {
      return UsageError("run", absl::StrCat("--atol needs a non-negative number, got '", *t, "'"));
    }
    atol = v;
  }
  if (parsed->Has("--inputs") && parsed->Has("--seed")) {
    return UsageError("run", "--seed makes random inputs; it cannot be combined with --inputs");
  }
  if (parsed->Has("--inputs") && parsed->Has("--input-spec")) {
    return UsageError("run", "--input-spec shapes random inputs; it cannot be combined with --inputs");
  }
  if (parsed->Has("--dump-to") && !(parsed->Has("--per-thunk") && parsed->Has("--bench"))) {
    return UsageError("run", "--dump-to DIR writes the per-thunk times: it needs --bench N --per-thunk");
  }
  if (parsed->Has("--no-passes") && parsed->Has("--profile")) {
    return UsageError("run", "--no-passes and --profile cannot be combined");
  }
  if (parsed->Has("--no-passes") &&
      (parsed->Has("--pipeline") || parsed->Has("--disable-passes") || parsed->Has("--tuning"))) {
    return UsageError("run", "--pipeline, --disable-passes and --tuning change the passes; they cannot be combined "
                             "with --no-passes");
  }

  // --- the executable: deserialized, or compiled from HLO text ---
  const std::string& file = parsed->positional[0];
  const std::string path = DisplayName(file);
  auto bytes = ReadFileBytes(file);
  if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
  const bool is_executable = bytes->compare(0, 4, "HLOX") == 0;
  // An .hlox cut short or damaged in its first bytes would otherwise be read as HLO text.
  if (!is_executable && file.size() > 5 && file.compare(file.size() - 5, 5, ".hlox") == 0) {
    return Fail(absl::StrCat(path, ": not an hloc executable: ",
                             bytes->empty() ? std::string("the file is empty")
                                            : absl::StrCat("no 'HLOX' header (", bytes->size(), " bytes)"),
                             "; the file is truncated or damaged: compile it again"));
  }
  std::optional<runtime::Executable> deserialized;
  if (is_executable) {
    auto exe = runtime::Executable::Deserialize(*bytes, path);
    if (!exe.ok()) return Fail(std::string(exe.status().message()));
    deserialized = std::move(*exe);
  }
  // The backend: --backend, else what the executable was compiled for, else the --profile's
  // kind (--profile h200 compiles for and runs on the GPU), else the CPU.
  std::string backend_name = parsed->Get("--backend").value_or("");
  if (deserialized && !deserialized->platform.empty()) {
    const std::string& platform = deserialized->platform;
    if (backend_name.empty()) {
      backend_name = platform;
    } else if (backend_name != platform && (backend_name == "cpu" || backend_name == "gpu")) {
      return UsageError("run", absl::StrCat(path, " was compiled for the ", platform, " (profile '",
                                            deserialized->profile, "'", deserialized->target.empty() ? "" : ", ",
                                            deserialized->target, "), not the ", backend_name, ": run it with --backend ",
                                            platform, " (or leave --backend out), or compile it again with a ",
                                            backend_name, " profile"));
    }
  }
  if (!is_executable && parsed->Has("--profile") && !parsed->Has("--no-passes")) {
    absl::StatusOr<std::string> profile_path =
        FindProfileFile(*parsed->Get("--profile"), DataSearchDirs(parsed->Get("--config-dir"), "HLOC_CONFIG_DIR", "configs"));
    absl::StatusOr<Profile> profile = profile_path.ok() ? LoadProfileFile(*profile_path) : profile_path.status();
    if (profile.ok() && (profile->hardware.kind == "cpu" || profile->hardware.kind == "gpu")) {
      if (backend_name.empty()) {
        backend_name = profile->hardware.kind;
      } else if (backend_name != profile->hardware.kind && (backend_name == "cpu" || backend_name == "gpu")) {
        return UsageError("run", absl::StrCat("--profile ", *parsed->Get("--profile"), " is a ", profile->hardware.kind,
                                              " profile but --backend is ", backend_name, ": use --backend ",
                                              profile->hardware.kind, " (or leave --backend out)"));
      }
    }
  }
  if (backend_name.empty()) backend_name = "cpu";
  auto backend = MakeBackend(backend_name);
  if (!backend.ok()) {
    if (absl::IsInvalidArgument(backend.status())) return UsageError("run", std::string(backend.status().message()));
    return Fail(std::string(backend.status().message()));
  }
  Loaded loaded;
  std::optional<spmd::SpmdLayout> spmd_layout;  // set for an executable of several devices
  if (is_executable) {
    if (parsed->Has("--profile") || parsed->Has("--no-passes")) {
      return UsageError("run", absl::StrCat("--profile and --no-passes apply when compiling HLO text; ", path,
                                            " is compiled already"));
    }
    loaded.executable = std::move(*deserialized);
    if (!loaded.executable.hlo_text.empty()) {
      auto module = ParseHloModule(loaded.executable.hlo_text, path + " (embedded HLO)");
      if (module.ok()) loaded.module = std::move(*module);
    }
    if (loaded.module && spmd::IsMultiDevice(*loaded.module)) {
      spmd_layout = spmd::BeginSpmd(*loaded.module);
      if (absl::Status st = spmd::FinishSpmd(*spmd_layout, *loaded.module); !st.ok())
        return Fail(absl::StrCat(path, ": ", st.message()));
    }
    auto shapes = GlobalParameterShapes(loaded.executable, spmd_layout);
    if (!shapes.ok()) return Fail(absl::StrCat(path, ": ", shapes.status().message()));
    if (absl::Status st = CheckParametersFit(*shapes, path); !st.ok()) return Fail(std::string(st.message()));
  } else {
    auto module = ParseHloModule(*bytes, path);
    if (!module.ok()) {
      std::cerr << module.status().message() << "\n";
      return kExitFailure;
    }
    WarnElidedConstants(**module, path);
    if (absl::Status s = VerifyModule(**module); !s.ok()) {
      return Fail(absl::StrCat(path, ": verification failed: ", s.message()));
    }
    // Before compiling: inputs that cannot be held make the run impossible.
    std::vector<Shape> shapes;
    if (const HloComputation* entry = (*module)->entry_computation())
      for (const HloInstruction* p : entry->parameters()) shapes.push_back(p->shape());
    if (absl::Status s = CheckParametersFit(shapes, path); !s.ok()) return Fail(std::string(s.message()));
    // A module for several devices: its global shapes now, its shardings once the pipeline
    // has partitioned it (spmd-partitioning).
    if (spmd::IsMultiDevice(**module)) spmd_layout = spmd::BeginSpmd(**module);
    const auto start = std::chrono::steady_clock::now();
    auto exe = backend->compile(**module, *parsed);
    loaded.compile_ms = Millis(std::chrono::steady_clock::now() - start);
    if (!exe.ok()) return Fail(absl::StrCat(path, ": ", exe.status().message()));
    if (spmd_layout)
      if (absl::Status st = spmd::FinishSpmd(*spmd_layout, **module); !st.ok())
        return Fail(absl::StrCat(path, ": ", st.message()));
    loaded.executable = std::move(*exe);
    loaded.module = std::move(*module);
  }
  const runtime::Executable& exe_ref = loaded.executable;
  const std::vector<runtime::ArrayShape> params = exe_ref.parameter_shapes;
  const std::string module_name = exe_ref.module_name;

  // --- inputs (global arrays; cut into each device's shards for several devices) ---
  // The shape the user's input for parameter i has.
  auto global_param = [&](size_t i) -> runtime::ArrayShape {
    runtime::ArrayShape a = params[i];
    if (spmd_layout && i < spmd_layout->global_params.size()) {
      a.dimensions = spmd_layout->global_params[i].dimensions();
      a.minor_to_major.clear();
    }
    return a;
  };
  std::vector<Literal> global_inputs;
  std::vector<runtime::HostBuffer> arguments;
  if (auto inputs_path = parsed->Get("--inputs")) {
    auto arrays = ReadArrays(*inputs_path);
    if (!arrays.ok()) return Fail(std::string(arrays.status().message()));
    auto matched = MatchArrays(*arrays, params.size(), "arg", *inputs_path, "parameters");
    if (!matched.ok()) return Fail(std::string(matched.status().message()));
    for (size_t i = 0; i < params.size(); ++i) {
      auto shape = IrShape(global_param(i));
      if (!shape.ok()) return Fail(absl::StrCat(path, ": parameter ", i, ": ", shape.status().message()));
      auto literal = ReinterpretAs(*(*matched)[i], *shape);
      if (!literal.ok()) {
        return Fail(absl::StrCat(*inputs_path, ": parameter ", i, ": ", literal.status().message()));
      }
      if (spmd_layout) {
        global_inputs.push_back(std::move(*literal));
        continue;
      }
      auto buffer = ToHostBuffer(*literal, params[i]);
      if (!buffer.ok()) return Fail(absl::StrCat("parameter ", i, ": ", buffer.status().message()));
      arguments.push_back(std::move(*buffer));
    }
  } else {
    std::mt19937_64 rng(static_cast<uint64_t>(seed));
    std::vector<InputRange> ranges;
    if (auto spec = parsed->Get("--input-spec")) {
      auto read = ReadInputSpec(*spec, params);
      if (!read.ok()) return Fail(std::string(read.status().message()));
      ranges = std::move(*read);
    }
    for (size_t i = 0; i < params.size(); ++i) {
      auto literal = RandomLiteral(global_param(i), rng, ranges.empty() ? std::nullopt : std::optional(ranges[i]));
      if (!literal.ok()) return Fail(absl::StrCat(path, ": parameter ", i, ": ", literal.status().message()));
      if (spmd_layout) {
        global_inputs.push_back(std::move(*literal));
        continue;
      }
      auto buffer = ToHostBuffer(*literal, params[i]);
      if (!buffer.ok()) return Fail(absl::StrCat("parameter ", i, ": ", buffer.status().message()));
      arguments.push_back(std::move(*buffer));
    }
  }

  std::vector<std::vector<runtime::HostBuffer>> device_arguments;
  if (spmd_layout) {
    auto shards = spmd::SplitInputs(*spmd_layout, global_inputs);
    if (!shards.ok()) return Fail(absl::StrCat(path, ": ", shards.status().message()));
    for (size_t d = 0; d < shards->size(); ++d) {
      device_arguments.emplace_back();
      for (size_t i = 0; i < params.size(); ++i) {
        auto buffer = ToHostBuffer((*shards)[d][i], params[i]);
        if (!buffer.ok()) return Fail(absl::StrCat("parameter ", i, ", device ", d, ": ", buffer.status().message()));
        device_arguments.back().push_back(std::move(*buffer));
      }
    }
  }

  // --- load (the CPU: JIT link) and run ---
  auto load_start = std::chrono::steady_clock::now();
  auto runner = backend->load(std::move(loaded.executable), *parsed);
  const double load_ms = Millis(std::chrono::steady_clock::now() - load_start);
  if (!runner.ok()) return Fail(std::string(runner.status().message()));
  absl::StatusOr<std::vector<runtime::HostBuffer>> results = std::vector<runtime::HostBuffer>();
  std::optional<Literal> joined;
  if (spmd_layout) {
    auto per_device = RunAndJoin(**runner, *spmd_layout, device_arguments);
    if (!per_device.ok()) return Fail(absl::StrCat(path, ": run failed: ", per_device.status().message()));
    joined = std::move(*per_device);
  } else {
    results = (*runner)->Run(arguments);
    if (!results.ok()) return Fail(absl::StrCat(path, ": run failed: ", results.status().message()));
  }

  if (bench > 0) {
    auto times = spmd_layout ? TimeDevices(**runner, device_arguments, bench) : (*runner)->Time(arguments, bench);
    if (!times.ok()) return Fail(absl::StrCat(path, ": run failed: ", times.status().message()));
    std::vector<double> sorted = *times;
    std::sort(sorted.begin(), sorted.end());
    const size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    double mean = 0;
    for (double t : sorted) mean += t / static_cast<double>(n);
    const std::string extra = (*runner)->bench_fields();
    std::cout << absl::StrFormat(
        "bench: module=%s backend=%s %sruns=%d median_ms=%.4f min_ms=%.4f mean_ms=%.4f compile_ms=%.1f load_ms=%.1f\n",
        module_name.empty() ? std::string("module") : module_name, backend->name,
        extra.empty() ? std::string() : extra + " ", n, median, sorted.front(), mean, loaded.compile_ms, load_ms);
    if (parsed->Has("--per-thunk")) {
      auto report = (*runner)->PerThunk(arguments, bench);
      if (!report.ok()) return Fail(absl::StrCat(path, ": --per-thunk: ", report.status().message()));
      std::cout << report->table;
      if (auto dir = parsed->Get("--dump-to")) {
        // Module 0, as hloc compile numbers its dumps, so its page finds the file.
        std::error_code ec;
        std::filesystem::create_directories(*dir, ec);
        const std::string out = (std::filesystem::path(*dir) / ThunkTimesFileName(0, module_name)).string();
        if (absl::Status s = WriteFileAtomically(out, report->times_json); !s.ok())
          return Fail(absl::StrCat("--dump-to: ", s.message()));
      }
    }
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
  if (joined) outputs = FlattenLeaves(*joined);
  if (auto out_path = parsed->Get("--outputs")) {
    absl::Status status = WriteOutputsNpz(*out_path, outputs);
    if (!status.ok()) return Fail(std::string(status.message()));
  }
  if (auto expect_path = parsed->Get("--expect")) {
    return CheckOutputs(outputs, *expect_path, loaded.module.get(), tol, atol, path);
  }
  if (bench == 0) PrintOutputs(outputs);
  return kExitOk;
}

}  // namespace hloc::cli
