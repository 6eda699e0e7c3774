// Shape inference, opcode by opcode, on instructions built by hand with the IR API.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/shape_inference.h"

namespace hloc {
namespace {

using P = PrimitiveType;
using O = HloOpcode;

Shape S(PrimitiveType t, std::vector<int64_t> dims) { return Shape(t, std::move(dims)); }
Shape T(std::vector<Shape> parts) { return Shape::Tuple(std::move(parts)); }

// A module to hang hand-built instructions on.
struct Builder {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("test");
  int counter = 0;

  HloComputation* Comp(const std::string& name, bool entry = false) {
    return module->AddComputation(std::make_unique<HloComputation>(name), entry);
  }
  HloInstruction* Add(HloComputation* c, HloOpcode op, Shape shape, std::vector<HloInstruction*> operands = {}) {
    auto inst = std::make_unique<HloInstruction>(op, std::move(shape),
                                                 std::string(HloOpcodeString(op)) + "." + std::to_string(counter++));
    for (HloInstruction* o : operands) inst->AppendOperand(o);
    return c->AddInstruction(std::move(inst));
  }
  HloInstruction* Param(HloComputation* c, int64_t n, Shape shape) {
    // The number is set before AddInstruction, which files parameters by number.
    auto inst = std::make_unique<HloInstruction>(O::kParameter, std::move(shape), "p" + std::to_string(counter++));
    inst->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(inst));
  }
  // (a, b) -> op(a, b) over scalars of type t; for variadic reducers use Reducer2.
  HloComputation* Reducer(PrimitiveType t, HloOpcode op = O::kAdd) {
    HloComputation* c = Comp("reducer" + std::to_string(counter++));
    HloInstruction* a = Param(c, 0, S(t, {}));
    HloInstruction* b = Param(c, 1, S(t, {}));
    c->set_root_instruction(Add(c, op, op == O::kCompare ? S(P::PRED, {}) : S(t, {}), {a, b}));
    return c;
  }
  // A computation taking `params` and returning a fresh value of shape `result`.
  HloComputation* Signature(std::vector<Shape> params, Shape result) {
    HloComputation* c = Comp("sig" + std::to_string(counter++));
    for (size_t i = 0; i < params.size(); ++i) Param(c, i, params[i]);
    HloInstruction* r = Add(c, O::kCustomCall, std::move(result));
    c->set_root_instruction(r);
    return c;
  }
};

// The result of InferShape as text, or "error: <message>".
std::string Infer(const HloInstruction* inst) {
  absl::StatusOr<Shape> s = InferShape(*inst);
  if (!s.ok()) return "error: " + std::string(s.status().message());
  return s->ToString(false);
}
bool IsError(const HloInstruction* inst) { return !InferShape(*inst).ok(); }

TEST_CASE("shape inference: unary elementwise", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {2, 3}));
  HloInstruction* u = b.Param(c, 1, S(P::U32, {4}));
  HloInstruction* z = b.Param(c, 2, S(P::C64, {2}));
  HloInstruction* s = b.Param(c, 3, S(P::S8, {2}));
  CHECK(Infer(b.Add(c, O::kAbs, Shape(), {f})) == "f32[2,3]");
  CHECK(Infer(b.Add(c, O::kAbs, Shape(), {z})) == "f32[2]");
  CHECK(IsError(b.Add(c, O::kAbs, Shape(), {u})));
  CHECK(Infer(b.Add(c, O::kIsFinite, Shape(), {f})) == "pred[2,3]");
  CHECK(IsError(b.Add(c, O::kIsFinite, Shape(), {u})));
  CHECK(Infer(b.Add(c, O::kReal, Shape(), {z})) == "f32[2]");
  CHECK(Infer(b.Add(c, O::kImag, Shape(), {f})) == "f32[2,3]");
  CHECK(Infer(b.Add(c, O::kClz, Shape(), {u})) == "u32[4]");
  CHECK(IsError(b.Add(c, O::kClz, Shape(), {f})));
  CHECK(IsError(b.Add(c, O::kSign, Shape(), {u})));
  CHECK(Infer(b.Add(c, O::kSign, Shape(), {s})) == "s8[2]");
  CHECK(Infer(b.Add(c, O::kNot, Shape(), {u})) == "u32[4]");
  CHECK(IsError(b.Add(c, O::kNot, Shape(), {f})));
  CHECK(Infer(b.Add(c, O::kExp, Shape(), {z})) == "c64[2]");
  CHECK(IsError(b.Add(c, O::kExp, Shape(), {u})));
  CHECK(IsError(b.Add(c, O::kFloor, Shape(), {z})));
  CHECK(Infer(b.Add(c, O::kLogistic, Shape(), {f})) == "f32[2,3]");
  CHECK(Infer(b.Add(c, O::kNegate, Shape(), {s})) == "s8[2]");
  HloInstruction* t = b.Add(c, O::kTuple, T({S(P::F32, {2, 3}), S(P::U32, {4})}), {f, u});
  CHECK(Infer(b.Add(c, O::kCopy, Shape(), {t})) == "(f32[2,3], u32[4])");
  CHECK(IsError(b.Add(c, O::kNegate, Shape(), {t})));
}

