// Known-answer tests for the structured evaluator kernels (src/eval/ops.h): dot, ragged-dot,
// convolution, reduce, reduce-window, select-and-scatter, map, gather, scatter, sort, topk,
// scan, collectives, cholesky, triangular-solve, fft and batch-norm. Instructions are built by
// hand; called computations run through the evaluator core (EvaluateComputation).
#include <catch2/catch.hpp>
#include <cmath>
#include <complex>
#include <functional>
#include <random>

#include "eval/eval_ops_util.h"
#include "eval/evaluator.h"
#include "eval/ops.h"
#include "ir/computation.h"
#include "ir/float_types.h"
#include "ir/module.h"

using namespace hloc;
using P = PrimitiveType;
using O = HloOpcode;
using Dims = std::vector<int64_t>;

namespace {

Literal Make(P t, Dims dims, std::vector<double> v) {
  Literal l(Shape(t, dims));
  REQUIRE(static_cast<int64_t>(v.size()) == l.element_count());
  for (size_t i = 0; i < v.size(); ++i) l.SetDouble(i, v[i]);
  return l;
}
Literal Iota(P t, Dims dims, double start = 0) {
  Literal l(Shape(t, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetDouble(i, start + i);
  return l;
}
std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}
Literal Scalar(P t, double v) { return Make(t, {}, {v}); }

using Kernel = std::function<absl::StatusOr<Literal>(const HloInstruction&, Operands, EvalContext&)>;

// A module to hold called computations, and a context whose `call` runs them.
struct Env {
  HloModule module{"test"};
  EvaluatorOptions options;
  EvalContext ctx;
  int counter = 0;
  Env() {
    ctx.options = &options;
    ctx.call = [](const HloComputation& c, absl::Span<const Literal* const> a) { return EvaluateComputation(c, a); };
  }
  HloComputation* NewComp() {
    return module.AddComputation(std::make_unique<HloComputation>("comp" + std::to_string(counter++)));
  }
  static HloInstruction* Add(HloComputation* c, O op, Shape s, std::vector<HloInstruction*> operands = {}) {
    auto* i = c->AddInstruction(std::make_unique<HloInstruction>(op, std::move(s), "i" + std::to_string(c->instruction_count())));
    for (HloInstruction* o : operands) i->AppendOperand(o);
    return i;
  }
  // (a, b) -> op(a, b) on scalars of t (or op(b, a) when swapped).
  HloComputation* Binary(O op, P t, bool swapped = false) {
    HloComputation* c = NewComp();
    HloInstruction* a = ParamN(c, 0, Shape(t, {}));
    HloInstruction* b = ParamN(c, 1, Shape(t, {}));
    c->set_root_instruction(Add(c, op, Shape(t, {}), swapped ? std::vector<HloInstruction*>{b, a}
                                                             : std::vector<HloInstruction*>{a, b}));
    return c;
  }
  // A parameter registered with its number (HloComputation registers parameters on add).
  static HloInstruction* ParamN(HloComputation* c, int64_t n, Shape s) {
    auto inst = std::make_unique<HloInstruction>(O::kParameter, std::move(s), "p" + std::to_string(n));
    inst->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(inst));
  }
  // Comparator with `nparams` scalar params of types; root compare(p0, p1).
  HloComputation* Compare(ComparisonDirection d, std::vector<P> types, ComparisonType ct = ComparisonType::kDefault,
                          bool swapped = false) {
    HloComputation* c = NewComp();
    std::vector<HloInstruction*> ps;
    for (size_t i = 0; i < types.size(); ++i) ps.push_back(ParamN(c, i, Shape(types[i], {})));
    HloInstruction* cmp = Add(c, O::kCompare, Shape(P::PRED, {}),
                              swapped ? std::vector<HloInstruction*>{ps[1], ps[0]} : std::vector<HloInstruction*>{ps[0], ps[1]});
    cmp->mutable_attrs().comparison_direction = d;
    cmp->mutable_attrs().comparison_type = ct;
    c->set_root_instruction(cmp);
    return c;
  }
};

std::unique_ptr<HloInstruction> Inst(O op, Shape shape) {
  return std::make_unique<HloInstruction>(op, std::move(shape), "under_test");
}

absl::StatusOr<Literal> Run(const Kernel& k, const HloInstruction& inst, std::vector<const Literal*> ops, Env& env) {
  return k(inst, ops, env.ctx);
}

Literal RunOk(const Kernel& k, const HloInstruction& inst, std::vector<const Literal*> ops, Env& env) {
  absl::StatusOr<Literal> r = Run(k, inst, ops, env);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

void CheckClose(const std::vector<double>& got, const std::vector<double>& want, double tol = 1e-9) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << " want " << want[i]);
    if (std::isnan(want[i])) CHECK(std::isnan(got[i]));
    else CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}

DotDimensionNumbers DotDims(Dims lb, Dims rb, Dims lc, Dims rc) {
  DotDimensionNumbers d;
  d.lhs_batch_dimensions = lb;
  d.rhs_batch_dimensions = rb;
  d.lhs_contracting_dimensions = lc;
  d.rhs_contracting_dimensions = rc;
  return d;
}

}  // namespace

// ------------------------------------------------------------------------------------------
TEST_CASE("dot: matrix product, batch dims, several contracting dims", "[eval][dot]") {
  Env env;
  auto dot = Inst(O::kDot, Shape(P::F32, {2, 2}));
  dot->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {1}, {0});
  Literal a = Make(P::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  Literal b = Make(P::F32, {3, 2}, {7, 8, 9, 10, 11, 12});
  CheckClose(Values(RunOk(EvalDot, *dot, {&a, &b}, env)), {58, 64, 139, 154});

  // lhs [b=2, k1=2, m=1, k2=2], rhs [k2=2, b=2, n=3, k1=2] -> [2, 1, 3]
  Literal l = Iota(P::F64, {2, 2, 1, 2}, 1);
  Literal r = Iota(P::F64, {2, 2, 3, 2}, -5);
  auto bd = Inst(O::kDot, Shape(P::F64, {2, 1, 3}));
  bd->mutable_attrs().dot_dimension_numbers = DotDims({0}, {1}, {1, 3}, {3, 0});
  std::vector<double> want;
  for (int bb = 0; bb < 2; ++bb)
    for (int n = 0; n < 3; ++n) {
      double s = 0;
      for (int k1 = 0; k1 < 2; ++k1)
        for (int k2 = 0; k2 < 2; ++k2)
          s += l.GetDouble(l.LinearIndex({bb, k1, 0, k2})) * r.GetDouble(r.LinearIndex({k2, bb, n, k1}));
      want.push_back(s);
    }
  CheckClose(Values(RunOk(EvalDot, *bd, {&l, &r}, env)), want);

  // Vector outer product (no contracting dims).
  auto outer = Inst(O::kDot, Shape(P::S32, {2, 3}));
  outer->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {}, {});
  Literal u = Make(P::S32, {2}, {1, -2});
  Literal v = Make(P::S32, {3}, {3, 4, 5});
  CheckClose(Values(RunOk(EvalDot, *outer, {&u, &v}, env)), {3, 4, 5, -6, -8, -10});
}

TEST_CASE("dot: mixed types, integer wraparound, rounding once, complex", "[eval][dot]") {
  Env env;
  // s8 x bf16 -> f32
  auto d = Inst(O::kDot, Shape(P::F32, {1}));
  d->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {1}, {0});
  Literal a = Make(P::S8, {1, 2}, {-3, 100});
  Literal b = Make(P::BF16, {2, 1}, {0.5, 1.5});
  d->mutable_shape() = Shape(P::F32, {1, 1});
  CheckClose(Values(RunOk(EvalDot, *d, {&a, &b}, env)), {148.5});

  // s8 result wraps: 100*2 + 100*1 = 300 -> 44
  auto w = Inst(O::kDot, Shape(P::S8, {}));
  w->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {0}, {0});
  Literal x = Make(P::S8, {2}, {100, 100});
  Literal y = Make(P::S8, {2}, {2, 1});
  CHECK(RunOk(EvalDot, *w, {&x, &y}, env).GetInt(0) == 44);

  // bf16 x bf16 -> bf16 accumulates exactly and rounds once: 256 + 1 + 1 = 258 (a bf16 value);
  // step-by-step bf16 rounding would give 256.
  auto r = Inst(O::kDot, Shape(P::BF16, {}));
  r->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {0}, {0});
  Literal p = Make(P::BF16, {3}, {256, 1, 1});
  Literal q = Make(P::BF16, {3}, {1, 1, 1});
  CHECK(RunOk(EvalDot, *r, {&p, &q}, env).GetDouble(0) == 258);

  // complex
  auto c = Inst(O::kDot, Shape(P::C64, {}));
  c->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {0}, {0});
  Literal ca(Shape(P::C64, {2})), cb(Shape(P::C64, {2}));
  ca.SetComplex(0, {1, 2});
  ca.SetComplex(1, {0, 1});
  cb.SetComplex(0, {3, -1});
  cb.SetComplex(1, {2, 2});
  // (1+2i)(3-i) + i(2+2i) = (5+5i) + (-2+2i) = 3+7i
  CHECK(RunOk(EvalDot, *c, {&ca, &cb}, env).GetComplex(0) == std::complex<double>(3, 7));
}

TEST_CASE("dot: malformed dimension numbers are errors", "[eval][dot]") {
  Env env;
  Literal a = Iota(P::F32, {2, 3});
  Literal b = Iota(P::F32, {4, 2});
  auto d = Inst(O::kDot, Shape(P::F32, {2, 2}));
  d->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {1}, {0});  // 3 vs 4
  CHECK(!Run(EvalDot, *d, {&a, &b}, env).ok());
  d->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {7}, {0});
  CHECK(!Run(EvalDot, *d, {&a, &b}, env).ok());
  d->mutable_attrs().dot_dimension_numbers.reset();
  CHECK(!Run(EvalDot, *d, {&a, &b}, env).ok());
  d->mutable_attrs().dot_dimension_numbers = DotDims({}, {}, {0}, {1});  // ok dims, wrong result shape
  CHECK(!Run(EvalDot, *d, {&a, &b}, env).ok());
}

