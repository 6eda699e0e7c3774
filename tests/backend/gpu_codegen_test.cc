// The GPU compiler, deviceless: every corpus module (small and large) compiles with the h200
// profile and its PTX assembles with ptxas for sm_90 (skipped with a message when ptxas is
// absent); the a100 profile gives sm_80 PTX that assembles for sm_80; the executable
// serializes; library calls become kGemm/kConvolution thunks; the kernel emitters pick the
// row-reduction, transpose, sort and scatter strategies; CommandBufferConversionPass on
// hand-made thunk sequences. Nothing here needs a GPU (scripts/gpu-check runs the GPU side).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/gpu/command_buffer_conversion.h"
#include "codegen/gpu/gpu_compiler.h"
#include "ir/hlo_parser.h"
#include "gpu_test_util.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;
using testing::HavePtxas;
using testing::kPtxas;
using codegen::gpu::CommandBufferConversionOptions;
using codegen::gpu::GpuCompileArtifacts;
using codegen::gpu::GpuCompileOptions;
using codegen::gpu::GpuCompiler;
using runtime::Thunk;
using runtime::ThunkKind;
using runtime::ThunkSequence;

const std::string kSource = HLOC_SOURCE_DIR;
const std::string kCorpus = std::string(HLOC_TESTS_DIR) + "/corpus";

GpuCompileOptions ProfileOptions(const std::string& profile) {
  GpuCompileOptions options;
  absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline(profile, {kSource + "/configs"}, {kSource + "/pipelines"},
                                                           options);
  INFO(s.message());
  REQUIRE(s.ok());
  return options;
}