TEST_CASE("shape inference: binary elementwise and compare", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f2 = b.Param(c, 0, S(P::F32, {2}));
  HloInstruction* f3 = b.Param(c, 1, S(P::F32, {3}));
  HloInstruction* fs = b.Param(c, 2, S(P::F32, {}));
  HloInstruction* i2 = b.Param(c, 3, S(P::S32, {2}));
  HloInstruction* p2 = b.Param(c, 4, S(P::PRED, {2}));
  HloInstruction* h2 = b.Param(c, 5, S(P::BF16, {2}));
  HloInstruction* f21 = b.Param(c, 6, S(P::F32, {2, 1}));
  HloInstruction* f23 = b.Param(c, 7, S(P::F32, {2, 3}));
  HloInstruction* d2 = b.Param(c, 8, S(P::F64, {2}));
  CHECK(Infer(b.Add(c, O::kAdd, Shape(), {f2, f2})) == "f32[2]");
  CHECK(Infer(b.Add(c, O::kCompare, Shape(), {f2, f2})) == "pred[2]");
  CHECK(IsError(b.Add(c, O::kAdd, Shape(), {f2, i2})));
  CHECK(IsError(b.Add(c, O::kAdd, Shape(), {f2, f3})));
  // Inference allows a scalar operand (the verifier then rejects the implicit broadcast).
  CHECK(Infer(b.Add(c, O::kMultiply, Shape(), {fs, f2})) == "f32[2]");
  CHECK(Infer(b.Add(c, O::kAdd, Shape(), {f21, f23})) == "f32[2,3]");
  CHECK(IsError(b.Add(c, O::kAdd, Shape(), {f2, f23})));
  CHECK(IsError(b.Add(c, O::kSubtract, Shape(), {p2, p2})));
  CHECK(Infer(b.Add(c, O::kAnd, Shape(), {p2, p2})) == "pred[2]");
  CHECK(IsError(b.Add(c, O::kOr, Shape(), {f2, f2})));
  CHECK(Infer(b.Add(c, O::kShiftLeft, Shape(), {i2, i2})) == "s32[2]");
  CHECK(IsError(b.Add(c, O::kAtan2, Shape(), {i2, i2})));
  CHECK(Infer(b.Add(c, O::kComplex, Shape(), {f2, f2})) == "c64[2]");
  CHECK(Infer(b.Add(c, O::kComplex, Shape(), {d2, d2})) == "c128[2]");
  CHECK(IsError(b.Add(c, O::kComplex, Shape(), {i2, i2})));
  // Mixed float precision: the higher-precision type wins.
  CHECK(Infer(b.Add(c, O::kAdd, Shape(), {h2, f2})) == "f32[2]");
  CHECK(Infer(b.Add(c, O::kPower, Shape(), {h2, h2})) == "bf16[2]");
  CHECK(Infer(b.Add(c, O::kRemainder, Shape(), {i2, i2})) == "s32[2]");
}

TEST_CASE("shape inference: select, clamp, map", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* p = b.Param(c, 0, S(P::PRED, {}));
  HloInstruction* p3 = b.Param(c, 1, S(P::PRED, {3}));
  HloInstruction* f3 = b.Param(c, 2, S(P::F32, {3}));
  HloInstruction* f4 = b.Param(c, 3, S(P::F32, {4}));
  HloInstruction* fs = b.Param(c, 4, S(P::F32, {}));
  CHECK(Infer(b.Add(c, O::kSelect, Shape(), {p, f3, f3})) == "f32[3]");
  CHECK(Infer(b.Add(c, O::kSelect, Shape(), {p3, f3, f3})) == "f32[3]");
  CHECK(IsError(b.Add(c, O::kSelect, Shape(), {p3, f4, f4})));
  CHECK(IsError(b.Add(c, O::kSelect, Shape(), {f3, f3, f3})));
  CHECK(IsError(b.Add(c, O::kSelect, Shape(), {p, f3, f4})));
  CHECK(Infer(b.Add(c, O::kClamp, Shape(), {fs, f3, fs})) == "f32[3]");
  CHECK(Infer(b.Add(c, O::kClamp, Shape(), {f3, f3, f3})) == "f32[3]");
  CHECK(IsError(b.Add(c, O::kClamp, Shape(), {f4, f3, fs})));
  HloInstruction* map = b.Add(c, O::kMap, Shape(), {f3, f3});
  map->mutable_called_computations().push_back(b.Reducer(P::F32, O::kMaximum));
  CHECK(Infer(map) == "f32[3]");
  HloInstruction* bad_map = b.Add(c, O::kMap, Shape(), {f3});
  bad_map->mutable_called_computations().push_back(b.Reducer(P::F32));
  CHECK(IsError(bad_map));  // arity 2 computation, one argument
}

TEST_CASE("shape inference: converts and reduce-precision", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {2}));
  HloInstruction* u8 = b.Param(c, 1, S(P::U8, {2, 4}));
  HloInstruction* u83 = b.Param(c, 2, S(P::U8, {2, 3}));
  HloInstruction* z = b.Param(c, 3, S(P::C64, {2}));
  HloInstruction* r = b.Param(c, 4, S(P::U32, {2}));
  CHECK(Infer(b.Add(c, O::kConvert, S(P::S32, {7}), {f})) == "s32[2]");
  CHECK(Infer(b.Add(c, O::kBitcastConvert, S(P::U8, {}), {f})) == "u8[2,4]");
  CHECK(Infer(b.Add(c, O::kBitcastConvert, S(P::F32, {}), {u8})) == "f32[2]");
  CHECK(IsError(b.Add(c, O::kBitcastConvert, S(P::F32, {}), {u83})));
  CHECK(IsError(b.Add(c, O::kBitcastConvert, S(P::F32, {}), {z})));
  CHECK(Infer(b.Add(c, O::kBitcastConvert, S(P::S32, {}), {f})) == "s32[2]");
  CHECK(Infer(b.Add(c, O::kStochasticConvert, S(P::BF16, {2}), {f, r})) == "bf16[2]");
  CHECK(IsError(b.Add(c, O::kStochasticConvert, S(P::BF16, {2}), {f, f})));
  HloInstruction* rp = b.Add(c, O::kReducePrecision, Shape(), {f});
  rp->mutable_attrs().exponent_bits = 5;
  rp->mutable_attrs().mantissa_bits = 2;
  CHECK(Infer(rp) == "f32[2]");
  rp->mutable_attrs().exponent_bits = 0;
  CHECK(IsError(rp));
}