TEST_CASE("ragged-dot: the three modes", "[eval][dot]") {
  Env env;
  // Non-contracting: lhs [m=4, k=2], rhs [g=2, k=2, n=1], group sizes [2, 1] -> rows 0-1 use
  // group 0, row 2 group 1, row 3 none (zero).
  Literal lhs = Make(P::F32, {4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  Literal rhs = Make(P::F32, {2, 2, 1}, {1, 1, 10, -1});
  Literal gs = Make(P::S32, {2}, {2, 1});
  auto rd = Inst(O::kRaggedDot, Shape(P::F32, {4, 1}));
  RaggedDotDimensionNumbers rdn;
  rdn.dot_dimension_numbers = DotDims({}, {}, {1}, {1});
  rdn.lhs_ragged_dimensions = {0};
  rdn.rhs_group_dimensions = {0};
  rd->mutable_attrs().ragged_dot_dimension_numbers = rdn;
  CheckClose(Values(RunOk(EvalRaggedDot, *rd, {&lhs, &rhs, &gs}, env)), {3, 7, 44, 0});

  // Contracting: lhs [m=1, k=3], rhs [k=3, n=1], groups [1, 2] -> out [g=2, 1, 1]
  Literal l2 = Make(P::F32, {1, 3}, {1, 2, 3});
  Literal r2 = Make(P::F32, {3, 1}, {10, 20, 30});
  auto rc = Inst(O::kRaggedDot, Shape(P::F32, {2, 1, 1}));
  RaggedDotDimensionNumbers cdn;
  cdn.dot_dimension_numbers = DotDims({}, {}, {1}, {0});
  cdn.lhs_ragged_dimensions = {1};
  rc->mutable_attrs().ragged_dot_dimension_numbers = cdn;
  CheckClose(Values(RunOk(EvalRaggedDot, *rc, {&l2, &r2, &gs}, env)), {50, 90});
  Literal gs3 = Make(P::S32, {2}, {1, 1});  // element 2 in no group
  CheckClose(Values(RunOk(EvalRaggedDot, *rc, {&l2, &r2, &gs3}, env)), {10, 40});

  // Batch: an ordinary batched dot.
  Literal l3 = Make(P::F32, {2, 1, 1}, {2, 3});
  Literal r3 = Make(P::F32, {2, 1, 1}, {5, 7});
  auto rb = Inst(O::kRaggedDot, Shape(P::F32, {2, 1, 1}));
  RaggedDotDimensionNumbers bdn;
  bdn.dot_dimension_numbers = DotDims({0}, {0}, {2}, {1});
  bdn.lhs_ragged_dimensions = {0};
  rb->mutable_attrs().ragged_dot_dimension_numbers = bdn;
  CheckClose(Values(RunOk(EvalRaggedDot, *rb, {&l3, &r3, &gs}, env)), {10, 21});
}

// ------------------------------------------------------------------------------------------
namespace {
// 1-D convolution, dim_labels b0f_0io->b0f unless given.
std::unique_ptr<HloInstruction> Conv1D(Dims out_dims, WindowDimension wd, int64_t fgc = 1, int64_t bgc = 1) {
  auto c = Inst(O::kConvolution, Shape(P::F32, out_dims));
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_spatial_dimensions = {1};
  d.input_feature_dimension = 2;
  d.kernel_spatial_dimensions = {0};
  d.kernel_input_feature_dimension = 1;
  d.kernel_output_feature_dimension = 2;
  d.output_batch_dimension = 0;
  d.output_spatial_dimensions = {1};
  d.output_feature_dimension = 2;
  c->mutable_attrs().convolution_dimension_numbers = d;
  c->mutable_attrs().window = Window{{wd}};
  c->mutable_attrs().feature_group_count = fgc;
  c->mutable_attrs().batch_group_count = bgc;
  return c;
}
WindowDimension Wd(int64_t size, int64_t stride = 1, int64_t lo = 0, int64_t hi = 0, int64_t lhs_dil = 1,
                   int64_t rhs_dil = 1, bool rev = false) {
  WindowDimension w;
  w.size = size;
  w.stride = stride;
  w.padding_low = lo;
  w.padding_high = hi;
  w.base_dilation = lhs_dil;
  w.window_dilation = rhs_dil;
  w.window_reversal = rev;
  return w;
}
}  // namespace

TEST_CASE("convolution: strides, padding, dilations, reversal (known answers)", "[eval][conv]") {
  Env env;
  Literal x = Make(P::F32, {1, 4, 1}, {1, 2, 3, 4});
  Literal w2 = Make(P::F32, {2, 1, 1}, {1, 10});
  Literal w3 = Make(P::F32, {3, 1, 1}, {1, 0, 10});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 3, 1}, Wd(2)), {&x, &w2}, env)), {21, 32, 43});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 5, 1}, Wd(2, 1, 1, 1)), {&x, &w2}, env)), {10, 21, 32, 43, 4});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 1}, Wd(2, 2)), {&x, &w2}, env)), {21, 43});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 6, 1}, Wd(2, 1, 0, 0, 2)), {&x, &w2}, env)),
             {1, 20, 2, 30, 3, 40});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 1}, Wd(2, 1, 0, 0, 1, 2)), {&x, &w2}, env)), {31, 42});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 1}, Wd(3)), {&x, &w3}, env)), {31, 42});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 3, 1}, Wd(2, 1, 0, 0, 1, 1, true)), {&x, &w2}, env)),
             {12, 23, 34});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 1}, Wd(2, 1, -1, 0)), {&x, &w2}, env)), {32, 43});
  // Wrong result shape and bad window are errors.
  CHECK(!Run(EvalConvolution, *Conv1D({1, 4, 1}, Wd(2)), {&x, &w2}, env).ok());
  CHECK(!Run(EvalConvolution, *Conv1D({1, 3, 1}, Wd(3)), {&x, &w2}, env).ok());
  CHECK(!Run(EvalConvolution, *Conv1D({1, 3, 1}, Wd(2, 0)), {&x, &w2}, env).ok());
}

TEST_CASE("convolution: feature and batch groups, 2-D with other dim_labels", "[eval][conv]") {
  Env env;
  // Two input features, two groups: output feature o sees input feature o only.
  Literal x = Make(P::F32, {1, 3, 2}, {1, 100, 2, 200, 3, 300});
  Literal w = Make(P::F32, {2, 1, 2}, {1, 1, 10, -1});  // [k, i=1, o=2]
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 2}, Wd(2), 2), {&x, &w}, env)), {21, -100, 32, -100});
  // batch_group_count=2: input batch 2 -> output batch 1; output feature o uses batch o.
  Literal xb = Make(P::F32, {2, 2, 1}, {1, 2, 30, 40});
  Literal wb = Make(P::F32, {1, 1, 2}, {1, 2});
  CheckClose(Values(RunOk(EvalConvolution, *Conv1D({1, 2, 2}, Wd(1), 1, 2), {&xb, &wb}, env)), {1, 60, 2, 80});

  // 2-D, dim_labels f01b_i01o->01bf: input [f=1, 3, 3, b=1], kernel [i=1, 2, 2, o=1].
  auto c = Inst(O::kConvolution, Shape(P::F32, {2, 2, 1, 1}));
  ConvolutionDimensionNumbers d;
  d.input_feature_dimension = 0;
  d.input_spatial_dimensions = {1, 2};
  d.input_batch_dimension = 3;
  d.kernel_input_feature_dimension = 0;
  d.kernel_spatial_dimensions = {1, 2};
  d.kernel_output_feature_dimension = 3;
  d.output_spatial_dimensions = {0, 1};
  d.output_batch_dimension = 2;
  d.output_feature_dimension = 3;
  c->mutable_attrs().convolution_dimension_numbers = d;
  c->mutable_attrs().window = Window{{Wd(2), Wd(2)}};
  Literal img = Iota(P::F32, {1, 3, 3, 1}, 1);  // 1..9
  Literal k = Make(P::F32, {1, 2, 2, 1}, {1, 0, 0, -1});
  CheckClose(Values(RunOk(EvalConvolution, *c, {&img, &k}, env)), {-4, -4, -4, -4});
}

// ------------------------------------------------------------------------------------------
TEST_CASE("reduce: fast path, any dims, bf16 rounds every step", "[eval][reduce]") {
  Env env;
  auto r = Inst(O::kReduce, Shape(P::F32, {3}));
  r->mutable_attrs().dimensions = {0};
  r->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal x = Iota(P::F32, {2, 3});
  Literal zero = Scalar(P::F32, 10);
  CheckClose(Values(RunOk(EvalReduce, *r, {&x, &zero}, env)), {13, 15, 17});
  r->mutable_attrs().dimensions = {1};
  CHECK(!Run(EvalReduce, *r, {&x, &zero}, env).ok());  // result should be [2]
  r->mutable_shape() = Shape(P::F32, {2});
  CheckClose(Values(RunOk(EvalReduce, *r, {&x, &zero}, env)), {13, 22});
  r->mutable_attrs().dimensions = {1, 0};
  r->mutable_shape() = Shape(P::F32, {});
  CheckClose(Values(RunOk(EvalReduce, *r, {&x, &zero}, env)), {25});
  r->mutable_attrs().dimensions = {1, 1};
  CHECK(!Run(EvalReduce, *r, {&x, &zero}, env).ok());

  auto m = Inst(O::kReduce, Shape(P::S32, {2}));
  m->mutable_attrs().dimensions = {1};
  m->mutable_called_computations() = {env.Binary(O::kMaximum, P::S32, /*swapped=*/true)};
  Literal xi = Make(P::S32, {2, 3}, {1, -5, 3, -7, -2, -9});
  Literal lo = Scalar(P::S32, -100);
  CheckClose(Values(RunOk(EvalReduce, *m, {&xi, &lo}, env)), {3, -2});

  // bf16: 256 + 1 + 1 + 1 + 1 stays 256 when every step rounds to bf16.
  auto b = Inst(O::kReduce, Shape(P::BF16, {}));
  b->mutable_attrs().dimensions = {0};
  b->mutable_called_computations() = {env.Binary(O::kAdd, P::BF16)};
  Literal ones = Make(P::BF16, {4}, {1, 1, 1, 1});
  Literal init = Scalar(P::BF16, 256);
  CHECK(RunOk(EvalReduce, *b, {&ones, &init}, env).GetDouble(0) == 256);

  // NaN propagates through maximum.
  auto mx = Inst(O::kReduce, Shape(P::F32, {}));
  mx->mutable_attrs().dimensions = {0};
  mx->mutable_called_computations() = {env.Binary(O::kMaximum, P::F32)};
  Literal withnan = Make(P::F32, {3}, {1, NAN, 2});
  Literal ninf = Scalar(P::F32, -INFINITY);
  CHECK(std::isnan(RunOk(EvalReduce, *mx, {&withnan, &ninf}, env).GetDouble(0)));
}

