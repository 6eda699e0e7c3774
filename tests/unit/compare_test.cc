// Output comparison (src/eval/compare.h): relative-norm error, exact integers and pred,
// NaN/inf rules, complex magnitudes, messages, and which outputs a dot or convolution feeds.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <memory>

#include "eval/compare.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace hloc {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Literal Vec(PrimitiveType t, std::vector<double> values, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  Literal l(Shape(t, dims));
  for (size_t i = 0; i < values.size(); ++i) l.SetDouble(i, values[i]);
  return l;
}

Literal IntVec(PrimitiveType t, std::vector<int64_t> values, std::vector<int64_t> dims = {}) {
  if (dims.empty()) dims = {static_cast<int64_t>(values.size())};
  Literal l(Shape(t, dims));
  for (size_t i = 0; i < values.size(); ++i) l.SetInt(i, values[i]);
  return l;
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST_CASE("DefaultTolerance follows the corpus README", "[compare]") {
  CHECK(DefaultTolerance(PrimitiveType::F32, false) == 1e-4);
  CHECK(DefaultTolerance(PrimitiveType::F32, true) == 2e-3);
  CHECK(DefaultTolerance(PrimitiveType::F64, false) == 1e-4);
  CHECK(DefaultTolerance(PrimitiveType::C64, true) == 2e-3);
  CHECK(DefaultTolerance(PrimitiveType::C128, false) == 1e-4);
  CHECK(DefaultTolerance(PrimitiveType::F16, false) == 1e-2);
  CHECK(DefaultTolerance(PrimitiveType::F16, true) == 1e-2);
  CHECK(DefaultTolerance(PrimitiveType::BF16, true) == 3e-2);
  CHECK(DefaultTolerance(PrimitiveType::F8E4M3FN, false) == 3e-2);
  CHECK(DefaultTolerance(PrimitiveType::F8E5M2, false) == 3e-2);
  CHECK(DefaultTolerance(PrimitiveType::S32, true) == 0);
  CHECK(DefaultTolerance(PrimitiveType::U8, false) == 0);
  CHECK(DefaultTolerance(PrimitiveType::PRED, false) == 0);
}

TEST_CASE("identical floats compare with error 0", "[compare]") {
  Literal a = Vec(PrimitiveType::F32, {1, 2, 3, 4}, {2, 2});
  CompareResult r = CompareLiterals(a, a, 1e-4);
  CHECK(r.ok);
  CHECK(r.error == 0);
  CHECK(r.threshold == 1e-4);
  CHECK(r.message.empty());
  CHECK(r.element_count == 4);
}

TEST_CASE("relative-norm error is ||out - ref|| / ||ref||", "[compare]") {
  Literal ref = Vec(PrimitiveType::F32, {3, 4});           // ||ref|| = 5
  Literal out = Vec(PrimitiveType::F32, {3, 4.0005});      // ||diff|| = 5e-4
  CompareResult r = CompareLiterals(out, ref, 1e-3);
  CHECK(r.ok);
  CHECK(r.error == Approx(1e-4).epsilon(1e-3));
  r = CompareLiterals(out, ref, 5e-5);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "relative error"));
  CHECK(Contains(r.message, "1 of 2 elements differ"));
  CHECK(Contains(r.message, "first at [1]"));
  CHECK(Contains(r.message, "expected 4"));
  CHECK(r.differing_elements == 1);
  CHECK(r.first_difference == std::vector<int64_t>{1});
}