absl::StatusOr<runtime::Executable> CompileText(const std::string& text, GpuCompileOptions options,
                                                GpuCompileArtifacts* artifacts) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return GpuCompiler::Compile(**m, options, artifacts);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::vector<std::string> CorpusModules(const std::string& size) {
  std::vector<std::string> out;
  const std::string suffix = "." + size + ".before_optimizations.txt";
  for (const auto& e : fs::directory_iterator(kCorpus)) {
    const std::string n = e.path().filename().string();
    if (absl::EndsWith(n, suffix)) out.push_back(n.substr(0, n.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

void ForEachThunk(const ThunkSequence& seq, const std::function<void(const Thunk&)>& f) {
  for (const Thunk& t : seq) {
    f(t);
    ForEachThunk(t.condition, f);
    ForEachThunk(t.body, f);
    for (const ThunkSequence& b : t.branches) ForEachThunk(b, f);
  }
}

void CompileCorpus(const std::string& size, const std::string& profile, const std::string& arch) {
  const std::vector<std::string> modules = CorpusModules(size);
  REQUIRE(!modules.empty());
  if (!HavePtxas()) WARN("ptxas not found at " << kPtxas << ": PTX generated but not assembled");
  for (const std::string& name : modules) {
    DYNAMIC_SECTION(name << "." << size << " (" << profile << ")") {
      GpuCompileArtifacts artifacts;
      absl::StatusOr<runtime::Executable> exe =
          CompileText(ReadFile(absl::StrCat(kCorpus, "/", name, ".", size, ".before_optimizations.txt")),
                      ProfileOptions(profile), &artifacts);
      INFO(exe.status().message());
      REQUIRE(exe.ok());
      CHECK(exe->platform == "gpu");
      CHECK(exe->target == arch);
      CHECK(absl::StrContains(artifacts.ptx, ".target " + arch));
      // Every kernel thunk names an entry of the PTX.
      ForEachThunk(exe->thunks, [&](const Thunk& t) {
        if (t.kind != ThunkKind::kKernel) return;
        INFO(t.kernel_name);
        CHECK(absl::StrContains(artifacts.ptx, ".entry " + t.kernel_name + "("));
        CHECK(t.launch.block_x * t.launch.block_y * t.launch.block_z <= 1024);
        CHECK(t.launch.grid_x >= 1);
      });
      absl::StatusOr<runtime::Executable> back = runtime::Executable::Deserialize(exe->Serialize(), name);
      INFO(back.status().message());
      CHECK(back.ok());
      if (HavePtxas()) {
        const std::string err = testing::AssemblePtx(artifacts.ptx, arch, absl::StrCat(name, ".", size, ".", arch));
        INFO(err);
        CHECK(err.empty());
      }
    }
  }
}

TEST_CASE("gpu codegen: every small corpus module compiles for h200 and its PTX assembles (sm_90)",
          "[gpu][codegen][corpus]") {
  CompileCorpus("small", "h200", "sm_90");
}

TEST_CASE("gpu codegen: every large corpus module compiles for h200 and its PTX assembles (sm_90)",
          "[gpu][codegen][corpus][large]") {
  CompileCorpus("large", "h200", "sm_90");
}

TEST_CASE("gpu codegen: the a100 profile gives sm_80 PTX", "[gpu][codegen][corpus]") {
  CompileCorpus("small", "a100", "sm_80");
}

// The kernel and thunk kinds a module compiles to.
struct Compiled {
  runtime::Executable exe;
  GpuCompileArtifacts artifacts;
};
Compiled MustCompile(const std::string& text, bool command_buffers = false, bool small_gemm_kernels = true) {
  GpuCompileOptions options = ProfileOptions("h200");
  options.command_buffers = command_buffers;
  options.small_gemm.enabled = small_gemm_kernels;
  Compiled c;
  absl::StatusOr<runtime::Executable> exe = CompileText(text, std::move(options), &c.artifacts);
  INFO(exe.status().message());
  REQUIRE(exe.ok());
  c.exe = std::move(*exe);
  return c;
}

TEST_CASE("gpu codegen: cuBLAS custom-calls become kGemm thunks with the config", "[gpu][codegen]") {
  // (Small GEMMs off: by default these become our own kernel, gpu_small_gemm_test.cc.)
  Compiled c = MustCompile(ReadFile(kCorpus + "/mlp_fwd_bf16.small.before_optimizations.txt"), false, false);
  int gemms = 0;
  ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
    if (t.kind != ThunkKind::kGemm) return;
    ++gemms;
    CHECK(t.gemm.lhs_type == "bf16");
    CHECK(t.gemm.output_type == "bf16");
    CHECK(t.gemm.compute_type == "f32");
    CHECK(t.gemm.m == 8);
    CHECK(t.gemm.batch == 1);
    CHECK(t.arguments.size() == (t.gemm.epilogue == "DEFAULT" ? 3u : 4u));
    CHECK(t.written.back());
  });
  CHECK(gemms == 2);
  CHECK(absl::StrContains(c.artifacts.thunk_sequence, "kGemm"));
}

TEST_CASE("gpu codegen: a transposed-operand dot gets transpose flags and leading dims", "[gpu][codegen]") {
  Compiled c = MustCompile(R"(
HloModule m
ENTRY e {
  a = f32[64,32]{1,0} parameter(0)
  b = f32[48,64]{1,0} parameter(1)
  ROOT d = f32[32,48]{1,0} dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}
})", false, false);
  int gemms = 0;
  ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
    if (t.kind != ThunkKind::kGemm) return;
    ++gemms;
    CHECK(t.gemm.m == 32);
    CHECK(t.gemm.n == 48);
    CHECK(t.gemm.k == 64);
    CHECK(t.gemm.lhs_transposed);
    CHECK(t.gemm.rhs_transposed);
    CHECK(t.gemm.lhs_leading_dim == 32);
    CHECK(t.gemm.rhs_leading_dim == 64);
    CHECK(t.gemm.output_leading_dim == 48);
  });
  CHECK(gemms == 1);
}

