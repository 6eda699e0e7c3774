// The small-GEMM kernel's dispatch (src/codegen/gpu/gpu_small_gemm.h), deviceless: which GEMMs
// take it, the tile and the checks of its plan, the thunks it gives (custom-calls and plain dots,
// C aliasing D in scan_rnn), the option, and that its PTX assembles for every tile shape. The
// kernel's math is checked on the CPU by tests/gpu_small_gemm/emu_check.py (LLVM IR run on the
// host) and on the GPU by the corpus modules with --expect.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/gpu/gpu_compiler.h"
#include "codegen/gpu/gpu_small_gemm.h"
#include "passes/library/small_gemm_selector.h"
#include "ir/hlo_parser.h"
#include "gpu_test_util.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;
using codegen::gpu::GpuCompileArtifacts;
using codegen::gpu::GpuCompileOptions;
using codegen::gpu::GpuDeviceInfo;
using codegen::gpu::SmallGemmOptions;
using codegen::gpu::SmallGemmRoles;
using runtime::BufferSlice;
using runtime::GemmConfig;
using runtime::Thunk;
using runtime::ThunkKind;
using runtime::ThunkSequence;

const std::string kSource = HLOC_SOURCE_DIR;
const std::string kCorpus = std::string(HLOC_TESTS_DIR) + "/corpus";

GemmConfig Config(int64_t batch, int64_t m, int64_t n, int64_t k, const std::string& type = "f32") {
  GemmConfig g;
  g.lhs_type = g.rhs_type = g.output_type = type;
  g.compute_type = "f32";
  g.batch = batch, g.m = m, g.n = n, g.k = k;
  return g;
}

BufferSlice Slice(int64_t allocation, int64_t offset, int64_t size) {
  BufferSlice s;
  s.allocation = allocation, s.offset = offset, s.size = size;
  return s;
}

struct Compiled {
  runtime::Executable exe;
  GpuCompileArtifacts artifacts;
};

Compiled MustCompile(const std::string& path, const SmallGemmOptions& small_gemm) {
  GpuCompileOptions options;
  absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"},
                                                           options);
  INFO(s.message());
  REQUIRE(s.ok());
  options.small_gemm = small_gemm;
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  INFO(path);
  REQUIRE(m.ok());
  Compiled c;
  absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(**m, options, &c.artifacts);
  INFO(exe.status().message());
  REQUIRE(exe.ok());
  c.exe = std::move(*exe);
  return c;
}

void ForEachThunk(const ThunkSequence& seq, const std::function<void(const Thunk&)>& f) {
  for (const Thunk& t : seq) {
    f(t);
    ForEachThunk(t.condition, f);
    ForEachThunk(t.body, f);
    for (const ThunkSequence& b : t.branches) ForEachThunk(b, f);
  }
}

// The decision is small-gemm-selector's (passes/library/small_gemm_selector.h), made once in
// the pipeline and recorded in the module; codegen only reads the marking (issue 15).
GemmGeometry Geo(int64_t batch, int64_t m, int64_t n, int64_t k, const std::string& type = "f32") {
  GemmGeometry g;
  g.lhs_type = g.rhs_type = g.output_type = type;
  g.compute_type = "f32";
  g.batch = batch, g.m = m, g.n = n, g.k = k;
  return g;
}

TEST_CASE("small gemm: which GEMMs take the kernel", "[gpu][small_gemm]") {
  const SmallGemmLimits lim;  // the tuning defaults, 2^24 and 128
  auto applies = [&](const GemmGeometry& g, const char* epilogue = "DEFAULT") {
    return SmallGemmApplies(g, 1.0, 0.0, epilogue, lim);
  };
  CHECK(applies(Geo(1, 64, 512, 256)));   // scan_rnn.large's step
  CHECK(applies(Geo(1, 64, 512, 512)));   // 2^24 multiply-adds: the limit
  CHECK_FALSE(applies(Geo(1, 64, 512, 513)));
  CHECK_FALSE(applies(Geo(1, 128, 512, 512)));  // 2^25 (flax_gru_train's step): cuBLAS
  CHECK_FALSE(applies(Geo(1, 256, 256, 256)));  // both sides long: cuBLAS
  CHECK_FALSE(applies(Geo(64, 512, 512, 512)));
  CHECK(applies(Geo(16, 16, 16, 8, "bf16")));
  CHECK(applies(Geo(1, 8, 64, 32, "f16")));
  CHECK_FALSE(applies(Geo(1, 8, 8, 8, "f64")));
  CHECK_FALSE(applies(Geo(1, 8, 8, 8, "s8")));
  GemmGeometry mixed = Geo(1, 8, 8, 8, "bf16");
  mixed.output_type = "f32";
  CHECK(applies(mixed));
  mixed.rhs_type = "f16";
  CHECK_FALSE(applies(mixed));
  for (const char* e : {"DEFAULT", "BIAS", "RELU", "BIAS_RELU", "GELU", "BIAS_GELU"}) CHECK(applies(Geo(1, 8, 8, 8), e));
  CHECK_FALSE(applies(Geo(1, 8, 8, 8), "GELU_AUX"));
  CHECK_FALSE(applies(Geo(1, 0, 8, 8)));
  CHECK_FALSE(applies(Geo(1, int64_t{1} << 40, 8, int64_t{1} << 40)));  // no overflow
  CHECK_FALSE(SmallGemmApplies(Geo(1, 8, 8, 8), 1.0, std::nan(""), "DEFAULT", lim));
  // The profile's tuning moves the limits.
  SmallGemmLimits small;
  small.max_macs = 1000;
  CHECK_FALSE(SmallGemmApplies(Geo(1, 64, 512, 256), 1.0, 0.0, "DEFAULT", small));
  SmallGemmLimits narrow;
  narrow.max_short_side = 32;
  CHECK_FALSE(SmallGemmApplies(Geo(1, 64, 512, 256), 1.0, 0.0, "DEFAULT", narrow));
}