TEST_CASE("shape inference: broadcast, reshape, transpose, reverse, iota, bitcast", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f3 = b.Param(c, 0, S(P::F32, {3}));
  HloInstruction* f23 = b.Param(c, 1, S(P::F32, {2, 3}));
  HloInstruction* bc = b.Add(c, O::kBroadcast, S(P::F32, {2, 3}), {f3});
  bc->mutable_attrs().dimensions = {1};
  CHECK(Infer(bc) == "f32[2,3]");
  bc->mutable_attrs().dimensions = {0};
  CHECK(IsError(bc));  // operand size 3 onto result dimension of size 2
  bc->mutable_attrs().dimensions = {2};
  CHECK(IsError(bc));
  bc->mutable_attrs().dimensions = {};
  CHECK(IsError(bc));
  HloInstruction* bc2 = b.Add(c, O::kBroadcast, S(P::S32, {2, 3}), {f3});
  bc2->mutable_attrs().dimensions = {1};
  CHECK(IsError(bc2));  // a broadcast never converts
  CHECK(Infer(b.Add(c, O::kReshape, S(P::F32, {6}), {f23})) == "f32[6]");
  CHECK(IsError(b.Add(c, O::kReshape, S(P::F32, {5}), {f23})));
  CHECK(IsError(b.Add(c, O::kReshape, S(P::S32, {6}), {f23})));
  HloInstruction* tr = b.Add(c, O::kTranspose, Shape(), {f23});
  tr->mutable_attrs().dimensions = {1, 0};
  CHECK(Infer(tr) == "f32[3,2]");
  tr->mutable_attrs().dimensions = {0, 0};
  CHECK(IsError(tr));
  HloInstruction* rev = b.Add(c, O::kReverse, Shape(), {f23});
  rev->mutable_attrs().dimensions = {1};
  CHECK(Infer(rev) == "f32[2,3]");
  rev->mutable_attrs().dimensions = {1, 1};
  CHECK(IsError(rev));
  HloInstruction* iota = b.Add(c, O::kIota, S(P::S32, {4, 5}));
  iota->mutable_attrs().iota_dimension = 1;
  CHECK(Infer(iota) == "s32[4,5]");
  iota->mutable_attrs().iota_dimension = 2;
  CHECK(IsError(iota));
  CHECK(IsError(b.Add(c, O::kIota, S(P::S32, {}))));
  CHECK(IsError(b.Add(c, O::kIota, S(P::PRED, {3}))));
  CHECK(Infer(b.Add(c, O::kBitcast, S(P::S32, {3, 2}), {f23})) == "s32[3,2]");
  CHECK(IsError(b.Add(c, O::kBitcast, S(P::F64, {6}), {f23})));  // 24 bytes vs 48
  HloInstruction* dr_size = b.Param(c, 2, S(P::S32, {}));
  CHECK(Infer(b.Add(c, O::kDynamicReshape, S(P::F32, {6}), {f23, dr_size})) == "f32[6]");
  CHECK(IsError(b.Add(c, O::kDynamicReshape, S(P::F32, {6}), {f23})));
}

TEST_CASE("shape inference: slice, concatenate, pad, dynamic slices", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f6 = b.Param(c, 0, S(P::F32, {6, 4}));
  HloInstruction* f5 = b.Param(c, 1, S(P::F32, {5}));
  HloInstruction* zero = b.Param(c, 2, S(P::F32, {}));
  HloInstruction* i = b.Param(c, 3, S(P::S32, {}));
  HloInstruction* f2 = b.Param(c, 4, S(P::F32, {2, 4}));
  HloInstruction* sl = b.Add(c, O::kSlice, Shape(), {f6});
  sl->mutable_attrs().slice = {{1, 6, 2}, {0, 4, 1}};
  CHECK(Infer(sl) == "f32[3,4]");
  sl->mutable_attrs().slice = {{1, 7, 1}, {0, 4, 1}};
  CHECK(IsError(sl));
  sl->mutable_attrs().slice = {{1, 5, 0}, {0, 4, 1}};
  CHECK(IsError(sl));
  sl->mutable_attrs().slice = {{3, 2, 1}, {0, 4, 1}};
  CHECK(IsError(sl));
  HloInstruction* cat = b.Add(c, O::kConcatenate, Shape(), {f6, f2, f6});
  cat->mutable_attrs().dimensions = {0};
  CHECK(Infer(cat) == "f32[14,4]");
  cat->mutable_attrs().dimensions = {1};
  CHECK(IsError(cat));
  HloInstruction* pad = b.Add(c, O::kPad, Shape(), {f5, zero});
  pad->mutable_attrs().padding_config = PaddingConfig{{{-1, 2, 1}}};
  CHECK(Infer(pad) == "f32[10]");  // 5 - 1 + 2 + 4 interior
  pad->mutable_attrs().padding_config = PaddingConfig{{{-4, -2, 0}}};
  CHECK(IsError(pad));  // negative size
  pad->mutable_attrs().padding_config = PaddingConfig{{{0, 0, -1}}};
  CHECK(IsError(pad));
  HloInstruction* ds = b.Add(c, O::kDynamicSlice, Shape(), {f6, i, i});
  ds->mutable_attrs().dynamic_slice_sizes = {2, 4};
  CHECK(Infer(ds) == "f32[2,4]");
  ds->mutable_attrs().dynamic_slice_sizes = {7, 4};
  CHECK(IsError(ds));
  HloInstruction* ds_few = b.Add(c, O::kDynamicSlice, Shape(), {f6, i});
  ds_few->mutable_attrs().dynamic_slice_sizes = {2, 4};
  CHECK(IsError(ds_few));
  CHECK(Infer(b.Add(c, O::kDynamicUpdateSlice, Shape(), {f6, f2, i, i})) == "f32[6,4]");
  CHECK(IsError(b.Add(c, O::kDynamicUpdateSlice, Shape(), {f2, f6, i, i})));
  HloInstruction* vec = b.Param(c, 5, S(P::S32, {2}));
  CHECK(Infer(b.Add(c, O::kDynamicUpdateSlice, Shape(), {f6, f2, vec})) == "f32[6,4]");
}

