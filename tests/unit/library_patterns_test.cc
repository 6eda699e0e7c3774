// Library patterns (rules/library/*.td, rules/base/Library.td): the generated table holds
// cublas-gemm-rewriter's epilogue records in file order, and the pass runs exactly the records
// a pipeline's rule lists leave on (by name or group), as RecordSwitch decides.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "engine/pass.h"
#include "engine/profile.h"
#include "engine/rule_tables.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"

using namespace hloc;

namespace {

constexpr const char* kBiasRelu = R"(HloModule bias_relu
ENTRY %main (x: f32[256,1024], w: f32[1024,1024], b: f32[1024]) -> f32[256,1024] {
  %x = f32[256,1024] parameter(0)
  %w = f32[1024,1024] parameter(1)
  %b = f32[1024] parameter(2)
  %d = f32[256,1024] dot(%x, %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %bb = f32[256,1024] broadcast(%b), dimensions={1}
  %bias = f32[256,1024] add(%d, %bb)
  %z = f32[] constant(0)
  %zb = f32[256,1024] broadcast(%z), dimensions={}
  ROOT %relu = f32[256,1024] maximum(%bias, %zb)
})";

// kBiasRelu after cublas-gemm-rewriter with these rule lists (an H200-like profile).
std::string Rewrite(const std::vector<std::string>& enabled, const std::vector<std::string>& disabled) {
  auto module = ParseHloModule(kBiasRelu);
  REQUIRE(module.ok());
  HardwareProfile profile;
  profile.name = "h200-test";
  profile.kind = "gpu";
  profile.compute_capability_major = 9;
  const PassInfo* info = PassRegistry::Global().Find("cublas-gemm-rewriter");
  REQUIRE(info != nullptr);
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  PassContext context;
  context.profile = &profile;
  context.enabled_rules = enabled;
  context.disabled_rules = disabled;
  REQUIRE(info->factory(options)->Run(**module, context).ok());
  return PrintModule(**module);
}

}  // namespace

TEST_CASE("the GEMM epilogue records are generated in file order", "[library][gemm][records]") {
  std::vector<std::string> names;
  for (const LibraryPatternInfo* p : GeneratedTables::Global().library_patterns) {
    if (std::string(p->pass) != "cublas-gemm-rewriter") continue;
    names.push_back(p->name);
    CHECK(p->fn != nullptr);
    CHECK(std::string(p->file) == "rules/library/GemmEpilogues.td");
    CHECK(p->line > 0);
  }
  CHECK(names == std::vector<std::string>{"GemmAlphaScale", "GemmGeluEpilogue", "GemmVectorBiasEpilogue",
                                          "GemmMatrixAddend", "GemmReluEpilogue", "GemmNarrowingConvert"});
  // The pass lists them, and their groups, for the manifest loader's name check.
  const PassInfo* info = PassRegistry::Global().Find("cublas-gemm-rewriter");
  REQUIRE(info != nullptr);
  REQUIRE(info->records);
  const std::vector<std::string> records = info->records();
  for (const char* n : {"GemmReluEpilogue", "GemmBias", "GemmActivations"})
    CHECK(std::find(records.begin(), records.end(), n) != records.end());
}

TEST_CASE("RecordSwitch switches a record by its name or its group", "[library][records]") {
  const std::vector<std::string> none;
  const std::vector<std::string> off_group = {"G"};
  const std::vector<std::string> only_b = {"B"};
  const std::vector<const char*> family = {"A", "B", "G"};
  CHECK(RecordSwitch(none, none, family).On("A", "G"));
  CHECK(!RecordSwitch(none, off_group, family).On("A", "G"));
  CHECK(RecordSwitch(none, off_group, family).On("B", ""));
  CHECK(!RecordSwitch(only_b, none, family).On("A", "G"));
  CHECK(RecordSwitch(only_b, none, family).On("B", ""));
  CHECK(RecordSwitch(off_group, none, family).On("A", "G"));  // enable: [G]
  CHECK(!RecordSwitch(off_group, none, family).On("B", ""));
}

TEST_CASE("cublas-gemm-rewriter runs only the epilogue records left on", "[library][gemm][records]") {
  const std::string all = Rewrite({}, {});
  CHECK(absl::StrContains(all, "\"epilogue\":\"BIAS_RELU\""));
  CHECK(!absl::StrContains(all, "maximum("));

  const std::string no_relu = Rewrite({}, {"GemmReluEpilogue"});
  CHECK(absl::StrContains(no_relu, "\"epilogue\":\"BIAS\""));
  CHECK(absl::StrContains(no_relu, "maximum("));

  const std::string no_bias = Rewrite({}, {"GemmBias"});  // a group: the vector and matrix adds
  CHECK(absl::StrContains(no_bias, " add("));
  CHECK(!absl::StrContains(no_bias, "\"epilogue\":\"BIAS"));

  // An enable list keeps only what it names: the ReLU record alone finds no GEMM under the max.
  const std::string only_relu = Rewrite({"GemmReluEpilogue"}, {});
  CHECK(absl::StrContains(only_relu, " add("));
  CHECK(absl::StrContains(only_relu, "maximum("));
  CHECK(absl::StrContains(only_relu, "\"epilogue\":\"DEFAULT\""));
}
