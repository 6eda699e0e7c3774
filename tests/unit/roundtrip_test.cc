// Small print(parse(text)) == text checks, one per feature of the text format, in the three
// printer option sets. (The corpus and XLA-case loops are in tests/conformance/.)
#include <catch2/catch.hpp>

#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"

using namespace hloc;

namespace {

// Parses `text`, prints it with `options`, and returns the print (or the parse error).
std::string Reprint(const std::string& text, const HloPrintOptions& options) {
  auto module = ParseHloModule(text, "roundtrip.hlo");
  if (!module.ok()) return "PARSE ERROR: " + std::string(module.status().message());
  return PrintModule(**module, options);
}

void CheckExact(const std::string& text, const HloPrintOptions& options) {
  std::string printed = Reprint(text, options);
  CHECK(printed == text);
  // And printing is a fixed point.
  CHECK(Reprint(printed, options) == printed);
}

}  // namespace

TEST_CASE("round trip: JAX dump with stack frames, inline tuple elements, fusions",
          "[roundtrip]") {
  CheckExact(R"(HloModule jit_f, is_scheduled=true, entry_computation_layout={(f32[4]{0}, (s32[], f32[4]{0}))->f32[4]{0}}, allow_spmd_sharding_propagation_to_parameters={true,true}, allow_spmd_sharding_propagation_to_output={true}, frontend_attributes={fingerprint_before_lhs="abc"}

FileNames
1 "a.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=4 end_column=9}
2 {file_name_id=1 function_name_id=2 line=3 end_line=3 column=2 end_column=8}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}


%fused_add (param_0: f32[4], param_1.1: f32[4]) -> f32[4] {
  %param_0 = f32[4]{0} parameter(0), metadata={scheduling_name="param_0"}
  %param_1.1 = f32[4]{0} parameter(1)
  ROOT %add.1 = f32[4]{0} add(%param_0, %param_1.1), metadata={op_name="jit(f)/add" scheduling_name="add.1" stack_frame_id=2}
}

ENTRY %main.5 (x.1: f32[4], t.1: (s32[], f32[4])) -> f32[4] {
  %x.1 = f32[4]{0} parameter(0), sharding={replicated}, metadata={op_name="x"}
  %t.1 = (s32[], f32[4]{0}) parameter(1)
  %copy = f32[4]{0} copy(%t.1#1), frontend_attributes={a="1",b={c:2}}
  ROOT %fusion = f32[4]{0} fusion(%x.1, %copy), kind=kLoop, calls=%fused_add, control-predecessors={%copy}, metadata={op_name="jit(f)/add" stack_frame_id=2}, backend_config={"fusion_backend_config":{"kind":"__loop"},"x":[]}
}

)",
             HloPrintOptions());
}

TEST_CASE("round trip: long form with operand shapes and constants", "[roundtrip]") {
  CheckExact(R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0}, s32[])->(f32[2,3]{1,0}, pred[], f32[3]{0}, bf16[2]{0}, f32[2,2,1,1]{3,2,1,0}, /*index=5*/c64[], u64[])}

%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[2,3], i: s32[]) -> (f32[2,3], pred[], f32[3], bf16[2], f32[2,2,1,1], /*index=5*/c64[], u64[]) {
  %p = f32[2,3]{1,0} parameter(0)
  %i = s32[] parameter(1)
  %zero = f32[] constant(0)
  %r = f32[3]{0} reduce(f32[2,3]{1,0} %p, f32[] %zero), dimensions={0}, to_apply=%add
  %c = pred[] compare(s32[] %i, s32[] %i), direction=LT
  %b = bf16[2]{0} constant({0.7969, -nan(0x7f)})
  %k = f32[2,2,1,1]{3,2,1,0} constant({ { /*i0=0*/ { /*i1=0*/ {1} }, { /*i1=1*/ {2.5} } }, { /*i0=1*/ { /*i1=0*/ {-inf} }, { /*i1=1*/ {0.797884583} } } })
  %z = c64[] constant((1, -2.5))
  %u = u64[] constant(18446744073709551615)
  ROOT %t = (f32[2,3]{1,0}, pred[], f32[3]{0}, bf16[2]{0}, f32[2,2,1,1]{3,2,1,0}, /*index=5*/c64[], u64[]) tuple(f32[2,3]{1,0} %p, pred[] %c, f32[3]{0} %r, bf16[2]{0} %b, f32[2,2,1,1]{3,2,1,0} %k, /*index=5*/c64[] %z, u64[] %u)
}

)",
             HloPrintOptions::Long());
}

TEST_CASE("round trip: short form", "[roundtrip]") {
  CheckExact(R"(HloModule scan_module, entry_computation_layout={(f32[4]{0})->(f32[4]{0}, f32[])}

add_F32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  add = f32[] add(lhs, rhs)
  ROOT t = (f32[], f32[]) tuple(add, add)
}

ENTRY Scan {
  input = f32[4]{0} parameter(0)
  init = f32[] constant(0)
  ROOT scan = (f32[4]{0}, f32[]) scan(input, init), dimensions={0}, num_carries=1, is_reverse=true, is_associative=true, to_apply=add_F32
}

)",
             HloPrintOptions::ShortParsable());
}

TEST_CASE("round trip: collectives, shardings, windows, convolutions", "[roundtrip]") {
  CheckExact(R"(HloModule m, entry_computation_layout={(f32[8,16]{1,0}, f32[1,4,4,2]{3,2,1,0}, f32[3,3,2,1]{3,2,1,0})->(f32[8,16]{1,0}, f32[16,16]{1,0}, f32[8,16]{1,0}, f32[1,2,2,1]{3,2,1,0}, f32[1,2,2,2]{3,2,1,0})}, replica_count=2, num_partitions=2

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[8,16], img: f32[1,4,4,2], k: f32[3,3,2,1]) -> (f32[8,16], f32[16,16], f32[8,16], f32[1,2,2,1], f32[1,2,2,2]) {
  %p = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}
  %img = f32[1,4,4,2]{3,2,1,0} parameter(1), sharding={devices=[1,2,1,1,2]<=[2,2]T(1,0) last_tile_dim_replicate}
  %k = f32[3,3,2,1]{3,2,1,0} parameter(2), sharding={{maximal device=0}}
  %ar = f32[8,16]{1,0} all-reduce(%p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=%sum
  %ag = f32[16,16]{1,0} all-gather(%p), channel_id=2, replica_groups=[1,2]<=[2], dimensions={0}, use_global_device_ids=true
  %cp = f32[8,16]{1,0} collective-permute(%p), channel_id=3, source_target_pairs={{0,1},{1,0}}
  %conv = f32[1,2,2,1]{3,2,1,0} convolution(%img, %k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, operand_precision={high,default}
  %zero = f32[] constant(0)
  %rw = f32[1,2,2,2]{3,2,1,0} reduce-window(%img, %zero), window={size=1x2x2x1 stride=1x2x2x1}, to_apply=%sum
  ROOT %t = (f32[8,16]{1,0}, f32[16,16]{1,0}, f32[8,16]{1,0}, f32[1,2,2,1]{3,2,1,0}, f32[1,2,2,2]{3,2,1,0}) tuple(%ar, %ag, %cp, %conv, %rw), sharding={{replicated}, {replicated}, {replicated}, {replicated}, {replicated}}
}

)",
             HloPrintOptions());
}
