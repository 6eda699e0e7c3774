// The GPU runtime (runtime/gpu). Without a GPU every GPU check SKIPs with the reason, shown as
// a warning ("SKIPPED (no GPU): ..."); the parts that need no GPU (the autotune cache file, the
// convolution config the compiler writes, JSON) always run. On the GPU machine the checks of
// runtime/gpu/gpu_selftest.h run: a hand-written PTX kernel, memcpy/memset, cuBLASLt GEMMs
// (f32, bf16, TF32; every epilogue) against a host loop, while/conditional, CUDA-graph replay,
// a cuDNN convolution, out-of-memory recovery and the autotune cache.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "codegen/gpu/gpu_compiler.h"
#include "engine/pipeline.h"
#include "ir/hlo_parser.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cudnn.h"
#include "runtime/gpu/gpu_executable.h"
#include "runtime/gpu/gpu_selftest.h"

namespace hloc::runtime::gpu {
namespace {

// Catch2 v2 has no SKIP: the reason is logged as a warning (always printed) and the case ends.
#define GPU_OR_SKIP()                                                                           \
  do {                                                                                          \
    absl::Status avail = GpuRuntimeAvailable();                                                 \
    if (!avail.ok()) {                                                                          \
      WARN("SKIPPED (no GPU): " << avail.message());                                            \
      return;                                                                                   \
    }                                                                                           \
  } while (0)

void SelfTest(const std::string& name) {
  GPU_OR_SKIP();
  absl::Status s = RunGpuSelfTest(name);
  INFO("GPU self-test '" << name << "': " << s.ToString());
  CHECK(s.ok());
}

TEST_CASE("gpu runtime: without a GPU, loading says why", "[gpu_runtime]") {
  absl::Status avail = GpuRuntimeAvailable();
  if (avail.ok()) {
    auto desc = GpuDeviceDescription(0);
    REQUIRE(desc.ok());
    WARN("GPU present: " << *desc);
    return;
  }
  CHECK(!avail.message().empty());
  Executable exe;
  exe.module_name = "no_gpu";
  exe.platform = "gpu";
  auto loaded = GpuExecutable::Load(exe, {});
  REQUIRE(!loaded.ok());
  CHECK(loaded.status().code() == avail.code());
  CHECK(RunGpuSelfTest("kernel").code() == avail.code());
  CHECK(RunGpuSelfTest("no_such_check").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("gpu runtime: PTX kernel", "[gpu_runtime][gpu]") { SelfTest("kernel"); }
TEST_CASE("gpu runtime: memcpy and memset", "[gpu_runtime][gpu]") { SelfTest("memory"); }
TEST_CASE("gpu runtime: cuBLASLt GEMM f32, every epilogue", "[gpu_runtime][gpu]") { SelfTest("gemm_f32"); }
TEST_CASE("gpu runtime: cuBLASLt GEMM bf16, every epilogue", "[gpu_runtime][gpu]") { SelfTest("gemm_bf16"); }
TEST_CASE("gpu runtime: cuBLASLt GEMM f32 on TF32", "[gpu_runtime][gpu]") { SelfTest("gemm_tf32"); }
TEST_CASE("gpu runtime: while and conditional", "[gpu_runtime][gpu]") { SelfTest("while"); }
TEST_CASE("gpu runtime: CUDA graph capture and replay", "[gpu_runtime][gpu]") { SelfTest("graph"); }
TEST_CASE("gpu runtime: cuDNN convolution", "[gpu_runtime][gpu]") { SelfTest("conv"); }
TEST_CASE("gpu runtime: out of memory, then a normal run", "[gpu_runtime][gpu]") { SelfTest("oom"); }
TEST_CASE("gpu runtime: autotune cache", "[gpu_runtime][gpu]") { SelfTest("autotune"); }

TEST_CASE("gpu runtime: every self-test has a test case", "[gpu_runtime]") {
  CHECK(GpuSelfTestNames().size() == 10);
}

TEST_CASE("autotune cache: text round trip, bad lines skipped, file save/load", "[gpu_runtime]") {
  AutotuneCache c;
  c.AddFromText(
      "# comment\n"
      "hloc-autotune-v1\th200|NVIDIA H200|cublasLt-130100|f32,f32,f32\t00ff\t12.500\n"
      "hloc-autotune-v9\tfuture\tx\t1\n"           // another version: skipped
      "hloc-autotune-v1\tbroken line\n"             // malformed: skipped
      "hloc-autotune-v1\tk2\t7:1\tnot-a-number\n"  // malformed: skipped
      "hloc-autotune-v1\tk3\t7:1\t3\r\n");          // CRLF is fine
  CHECK(c.size() == 2);
  CHECK(c.skipped_lines() == 3);
  auto e = c.Lookup("h200|NVIDIA H200|cublasLt-130100|f32,f32,f32");
  REQUIRE(e.has_value());
  CHECK(e->algorithm == "00ff");
  CHECK(e->microseconds == Approx(12.5));
  CHECK(!c.Lookup("k2").has_value());
  c.Insert("bad\tkey", {"x", 1});  // TABs would break the format: refused
  c.Insert("k4", {"1:0", 2.25});
  CHECK(c.size() == 3);
  CHECK(c.dirty());
  const std::string path = "/tmp/hloc_gpu_runtime_test_autotune.txt";
  REQUIRE(c.Save(path).ok());
  AutotuneCache d;
  REQUIRE(d.Load(path).ok());
  CHECK(d.ToText() == c.ToText());
  std::remove(path.c_str());
  AutotuneCache missing;
  CHECK(missing.Load("/tmp/hloc_no_such_autotune_file.txt").ok());  // a missing file is an empty cache
  CHECK(missing.size() == 0);
}

constexpr char kConvConfig[] =
    R"({"kind":"forward","input":{"type":"f32","dims":[2,8,8,4],"minor_to_major":[3,2,1,0]},)"
    R"("filter":{"type":"f32","dims":[3,3,4,8],"minor_to_major":[2,1,0,3]},)"
    R"("output":{"type":"f32","dims":[2,8,8,8],"minor_to_major":[3,2,1,0]},)"
    R"("input_batch_dim":0,"input_feature_dim":3,"input_spatial_dims":[1,2],)"
    R"("kernel_input_feature_dim":2,"kernel_output_feature_dim":3,"kernel_spatial_dims":[0,1],)"
    R"("output_batch_dim":0,"output_feature_dim":3,"output_spatial_dims":[1,2],)"
    R"("window":[{"size":3,"stride":1,"pad_low":1,"pad_high":1,"lhs_dilation":1,"rhs_dilation":1,"reversal":false},)"
    R"({"size":3,"stride":2,"pad_low":1,"pad_high":0,"lhs_dilation":1,"rhs_dilation":1,"reversal":false}],)"
    R"("feature_group_count":1,"batch_group_count":1,"conv_result_scale":1,"side_input_scale":0,)"
    R"("activation":"kNone","leakyrelu_alpha":0,"arguments":["input","filter","output"]})";

TEST_CASE("cudnn config: the compiler's JSON parses, mistakes are named", "[gpu_runtime]") {
  auto spec = ParseConvSpec(kConvConfig);
  REQUIRE(spec.ok());
  CHECK(spec->kind == "forward");
  CHECK(spec->filter.minor_to_major == std::vector<int64_t>{2, 1, 0, 3});
  REQUIRE(spec->window.size() == 2);
  CHECK(spec->window[1].stride == 2);
  CHECK(spec->window[1].pad_high == 0);
  CHECK(spec->arguments == std::vector<std::string>{"input", "filter", "output"});

  std::string wrong_roles = kConvConfig;
  wrong_roles.replace(wrong_roles.find(R"("kind":"forward")"), 16, R"("kind":"backward_input")");
  auto s = ParseConvSpec(wrong_roles);
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("takes arguments [output, filter, input]") != std::string::npos);

  std::string missing = kConvConfig;
  missing.replace(missing.find("\"input_feature_dim\""), 19, "\"input_feature_dimX\"");
  s = ParseConvSpec(missing);
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("input_feature_dim") != std::string::npos);

  std::string bad_dims = kConvConfig;
  bad_dims.replace(bad_dims.find("\"output_spatial_dims\":[1,2]"), 27, "\"output_spatial_dims\":[1,7]");
  CHECK(!ParseConvSpec(bad_dims).ok());
  CHECK(!ParseConvSpec("not json").ok());
}

// The config is read with nlohmann::json: malformed text is a located error, absurd nesting an
// error rather than a crash, and the typed accessors name the key.
TEST_CASE("cudnn config: malformed JSON, deep nesting and wrong types are errors", "[gpu_runtime]") {
  auto s = ParseConvSpec(R"({"kind": })");
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("convolution config: JSON: ") == 0);
  CHECK(s.status().message().find(" at byte 9") != std::string::npos);
  CHECK(!ParseConvSpec("[1, 2").ok());
  CHECK(!ParseConvSpec("{} x").ok());
  s = ParseConvSpec(std::string(200, '[') + std::string(200, ']'));
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("nested too deeply") != std::string::npos);
  std::string deep = kConvConfig;  // a deep value under an unread key is still refused
  deep.insert(deep.size() - 1, ",\"x\":" + std::string(100, '[') + std::string(100, ']'));
  CHECK(!ParseConvSpec(deep).ok());