TEST_CASE("shape inference: gather and scatter", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* operand = b.Param(c, 0, S(P::F32, {3, 3}));
  HloInstruction* indices = b.Param(c, 1, S(P::S32, {2}));
  HloInstruction* updates = b.Param(c, 2, S(P::F32, {2, 3}));
  HloInstruction* g = b.Add(c, O::kGather, Shape(), {operand, indices});
  GatherDimensionNumbers gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  gd.index_vector_dim = 1;
  g->mutable_attrs().gather_dimension_numbers = gd;
  g->mutable_attrs().dynamic_slice_sizes = {1, 3};
  CHECK(Infer(g) == "f32[2,3]");
  g->mutable_attrs().dynamic_slice_sizes = {2, 3};
  CHECK(IsError(g));  // a collapsed dimension must have slice size 1
  HloInstruction* sc = b.Add(c, O::kScatter, Shape(), {operand, indices, updates});
  ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  sc->mutable_attrs().scatter_dimension_numbers = sd;
  sc->mutable_called_computations().push_back(b.Reducer(P::F32));
  CHECK(Infer(sc) == "f32[3,3]");
  sc->mutable_called_computations()[0] = b.Reducer(P::S32);
  CHECK(IsError(sc));
  HloInstruction* sc_bad = b.Add(c, O::kScatter, Shape(), {operand, indices});
  sc_bad->mutable_attrs().scatter_dimension_numbers = sd;
  sc_bad->mutable_called_computations().push_back(b.Reducer(P::F32));
  CHECK(IsError(sc_bad));
}

TEST_CASE("shape inference: dot, ragged-dot, convolution", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* a = b.Param(c, 0, S(P::BF16, {5, 2, 3}));
  HloInstruction* m = b.Param(c, 1, S(P::BF16, {5, 3, 4}));
  HloInstruction* dot = b.Add(c, O::kDot, S(P::F32, {}), {a, m});
  DotDimensionNumbers dd;
  dd.lhs_batch_dimensions = {0};
  dd.rhs_batch_dimensions = {0};
  dd.lhs_contracting_dimensions = {2};
  dd.rhs_contracting_dimensions = {1};
  dot->mutable_attrs().dot_dimension_numbers = dd;
  CHECK(Infer(dot) == "f32[5,2,4]");  // the instruction's type is the preferred element type
  dd.rhs_contracting_dimensions = {2};
  dot->mutable_attrs().dot_dimension_numbers = dd;
  CHECK(IsError(dot));
  dd.rhs_contracting_dimensions = {7};
  dot->mutable_attrs().dot_dimension_numbers = dd;
  CHECK(IsError(dot));
  // No shape yet (a parser inferring it): the operands' type.
  HloInstruction* dot2 = b.Add(c, O::kDot, Shape(), {a, m});
  dd.rhs_contracting_dimensions = {1};
  dot2->mutable_attrs().dot_dimension_numbers = dd;
  CHECK(Infer(dot2) == "bf16[5,2,4]");

  HloInstruction* lhs = b.Param(c, 2, S(P::F32, {11, 5}));
  HloInstruction* rhs = b.Param(c, 3, S(P::F32, {3, 5, 7}));
  HloInstruction* groups = b.Param(c, 4, S(P::S64, {3}));
  HloInstruction* rd = b.Add(c, O::kRaggedDot, S(P::F32, {}), {lhs, rhs, groups});
  RaggedDotDimensionNumbers rdn;
  rdn.dot_dimension_numbers.lhs_contracting_dimensions = {1};
  rdn.dot_dimension_numbers.rhs_contracting_dimensions = {1};
  rdn.lhs_ragged_dimensions = {0};
  rdn.rhs_group_dimensions = {0};
  rd->mutable_attrs().ragged_dot_dimension_numbers = rdn;
  CHECK(Infer(rd) == "f32[11,7]");
  rdn.rhs_group_dimensions = {};
  rd->mutable_attrs().ragged_dot_dimension_numbers = rdn;
  CHECK(IsError(rd));

  HloInstruction* in = b.Param(c, 5, S(P::F32, {1, 4, 4, 6}));
  HloInstruction* k = b.Param(c, 6, S(P::F32, {2, 2, 3, 8}));
  HloInstruction* conv = b.Add(c, O::kConvolution, S(P::F32, {}), {in, k});
  ConvolutionDimensionNumbers cd;  // b01f_01io->b01f
  cd.input_batch_dimension = 0;
  cd.input_feature_dimension = 3;
  cd.input_spatial_dimensions = {1, 2};
  cd.kernel_input_feature_dimension = 2;
  cd.kernel_output_feature_dimension = 3;
  cd.kernel_spatial_dimensions = {0, 1};
  cd.output_batch_dimension = 0;
  cd.output_feature_dimension = 3;
  cd.output_spatial_dimensions = {1, 2};
  conv->mutable_attrs().convolution_dimension_numbers = cd;
  Window w;
  w.dimensions = {WindowDimension{2, 2, 1, 1}, WindowDimension{2, 2, 1, 1}};
  conv->mutable_attrs().window = w;
  conv->mutable_attrs().feature_group_count = 2;
  CHECK(Infer(conv) == "f32[1,3,3,8]");
  conv->mutable_attrs().feature_group_count = 1;
  CHECK(IsError(conv));  // 6 input features against 3 kernel input features
  conv->mutable_attrs().feature_group_count = 2;
  w.dimensions[0].size = 3;
  conv->mutable_attrs().window = w;
  CHECK(IsError(conv));  // window size disagrees with the kernel
}