TEST_CASE("gpu codegen: cuDNN custom-calls become kConvolution thunks with the JSON config", "[gpu][codegen]") {
  Compiled c = MustCompile(ReadFile(kCorpus + "/conv_train_step.small.before_optimizations.txt"));
  std::vector<std::string> kinds;
  ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
    if (t.kind != ThunkKind::kConvolution) return;
    INFO(t.backend_config);
    CHECK(absl::StrContains(t.backend_config, "\"window\":[{\"size\":3"));
    CHECK(absl::StrContains(t.backend_config, "\"arguments\":["));
    CHECK(t.written.back());
    if (absl::StrContains(t.backend_config, "\"kind\":\"forward\"")) kinds.push_back("forward");
    if (absl::StrContains(t.backend_config, "\"kind\":\"backward_filter\"")) kinds.push_back("backward_filter");
  });
  CHECK(std::count(kinds.begin(), kinds.end(), "forward") >= 1);
  CHECK(std::count(kinds.begin(), kinds.end(), "backward_filter") >= 1);
}

TEST_CASE("gpu codegen: kernel strategies", "[gpu][codegen]") {
  SECTION("softmax: one row-reduction kernel with warp shuffles, several rows per block") {
    Compiled c = MustCompile(ReadFile(kCorpus + "/softmax.small.before_optimizations.txt"));
    CHECK(absl::StrContains(c.artifacts.ptx, "shfl.sync.bfly"));
    ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
      if (t.kind == ThunkKind::kKernel) CHECK(t.launch.block_x == 256);
    });
  }
  SECTION("long rows: a block per row combining through shared memory") {
    Compiled c = MustCompile(R"(
HloModule m
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  x = f32[64,4096]{1,0} parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[64]{0} reduce(x, z), dimensions={1}, to_apply=add
})");
    CHECK(absl::StrContains(c.artifacts.ptx, "bar.sync"));
    CHECK(absl::StrContains(c.artifacts.ptx, ".shared"));
  }
  SECTION("transpose: 32x32 tiles through shared memory") {
    Compiled c = MustCompile(R"(
HloModule m
ENTRY e {
  x = f32[512,256]{1,0} parameter(0)
  ROOT t = f32[256,512]{1,0} transpose(x), dimensions={1,0}
})");
    bool tiled = false;
    ForEachThunk(c.exe.thunks, [&](const Thunk& t) {
      if (t.kind == ThunkKind::kKernel && t.launch.block_x == 32 && t.launch.block_y == 8) tiled = true;
    });
    CHECK(tiled);
    CHECK(absl::StrContains(c.artifacts.ptx, ".shared"));
  }
  SECTION("elementwise: 16-byte vector stores") {
    Compiled c = MustCompile(R"(
HloModule m
ENTRY e {
  x = f32[1024,1024]{1,0} parameter(0)
  ROOT y = f32[1024,1024]{1,0} exponential(x)
})");
    CHECK(absl::StrContains(c.artifacts.ptx, "st.global.v4.f32"));
    CHECK(absl::StrContains(c.artifacts.llvm_ir, "__nv_expf"));
  }
  SECTION("sort: bitonic in shared memory") {
    Compiled c = MustCompile(ReadFile(kCorpus + "/sort_topk.large.before_optimizations.txt"));
    CHECK(absl::StrContains(c.artifacts.ptx, ".shared"));
    CHECK(absl::StrContains(c.artifacts.ptx, "bar.sync"));
  }
  SECTION("scatter-add: atomics") {
    Compiled c = MustCompile(ReadFile(kCorpus + "/gather_scatter.small.before_optimizations.txt"));
    const std::string& ptx = c.artifacts.ptx;
    const bool atomic = absl::StrContains(ptx, "atom.global.add.f32") || absl::StrContains(ptx, "red.global.add.f32") ||
                        absl::StrContains(ptx, "atom.add.f32") || absl::StrContains(ptx, "red.add.f32");
    CHECK(atomic);
  }
}

TEST_CASE("gpu codegen: dumps", "[gpu][codegen]") {
  const fs::path dir = fs::temp_directory_path() / "hloc_gpu_codegen_dump";
  fs::remove_all(dir);
  GpuCompileOptions options = ProfileOptions("h200");
  options.dump_to = dir.string();
  absl::StatusOr<runtime::Executable> exe =
      CompileText(ReadFile(kCorpus + "/softmax.small.before_optimizations.txt"), std::move(options), nullptr);
  REQUIRE(exe.ok());
  for (const char* suffix : {".ptx", ".thunk_sequence.txt", ".after_optimizations.txt",
                             ".after_optimizations-buffer-assignment.txt", ".ir-no-opt.ll"}) {
    bool found = false;
    for (const auto& e : fs::directory_iterator(dir))
      if (absl::EndsWith(e.path().filename().string(), suffix)) found = true;
    INFO(suffix);
    CHECK(found);
  }
}