TEST_CASE("small gemm: plans check the buffers and pick the tile", "[gpu][small_gemm]") {
  using codegen::gpu::PlanSmallGemm;
  GpuDeviceInfo device;
  SmallGemmOptions on;
  const GemmConfig g = Config(1, 64, 512, 256);
  std::vector<BufferSlice> args = {Slice(0, 0, 64 * 256 * 4), Slice(1, 0, 256 * 512 * 4), Slice(2, 0, 64 * 512 * 4)};
  auto plan = PlanSmallGemm(g, SmallGemmRoles{}, args, device, on);
  REQUIRE(plan.has_value());
  CHECK(plan->rows == 4);  // 256 blocks: the fastest tile measured (gpu_small_gemm.cc)
  CHECK(plan->warps == 8);
  CHECK(plan->depth == 2);
  CHECK(plan->m_tiles * plan->n_tiles == 256);
  CHECK(plan->config.lhs_leading_dim == 256);
  CHECK(plan->config.rhs_leading_dim == 512);
  CHECK(plan->config.output_leading_dim == 512);
  // A type the kernel lacks, a short buffer, an input the kernel would write: no plan (the
  // caller falls back to cuBLAS or the elemental kernel). No size limit here: the pass decided.
  CHECK_FALSE(PlanSmallGemm(Config(1, 8, 8, 8, "f64"), SmallGemmRoles{}, args, device, on).has_value());
  std::vector<BufferSlice> short_b = args;
  short_b[1].size -= 4;
  CHECK_FALSE(PlanSmallGemm(g, SmallGemmRoles{}, short_b, device, on).has_value());
  std::vector<BufferSlice> a_is_d = args;
  a_is_d[0] = args[2];
  CHECK_FALSE(PlanSmallGemm(g, SmallGemmRoles{}, a_is_d, device, on).has_value());
  // beta = 1 with C in D's own buffer (scan_rnn's second GEMM) is fine; C needs its role.
  GemmConfig beta = g;
  beta.beta = 1;
  std::vector<BufferSlice> cd = {args[0], args[1], args[2], args[2]};
  SmallGemmRoles roles;
  roles.c = 2, roles.d = 3;
  CHECK(PlanSmallGemm(beta, roles, cd, device, on).has_value());
  CHECK_FALSE(PlanSmallGemm(beta, SmallGemmRoles{}, args, device, on).has_value());
  // A bias of n elements.
  GemmConfig bias = g;
  bias.epilogue = "BIAS_RELU";
  std::vector<BufferSlice> with_bias = {args[0], args[1], Slice(3, 0, 512 * 4), args[2]};
  CHECK(PlanSmallGemm(bias, roles, with_bias, device, on).has_value());
  with_bias[2].size = 511 * 4;
  CHECK_FALSE(PlanSmallGemm(bias, roles, with_bias, device, on).has_value());
  // Small problems: fewer rows per block for more blocks; short K: fewer warps.
  auto tiny = PlanSmallGemm(Config(1, 4, 16, 16), SmallGemmRoles{},
                            {Slice(0, 0, 4 * 16 * 4), Slice(1, 0, 16 * 16 * 4), Slice(2, 0, 4 * 16 * 4)}, device, on);
  REQUIRE(tiny.has_value());
  CHECK(tiny->rows == 1);
  CHECK(tiny->warps == 1);
  // Overrides.
  SmallGemmOptions tile;
  tile.rows = 16, tile.warps = 2;
  auto t = PlanSmallGemm(g, SmallGemmRoles{}, args, device, tile);
  REQUIRE(t.has_value());
  CHECK(t->rows == 16);
  CHECK(t->warps == 2);
}