TEST_CASE("shape inference: reduce, reduce-window, select-and-scatter, scan", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {2, 3}));
  HloInstruction* i = b.Param(c, 1, S(P::S32, {2, 3}));
  HloInstruction* f0 = b.Param(c, 2, S(P::F32, {}));
  HloInstruction* i0 = b.Param(c, 3, S(P::S32, {}));
  HloInstruction* red = b.Add(c, O::kReduce, Shape(), {f, f0});
  red->mutable_attrs().dimensions = {1};
  red->mutable_called_computations().push_back(b.Reducer(P::F32));
  CHECK(Infer(red) == "f32[2]");
  red->mutable_attrs().dimensions = {2};
  CHECK(IsError(red));
  HloInstruction* var = b.Add(c, O::kReduce, Shape(), {f, i, f0, i0});
  var->mutable_attrs().dimensions = {0};
  var->mutable_called_computations().push_back(
      b.Signature({S(P::F32, {}), S(P::S32, {}), S(P::F32, {}), S(P::S32, {})}, T({S(P::F32, {}), S(P::S32, {})})));
  CHECK(Infer(var) == "(f32[3], s32[3])");
  var->mutable_called_computations()[0] = b.Reducer(P::F32);
  CHECK(IsError(var));

  HloInstruction* x = b.Param(c, 4, S(P::F32, {4, 4}));
  HloInstruction* rw = b.Add(c, O::kReduceWindow, Shape(), {x, f0});
  Window w;
  w.dimensions = {WindowDimension{2, 2}, WindowDimension{2, 2}};
  rw->mutable_attrs().window = w;
  rw->mutable_called_computations().push_back(b.Reducer(P::F32, O::kMaximum));
  CHECK(Infer(rw) == "f32[2,2]");
  w.dimensions[1].base_dilation = 2;  // 7 positions, window 2, stride 2 -> 3
  rw->mutable_attrs().window = w;
  CHECK(Infer(rw) == "f32[2,3]");

  HloInstruction* src = b.Param(c, 5, S(P::F32, {2, 2}));
  HloInstruction* sas = b.Add(c, O::kSelectAndScatter, Shape(), {x, src, f0});
  w.dimensions[1].base_dilation = 1;
  sas->mutable_attrs().window = w;
  sas->mutable_called_computations().push_back(b.Reducer(P::F32, O::kCompare));
  sas->mutable_called_computations().push_back(b.Reducer(P::F32));
  CHECK(Infer(sas) == "f32[4,4]");
  sas->mutable_called_computations()[0] = b.Reducer(P::F32);  // select must return pred
  CHECK(IsError(sas));

  // JAX's cumsum: scan along dimension 1 with one carry per row.
  HloInstruction* in = b.Param(c, 6, S(P::F32, {6, 40}));
  HloInstruction* init = b.Param(c, 7, S(P::F32, {6}));
  HloInstruction* scan = b.Add(c, O::kScan, Shape(), {in, init});
  scan->mutable_attrs().dimensions = {1};
  scan->mutable_attrs().num_carries = 1;
  scan->mutable_called_computations().push_back(
      b.Signature({S(P::F32, {6}), S(P::F32, {6})}, T({S(P::F32, {6}), S(P::F32, {6})})));
  CHECK(Infer(scan) == "(f32[6,40], f32[6])");
  scan->mutable_attrs().num_carries = 0;
  CHECK(IsError(scan));
}

TEST_CASE("shape inference: sort, topk, fft, linear algebra, batch norm", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* keys = b.Param(c, 0, S(P::F32, {5, 10}));
  HloInstruction* vals = b.Param(c, 1, S(P::S32, {5, 10}));
  HloInstruction* sort = b.Add(c, O::kSort, Shape(), {keys, vals});
  sort->mutable_attrs().dimensions = {1};
  sort->mutable_called_computations().push_back(
      b.Signature({S(P::F32, {}), S(P::F32, {}), S(P::S32, {}), S(P::S32, {})}, S(P::PRED, {})));
  CHECK(Infer(sort) == "(f32[5,10], s32[5,10])");
  sort->mutable_called_computations()[0] = b.Reducer(P::F32, O::kCompare);
  CHECK(IsError(sort));  // two operands need four comparator parameters
  HloInstruction* topk = b.Add(c, O::kTopK, Shape(), {keys});
  topk->mutable_attrs().k = 3;
  CHECK(Infer(topk) == "(f32[5,3], s32[5,3])");
  topk->mutable_attrs().k = 11;
  CHECK(IsError(topk));

  HloInstruction* real = b.Param(c, 2, S(P::F32, {4, 8}));
  HloInstruction* rfft = b.Add(c, O::kFft, Shape(), {real});
  rfft->mutable_attrs().fft_type = FftType::kRfft;
  rfft->mutable_attrs().fft_length = {8};
  CHECK(Infer(rfft) == "c64[4,5]");
  HloInstruction* cplx = b.Param(c, 3, S(P::C64, {4, 5}));
  HloInstruction* irfft = b.Add(c, O::kFft, Shape(), {cplx});
  irfft->mutable_attrs().fft_type = FftType::kIrfft;
  irfft->mutable_attrs().fft_length = {8};
  CHECK(Infer(irfft) == "f32[4,8]");
  irfft->mutable_attrs().fft_length = {9};
  CHECK(Infer(irfft) == "f32[4,9]");
  irfft->mutable_attrs().fft_length = {12};
  CHECK(IsError(irfft));

  HloInstruction* a = b.Param(c, 4, S(P::F32, {2, 3, 3}));
  HloInstruction* rhs = b.Param(c, 5, S(P::F32, {2, 3, 4}));
  CHECK(Infer(b.Add(c, O::kCholesky, Shape(), {a})) == "f32[2,3,3]");
  CHECK(IsError(b.Add(c, O::kCholesky, Shape(), {rhs})));
  HloInstruction* ts = b.Add(c, O::kTriangularSolve, Shape(), {a, rhs});
  ts->mutable_attrs().left_side = true;
  CHECK(Infer(ts) == "f32[2,3,4]");
  ts->mutable_attrs().left_side = false;
  CHECK(IsError(ts));

  HloInstruction* x = b.Param(c, 6, S(P::F32, {8, 4, 4, 16}));
  HloInstruction* scale = b.Param(c, 7, S(P::F32, {16}));
  HloInstruction* bn = b.Add(c, O::kBatchNormTraining, Shape(), {x, scale, scale});
  bn->mutable_attrs().feature_index = 3;
  CHECK(Infer(bn) == "(f32[8,4,4,16], f32[16], f32[16])");
  bn->mutable_attrs().feature_index = 1;
  CHECK(IsError(bn));
  HloInstruction* bni = b.Add(c, O::kBatchNormInference, Shape(), {x, scale, scale, scale, scale});
  bni->mutable_attrs().feature_index = 3;
  CHECK(Infer(bni) == "f32[8,4,4,16]");
  HloInstruction* bng = b.Add(c, O::kBatchNormGrad, Shape(), {x, scale, scale, scale, x});
  bng->mutable_attrs().feature_index = 3;
  CHECK(Infer(bng) == "(f32[8,4,4,16], f32[16], f32[16])");
}

