// HLO text parser: the API, every attribute kind, constants, shapes, the recursion cap, and error
// locations. The corpus and XLA-case loops at the end only check that everything parses (the
// conformance suite checks printing and verification).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/hlo_lexer.h"
#include "ir/hlo_parser.h"

using namespace hloc;
using P = PrimitiveType;
using O = HloOpcode;

namespace {

std::unique_ptr<HloModule> Parse(std::string_view text, const HloParserOptions& options = {}) {
  auto m = ParseHloModule(text, "t.hlo", options);
  INFO(m.status().ToString());
  REQUIRE(m.ok());
  return std::move(*m);
}

std::string Error(std::string_view text, const HloParserOptions& options = {}) {
  auto m = ParseHloModule(text, "t.hlo", options);
  REQUIRE(!m.ok());
  return std::string(m.status().message());
}

HloInstruction* Find(const HloModule& m, const std::string& name) {
  for (const auto& c : m.computations())
    for (const auto& i : c->instructions())
      if (i->name() == name) return i.get();
  FAIL("no instruction " << name);
  return nullptr;
}

const InstructionAttributes& A(const HloModule& m, const std::string& name) { return Find(m, name)->attrs(); }

std::string Raw(const InstructionAttributes& a, const std::string& key) {
  for (const auto& [k, v] : a.raw_attributes)
    if (k == key) return v;
  return "<none>";
}

// One instruction in an ENTRY computation, after a parameter %p of the given shape.
std::string WithParam(const std::string& param_shape, const std::string& root) {
  return "HloModule m\nENTRY %e {\n  %p = " + param_shape + " parameter(0)\n  ROOT " + root + "\n}\n";
}

const char* kSum =
    "%sum (x: f32[], y: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  %y = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(%x, %y)\n}\n";

// HLOC_TESTS_DIR (CMake's absolute path): __FILE__ is relative when ccache rewrites paths
// (CCACHE_BASEDIR), and from the build directory it named no data, so the data test skipped.
std::filesystem::path TestsDir() {
#ifdef HLOC_TESTS_DIR
  return std::filesystem::path(HLOC_TESTS_DIR);
#else
  return std::filesystem::path(__FILE__).parent_path().parent_path();
#endif
}

}  // namespace

TEST_CASE("parser: a small module builds the IR", "[parser]") {
  auto m = Parse(
      "HloModule axpy\n\nENTRY %axpy (alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4] {\n"
      "  %alpha = f32[] parameter(0)\n  %broadcast = f32[2,4]{1,0} broadcast(f32[] %alpha), dimensions={}\n"
      "  %x = f32[2,4]{1,0} parameter(1)\n"
      "  %multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)\n"
      "  %y = f32[2,4]{1,0} parameter(2)\n"
      "  ROOT %add = f32[2,4]{1,0} add(f32[2,4]{1,0} %multiply, f32[2,4]{1,0} %y)\n}\n");
  CHECK(m->name() == "axpy");
  REQUIRE(m->computations().size() == 1);
  HloComputation* e = m->entry_computation();
  REQUIRE(e);
  CHECK(e->name() == "axpy");
  CHECK(e->instruction_count() == 6);
  CHECK(e->num_parameters() == 3);
  CHECK(e->parameter_instruction(2)->name() == "y");
  HloInstruction* root = e->root_instruction();
  CHECK(root->name() == "add");
  CHECK(root->opcode() == O::kAdd);
  CHECK(root->shape() == Shape(P::F32, {2, 4}));
  CHECK(root->operand(0)->name() == "multiply");
  CHECK(root->operand(1)->opcode() == O::kParameter);
  CHECK(Find(*m, "multiply")->users().size() == 1);
  CHECK(A(*m, "broadcast").dimensions.empty());
  for (const auto& i : e->instructions()) CHECK(i->unique_id() >= 0);
}

TEST_CASE("parser: short form, bare names, no ENTRY, no header", "[parser]") {
  // Without '%', without operand shapes; the last computation is the entry.
  auto m = Parse(
      "HloModule m\nadd_c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
      "main {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_c\n}\n");
  CHECK(m->entry_computation()->name() == "main");
  CHECK(Find(*m, "r")->to_apply()->name() == "add_c");
  // No ROOT: the last instruction is the root.
  auto n = Parse("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  b = f32[] negate(a)\n}\n");
  CHECK(n->entry_computation()->root_instruction()->name() == "b");
  // No header: "module_" + the entry's name.
  auto h = Parse("comp1 {\n  ROOT r = f32[] constant(1)\n}\nENTRY comp2 {\n  ROOT r = f32[] constant(2)\n}\n");
  CHECK(h->name() == "module_comp2");
  CHECK(h->entry_computation()->name() == "comp2");
}

TEST_CASE("parser: module header attributes", "[parser][header]") {
  auto m = Parse(
      "HloModule m, is_scheduled=true, entry_computation_layout={(f32[2]{0}, (s32[], f32[]))->f32[2]{0}}, "
      "input_output_alias={ {}: (0, {}, must-alias) }, buffer_donor={ (1, {0}) }, alias_passthrough_params=true, "
      "replica_count=4, num_partitions=2, allow_spmd_sharding_propagation_to_parameters={true,false}, "
      "allow_spmd_sharding_propagation_to_output=true, frontend_attributes={a=\"1\",b={\"k\":2}}, "
      "spmd_output_sharding={replicated}, spmd_parameters_shardings={{replicated},{devices=[2]0,1}}, "
      "cross_program_prefetches={(0,{})}\n"
      "ENTRY %e {\n  %p = f32[2] parameter(0)\n  %q = (s32[], f32[]) parameter(1)\n  ROOT %r = f32[2] negate(%p)\n}\n");
  const HloModuleConfig& c = m->config();
  CHECK(m->is_scheduled());
  REQUIRE(c.entry_computation_layout);
  CHECK(c.entry_computation_layout->parameter_shapes.size() == 2);
  CHECK(c.entry_computation_layout->parameter_shapes[1].IsTuple());
  CHECK(c.entry_computation_layout->result_shape == Shape(P::F32, {2}));
  REQUIRE(c.input_output_alias.size() == 1);
  CHECK(c.input_output_alias[0].must_alias);
  CHECK(c.input_output_alias[0].output_index.empty());
  REQUIRE(c.buffer_donor.size() == 1);
  CHECK(c.buffer_donor[0].parameter_number == 1);
  CHECK(c.buffer_donor[0].parameter_index == ShapeIndex{0});
  CHECK(c.alias_passthrough_params);
  CHECK(c.replica_count == 4);
  CHECK(c.num_partitions == 2);
  CHECK(c.allow_spmd_sharding_propagation_to_parameters == std::vector<bool>{true, false});
  CHECK(c.allow_spmd_sharding_propagation_to_output == std::vector<bool>{true});
  CHECK(c.frontend_attributes.at("a") == "1");
  CHECK(c.frontend_attributes.at("b") == "{\"k\":2}");
  REQUIRE(c.spmd_output_sharding);
  CHECK(c.spmd_output_sharding->kind == HloSharding::Kind::kReplicated);
  REQUIRE(c.spmd_parameters_shardings.size() == 2);
  CHECK(c.spmd_parameters_shardings[1].devices == std::vector<int64_t>{0, 1});
  REQUIRE(c.raw_attributes.size() == 1);
  CHECK(c.raw_attributes[0] == std::pair<std::string, std::string>{"cross_program_prefetches", "{(0,{})}"});
  // Defaults.
  auto d = Parse("HloModule m\nENTRY e {\n  ROOT r = f32[] constant(1)\n}\n");
  CHECK(!d->is_scheduled());
  CHECK(d->config().replica_count == 1);
  CHECK(!d->config().entry_computation_layout);
  HloParserOptions o;
  o.default_replica_count = 8;
  CHECK(Parse("HloModule m\nENTRY e {\n  ROOT r = f32[] constant(1)\n}\n", o)->config().replica_count == 8);
}

