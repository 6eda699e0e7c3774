// The GPU linalg thunks' batched-or-not choice, their pointer arrays and the kernel that fills
// them (runtime/gpu/linalg_batch.h): everything that needs no GPU. The GPU runs are in
// linalg_test.cc ("[linalg][gpu]").
#include <catch2/catch.hpp>

#include <climits>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>

#include "codegen/gpu/gpu_compiler.h"
#include "backend/gpu_test_util.h"
#include "ir/hlo_parser.h"
#include "runtime/executable/linalg_config.h"
#include "runtime/gpu/linalg_batch.h"

namespace hloc {
namespace {

using runtime::gpu::ChooseLinalgPath;
using runtime::gpu::LinalgPath;
using runtime::gpu::LinalgPathOverride;
constexpr LinalgPath kBatched = LinalgPath::kBatched, kLoop = LinalgPath::kPerMatrix;

TEST_CASE("gpu linalg: getrf and potrf batch many small matrices, loop over few big ones", "[linalg][gpu_plan]") {
  for (const char* op : {"getrf", "potrf"}) {
    INFO(op);
    CHECK(ChooseLinalgPath(op, 64, 256, 256) == kBatched);  // cholesky_solve.large: 256 / 64 = 4
    CHECK(ChooseLinalgPath(op, 2, 256, 256) == kBatched);   // 128: still batched (jaxlib's <=)
    CHECK(ChooseLinalgPath(op, 2, 258, 258) == kLoop);      // 129
    CHECK(ChooseLinalgPath(op, 3, 4096, 4096) == kLoop);
    CHECK(ChooseLinalgPath(op, 1, 8, 8) == kLoop);  // one matrix: the plain call
    CHECK(ChooseLinalgPath(op, 0, 8, 8) == kLoop);
    CHECK(ChooseLinalgPath(op, 4, 0, 0) == kLoop);
    CHECK(ChooseLinalgPath(op, int64_t{INT_MAX} + 1, 2, 2) == kLoop);  // batchCount is an int
  }
  // getrfBatched is square only: a non-square LU always loops, even when forced.
  CHECK(ChooseLinalgPath("getrf", 64, 6, 3) == kLoop);
  CHECK(ChooseLinalgPath("getrf", 64, 6, 3, LinalgPathOverride::kBatched) == kLoop);
}

TEST_CASE("gpu linalg: trsm batches whenever there is more than one matrix", "[linalg][gpu_plan]") {
  CHECK(ChooseLinalgPath("trsm", 64, 256, 64) == kBatched);
  CHECK(ChooseLinalgPath("trsm", 2, 4096, 4096) == kBatched);  // XLA's TriangularSolveThunk
  CHECK(ChooseLinalgPath("trsm", 1, 256, 64) == kLoop);
  CHECK(ChooseLinalgPath("trsm", 3, 5, 0) == kLoop);
  CHECK(ChooseLinalgPath("syevd", 64, 4, 4) == kLoop);  // not ours
}

TEST_CASE("gpu linalg: HLOC_GPU_LINALG forces a path", "[linalg][gpu_plan]") {
  CHECK(ChooseLinalgPath("getrf", 64, 8, 8, LinalgPathOverride::kPerMatrix) == kLoop);
  CHECK(ChooseLinalgPath("potrf", 1, 8, 8, LinalgPathOverride::kBatched) == kBatched);
  CHECK(ChooseLinalgPath("trsm", 1, 8, 3, LinalgPathOverride::kBatched) == kBatched);
  const char* old = std::getenv("HLOC_GPU_LINALG");
  const std::string saved = old ? old : "";
  setenv("HLOC_GPU_LINALG", "batched", 1);
  CHECK(runtime::gpu::LinalgPathOverrideFromEnv() == LinalgPathOverride::kBatched);
  setenv("HLOC_GPU_LINALG", "per-matrix", 1);
  CHECK(runtime::gpu::LinalgPathOverrideFromEnv() == LinalgPathOverride::kPerMatrix);
  setenv("HLOC_GPU_LINALG", "bogus", 1);
  CHECK(runtime::gpu::LinalgPathOverrideFromEnv() == LinalgPathOverride::kAuto);
  unsetenv("HLOC_GPU_LINALG");
  CHECK(runtime::gpu::LinalgPathOverrideFromEnv() == LinalgPathOverride::kAuto);
  if (old) setenv("HLOC_GPU_LINALG", saved.c_str(), 1);
}

TEST_CASE("gpu linalg: pointer arrays lie back to back in the scratch", "[linalg][gpu_plan]") {
  // trsm with alpha: a is argument 0, x argument 3; a's matrices 5x5 f64, x's 5x2.
  runtime::gpu::LinalgBatchPlan p = runtime::gpu::PlanLinalgBatch("trsm", kBatched, 3, 200, 80, 3);
  REQUIRE(p.arrays.size() == 2);
  CHECK(p.count == 3);
  CHECK(p.arrays[0].argument == 0);
  CHECK(p.arrays[0].stride_bytes == 200);
  CHECK(p.arrays[0].offset == 0);
  CHECK(p.arrays[1].argument == 3);
  CHECK(p.arrays[1].stride_bytes == 80);
  CHECK(p.arrays[1].offset == 24);
  CHECK(p.scratch_bytes == 48);
  // potrf / getrf: only the factor (argument 1), in place.
  p = runtime::gpu::PlanLinalgBatch("getrf", kBatched, 64, 256 * 256 * 4, 256 * 256 * 4, 1);
  REQUIRE(p.arrays.size() == 1);
  CHECK(p.arrays[0].argument == 1);
  CHECK(p.arrays[0].stride_bytes == 262144);
  CHECK(p.scratch_bytes == 512);
  // The loop needs no pointers.
  p = runtime::gpu::PlanLinalgBatch("potrf", kLoop, 64, 64, 64, 1);
  CHECK(p.arrays.empty());
  CHECK(p.scratch_bytes == 0);
  // What the kernel must write.
  const std::vector<uint64_t> ptrs = runtime::gpu::BatchPointers(0x7f0000001000, 262144, 3);
  REQUIRE(ptrs.size() == 3);
  CHECK(ptrs[0] == 0x7f0000001000);
  CHECK(ptrs[2] == 0x7f0000001000 + 2 * 262144);
  CHECK(runtime::gpu::BatchPointers(16, 8, 0).empty());
}

TEST_CASE("gpu linalg: the batch-pointer kernel's PTX assembles", "[linalg][gpu_plan]") {
  const std::string ptx = runtime::gpu::BatchPointersPtx();
  CHECK(ptx.find(std::string(".visible .entry ") + runtime::gpu::kBatchPointersKernel + "(") != std::string::npos);
  if (!testing::HavePtxas()) {
    WARN("no ptxas at " << testing::kPtxas << ": the PTX is not assembled");
    return;
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    INFO(arch);
    CHECK(testing::AssemblePtx(ptx, arch, std::string("batch_pointers_") + arch) == "");
  }
}

// The corpus module the batched path is for: every linalg thunk of cholesky_solve.large compiles
// (deviceless) into a config whose matrices take the batched path.
TEST_CASE("gpu linalg: cholesky_solve.large's thunks take the batched path", "[linalg][gpu_plan]") {
  codegen::gpu::GpuCompileOptions options;
  const std::string src = HLOC_SOURCE_DIR;
  REQUIRE(codegen::gpu::LoadGpuProfileAndPipeline("h200", {src + "/configs"}, {src + "/pipelines"}, options).ok());
  const std::string text = testing::ReadTextFile(std::string(HLOC_TESTS_DIR) +
                                                 "/corpus/public2/cholesky_solve.large.before_optimizations.txt");
  REQUIRE(!text.empty());
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(**m, options);
  INFO((exe.ok() ? "" : std::string(exe.status().message())));
  REQUIRE(exe.ok());
  std::map<std::string, int> batched;
  std::function<void(const runtime::ThunkSequence&)> walk = [&](const runtime::ThunkSequence& seq) {
    for (const runtime::Thunk& t : seq) {
      walk(t.body);
      if (t.kind != runtime::ThunkKind::kCustomCall || !runtime::IsLinalgTarget(t.target)) continue;
      absl::StatusOr<runtime::LinalgConfig> c = runtime::LinalgConfig::Parse(t.backend_config);
      REQUIRE(c.ok());
      const size_t out = c->op == "trsm" ? (c->has_alpha ? 3 : 2) : 1;
      absl::StatusOr<runtime::MatrixView> a = runtime::MatrixViewOf(c->shapes[0]);
      absl::StatusOr<runtime::MatrixView> x = runtime::MatrixViewOf(c->shapes[out]);
      REQUIRE(a.ok());
      REQUIRE(x.ok());
      CHECK(a->batch == 64);
      if (ChooseLinalgPath(c->op, a->batch, x->rows, x->cols) == kBatched) ++batched[c->op];
    }
  };
  walk(exe->thunks);
  CHECK(batched["getrf"] == 1);
  CHECK(batched["potrf"] == 1);
  CHECK(batched["trsm"] == 2);
}

}  // namespace
}  // namespace hloc