TEST_CASE("first difference is given as a multi-dimensional index", "[compare]") {
  Literal ref = Vec(PrimitiveType::F32, {1, 1, 1, 1, 1, 1}, {2, 3});
  Literal out = Vec(PrimitiveType::F32, {1, 1, 1, 1, 9, 1}, {2, 3});
  CompareResult r = CompareLiterals(out, ref, 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(r.first_difference == std::vector<int64_t>{1, 1});
  CHECK(Contains(r.message, "first at [1,1]: got 9, expected 1"));
}

TEST_CASE("a zero reference holds the absolute norm to the tolerance", "[compare]") {
  Literal ref = Vec(PrimitiveType::F32, {0, 0});
  CHECK(CompareLiterals(Vec(PrimitiveType::F32, {0, 0}), ref, 0).ok);
  CompareResult r = CompareLiterals(Vec(PrimitiveType::F32, {3e-5, 4e-5}), ref, 1e-4);
  CHECK(r.ok);
  CHECK(r.error == Approx(5e-5).epsilon(1e-3));
  CHECK_FALSE(CompareLiterals(Vec(PrimitiveType::F32, {3e-3, 4e-3}), ref, 1e-4).ok);
}

TEST_CASE("NaN equals NaN and only NaN", "[compare]") {
  Literal ref = Vec(PrimitiveType::F32, {kNan, 2});
  CHECK(CompareLiterals(Vec(PrimitiveType::F32, {kNan, 2}), ref, 0).ok);
  CHECK(CompareLiterals(Vec(PrimitiveType::F32, {-kNan, 2}), ref, 0).ok);
  CompareResult r = CompareLiterals(Vec(PrimitiveType::F32, {1, 2}), ref, 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "NaN/inf"));
  CHECK(Contains(r.message, "got 1, expected nan"));
  r = CompareLiterals(ref, Vec(PrimitiveType::F32, {1, 2}), 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "got nan, expected 1"));
  CHECK(r.differing_elements == 1);
}

TEST_CASE("inf must match an inf of the same sign", "[compare]") {
  Literal ref = Vec(PrimitiveType::F32, {kInf, -kInf, 1});
  CompareResult r = CompareLiterals(Vec(PrimitiveType::F32, {kInf, -kInf, 1}), ref, 1e-4);
  CHECK(r.ok);
  CHECK(r.error == 0);  // matching infs do not poison the norm
  r = CompareLiterals(Vec(PrimitiveType::F32, {-kInf, -kInf, 1}), ref, 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "got -inf, expected inf"));
  CHECK_FALSE(CompareLiterals(Vec(PrimitiveType::F32, {3e38, -kInf, 1}), ref, 1e9).ok);
  CHECK_FALSE(CompareLiterals(Vec(PrimitiveType::F32, {kNan, -kInf, 1}), ref, 1e9).ok);
}

TEST_CASE("integers compare exactly whatever the tolerance", "[compare]") {
  Literal ref = IntVec(PrimitiveType::S32, {1, -2, 3, 4, 5, 6}, {2, 3});
  CHECK(CompareLiterals(ref, ref, 0).ok);
  Literal out = IntVec(PrimitiveType::S32, {1, -2, 4, 4, 5, 7}, {2, 3});
  CompareResult r = CompareLiterals(out, ref, 1.0);
  CHECK_FALSE(r.ok);
  CHECK(r.threshold == 0);
  CHECK(r.differing_elements == 2);
  CHECK(r.first_difference == std::vector<int64_t>{0, 2});
  CHECK(Contains(r.message, "2 of 6 elements differ"));
  CHECK(Contains(r.message, "first at [0,2]: got 4, expected 3"));
  CHECK(r.error > 0);

  // u64 above INT64_MAX prints as unsigned.
  Literal u_ref(Shape(PrimitiveType::U64, {1}));
  Literal u_out(Shape(PrimitiveType::U64, {1}));
  u_ref.SetUint(0, 18446744073709551615ull);
  u_out.SetUint(0, 18446744073709551614ull);
  r = CompareLiterals(u_out, u_ref, 1);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "expected 18446744073709551615"));

  // Sub-byte signed types.
  CHECK(CompareLiterals(IntVec(PrimitiveType::S4, {-8, 7}), IntVec(PrimitiveType::S4, {-8, 7}), 0).ok);
  CHECK_FALSE(CompareLiterals(IntVec(PrimitiveType::S4, {-8, 7}), IntVec(PrimitiveType::S4, {-7, 7}), 0).ok);
}

TEST_CASE("pred compares exactly", "[compare]") {
  Literal ref = IntVec(PrimitiveType::PRED, {1, 0, 1});
  CHECK(CompareLiterals(ref, ref, 0).ok);
  CompareResult r = CompareLiterals(IntVec(PrimitiveType::PRED, {1, 1, 1}), ref, 0.5);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "got true, expected false"));
}

