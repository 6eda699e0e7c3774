// reduce-scatter-creator keeps every device's result: the module before and after the pass,
// run on the evaluator over its devices with different inputs per device, agree exactly.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "eval/spmd_eval.h"
#include "ir/computation.h"
#include "ir/hlo_parser.h"
#include "passes/collectives/reduce_scatter_creator.h"

namespace hloc {
namespace {

constexpr char kModule[] = R"(
HloModule chunks, num_partitions=4

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (x: f32[8,3]) -> f32[CHUNK] {
  %x = f32[8,3]{1,0} parameter(0)
  %ar = f32[8,3]{1,0} all-reduce(%x), channel_id=1, replica_groups=GROUPS, use_global_device_ids=true, to_apply=%add
  %table = s32[4]{0} constant(TABLE)
  %pid = u32[] partition-id()
  %at = s32[1]{0} dynamic-slice(%table, %pid), dynamic_slice_sizes={1}
  %start = s32[] reshape(%at)
  %zero = s32[] constant(0)
  ROOT %mine = f32[CHUNK]{1,0} dynamic-slice(%ar, %start, %zero), dynamic_slice_sizes={SIZES}
})";

std::vector<Literal> RunAll(const HloModule& m) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < 4; ++d) {
    auto x = Literal::Create(Shape(PrimitiveType::F32, {8, 3}));
    REQUIRE(x.ok());
    for (int64_t i = 0; i < 24; ++i) x->SetDouble(i, (d + 1) * 100 + i);
    args.push_back({});
    args.back().push_back(std::move(*x));
  }
  auto out = EvaluatePartitioned(m, args);
  REQUIRE(out.ok());
  return std::move(*out);
}

struct Case {
  const char* name;
  const char* groups;
  const char* table;
  const char* chunk;
  bool becomes_reduce_scatter;
};

TEST_CASE("reduce-scatter-creator: each device's chunk, and only then", "[reduce_scatter_creator]") {
  const std::vector<Case> cases = {
      {"one group of 4", "{{0,1,2,3}}", "{0, 2, 4, 6}", "2,3", true},
      {"two groups of 2", "{{0,1},{2,3}}", "{0, 4, 0, 4}", "4,3", true},
      {"groups in another order", "{{0,2},{1,3}}", "{0, 0, 4, 4}", "4,3", true},
      {"iota groups", "[2,2]<=[4]", "{0, 4, 0, 4}", "4,3", true},
      {"positions swapped", "{{0,1,2,3}}", "{0, 2, 6, 4}", "2,3", false},
      {"not a group chunk", "{{0,1},{2,3}}", "{0, 2, 4, 6}", "2,3", false},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      std::string text = absl::StrReplaceAll(
          kModule, {{"GROUPS", c.groups}, {"TABLE", c.table}, {"CHUNK", c.chunk}, {"SIZES", c.chunk}});
      auto before = ParseHloModule(text);
      REQUIRE(before.ok());
      auto after = ParseHloModule(text);
      REQUIRE(after.ok());
      auto changed = CreateReduceScatters(**after);
      REQUIRE(changed.ok());
      CHECK(*changed == c.becomes_reduce_scatter);
      CHECK(((*after)->entry_computation()->root_instruction()->opcode() == HloOpcode::kReduceScatter) ==
            c.becomes_reduce_scatter);
      std::vector<Literal> want = RunAll(**before);
      std::vector<Literal> got = RunAll(**after);
      REQUIRE(want.size() == got.size());
      for (size_t d = 0; d < want.size(); ++d) {
        INFO("device " << d);
        CHECK(got[d] == want[d]);
      }
    }
  }
}

}  // namespace
}  // namespace hloc
