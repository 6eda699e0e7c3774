// The fft op on the backends: kFft thunks (codegen/fft_thunk.h) run by FFTW on the CPU runtime
// and by cuFFT on the GPU runtime, checked against the reference evaluator (src/eval) for every
// fft type, ranks 1-3, batched, odd and even lengths, f32/f64 (c64/c128), lengths 0 and 1,
// empty batches; through a serialized executable; and bad configs refused with a message.
// The GPU checks compile deviceless everywhere (PTX assembled by ptxas where present) and run
// where there is a GPU, else SKIP with the reason.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/gpu_test_util.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/gpu/gpu_compiler.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "runtime/cpu/cpu_executable.h"
#include "runtime/cpu/fft.h"
#include "runtime/executable/fft_config.h"
#include "runtime/gpu/cufft.h"
#include "runtime/gpu/gpu_executable.h"

namespace hloc {
namespace {

const std::string kSource = HLOC_SOURCE_DIR;

struct FftCase {
  std::string type;                // FFT, IFFT, RFFT, IRFFT
  bool f64 = false;
  std::vector<int64_t> batch;      // leading dims
  std::vector<int64_t> length;     // fft_length
  std::string Name() const {
    return absl::StrCat(type, f64 ? " f64" : " f32", " batch [", absl::StrJoin(batch, ","), "] fft_length {",
                        absl::StrJoin(length, ","), "}");
  }
};

std::string Dims(const std::vector<int64_t>& d) { return absl::StrJoin(d, ","); }

// fft(p0) as an entry computation (the operand's shape follows from the type and lengths).
std::string ModuleText(const FftCase& c) {
  const std::string complex = c.f64 ? "c128" : "c64", real = c.f64 ? "f64" : "f32";
  std::vector<int64_t> in = c.batch, out = c.batch;
  in.insert(in.end(), c.length.begin(), c.length.end());
  out.insert(out.end(), c.length.begin(), c.length.end());
  std::string in_type = complex, out_type = complex;
  const int64_t half = c.length.back() == 0 ? 0 : c.length.back() / 2 + 1;  // XLA: length 0 stays 0
  if (c.type == "RFFT") in_type = real, out.back() = half;
  if (c.type == "IRFFT") out_type = real, in.back() = half;
  return absl::StrCat("HloModule fft_test\nENTRY e {\n  p = ", in_type, "[", Dims(in), "] parameter(0)\n  ROOT f = ",
                      out_type, "[", Dims(out), "] fft(p), fft_type=", c.type, ", fft_length={", Dims(c.length),
                      "}\n}\n");
}

Literal RandomLiteral(const Shape& shape, std::mt19937& rng) {
  Literal lit(shape);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsComplex(shape.element_type())) {
      const double re = u(rng);
      lit.SetComplex(i, {re, u(rng)});
    } else {
      lit.SetDouble(i, u(rng));
    }
  }
  return lit;
}

// Row-major literals <-> host buffers (every fft array has the default layout).
runtime::HostBuffer ToHost(const Literal& lit, const runtime::ArrayShape& shape) {
  runtime::HostBuffer h;
  h.shape = shape;
  h.data.assign(lit.untyped_data(), lit.untyped_data() + shape.byte_size());
  return h;
}

Literal FromHost(const runtime::HostBuffer& h, const Shape& shape) {
  Literal lit(shape);
  REQUIRE(static_cast<int64_t>(h.data.size()) == h.shape.byte_size());
  if (!h.data.empty()) std::memcpy(lit.untyped_data(), h.data.data(), h.data.size());
  return lit;
}

absl::StatusOr<runtime::Executable> CompileCpu(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  codegen::cpu::CpuCompileOptions options;
  absl::Status s =
      codegen::cpu::LoadCpuProfileAndPipeline("cpu", {kSource + "/configs"}, {kSource + "/pipelines"}, options);
  if (!s.ok()) return s;
  return codegen::cpu::CpuCompiler::Compile(**m, options);
}