  std::string text_stride = kConvConfig;
  text_stride.replace(text_stride.find(R"("stride":2)"), 10, R"("stride":"2")");
  s = ParseConvSpec(text_stride);
  REQUIRE(!s.ok());
  CHECK(s.status().message().find("'window'[1]: 'stride' is not an integer") != std::string::npos);
  std::string fractional = kConvConfig;
  fractional.replace(fractional.find(R"("input_batch_dim":0)"), 19, R"("input_batch_dim":0.5)");
  CHECK(!ParseConvSpec(fractional).ok());
  std::string scale = kConvConfig;  // a whole number written as a double is an integer
  scale.replace(scale.find(R"("feature_group_count":1)"), 23, R"("feature_group_count":1.0)");
  CHECK(ParseConvSpec(scale).ok());
}

// The contract with the GPU compiler: every convolution thunk it emits for the corpus's
// convolution modules carries a config this runtime parses.
TEST_CASE("cudnn config: what the GPU compiler emits for the corpus parses", "[gpu_runtime]") {
  for (const char* name : {"conv_bn_relu_pool.small", "conv_train_step.small"}) {
    const std::string path = std::string(HLOC_TESTS_DIR) + "/corpus/" + name + ".before_optimizations.txt";
    std::ifstream in(path);
    REQUIRE(in.good());
    std::stringstream text;
    text << in.rdbuf();
    auto module = ParseHloModule(text.str(), path);
    REQUIRE(module.ok());
    codegen::gpu::GpuCompileOptions options;
    absl::Status loaded = codegen::gpu::LoadGpuProfileAndPipeline(
        "h200", {std::string(HLOC_SOURCE_DIR) + "/configs"}, {std::string(HLOC_SOURCE_DIR) + "/pipelines"}, options);
    if (!loaded.ok()) {
      WARN("SKIPPED (GPU pipeline not loadable): " << loaded.message());
      return;
    }
    auto exe = codegen::gpu::GpuCompiler::Compile(**module, options);
    if (!exe.ok()) {
      WARN("SKIPPED (" << name << " does not compile for the GPU yet): " << exe.status().message());
      continue;
    }
    int convs = 0;
    std::function<void(const ThunkSequence&)> walk = [&](const ThunkSequence& seq) {
      for (const Thunk& t : seq) {
        if (t.kind == ThunkKind::kConvolution) {
          ++convs;
          auto spec = ParseConvSpec(t.backend_config);
          INFO(name << " thunk " << t.name << ": " << t.backend_config);
          CHECK(spec.ok());
          if (spec.ok()) CHECK(spec->arguments.size() == t.arguments.size());
        }
        walk(t.condition);
        walk(t.body);
        for (const ThunkSequence& b : t.branches) walk(b);
      }
    };
    walk(exe->thunks);
    INFO(name << ": " << convs << " convolution thunks");
    CHECK(convs > 0);
  }
}

}  // namespace
}  // namespace hloc::runtime::gpu