TEST_CASE("parser: JAX stack-frame tables", "[parser]") {
  auto m = Parse(
      "HloModule m\n\nFileNames\n1 \"a.py\"\n2 \"b.py\"\n\nFunctionNames\n1 \"<module>\"\n\n"
      "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3 end_line=4 column=5 end_column=6}\n\n"
      "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n2 {file_location_id=1 parent_frame_id=2}\n\n\n"
      "ENTRY %e {\n  ROOT %r = f32[] constant(1), metadata={op_name=\"x\" stack_frame_id=2}\n}\n");
  const StackFrameIndex& s = m->stack_frames();
  CHECK(s.file_names == std::vector<std::string>{"a.py", "b.py"});
  CHECK(s.function_names == std::vector<std::string>{"<module>"});
  REQUIRE(s.file_locations.size() == 1);
  CHECK(s.file_locations[0].line == 3);
  CHECK(s.file_locations[0].end_column == 6);
  REQUIRE(s.stack_frames.size() == 2);
  CHECK(s.stack_frames[1].parent_frame_id == 2);  // as written
  CHECK(A(*m, "r").metadata.stack_frame_id == 2);
}

TEST_CASE("parser: shapes, layouts, dynamic dimensions", "[parser][shape]") {
  auto s = ParseShape("f32[2,3]{0,1}");
  REQUIRE(s.ok());
  CHECK(s->layout().minor_to_major == std::vector<int64_t>{0, 1});
  s = ParseShape("(f32[2], (s32[], token[]), opaque[])");
  REQUIRE(s.ok());
  CHECK(s->tuple_shapes(1).tuple_shapes(1).IsToken());
  CHECK(s->tuple_shapes(2).IsOpaque());
  s = ParseShape("f32[<=4,?,3]");
  REQUIRE(s.ok());
  CHECK(s->is_dynamic_dimension(0));
  CHECK(s->dimensions(0) == 4);
  CHECK(s->dimensions(1) == Shape::kUnboundedSize);
  CHECK(!s->is_dynamic_dimension(2));
  s = ParseShape("f32[8,128]{1,0:T(8,128)(2,1)L(4)#(u16)*(u32)E(4)S(1)M(8)}");
  REQUIRE(s.ok());
  const Layout& l = s->layout();
  REQUIRE(l.tiles.size() == 2);
  CHECK(l.tiles[0].dimensions == std::vector<int64_t>{8, 128});
  CHECK(l.tail_padding_alignment_in_elements == 4);
  CHECK(l.index_primitive_type == P::U16);
  CHECK(l.pointer_primitive_type == P::U32);
  CHECK(l.element_size_in_bits == 4);
  CHECK(l.memory_space == 1);
  CHECK(l.dynamic_shape_metadata_prefix_bytes == 8);
  s = ParseShape("f32[2,3,4]{2,1,0:T(2,*,128)SC(0:1,2)}");
  REQUIRE(s.ok());
  CHECK(s->layout().tiles[0].dimensions[1] == Tile::kCombineDimension);
  CHECK(s->layout().extra == "SC(0:1,2)");
  s = ParseShape("u32[]{:S(2)}");
  REQUIRE(s.ok());
  CHECK(s->layout().memory_space == 2);
  s = ParseShape("b(s32[4])");  // XLA's buffer shape stands for its array
  REQUIRE(s.ok());
  CHECK(*s == Shape(P::S32, {4}));

  CHECK(ParseShape("f32[123,456]foobar{0,1}").status().message() == "<shape>:1:13: extra content after shape");
  CHECK(ParseShape("f32[1,2,3]{1}").status().message() ==
        "<shape>:1:11: Dimensions size is 3, but minor to major size is 1.");
  CHECK(ParseShape("f32[2,2]{0,0}").status().message() ==
        "<shape>:1:9: layout minor_to_major {0,0} is not a permutation of the dimensions 0 to 1");
  CHECK(ParseShape("f32[4611686018427387904,2]").status().message() ==
        "<shape>:1:1: shape f32[4611686018427387904,2] has too many elements (more than 2^62)");
  CHECK(ParseShape("b()").status().message() == "<shape>:1:3: expected primitive type, saw ')'");
  CHECK(ParseShape("token[3]").status().message() == "<shape>:1:1: token shapes have no dimensions");

  // fill_missing_layouts: arrays without a layout get the default one unless disabled;
  // scalars always have one.
  const char* text = "HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  ROOT b = f32[] constant(1)\n}\n";
  CHECK(Find(*Parse(text), "a")->shape().layout().minor_to_major == std::vector<int64_t>{1, 0});
  HloParserOptions no_fill;
  no_fill.fill_missing_layouts = false;
  auto m = Parse(text, no_fill);
  CHECK(!Find(*m, "a")->shape().has_layout());
  CHECK(Find(*m, "b")->shape().has_layout());
  // keep_module_auto_layouts: entry_computation_layout shapes stay without a layout.
  const char* layout =
      "HloModule m, entry_computation_layout={(f32[2,3])->f32[]}\nENTRY e {\n  a = f32[2,3] parameter(0)\n"
      "  ROOT b = f32[] constant(1)\n}\n";
  CHECK(Parse(layout)->config().entry_computation_layout->parameter_shapes[0].has_layout());
  HloParserOptions keep;
  keep.keep_module_auto_layouts = true;
  CHECK(!Parse(layout, keep)->config().entry_computation_layout->parameter_shapes[0].has_layout());
}

