// The sort and top-k kernels (src/codegen/gpu/gpu_sort_registers.cc, gpu_topk_warp.cc),
// deviceless: the modules of tests/lit/gpu-sort/Inputs (padded rows, several rows a block,
// shared-memory steps, sorts along a major dimension, a moved f16 payload, top-k of bf16, s32,
// u8, f64 and a k beyond the warp kernel) compile for h200 and their PTX assembles for sm_90;
// the kernels the strategies promise are there. The outputs are checked on the GPU machine
// (`hloc run M --backend gpu --seed 3 --outputs O.npz; hloc eval M --seed 3 --expect O.npz`).
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "codegen/gpu/gpu_compiler.h"
#include "ir/hlo_parser.h"
#include "gpu_test_util.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;
using codegen::gpu::GpuCompileArtifacts;
using codegen::gpu::GpuCompileOptions;
using codegen::gpu::GpuCompiler;
using runtime::Thunk;
using runtime::ThunkKind;
using runtime::ThunkSequence;

const std::string kSource = HLOC_SOURCE_DIR;
const std::string kInputs = std::string(HLOC_TESTS_DIR) + "/lit/gpu-sort/Inputs";

struct Compiled {
  runtime::Executable exe;
  GpuCompileArtifacts artifacts;
};

Compiled CompileInput(const std::string& name) {
  GpuCompileOptions options;
  absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"},
                                                           options);
  INFO(s.message());
  REQUIRE(s.ok());
  auto module = ParseHloModule(testing::ReadTextFile(kInputs + "/" + name + ".hlo"));
  INFO(module.status().message());
  REQUIRE(module.ok());
  Compiled c;
  absl::StatusOr<runtime::Executable> exe = GpuCompiler::Compile(**module, options, &c.artifacts);
  INFO(exe.status().message());
  REQUIRE(exe.ok());
  c.exe = std::move(*exe);
  const std::string err = testing::AssemblePtx(c.artifacts.ptx, "sm_90", name);
  INFO(err);
  CHECK(err.empty());
  return c;
}

void ForEachKernel(const ThunkSequence& seq, const std::function<void(const Thunk&)>& f) {
  for (const Thunk& t : seq) {
    if (t.kind == ThunkKind::kKernel) f(t);
    ForEachKernel(t.body, f);
    ForEachKernel(t.condition, f);
    for (const ThunkSequence& b : t.branches) ForEachKernel(b, f);
  }
}

TEST_CASE("gpu sort: the test modules compile and assemble", "[gpu][codegen][sort]") {
  for (const char* name : {"sort_ties", "sort_1024", "sort_misc"}) {
    DYNAMIC_SECTION(name) {
      Compiled c = CompileInput(name);
      ForEachKernel(c.exe.thunks, [&](const Thunk& t) {
        INFO(t.kernel_name);
        CHECK(absl::StrContains(c.artifacts.ptx, ".entry " + t.kernel_name + "("));
        CHECK(t.launch.block_x * t.launch.block_y * t.launch.block_z <= 1024);
      });
    }
  }
}

TEST_CASE("gpu sort: sort + argsort is one register sort, top-k a warp per row", "[gpu][codegen][sort]") {
  Compiled c = CompileInput("sort_1024");
  int sorts = 0, topks = 0;
  ForEachKernel(c.exe.thunks, [&](const Thunk& t) {
    if (t.name == "t") {
      ++sorts;
      CHECK(t.launch.block_x == 128);  // 1024 elements, 8 a thread
      CHECK(t.launch.grid_x == 6);     // a block per row
    }
    if (t.name == "s") ++sorts;
    if (t.name == "k") {
      ++topks;
      CHECK(t.launch.block_x == 128);  // 4 warps, a row each
      CHECK(t.launch.grid_x == 2);
    }
  });
  CHECK(sorts == 1);
  CHECK(topks == 1);
  CHECK(absl::StrContains(c.artifacts.ptx, "shfl.sync.bfly"));
}

TEST_CASE("gpu sort: the corpus module's sort is one kernel of 128 threads per row", "[gpu][codegen][sort]") {
  GpuCompileOptions options;
  REQUIRE(codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"}, options)
              .ok());
  auto module = ParseHloModule(testing::ReadTextFile(std::string(HLOC_TESTS_DIR) + "/corpus/sort_topk.large.before_optimizations.txt"));
  REQUIRE(module.ok());
  GpuCompileArtifacts artifacts;
  absl::StatusOr<runtime::Executable> exe = GpuCompiler::Compile(**module, options, &artifacts);
  REQUIRE(exe.ok());
  int sort_kernels = 0;
  ForEachKernel(exe->thunks, [&](const Thunk& t) {
    if (absl::StartsWith(t.name, "sort")) {
      ++sort_kernels;
      CHECK(t.launch.block_x == 128);
      CHECK(t.launch.grid_x == 4096);
    }
  });
  CHECK(sort_kernels == 1);
}

}  // namespace
}  // namespace hloc