TEST_CASE("reduce: variadic argmax through the reducer computation", "[eval][reduce]") {
  Env env;
  // (v0, i0, v1, i1) -> v0 >= v1 ? (v0, i0) : (v1, i1)
  HloComputation* c = env.NewComp();
  auto* v0 = Env::ParamN(c, 0, Shape(P::F32, {}));
  auto* i0 = Env::ParamN(c, 1, Shape(P::S32, {}));
  auto* v1 = Env::ParamN(c, 2, Shape(P::F32, {}));
  auto* i1 = Env::ParamN(c, 3, Shape(P::S32, {}));
  auto* ge = Env::Add(c, O::kCompare, Shape(P::PRED, {}), {v0, v1});
  ge->mutable_attrs().comparison_direction = ComparisonDirection::kGe;
  auto* sv = Env::Add(c, O::kSelect, Shape(P::F32, {}), {ge, v0, v1});
  auto* si = Env::Add(c, O::kSelect, Shape(P::S32, {}), {ge, i0, i1});
  c->set_root_instruction(Env::Add(c, O::kTuple, Shape::Tuple({Shape(P::F32, {}), Shape(P::S32, {})}), {sv, si}));
  auto r = Inst(O::kReduce, Shape::Tuple({Shape(P::F32, {2}), Shape(P::S32, {2})}));
  r->mutable_attrs().dimensions = {1};
  r->mutable_called_computations() = {c};
  Literal v = Make(P::F32, {2, 3}, {1, 9, 3, 7, 2, 8});
  Literal idx = Make(P::S32, {2, 3}, {0, 1, 2, 0, 1, 2});
  Literal vinit = Scalar(P::F32, -INFINITY), iinit = Scalar(P::S32, -1);
  Literal out = RunOk(EvalReduce, *r, {&v, &idx, &vinit, &iinit}, env);
  REQUIRE(out.shape().IsTuple());
  CheckClose(Values(out.tuple_element(0)), {9, 8});
  CheckClose(Values(out.tuple_element(1)), {1, 2});
  // Mismatched init types are rejected.
  CHECK(!Run(EvalReduce, *r, {&v, &idx, &iinit, &vinit}, env).ok());
}

