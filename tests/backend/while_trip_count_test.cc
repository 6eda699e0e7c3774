// while-loop-trip-count-annotator end to end: the GPU pipeline annotates the corpus's counted
// loops and the thunk emitter carries the count into the while thunk (the runtimes then run the
// body that many times without evaluating the condition or reading a predicate back).
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <string>

#include "codegen/gpu/gpu_compiler.h"
#include "ir/hlo_parser.h"
#include "gpu_test_util.h"

namespace hloc {
namespace {

using codegen::gpu::GpuCompileOptions;
using codegen::gpu::GpuCompiler;
using runtime::Thunk;
using runtime::ThunkKind;
using runtime::ThunkSequence;

const std::string kSource = HLOC_SOURCE_DIR;
const std::string kCorpus = std::string(HLOC_TESTS_DIR) + "/corpus";

std::vector<const Thunk*> Whiles(const ThunkSequence& seq) {
  std::vector<const Thunk*> out;
  std::function<void(const ThunkSequence&)> walk = [&](const ThunkSequence& s) {
    for (const Thunk& t : s) {
      if (t.kind == ThunkKind::kWhile) out.push_back(&t);
      walk(t.condition);
      walk(t.body);
      for (const ThunkSequence& b : t.branches) walk(b);
    }
  };
  walk(seq);
  return out;
}

runtime::Executable CompileForH200(const std::string& text) {
  GpuCompileOptions options;
  absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline("h200", {kSource + "/configs"}, {kSource + "/pipelines"},
                                                           options);
  INFO(s.message());
  REQUIRE(s.ok());
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  absl::StatusOr<runtime::Executable> exe = GpuCompiler::Compile(**m, options, nullptr);
  INFO(exe.status().message());
  REQUIRE(exe.ok());
  return std::move(*exe);
}

TEST_CASE("gpu: the corpus's counted while loops get known trip counts in their thunks", "[gpu][while]") {
  // (while_loop's loop is elementwise: elementwise-while-to-map runs it inside one kernel, below.)
  const std::vector<std::pair<std::string, int64_t>> cases = {{"scan_rnn.small", 5}, {"scan_rnn.large", 128}};
  for (const auto& [name, trips] : cases) {
    DYNAMIC_SECTION(name) {
      runtime::Executable exe = CompileForH200(testing::ReadTextFile(kCorpus + "/" + name + ".before_optimizations.txt"));
      std::vector<const Thunk*> whiles = Whiles(exe.thunks);
      REQUIRE(whiles.size() == 1);
      CHECK(whiles[0]->trip_count == trips);
    }
  }
}

TEST_CASE("gpu: an elementwise while loop runs inside one kernel (elementwise-while-to-map)", "[gpu][while]") {
  for (const std::string name : {"while_loop.small", "while_loop.large"}) {
    DYNAMIC_SECTION(name) {
      runtime::Executable exe = CompileForH200(testing::ReadTextFile(kCorpus + "/" + name + ".before_optimizations.txt"));
      CHECK(Whiles(exe.thunks).empty());
      int64_t kernels = 0;
      std::function<void(const ThunkSequence&)> count = [&](const ThunkSequence& seq) {
        for (const Thunk& t : seq) {
          kernels += t.kind == ThunkKind::kKernel;
          count(t.body);
        }
      };
      count(exe.thunks);
      CHECK(kernels == 1);
    }
  }
}

TEST_CASE("gpu: a while loop with a data-dependent bound keeps an unknown trip count", "[gpu][while]") {
  runtime::Executable exe = CompileForH200(R"(
HloModule data_bound

body {
  p = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  x = f32[16] get-tuple-element(p), index=2
  one = s32[] constant(1)
  next = s32[] add(i, one)
  rx = f32[16] reverse(x), dimensions={0}
  y = f32[16] add(x, rx)
  ROOT t = (s32[], s32[], f32[16]) tuple(next, n, y)
}

cond {
  p = (s32[], s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY main {
  n = s32[] parameter(0)
  x = f32[16] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], s32[], f32[16]) tuple(zero, n, x)
  w = (s32[], s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=2
}
)");
  std::vector<const Thunk*> whiles = Whiles(exe.thunks);
  REQUIRE(whiles.size() == 1);
  CHECK(whiles[0]->trip_count == -1);
  CHECK(!whiles[0]->condition.empty());
}

}  // namespace
}  // namespace hloc