TEST_CASE("parser: constants of every kind", "[parser][literal]") {
  auto m = Parse(
      "HloModule m\nENTRY e {\n"
      "  p = pred[3] constant({true, false, 1})\n"
      "  s = s32[2,3] constant({ { 1, 2, 3 }, { 4, 5, -6 } })\n"
      "  u = u64[2] constant({18446744073709551615, 9223372036854775808})\n"
      "  q4 = s4[2] constant({-8, 7})\n"
      "  f = f32[6] constant({nan, 7, -nan, -1, inf, -inf})\n"
      "  g = f32[2] constant({1e3, 2.5E-1})\n"
      "  b = bf16[2] constant({1.5, -nan(0x3f)})\n"
      "  h = f16[] constant(nan(0x1))\n"
      "  e = f8e4m3fn[2] constant({448, -nan})\n"
      "  c = c64[2] constant({(1, 2), (-inf, nan)})\n"
      "  z = c128[] constant((0.5, -0.25))\n"
      "  t = (f32[2,1], (s32[], pred[])) constant(( { {1}, {2} }, (3, true) ))\n"
      "  x = f32[0] constant({})\n"
      "  y = f32[2,0,3] constant({ {}, {} })\n"
      "  ROOT big = f32[67,89] constant({...})\n}\n");
  auto lit = [&](const std::string& name) -> const Literal& { return *A(*m, name).literal; };
  CHECK(lit("p").GetPred(0));
  CHECK(!lit("p").GetPred(1));
  CHECK(lit("p").GetPred(2));
  CHECK(lit("s").GetInt(5) == -6);
  CHECK(lit("u").GetUint(0) == 18446744073709551615ull);
  CHECK(lit("u").GetUint(1) == 9223372036854775808ull);
  CHECK(lit("q4").GetInt(0) == -8);
  CHECK(std::isnan(lit("f").GetDouble(0)));
  CHECK(std::signbit(lit("f").GetDouble(2)));
  CHECK(lit("f").GetDouble(4) == INFINITY);
  CHECK(lit("g").GetDouble(1) == 0.25);
  CHECK(lit("b").GetRawBits(0) == 0x3FC0);
  CHECK(lit("b").GetRawBits(1) == 0xFFBF);  // sign, all-ones exponent, payload 0x3f
  CHECK(lit("h").GetRawBits(0) == 0x7C01);
  CHECK(lit("e").GetDouble(0) == 448);
  CHECK(std::isnan(lit("e").GetDouble(1)));
  CHECK(lit("c").GetComplex(0) == std::complex<double>(1, 2));
  CHECK(lit("c").GetComplex(1).real() == -INFINITY);
  CHECK(lit("z").GetComplex(0) == std::complex<double>(0.5, -0.25));
  REQUIRE(lit("t").tuple_size() == 2);
  CHECK(lit("t").tuple_element(0).GetDouble(1) == 2);
  CHECK(lit("t").tuple_element(1).tuple_element(1).GetPred(0));
  CHECK(lit("x").element_count() == 0);
  CHECK(lit("big").element_count() == 67 * 89);

  // Range checks (as XLA: values that round into the type are fine, overflows are not).
  CHECK(Parse(WithParam("f32[]", "r = bf16[] constant(3.3895314e38)")));
  CHECK_THAT(Error(WithParam("f32[]", "r = f16[] constant(65520)")),
             Catch::Contains("value 65520 is out of range for literal's primitive type F16 namely [-65504, 65504]."));
  CHECK_THAT(Error(WithParam("f32[]", "r = u4[] constant(16)")),
             Catch::Contains("value 16 is out of range for literal's primitive type U4 namely [0, 15]."));
  CHECK_THAT(Error(WithParam("f32[]", "r = f8e4m3fn[1] constant({nan(0x1)})")),
             Catch::Contains("f8e4m3fn does not support payloads"));
  CHECK_THAT(Error(WithParam("f32[]", "r = f32[2,2] constant({{1,2},{3}})")),
             Catch::Contains("expects 2 elements in the [1]th element, but sees 1"));
  // u64 -1 wraps, as XLA accepts it.
  CHECK(A(*Parse(WithParam("f32[]", "r = u64[] constant(-1)")), "r").literal->GetUint(0) == ~uint64_t{0});
}

TEST_CASE("parser: operands: long form, nested instructions, inline tuple elements", "[parser][operands]") {
  // Nested instructions get "<opcode>.anon" names and come before their user.
  auto m = Parse("HloModule m\nENTRY e {\n  ROOT r = f32[] add(f32[] add(f32[] constant(1), f32[] constant(2)), "
                 "f32[] constant(3))\n}\n");
  HloComputation* e = m->entry_computation();
  CHECK(e->instruction_count() == 5);
  CHECK(e->root_instruction()->operand(0)->opcode() == O::kAdd);
  CHECK(e->root_instruction()->operand(0)->name() == "add.anon");
  CHECK(e->instructions().back()->name() == "r");

  // %t#i: one get-tuple-element per (operand, index), right after the operand.
  auto g = Parse("HloModule m\nENTRY e {\n  t = (f32[], s32[]) parameter(0)\n  u = f32[] constant(1)\n"
                 "  a = f32[] add(%t#0, %t#0)\n  b = s32[] negate(%t#1)\n  ROOT c = f32[] add(a, %t#0)\n}\n");
  const auto& insts = g->entry_computation()->instructions();
  REQUIRE(insts.size() == 7);
  CHECK(insts[0]->name() == "t");
  CHECK(insts[1]->name() == "t#0");
  CHECK(insts[1]->is_inline_gte());
  CHECK(insts[1]->opcode() == O::kGetTupleElement);
  CHECK(insts[1]->attrs().tuple_index == 0);
  CHECK(insts[1]->shape() == Shape(P::F32, {}));
  CHECK(insts[2]->name() == "t#1");
  CHECK(insts[3]->name() == "u");
  CHECK(Find(*g, "a")->operand(0) == Find(*g, "a")->operand(1));
  CHECK(Find(*g, "c")->operand(1) == insts[1].get());
  CHECK(insts[1]->users().size() == 3);

  CHECK_THAT(Error(WithParam("f32[2]", "r = f32[2] negate(f32[3] %p)")),
             Catch::Contains("t.hlo:4:26: The declared operand shape f32[3]{0} is not compatible with the shape of "
                             "the operand instruction f32[2]{0}. (in instruction %r)"));
  CHECK_THAT(Error(WithParam("(f32[])", "r = f32[] negate(%p#1)")),
             Catch::Contains("t.hlo:4:28: tuple index 1 is out of range for %p of shape (f32[])"));
}