TEST_CASE("reduce-window: cumulative product, pooling, dilation, general path", "[eval][reduce]") {
  Env env;
  // The corpus's cumprod: window 3x1 with low padding 2 along dim 0.
  auto cp = Inst(O::kReduceWindow, Shape(P::F32, {3, 2}));
  cp->mutable_attrs().window = Window{{Wd(3, 1, 2, 0), Wd(1)}};
  cp->mutable_called_computations() = {env.Binary(O::kMultiply, P::F32)};
  Literal x = Make(P::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  Literal one = Scalar(P::F32, 1);
  CheckClose(Values(RunOk(EvalReduceWindow, *cp, {&x, &one}, env)), {1, 2, 3, 8, 15, 48});

  // 2x2 max pool, stride 2, on 4x4.
  auto mp = Inst(O::kReduceWindow, Shape(P::F32, {2, 2}));
  mp->mutable_attrs().window = Window{{Wd(2, 2), Wd(2, 2)}};
  mp->mutable_called_computations() = {env.Binary(O::kMaximum, P::F32)};
  Literal img = Make(P::F32, {4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 1, 9, 0, 1, 7});
  Literal ninf = Scalar(P::F32, -INFINITY);
  CheckClose(Values(RunOk(EvalReduceWindow, *mp, {&img, &ninf}, env)), {5, 8, 9, 7});

  // Base dilation 2 on [1,2,3] -> [1,_,2,_,3]; window 2 sum: [1,2,2,3]; window dilation 2
  // with window 2 on [1,2,3,4]: x[i] + x[i+2].
  auto bd = Inst(O::kReduceWindow, Shape(P::F32, {4}));
  bd->mutable_attrs().window = Window{{Wd(2, 1, 0, 0, 2)}};
  bd->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal v = Make(P::F32, {3}, {1, 2, 3});
  Literal zero = Scalar(P::F32, 0);
  CheckClose(Values(RunOk(EvalReduceWindow, *bd, {&v, &zero}, env)), {1, 2, 2, 3});
  auto wdil = Inst(O::kReduceWindow, Shape(P::F32, {2}));
  wdil->mutable_attrs().window = Window{{Wd(2, 1, 0, 0, 1, 2)}};
  wdil->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal v4 = Make(P::F32, {4}, {1, 2, 3, 4});
  CheckClose(Values(RunOk(EvalReduceWindow, *wdil, {&v4, &zero}, env)), {4, 6});

  // Reducers that are not one recognized binary op fold as reducer(acc, x) in row-major window
  // order: subtract runs as a compiled scalar program, remainder through the evaluator.
  auto sub = Inst(O::kReduceWindow, Shape(P::F32, {2}));
  sub->mutable_attrs().window = Window{{Wd(3)}};
  sub->mutable_called_computations() = {env.Binary(O::kSubtract, P::F32)};
  Literal hundred = Scalar(P::F32, 100);
  CheckClose(Values(RunOk(EvalReduceWindow, *sub, {&v4, &hundred}, env)), {94, 91});
  // Variadic: a running (max, count) pair over windows of 2.
  HloComputation* mc = env.NewComp();
  auto* m0 = Env::ParamN(mc, 0, Shape(P::F32, {}));
  auto* c0 = Env::ParamN(mc, 1, Shape(P::S32, {}));
  auto* m1 = Env::ParamN(mc, 2, Shape(P::F32, {}));
  auto* c1 = Env::ParamN(mc, 3, Shape(P::S32, {}));
  auto* mx = Env::Add(mc, O::kMaximum, Shape(P::F32, {}), {m0, m1});
  auto* cnt = Env::Add(mc, O::kAdd, Shape(P::S32, {}), {c0, c1});
  mc->set_root_instruction(Env::Add(mc, O::kTuple, Shape::Tuple({Shape(P::F32, {}), Shape(P::S32, {})}), {mx, cnt}));
  auto vr = Inst(O::kReduceWindow, Shape::Tuple({Shape(P::F32, {4}), Shape(P::S32, {4})}));
  vr->mutable_attrs().window = Window{{Wd(2, 1, 1, 0)}};
  vr->mutable_called_computations() = {mc};
  Literal ones = Make(P::S32, {4}, {1, 1, 1, 1});
  Literal izero = Scalar(P::S32, 0);
  Literal vout = RunOk(EvalReduceWindow, *vr, {&v4, &ones, &ninf, &izero}, env);
  CheckClose(Values(vout.tuple_element(0)), {1, 2, 3, 4});
  CheckClose(Values(vout.tuple_element(1)), {1, 2, 2, 2});
  auto rem = Inst(O::kReduceWindow, Shape(P::F32, {2}));
  rem->mutable_attrs().window = Window{{Wd(2)}};
  rem->mutable_called_computations() = {env.Binary(O::kRemainder, P::F32)};
  Literal v3 = Make(P::F32, {3}, {7, 9, 11});
  CheckClose(Values(RunOk(EvalReduceWindow, *rem, {&v3, &hundred}, env)), {2, 1});
}

TEST_CASE("select-and-scatter: max-pool gradient, overlap and padding", "[eval][reduce]") {
  Env env;
  auto ss = Inst(O::kSelectAndScatter, Shape(P::F32, {4, 4}));
  ss->mutable_attrs().window = Window{{Wd(2, 2), Wd(2, 2)}};
  ss->mutable_called_computations() = {env.Compare(ComparisonDirection::kGe, {P::F32, P::F32}),
                                        env.Binary(O::kAdd, P::F32)};
  Literal img = Make(P::F32, {4, 4}, {1, 5, 2, 0, 3, 4, 8, 1, 0, 0, 1, 1, 9, 0, 1, 7});
  Literal src = Make(P::F32, {2, 2}, {10, 20, 30, 40});
  Literal zero = Scalar(P::F32, 0);
  CheckClose(Values(RunOk(EvalSelectAndScatter, *ss, {&img, &src, &zero}, env)),
             {0, 10, 0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 30, 0, 0, 40});
  // Overlapping windows (size 2, stride 1) on [1, 3, 2]: both windows pick 3.
  auto ov = Inst(O::kSelectAndScatter, Shape(P::F32, {3}));
  ov->mutable_attrs().window = Window{{Wd(2)}};
  ov->mutable_called_computations() = ss->called_computations();
  Literal a = Make(P::F32, {3}, {1, 3, 2});
  Literal s2 = Make(P::F32, {2}, {5, 6});
  CheckClose(Values(RunOk(EvalSelectAndScatter, *ov, {&a, &s2, &zero}, env)), {0, 11, 0});
  // Padding: window 2, pad 1 low: windows [pad,1], [1,3], [3,2], [2, pad(high 1)].
  auto pd = Inst(O::kSelectAndScatter, Shape(P::F32, {3}));
  pd->mutable_attrs().window = Window{{Wd(2, 1, 1, 1)}};
  pd->mutable_called_computations() = ss->called_computations();
  Literal s4 = Make(P::F32, {4}, {1, 2, 4, 8});
  CheckClose(Values(RunOk(EvalSelectAndScatter, *pd, {&a, &s4, &zero}, env)), {1, 6, 8});
  // A swapped compare is still recognized: compare(b, a) GE picks the minimum (min-pool).
  auto mn = Inst(O::kSelectAndScatter, Shape(P::F32, {3}));
  mn->mutable_attrs().window = Window{{Wd(2)}};
  HloComputation* le = env.Compare(ComparisonDirection::kGe, {P::F32, P::F32}, ComparisonType::kDefault, true);
  mn->mutable_called_computations() = {le, env.Binary(O::kAdd, P::F32)};
  CheckClose(Values(RunOk(EvalSelectAndScatter, *mn, {&a, &s2, &zero}, env)), {5, 0, 6});
  // General select through the computation: not(a < b) is a >= b in another form.
  HloComputation* gsel = env.NewComp();
  auto* p0 = Env::ParamN(gsel, 0, Shape(P::F32, {}));
  auto* p1 = Env::ParamN(gsel, 1, Shape(P::F32, {}));
  auto* lt = Env::Add(gsel, O::kCompare, Shape(P::PRED, {}), {p0, p1});
  lt->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  gsel->set_root_instruction(Env::Add(gsel, O::kNot, Shape(P::PRED, {}), {lt}));
  ss->mutable_called_computations() = {gsel, env.Binary(O::kSubtract, P::F32)};
  CheckClose(Values(RunOk(EvalSelectAndScatter, *ss, {&img, &src, &zero}, env)),
             {0, -10, 0, 0, 0, 0, -20, 0, 0, 0, 0, 0, -30, 0, 0, -40});
}

TEST_CASE("map: fast and general paths", "[eval][reduce]") {
  Env env;
  auto m = Inst(O::kMap, Shape(P::F32, {3}));
  m->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal a = Make(P::F32, {3}, {1, 2, 3});
  Literal b = Make(P::F32, {3}, {10, 20, 30});
  CheckClose(Values(RunOk(EvalMap, *m, {&a, &b}, env)), {11, 22, 33});
  m->mutable_called_computations() = {env.Binary(O::kSubtract, P::F32)};
  CheckClose(Values(RunOk(EvalMap, *m, {&a, &b}, env)), {-9, -18, -27});
  Literal c = Make(P::F32, {2}, {1, 2});
  CHECK(!Run(EvalMap, *m, {&a, &c}, env).ok());
}

// ------------------------------------------------------------------------------------------
TEST_CASE("gather: XLA's examples, clamping, batching dims", "[eval][gather]") {
  Env env;
  Literal op = Iota(P::F32, {3, 3}, 1);  // [[1,2,3],[4,5,6],[7,8,9]]
  // Rows: offset_dims={1}, collapsed={0}, start_index_map={0}, index_vector_dim=1.
  auto g = Inst(O::kGather, Shape(P::F32, {2, 3}));
  GatherDimensionNumbers gd;
  gd.offset_dims = {1};
  gd.collapsed_slice_dims = {0};
  gd.start_index_map = {0};
  gd.index_vector_dim = 1;
  g->mutable_attrs().gather_dimension_numbers = gd;
  g->mutable_attrs().dynamic_slice_sizes = {1, 3};
  Literal idx = Make(P::S32, {2}, {0, 2});
  CheckClose(Values(RunOk(EvalGather, *g, {&op, &idx}, env)), {1, 2, 3, 7, 8, 9});
  // Out-of-range starts clamp so the slice fits: 5 -> 2, -3 -> 0.
  Literal far = Make(P::S32, {2}, {5, -3});
  CheckClose(Values(RunOk(EvalGather, *g, {&op, &far}, env)), {7, 8, 9, 1, 2, 3});
  // 2x2 windows at (row, col) starts, clamped: index_vector_dim=1 of [2,2] indices.
  auto w = Inst(O::kGather, Shape(P::F32, {2, 2, 2}));
  GatherDimensionNumbers wd;
  wd.offset_dims = {1, 2};
  wd.start_index_map = {0, 1};
  wd.index_vector_dim = 1;
  w->mutable_attrs().gather_dimension_numbers = wd;
  w->mutable_attrs().dynamic_slice_sizes = {2, 2};
  Literal starts = Make(P::S64, {2, 2}, {0, 1, 2, 2});
  CheckClose(Values(RunOk(EvalGather, *w, {&op, &starts}, env)), {2, 3, 5, 6, 5, 6, 8, 9});
  // take_along_axis as the corpus writes it: operand [2,3], indices [2,1,1] with batching.
  auto t = Inst(O::kGather, Shape(P::F32, {2, 1}));
  GatherDimensionNumbers td;
  td.collapsed_slice_dims = {1};
  td.start_index_map = {1};
  td.operand_batching_dims = {0};
  td.start_indices_batching_dims = {0};
  td.index_vector_dim = 2;
  t->mutable_attrs().gather_dimension_numbers = td;
  t->mutable_attrs().dynamic_slice_sizes = {1, 1};
  Literal op23 = Iota(P::F32, {2, 3});
  Literal ti = Make(P::S32, {2, 1, 1}, {2, 0});
  CheckClose(Values(RunOk(EvalGather, *t, {&op23, &ti}, env)), {2, 3});
  // Malformed: index_vector_dim out of range; slice larger than the operand.
  gd.index_vector_dim = 3;
  g->mutable_attrs().gather_dimension_numbers = gd;
  CHECK(!Run(EvalGather, *g, {&op, &idx}, env).ok());
  gd.index_vector_dim = 1;
  g->mutable_attrs().gather_dimension_numbers = gd;
  g->mutable_attrs().dynamic_slice_sizes = {1, 4};
  CHECK(!Run(EvalGather, *g, {&op, &idx}, env).ok());
}

TEST_CASE("scatter: add with duplicates, out-of-bounds windows skipped, overwrite, variadic", "[eval][scatter]") {
  Env env;
  ScatterDimensionNumbers sd;
  sd.update_window_dims = {1};
  sd.inserted_window_dims = {0};
  sd.scatter_dims_to_operand_dims = {0};
  sd.index_vector_dim = 1;
  auto s = Inst(O::kScatter, Shape(P::F32, {3, 2}));
  s->mutable_attrs().scatter_dimension_numbers = sd;
  s->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal op = Make(P::F32, {3, 2}, {0, 0, 0, 0, 0, 0});
  Literal idx = Make(P::S32, {4}, {1, 1, 3, -1});
  Literal upd = Make(P::F32, {4, 2}, {1, 2, 10, 20, 100, 200, 1000, 2000});
  CheckClose(Values(RunOk(EvalScatter, *s, {&op, &idx, &upd}, env)), {0, 0, 11, 22, 0, 0});
  // A window that only partly fits is skipped as a whole: operand [4], window 2 at start 3.
  ScatterDimensionNumbers wd;
  wd.update_window_dims = {1};
  wd.scatter_dims_to_operand_dims = {0};
  wd.index_vector_dim = 1;
  auto w = Inst(O::kScatter, Shape(P::F32, {4}));
  w->mutable_attrs().scatter_dimension_numbers = wd;
  w->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal op4 = Make(P::F32, {4}, {0, 0, 0, 0});
  Literal idx2 = Make(P::S32, {2, 1}, {3, 2});
  Literal upd2 = Make(P::F32, {2, 2}, {5, 6, 7, 8});
  CheckClose(Values(RunOk(EvalScatter, *w, {&op4, &idx2, &upd2}, env)), {0, 0, 7, 8});
  // Overwrite (to_apply returns the update), the last update wins.
  HloComputation* set = env.NewComp();
  Env::ParamN(set, 0, Shape(P::F32, {}));
  set->set_root_instruction(Env::ParamN(set, 1, Shape(P::F32, {})));
  s->mutable_called_computations() = {set};
  CheckClose(Values(RunOk(EvalScatter, *s, {&op, &idx, &upd}, env)), {0, 0, 10, 20, 0, 0});
  // General path (subtract is not a recognized reducer): op - u1 - u2.
  s->mutable_called_computations() = {env.Binary(O::kSubtract, P::F32)};
  CheckClose(Values(RunOk(EvalScatter, *s, {&op, &idx, &upd}, env)), {0, 0, -11, -22, 0, 0});
  // Variadic: two operands updated together by a computation returning a tuple.
  HloComputation* both = env.NewComp();
  auto* a0 = Env::ParamN(both, 0, Shape(P::F32, {}));
  auto* a1 = Env::ParamN(both, 1, Shape(P::S32, {}));
  auto* u0 = Env::ParamN(both, 2, Shape(P::F32, {}));
  auto* u1 = Env::ParamN(both, 3, Shape(P::S32, {}));
  auto* s0 = Env::Add(both, O::kAdd, Shape(P::F32, {}), {a0, u0});
  auto* s1 = Env::Add(both, O::kMultiply, Shape(P::S32, {}), {a1, u1});
  both->set_root_instruction(Env::Add(both, O::kTuple, Shape::Tuple({Shape(P::F32, {}), Shape(P::S32, {})}), {s0, s1}));
  auto v = Inst(O::kScatter, Shape::Tuple({Shape(P::F32, {3, 2}), Shape(P::S32, {3, 2})}));
  v->mutable_attrs().scatter_dimension_numbers = sd;
  v->mutable_called_computations() = {both};
  Literal opi = Make(P::S32, {3, 2}, {1, 1, 1, 1, 1, 1});
  Literal updi = Make(P::S32, {4, 2}, {2, 3, 5, 7, 11, 13, 17, 19});
  Literal out = RunOk(EvalScatter, *v, {&op, &opi, &idx, &upd, &updi}, env);
  REQUIRE(out.shape().IsTuple());
  CheckClose(Values(out.tuple_element(0)), {0, 0, 11, 22, 0, 0});
  CheckClose(Values(out.tuple_element(1)), {1, 1, 10, 21, 1, 1});
  // Batching dims: operand [2, 3], indices [2, 1] (one per batch row), updates [2].
  ScatterDimensionNumbers bd;
  bd.inserted_window_dims = {1};
  bd.input_batching_dims = {0};
  bd.scatter_indices_batching_dims = {0};
  bd.scatter_dims_to_operand_dims = {1};
  bd.index_vector_dim = 1;
  auto b = Inst(O::kScatter, Shape(P::F32, {2, 3}));
  b->mutable_attrs().scatter_dimension_numbers = bd;
  b->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  Literal opb = Iota(P::F32, {2, 3});
  Literal ib = Make(P::S32, {2, 1}, {2, 0});
  Literal ub = Make(P::F32, {2}, {100, 200});
  CheckClose(Values(RunOk(EvalScatter, *b, {&opb, &ib, &ub}, env)), {0, 1, 102, 203, 4, 5});
  // Malformed: update window bigger than the operand.
  Literal bigupd = Make(P::F32, {1, 5}, {1, 1, 1, 1, 1});
  Literal one_idx = Make(P::S32, {1, 1}, {0});
  CHECK(!Run(EvalScatter, *w, {&op4, &one_idx, &bigupd}, env).ok());
}

// ------------------------------------------------------------------------------------------
TEST_CASE("sort: fast comparators, total order, keys with values, stability", "[eval][sort]") {
  Env env;
  auto s = Inst(O::kSort, Shape(P::F32, {2, 3}));
  s->mutable_attrs().dimensions = {1};
  s->mutable_called_computations() = {env.Compare(ComparisonDirection::kLt, {P::F32, P::F32})};
  Literal x = Make(P::F32, {2, 3}, {3, 1, 2, -1, 5, 0});
  CheckClose(Values(RunOk(EvalSort, *s, {&x}, env)), {1, 2, 3, -1, 0, 5});
  s->mutable_attrs().dimensions = {0};
  CheckClose(Values(RunOk(EvalSort, *s, {&x}, env)), {-1, 1, 0, 3, 5, 2});
  s->mutable_attrs().dimensions = {2};
  CHECK(!Run(EvalSort, *s, {&x}, env).ok());

  // Total order: -NaN < -inf < -1 < -0 < +0 < 1 < inf < NaN.
  auto t = Inst(O::kSort, Shape(P::F32, {8}));
  t->mutable_attrs().dimensions = {0};
  t->mutable_called_computations() = {env.Compare(ComparisonDirection::kLt, {P::F32, P::F32}, ComparisonType::kTotalOrder)};
  Literal y = Make(P::F32, {8}, {NAN, 1, -0.0, INFINITY, -NAN, 0.0, -INFINITY, -1});
  Literal sorted = RunOk(EvalSort, *t, {&y}, env);
  CHECK(std::isnan(sorted.GetDouble(0)));
  CHECK(std::signbit(sorted.GetDouble(0)));
  CHECK(sorted.GetDouble(1) == -INFINITY);
  CHECK(sorted.GetDouble(2) == -1);
  CHECK((sorted.GetDouble(3) == 0 && std::signbit(sorted.GetDouble(3))));
  CHECK((sorted.GetDouble(4) == 0 && !std::signbit(sorted.GetDouble(4))));
  CHECK(sorted.GetDouble(5) == 1);
  CHECK(sorted.GetDouble(6) == INFINITY);
  CHECK(std::isnan(sorted.GetDouble(7)));

  // Argsort, descending (compare(p1, p0) LT == GT), with equal keys kept in order.
  auto a = Inst(O::kSort, Shape::Tuple({Shape(P::S32, {5}), Shape(P::S32, {5})}));
  a->mutable_attrs().dimensions = {0};
  a->mutable_attrs().is_stable = true;
  a->mutable_called_computations() = {
      env.Compare(ComparisonDirection::kLt, {P::S32, P::S32, P::S32, P::S32}, ComparisonType::kDefault, true)};
  Literal keys = Make(P::S32, {5}, {2, 7, 2, 9, 7});
  Literal vals = Make(P::S32, {5}, {0, 1, 2, 3, 4});
  Literal out = RunOk(EvalSort, *a, {&keys, &vals}, env);
  CheckClose(Values(out.tuple_element(0)), {9, 7, 7, 2, 2});
  CheckClose(Values(out.tuple_element(1)), {3, 1, 4, 0, 2});

  // Unsigned keys order as unsigned.
  auto u = Inst(O::kSort, Shape(P::U8, {3}));
  u->mutable_attrs().dimensions = {0};
  u->mutable_called_computations() = {env.Compare(ComparisonDirection::kLt, {P::U8, P::U8})};
  Literal ub = Make(P::U8, {3}, {200, 5, 128});
  CheckClose(Values(RunOk(EvalSort, *u, {&ub}, env)), {5, 128, 200});
}

TEST_CASE("sort: general comparator computation (the corpus's NaN-canonicalizing form)", "[eval][sort]") {
  Env env;
  // (a, b, ia, ib) -> a < b || (a == b && ia < ib): a lexicographic comparator.
  HloComputation* c = env.NewComp();
  auto* a = Env::ParamN(c, 0, Shape(P::F32, {}));
  auto* b = Env::ParamN(c, 1, Shape(P::F32, {}));
  auto* ia = Env::ParamN(c, 2, Shape(P::S32, {}));
  auto* ib = Env::ParamN(c, 3, Shape(P::S32, {}));
  auto* lt = Env::Add(c, O::kCompare, Shape(P::PRED, {}), {a, b});
  lt->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  auto* eq = Env::Add(c, O::kCompare, Shape(P::PRED, {}), {a, b});
  eq->mutable_attrs().comparison_direction = ComparisonDirection::kEq;
  auto* ilt = Env::Add(c, O::kCompare, Shape(P::PRED, {}), {ia, ib});
  ilt->mutable_attrs().comparison_direction = ComparisonDirection::kGt;  // ties: larger index first
  auto* both = Env::Add(c, O::kAnd, Shape(P::PRED, {}), {eq, ilt});
  c->set_root_instruction(Env::Add(c, O::kOr, Shape(P::PRED, {}), {lt, both}));
  auto s = Inst(O::kSort, Shape::Tuple({Shape(P::F32, {5}), Shape(P::S32, {5})}));
  s->mutable_attrs().dimensions = {0};
  s->mutable_called_computations() = {c};
  Literal k = Make(P::F32, {5}, {1, 0, 1, 0, -1});
  Literal v = Make(P::S32, {5}, {0, 1, 2, 3, 4});
  Literal out = RunOk(EvalSort, *s, {&k, &v}, env);
  CheckClose(Values(out.tuple_element(0)), {-1, 0, 0, 1, 1});
  CheckClose(Values(out.tuple_element(1)), {4, 3, 1, 2, 0});
  // A comparator that always answers true is inconsistent; the sort still ends in bounds
  // with a permutation of the input.
  HloComputation* always = env.NewComp();
  Env::ParamN(always, 0, Shape(P::F32, {}));
  Env::ParamN(always, 1, Shape(P::F32, {}));
  auto* t = Env::Add(always, O::kConstant, Shape(P::PRED, {}));
  t->mutable_attrs().literal = Scalar(P::PRED, 1);
  always->set_root_instruction(t);
  auto s1 = Inst(O::kSort, Shape(P::F32, {5}));
  s1->mutable_attrs().dimensions = {0};
  s1->mutable_called_computations() = {always};
  std::vector<double> got = Values(RunOk(EvalSort, *s1, {&k}, env));
  std::sort(got.begin(), got.end());
  CheckClose(got, {-1, 0, 0, 1, 1});
}

TEST_CASE("topk: largest and smallest, ties by lower index", "[eval][sort]") {
  Env env;
  auto t = Inst(O::kTopK, Shape::Tuple({Shape(P::F32, {2, 3}), Shape(P::S32, {2, 3})}));
  t->mutable_attrs().k = 3;
  t->mutable_attrs().largest = true;
  Literal x = Make(P::F32, {2, 5}, {1, 5, 3, 5, 0, -1, -2, NAN, 4, 4});
  Literal out = RunOk(EvalTopK, *t, {&x}, env);
  std::vector<double> v = Values(out.tuple_element(0));
  CHECK(v[0] == 5);
  CHECK(v[1] == 5);
  CHECK(v[2] == 3);
  CHECK(std::isnan(v[3]));
  CHECK(v[4] == 4);
  CHECK(v[5] == 4);
  CheckClose(Values(out.tuple_element(1)), {1, 3, 2, 2, 3, 4});
  t->mutable_attrs().largest = false;
  out = RunOk(EvalTopK, *t, {&x}, env);
  CheckClose(Values(out.tuple_element(0)), {0, 1, 3, -2, -1, 4});
  CheckClose(Values(out.tuple_element(1)), {4, 0, 2, 1, 0, 3});
  t->mutable_attrs().k = 6;
  CHECK(!Run(EvalTopK, *t, {&x}, env).ok());
}

TEST_CASE("scan: cumulative sum forward and reverse, the carry comes out last", "[eval][sort]") {
  Env env;
  // to_apply(x, carry) -> (carry + x, carry + x) on f32[2] slices.
  HloComputation* c = env.NewComp();
  auto* xs = Env::ParamN(c, 0, Shape(P::F32, {2}));
  auto* cs = Env::ParamN(c, 1, Shape(P::F32, {2}));
  auto* sum = Env::Add(c, O::kAdd, Shape(P::F32, {2}), {xs, cs});
  c->set_root_instruction(Env::Add(c, O::kTuple, Shape::Tuple({Shape(P::F32, {2}), Shape(P::F32, {2})}), {sum, sum}));
  auto s = Inst(O::kScan, Shape::Tuple({Shape(P::F32, {2, 3}), Shape(P::F32, {2})}));
  s->mutable_attrs().dimensions = {1};
  s->mutable_attrs().num_carries = 1;
  s->mutable_attrs().is_associative = true;
  s->mutable_called_computations() = {c};
  Literal x = Make(P::F32, {2, 3}, {1, 2, 3, 10, 20, 30});
  Literal init = Make(P::F32, {2}, {0, 100});
  Literal out = RunOk(EvalScan, *s, {&x, &init}, env);
  CheckClose(Values(out.tuple_element(0)), {1, 3, 6, 110, 130, 160});
  CheckClose(Values(out.tuple_element(1)), {6, 160});
  s->mutable_attrs().is_reverse = true;
  out = RunOk(EvalScan, *s, {&x, &init}, env);
  CheckClose(Values(out.tuple_element(0)), {6, 5, 3, 160, 150, 130});
  CheckClose(Values(out.tuple_element(1)), {6, 160});
  // Scalar slices along dim 0 of a vector, as XLA's parser test writes it.
  HloComputation* sc = env.Binary(O::kAdd, P::F32);
  HloComputation* pair = env.NewComp();
  auto* l = Env::ParamN(pair, 0, Shape(P::F32, {}));
  auto* r = Env::ParamN(pair, 1, Shape(P::F32, {}));
  auto* ad = Env::Add(pair, O::kSubtract, Shape(P::F32, {}), {l, r});
  pair->set_root_instruction(Env::Add(pair, O::kTuple, Shape::Tuple({Shape(P::F32, {}), Shape(P::F32, {})}), {ad, ad}));
  (void)sc;
  auto v = Inst(O::kScan, Shape::Tuple({Shape(P::F32, {4}), Shape(P::F32, {})}));
  v->mutable_attrs().dimensions = {0};
  v->mutable_attrs().num_carries = 1;
  v->mutable_called_computations() = {pair};
  Literal xv = Make(P::F32, {4}, {1, 2, 3, 4});
  Literal z = Scalar(P::F32, 0);
  out = RunOk(EvalScan, *v, {&xv, &z}, env);
  // carry' = x - carry: 1, 1, 2, 2
  CheckClose(Values(out.tuple_element(0)), {1, 1, 2, 2});
  CheckClose(Values(out.tuple_element(1)), {2});
  v->mutable_attrs().num_carries = 2;
  CHECK(!Run(EvalScan, *v, {&xv, &z}, env).ok());
}

// ------------------------------------------------------------------------------------------
TEST_CASE("collectives on one device", "[eval][collective]") {
  Env env;
  Literal x = Make(P::F32, {2}, {1, 2});
  auto ar = Inst(O::kAllReduce, Shape(P::F32, {2}));
  ar->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
  CheckClose(Values(RunOk(EvalCollective, *ar, {&x}, env)), {1, 2});
  ar->mutable_attrs().replica_groups.groups = {{0}};
  CheckClose(Values(RunOk(EvalCollective, *ar, {&x}, env)), {1, 2});
  ar->mutable_attrs().replica_groups.groups = {{0, 1}};
  absl::StatusOr<Literal> multi = Run(EvalCollective, *ar, {&x}, env);
  REQUIRE(!multi.ok());
  CHECK(std::string(multi.status().message()).find("set replica_count or num_partitions in the HloModule header") !=
        std::string::npos);
  ar->mutable_attrs().replica_groups.groups.clear();
  env.options.replica_count = 2;
  multi = Run(EvalCollective, *ar, {&x}, env);
  REQUIRE(!multi.ok());
  CHECK(std::string(multi.status().message()).find("runs on 2 devices") != std::string::npos);
  env.options.replica_count = 1;

  auto ag = Inst(O::kAllGather, Shape(P::F32, {4}));  // would need two participants
  ag->mutable_attrs().dimensions = {0};
  CHECK(!Run(EvalCollective, *ag, {&x}, env).ok());
  auto ags = Inst(O::kAllGatherStart, Shape::Tuple({Shape(P::F32, {2}), Shape(P::F32, {2})}));
  Literal started = RunOk(EvalCollective, *ags, {&x}, env);
  auto agd = Inst(O::kAllGatherDone, Shape(P::F32, {2}));
  CheckClose(Values(RunOk(EvalCollective, *agd, {&started}, env)), {1, 2});

  auto cp = Inst(O::kCollectivePermute, Shape(P::F32, {2}));
  cp->mutable_attrs().source_target_pairs = {{0, 1}, {1, 0}};
  CheckClose(Values(RunOk(EvalCollective, *cp, {&x}, env)), {0, 0});
  cp->mutable_attrs().source_target_pairs = {{0, 0}};
  CheckClose(Values(RunOk(EvalCollective, *cp, {&x}, env)), {1, 2});

  auto cps = Inst(O::kCollectivePermuteStart,
                  Shape::Tuple({Shape(P::F32, {2}), Shape(P::F32, {2}), Shape(P::U32, {}), Shape(P::U32, {})}));
  cps->mutable_attrs().source_target_pairs = {{0, 0}};
  Literal cstart = RunOk(EvalCollective, *cps, {&x}, env);
  auto cpd = Inst(O::kCollectivePermuteDone, Shape(P::F32, {2}));
  CheckClose(Values(RunOk(EvalCollective, *cpd, {&cstart}, env)), {1, 2});
  auto ars = Inst(O::kAllReduceStart, Shape(P::F32, {2}));
  Literal astart = RunOk(EvalCollective, *ars, {&x}, env);
  auto ard = Inst(O::kAllReduceDone, Shape(P::F32, {2}));
  CheckClose(Values(RunOk(EvalCollective, *ard, {&astart}, env)), {1, 2});
  Literal y = Make(P::S32, {3}, {4, 5, 6});
  auto a2a = Inst(O::kAllToAll, Shape::Tuple({Shape(P::F32, {2}), Shape(P::S32, {3})}));
  Literal pair = RunOk(EvalCollective, *a2a, {&x, &y}, env);
  CheckClose(Values(pair.tuple_element(1)), {4, 5, 6});
  auto rs = Inst(O::kReduceScatter, Shape(P::F32, {2}));
  rs->mutable_attrs().dimensions = {0};
  CheckClose(Values(RunOk(EvalCollective, *rs, {&x}, env)), {1, 2});

  // ragged-all-to-all: rows [1, 3) of the input land at row 0 of the output.
  auto ra = Inst(O::kRaggedAllToAll, Shape(P::F32, {3, 1}));
  Literal in = Make(P::F32, {3, 1}, {5, 6, 7});
  Literal outbuf = Make(P::F32, {3, 1}, {-1, -1, -1});
  Literal io = Make(P::S64, {1}, {1}), ss = Make(P::S64, {1}, {2}), oo = Make(P::S64, {1}, {0}),
          rsz = Make(P::S64, {1}, {2});
  CheckClose(Values(RunOk(EvalCollective, *ra, {&in, &outbuf, &io, &ss, &oo, &rsz}, env)), {6, 7, -1});
}

// ------------------------------------------------------------------------------------------
TEST_CASE("cholesky: lower, upper, not positive definite", "[eval][linalg]") {
  Env env;
  Literal a = Make(P::F32, {3, 3}, {4, 12, -16, 12, 37, -43, -16, -43, 98});
  auto c = Inst(O::kCholesky, Shape(P::F32, {3, 3}));
  c->mutable_attrs().lower = true;
  CheckClose(Values(RunOk(EvalCholesky, *c, {&a}, env)), {2, 0, 0, 6, 1, 0, -8, 5, 3}, 1e-6);
  c->mutable_attrs().lower = false;
  CheckClose(Values(RunOk(EvalCholesky, *c, {&a}, env)), {2, 6, -8, 0, 1, 5, 0, 0, 3}, 1e-6);
  Literal bad = Make(P::F64, {2, 2}, {1, 2, 2, 1});
  auto cb = Inst(O::kCholesky, Shape(P::F64, {2, 2}));
  cb->mutable_attrs().lower = true;
  for (double v : Values(RunOk(EvalCholesky, *cb, {&bad}, env))) CHECK(std::isnan(v));
  // Batched: the second matrix being bad does not spoil the first.
  Literal two = Make(P::F64, {2, 2, 2}, {4, 0, 0, 9, 1, 2, 2, 1});
  auto c2 = Inst(O::kCholesky, Shape(P::F64, {2, 2, 2}));
  c2->mutable_attrs().lower = true;
  std::vector<double> r = Values(RunOk(EvalCholesky, *c2, {&two}, env));
  CheckClose({r[0], r[1], r[2], r[3]}, {2, 0, 0, 3});
  CHECK(std::isnan(r[4]));
}

TEST_CASE("triangular-solve: sides, triangles, transposes, unit diagonal", "[eval][linalg]") {
  Env env;
  // a's lower triangle L = [[2,0,0],[1,3,0],[4,5,6]]; its upper triangle holds junk.
  Literal a = Make(P::F64, {3, 3}, {2, 99, 99, 1, 3, 99, 4, 5, 6});
  Literal b = Make(P::F64, {3, 2}, {2, 4, 7, 5, 32, 10});
  auto t = Inst(O::kTriangularSolve, Shape(P::F64, {3, 2}));
  t->mutable_attrs().left_side = true;
  t->mutable_attrs().lower = true;
  // L x = b
  std::vector<double> x = Values(RunOk(EvalTriangularSolve, *t, {&a, &b}, env));
  const double L[3][3] = {{2, 0, 0}, {1, 3, 0}, {4, 5, 6}};
  auto check_left = [&](const std::vector<double>& sol, bool trans, bool unit) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 2; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k) {
          double e = trans ? L[k][i] : L[i][k];
          if (unit && i == k) e = 1;
          s += e * sol[k * 2 + j];
        }
        CHECK(std::abs(s - b.GetDouble(i * 2 + j)) < 1e-9);
      }
  };
  check_left(x, false, false);
  t->mutable_attrs().transpose_a = TriangularTranspose::kTranspose;
  check_left(Values(RunOk(EvalTriangularSolve, *t, {&a, &b}, env)), true, false);
  t->mutable_attrs().unit_diagonal = true;
  check_left(Values(RunOk(EvalTriangularSolve, *t, {&a, &b}, env)), true, true);
  // Right side: x op(a) = b with b [2, 3], upper triangle U = L^T read from a transposed copy.
  Literal au = Make(P::F64, {3, 3}, {2, 1, 4, -7, 3, 5, -7, -7, 6});
  Literal br = Make(P::F64, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto r = Inst(O::kTriangularSolve, Shape(P::F64, {2, 3}));
  r->mutable_attrs().left_side = false;
  r->mutable_attrs().lower = false;
  for (auto tr : {TriangularTranspose::kNoTranspose, TriangularTranspose::kTranspose, TriangularTranspose::kAdjoint}) {
    r->mutable_attrs().transpose_a = tr;
    std::vector<double> sol = Values(RunOk(EvalTriangularSolve, *r, {&au, &br}, env));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        double s = 0;
        for (int k = 0; k < 3; ++k) {
          const double U_kj = L[j][k], U_jk = L[k][j];  // U = L^T
          s += sol[i * 3 + k] * (tr == TriangularTranspose::kNoTranspose ? U_kj : U_jk);
        }
        CHECK(std::abs(s - br.GetDouble(i * 3 + j)) < 1e-9);
      }
  }
  // Complex adjoint: conj is applied.
  Literal ac(Shape(P::C128, {1, 1})), bc(Shape(P::C128, {1, 1}));
  ac.SetComplex(0, {0, 2});
  bc.SetComplex(0, {4, 0});
  auto tc = Inst(O::kTriangularSolve, Shape(P::C128, {1, 1}));
  tc->mutable_attrs().left_side = true;
  tc->mutable_attrs().lower = true;
  tc->mutable_attrs().transpose_a = TriangularTranspose::kAdjoint;
  CHECK(RunOk(EvalTriangularSolve, *tc, {&ac, &bc}, env).GetComplex(0) == std::complex<double>(0, 2));
}