TEST_CASE("bf16 and f16 compare by value", "[compare]") {
  Literal ref = Vec(PrimitiveType::BF16, {1.0, 2.0, 3.0, 4.0});
  Literal out = Vec(PrimitiveType::BF16, {1.0, 2.0, 3.0, 4.03125});  // one bf16 ulp at 4
  CompareResult r = CompareLiterals(out, ref, DefaultTolerance(PrimitiveType::BF16, false));
  CHECK(r.ok);
  CHECK(r.error > 0);
  CHECK_FALSE(CompareLiterals(Vec(PrimitiveType::BF16, {1, 2, 3, 8}), ref, 3e-2).ok);
  Literal h = Vec(PrimitiveType::F16, {0.5, kInf});
  CHECK(CompareLiterals(h, h, 1e-2).ok);
}

TEST_CASE("complex numbers compare by magnitude", "[compare]") {
  Literal ref(Shape(PrimitiveType::C64, {2}));
  ref.SetComplex(0, {3, 4});
  ref.SetComplex(1, {0, 0});
  Literal out = ref;
  out.SetComplex(1, {3e-5, 4e-5});  // |diff| = 5e-5, ||ref|| = 5 -> error 1e-5
  CompareResult r = CompareLiterals(out, ref, 1e-4);
  CHECK(r.ok);
  CHECK(r.error == Approx(1e-5).epsilon(1e-2));
  out.SetComplex(1, {0, 1});
  r = CompareLiterals(out, ref, 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "got (0, 1), expected (0, 0)"));
  out.SetComplex(1, {kNan, 0});
  CHECK_FALSE(CompareLiterals(out, ref, 1).ok);
  ref.SetComplex(1, {kNan, 0});
  CHECK(CompareLiterals(out, ref, 1e-4).ok);
}

TEST_CASE("shape and type mismatches are reported, not compared", "[compare]") {
  CompareResult r = CompareLiterals(Vec(PrimitiveType::F32, {1, 2}), Vec(PrimitiveType::F32, {1, 2, 3}), 1);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "shape mismatch: got f32[2], expected f32[3]"));
  r = CompareLiterals(Vec(PrimitiveType::F32, {1, 2, 3, 4}, {2, 2}), Vec(PrimitiveType::F32, {1, 2, 3, 4}, {4, 1}), 1);
  CHECK_FALSE(r.ok);
  r = CompareLiterals(Vec(PrimitiveType::F32, {1, 2}), Vec(PrimitiveType::F64, {1, 2}), 1);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "element type mismatch"));
  r = CompareLiterals(Literal::MakeTuple({}), Vec(PrimitiveType::F32, {1}), 1);
  CHECK_FALSE(r.ok);
}

TEST_CASE("layouts do not matter", "[compare]") {
  Literal a = Vec(PrimitiveType::F32, {1, 2, 3, 4}, {2, 2});
  Literal b = a;
  Layout l;
  l.minor_to_major = {0, 1};
  b.mutable_shape().set_layout(l);
  CHECK(CompareLiterals(a, b, 0).ok);
}

TEST_CASE("tuples compare element by element", "[compare]") {
  Literal ref = Literal::MakeTuple({Vec(PrimitiveType::F32, {1, 2}), IntVec(PrimitiveType::S32, {7})});
  CHECK(CompareLiterals(ref, ref, 0).ok);
  Literal out = Literal::MakeTuple({Vec(PrimitiveType::F32, {1, 2}), IntVec(PrimitiveType::S32, {8})});
  CompareResult r = CompareLiterals(out, ref, 1e-4);
  CHECK_FALSE(r.ok);
  CHECK(Contains(r.message, "tuple element {1}"));
  CHECK_FALSE(CompareLiterals(Literal::MakeTuple({}), ref, 1).ok);
}

TEST_CASE("empty arrays compare equal", "[compare]") {
  Literal e(Shape(PrimitiveType::F32, {0, 3}));
  CompareResult r = CompareLiterals(e, e, 0);
  CHECK(r.ok);
  CHECK(r.error == 0);
}

TEST_CASE("FlattenLeaves lists array leaves in order", "[compare]") {
  Literal a = Vec(PrimitiveType::F32, {1});
  CHECK(FlattenLeaves(a).size() == 1);
  Literal t = Literal::MakeTuple(
      {Vec(PrimitiveType::F32, {1}),
       Literal::MakeTuple({IntVec(PrimitiveType::S32, {2}), Vec(PrimitiveType::F32, {3})}),
       Literal::MakeTuple({}), IntVec(PrimitiveType::S8, {4})});
  std::vector<const Literal*> leaves = FlattenLeaves(t);
  REQUIRE(leaves.size() == 4);
  CHECK(leaves[0]->GetDouble(0) == 1);
  CHECK(leaves[1]->GetInt(0) == 2);
  CHECK(leaves[2]->GetDouble(0) == 3);
  CHECK(leaves[3]->GetInt(0) == 4);
}

