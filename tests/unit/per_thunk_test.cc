// `hloc run --per-thunk --dump-to DIR`'s thunk_times.json (tools/per_thunk.h ThunkTimesJson),
// built from fake thunks (no GPU), and its reader for the browser view
// (engine/html_report.h ReadThunkTimesForPage): what one writes the other reads, and a bad file
// is an error that names it.
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "engine/html_report.h"
#include "tools/per_thunk.h"

namespace hloc {
namespace {

using runtime::Thunk;
using runtime::ThunkKind;

Thunk MakeThunk(ThunkKind kind, const std::string& name, std::vector<runtime::BufferSlice> args = {}) {
  Thunk t;
  t.kind = kind;
  t.name = name;
  t.arguments = std::move(args);
  return t;
}

// 001 copy, 002 while { condition: 003 kernel; body: 004 command buffer { 005 kernel, 006 gemm } },
// 007 kernel: the pre-order numbers thunk_sequence.txt prints.
runtime::ThunkSequence FakeSequence() {
  runtime::ThunkSequence top;
  Thunk copy = MakeThunk(ThunkKind::kCopy, "copy.1", {{0, 0, 1000000}, {1, 0, 1000000}});
  copy.size = 1000000;
  top.push_back(copy);
  Thunk loop = MakeThunk(ThunkKind::kWhile, "while.2");
  loop.condition.push_back(MakeThunk(ThunkKind::kKernel, "cond.3"));
  Thunk cb = MakeThunk(ThunkKind::kCommandBuffer, "command_buffer.4");
  Thunk fusion = MakeThunk(ThunkKind::kKernel, "fusion.5", {{2, 0, 4000}, {2, 4096, 4000}});
  fusion.kernel_name = "loop_add_fusion";
  cb.body.push_back(fusion);
  Thunk dot = MakeThunk(ThunkKind::kGemm, "dot.6", {{3, 0, 4000000}, {4, 0, 4000000}, {5, 0, 4000000}});
  dot.gemm.batch = 1;
  dot.gemm.m = dot.gemm.n = dot.gemm.k = 1000;
  cb.body.push_back(dot);
  loop.body.push_back(cb);
  top.push_back(loop);
  top.push_back(MakeThunk(ThunkKind::kKernel, "fusion.7"));
  return top;
}

HardwareProfile FakeHardware() {
  HardwareProfile hw;
  hw.name = "fake";
  hw.memory_bandwidth = 1e12;  // 1 byte per ps: 1e6 bytes take 1 us
  hw.peak_flops_bf16 = 1e15;
  return hw;
}

// Times as ProfileThunks gives them: leaves in thunk order, summed over 2 calls.
std::vector<runtime::ThunkTime> FakeTimes(const runtime::ThunkSequence& top, const Thunk& outside) {
  const Thunk& cb = top[1].body[0];
  return {{&top[0], 20.0, 2},         // copy: 10 us per call
          {&top[1].condition[0], 4.0, 8},
          {&cb.body[0], 60.0, 6},     // a while body's thunk runs 3 times a call
          {&cb.body[1], 50.0, 6},
          {&top[2], 1.0, 2},
          {&outside, 2.0, 2}};        // not in `top`: position 0
}

TEST_CASE("ThunkTimesJson: positions as thunk_sequence.txt numbers them, per-call times and floors",
          "[per-thunk]") {
  const runtime::ThunkSequence top = FakeSequence();
  const Thunk outside = MakeThunk(ThunkKind::kKernel, "elsewhere");
  const nlohmann::json doc =
      nlohmann::json::parse(ThunkTimesJson(FakeTimes(top, outside), 2, FakeHardware(), "NVIDIA H100", "jit_f", top));
  CHECK(doc["format"] == "hloc-thunk-times/1");
  CHECK(doc["module"] == "jit_f");
  CHECK(doc["device"] == "NVIDIA H100");
  CHECK(doc["profile"] == "fake");
  CHECK(doc["calls"] == 2);
  CHECK(doc["total_us_per_call"].get<double>() == Approx(10 + 2 + 30 + 25 + 0.5 + 1));
  const nlohmann::json& t = doc["thunks"];
  REQUIRE(t.size() == 6);
  std::vector<int64_t> positions;
  for (const nlohmann::json& e : t) positions.push_back(e["position"].get<int64_t>());
  CHECK(positions == std::vector<int64_t>{1, 3, 5, 6, 7, 0});
  CHECK(t[0]["name"] == "copy.1");
  CHECK(t[0]["kind"] == "kCopy");
  CHECK(t[0]["us_per_call"].get<double>() == Approx(10));
  CHECK(t[0]["floor_us"].get<double>() == Approx(2));  // 2 x 1e6 bytes at 1e12 B/s
  CHECK(t[0]["runs_per_call"].get<double>() == Approx(1));
  CHECK(t[2]["kernel"] == "loop_add_fusion");
  CHECK(t[2]["us_per_call"].get<double>() == Approx(30));
  CHECK(t[2]["runs_per_call"].get<double>() == Approx(3));
  CHECK(t[2]["floor_us"].get<double>() == Approx(3 * 0.008));  // 8000 bytes, 3 runs a call
  // The GEMM: its 12e6 argument bytes (12 us) outlast its 2e9 FLOPs (2 us); 3 runs a call.
  CHECK(t[3]["kind"] == "kGemm");
  CHECK(t[3]["floor_us"].get<double>() == Approx(3 * 12));
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "hloc-per-thunk-test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST_CASE("ReadThunkTimesForPage reads what ThunkTimesJson writes", "[per-thunk]") {
  const runtime::ThunkSequence top = FakeSequence();
  const Thunk outside = MakeThunk(ThunkKind::kKernel, "elsewhere");
  const std::string path =
      WriteTemp(ThunkTimesFileName(0, "jit_f"),
                ThunkTimesJson(FakeTimes(top, outside), 2, FakeHardware(), "NVIDIA <H100>", "jit_f", top));
  CHECK(std::filesystem::path(path).filename() == "module_0000.jit_f.thunk_times.json");
  absl::StatusOr<std::string> page = ReadThunkTimesForPage(path);
  REQUIRE(page.ok());
  CHECK(page->find('<') == std::string::npos);  // it sits inside <script>
  const nlohmann::json doc = nlohmann::json::parse(*page);
  CHECK(doc["file"] == path);
  CHECK(doc["device"] == "NVIDIA <H100>");
  CHECK(doc["calls"] == 2);
  REQUIRE(doc["thunks"].size() == 6);
  CHECK(doc["thunks"][2]["position"] == 5);
  CHECK(doc["thunks"][2]["us"].get<double>() == Approx(30));
  CHECK(doc["thunks"][2]["runs"].get<double>() == Approx(3));
}

TEST_CASE("ReadThunkTimesForPage: a malformed file is an error naming it and what is wrong", "[per-thunk]") {
  const std::string header = R"({"format":"hloc-thunk-times/1","device":"d","calls":2,"total_us_per_call":1,)";
  struct Case {
    std::string text, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"{\"format\": ", "invalid JSON"},
           {"[1, 2]", "not a JSON object"},
           {R"({"device":"d"})", "hloc-thunk-times/1"},
           {header + R"("thunks":{}})", "thunks (an array)"},
           {header + R"("thunks":[{"position":1,"name":"a","kind":"kKernel","kernel":"","us_per_call":"fast",)"
                     R"("floor_us":0,"runs_per_call":1}]})",
            "thunks[0]: missing or wrong us_per_call"},
           {header + R"("thunks":[{"position":-1}]})", "thunks[0]: missing or wrong position"},
           {R"({"format":"hloc-thunk-times/1","device":"d","calls":0,"total_us_per_call":1,"thunks":[]})",
            "calls"},
           {std::string(100, '[') + std::string(100, ']'), "nested deeper"}}) {
    const std::string path = WriteTemp("bad.thunk_times.json", c.text);
    absl::StatusOr<std::string> page = ReadThunkTimesForPage(path);
    INFO(c.text);
    REQUIRE_FALSE(page.ok());
    CHECK_THAT(std::string(page.status().message()), Catch::Contains(path) && Catch::Contains(c.expect));
  }
}

}  // namespace
}  // namespace hloc