TEST_CASE("parser: single instructions make a module", "[parser]") {
  auto m = Parse("%multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)");
  HloComputation* e = m->entry_computation();
  CHECK(e->num_parameters() == 2);
  CHECK(e->parameter_instruction(0)->name() == "broadcast");
  CHECK(e->root_instruction()->name() == "multiply");
  auto n = Parse("f32[2,4]{1,0} multiply(f32[2,4]{1,0}, f32[2,4]{1,0})");
  CHECK(n->entry_computation()->num_parameters() == 2);
  CHECK(n->entry_computation()->parameter_instruction(1)->name() == "_1");
  // With an inline computation.
  auto c = Parse("f32[5,10] conditional(s32[], f32[5,10], f32[5,10]), branch_computations={\n"
                 "{\n  p = f32[5,10] parameter(0)\n  ROOT c = f32[5,10] ceil(p)\n},\n"
                 "{\n  p = f32[5,10] parameter(0)\n  ROOT f = f32[5,10] floor(p)\n}\n}");
  CHECK(c->computations().size() == 3);
  CHECK(c->entry_computation()->root_instruction()->called_computations().size() == 2);
  CHECK_THAT(Error("%m = f32[2] multiply(%a, %b)"), Catch::Contains("Operand had no shape in HLO text"));
}

TEST_CASE("parser: names are made unique across the module, as XLA does", "[parser]") {
  auto m = Parse("HloModule m\nc {\n  x = f32[] parameter(0)\n  ROOT y = f32[] negate(x)\n}\n"
                 "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c\n}\n");
  CHECK(m->computations()[0]->root_instruction()->name() == "y");
  CHECK(m->entry_computation()->root_instruction()->name() == "y.1");
  CHECK(m->entry_computation()->parameter_instruction(0)->name() == "x.1");
}

TEST_CASE("parser: instruction attributes", "[parser][attributes]") {
  auto m = Parse(
      "HloModule m\n" + std::string(kSum) +
      "ENTRY e {\n"
      "  p = f32[1,8,8,4] parameter(0)\n  k = f32[3,3,4,4] parameter(1)\n"
      "  conv = f32[1,4,4,4] convolution(p, k), window={size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=1x1 "
      "rhs_dilate=2x1 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f, feature_group_count=2, "
      "operand_precision={high,HIGHEST}, conv_kind=fprop\n"
      "  d = f32[8,8] parameter(2)\n"
      "  dot = f32[8,8] dot(d, d), lhs_batch_dims={}, lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
      "algorithm=dot_tf32_tf32_f32\n"
      "  sl = f32[2,4] slice(d), slice={[0:4:2], [4:8]}\n"
      "  z = f32[] constant(0)\n"
      "  pad = f32[12,10] pad(d, z), padding=1_2_1x0_2\n"
      "  cmp = pred[8,8] compare(d, d), direction=GE, type=TOTALORDER\n"
      "  cmp2 = pred[8,8] compare(d, d), direction=LT, order=TOTAL\n"
      "  idx = s32[4,1] parameter(3)\n"
      "  gat = f32[4,8] gather(d, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true\n"
      "  upd = f32[4,8] parameter(4)\n"
      "  sca = f32[8,8] scatter(d, idx, upd), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum, unique_indices=true\n"
      "  rw = f32[4,4] reduce-window(d, z), window={size=2x2 stride=2x2}, to_apply=sum\n"
      "  red = f32[8] reduce(d, z), dimensions={1}, to_apply=sum\n"
      "  ar = f32[8,8] all-reduce(d), channel_id=3, replica_groups={{0,1},{2,3}}, use_global_device_ids=true, "
      "to_apply=sum\n"
      "  ag = f32[16,8] all-gather(d), dimensions={0}, replica_groups=[2,2]<=[2,2]T(1,0), constrain_layout=true\n"
      "  rs = f32[4,8] reduce-scatter(d), dimensions={0}, replica_groups=mesh['x'=2] {'x'}, to_apply=sum\n"
      "  cp = f32[8,8] collective-permute(d), source_target_pairs={{0,1},{1,0}}\n"
      "  ROOT t = (f32[8,8], f32[8,8]) tuple(d, d), sharding={{replicated}, {devices=[2,1]<=[2]}}, "
      "metadata={op_type=\"t\" op_name=\"n\" source_file=\"f.py\" source_line=3, profile_type={1} "
      "scheduling_name=\"s\" preserve_layout=true}, frontend_attributes={x=\"y\"}, backend_config={\"a\":[1,{}]}, "
      "statistics={visualizing_index=1,stat-1=33,stat-2=4.5}, origin={({\"a\"}, {\"b\" {0}})}\n}\n");

  const auto& conv = A(*m, "conv");
  REQUIRE(conv.window);
  REQUIRE(conv.window->dimensions.size() == 2);
  const WindowDimension& w1 = conv.window->dimensions[1];
  CHECK(w1.size == 3);
  CHECK(w1.stride == 2);
  CHECK(w1.padding_low == 0);
  CHECK(w1.padding_high == 1);
  CHECK(w1.window_dilation == 1);
  CHECK(conv.window->dimensions[0].window_dilation == 2);
  CHECK(w1.window_reversal);
  REQUIRE(conv.convolution_dimension_numbers);
  const auto& dn = *conv.convolution_dimension_numbers;
  CHECK(dn.input_batch_dimension == 0);
  CHECK(dn.input_feature_dimension == 3);
  CHECK(dn.input_spatial_dimensions == std::vector<int64_t>{1, 2});
  CHECK(dn.kernel_input_feature_dimension == 2);
  CHECK(dn.kernel_output_feature_dimension == 3);
  CHECK(conv.feature_group_count == 2);
  CHECK(conv.batch_group_count == 1);
  CHECK(conv.precision_config.operand_precision == std::vector<Precision>{Precision::kHigh, Precision::kHighest});
  CHECK(Raw(conv, "conv_kind") == "fprop");

  const auto& dot = A(*m, "dot");
  REQUIRE(dot.dot_dimension_numbers);
  CHECK(dot.dot_dimension_numbers->lhs_contracting_dimensions == std::vector<int64_t>{1});
  CHECK(dot.dot_dimension_numbers->rhs_batch_dimensions.empty());
  CHECK(dot.precision_config.algorithm == "dot_tf32_tf32_f32");

  REQUIRE(A(*m, "sl").slice.size() == 2);
  CHECK(A(*m, "sl").slice[0] == SliceDimension{0, 4, 2});
  CHECK(A(*m, "sl").slice[1] == SliceDimension{4, 8, 1});
  REQUIRE(A(*m, "pad").padding_config);
  CHECK(A(*m, "pad").padding_config->dimensions[0] == PaddingDimension{1, 2, 1});
  CHECK(A(*m, "pad").padding_config->dimensions[1] == PaddingDimension{0, 2, 0});
  CHECK(A(*m, "cmp").comparison_direction == ComparisonDirection::kGe);
  CHECK(A(*m, "cmp").comparison_type == ComparisonType::kTotalOrder);
  // order=TOTAL on floating-point operands is XLA's TOTALORDER comparison.
  CHECK(A(*m, "cmp2").comparison_type == ComparisonType::kTotalOrder);
  CHECK(Raw(A(*m, "cmp2"), "order") == "TOTAL");

  const auto& gat = A(*m, "gat");
  REQUIRE(gat.gather_dimension_numbers);
  CHECK(gat.gather_dimension_numbers->offset_dims == std::vector<int64_t>{1});
  CHECK(gat.gather_dimension_numbers->index_vector_dim == 1);
  CHECK(gat.dynamic_slice_sizes == std::vector<int64_t>{1, 8});
  CHECK(gat.indices_are_sorted);
  const auto& sca = A(*m, "sca");
  REQUIRE(sca.scatter_dimension_numbers);
  CHECK(sca.scatter_dimension_numbers->inserted_window_dims == std::vector<int64_t>{0});
  CHECK(sca.unique_indices);
  CHECK(Find(*m, "sca")->to_apply()->name() == "sum");
  CHECK(A(*m, "rw").window->dimensions.size() == 2);
  CHECK(A(*m, "red").dimensions == std::vector<int64_t>{1});

  const auto& ar = A(*m, "ar");
  CHECK(ar.channel_id == 3);
  CHECK(ar.replica_groups.groups == std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}});
  CHECK(ar.use_global_device_ids);
  const auto& ag = A(*m, "ag");
  REQUIRE(ag.replica_groups.iota);
  CHECK(ag.replica_groups.iota->dims == std::vector<int64_t>{2, 2});
  CHECK(ag.replica_groups.iota->transpose_perm == std::vector<int64_t>{1, 0});
  CHECK(ag.constrain_layout);
  CHECK(A(*m, "rs").replica_groups.mesh_text == "mesh['x'=2] {'x'}");
  CHECK(A(*m, "cp").source_target_pairs == std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}});

  const auto& t = A(*m, "t");
  REQUIRE(t.sharding);
  CHECK(t.sharding->kind == HloSharding::Kind::kTuple);
  REQUIRE(t.sharding->tuple_elements.size() == 2);
  CHECK(t.sharding->tuple_elements[1].iota->reshape_dims == std::vector<int64_t>{2});
  CHECK(t.sharding->tuple_elements[1].iota->transpose_perm.empty());
  CHECK(t.metadata.op_type == "t");
  CHECK(t.metadata.source_line == 3);
  CHECK(t.metadata.profile_type == std::vector<std::string>{"1"});
  CHECK(t.metadata.scheduling_name == "s");
  CHECK(t.metadata.preserve_layout);
  CHECK(t.frontend_attributes.at("x") == "y");
  CHECK(t.backend_config == "{\"a\":[1,{}]}");
  CHECK(t.statistics_viz == "{visualizing_index=1,stat-1=33,stat-2=4.5}");
  CHECK(Raw(t, "origin") == "{({\"a\"}, {\"b\" {0}})}");
}