TEST_CASE("fft: FFT, IFFT, RFFT, IRFFT known answers", "[eval][linalg]") {
  Env env;
  using Cx = std::complex<double>;
  Literal x(Shape(P::C64, {4}));
  for (int i = 0; i < 4; ++i) x.SetComplex(i, {double(i + 1), 0});
  auto f = Inst(O::kFft, Shape(P::C64, {4}));
  f->mutable_attrs().fft_type = FftType::kFft;
  f->mutable_attrs().fft_length = {4};
  Literal X = RunOk(EvalFft, *f, {&x}, env);
  const Cx want[4] = {{10, 0}, {-2, 2}, {-2, 0}, {-2, -2}};
  for (int i = 0; i < 4; ++i) CHECK(std::abs(X.GetComplex(i) - want[i]) < 1e-5);
  f->mutable_attrs().fft_type = FftType::kIfft;
  Literal back = RunOk(EvalFft, *f, {&X}, env);
  for (int i = 0; i < 4; ++i) CHECK(std::abs(back.GetComplex(i) - Cx(i + 1, 0)) < 1e-5);

  Literal r = Make(P::F32, {2, 4}, {1, 2, 3, 4, 0, 1, 0, -1});
  auto rf = Inst(O::kFft, Shape(P::C64, {2, 3}));
  rf->mutable_attrs().fft_type = FftType::kRfft;
  rf->mutable_attrs().fft_length = {4};
  Literal R = RunOk(EvalFft, *rf, {&r}, env);
  for (int i = 0; i < 3; ++i) CHECK(std::abs(R.GetComplex(i) - want[i]) < 1e-5);
  CHECK(std::abs(R.GetComplex(4) - Cx(0, -2)) < 1e-5);
  auto irf = Inst(O::kFft, Shape(P::F32, {2, 4}));
  irf->mutable_attrs().fft_type = FftType::kIrfft;
  irf->mutable_attrs().fft_length = {4};
  CheckClose(Values(RunOk(EvalFft, *irf, {&R}, env)), Values(r), 1e-5);

  // 2-D round trip through RFFT/IRFFT.
  Literal m = Make(P::F64, {3, 4}, {1, -2, 3, 0.5, 2, 2, -1, 4, 0, 7, 1, 1});
  auto rf2 = Inst(O::kFft, Shape(P::C128, {3, 3}));
  rf2->mutable_attrs().fft_type = FftType::kRfft;
  rf2->mutable_attrs().fft_length = {3, 4};
  Literal M = RunOk(EvalFft, *rf2, {&m}, env);
  double dc = 0;
  for (double v : Values(m)) dc += v;
  CHECK(std::abs(M.GetComplex(0) - Cx(dc, 0)) < 1e-9);
  auto irf2 = Inst(O::kFft, Shape(P::F64, {3, 4}));
  irf2->mutable_attrs().fft_type = FftType::kIrfft;
  irf2->mutable_attrs().fft_length = {3, 4};
  CheckClose(Values(RunOk(EvalFft, *irf2, {&M}, env)), Values(m), 1e-9);
  // Long lines (radix-2 and Bluestein paths) against a direct DFT.
  for (int64_t n : {64, 100, 37}) {
    Literal z(Shape(P::C128, {n}));
    for (int64_t i = 0; i < n; ++i) z.SetComplex(i, {std::sin(0.3 * i) + 0.1 * i, std::cos(1.7 * i)});
    auto fz = Inst(O::kFft, Shape(P::C128, {n}));
    fz->mutable_attrs().fft_type = FftType::kFft;
    fz->mutable_attrs().fft_length = {n};
    Literal Z = RunOk(EvalFft, *fz, {&z}, env);
    for (int64_t k = 0; k < n; ++k) {
      Cx acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += z.GetComplex(j) * std::polar(1.0, -2 * M_PI * double((j * k) % n) / n);
      INFO("n=" << n << " k=" << k);
      CHECK(std::abs(Z.GetComplex(k) - acc) < 1e-9 * n);
    }
    fz->mutable_attrs().fft_type = FftType::kIfft;
    Literal zb = RunOk(EvalFft, *fz, {&Z}, env);
    for (int64_t j = 0; j < n; ++j) CHECK(std::abs(zb.GetComplex(j) - z.GetComplex(j)) < 1e-12 * n);
  }
  // Shape mismatch is an error.
  rf->mutable_attrs().fft_length = {5};
  CHECK(!Run(EvalFft, *rf, {&r}, env).ok());
}

