// HLO text printer on IR built by hand: literals, shapes, attribute values, shardings and
// whole modules in the three option sets (XLA dump form, long form, ShortParsable).
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/float_types.h"
#include "ir/hlo_printer.h"
#include "ir/hlo_printer_internal.h"
#include "ir/module.h"

using namespace hloc;
using namespace hloc::printer_internal;
using P = PrimitiveType;
using O = HloOpcode;

namespace {

// Small builder for hand-made computations.
struct Builder {
  HloComputation* comp;
  HloInstruction* Add(O op, Shape shape, const std::string& name,
                      std::vector<HloInstruction*> operands = {}) {
    auto inst = std::make_unique<HloInstruction>(op, std::move(shape), name);
    HloInstruction* raw = inst.get();
    for (HloInstruction* o : operands) raw->AppendOperand(o);
    return comp->AddInstruction(std::move(inst));
  }
  HloInstruction* Param(int64_t n, Shape shape, const std::string& name) {
    auto inst = std::make_unique<HloInstruction>(O::kParameter, std::move(shape), name);
    inst->mutable_attrs().parameter_number = n;
    return comp->AddInstruction(std::move(inst));
  }
};

Builder NewComputation(HloModule& m, const std::string& name, bool entry = false) {
  return Builder{m.AddComputation(std::make_unique<HloComputation>(name), entry)};
}

Literal F32Vector(std::vector<double> v) {
  Literal l(Shape(P::F32, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetDouble(i, v[i]);
  return l;
}

std::string F32(float v) { return FloatText(v); }

}  // namespace

TEST_CASE("floats print as XLA's RoundTripFpToString", "[printer][literal]") {
  CHECK(F32(0) == "0");
  CHECK(F32(-0.0f) == "-0");
  CHECK(F32(0.1f) == "0.1");
  CHECK(F32(0.5f) == "0.5");
  CHECK(F32(1e-05f) == "1e-05");
  CHECK(F32(-1e+09f) == "-1e+09");
  CHECK(F32(0.7978845834732056f) == "0.797884583");  // six digits do not round-trip
  CHECK(F32(2.38418579e-07f) == "2.38418579e-07");
  CHECK(F32(32000) == "32000");
  CHECK(F32(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(F32(-std::numeric_limits<float>::infinity()) == "-inf");
  CHECK(F32(std::numeric_limits<float>::quiet_NaN()) == "nan");
  CHECK(F32(-std::numeric_limits<float>::quiet_NaN()) == "-nan");
  CHECK(FloatBitsText(P::F32, 0x7fc00001) == "nan(0x400001)");
  CHECK(F32(static_cast<float>(3.40282e38)) == "3.40282e+38");
  CHECK(DoubleText(1.79769e308) == "1.79769e+308");
  CHECK(DoubleText(0.1) == "0.1");
  CHECK(DoubleText(1.0 / 3) == "0.33333333333333331");
  // Narrow types: max_digits10 significant digits.
  CHECK(FloatBitsText(P::BF16, EncodeFloat(P::BF16, 0.7978845834732056)) == "0.7969");
  CHECK(FloatBitsText(P::BF16, EncodeFloat(P::BF16, 0.044715)) == "0.04468");
  CHECK(FloatBitsText(P::BF16, EncodeFloat(P::BF16, 3.39e38)) == "3.39e+38");
  CHECK(FloatBitsText(P::BF16, EncodeFloat(P::BF16, 500)) == "500");
  CHECK(FloatBitsText(P::BF16, 0xFFFF) == "-nan(0x7f)");
  CHECK(FloatBitsText(P::BF16, 0xFFBF) == "-nan(0x3f)");
  CHECK(FloatBitsText(P::BF16, 0xFFC0) == "-nan");
  CHECK(FloatBitsText(P::F16, 0x7BFF) == "65504");
  CHECK(FloatBitsText(P::F16, 0xFBFF) == "-65504");
  CHECK(FloatBitsText(P::F8E4M3FN, 0x7F) == "nan");
  CHECK(FloatBitsText(P::F8E4M3FN, 0xFF) == "-nan");
  CHECK(FloatBitsText(P::F8E4M3FN, EncodeFloat(P::F8E4M3FN, 7)) == "7");
  CHECK(FloatBitsText(P::F8E4M3B11FNUZ, 0x80) == "-nan");
  CHECK(FloatBitsText(P::F8E5M2, 0x7C) == "inf");
  CHECK(FloatBitsText(P::F8E5M2, 0x7D) == "nan(0x1)");
  CHECK(FloatBitsText(P::F8E8M0FNU, 0xFF) == "nan");
  CHECK(FloatBitsText(P::F4E2M1FN, 0x7) == "6");
}

TEST_CASE("literals print like XLA's PrintWithoutShapeOneline", "[printer][literal]") {
  CHECK(PrintLiteral(Literal::ScalarInt(P::S32, -42)) == "-42");
  CHECK(PrintLiteral(Literal::ScalarInt(P::PRED, 1)) == "true");
  CHECK(PrintLiteral(Literal::ScalarInt(P::PRED, 0)) == "false");
  CHECK(PrintLiteral(F32Vector({})) == "{}");
  CHECK(PrintLiteral(F32Vector({1, 2, 3})) == "{1, 2, 3}");
  Literal nonfinite = F32Vector({NAN, 7, NAN, -1, INFINITY, -INFINITY});
  CHECK(PrintLiteral(nonfinite) == "{nan, 7, nan, -1, inf, -inf}");

  Literal pred(Shape(P::PRED, {2, 3}));
  for (int i = 0; i < 6; ++i) pred.SetInt(i, i % 2);
  CHECK(PrintLiteral(pred) == "{ { 0, 1, 0 }, { 1, 0, 1 } }");

  Literal m(Shape(P::S32, {2, 3}));
  for (int i = 0; i < 6; ++i) m.SetInt(i, i + 1);
  CHECK(PrintLiteral(m) == "{ { 1, 2, 3 }, { 4, 5, 6 } }");

  Literal col(Shape(P::F32, {2, 1}));
  col.SetDouble(0, 1);
  col.SetDouble(1, 2);
  CHECK(PrintLiteral(col) == "{ {1}, {2} }");

  Literal r3(Shape(P::S32, {1, 2, 3}));
  for (int i = 0; i < 6; ++i) r3.SetInt(i, i + 1);
  CHECK(PrintLiteral(r3) == "{ { { 1, 2, 3 }, { 4, 5, 6 } } }");

  Literal r4(Shape(P::F32, {3, 2, 1, 1}));
  double v4[] = {-1, 4.1, 2, 4.1, 5, 4.4};
  for (int i = 0; i < 6; ++i) r4.SetDouble(i, v4[i]);
  CHECK(PrintLiteral(r4) ==
        "{ { /*i0=0*/ { /*i1=0*/ {-1} }, { /*i1=1*/ {4.1} } }, { /*i0=1*/ { /*i1=0*/ {2} }, "
        "{ /*i1=1*/ {4.1} } }, { /*i0=2*/ { /*i1=0*/ {5} }, { /*i1=1*/ {4.4} } } }");

  Literal r4b(Shape(P::F32, {2, 2, 1, 2}));
  for (int i = 0; i < 8; ++i) r4b.SetDouble(i, i + 1);
  CHECK(PrintLiteral(r4b) ==
        "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } }, { /*i1=1*/ { 3, 4 } } }, { /*i0=1*/ { /*i1=0*/ { 5, 6 "
        "} }, { /*i1=1*/ { 7, 8 } } } }");

  CHECK(PrintLiteral(Literal(Shape(P::F32, {2, 0, 4, 3}))) == "{ { /*i0=0*/ }, { /*i0=1*/ } }");
  CHECK(PrintLiteral(Literal(Shape(P::F32, {2, 0}))) == "{ {}, {} }");
  CHECK(PrintLiteral(Literal(Shape(P::F32, {0, 3}))) == "{  }");

  Literal tuple = Literal::MakeTuple({col, F32Vector({2, 42})});
  CHECK(PrintLiteral(tuple) == "( { {1}, {2} }, {2, 42} )");
  CHECK(PrintLiteral(Literal::MakeTuple({})) == "(  )");
  Literal nested = Literal::MakeTuple({Literal::MakeTuple({Literal::ScalarInt(P::S32, 1)}),
                                       Literal::ScalarInt(P::S32, 2)});
  CHECK(PrintLiteral(nested) == "( ( 1 ), 2 )");

  // With shapes and layouts, as custom-call literal= prints.
  Literal s2(Shape(P::S32, {2}));
  s2.SetInt(0, 1);
  s2.SetInt(1, 2);
  std::string with_shape;
  AppendLiteral(&with_shape, s2, /*print_shape=*/true, /*print_layout=*/true);
  CHECK(with_shape == "s32[2]{0} {1, 2}");
  Literal p4(Shape(P::PRED, {4}));
  p4.SetInt(0, 1);
  std::string tuple_with_shape;
  AppendLiteral(&tuple_with_shape, Literal::MakeTuple({s2, p4}), true, true);
  CHECK(tuple_with_shape == "( s32[2]{0} {1, 2}, pred[4]{0} {1, 0, 0, 0} )");
  std::string scalar_with_shape;
  AppendLiteral(&scalar_with_shape, Literal::ScalarDouble(P::F32, 0.1), true, true);
  CHECK(scalar_with_shape == "f32[] 0.1");
}

TEST_CASE("integer and complex elements cover every width", "[printer][literal]") {
  Literal s4(Shape(P::S4, {2}));
  s4.SetInt(0, -8);
  s4.SetInt(1, 7);
  CHECK(PrintLiteral(s4) == "{-8, 7}");
  Literal u32(Shape(P::U32, {2}));
  u32.SetUint(1, 4294967295u);
  CHECK(PrintLiteral(u32) == "{0, 4294967295}");
  Literal u64(Shape(P::U64, {1}));
  u64.SetUint(0, 18446744073709551615ull);
  CHECK(PrintLiteral(u64) == "{18446744073709551615}");
  Literal s64(Shape(P::S64, {1}));
  s64.SetInt(0, std::numeric_limits<int64_t>::min());
  CHECK(PrintLiteral(s64) == "{-9223372036854775808}");
  Literal c64(Shape(P::C64, {2}));
  c64.SetComplex(0, {-3.40282e38, 3.40282e38});
  c64.SetComplex(1, {1, 2.5});
  CHECK(PrintLiteral(c64) == "{(-3.40282e+38, 3.40282e+38), (1, 2.5)}");
  Literal c128(Shape(P::C128, {}));
  c128.SetComplex(0, {1.79769e308, -1.79769e308});
  CHECK(PrintLiteral(c128) == "(1.79769e+308, -1.79769e+308)");
  Literal e4(Shape(P::F8E4M3FN, {3}));
  e4.SetRawBits(0, 0x7F);
  e4.SetDouble(1, 7);
  e4.SetRawBits(2, 0xFF);
  CHECK(PrintLiteral(e4) == "{nan, 7, -nan}");
}

TEST_CASE("shapes print with layouts and tuple index comments", "[printer][shape]") {
  std::vector<Shape> elems;
  for (int i = 0; i < 7; ++i) elems.push_back(Shape(P::F32, {i + 1}));
  Shape t = Shape::Tuple(elems);
  CHECK(ShapeText(t, true) ==
        "(f32[1]{0}, f32[2]{0}, f32[3]{0}, f32[4]{0}, f32[5]{0}, /*index=5*/f32[6]{0}, f32[7]{0})");
  CHECK(ShapeText(t, false) == "(f32[1], f32[2], f32[3], f32[4], f32[5], /*index=5*/f32[6], f32[7])");
  Shape nested = Shape::Tuple({Shape::Tuple({Shape(P::F32, {}), Shape(P::U32, {})}), Shape::Token(),
                               Shape::Tuple({})});
  CHECK(ShapeText(nested, true) == "((f32[], u32[]), token[], ())");
  Shape scalar(P::U32, {});
  scalar.mutable_layout().memory_space = 2;
  CHECK(ShapeText(scalar, true) == "u32[]{:S(2)}");
  CHECK(ComputationLayoutText({}, Shape(P::PRED, {6})) == "()->pred[6]{0}");
  std::vector<Shape> six(6, Shape(P::S8, {2}));
  CHECK(ComputationLayoutText(six, Shape(P::F32, {})) ==
        "(s8[2]{0}, s8[2]{0}, s8[2]{0}, s8[2]{0}, s8[2]{0}, /*index=5*/s8[2]{0})->f32[]");
}

TEST_CASE("attribute values match XLA's spellings", "[printer][attributes]") {
  // LexesAsJsonDict cases from XLA's parser test.
  for (const char* yes : {"{}", "{abc: 123}", "{{abc: 123}, {{{d}}}}", "{\"}\"}", "{\"\\\"}\"}",
                          "{\"\\\"{\"}", "  {a:1}  "})
    CHECK(LexesAsJsonDict(yes));
  for (const char* no : {"", "{", "}", "{{}", "{}}", "{}a", "a{}", "{{{{}}}", "{\"}"})
    CHECK_FALSE(LexesAsJsonDict(no));

  PaddingConfig pad;
  pad.dimensions = {{0, 1, 0}, {2, 3, 0}};
  CHECK(PaddingConfigText(pad) == "0_1x2_3");
  pad.dimensions[1].interior_padding = 4;
  CHECK(PaddingConfigText(pad) == "0_1_0x2_3_4");

  ConvolutionDimensionNumbers conv;
  conv.input_batch_dimension = 0;
  conv.input_feature_dimension = 2;
  conv.input_spatial_dimensions = {1};
  conv.kernel_input_feature_dimension = 1;
  conv.kernel_output_feature_dimension = 2;
  conv.kernel_spatial_dimensions = {0};
  conv.output_batch_dimension = 0;
  conv.output_feature_dimension = 2;
  conv.output_spatial_dimensions = {1};
  CHECK(ConvDimLabelsText(conv) == "b0f_0io->b0f");
  conv.input_feature_dimension = 3;
  conv.kernel_spatial_dimensions = {1};
  conv.kernel_input_feature_dimension = 3;
  conv.kernel_output_feature_dimension = 4;
  conv.output_batch_dimension = 1;
  conv.output_spatial_dimensions = {3};
  conv.output_feature_dimension = 5;
  CHECK(ConvDimLabelsText(conv) == "b0?f_?0?io->?b?0?f");
  conv.input_batch_dimension = -3;  // corrupt IR must not crash the printer
  CHECK(ConvDimLabelsText(conv).substr(0, 2) == "?_");

  Window w;
  w.dimensions = {{3, 2, 1, 1, 1, 1, false}, {3, 2, 0, 1, 1, 1, false}};
  CHECK(WindowText(w) == "size=3x3 stride=2x2 pad=1_1x0_1");
  w.dimensions[0].base_dilation = 2;
  w.dimensions[1].window_dilation = 3;
  w.dimensions[1].window_reversal = true;
  CHECK(WindowText(w) == "size=3x3 stride=2x2 pad=1_1x0_1 lhs_dilate=2x1 rhs_dilate=1x3 rhs_reversal=0x1");

  DotDimensionNumbers dot;
  dot.lhs_contracting_dimensions = {1};
  dot.rhs_contracting_dimensions = {0};
  CHECK(DotDimsText(dot) == "lhs_contracting_dims={1}, rhs_contracting_dims={0}");
  dot.lhs_batch_dimensions = {0};
  dot.rhs_batch_dimensions = {1};
  CHECK(DotDimsText(dot) ==
        "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, rhs_contracting_dims={0}");

  CHECK(SliceText({{0, 4, 1}, {1, 3, 1}}) == "{[0:4], [1:3]}");
  CHECK(SliceText({{0, 4, 2}, {1, 3, 1}}) == "{[0:4:2], [1:3:1]}");

  CollectiveDeviceList groups;
  CHECK(DeviceListText(groups) == "{}");
  groups.groups = {{0, 1}, {2, 3}};
  CHECK(DeviceListText(groups) == "{{0,1},{2,3}}");
  CollectiveDeviceList iota;
  iota.iota = IotaTileAssignment{{4, 8}, {4, 8}, {1, 0}};
  CHECK(DeviceListText(iota) == "[4,8]<=[4,8]T(1,0)");
  CollectiveDeviceList mesh;
  mesh.mesh_text = "mesh['x'=2] {'x'}";
  CHECK(DeviceListText(mesh) == "mesh['x'=2] {'x'}");

  FrontendAttributes fa = {{"attr_b", "b"}, {"attr_a", "test_a"}, {"attr_c", "{type=\"s64\"}"},
                           {"attr_d", "a=\"b/c\""}};
  CHECK(FrontendAttributesText(fa) ==
        "{attr_a=\"test_a\",attr_b=\"b\",attr_c={type=\"s64\"},attr_d=\"a=\\\"b/c\\\"\"}");

  OpMetadata md;
  md.op_type = "a";
  md.op_name = "b";
  md.source_file = "c";
  md.source_line = 1;
  md.profile_type = {"1"};
  md.deduplicated_name = "d";
  md.scheduling_name = "foo";
  CHECK(OpMetadataText(md) ==
        "op_type=\"a\" op_name=\"b\" source_file=\"c\" source_line=1 profile_type={1} "
        "deduplicated_name=\"d\" scheduling_name=\"foo\"");
  OpMetadata q;
  q.op_name = "\"it's not a problem\n";
  q.stack_frame_id = 3;
  CHECK(OpMetadataText(q) == "op_name=\"\\\"it\\'s not a problem\\n\" stack_frame_id=3");

  CHECK(OutputOperandAliasingText({{{1}, 0, {}}, {{0, 0, 1, 0}, 0, {1, 0}}}) ==
        "{{1}: (0, {}), {0,0,1,0}: (0, {1,0})}");
}

TEST_CASE("shardings print in every form", "[printer][sharding]") {
  HloSharding s;
  CHECK(PrintSharding(s) == "{replicated}");
  s.kind = HloSharding::Kind::kMaximal;
  s.device = 42;
  CHECK(PrintSharding(s) == "{maximal device=42}");
  s.kind = HloSharding::Kind::kTiled;
  s.tile_dims = {2, 2};
  s.devices = {0, 1, 2, 3};
  s.last_tile_dim_replicate = true;
  CHECK(PrintSharding(s) == "{devices=[2,2]0,1,2,3 last_tile_dim_replicate}");
  HloSharding sub;
  sub.kind = HloSharding::Kind::kTiled;
  sub.tile_dims = {2, 2, 2, 2};
  sub.iota = IotaTileAssignment{{2, 2, 2, 2}, {2, 2, 4}, {2, 1, 0}};
  sub.last_tile_dims = {HloSharding::SubgroupType::kManual, HloSharding::SubgroupType::kReplicated};
  CHECK(PrintSharding(sub) == "{devices=[2,2,2,2]<=[2,2,4]T(2,1,0) last_tile_dims={manual, replicated}}");
  sub.iota->reshape_dims = {16};
  sub.iota->transpose_perm.clear();
  sub.shard_group = "shard_like 1";
  CHECK(PrintSharding(sub) ==
        "{devices=[2,2,2,2]<=[16] last_tile_dims={manual, replicated} shard_like 1}");
  HloSharding manual;
  manual.kind = HloSharding::Kind::kManual;
  manual.shard_group = "shard_as 1";
  CHECK(PrintSharding(manual) == "{manual shard_as 1}");
  HloSharding unknown;
  unknown.kind = HloSharding::Kind::kUnknown;
  CHECK(PrintSharding(unknown) == "{unknown}");
  HloSharding mesh;
  mesh.kind = HloSharding::Kind::kMesh;
  mesh.mesh_text = "mesh['x'=2], [{'x'}, {}]";
  CHECK(PrintSharding(mesh) == "{mesh['x'=2], [{'x'}, {}]}");

  HloSharding with_md;
  OpMetadata a, b;
  a.op_name = "a";
  b.op_name = "b";
  with_md.metadata = {a};
  CHECK(PrintSharding(with_md) == "{replicated metadata={op_name=\"a\"}}");
  with_md.metadata = {a, b};
  CHECK(PrintSharding(with_md) == "{replicated metadata={{op_name=\"a\"}, {op_name=\"b\"}}}");
  CHECK(ShardingText(with_md, /*include_metadata=*/false) == "{replicated}");

  HloSharding tuple;
  tuple.kind = HloSharding::Kind::kTuple;
  HloSharding dev1;
  dev1.kind = HloSharding::Kind::kMaximal;
  dev1.device = 1;
  tuple.tuple_elements = {dev1, HloSharding(), HloSharding()};
  CHECK(PrintSharding(tuple) == "{{maximal device=1}, {replicated}, {replicated}}");
  tuple.tuple_elements.resize(6);
  CHECK(PrintSharding(tuple) ==
        "{{maximal device=1}, {replicated}, {replicated}, {replicated}, {replicated}, "
        "/*index=5*/{replicated}}");
  HloSharding empty_tuple;
  empty_tuple.kind = HloSharding::Kind::kTuple;
  CHECK(PrintSharding(empty_tuple) == "{}");
}

// The softmax module of the corpus (abridged), built by hand: the XLA dump form.
TEST_CASE("a module prints like XLA's dump", "[printer][module]") {
  HloModule m("jit_softmax_small");
  Shape x_shape(P::F32, {16, 100});
  m.config().entry_computation_layout = ComputationLayout{{x_shape}, Shape(P::F32, {16})};
  m.config().allow_spmd_sharding_propagation_to_parameters = {true};
  m.config().allow_spmd_sharding_propagation_to_output = {true};
  StackFrameIndex& sf = m.stack_frames();
  sf.file_names = {"jax_corpus.py"};
  sf.function_names = {"<module>", "softmax"};
  sf.file_locations = {{1, 1, 191, 191, 48, 71}, {1, 2, 27, 27, 23, 49}};
  sf.stack_frames = {{1, 1}, {2, 2}};

  Builder r = NewComputation(m, "region_0.1");
  HloInstruction* a = r.Param(0, Shape(P::F32, {}), "reduce_max.3");
  a->mutable_attrs().metadata.op_name = "reduce_max";
  HloInstruction* b = r.Param(1, Shape(P::F32, {}), "reduce_max.4");
  b->mutable_attrs().metadata.op_name = "reduce_max";
  HloInstruction* mx = r.Add(O::kMaximum, Shape(P::F32, {}), "reduce_max.5", {a, b});
  mx->mutable_attrs().metadata.op_name = "jit(softmax_small)/reduce_max";
  mx->mutable_attrs().metadata.stack_frame_id = 2;
  r.comp->set_root_instruction(mx);

  Builder e = NewComputation(m, "main.3", /*entry=*/true);
  HloInstruction* x = e.Param(0, x_shape, "x.1");
  x->mutable_attrs().metadata.op_name = "x";
  HloInstruction* c = e.Add(O::kConstant, Shape(P::F32, {}), "constant.5");
  c->mutable_attrs().literal = Literal::ScalarDouble(P::F32, -INFINITY);
  HloInstruction* red = e.Add(O::kReduce, Shape(P::F32, {16}), "reduce_max.7", {x, c});
  red->mutable_attrs().dimensions = {1};
  red->mutable_called_computations().push_back(r.comp);
  red->mutable_attrs().metadata.op_name = "jit(softmax_small)/reduce_max";
  red->mutable_attrs().metadata.stack_frame_id = 2;
  e.comp->set_root_instruction(red);

  const std::string expected =
      "HloModule jit_softmax_small, entry_computation_layout={(f32[16,100]{1,0})->f32[16]{0}}, "
      "allow_spmd_sharding_propagation_to_parameters={true}, "
      "allow_spmd_sharding_propagation_to_output={true}\n"
      "\n"
      "FileNames\n"
      "1 \"jax_corpus.py\"\n"
      "\n"
      "FunctionNames\n"
      "1 \"<module>\"\n"
      "2 \"softmax\"\n"
      "\n"
      "FileLocations\n"
      "1 {file_name_id=1 function_name_id=1 line=191 end_line=191 column=48 end_column=71}\n"
      "2 {file_name_id=1 function_name_id=2 line=27 end_line=27 column=23 end_column=49}\n"
      "\n"
      "StackFrames\n"
      "1 {file_location_id=1 parent_frame_id=1}\n"
      "2 {file_location_id=2 parent_frame_id=2}\n"
      "\n"
      "\n"
      "%region_0.1 (reduce_max.3: f32[], reduce_max.4: f32[]) -> f32[] {\n"
      "  %reduce_max.3 = f32[] parameter(0), metadata={op_name=\"reduce_max\"}\n"
      "  %reduce_max.4 = f32[] parameter(1), metadata={op_name=\"reduce_max\"}\n"
      "  ROOT %reduce_max.5 = f32[] maximum(%reduce_max.3, %reduce_max.4), "
      "metadata={op_name=\"jit(softmax_small)/reduce_max\" stack_frame_id=2}\n"
      "}\n"
      "\n"
      "ENTRY %main.3 (x.1: f32[16,100]) -> f32[16] {\n"
      "  %x.1 = f32[16,100]{1,0} parameter(0), metadata={op_name=\"x\"}\n"
      "  %constant.5 = f32[] constant(-inf)\n"
      "  ROOT %reduce_max.7 = f32[16]{0} reduce(%x.1, %constant.5), dimensions={1}, "
      "to_apply=%region_0.1, metadata={op_name=\"jit(softmax_small)/reduce_max\" stack_frame_id=2}\n"
      "}\n"
      "\n";
  CHECK(PrintModule(m) == expected);

  // ShortParsable: no %, no metadata or stack frames, no program shapes.
  const std::string short_expected =
      "HloModule jit_softmax_small, entry_computation_layout={(f32[16,100]{1,0})->f32[16]{0}}, "
      "allow_spmd_sharding_propagation_to_parameters={true}, "
      "allow_spmd_sharding_propagation_to_output={true}\n"
      "\n"
      "region_0.1 {\n"
      "  reduce_max.3 = f32[] parameter(0)\n"
      "  reduce_max.4 = f32[] parameter(1)\n"
      "  ROOT reduce_max.5 = f32[] maximum(reduce_max.3, reduce_max.4)\n"
      "}\n"
      "\n"
      "ENTRY main.3 {\n"
      "  x.1 = f32[16,100]{1,0} parameter(0)\n"
      "  constant.5 = f32[] constant(-inf)\n"
      "  ROOT reduce_max.7 = f32[16]{0} reduce(x.1, constant.5), dimensions={1}, to_apply=region_0.1\n"
      "}\n"
      "\n";
  CHECK(PrintModule(m, HloPrintOptions::ShortParsable()) == short_expected);

  // Long form: operand shapes.
  std::string long_text = PrintModule(m, HloPrintOptions::Long());
  CHECK(long_text.find("reduce(f32[16,100]{1,0} %x.1, f32[] %constant.5), dimensions={1}") !=
        std::string::npos);
  // Without an entry layout in the config, the header derives it from the entry.
  m.config().entry_computation_layout.reset();
  CHECK(PrintModule(m).rfind(
            "HloModule jit_softmax_small, entry_computation_layout={(f32[16,100]{1,0})->f32[16]{0}}", 0) == 0);
}

TEST_CASE("instructions: operand lists, attributes order, inline tuple elements", "[printer]") {
  HloModule m("m");
  Builder e = NewComputation(m, "main", /*entry=*/true);
  std::vector<Shape> shapes(7, Shape(P::F32, {}));
  HloInstruction* t = e.Param(0, Shape::Tuple(shapes), "arg_tuple.1");
  std::vector<HloInstruction*> gtes;
  for (int i = 0; i < 7; ++i) {
    HloInstruction* g = e.Add(O::kGetTupleElement, Shape(P::F32, {}), absl::StrCat("arg_tuple.1#", i), {t});
    g->mutable_attrs().tuple_index = i;
    g->set_inline_gte(true);
    gtes.push_back(g);
  }
  HloInstruction* tup = e.Add(O::kTuple, Shape::Tuple(shapes), "tuple", gtes);
  tup->mutable_attrs().frontend_attributes = {{"xla.no_invariant_operands", "2"}};
  HloInstruction* fus = e.Add(O::kFusion, Shape(P::F32, {}), "fusion", {gtes[0]});
  Builder f = NewComputation(m, "fused");
  HloInstruction* fp = f.Param(0, Shape(P::F32, {}), "param_0");
  f.comp->set_root_instruction(fp);
  f.comp->SetFusionInstruction(fus);
  fus->mutable_called_computations().push_back(f.comp);
  fus->mutable_attrs().fusion_kind = FusionKind::kCustom;
  fus->mutable_attrs().metadata.scheduling_name = "fusion";
  fus->mutable_attrs().backend_config = "{\"kind\":\"__triton\"}";
  tup->AddControlDependencyTo(fus);
  e.comp->set_root_instruction(fus);

  CHECK(PrintInstruction(*tup) ==
        "%tuple = (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], f32[]) tuple(%arg_tuple.1#0, "
        "%arg_tuple.1#1, %arg_tuple.1#2, %arg_tuple.1#3, %arg_tuple.1#4, /*index=5*/%arg_tuple.1#5, "
        "%arg_tuple.1#6), frontend_attributes={xla.no_invariant_operands=\"2\"}");
  CHECK(PrintInstruction(*fus) ==
        "%fusion = f32[] fusion(%arg_tuple.1#0), kind=kCustom, calls=%fused, "
        "control-predecessors={%tuple}, metadata={scheduling_name=\"fusion\"}, "
        "backend_config={\"kind\":\"__triton\"}");
  CHECK(PrintInstruction(*tup, HloPrintOptions::Long()).find(
            "tuple(f32[] %arg_tuple.1#0, f32[] %arg_tuple.1#1") != std::string::npos);
  CHECK(PrintInstruction(*fus, HloPrintOptions::ShortParsable()) ==
        "fusion = f32[] fusion(arg_tuple.1#0), kind=kCustom, calls=fused");
  // Non-JSON backend configs are quoted and escaped.
  fus->mutable_attrs().backend_config = "foo\" bar";
  CHECK(PrintInstruction(*fus).find("backend_config=\"foo\\\" bar\"") != std::string::npos);
  // Inline get-tuple-elements have no line of their own.
  std::string comp = PrintComputation(*e.comp);
  CHECK(comp.find("get-tuple-element") == std::string::npos);
  CHECK(comp.rfind("ENTRY %main (arg_tuple.1: (f32[], f32[], f32[], f32[], f32[], /*index=5*/f32[], "
                   "f32[])) -> f32[] {\n  %arg_tuple.1 = ",
                   0) == 0);
}

TEST_CASE("opcode-specific attributes", "[printer]") {
  HloModule m("m");
  Builder e = NewComputation(m, "main", true);
  HloInstruction* p = e.Param(0, Shape(P::F32, {4}), "p");
  HloInstruction* q = e.Param(1, Shape(P::S32, {4}), "q");

  HloInstruction* cmp = e.Add(O::kCompare, Shape(P::PRED, {4}), "cmp", {p, p});
  cmp->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  CHECK(PrintInstruction(*cmp) == "%cmp = pred[4]{0} compare(%p, %p), direction=LT");
  cmp->mutable_attrs().comparison_type = ComparisonType::kTotalOrder;
  CHECK(PrintInstruction(*cmp) == "%cmp = pred[4]{0} compare(%p, %p), direction=LT, type=TOTALORDER");
  cmp->mutable_attrs().comparison_type = ComparisonType::kFloat;  // the default: not written
  CHECK(PrintInstruction(*cmp) == "%cmp = pred[4]{0} compare(%p, %p), direction=LT");

  HloInstruction* ar = e.Add(O::kAllReduce, Shape(P::F32, {4}), "ar", {p});
  ar->mutable_attrs().channel_id = 1;
  ar->mutable_attrs().replica_groups.groups = {{0, 1}};
  ar->mutable_attrs().use_global_device_ids = true;
  Builder add = NewComputation(m, "add");
  add.comp->set_root_instruction(add.Param(0, Shape(P::F32, {}), "x"));
  ar->mutable_called_computations().push_back(add.comp);
  HloSharding rep;
  ar->mutable_attrs().sharding = rep;
  CHECK(PrintInstruction(*ar) ==
        "%ar = f32[4]{0} all-reduce(%p), channel_id=1, replica_groups={{0,1}}, "
        "use_global_device_ids=true, to_apply=%add, sharding={replicated}");

  HloInstruction* rs = e.Add(O::kReduceScatter, Shape(P::F32, {2}), "rs", {p});
  rs->mutable_attrs().replica_groups.mesh_text = "mesh['x'=2] {'x'}";
  rs->mutable_attrs().use_global_device_ids = true;
  rs->mutable_attrs().dimensions = {0};
  rs->mutable_called_computations().push_back(add.comp);
  CHECK(PrintInstruction(*rs) ==
        "%rs = f32[2]{0} reduce-scatter(%p), replica_groups=mesh['x'=2] {'x'}, "
        "use_global_device_ids=true, dimensions={0}, to_apply=%add");

  HloInstruction* g = e.Add(O::kGather, Shape(P::F32, {2}), "g", {p, q});
  GatherDimensionNumbers gd;
  gd.offset_dims = {};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  gd.index_vector_dim = 1;
  g->mutable_attrs().gather_dimension_numbers = gd;
  g->mutable_attrs().dynamic_slice_sizes = {1};
  g->mutable_attrs().indices_are_sorted = true;
  CHECK(PrintInstruction(*g) ==
        "%g = f32[2]{0} gather(%p, %q), offset_dims={}, collapsed_slice_dims={0}, "
        "start_index_map={0}, index_vector_dim=1, slice_sizes={1}, indices_are_sorted=true");

  HloInstruction* cc = e.Add(O::kCustomCall, Shape(P::F32, {4}), "cc", {p});
  cc->mutable_attrs().custom_call_target = "foo\"bar";
  cc->mutable_attrs().custom_call_has_side_effect = true;
  cc->mutable_attrs().api_version = CustomCallApiVersion::kTypedFfi;
  cc->mutable_attrs().custom_call_schedule = CustomCallSchedule::kLatest;
  cc->mutable_attrs().raw_attributes = {{"literal", "s32[2]{0} {1, 2}"}};
  cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{Shape(P::F32, {4})};
  CHECK(PrintInstruction(*cc) ==
        "%cc = f32[4]{0} custom-call(%p), custom_call_target=\"foo\\\"bar\", "
        "operand_layout_constraints={f32[4]{0}}, custom_call_has_side_effect=true, "
        "literal=s32[2]{0} {1, 2}, schedule=SCHEDULE_LATEST, api_version=API_VERSION_TYPED_FFI");

  HloInstruction* ts = e.Add(O::kTriangularSolve, Shape(P::F32, {4}), "ts", {p, p});
  ts->mutable_attrs().lower = true;
  CHECK(PrintInstruction(*ts) == "%ts = f32[4]{0} triangular-solve(%p, %p), lower=true, transpose_a=NO_TRANSPOSE");

  HloInstruction* bn = e.Add(O::kBatchNormTraining, Shape(P::F32, {4}), "bn", {p, p, p});
  bn->mutable_attrs().epsilon = 0.001f;
  bn->mutable_attrs().feature_index = 3;
  CHECK(PrintInstruction(*bn) == "%bn = f32[4]{0} batch-norm-training(%p, %p, %p), epsilon=0.001, feature_index=3");

  HloInstruction* sl = e.Add(O::kSlice, Shape(P::F32, {2}), "sl", {p});
  sl->mutable_attrs().slice = {{0, 4, 2}};
  CHECK(PrintInstruction(*sl) == "%sl = f32[2]{0} slice(%p), slice={[0:4:2]}");

  HloInstruction* cst = e.Add(O::kConstant, Shape(P::F32, {12}), "cst");
  cst->mutable_attrs().literal = Literal(Shape(P::F32, {12}));
  HloPrintOptions small = HloPrintOptions();
  small.print_large_constants = false;
  CHECK(PrintInstruction(*cst, small) == "%cst = f32[12]{0} constant({...})");
  CHECK(PrintInstruction(*cst) == "%cst = f32[12]{0} constant({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})");

  HloInstruction* wl = e.Add(O::kWhile, Shape(P::F32, {4}), "wl", {p});
  wl->mutable_called_computations() = {add.comp, add.comp};
  wl->mutable_attrs().raw_attributes = {{"origin", "{{\"v\"}}"}};
  wl->mutable_attrs().statistics_viz = "{visualizing_index=1,stat-1=33}";
  wl->mutable_attrs().metadata.op_name = "w";
  CHECK(PrintInstruction(*wl) ==
        "%wl = f32[4]{0} while(%p), condition=%add, body=%add, "
        "statistics={visualizing_index=1,stat-1=33}, origin={{\"v\"}}, metadata={op_name=\"w\"}");
}

TEST_CASE("async ops print with or without XLA's syntax sugar", "[printer][async]") {
  HloModule m("AsyncOpsWithSyntaxSugar");
  Builder w = NewComputation(m, "async_wrapped");
  HloInstruction* wp = w.Param(0, Shape(P::F32, {10}), "async_param");
  HloInstruction* cc = w.Add(O::kCustomCall, Shape(P::F32, {20}), "custom-call", {wp});
  cc->mutable_attrs().custom_call_target = "foo";
  w.comp->set_root_instruction(cc);
  w.comp->set_execution_thread("parallel_thread");

  Builder e = NewComputation(m, "Entry", true);
  HloInstruction* p0 = e.Param(0, Shape(P::F32, {10}), "p0");
  Shape ctx = Shape::Tuple({Shape::Tuple({Shape(P::F32, {10})}), Shape(P::F32, {20}), Shape(P::S32, {})});
  HloInstruction* start = e.Add(O::kAsyncStart, ctx, "async-start", {p0});
  start->mutable_called_computations().push_back(w.comp);
  start->mutable_attrs().async_execution_thread = "parallel_thread";
  HloInstruction* update = e.Add(O::kAsyncUpdate, ctx, "async-update", {start});
  HloInstruction* done = e.Add(O::kAsyncDone, Shape(P::F32, {20}), "async-done", {update});
  e.comp->set_root_instruction(done);

  const std::string sugared =
      "HloModule AsyncOpsWithSyntaxSugar, entry_computation_layout={(f32[10]{0})->f32[20]{0}}\n"
      "\n"
      "ENTRY %Entry (p0: f32[10]) -> f32[20] {\n"
      "  %p0 = f32[10]{0} parameter(0)\n"
      "  %async-start = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(f32[10]{0} %p0), "
      "async_execution_thread=\"parallel_thread\", custom_call_target=\"foo\"\n"
      "  %async-update = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-update(((f32[10]{0}), "
      "f32[20]{0}, s32[]) %async-start)\n"
      "  ROOT %async-done = f32[20]{0} custom-call-done(((f32[10]{0}), f32[20]{0}, s32[]) "
      "%async-update)\n"
      "}\n"
      "\n";
  CHECK(PrintModule(m, HloPrintOptions::Long()) == sugared);

  std::string plain = PrintModule(m);
  CHECK(plain.find("%async_wrapped (async_param: f32[10]) -> f32[20] {") != std::string::npos);
  CHECK(plain.find("}, execution_thread=\"parallel_thread\"\n") != std::string::npos);
  CHECK(plain.find("async-start(%p0), async_execution_thread=\"parallel_thread\", "
                   "calls=%async_wrapped\n") != std::string::npos);
  CHECK(plain.find("async-done(%async-update)\n") != std::string::npos);
}

TEST_CASE("module header attributes", "[printer][module]") {
  HloModule m("Module");
  Builder e = NewComputation(m, "entry", true);
  e.comp->set_root_instruction(e.Param(0, Shape::Tuple({Shape(P::F32, {}), Shape(P::F32, {})}), "p"));
  m.set_is_scheduled(true);
  m.config().input_output_alias = {{{0}, 0, {0}, true}, {{1}, 0, {1}, false}};
  m.config().buffer_donor = {{0, {0}}, {0, {1}}};
  m.config().alias_passthrough_params = true;
  m.config().replica_count = 4;
  m.config().num_partitions = 2;
  m.config().allow_spmd_sharding_propagation_to_output = {false};  // XLA's default: omitted
  m.config().frontend_attributes = {{"attr_name", "attr_value"}};
  std::string text = PrintModule(m);
  CHECK(text.substr(0, text.find('\n')) ==
        "HloModule Module, is_scheduled=true, input_output_alias={ {0}: (0, {0}, must-alias), "
        "{1}: (0, {1}) }, buffer_donor={ (0, {0}), (0, {1}) }, alias_passthrough_params=true, "
        "entry_computation_layout={((f32[], f32[]))->(f32[], f32[])}, replica_count=4, "
        "num_partitions=2, frontend_attributes={attr_name=\"attr_value\"}");
}

TEST_CASE("computations print callees first, otherwise in module order", "[printer][module]") {
  HloModule m("m");
  // The entry is added first (as the parser does for a single instruction with nested
  // computations); its callee must still print before it, or the text would not parse.
  Builder e = NewComputation(m, "main", /*entry=*/true);
  Builder unused = NewComputation(m, "unused");
  unused.comp->set_root_instruction(unused.Param(0, Shape(P::F32, {}), "u"));
  Builder body = NewComputation(m, "body");
  body.comp->set_root_instruction(body.Param(0, Shape(P::F32, {}), "b"));
  HloInstruction* p = e.Param(0, Shape(P::F32, {}), "p");
  HloInstruction* call = e.Add(O::kCall, Shape(P::F32, {}), "call", {p});
  call->mutable_called_computations().push_back(body.comp);
  e.comp->set_root_instruction(call);
  std::string text = PrintModule(m, HloPrintOptions::ShortParsable());
  size_t b = text.find("\nbody {"), mn = text.find("\nENTRY main {"), u = text.find("\nunused {");
  REQUIRE(b != std::string::npos);
  REQUIRE(mn != std::string::npos);
  REQUIRE(u != std::string::npos);
  CHECK(b < mn);
  CHECK(mn < u);
}

TEST_CASE("deeply nested values print without recursion", "[printer][robustness]") {
  constexpr int kDepth = 2000;
  Shape s(P::F32, {});
  for (int i = 0; i < kDepth; ++i) {
    std::vector<Shape> one;
    one.push_back(std::move(s));
    s = Shape::Tuple(std::move(one));
  }
  std::string text = ShapeText(s, true);
  CHECK(text == std::string(kDepth, '(') + "f32[]" + std::string(kDepth, ')'));

  Literal l = Literal::ScalarInt(P::S32, 7);
  for (int i = 0; i < kDepth; ++i) {
    std::vector<Literal> one;
    one.push_back(std::move(l));
    l = Literal::MakeTuple(std::move(one));
  }
  std::string lit;
  AppendLiteral(&lit, l, false, false);
  std::string expected;
  for (int i = 0; i < kDepth; ++i) expected += "( ";
  expected += "7";
  for (int i = 0; i < kDepth; ++i) expected += " )";
  CHECK(lit == expected);

  HloSharding sh;
  for (int i = 0; i < kDepth; ++i) {
    HloSharding outer;
    outer.kind = HloSharding::Kind::kTuple;
    outer.tuple_elements.push_back(std::move(sh));
    sh = std::move(outer);
  }
  CHECK(PrintSharding(sh) == std::string(kDepth, '{') + "{replicated}" + std::string(kDepth, '}'));
}

TEST_CASE("malformed IR prints without crashing", "[printer][robustness]") {
  HloModule m("m");
  Builder e = NewComputation(m, "main", true);
  HloInstruction* p = e.Param(0, Shape::Tuple({Shape(P::F32, {})}), "p");
  // A cycle of inline get-tuple-elements (no parser makes one) must not hang the printer.
  HloInstruction* g1 = e.Add(O::kGetTupleElement, Shape(P::F32, {}), "g1", {p});
  HloInstruction* g2 = e.Add(O::kGetTupleElement, Shape(P::F32, {}), "g2", {g1});
  g1->ReplaceOperandWith(0, g2);
  g1->set_inline_gte(true);
  g2->set_inline_gte(true);
  HloInstruction* neg = e.Add(O::kNegate, Shape(P::F32, {}), "neg", {g1});
  // A while with no computations, a conditional with a missing branch, a constant without
  // a literal, and no root at all.
  HloInstruction* w = e.Add(O::kWhile, Shape(P::F32, {}), "w", {neg});
  HloInstruction* c = e.Add(O::kConstant, Shape(P::F32, {}), "c");
  (void)w;
  (void)c;
  std::string text = PrintModule(m);
  CHECK(text.find("condition=null, body=null") != std::string::npos);
  CHECK(text.find("%c = f32[] constant({...})") != std::string::npos);
  CHECK(text.find("ENTRY %main (p: (f32[])) -> () {") != std::string::npos);
}

TEST_CASE("layouts print tiles and fields in XLA's order", "[printer][shape]") {
  Shape s(P::BF16, {123, 456, 789});
  Layout l;
  l.minor_to_major = {2, 1, 0};
  l.tiles = {Tile{{2, Tile::kCombineDimension, 128}}, Tile{{2, 1}}};
  s.set_layout(l);
  CHECK(ShapeText(s, true) == "bf16[123,456,789]{2,1,0:T(2,*,128)(2,1)}");
  l.tiles.resize(1);
  l.memory_space = 1;
  l.element_size_in_bits = 4;
  l.dynamic_shape_metadata_prefix_bytes = 8;
  s.set_layout(l);
  CHECK(ShapeText(s, true) == "bf16[123,456,789]{2,1,0:T(2,*,128)E(4)S(1)M(8)}");
}

TEST_CASE("async ops whose sugar would name another opcode print unsugared", "[printer][async]") {
  // async-start wrapping an all-reduce would print as all-reduce-start(...), which is an
  // opcode of its own; XLA's printer does that, hloc's keeps the long form so it reads back.
  HloModule m("m");
  Builder sum = NewComputation(m, "sum");
  sum.comp->set_root_instruction(sum.Param(0, Shape(P::F32, {}), "a"));
  Builder w = NewComputation(m, "wrapped");
  HloInstruction* wp = w.Param(0, Shape(P::F32, {4}), "param_0");
  HloInstruction* ar = w.Add(O::kAllReduce, Shape(P::F32, {4}), "ar", {wp});
  ar->mutable_called_computations().push_back(sum.comp);
  w.comp->set_root_instruction(ar);
  Builder e = NewComputation(m, "main", true);
  HloInstruction* p = e.Param(0, Shape(P::F32, {4}), "p");
  Shape ctx = Shape::Tuple({Shape::Tuple({Shape(P::F32, {4})}), Shape(P::F32, {4})});
  HloInstruction* start = e.Add(O::kAsyncStart, ctx, "start", {p});
  start->mutable_called_computations().push_back(w.comp);
  HloInstruction* done = e.Add(O::kAsyncDone, Shape(P::F32, {4}), "done", {start});
  e.comp->set_root_instruction(done);
  std::string text = PrintModule(m, HloPrintOptions::Long());
  CHECK(text.find("async-start(f32[4]{0} %p), calls=%wrapped") != std::string::npos);
  CHECK(text.find("%wrapped (param_0: f32[4]) -> f32[4] {") != std::string::npos);
  CHECK(text.find("all-reduce-start") == std::string::npos);
}