TEST_CASE("parser: more opcodes' attributes and called computations", "[parser][attributes]") {
  auto m = Parse(
      "HloModule m\n" + std::string(kSum) +
      "%cond (c: (s32[], f32[])) -> pred[] {\n  %c = (s32[], f32[]) parameter(0)\n"
      "  %i = s32[] get-tuple-element(%c), index=0\n  %n = s32[] constant(4)\n"
      "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n"
      "%body (b: (s32[], f32[])) -> (s32[], f32[]) {\n  ROOT %b = (s32[], f32[]) parameter(0)\n}\n"
      "%sel (a: f32[], b: f32[]) -> pred[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
      "  ROOT %ge = pred[] compare(%a, %b), direction=GE\n}\n"
      "%fused (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n  ROOT %n = f32[4] negate(%x)\n}\n"
      "%neg (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n  ROOT %n = f32[] negate(%x)\n}\n"
      "ENTRY %e {\n"
      "  %p = f32[4] parameter(0)\n  %w0 = (s32[], f32[]) parameter(1)\n  %z = f32[] constant(0)\n"
      "  %w = (s32[], f32[]) while(%w0), condition=%cond, body=%body, backend_config=\"plain\"\n"
      "  %ss = f32[4] select-and-scatter(%p, f32[2] parameter(2), %z), window={size=2 stride=2}, select=%sel, "
      "scatter=%sum\n"
      "  %f = f32[4] fusion(%p), kind=kLoop, calls=%fused, output_to_operand_aliasing={{}: (0, {})}\n"
      "  %cc = (f32[4], s32[]) custom-call(%p), custom_call_target=\"tgt\", api_version=API_VERSION_TYPED_FFI, "
      "custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, operand_layout_constraints={f32[4]{0}}, "
      "literal=s32[2]{0} {1, 2}, called_computations={%sum}, opaque=\"o\"\n"
      "  %tk = (f32[4], s32[4]) topk(%p), k=4, largest=false\n"
      "  %rng = f32[4] rng(%z, %z), distribution=rng_normal\n"
      "  %rbg = (u64[2], u32[4]) rng-bit-generator(u64[2] parameter(3)), algorithm=rng_philox\n"
      "  %fft = c64[4] fft(c64[4] parameter(4)), fft_type=IFFT, fft_length={4}\n"
      "  %ts = f32[4,4] triangular-solve(f32[4,4] parameter(5), f32[4,4] parameter(6)), left_side=true, "
      "lower=true, unit_diagonal=true, transpose_a=ADJOINT\n"
      "  %ch = f32[4,4] cholesky(f32[4,4] parameter(7)), lower=true\n"
      "  %bn = (f32[4], f32[], f32[]) batch-norm-training(%p, f32[] parameter(8), f32[] parameter(9)), "
      "epsilon=0.001, feature_index=0\n"
      "  %rp = f32[4] reduce-precision(%p), exponent_bits=5, mantissa_bits=10\n"
      "  %io = s32[4] iota(), iota_dimension=0\n"
      "  %sort = f32[4] sort(%p), dimensions={0}, is_stable=true, to_apply=%sel\n"
      "  %c2 = f32[] conditional(pred[] parameter(10), %z, %z), true_computation=%neg, false_computation=%neg\n"
      "  %c3 = f32[] conditional(s32[] parameter(11), %z), branch_computations={%neg}\n"
      "  %tok = token[] after-all()\n"
      "  %inf = ((f32[4]), token[]) infeed(%tok), infeed_config=\"cfg\"\n"
      "  %outf = token[] outfeed(%p, %tok), outfeed_config=\"o\", outfeed_shape=f32[4]{0}\n"
      "  %snd = (f32[4], u32[], token[]) send(%p, %tok), channel_id=5, is_host_transfer=true\n"
      "  %sd = token[] send-done(%snd), channel_id=5, is_host_transfer=true\n"
      "  %sc = (s32[], f32[4]) scan(s32[] parameter(12), %p), dimensions={0}, num_carries=1, is_reverse=true, "
      "is_associative=false, to_apply=%sum\n"
      "  %state = u64[2] rng-get-and-update-state(), delta=4096\n"
      "  %cl = f32[4] call(%p), to_apply=%fused, is_composite=true\n"
      "  %c0 = f32[4] copy(%p), control-predecessors={%sd, %outf}\n"
      "  ROOT %r = f32[4] add(%p, %p), sharding={devices=[2,2]0,1,2,3 last_tile_dim_replicate}\n}\n");
  CHECK(Find(*m, "w")->called_computations() ==
        std::vector<HloComputation*>{m->GetComputationWithName("cond"), m->GetComputationWithName("body")});
  CHECK(A(*m, "w").backend_config == "plain");
  CHECK(Find(*m, "ss")->called_computations() ==
        std::vector<HloComputation*>{m->GetComputationWithName("sel"), m->GetComputationWithName("sum")});
  CHECK(A(*m, "ss").window->dimensions[0].stride == 2);
  HloInstruction* f = Find(*m, "f");
  CHECK(A(*m, "f").fusion_kind == FusionKind::kLoop);
  CHECK(f->fused_instructions_computation()->FusionInstruction() == f);
  REQUIRE(A(*m, "f").output_to_operand_aliasing.size() == 1);
  CHECK(A(*m, "f").output_to_operand_aliasing[0].operand_number == 0);
  const auto& cc = A(*m, "cc");
  CHECK(cc.custom_call_target == "tgt");
  CHECK(cc.api_version == CustomCallApiVersion::kTypedFfi);
  CHECK(cc.custom_call_has_side_effect);
  CHECK(cc.custom_call_schedule == CustomCallSchedule::kLatest);
  REQUIRE(cc.operand_layout_constraints);
  CHECK(cc.operand_layout_constraints->size() == 1);
  CHECK(Raw(cc, "literal") == "s32[2]{0} {1, 2}");
  CHECK(cc.opaque == "o");
  CHECK(Find(*m, "cc")->called_computations()[0]->name() == "sum");
  CHECK(A(*m, "tk").k == 4);
  CHECK(!A(*m, "tk").largest);
  CHECK(A(*m, "rng").distribution == RandomDistribution::kNormal);
  CHECK(A(*m, "rbg").rng_algorithm == RandomAlgorithm::kPhilox);
  CHECK(A(*m, "fft").fft_type == FftType::kIfft);
  CHECK(A(*m, "fft").fft_length == std::vector<int64_t>{4});
  const auto& ts = A(*m, "ts");
  CHECK((ts.left_side && ts.lower && ts.unit_diagonal));
  CHECK(ts.transpose_a == TriangularTranspose::kAdjoint);
  CHECK(A(*m, "ch").lower);
  CHECK(A(*m, "bn").epsilon == 0.001f);
  CHECK(A(*m, "rp").exponent_bits == 5);
  CHECK(A(*m, "rp").mantissa_bits == 10);
  CHECK(A(*m, "io").iota_dimension == 0);
  CHECK(A(*m, "sort").is_stable);
  CHECK(Find(*m, "c2")->called_computations().size() == 2);
  CHECK(Find(*m, "c3")->called_computations().size() == 1);
  CHECK(A(*m, "inf").infeed_config == "cfg");
  CHECK(A(*m, "outf").outfeed_shape == Shape(P::F32, {4}));
  CHECK(A(*m, "snd").channel_id == 5);
  CHECK(A(*m, "sd").is_host_transfer);
  const auto& sc = A(*m, "sc");
  CHECK(sc.num_carries == 1);
  CHECK(sc.is_reverse);
  CHECK(sc.is_associative == false);
  CHECK(Raw(A(*m, "state"), "delta") == "4096");
  CHECK(Raw(A(*m, "cl"), "is_composite") == "true");
  HloInstruction* c0 = Find(*m, "c0");
  REQUIRE(c0->control_predecessors().size() == 2);
  CHECK(c0->control_predecessors()[0]->name() == "sd");
  CHECK(Find(*m, "outf")->control_successors()[0] == c0);
  const auto& r = *A(*m, "r").sharding;
  CHECK(r.kind == HloSharding::Kind::kTiled);
  CHECK(r.tile_dims == std::vector<int64_t>{2, 2});
  CHECK(r.devices == std::vector<int64_t>{0, 1, 2, 3});
  CHECK(r.last_tile_dim_replicate);
}