TEST_CASE("batch-norm training, inference and grad", "[eval][linalg]") {
  Env env;
  // x [2, 2] with features on dim 1: feature 0 = {1, 3}, feature 1 = {2, 6}.
  Literal x = Make(P::F32, {2, 2}, {1, 2, 3, 6});
  Literal scale = Make(P::F32, {2}, {1, 2});
  Literal offset = Make(P::F32, {2}, {0, 1});
  auto tr = Inst(O::kBatchNormTraining, Shape::Tuple({Shape(P::F32, {2, 2}), Shape(P::F32, {2}), Shape(P::F32, {2})}));
  tr->mutable_attrs().feature_index = 1;
  tr->mutable_attrs().epsilon = 0;
  Literal out = RunOk(EvalBatchNorm, *tr, {&x, &scale, &offset}, env);
  CheckClose(Values(out.tuple_element(0)), {-1, -1, 1, 3}, 1e-6);
  CheckClose(Values(out.tuple_element(1)), {2, 4});
  CheckClose(Values(out.tuple_element(2)), {1, 4});

  auto inf = Inst(O::kBatchNormInference, Shape(P::F32, {2, 2}));
  inf->mutable_attrs().feature_index = 1;
  inf->mutable_attrs().epsilon = 0;
  Literal mean = Make(P::F32, {2}, {2, 4}), var = Make(P::F32, {2}, {1, 4});
  CheckClose(Values(RunOk(EvalBatchNorm, *inf, {&x, &scale, &offset, &mean, &var}, env)), {-1, -1, 1, 3}, 1e-6);

  auto gr = Inst(O::kBatchNormGrad, Shape::Tuple({Shape(P::F32, {2, 2}), Shape(P::F32, {2}), Shape(P::F32, {2})}));
  gr->mutable_attrs().feature_index = 1;
  gr->mutable_attrs().epsilon = 0;
  Literal dy = Make(P::F32, {2, 2}, {1, 0, 3, 1});
  Literal g = RunOk(EvalBatchNorm, *gr, {&x, &scale, &mean, &var, &dy}, env);
  // Feature 0: xc = {-1, 1}, dy = {1, 3}, sum dy = 4, sum dy*xc = 2, var 1, N 2:
  //   dx = 1 * 1 / 2 * (2*dy - 4 - xc * 2) = {(2-4+2)/2, (6-4-2)/2} = {0, 0}
  // Feature 1: xc = {-2, 2}, dy = {0, 1}, sum dy = 1, sum dy*xc = 2, var 4, scale 2:
  //   dx = 2 * 0.5 / 2 * (2*dy - 1 - xc * 2 / 4) = 0.5 * {0-1+1, 2-1-1} = {0, 0}
  CheckClose(Values(g.tuple_element(0)), {0, 0, 0, 0}, 1e-6);
  CheckClose(Values(g.tuple_element(1)), {2, 1}, 1e-6);
  CheckClose(Values(g.tuple_element(2)), {4, 1}, 1e-6);
  tr->mutable_attrs().feature_index = 2;
  CHECK(!Run(EvalBatchNorm, *tr, {&x, &scale, &offset}, env).ok());
}