absl::StatusOr<runtime::Executable> CompileGpu(const std::string& text, codegen::gpu::GpuCompileArtifacts* art) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  codegen::gpu::GpuCompileOptions options;
  absl::Status s =
      codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"}, options);
  if (!s.ok()) return s;
  return codegen::gpu::GpuCompiler::Compile(**m, options, art);
}

struct Reference {
  std::unique_ptr<HloModule> module;
  Literal input, expected;
};

Reference Evaluate(const FftCase& c, uint32_t seed) {
  Reference r;
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(ModuleText(c));
  INFO(ModuleText(c));
  REQUIRE(m.ok());
  r.module = std::move(*m);
  std::mt19937 rng(seed);
  r.input = RandomLiteral(r.module->entry_computation()->parameter_instruction(0)->shape(), rng);
  absl::StatusOr<Literal> want = EvaluateModule(*r.module, {r.input});
  REQUIRE(want.ok());
  r.expected = std::move(*want);
  return r;
}

void CheckResult(const FftCase& c, const Reference& ref, const runtime::HostBuffer& got) {
  Literal out = FromHost(got, ref.expected.shape());
  // FFTW and cuFFT against the evaluator's double-precision DFT: single precision to f32's
  // rounding over log2(N) stages, double to f64's.
  CompareResult r = CompareLiterals(out, ref.expected, c.f64 ? 1e-10 : 2e-5);
  INFO(c.Name() << ": " << r.message << " error " << r.error);
  CHECK(r.ok);
}

std::vector<FftCase> Cases() {
  std::vector<FftCase> cases;
  for (const char* type : {"FFT", "IFFT", "RFFT", "IRFFT"}) {
    for (bool f64 : {false, true}) {
      cases.push_back({type, f64, {}, {16}});            // rank 1, no batch, even
      cases.push_back({type, f64, {3}, {7}});            // batched, odd
      cases.push_back({type, f64, {2, 3}, {5, 8}});      // rank 2, two batch dims
      cases.push_back({type, f64, {2}, {3, 4, 6}});      // rank 3
      cases.push_back({type, f64, {}, {9, 5, 3}});       // rank 3, odd, no batch
      cases.push_back({type, f64, {4}, {1}});            // length 1
      cases.push_back({type, f64, {2}, {1, 6}});
      cases.push_back({type, f64, {5}, {97}});           // a prime length
      cases.push_back({type, f64, {0}, {8}});            // empty batch
      cases.push_back({type, f64, {3}, {0}});            // length 0 (RFFT: one zero frequency)
      cases.push_back({type, f64, {2}, {4, 0}});
      cases.push_back({type, f64, {2}, {0, 4}});
    }
  }
  return cases;
}

TEST_CASE("fft: the CPU backend (FFTW) matches the evaluator", "[fft][cpu]") {
  uint32_t seed = 1;
  for (const FftCase& c : Cases()) {
    INFO(c.Name());
    Reference ref = Evaluate(c, seed++);
    absl::StatusOr<runtime::Executable> exe = CompileCpu(ModuleText(c));
    INFO((exe.ok() ? std::string("compiled") : std::string(exe.status().message())));
    REQUIRE(exe.ok());
    bool has_fft = false;
    for (const runtime::Thunk& t : exe->thunks) has_fft = has_fft || t.kind == runtime::ThunkKind::kFft;
    // An empty result is a constant after simplification; every other fft is a library call.
    CHECK(has_fft == (ref.expected.element_count() > 0));
    runtime::CpuRunOptions options;
    options.num_threads = 3;
    const std::vector<runtime::HostBuffer> args = {ToHost(ref.input, exe->parameter_shapes[0])};
    absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(*exe, options);
    INFO((loaded.ok() ? std::string("loaded") : std::string(loaded.status().message())));
    REQUIRE(loaded.ok());
    for (int run = 0; run < 2; ++run) {  // plans are reused; an IRFFT's input survives
      absl::StatusOr<std::vector<runtime::HostBuffer>> got = (*loaded)->Run(args);
      REQUIRE(got.ok());
      REQUIRE(got->size() == 1);
      CheckResult(c, ref, (*got)[0]);
    }
  }
}