TEST_CASE("parser: shardings", "[parser][sharding]") {
  auto sh = [](std::string_view text) {
    auto s = ParseSharding(text);
    INFO(text << " -> " << s.status().ToString());
    REQUIRE(s.ok());
    return *s;
  };
  CHECK(sh("{replicated}").kind == HloSharding::Kind::kReplicated);
  CHECK(sh("{maximal device=42}").device == 42);
  CHECK(sh("{manual}").kind == HloSharding::Kind::kManual);
  CHECK(sh("{unknown}").kind == HloSharding::Kind::kUnknown);
  CHECK(sh("{unreduced}").kind == HloSharding::Kind::kUnreduced);
  auto sub = sh("{devices=[2,2,2,2]<=[2,2,4]T(2,1,0) last_tile_dims={manual, replicated} shard_like 1}");
  CHECK(sub.iota->reshape_dims == std::vector<int64_t>{2, 2, 4});
  CHECK(sub.iota->transpose_perm == std::vector<int64_t>{2, 1, 0});
  CHECK(sub.last_tile_dims == std::vector<HloSharding::SubgroupType>{HloSharding::SubgroupType::kManual,
                                                                      HloSharding::SubgroupType::kReplicated});
  CHECK(sub.shard_group == "shard_like 1");
  CHECK(sh("{manual shard_as 1}").shard_group == "shard_as 1");
  auto md = sh("{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}");
  REQUIRE(md.metadata.size() == 2);
  CHECK(md.metadata[1].op_name == "b");
  auto mesh = sh("{mesh['x'=2], [{'x'}, {}]}");
  CHECK(mesh.kind == HloSharding::Kind::kMesh);
  CHECK(mesh.mesh_text == "mesh['x'=2], [{'x'}, {}]");
  auto tuple = sh("{{mesh[a=2,b=4], replicated}, {maximal device=5}, {maximal_mesh[device_id=5]}}");
  REQUIRE(tuple.tuple_elements.size() == 3);
  CHECK(tuple.tuple_elements[0].mesh_text == "mesh[a=2,b=4], replicated");
  CHECK(tuple.tuple_elements[2].mesh_text == "maximal_mesh[device_id=5]");
  CHECK(sh("{}").tuple_elements.empty());
  CHECK(ParseSharding("{replicated device=1}").status().message() ==
        "<sharding>:1:2: replicated shardings should not have any devices assigned");
  CHECK(ParseSharding("{devices=[2,2]<=[3]}").status().message() ==
        "<sharding>:1:10: iota tile assignment [2,2]<=[3] must have as many devices in its reshape dimensions as "
        "in its dimensions");
  CHECK(ParseSharding("{devices=[2]<=[2,2]T(0,0)}").status().message() ==
        "<sharding>:1:21: iota_transpose_perm (0,0) is not a permutation of 0 to 1");
}