TEST_CASE("shape inference: tuples and control flow", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {2}));
  HloInstruction* pred = b.Param(c, 1, S(P::PRED, {}));
  HloInstruction* idx = b.Param(c, 2, S(P::S32, {}));
  HloInstruction* t = b.Add(c, O::kTuple, T({S(P::F32, {2}), S(P::PRED, {})}), {f, pred});
  CHECK(Infer(t) == "(f32[2], pred[])");
  HloInstruction* gte = b.Add(c, O::kGetTupleElement, Shape(), {t});
  gte->mutable_attrs().tuple_index = 1;
  CHECK(Infer(gte) == "pred[]");
  gte->mutable_attrs().tuple_index = 2;
  CHECK(IsError(gte));
  CHECK(IsError(b.Add(c, O::kGetTupleElement, Shape(), {f})));

  Shape loop = T({S(P::F32, {2}), S(P::PRED, {})});
  HloInstruction* w = b.Add(c, O::kWhile, Shape(), {t});
  w->mutable_called_computations() = {b.Signature({loop}, S(P::PRED, {})), b.Signature({loop}, loop)};
  CHECK(Infer(w) == "(f32[2], pred[])");
  w->mutable_called_computations()[0] = b.Signature({loop}, S(P::S32, {}));
  CHECK(IsError(w));
  w->mutable_called_computations() = {b.Signature({loop}, S(P::PRED, {})), b.Signature({loop}, S(P::F32, {2}))};
  CHECK(IsError(w));

  HloInstruction* cond = b.Add(c, O::kConditional, Shape(), {pred, f, t});
  cond->mutable_called_computations() = {b.Signature({S(P::F32, {2})}, S(P::S32, {})),
                                         b.Signature({loop}, S(P::S32, {}))};
  CHECK(Infer(cond) == "s32[]");
  cond->mutable_called_computations()[1] = b.Signature({loop}, S(P::F32, {}));
  CHECK(IsError(cond));
  HloInstruction* indexed = b.Add(c, O::kConditional, Shape(), {idx, f, f, f});
  indexed->mutable_called_computations() = {b.Signature({S(P::F32, {2})}, S(P::F32, {})),
                                            b.Signature({S(P::F32, {2})}, S(P::F32, {})),
                                            b.Signature({S(P::F32, {2})}, S(P::F32, {}))};
  CHECK(Infer(indexed) == "f32[]");
  HloInstruction* bad_index = b.Add(c, O::kConditional, Shape(), {f, f});
  bad_index->mutable_called_computations() = {b.Signature({S(P::F32, {2})}, S(P::F32, {}))};
  CHECK(IsError(bad_index));

  HloInstruction* call = b.Add(c, O::kCall, Shape(), {f, pred});
  call->mutable_called_computations() = {b.Signature({S(P::F32, {2}), S(P::PRED, {})}, S(P::U8, {9}))};
  CHECK(Infer(call) == "u8[9]");
  call->mutable_called_computations() = {b.Signature({S(P::F32, {2})}, S(P::U8, {9}))};
  CHECK(IsError(call));

  HloComputation* fused = b.Signature({S(P::F32, {2})}, S(P::F32, {7}));
  HloInstruction* fusion = b.Add(c, O::kFusion, Shape(), {f});
  fusion->mutable_called_computations() = {fused};
  fused->SetFusionInstruction(fusion);
  CHECK(Infer(fusion) == "f32[7]");
  HloInstruction* bad_fusion = b.Add(c, O::kFusion, Shape(), {pred});
  bad_fusion->mutable_called_computations() = {b.Signature({S(P::F32, {2})}, S(P::F32, {7}))};
  CHECK(IsError(bad_fusion));

  HloInstruction* cc = b.Add(c, O::kCustomCall, S(P::S8, {3, 3}), {f});
  CHECK(Infer(cc) == "s8[3,3]");
  cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{S(P::F32, {2}), S(P::F32, {2})};
  CHECK(IsError(cc));
  cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{S(P::F32, {3})};
  CHECK(IsError(cc));
  cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{S(P::F32, {2})};
  CHECK(Infer(cc) == "s8[3,3]");
}