// ------------------------------------------------------------------------------------------
TEST_CASE("scalar programs agree with the evaluator on every op and type", "[eval][util]") {
  Env env;
  const std::vector<double> fvals = {0, -0.0, 1, -1.5, 3.25, 1e30, -1e-30, INFINITY, -INFINITY, NAN, 65504, 1e-8, 448};
  const std::vector<double> ivals = {0, 1, -1, 127, -128, 255, 1000000, -70000, 3, 2147483647.0, -2147483648.0};
  const std::vector<O> binary = {O::kAdd, O::kSubtract, O::kMultiply, O::kDivide, O::kMaximum, O::kMinimum,
                                 O::kAnd, O::kOr, O::kXor, O::kCompare};
  const std::vector<O> unary = {O::kNegate, O::kAbs, O::kNot, O::kCopy};
  int compiled = 0;
  for (P t : {P::F32, P::BF16, P::F16, P::F64, P::F8E4M3FN, P::S8, P::S32, P::S64, P::U8, P::U32, P::U64,
              P::PRED, P::C64, P::C128}) {
    const bool is_float = IsFloatingPoint(t) || IsComplex(t);
    std::vector<Literal> vals;
    for (double v : is_float ? fvals : ivals) {
      Literal l(Shape(t, {}));
      if (IsComplex(t)) l.SetComplex(0, {v, -v / 2});
      else if (IsFloatingPoint(t)) l.SetDouble(0, v);
      else l.SetInt(0, static_cast<int64_t>(v));
      vals.push_back(std::move(l));
    }
    std::vector<std::pair<HloComputation*, int>> comps;  // computation, arity
    for (O op : binary) {
      if (op == O::kCompare) {
        for (auto d : {ComparisonDirection::kEq, ComparisonDirection::kNe, ComparisonDirection::kLt,
                       ComparisonDirection::kLe, ComparisonDirection::kGt, ComparisonDirection::kGe})
          for (auto ct : {ComparisonType::kDefault, ComparisonType::kTotalOrder})
            comps.push_back({env.Compare(d, {t, t}, IsFloatingPoint(t) ? ct : ComparisonType::kDefault), 2});
        continue;
      }
      comps.push_back({env.Binary(op, t), 2});
    }
    for (O op : unary) {
      HloComputation* c = env.NewComp();
      auto* a = Env::ParamN(c, 0, Shape(t, {}));
      c->set_root_instruction(Env::Add(c, op, Shape(t, {}), {a}));
      comps.push_back({c, 1});
    }
    {  // select(p0 < p1, p0, p1) with a constant folded in: min(p0, p1, 3)
      HloComputation* c = env.NewComp();
      auto* a = Env::ParamN(c, 0, Shape(t, {}));
      auto* b = Env::ParamN(c, 1, Shape(t, {}));
      auto* k = Env::Add(c, O::kConstant, Shape(t, {}));
      k->mutable_attrs().literal = vals[6];
      auto* lt = Env::Add(c, O::kCompare, Shape(P::PRED, {}), {a, b});
      lt->mutable_attrs().comparison_direction = ComparisonDirection::kNe;
      auto* sel = Env::Add(c, O::kSelect, Shape(t, {}), {lt, a, k});
      c->set_root_instruction(Env::Add(c, O::kTuple, Shape::Tuple({Shape(t, {}), Shape(P::PRED, {})}), {sel, lt}));
      comps.push_back({c, 2});
    }
    for (auto [c, arity] : comps) {
      std::optional<evalops::ScalarProgram> prog = evalops::ScalarProgram::Compile(c);
      if (!prog) continue;
      ++compiled;
      for (size_t i = 0; i < vals.size(); ++i)
        for (size_t j = 0; j < (arity == 2 ? vals.size() : 1); ++j) {
          std::vector<const Literal*> args = {&vals[i]};
          if (arity == 2) args.push_back(&vals[j]);
          absl::StatusOr<Literal> want = EvaluateComputation(*c, args);
          if (!want.ok()) continue;  // an op the evaluator rejects for this type
          evalops::Value in[2], out[2];
          for (size_t k = 0; k < args.size(); ++k) in[k] = evalops::LoadValue(*args[k], 0);
          prog->Run(in, out);
          for (int64_t r = 0; r < prog->num_results(); ++r) {
            const Literal& w = want->shape().IsTuple() ? want->tuple_element(r) : *want;
            Literal got(w.shape());
            evalops::StoreValue(got, 0, out[r]);
            INFO(std::string(PrimitiveTypeName(t)) << " " << c->root_instruction()->name() << " "
                 << std::string(HloOpcodeString(c->root_instruction()->opcode())) << " args " << i << "," << j
                 << " got " << got.GetDouble(0) << " want " << w.GetDouble(0));
            const bool both_nan = IsFloatingPoint(w.element_type()) && std::isnan(w.GetDouble(0)) &&
                                  std::isnan(got.GetDouble(0));
            const bool cnan = IsComplex(w.element_type()) &&
                              (std::isnan(std::abs(w.GetComplex(0))) && std::isnan(std::abs(got.GetComplex(0))));
            CHECK((both_nan || cnan || got == w));
          }
        }
    }
  }
  CHECK(compiled > 150);
}