TEST_CASE("parser: other stand-alone values (XLA's fragments)", "[parser]") {
  auto fa = ParseFrontendAttributes("{attr_a=\"test_a\",attr_b=\"b\",attr_c={type=\"s64\"},attr_d=\"a=\\\"b/c\\\"\"}");
  REQUIRE(fa.ok());
  CHECK(fa->at("attr_c") == "{type=\"s64\"}");
  CHECK(fa->at("attr_d") == "a=\"b/c\"");
  auto dn = ParseConvolutionDimensionNumbers("b0?f_?0?io->?b?0?f");
  REQUIRE(dn.ok());
  CHECK(dn->input_feature_dimension == 3);
  CHECK(dn->kernel_spatial_dimensions == std::vector<int64_t>{1});
  CHECK(dn->output_batch_dimension == 1);
  auto rg = ParseReplicaGroups("{{0,1},{2,3}}");
  REQUIRE(rg.ok());
  CHECK(rg->groups.size() == 2);
  auto pc = ParsePaddingConfig("0_1x2_3_4");
  REQUIRE(pc.ok());
  CHECK(pc->dimensions[1] == PaddingDimension{2, 3, 4});
  auto w = ParseWindow("size=2x3 pad=0_1x-1_2");
  REQUIRE(w.ok());
  CHECK(w->dimensions[1].padding_low == -1);
  auto lit = ParseLiteral(Shape(P::S32, {2}), "{1, 2}");
  REQUIRE(lit.ok());
  CHECK(lit->GetInt(1) == 2);
  for (const char* yes : {"{}", "{abc: 123}", "{{abc: 123}, {{{d}}}}", "{\"}\"}", "{\"\\\"}\"}", "{\"\\\"{\"}"})
    CHECK(LexesAsJsonDict(yes));
  for (const char* no : {"", "{", "}", "{{}", "{}}", "{}a", "a{}", "{{{{}}}"}) CHECK(!LexesAsJsonDict(no));
}

TEST_CASE("parser: async ops and execution threads", "[parser][async]") {
  // Explicit wrapped computation.
  auto m = Parse(
      "HloModule m\n%w (p: f32[10]) -> f32[20] {\n  %p = f32[10] parameter(0)\n"
      "  ROOT %c = f32[20] custom-call(%p), custom_call_target=\"foo\"\n}, execution_thread=\"parallel\"\n"
      "ENTRY %e {\n  %a = f32[10] parameter(0)\n"
      "  %s = ((f32[10]), f32[20], s32[]) async-start(%a), async_execution_thread=\"parallel\", calls=%w\n"
      "  %u = ((f32[10]), f32[20], s32[]) async-update(%s)\n"
      "  ROOT %d = f32[20] async-done(%u), calls=%w\n}\n");
  CHECK(m->GetComputationWithName("w")->execution_thread() == "parallel");
  CHECK(A(*m, "s").async_execution_thread == "parallel");
  CHECK(Find(*m, "s")->called_computations()[0]->name() == "w");
  CHECK(Find(*m, "d")->called_computations().empty());
  // X-start sugar: the op is wrapped in a new computation with parameters for its operands;
  // its own attributes go on the wrapped op, the shared ones on both.
  auto s = Parse(
      "HloModule m\nENTRY %e {\n  %a = f32[10] parameter(0)\n"
      "  %s = ((f32[10]), f32[20], s32[]) custom-call-start(%a), custom_call_target=\"foo\", "
      "metadata={op_name=\"x\"}, backend_config={\"k\":1}\n"
      "  %u = ((f32[10]), f32[20], s32[]) custom-call-update(%s)\n"
      "  ROOT %d = f32[20] custom-call-done(%u)\n}\n");
  HloInstruction* start = Find(*s, "s");
  CHECK(start->opcode() == O::kAsyncStart);
  HloComputation* wrapped = start->called_computations()[0];
  CHECK(wrapped->name() == "async_wrapped");
  CHECK(wrapped->num_parameters() == 1);
  HloInstruction* op = wrapped->root_instruction();
  CHECK(op->opcode() == O::kCustomCall);
  CHECK(op->shape() == Shape(P::F32, {20}));
  CHECK(op->attrs().custom_call_target == "foo");
  CHECK(op->attrs().metadata.op_name == "x");
  CHECK(start->attrs().metadata.op_name == "x");
  CHECK(start->attrs().backend_config == "{\"k\":1}");
  CHECK(start->attrs().custom_call_target.empty());
  CHECK(s->computations().size() == 2);
  CHECK_THAT(Error("HloModule m\nENTRY %e {\n  %a = f32[10] parameter(0)\n"
                   "  %s = ((f32[10]), f32[20], s32[]) custom-call-start(%a), custom_call_target=\"foo\"\n"
                   "  ROOT %d = f32[20] add-done(%s)\n}\n"),
             Catch::Contains("t.hlo:5:21: Expect async wrapped opcode to be custom-call, but got add"));
}

TEST_CASE("parser: recursion is capped, never overflows the stack", "[parser][recursion]") {
  HloParserOptions o;
  o.max_recursion_depth = 10;
  auto nest = [](int n, const std::string& open, const std::string& mid, const std::string& close) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += mid;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  const std::string depth_error = "maximum recursion depth exceeded";
  // Operands, shapes, tuple literals, inline computations: 11 levels with a limit of 10.
  CHECK_THAT(
      Error("HloModule m\nENTRY e {\n  ROOT r = f32[] " + nest(11, "negate(f32[] ", "constant(0)", ")") + "\n}\n", o),
      Catch::Contains(depth_error));
  CHECK_THAT(Error("HloModule m\nENTRY e {\n  ROOT r = " + nest(11, "(", "f32[]", ")") + " parameter(0)\n}\n", o),
             Catch::Contains(depth_error));
  CHECK_THAT(Error("HloModule m\nENTRY e {\n  ROOT r = " + nest(11, "(", "f32[]", ")") + " constant(" +
                       nest(11, "(", "1", ")") + ")\n}\n",
                   o),
             Catch::Contains(depth_error));
  CHECK_THAT(Error("HloModule m\nENTRY e {\n  ROOT r = f32[] call(), to_apply=" +
                       nest(11, "{ x = f32[] call(), to_apply=", "{ y = f32[] constant(0) }", " }") + "\n}\n",
                   o),
             Catch::Contains(depth_error));
  // Within the limit everything parses.
  CHECK(Parse("HloModule m\nENTRY e {\n  ROOT r = f32[] " + nest(3, "negate(f32[] ", "constant(0)", ")") + "\n}\n", o));
  // XLA's DeeplyNestedOperandsDoesNotStackOverflow, with the default limit.
  std::string deep = "f32[] " + nest(50000, "add(f32[] ", "constant(0)", ", f32[] constant(0))");
  CHECK(Error(deep) == "t.hlo:1:1001: maximum recursion depth exceeded (in instruction %_)");
  // Deep braces in a JSON dictionary are scanned iteratively and fine.
  CHECK(Parse("HloModule m\nENTRY e {\n  ROOT r = f32[] constant(1), backend_config=" + nest(50000, "{", "", "}") +
              "\n}\n"));
}