TEST_CASE("shape inference: async wrappers, copies, tokens, host transfer", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {10}));
  HloComputation* wrapped = b.Signature({S(P::F32, {10})}, S(P::F32, {20}));
  Shape async = T({T({S(P::F32, {10})}), S(P::F32, {20}), S(P::S32, {})});
  HloInstruction* start = b.Add(c, O::kAsyncStart, async, {f});
  start->mutable_called_computations() = {wrapped};
  CHECK(Infer(start) == "((f32[10]), f32[20], s32[])");
  HloInstruction* update = b.Add(c, O::kAsyncUpdate, async, {start});
  CHECK(Infer(update) == "((f32[10]), f32[20], s32[])");
  HloInstruction* done = b.Add(c, O::kAsyncDone, S(P::F32, {20}), {update});
  CHECK(Infer(done) == "f32[20]");
  HloInstruction* bad_start = b.Add(c, O::kAsyncStart, T({T({S(P::F32, {10})})}), {f});
  bad_start->mutable_called_computations() = {wrapped};
  CHECK(IsError(bad_start));  // ((operands)) alone: no result element
  CHECK(IsError(b.Add(c, O::kAsyncDone, S(P::F32, {20}), {f})));

  CHECK(Infer(b.Add(c, O::kCopyStart, Shape(), {f})) == "(f32[10], f32[10], u32[])");
  HloInstruction* cs = b.Add(c, O::kCopyStart, Shape(), {f});
  cs->mutable_shape() = T({S(P::F32, {10}), S(P::F32, {10}), S(P::U32, {})});
  CHECK(Infer(b.Add(c, O::kCopyDone, Shape(), {cs})) == "f32[10]");

  HloInstruction* tok = b.Add(c, O::kAfterAll, Shape::Token());
  CHECK(Infer(tok) == "token[]");
  CHECK(Infer(b.Add(c, O::kAddDependency, Shape(), {f, tok})) == "f32[10]");
  CHECK(IsError(b.Add(c, O::kAddDependency, Shape(), {f, f})));
  CHECK(Infer(b.Add(c, O::kInfeed, T({S(P::S32, {3}), Shape::Token()}), {tok})) == "(s32[3], token[])");
  CHECK(IsError(b.Add(c, O::kInfeed, S(P::PRED, {}), {tok})));
  CHECK(Infer(b.Add(c, O::kOutfeed, Shape::Token(), {f, tok})) == "token[]");
  HloInstruction* send = b.Add(c, O::kSend, Shape(), {f, tok});
  CHECK(Infer(send) == "(f32[10], u32[], token[])");
  CHECK(Infer(b.Add(c, O::kSendDone, Shape(), {send})) == "token[]");
  HloInstruction* recv = b.Add(c, O::kRecv, T({S(P::F32, {4}), S(P::U32, {}), Shape::Token()}), {tok});
  CHECK(Infer(recv) == "(f32[4], u32[], token[])");
  CHECK(Infer(b.Add(c, O::kRecvDone, Shape(), {recv})) == "(f32[4], token[])");

  HloInstruction* state = b.Param(c, 1, S(P::U64, {2}));
  CHECK(Infer(b.Add(c, O::kRngBitGenerator, T({S(P::U64, {2}), S(P::U32, {8})}), {state})) ==
        "(u64[2], u32[8])");
  CHECK(IsError(b.Add(c, O::kRngBitGenerator, T({S(P::U64, {3}), S(P::U32, {8})}), {state})));
  CHECK(Infer(b.Add(c, O::kRngGetAndUpdateState, S(P::U64, {2}))) == "u64[2]");
  HloInstruction* lo = b.Param(c, 2, S(P::F32, {}));
  CHECK(Infer(b.Add(c, O::kRng, S(P::F32, {3, 3}), {lo, lo})) == "f32[3,3]");
  CHECK(IsError(b.Add(c, O::kRng, S(P::F32, {3, 3}), {f, f})));
  HloInstruction* gds = b.Add(c, O::kGetDimensionSize, Shape(), {f});
  gds->mutable_attrs().dimensions = {0};
  CHECK(Infer(gds) == "s32[]");
  gds->mutable_attrs().dimensions = {1};
  CHECK(IsError(gds));
  HloInstruction* n = b.Param(c, 3, S(P::S32, {}));
  HloInstruction* sds = b.Add(c, O::kSetDimensionSize, Shape(), {f, n});
  sds->mutable_attrs().dimensions = {0};
  CHECK(Infer(sds) == "f32[<=10]");
  CHECK(Infer(b.Add(c, O::kPartitionId, Shape())) == "u32[]");
  CHECK(Infer(b.Add(c, O::kReplicaId, Shape())) == "u32[]");
}

TEST_CASE("shape inference: collectives", "[shape_inference]") {
  Builder b;
  b.module->config().replica_count = 2;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {4, 6}));
  HloInstruction* ar = b.Add(c, O::kAllReduce, Shape(), {f});
  ar->mutable_called_computations() = {b.Reducer(P::F32)};
  CHECK(Infer(ar) == "f32[4,6]");
  ar->mutable_attrs().replica_groups.groups = {{0, 2}};
  CHECK(IsError(ar));  // replica 1 is never named
  ar->mutable_attrs().replica_groups.groups = {{0}, {1}};
  CHECK(Infer(ar) == "f32[4,6]");
  ar->mutable_called_computations() = {b.Reducer(P::S32)};
  CHECK(IsError(ar));

  HloInstruction* ag = b.Add(c, O::kAllGather, S(P::F32, {8, 6}), {f});
  ag->mutable_attrs().dimensions = {0};
  CHECK(Infer(ag) == "f32[8,6]");
  ag->mutable_shape() = S(P::F32, {12, 6});
  CHECK(IsError(ag));  // three shards for two replicas
  HloInstruction* ags = b.Add(c, O::kAllGatherStart, T({S(P::F32, {4, 6}), S(P::F32, {4, 12})}), {f});
  ags->mutable_attrs().dimensions = {1};
  CHECK(Infer(ags) == "(f32[4,6], f32[4,12])");
  CHECK(Infer(b.Add(c, O::kAllGatherDone, Shape(), {ags})) == "f32[4,12]");

  HloInstruction* rs = b.Add(c, O::kReduceScatter, S(P::F32, {2, 6}), {f});
  rs->mutable_attrs().dimensions = {0};
  rs->mutable_called_computations() = {b.Reducer(P::F32)};
  CHECK(Infer(rs) == "f32[2,6]");

  HloInstruction* a2a = b.Add(c, O::kAllToAll, Shape(), {f});
  a2a->mutable_attrs().dimensions = {1};
  CHECK(Infer(a2a) == "f32[4,6]");
  HloInstruction* a2a_tuple = b.Add(c, O::kAllToAll, Shape(), {f, f});
  CHECK(Infer(a2a_tuple) == "(f32[4,6], f32[4,6])");
  HloInstruction* a2a_bad = b.Add(c, O::kAllToAll, Shape(), {f, f, f});
  CHECK(IsError(a2a_bad));

  HloInstruction* cp = b.Add(c, O::kCollectivePermute, Shape(), {f});
  cp->mutable_attrs().source_target_pairs = {{0, 1}, {1, 0}};
  CHECK(Infer(cp) == "f32[4,6]");
  cp->mutable_attrs().source_target_pairs = {{0, 1}, {0, 0}};
  CHECK(IsError(cp));  // source 0 used twice
  HloInstruction* cps =
      b.Add(c, O::kCollectivePermuteStart, T({S(P::F32, {4, 6}), S(P::F32, {4, 6}), S(P::U32, {}), S(P::U32, {})}), {f});
  CHECK(Infer(cps) == "(f32[4,6], f32[4,6], u32[], u32[])");
  CHECK(Infer(b.Add(c, O::kCollectivePermuteDone, Shape(), {cps})) == "f32[4,6]");
  CHECK(Infer(b.Add(c, O::kCollectiveBroadcast, Shape(), {f})) == "f32[4,6]");
}