TEST_CASE("ops util: index iteration, total order keys, reducer recognition", "[eval][util]") {
  using namespace evalops;
  std::vector<int64_t> offs;
  ForEachOffset(std::vector<int64_t>{2, 3}, std::vector<int64_t>{1, 2}, [&](int64_t, int64_t o) { offs.push_back(o); });
  CHECK(offs == std::vector<int64_t>{0, 2, 4, 1, 3, 5});
  offs.clear();
  ForEachOffset(std::vector<int64_t>{2, 0}, std::vector<int64_t>{1, 2}, [&](int64_t, int64_t o) { offs.push_back(o); });
  CHECK(offs.empty());
  CHECK(TotalOrderKey(P::F32, EncodeFloat(P::F32, -0.0)) < TotalOrderKey(P::F32, EncodeFloat(P::F32, 0.0)));
  CHECK(TotalOrderKey(P::BF16, EncodeFloat(P::BF16, -2.0)) < TotalOrderKey(P::BF16, EncodeFloat(P::BF16, -1.0)));
  CHECK(*WindowedOutputSize(4, Wd(2)) == 3);
  CHECK(*WindowedOutputSize(4, Wd(2, 2, 1, 1)) == 3);
  CHECK(*WindowedOutputSize(3, Wd(2, 1, 0, 0, 2)) == 4);
  CHECK(*WindowedOutputSize(2, Wd(5)) == 0);
  CHECK(!WindowedOutputSize(int64_t{1} << 40, Wd(1, 1, 0, 0, int64_t{1} << 30)).ok());
  CHECK(!WindowedOutputSize(4, Wd(2, 0)).ok());
  CHECK(!WindowedOutputSize(4, Wd(2, 1, -(int64_t{1} << 50))).ok());
  CHECK(WrapInt(P::S8, 200) == -56);
  CHECK(WrapInt(P::U4, 17) == 1);
  CHECK(RoundToElementType(P::BF16, 1.0 + 1.0 / 256) == 1.0);
  CHECK(RoundToElementType(P::BF16, 1.0 + 3.0 / 256) == 1.0 + 4.0 / 256);
  Env env;
  CHECK(MatchBinaryReducer(env.Binary(O::kAdd, P::F32), P::F32) == BinaryReducer::kAdd);
  CHECK(!MatchBinaryReducer(env.Binary(O::kAdd, P::F32), P::F64));
  CHECK(!MatchBinaryReducer(env.Binary(O::kSubtract, P::F32), P::F32));
  CHECK(!MatchBinaryReducer(env.Binary(O::kAnd, P::F32), P::F32));
  CHECK(MatchBinaryReducer(env.Binary(O::kXor, P::U8, true), P::U8) == BinaryReducer::kXor);
}

// Mutated attributes and shapes: starting from valid instructions, one field at a time is
// nudged (or an operand reshaped); every kernel must answer with a result or an error, never
// crash or read out of bounds (run under ASan/UBSan this checks the validation is complete).
namespace {
std::vector<std::vector<int64_t>*> VecFields(InstructionAttributes& a) {
  std::vector<std::vector<int64_t>*> v = {&a.dimensions, &a.dynamic_slice_sizes, &a.fft_length};
  if (auto& d = a.dot_dimension_numbers)
    for (auto* x : {&d->lhs_batch_dimensions, &d->rhs_batch_dimensions, &d->lhs_contracting_dimensions,
                    &d->rhs_contracting_dimensions})
      v.push_back(x);
  if (auto& d = a.convolution_dimension_numbers)
    for (auto* x : {&d->input_spatial_dimensions, &d->kernel_spatial_dimensions, &d->output_spatial_dimensions})
      v.push_back(x);
  if (auto& g = a.gather_dimension_numbers)
    for (auto* x : {&g->offset_dims, &g->collapsed_slice_dims, &g->start_index_map, &g->operand_batching_dims,
                    &g->start_indices_batching_dims})
      v.push_back(x);
  if (auto& s = a.scatter_dimension_numbers)
    for (auto* x : {&s->update_window_dims, &s->inserted_window_dims, &s->scatter_dims_to_operand_dims,
                    &s->input_batching_dims, &s->scatter_indices_batching_dims})
      v.push_back(x);
  return v;
}
std::vector<int64_t*> IntFields(InstructionAttributes& a) {
  std::vector<int64_t*> v = {&a.k, &a.num_carries, &a.feature_index, &a.feature_group_count, &a.batch_group_count};
  if (auto& d = a.convolution_dimension_numbers)
    for (auto* x : {&d->input_batch_dimension, &d->input_feature_dimension, &d->kernel_input_feature_dimension,
                    &d->kernel_output_feature_dimension, &d->output_batch_dimension, &d->output_feature_dimension})
      v.push_back(x);
  if (a.gather_dimension_numbers) v.push_back(&a.gather_dimension_numbers->index_vector_dim);
  if (a.scatter_dimension_numbers) v.push_back(&a.scatter_dimension_numbers->index_vector_dim);
  if (a.window)
    for (WindowDimension& w : a.window->dimensions)
      for (auto* x : {&w.size, &w.stride, &w.padding_low, &w.padding_high, &w.base_dilation, &w.window_dilation})
        v.push_back(x);
  return v;
}
}  // namespace

TEST_CASE("mutated attributes and shapes never crash", "[eval][fuzz]") {
  Env env;
  std::mt19937 rng(1234);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  struct Seed {
    Kernel kernel;
    std::unique_ptr<HloInstruction> inst;
    std::vector<Literal> ops;
  };
  std::vector<Seed> seeds;
  auto add_seed = [&](Kernel k, std::unique_ptr<HloInstruction> i, std::vector<Literal> ops) {
    seeds.push_back({std::move(k), std::move(i), std::move(ops)});
  };
  {
    auto d = Inst(O::kDot, Shape(P::F32, {2, 2, 4}));
    d->mutable_attrs().dot_dimension_numbers = DotDims({0}, {0}, {2}, {1});
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {2, 2, 3}));
    o.push_back(Iota(P::F32, {2, 3, 4}));
    add_seed(EvalDot, std::move(d), std::move(o));
  }
  {
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {2, 5, 2}));
    o.push_back(Iota(P::F32, {2, 1, 4}));
    add_seed(EvalConvolution, Conv1D({2, 4, 4}, Wd(2, 1, 0, 0, 1, 1), 2), std::move(o));
  }
  {
    auto r = Inst(O::kReduceWindow, Shape(P::F32, {2, 3}));
    r->mutable_attrs().window = Window{{Wd(2, 2, 1, 0), Wd(2, 1, 0, 0, 1, 2)}};
    r->mutable_called_computations() = {env.Binary(O::kAdd, P::F32)};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {3, 5}));
    o.push_back(Scalar(P::F32, 0));
    add_seed(EvalReduceWindow, std::move(r), std::move(o));
  }
  {
    auto r = Inst(O::kReduce, Shape(P::F32, {3}));
    r->mutable_attrs().dimensions = {0, 2};
    r->mutable_called_computations() = {env.Binary(O::kSubtract, P::F32)};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {2, 3, 2}));
    o.push_back(Scalar(P::F32, 0));
    add_seed(EvalReduce, std::move(r), std::move(o));
  }
  {
    auto g = Inst(O::kGather, Shape(P::F32, {2, 2, 2}));
    GatherDimensionNumbers gd;
    gd.offset_dims = {1, 2};
    gd.start_index_map = {0, 1};
    gd.index_vector_dim = 1;
    g->mutable_attrs().gather_dimension_numbers = gd;
    g->mutable_attrs().dynamic_slice_sizes = {2, 2};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {3, 3}));
    o.push_back(Make(P::S32, {2, 2}, {0, 1, 5, -2}));
    add_seed(EvalGather, std::move(g), std::move(o));
  }
  {
    ScatterDimensionNumbers sd;
    sd.update_window_dims = {1};
    sd.inserted_window_dims = {0};
    sd.scatter_dims_to_operand_dims = {0};
    sd.index_vector_dim = 1;
    auto sc = Inst(O::kScatter, Shape(P::F32, {3, 2}));
    sc->mutable_attrs().scatter_dimension_numbers = sd;
    sc->mutable_called_computations() = {env.Binary(O::kMultiply, P::F32)};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {3, 2}));
    o.push_back(Make(P::S32, {2}, {1, 2}));
    o.push_back(Iota(P::F32, {2, 2}));
    add_seed(EvalScatter, std::move(sc), std::move(o));
  }
  {
    auto ss = Inst(O::kSelectAndScatter, Shape(P::F32, {4, 4}));
    ss->mutable_attrs().window = Window{{Wd(2, 2), Wd(2, 2)}};
    ss->mutable_called_computations() = {env.Compare(ComparisonDirection::kGe, {P::F32, P::F32}),
                                          env.Binary(O::kAdd, P::F32)};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {4, 4}));
    o.push_back(Iota(P::F32, {2, 2}));
    o.push_back(Scalar(P::F32, 0));
    add_seed(EvalSelectAndScatter, std::move(ss), std::move(o));
  }
  {
    auto so = Inst(O::kSort, Shape(P::F32, {2, 3}));
    so->mutable_attrs().dimensions = {1};
    so->mutable_called_computations() = {env.Compare(ComparisonDirection::kGt, {P::F32, P::F32})};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {2, 3}));
    add_seed(EvalSort, std::move(so), std::move(o));
  }
  {
    auto f = Inst(O::kFft, Shape(P::C64, {2, 3}));
    f->mutable_attrs().fft_type = FftType::kRfft;
    f->mutable_attrs().fft_length = {4};
    std::vector<Literal> o;
    o.push_back(Iota(P::F32, {2, 4}));
    add_seed(EvalFft, std::move(f), std::move(o));
  }
  for (int iter = 0; iter < 4000; ++iter) {
    Seed& seed = seeds[pick(0, seeds.size() - 1)];
    HloInstruction inst(seed.inst->opcode(), seed.inst->shape(), "mutant");
    inst.mutable_attrs() = seed.inst->attrs();
    inst.mutable_called_computations() = seed.inst->called_computations();
    std::vector<Literal> ops = seed.ops;
    for (int m = pick(1, 2); m > 0; --m) {
      InstructionAttributes& a = inst.mutable_attrs();
      switch (pick(0, 3)) {
        case 0: {
          auto v = VecFields(a);
          std::vector<int64_t>* f = v[pick(0, v.size() - 1)];
          if (!f->empty() && pick(0, 2)) (*f)[pick(0, f->size() - 1)] += pick(-2, 2);
          else if (pick(0, 1) || f->empty()) f->push_back(pick(-1, 4));
          else f->pop_back();
          break;
        }
        case 1: {
          auto v = IntFields(a);
          *v[pick(0, v.size() - 1)] += pick(-2, 2);
          break;
        }
        case 2:
          if (inst.shape().IsArray() && inst.shape().rank() > 0)
            inst.mutable_shape().mutable_dimensions()[pick(0, inst.shape().rank() - 1)] += pick(-1, 1);
          break;
        default: {
          Literal& l = ops[pick(0, ops.size() - 1)];
          Dims d = l.shape().dimensions();
          if (!d.empty() && pick(0, 2)) d[pick(0, d.size() - 1)] = pick(0, 4);
          else if (pick(0, 1)) d.push_back(pick(1, 2));
          else if (!d.empty()) d.pop_back();
          l = Iota(l.element_type(), d);
        }
      }
    }
    std::vector<const Literal*> ptrs;
    for (const Literal& l : ops) ptrs.push_back(&l);
    (void)seed.kernel(inst, ptrs, env.ctx);
  }
  // The seeds themselves are valid.
  for (Seed& seed : seeds) {
    std::vector<const Literal*> ptrs;
    for (const Literal& l : seed.ops) ptrs.push_back(&l);
    absl::StatusOr<Literal> r = seed.kernel(*seed.inst, ptrs, env.ctx);
    INFO(r.status().ToString());
    CHECK(r.ok());
  }
}