TEST_CASE("parser: error messages and locations", "[parser][errors]") {
  CHECK(Error("") == "t.hlo:1:1: expects 'HloModule', a computation or an instruction, but the text is empty");
  CHECK(Error("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  ROOT b = f32[] frob(a)\n}\n") ==
        "t.hlo:4:18: expects opcode but sees: frob (unknown opcode) (in instruction %b)");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT b = f32[] add(c, c)\n}\n") ==
        "t.hlo:3:22: instruction does not exist: c (in instruction %b)");
  CHECK(Error("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  a = f32[] constant(2)\n}\n") ==
        "t.hlo:4:3: instruction already exists: a (previously defined at 3:3)");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT a = f32[] add(f32[] constant(1))\n}\n") ==
        "t.hlo:3:21: expects 2 operands, but has 1 operand (in instruction %a)");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT a = f32[2] reduce(f32[2,2] parameter(0), f32[] constant(0)), "
              "dimensions={1}, to_apply=nope\n}\n") ==
        "t.hlo:3:94: computation does not exist: nope (in instruction %a)");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT a = f32[] constant(1), sharding={maximal}\n}\n") ==
        "t.hlo:3:41: maximal shardings should have exactly one device assigned (in instruction %a)");
  // CRLF and CR line endings count lines the same way.
  CHECK(Error("HloModule m\r\nENTRY e {\r\n  ROOT a = f32[] frob()\r\n}\r\n") ==
        "t.hlo:3:18: expects opcode but sees: frob (unknown opcode) (in instruction %a)");
  CHECK(Error("HloModule m\rENTRY e {\r  ROOT a = f32[] frob()\r}\r") ==
        "t.hlo:3:18: expects opcode but sees: frob (unknown opcode) (in instruction %a)");
  CHECK(Parse("HloModule m\r\n// c\r\nENTRY e { /* x\r\n y */\r\n  ROOT a = f32[] constant(1) // z\r}\r"));
  // Lexer errors report where the bad token starts.
  CHECK(Error("HloModule m\nENTRY e {\n  /* never closed\n}\n") == "t.hlo:3:3: unterminated /* comment");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT a = f32[] constant(1), metadata={op_name=\"x}\n}\n") ==
        "t.hlo:3:49: unterminated string (in instruction %a)");
  CHECK(Error("HloModule m\nENTRY e {\n  ROOT a = s64[] constant(18446744073709551616)\n}\n") ==
        "t.hlo:3:27: integer literal out of range (in instruction %a)");
  // A file that cannot be read.
  auto missing = ParseHloModuleFile("/nonexistent/x.hlo");
  CHECK(missing.status().message() == "/nonexistent/x.hlo: cannot open file (No such file or directory)");
}

TEST_CASE("parser: the lexer's tokens", "[parser][lexer]") {
  HloLexer lex("%a.b-c x: y= f32 b01f_01io->b01f 2x3 0_1x2_3_4 -7 1.5e3 -inf nan(0x5) 'q\\n' ... <= -> #");
  std::vector<TokKind> kinds;
  while (lex.Lex() != TokKind::kEof && lex.kind() != TokKind::kError) kinds.push_back(lex.kind());
  CHECK(lex.kind() == TokKind::kEof);
  CHECK(kinds == std::vector<TokKind>{TokKind::kName, TokKind::kName, TokKind::kAttributeName,
                                      TokKind::kPrimitiveType, TokKind::kDimLabels, TokKind::kDxD, TokKind::kPad,
                                      TokKind::kInt, TokKind::kDecimal, TokKind::kNegInf, TokKind::kDecimal,
                                      TokKind::kString, TokKind::kDots, TokKind::kLeq, TokKind::kArrow,
                                      TokKind::kOctothorp});
  HloLexer big("18446744073709551615 -9223372036854775808");
  big.Lex();
  CHECK(static_cast<uint64_t>(big.tok().int_val) == 18446744073709551615ull);
  big.Lex();
  CHECK(big.tok().int_val == INT64_MIN);
}

// Everything the repository's data says must parse does: the corpus's HLO files and XLA's
// valid cases (per manifest.tsv: modules, single instructions, shapes, with their options).
TEST_CASE("parser: corpus files and XLA's valid cases parse; invalid ones are rejected", "[parser][data]") {
  namespace fs = std::filesystem;
  fs::path tests = TestsDir();
  // The data is part of the repository: missing, it is a failure, not a skip.
  REQUIRE(fs::exists(tests / "corpus"));
  auto read = [](const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  int corpus = 0;
  for (const fs::path& dir : {tests / "corpus", tests / "corpus" / "spmd"}) {
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::string name = entry.path().filename().string();
      if (name.find("_optimizations.txt") == std::string::npos || name.find("buffer-assignment") != std::string::npos)
        continue;
      auto m = ParseHloModuleFile(entry.path().string());
      INFO(m.status().ToString());
      CHECK(m.ok());
      ++corpus;
    }
  }
  CHECK(corpus == 112);

  std::ifstream manifest(tests / "xla-hlo-cases" / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  int valid = 0, invalid = 0;
  while (std::getline(manifest, line)) {
    std::vector<std::string> f;
    std::stringstream ls(line);
    for (std::string cell; std::getline(ls, cell, '\t');) f.push_back(cell);
    REQUIRE(f.size() >= 9);
    const std::string& set = f[0];
    const std::string& kind = f[5];
    std::string text = read(tests / "xla-hlo-cases" / f[1]);
    HloParserOptions o;
    if (f[8].find("fill_missing_layouts=false") != std::string::npos) o.fill_missing_layouts = false;
    if (f[8].find("keep_module_auto_layouts=true") != std::string::npos) o.keep_module_auto_layouts = true;
    bool ok = kind == "shape" ? ParseShape(text).ok() : ParseHloModule(text, f[1], o).ok();
    INFO(f[1]);
    if (set == "invalid") {
      CHECK(!ok);
      ++invalid;
    } else {
      CHECK(ok);
      ++valid;
    }
  }
  CHECK(valid == 269);
  CHECK(invalid == 87);
}