TEST_CASE("shape inference: variadic reduce-window, scatter and all-gather", "[shape_inference]") {
  Builder b;
  b.module->config().replica_count = 2;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {4, 4}));
  HloInstruction* i = b.Param(c, 1, S(P::S32, {4, 4}));
  HloInstruction* f0 = b.Param(c, 2, S(P::F32, {}));
  HloInstruction* i0 = b.Param(c, 3, S(P::S32, {}));
  HloComputation* pair = b.Signature({S(P::F32, {}), S(P::S32, {}), S(P::F32, {}), S(P::S32, {})},
                                     T({S(P::F32, {}), S(P::S32, {})}));
  HloInstruction* rw = b.Add(c, O::kReduceWindow, Shape(), {f, i, f0, i0});
  Window w;
  w.dimensions = {WindowDimension{3, 1, 1, 1}, WindowDimension{1, 1}};
  rw->mutable_attrs().window = w;
  rw->mutable_called_computations() = {pair};
  CHECK(Infer(rw) == "(f32[4,4], s32[4,4])");
  HloInstruction* idx = b.Param(c, 4, S(P::S32, {2, 1}));
  HloInstruction* upd_f = b.Param(c, 5, S(P::F32, {2, 4}));
  HloInstruction* upd_i = b.Param(c, 6, S(P::S32, {2, 4}));
  HloInstruction* sc = b.Add(c, O::kScatter, Shape(), {f, i, idx, upd_f, upd_i});
  ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  sc->mutable_attrs().scatter_dimension_numbers = sd;
  sc->mutable_called_computations() = {pair};
  CHECK(Infer(sc) == "(f32[4,4], s32[4,4])");
  HloInstruction* ag = b.Add(c, O::kAllGather, T({S(P::F32, {8, 4}), S(P::S32, {8, 4})}), {f, i});
  ag->mutable_attrs().dimensions = {0};
  CHECK(Infer(ag) == "(f32[8,4], s32[8,4])");
}

TEST_CASE("shape inference: bad operand counts and missing computations are errors", "[shape_inference]") {
  Builder b;
  HloComputation* c = b.Comp("c", true);
  HloInstruction* f = b.Param(c, 0, S(P::F32, {2}));
  CHECK(IsError(b.Add(c, O::kAdd, Shape(), {f})));
  CHECK(IsError(b.Add(c, O::kNegate, Shape(), {f, f})));
  CHECK(IsError(b.Add(c, O::kReduce, Shape(), {f, f})));   // no to_apply
  CHECK(IsError(b.Add(c, O::kWhile, Shape(), {f})));       // no condition/body
  CHECK(IsError(b.Add(c, O::kCall, Shape(), {f})));
  CHECK(IsError(b.Add(c, O::kConstant, S(P::F32, {}))));  // no literal
  HloInstruction* k = b.Add(c, O::kConstant, S(P::F32, {}));
  k->mutable_attrs().literal = Literal::ScalarDouble(P::F32, 1.5);
  CHECK(Infer(k) == "f32[]");
}

TEST_CASE("shape comparisons follow XLA's ShapeUtil", "[shape_inference]") {
  Shape a = S(P::F32, {2, 3});
  Shape b = S(P::F32, {2, 3});
  b.mutable_layout().minor_to_major = {0, 1};
  Shape dyn = a;
  dyn.mutable_dynamic_dimensions() = {true, false};
  CHECK(ShapesCompatible(a, b));
  CHECK(ShapesCompatible(a, dyn));
  CHECK_FALSE(ShapesCompatible(a, S(P::BF16, {2, 3})));
  CHECK(ShapesCompatibleIgnoringFpPrecision(a, S(P::BF16, {2, 3})));
  CHECK_FALSE(ShapesCompatibleIgnoringFpPrecision(a, S(P::S32, {2, 3})));
  CHECK(ShapesCompatibleIgnoringElementType(a, S(P::S32, {2, 3})));
  CHECK_FALSE(ShapesCompatible(T({a}), a));
  CHECK(ShapesCompatible(Shape::Token(), Shape::Token()));
  CHECK(HigherPrecisionElementType(P::BF16, P::F32) == P::F32);
  CHECK(HigherPrecisionElementType(P::F16, P::BF16) == P::BF16);
  CHECK(HigherPrecisionElementType(P::F64, P::C64) == P::C64);
  CHECK(HigherPrecisionElementType(P::U32, P::S32) == P::S32);
  CHECK(HigherPrecisionElementType(P::S8, P::S64) == P::S64);
}

}  // namespace
}  // namespace hloc