// ---- CommandBufferConversionPass ------------------------------------------------------------

Thunk MakeThunk(ThunkKind kind, const std::string& name, int64_t in, int64_t out) {
  Thunk t;
  t.kind = kind;
  t.name = name;
  t.arguments = {runtime::BufferSlice{in, 0, 16}, runtime::BufferSlice{out, 0, 16}};
  t.written = {false, true};
  return t;
}

std::string Kinds(const ThunkSequence& seq) {
  std::string s;
  for (const Thunk& t : seq) {
    if (!s.empty()) s += " ";
    s += t.kind == ThunkKind::kCommandBuffer ? absl::StrCat("CB(", Kinds(t.body), ")")
                                             : std::string(runtime::ThunkKindName(t.kind)).substr(1);
  }
  return s;
}

TEST_CASE("command buffers: runs of kernel, GEMM and copy thunks become one kCommandBuffer", "[gpu][command_buffer]") {
  ThunkSequence seq = {MakeThunk(ThunkKind::kKernel, "a", 0, 1), MakeThunk(ThunkKind::kGemm, "b", 1, 2),
                       MakeThunk(ThunkKind::kKernel, "c", 2, 3), MakeThunk(ThunkKind::kCopy, "d", 3, 4),
                       MakeThunk(ThunkKind::kKernel, "e", 4, 5), MakeThunk(ThunkKind::kMemset, "f", 5, 5),
                       MakeThunk(ThunkKind::kKernel, "g", 5, 6), MakeThunk(ThunkKind::kKernel, "h", 6, 7)};
  CommandBufferConversionOptions o;
  o.lanes = 3;
  absl::StatusOr<int64_t> n = codegen::gpu::RunCommandBufferConversion(seq, o);
  REQUIRE(n.ok());
  CHECK(*n == 2);
  CHECK(Kinds(seq) == "CB(Kernel Gemm Kernel Copy Kernel) Memset CB(Kernel Kernel)");
  // The command buffer's arguments: each slice once, written where a body thunk writes it.
  const Thunk& cb = seq[0];
  CHECK(cb.name == "command_buffer.0");
  CHECK(cb.arguments.size() == 6);
  CHECK(cb.written == std::vector<bool>{false, true, true, true, true, true});
  // The sequence still serializes and validates.
  runtime::Executable exe;
  exe.allocations.resize(8);
  for (int64_t i = 0; i < 8; ++i) {
    exe.allocations[i].index = i;
    exe.allocations[i].size = 16;
  }
  exe.thunks = seq;
  absl::StatusOr<runtime::Executable> back = runtime::Executable::Deserialize(exe.Serialize(), "test");
  INFO(back.status().message());
  REQUIRE(back.ok());
  CHECK(Kinds(back->thunks) == Kinds(seq));
  // The lanes chosen at compile time travel with each command buffer.
  CHECK(back->thunks[0].lanes == 3);
  CHECK(back->thunks[2].lanes == 3);
  CHECK(absl::StrContains(runtime::ThunkSequenceToString(seq), "kCommandBuffer"));
  CHECK(absl::StrContains(runtime::ThunkSequenceToString(seq), "lanes=3"));
}