// Builds: p0, p1 = f32[2,2]; d = dot(p0, p1); a = add(p0, p0); n = negate(call c(d));
// root = tuple(a, tuple(d, a), n) where c is a computation with a negate.
struct FedFixture {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("m");
  HloInstruction* Add(HloComputation* c, HloOpcode op, std::vector<HloInstruction*> operands,
                      Shape shape, std::string name) {
    auto inst = std::make_unique<HloInstruction>(op, std::move(shape), std::move(name));
    for (HloInstruction* o : operands) inst->AppendOperand(o);
    return c->AddInstruction(std::move(inst));
  }
  HloInstruction* Param(HloComputation* c, int64_t n, Shape shape) {
    auto inst = std::make_unique<HloInstruction>(HloOpcode::kParameter, std::move(shape),
                                                 "p" + std::to_string(n));
    inst->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(inst));
  }
};

TEST_CASE("OutputsFedByDotOrConvolution looks through tuples and calls", "[compare]") {
  FedFixture f;
  Shape s(PrimitiveType::F32, {2, 2});
  auto callee_owned = std::make_unique<HloComputation>("callee");
  HloComputation* callee = callee_owned.get();
  HloInstruction* cp = f.Param(callee, 0, s);
  callee->set_root_instruction(f.Add(callee, HloOpcode::kNegate, {cp}, s, "neg"));
  f.module->AddComputation(std::move(callee_owned));

  auto dotted_owned = std::make_unique<HloComputation>("dotted");
  HloComputation* dotted = dotted_owned.get();
  HloInstruction* dp = f.Param(dotted, 0, s);
  dotted->set_root_instruction(f.Add(dotted, HloOpcode::kDot, {dp, dp}, s, "inner_dot"));
  f.module->AddComputation(std::move(dotted_owned));

  auto entry_owned = std::make_unique<HloComputation>("main");
  HloComputation* entry = entry_owned.get();
  HloInstruction* p0 = f.Param(entry, 0, s);
  HloInstruction* p1 = f.Param(entry, 1, s);
  HloInstruction* d = f.Add(entry, HloOpcode::kDot, {p0, p1}, s, "dot");
  HloInstruction* a = f.Add(entry, HloOpcode::kAdd, {p0, p0}, s, "add");
  HloInstruction* call = f.Add(entry, HloOpcode::kCall, {d}, s, "call");
  call->mutable_called_computations().push_back(callee);
  HloInstruction* n = f.Add(entry, HloOpcode::kNegate, {call}, s, "negate");
  HloInstruction* call2 = f.Add(entry, HloOpcode::kCall, {p0}, s, "call2");
  call2->mutable_called_computations().push_back(dotted);
  HloInstruction* inner = f.Add(entry, HloOpcode::kTuple, {d, a}, Shape::Tuple({s, s}), "inner");
  HloInstruction* root = f.Add(entry, HloOpcode::kTuple, {a, inner, n, call2},
                               Shape::Tuple({s, Shape::Tuple({s, s}), s, s}), "root");
  entry->set_root_instruction(root);
  f.module->AddComputation(std::move(entry_owned), /*is_entry=*/true);

  std::vector<bool> fed = OutputsFedByDotOrConvolution(*f.module);
  CHECK(fed == std::vector<bool>{false, true, false, true, true});
}

TEST_CASE("OutputsFedByDotOrConvolution: a non-tuple producer shares its flag", "[compare]") {
  FedFixture f;
  Shape s(PrimitiveType::F32, {2});
  auto entry_owned = std::make_unique<HloComputation>("main");
  HloComputation* entry = entry_owned.get();
  HloInstruction* p0 = f.Param(entry, 0, Shape::Tuple({s, Shape::Token(), s}));
  entry->set_root_instruction(p0);
  f.module->AddComputation(std::move(entry_owned), true);
  CHECK(OutputsFedByDotOrConvolution(*f.module) == std::vector<bool>{false, false});

  HloModule empty("empty");
  CHECK(OutputsFedByDotOrConvolution(empty).empty());
}

}  // namespace
}  // namespace hloc