TEST_CASE("fft: a large batch splits into parallel parts and survives serialization", "[fft][cpu]") {
  const FftCase c{"IRFFT", false, {64}, {1000}};
  Reference ref = Evaluate(c, 7);
  absl::StatusOr<runtime::Executable> exe = CompileCpu(ModuleText(c));
  REQUIRE(exe.ok());
  REQUIRE(exe->thunks.size() == 1);
  CHECK(exe->thunks[0].kind == runtime::ThunkKind::kFft);
  CHECK(exe->thunks[0].launch.partitions > 1);
  absl::StatusOr<runtime::Executable> back = runtime::Executable::Deserialize(exe->Serialize(), "fft.hlox");
  REQUIRE(back.ok());
  CHECK(back->thunks[0].fft.fft_type == "IRFFT");
  CHECK(back->thunks[0].fft.fft_length == std::vector<int64_t>{1000});
  runtime::CpuRunOptions options;
  options.num_threads = 4;
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(*back, options);
  REQUIRE(loaded.ok());
  absl::StatusOr<std::vector<runtime::HostBuffer>> got = (*loaded)->Run({ToHost(ref.input, back->parameter_shapes[0])});
  REQUIRE(got.ok());
  CheckResult(c, ref, (*got)[0]);
}

TEST_CASE("fft: bad configs are refused with a message", "[fft]") {
  runtime::FftConfig good;
  good.fft_type = "RFFT";
  good.input_type = "f32";
  good.output_type = "c64";
  good.fft_length = {8};
  good.input_dimensions = {2, 8};
  good.output_dimensions = {2, 5};
  REQUIRE(runtime::AnalyzeFft(good, 64, 80).ok());
  CHECK(runtime::AnalyzeFft(good, 64, 80)->batch == 2);
  auto refused = [&](const runtime::FftConfig& c, int64_t in, int64_t out, const std::string& words) {
    absl::StatusOr<runtime::FftGeometry> g = runtime::AnalyzeFft(c, in, out);
    REQUIRE(!g.ok());
    INFO(g.status().message());
    CHECK(g.status().message().find(words) != std::string::npos);
  };
  refused(good, 63, 80, "slices hold");
  runtime::FftConfig c = good;
  c.fft_type = "DCT";
  refused(c, 64, 80, "unknown fft type");
  c = good;
  c.output_type = "c128";
  refused(c, 64, 160, "not supported");
  c = good;
  c.output_dimensions = {2, 4};
  refused(c, 64, 80, "transformed dimensions");
  c = good;
  c.fft_length = {1, 2, 3, 4};
  refused(c, 64, 80, "1 to 3");
  c = good;
  c.input_dimensions = {-2, 8};
  refused(c, 64, 80, "negative");
  c = good;
  c.input_dimensions = {int64_t{1} << 62, 8};
  c.output_dimensions = {int64_t{1} << 62, 5};
  refused(c, 64, 80, "overflow");
  // The CPU runtime refuses such a thunk when it loads, naming it.
  runtime::Executable exe;
  exe.module_name = "bad_fft";
  exe.platform = "cpu";
  exe.allocations.resize(2);
  for (int i = 0; i < 2; ++i) exe.allocations[i].index = i, exe.allocations[i].size = 64;
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kFft;
  t.name = "fft.1";
  t.fft = good;
  t.arguments = {{0, 0, 64}, {1, 0, 64}};
  t.written = {false, true};
  exe.thunks.push_back(t);
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(exe, {});
  REQUIRE(!loaded.ok());
  INFO(loaded.status().message());
  CHECK(loaded.status().message().find("fft.1") != std::string::npos);
  CHECK(loaded.status().message().find("slices hold") != std::string::npos);
}