TEST_CASE("command buffers: options", "[gpu][command_buffer]") {
  auto make = [] {
    return ThunkSequence{MakeThunk(ThunkKind::kKernel, "a", 0, 1), MakeThunk(ThunkKind::kCopy, "b", 1, 2),
                         MakeThunk(ThunkKind::kKernel, "c", 2, 3), MakeThunk(ThunkKind::kKernel, "d", 3, 4),
                         MakeThunk(ThunkKind::kKernel, "e", 4, 5)};
  };
  SECTION("min_graph_size") {
    ThunkSequence seq = make();
    CommandBufferConversionOptions o;
    o.min_graph_size = 3;
    o.kinds = {ThunkKind::kKernel, ThunkKind::kGemm};  // copies out: the run before the copy is short
    REQUIRE(codegen::gpu::RunCommandBufferConversion(seq, o).ok());
    CHECK(Kinds(seq) == "Kernel Copy CB(Kernel Kernel Kernel)");
  }
  SECTION("kinds include copies") {
    ThunkSequence seq = make();
    CommandBufferConversionOptions o;
    absl::StatusOr<std::set<ThunkKind>> kinds = codegen::gpu::ParseCommandBufferKinds("fusion, COPY");
    REQUIRE(kinds.ok());
    o.kinds = *kinds;
    REQUIRE(codegen::gpu::RunCommandBufferConversion(seq, o).ok());
    CHECK(Kinds(seq) == "CB(Kernel Copy Kernel Kernel Kernel)");
  }
  SECTION("disabled") {
    ThunkSequence seq = make();
    CommandBufferConversionOptions o;
    o.enabled = false;
    REQUIRE(codegen::gpu::RunCommandBufferConversion(seq, o).ok());
    CHECK(Kinds(seq) == "Kernel Copy Kernel Kernel Kernel");
  }
  SECTION("XLA's flag names") {
    absl::StatusOr<std::set<ThunkKind>> k = codegen::gpu::ParseCommandBufferKinds("FUSION,CUBLAS,CUBLASLT,CUDNN");
    REQUIRE(k.ok());
    CHECK(*k == std::set<ThunkKind>{ThunkKind::kKernel, ThunkKind::kGemm, ThunkKind::kConvolution});
    CHECK(!codegen::gpu::ParseCommandBufferKinds("FUSION,BOGUS").ok());
  }
}

TEST_CASE("command buffers: while and conditional bodies are converted, the loops stay outside",
          "[gpu][command_buffer]") {
  Thunk w;
  w.kind = ThunkKind::kWhile;
  w.name = "loop";
  w.condition = {MakeThunk(ThunkKind::kKernel, "cond", 0, 1)};
  w.body = {MakeThunk(ThunkKind::kKernel, "b1", 1, 2), MakeThunk(ThunkKind::kGemm, "b2", 2, 3)};
  Thunk c;
  c.kind = ThunkKind::kConditional;
  c.name = "branch";
  c.branches = {{MakeThunk(ThunkKind::kKernel, "t1", 0, 1), MakeThunk(ThunkKind::kKernel, "t2", 1, 2)},
                {MakeThunk(ThunkKind::kKernel, "f1", 0, 1)}};
  ThunkSequence seq = {MakeThunk(ThunkKind::kKernel, "pre", 0, 1), w, c};
  absl::StatusOr<int64_t> n = codegen::gpu::RunCommandBufferConversion(seq, CommandBufferConversionOptions{});
  REQUIRE(n.ok());
  CHECK(*n == 2);
  REQUIRE(seq.size() == 3);
  CHECK(seq[1].kind == ThunkKind::kWhile);
  CHECK(Kinds(seq[1].condition) == "Kernel");
  CHECK(Kinds(seq[1].body) == "CB(Kernel Gemm)");
  CHECK(Kinds(seq[2].branches[0]) == "CB(Kernel Kernel)");
  CHECK(Kinds(seq[2].branches[1]) == "Kernel");
}

TEST_CASE("gpu codegen: the compiler wraps kernel runs in command buffers by default", "[gpu][command_buffer]") {
  Compiled c = MustCompile(ReadFile(kCorpus + "/mlp_train_step_f32.small.before_optimizations.txt"), true);
  bool found = false;
  ForEachThunk(c.exe.thunks, [&](const Thunk& t) { found = found || t.kind == ThunkKind::kCommandBuffer; });
  CHECK(found);
}

}  // namespace
}  // namespace hloc
