// The launch check (codegen/gpu/launch_check.h): kernels that touch much memory with few threads
// are reported, naming the instruction, emitter and launch; an emitter's serial reason silences
// it; kernels inside while bodies are checked too. And select-and-scatter, once one thread, now
// launches a thread per output element.
#include <sstream>

#include "catch2/catch.hpp"
#include "codegen/gpu/gpu_compiler.h"
#include "codegen/gpu/launch_check.h"
#include "ir/hlo_parser.h"

namespace hloc::codegen::gpu {
namespace {

runtime::Thunk Kernel(const std::string& name, int64_t bytes, int64_t grid, int64_t block) {
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kKernel;
  t.name = name;
  t.kernel_name = name;
  t.emitter = "loop";
  t.arguments = {{0, 0, bytes / 2}, {1, 0, bytes / 2}};
  t.launch.grid_x = grid;
  t.launch.block_x = block;
  return t;
}

TEST_CASE("the launch check reports kernels with too few threads for their bytes", "[gpu][launch-check]") {
  const LaunchCheckLimits limits;  // 1 MiB, 64 KiB per thread
  runtime::ThunkSequence seq;
  seq.push_back(Kernel("serial", 8 << 20, 1, 1));            // 8 MiB on one thread
  seq.push_back(Kernel("wide", 8 << 20, 1024, 256));         // 32 bytes per thread
  seq.push_back(Kernel("small", 512 << 10, 1, 1));           // under 1 MiB: never reported
  runtime::Thunk serial_ok = Kernel("recurrence", 8 << 20, 1, 32);
  serial_ok.serial_reason = "inherently serial";
  seq.push_back(serial_ok);
  runtime::Thunk loop;
  loop.kind = runtime::ThunkKind::kWhile;
  loop.body.push_back(Kernel("in_body", 4 << 20, 2, 8));     // 256 KiB per thread
  seq.push_back(loop);
  std::vector<LaunchWarning> w = CheckLaunches(seq, limits);
  REQUIRE(w.size() == 2);
  CHECK(w[0].instruction == "serial");
  CHECK(w[0].threads == 1);
  CHECK(w[0].bytes == (8 << 20));
  CHECK(w[1].instruction == "in_body");
  const std::string text = w[0].ToString();
  CHECK(text.find("%serial") != std::string::npos);
  CHECK(text.find("loop kernel") != std::string::npos);
  CHECK(text.find("grid [1,1,1], block [1,1,1]") != std::string::npos);
  // The limits are the profile's: a looser per-thread limit lets the body kernel pass.
  CHECK(CheckLaunches(seq, {1 << 20, 512 << 10}).size() == 1);
}

TEST_CASE("select-and-scatter launches a thread per output element", "[gpu][launch-check]") {
  // A max-pool gradient as JAX writes it: 3x3 windows, stride 2, SAME padding.
  const char* text = R"(HloModule pool_grad
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] add(a, b)
}
ENTRY e {
  x = f32[16,56,56,64] parameter(0)
  s = f32[16,28,28,64] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[16,56,56,64] select-and-scatter(x, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
})";
  auto module = ParseHloModule(text, "pool_grad");
  REQUIRE(module.ok());
  GpuCompileOptions options;
  std::ostringstream warnings;
  options.warnings = &warnings;
  GpuCompileArtifacts artifacts;
  auto exe = GpuCompiler::Compile(**module, options, &artifacts);
  INFO((exe.ok() ? std::string("ok") : std::string(exe.status().message())));
  REQUIRE(exe.ok());
  CHECK(artifacts.launch_warnings.empty());
  CHECK(warnings.str().empty());
}

}  // namespace
}  // namespace hloc::codegen::gpu