TEST_CASE("fft: a non-default layout on the fft gets the default one from layout assignment", "[fft][cpu]") {
  // The parameter is column-major; layout assignment must put a copy in front of the fft.
  const std::string text = R"(HloModule m
ENTRY e {
  p = c64[6,4]{0,1} parameter(0)
  ROOT f = c64[6,4]{0,1} fft(p), fft_type=FFT, fft_length={4}
})";
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  std::mt19937 rng(3);
  Literal input = RandomLiteral((*m)->entry_computation()->parameter_instruction(0)->shape(), rng);
  absl::StatusOr<Literal> want = EvaluateModule(**m, {input});
  REQUIRE(want.ok());
  absl::StatusOr<runtime::Executable> exe = CompileCpu(text);
  INFO((exe.ok() ? std::string("compiled") : std::string(exe.status().message())));
  REQUIRE(exe.ok());
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(*exe, {});
  REQUIRE(loaded.ok());
  runtime::HostBuffer arg;  // row-major data; the runtime moves it into the parameter's layout
  arg.shape = exe->parameter_shapes[0];
  arg.shape.minor_to_major = {1, 0};
  arg.data.assign(input.untyped_data(), input.untyped_data() + arg.shape.byte_size());
  absl::StatusOr<std::vector<runtime::HostBuffer>> got = (*loaded)->Run({arg});
  REQUIRE(got.ok());
  absl::StatusOr<runtime::HostBuffer> row_major = runtime::ToLayout((*got)[0], {1, 0});
  REQUIRE(row_major.ok());
  CompareResult r = CompareLiterals(FromHost(*row_major, want->shape()), *want, 2e-5);
  INFO(r.message);
  CHECK(r.ok);
}

TEST_CASE("fft: the GPU backend emits cuFFT thunks (deviceless) and matches the evaluator on a GPU", "[fft][gpu]") {
  const std::vector<FftCase> cases = Cases();
  const absl::Status gpu = runtime::GpuRuntimeAvailable();
  const absl::Status cufft = gpu.ok() ? runtime::gpu::CufftAvailable() : gpu;
  if (!cufft.ok()) WARN("SKIPPED (no GPU or no cuFFT): " << cufft.message() << " -- compiling deviceless only");
  uint32_t seed = 100;
  for (const FftCase& c : cases) {
    INFO(c.Name());
    codegen::gpu::GpuCompileArtifacts art;
    absl::StatusOr<runtime::Executable> exe = CompileGpu(ModuleText(c), &art);
    INFO((exe.ok() ? std::string("compiled") : std::string(exe.status().message())));
    REQUIRE(exe.ok());
    const runtime::Thunk* fft = nullptr;
    for (const runtime::Thunk& t : exe->thunks)
      if (t.kind == runtime::ThunkKind::kFft) fft = &t;
    Reference ref = Evaluate(c, seed++);
    REQUIRE((fft != nullptr) == (ref.expected.element_count() > 0));
    if (fft == nullptr) continue;
    // Inverse transforms with something to scale name the compiler's scaling kernel.
    absl::StatusOr<runtime::FftGeometry> g = runtime::AnalyzeFft(fft->fft, fft->arguments[0].size, fft->arguments[1].size);
    REQUIRE(g.ok());
    CHECK(fft->kernel_name.empty() == (g->scale_divisor == 1 || g->output_reals() == 0));
    if (!fft->kernel_name.empty()) {
      const std::string ptx(exe->code.begin(), exe->code.end());
      CHECK(ptx.find(".entry " + fft->kernel_name) != std::string::npos);
      CHECK(testing::AssemblePtx(ptx, "sm_90", "fft_scale") == "");
    }
    if (!cufft.ok()) continue;
    absl::StatusOr<std::unique_ptr<runtime::GpuExecutable>> loaded = runtime::GpuExecutable::Load(*exe, {});
    INFO((loaded.ok() ? std::string("loaded") : std::string(loaded.status().message())));
    REQUIRE(loaded.ok());
    const std::vector<runtime::HostBuffer> args = {ToHost(ref.input, exe->parameter_shapes[0])};
    for (int run = 0; run < 2; ++run) {
      absl::StatusOr<std::vector<runtime::HostBuffer>> got = (*loaded)->Run(args);
      INFO((got.ok() ? std::string("ran") : std::string(got.status().message())));
      REQUIRE(got.ok());
      CheckResult(c, ref, (*got)[0]);
    }
  }
}

}  // namespace
}  // namespace hloc