TEST_CASE("small gemm: the option's text", "[gpu][small_gemm]") {
  using codegen::gpu::ParseSmallGemmOptions;
  CHECK(ParseSmallGemmOptions("on")->enabled);
  CHECK_FALSE(ParseSmallGemmOptions("off")->enabled);
  auto t = ParseSmallGemmOptions("4x2");
  REQUIRE(t.ok());
  CHECK(t->enabled);
  CHECK(t->rows == 4);
  CHECK(t->warps == 2);
  CHECK(t->depth == 0);  // chosen per GEMM
  auto d = ParseSmallGemmOptions("8x8x2");
  REQUIRE(d.ok());
  CHECK(d->depth == 2);
  auto m = ParseSmallGemmOptions("8x8,max=67108864");
  REQUIRE(m.ok());
  CHECK(m->rows == 8);
  CHECK(m->max_macs == 67108864);
  // The limit decides (GpuCompiler::Compile writes it into the profile's small_gemm_max_macs,
  // which small-gemm-selector reads): a 128x512x512 GEMM is over the default 2^24 and under 2^26.
  SmallGemmLimits limits;
  CHECK_FALSE(SmallGemmApplies(Geo(1, 128, 512, 512), 1.0, 0.0, "DEFAULT", limits));
  limits.max_macs = m->max_macs;
  CHECK(SmallGemmApplies(Geo(1, 128, 512, 512), 1.0, 0.0, "DEFAULT", limits));
  for (const char* bad : {"", "yes", "4x", "x2", "0x2", "4x17", "4x2x9", "4x2x1x1", "-1x2", "max=0", "max=x", "on,"}) {
    INFO(bad);
    CHECK_FALSE(ParseSmallGemmOptions(bad).ok());
  }
}

TEST_CASE("small gemm: scan_rnn's step GEMMs become kernels, C aliasing D", "[gpu][small_gemm]") {
  Compiled on = MustCompile(kCorpus + "/scan_rnn.large.before_optimizations.txt", SmallGemmOptions{});
  int kernels = 0, gemms = 0;
  ForEachThunk(on.exe.thunks, [&](const Thunk& t) {
    if (t.kind == ThunkKind::kGemm) ++gemms;
    if (t.kind != ThunkKind::kKernel || t.launch.grid_x != 256 || t.launch.block_x != 256) return;
    ++kernels;
    REQUIRE(t.arguments.size() >= 3);
    CHECK(t.written.back());
    if (t.arguments.size() == 4) {
      // The second GEMM adds the first's result in place: C is D's slice.
      CHECK(t.arguments[2].allocation == t.arguments[3].allocation);
      CHECK(t.arguments[2].offset == t.arguments[3].offset);
      CHECK_FALSE(t.written[2]);
    }
  });
  CHECK(gemms == 0);
  CHECK(kernels == 2);
  CHECK(testing::AssemblePtx(on.artifacts.ptx, "sm_90", "scan_rnn_large").empty());
  SmallGemmOptions off;
  off.enabled = false;
  Compiled cublas = MustCompile(kCorpus + "/scan_rnn.large.before_optimizations.txt", off);
  gemms = 0;
  ForEachThunk(cublas.exe.thunks, [&](const Thunk& t) { gemms += t.kind == ThunkKind::kGemm; });
  CHECK(gemms == 2);
}

TEST_CASE("small gemm: PTX assembles for every tile shape", "[gpu][small_gemm]") {
  // Odd tiles (rows not a power of two, warps not dividing the tile) and the largest.
  for (const char* tile : {"1x1", "3x5", "8x8", "32x8x2", "16x3x1", "8x8x8"}) {
    absl::StatusOr<SmallGemmOptions> o = codegen::gpu::ParseSmallGemmOptions(tile);
    REQUIRE(o.ok());
    for (const char* name : {"dot_variants", "mlp_train_step_f32", "transformer_block_bf16", "mlp_fwd_bf16"}) {
      INFO(tile << " " << name);
      Compiled c = MustCompile(absl::StrCat(kCorpus, "/", name, ".small.before_optimizations.txt"), *o);
      int kernels = 0;
      ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
        kernels += t.kind == ThunkKind::kKernel && absl::StrContains(c.artifacts.ptx, t.kernel_name + "_$_partials");
      });
      CHECK(kernels >= 1);
      const std::string err = testing::AssemblePtx(c.artifacts.ptx, "sm_90", absl::StrCat(name, "_", tile));
      INFO(err);
      CHECK(err.empty());
    }
  }
}

}  // namespace
}  // namespace hloc
