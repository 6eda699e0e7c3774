// Tests of the evaluator core: elementwise ops, data movement, control flow and random bits.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <limits>
#include <string>
#include <vector>

#include "eval/eval_internal.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"

namespace hloc {
namespace {

using P = PrimitiveType;

// dims {-1} (the default) means a vector of v's length; {} a scalar.
Literal Vec(P t, std::vector<double> v, std::vector<int64_t> dims = {-1}) {
  if (dims == std::vector<int64_t>{-1}) dims = {static_cast<int64_t>(v.size())};
  Literal l(Shape(t, dims));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsIntegral(t) || t == P::PRED) l.SetInt(i, static_cast<int64_t>(v[i]));
    else l.SetDouble(i, v[i]);
  }
  return l;
}
Literal Scalar(P t, double v) { return Vec(t, {v}, std::vector<int64_t>{}); }
Literal IVec(P t, std::vector<int64_t> v, std::vector<int64_t> dims = {-1}) {
  if (dims == std::vector<int64_t>{-1}) dims = {static_cast<int64_t>(v.size())};
  Literal l(Shape(t, dims));
  for (size_t i = 0; i < v.size(); ++i) l.SetInt(i, v[i]);
  return l;
}
Literal UVec(P t, std::vector<uint64_t> v) {
  Literal l(Shape(t, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.SetUint(i, v[i]);
  return l;
}

absl::StatusOr<Literal> TryEval(const std::string& text, std::vector<Literal> args,
                                const EvaluatorOptions& options = {}) {
  auto m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  return EvaluateModule(**m, args, options);
}

Literal Eval(const std::string& text, std::vector<Literal> args = {}) {
  auto r = TryEval(text, std::move(args));
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

std::vector<double> Doubles(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}
std::vector<int64_t> Ints(const Literal& l) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetInt(i));
  return v;
}
std::vector<uint64_t> Uints(const Literal& l) {
  std::vector<uint64_t> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetUint(i));
  return v;
}

// A module applying `op` elementwise to parameters of type `t` and `n` elements.
std::string Binary(const std::string& op, const std::string& t, int n, const std::string& out = "") {
  const std::string ty = t + "[" + std::to_string(n) + "]";
  const std::string oty = (out.empty() ? t : out) + "[" + std::to_string(n) + "]";
  return "HloModule m\nENTRY e {\n  a = " + ty + " parameter(0)\n  b = " + ty + " parameter(1)\n  ROOT r = " + oty +
         " " + op + "(a, b)\n}\n";
}
std::string Unary(const std::string& op, const std::string& t, int n, const std::string& out = "") {
  const std::string ty = t + "[" + std::to_string(n) + "]";
  const std::string oty = (out.empty() ? t : out) + "[" + std::to_string(n) + "]";
  return "HloModule m\nENTRY e {\n  a = " + ty + " parameter(0)\n  ROOT r = " + oty + " " + op + "(a)\n}\n";
}

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

TEST_CASE("float arithmetic, NaN-propagating max/min and power", "[eval]") {
  auto a = Vec(P::F32, {1, -2, kNaN, 0, 2});
  auto b = Vec(P::F32, {3, kNaN, 1, 0, 0.5});
  auto sum = Doubles(Eval(Binary("add", "f32", 5), {a, b}));
  CHECK(sum[0] == 4);
  CHECK(std::isnan(sum[1]));
  auto mx = Doubles(Eval(Binary("maximum", "f32", 5), {a, b}));
  CHECK(mx[0] == 3);
  CHECK(std::isnan(mx[1]));
  CHECK(std::isnan(mx[2]));
  auto mn = Doubles(Eval(Binary("minimum", "f32", 5), {a, b}));
  CHECK(mn[0] == 1);
  CHECK(std::isnan(mn[1]));
  auto pw = Doubles(Eval(Binary("power", "f32", 5), {a, b}));
  CHECK(pw[0] == 1);
  CHECK(pw[3] == 1);  // 0^0
  CHECK(pw[4] == Approx(std::sqrt(2.0)));
  auto rem = Doubles(Eval(Binary("remainder", "f32", 2), {Vec(P::F32, {7.5, -7.5}), Vec(P::F32, {2, 2})}));
  CHECK(rem == std::vector<double>{1.5, -1.5});
  auto at = Doubles(Eval(Binary("atan2", "f64", 1), {Vec(P::F64, {1}), Vec(P::F64, {-1})}));
  CHECK(at[0] == Approx(3 * M_PI / 4));
}

TEST_CASE("narrow floats compute in f32 and round to their type", "[eval]") {
  // 1 + 2^-8 is not a bf16; it rounds to even (1.0).
  auto r = Eval(Binary("add", "bf16", 2), {Vec(P::BF16, {1, 256}), Vec(P::BF16, {0.00390625, 1})});
  CHECK(Doubles(r) == std::vector<double>{1, 256});
  auto h = Eval(Binary("multiply", "f16", 1), {Vec(P::F16, {300}), Vec(P::F16, {300})});
  CHECK(std::isinf(h.GetDouble(0)));  // 90000 overflows f16
  auto f8 = Eval(Binary("add", "f8e4m3fn", 2), {Vec(P::F8E4M3FN, {1, 448}), Vec(P::F8E4M3FN, {0.125, 448})});
  CHECK(f8.GetDouble(0) == 1.125);
  CHECK(std::isnan(f8.GetDouble(1)));  // e4m3fn has no infinity
}

TEST_CASE("integer division and remainder edge cases", "[eval]") {
  const int64_t kMin = std::numeric_limits<int32_t>::min();
  auto a = IVec(P::S32, {7, -7, 5, kMin, kMin});
  auto b = IVec(P::S32, {2, 2, 0, -1, 0});
  CHECK(Ints(Eval(Binary("divide", "s32", 5), {a, b})) == std::vector<int64_t>{3, -3, -1, kMin, -1});
  CHECK(Ints(Eval(Binary("remainder", "s32", 5), {a, b})) == std::vector<int64_t>{1, -1, 5, 0, kMin});
  auto s8 = Eval(Binary("divide", "s8", 1), {IVec(P::S8, {-128}), IVec(P::S8, {-1})});
  CHECK(s8.GetInt(0) == -128);
  auto u = Eval(Binary("divide", "u32", 2), {UVec(P::U32, {9, 9}), UVec(P::U32, {0, 2})});
  CHECK(Uints(u) == std::vector<uint64_t>{0xFFFFFFFFu, 4});
  auto ur = Eval(Binary("remainder", "u64", 1), {UVec(P::U64, {9}), UVec(P::U64, {0})});
  CHECK(ur.GetUint(0) == 9);
}

TEST_CASE("integer power follows XLA", "[eval]") {
  auto r = Eval(Binary("power", "s32", 6), {IVec(P::S32, {2, -2, 2, 1, 0, -1}), IVec(P::S32, {10, 3, -1, -5, 0, -1})});
  CHECK(Ints(r) == std::vector<int64_t>{1024, -8, 0, 1, 1, 0});
  auto w = Eval(Binary("power", "s8", 1), {IVec(P::S8, {3}), IVec(P::S8, {5})});
  CHECK(w.GetInt(0) == 243 - 256);  // wraps like repeated multiplication
  auto u = Eval(Binary("power", "u8", 1), {IVec(P::U8, {3}), IVec(P::U8, {5})});
  CHECK(u.GetInt(0) == 243);
}

TEST_CASE("integer overflow wraps", "[eval]") {
  auto r = Eval(Binary("add", "s32", 1), {IVec(P::S32, {2147483647}), IVec(P::S32, {1})});
  CHECK(r.GetInt(0) == -2147483648LL);
  auto m = Eval(Binary("multiply", "u8", 1), {IVec(P::U8, {16}), IVec(P::U8, {17})});
  CHECK(m.GetInt(0) == (16 * 17) % 256);
  auto s4 = Eval(Binary("add", "s4", 1), {IVec(P::S4, {7}), IVec(P::S4, {1})});
  CHECK(s4.GetInt(0) == -8);
  auto neg = Eval(Unary("negate", "s32", 1), {IVec(P::S32, {-2147483648LL})});
  CHECK(neg.GetInt(0) == -2147483648LL);
  auto abs = Eval(Unary("abs", "s8", 2), {IVec(P::S8, {-128, -5})});
  CHECK(Ints(abs) == std::vector<int64_t>{-128, 5});
}

TEST_CASE("shifts: out-of-range amounts give 0 or the sign fill", "[eval]") {
  auto a = IVec(P::S32, {1, -8, -8, 1, -1});
  auto b = IVec(P::S32, {31, 1, 40, 32, -1});
  CHECK(Ints(Eval(Binary("shift-left", "s32", 5), {a, b})) ==
        std::vector<int64_t>{-2147483648LL, -16, 0, 0, 0});
  CHECK(Ints(Eval(Binary("shift-right-arithmetic", "s32", 5), {a, b})) == std::vector<int64_t>{0, -4, -1, 0, -1});
  CHECK(Ints(Eval(Binary("shift-right-logical", "s32", 5), {a, b})) ==
        std::vector<int64_t>{0, 0x7FFFFFFC, 0, 0, 0});
  auto u = Eval(Binary("shift-right-arithmetic", "u8", 2), {IVec(P::U8, {0x80, 0x80}), IVec(P::U8, {1, 8})});
  CHECK(Ints(u) == std::vector<int64_t>{0xC0, 0xFF});
  auto ul = Eval(Binary("shift-left", "u32", 2), {UVec(P::U32, {0xFFFFFFFF, 3}), UVec(P::U32, {4, 32})});
  CHECK(Uints(ul) == std::vector<uint64_t>{0xFFFFFFF0u, 0});
}

TEST_CASE("bitwise ops, not, popcnt and clz", "[eval]") {
  CHECK(Ints(Eval(Binary("xor", "u8", 1), {IVec(P::U8, {0xF0}), IVec(P::U8, {0xFF})})) == std::vector<int64_t>{0x0F});
  CHECK(Ints(Eval(Unary("not", "s32", 2), {IVec(P::S32, {0, -1})})) == std::vector<int64_t>{-1, 0});
  CHECK(Ints(Eval(Unary("not", "pred", 2), {IVec(P::PRED, {0, 1})})) == std::vector<int64_t>{1, 0});
  CHECK(Ints(Eval(Binary("and", "pred", 2), {IVec(P::PRED, {1, 1}), IVec(P::PRED, {0, 1})})) == std::vector<int64_t>{0, 1});
  CHECK(Ints(Eval(Unary("popcnt", "s8", 2), {IVec(P::S8, {-1, 5})})) == std::vector<int64_t>{8, 2});
  CHECK(Ints(Eval(Unary("count-leading-zeros", "s32", 3), {IVec(P::S32, {0, 1, -1})})) == std::vector<int64_t>{32, 31, 0});
  CHECK(Ints(Eval(Unary("count-leading-zeros", "u8", 1), {IVec(P::U8, {1})})) == std::vector<int64_t>{7});
}

TEST_CASE("float unary ops", "[eval]") {
  auto x = Vec(P::F32, {-2.5, 2.5, -0.0, kNaN, 0.5});
  CHECK(Doubles(Eval(Unary("round-nearest-afz", "f32", 2), {Vec(P::F32, {-2.5, 2.5})})) == std::vector<double>{-3, 3});
  CHECK(Doubles(Eval(Unary("round-nearest-even", "f32", 2), {Vec(P::F32, {-2.5, 3.5})})) == std::vector<double>{-2, 4});
  CHECK(Doubles(Eval(Unary("floor", "f32", 1), {Vec(P::F32, {-2.5})})) == std::vector<double>{-3});
  CHECK(Doubles(Eval(Unary("ceil", "f32", 1), {Vec(P::F32, {-2.5})})) == std::vector<double>{-2});
  auto s = Doubles(Eval(Unary("sign", "f32", 5), {x}));
  CHECK(s[0] == -1);
  CHECK(s[1] == 1);
  CHECK((s[2] == 0 && std::signbit(s[2])));
  CHECK(std::isnan(s[3]));
  CHECK(Doubles(Eval(Unary("sign", "s32", 3), {IVec(P::S32, {-7, 0, 9})})) == std::vector<double>{-1, 0, 1});
  CHECK(Eval(Unary("rsqrt", "f32", 1), {Vec(P::F32, {4})}).GetDouble(0) == 0.5);
  CHECK(Eval(Unary("cbrt", "f64", 1), {Vec(P::F64, {-27})}).GetDouble(0) == Approx(-3));
  CHECK(Eval(Unary("exponential-minus-one", "f64", 1), {Vec(P::F64, {1e-10})}).GetDouble(0) == Approx(1e-10));
  CHECK(Eval(Unary("log-plus-one", "f64", 1), {Vec(P::F64, {1e-10})}).GetDouble(0) == Approx(1e-10));
  CHECK(Eval(Unary("erf", "f32", 1), {Vec(P::F32, {0.5})}).GetDouble(0) == Approx(std::erf(0.5)));
  CHECK(Eval(Unary("tanh", "bf16", 1), {Vec(P::BF16, {0.5})}).GetDouble(0) == Approx(std::tanh(0.5)).epsilon(1e-2));
  auto fin = Eval(Unary("is-finite", "f32", 3, "pred"), {Vec(P::F32, {1, kInf, kNaN})});
  CHECK(Ints(fin) == std::vector<int64_t>{1, 0, 0});
  auto e = TryEval(Unary("exponential", "s32", 1), {IVec(P::S32, {1})});
  CHECK(!e.ok());
}

TEST_CASE("complex ops", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  re = f32[2] parameter(0)
  im = f32[2] parameter(1)
  c = c64[2] complex(re, im)
  m = c64[2] multiply(c, c)
  r = f32[2] real(m)
  i = f32[2] imag(m)
  a = f32[2] abs(c)
  ROOT t = (f32[2], f32[2], f32[2]) tuple(r, i, a)
})";
  auto r = Eval(text, {Vec(P::F32, {1, 3}), Vec(P::F32, {2, 4})});
  CHECK(Doubles(r.tuple_element(0)) == std::vector<double>{-3, -7});
  CHECK(Doubles(r.tuple_element(1)) == std::vector<double>{4, 24});
  CHECK(Doubles(r.tuple_element(2))[1] == Approx(5));
}

TEST_CASE("compare: float, total order, signedness", "[eval]") {
  auto a = Vec(P::F32, {1, kNaN, -0.0, 2});
  auto b = Vec(P::F32, {1, kNaN, 0.0, kNaN});
  auto cmp = [](const std::string& dir, const std::string& type) {
    return "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  ROOT r = pred[4] compare(a, b), direction=" +
           dir + type + "\n}\n";
  };
  CHECK(Ints(Eval(cmp("EQ", ""), {a, b})) == std::vector<int64_t>{1, 0, 1, 0});
  CHECK(Ints(Eval(cmp("NE", ""), {a, b})) == std::vector<int64_t>{0, 1, 0, 1});
  CHECK(Ints(Eval(cmp("LT", ""), {a, b})) == std::vector<int64_t>{0, 0, 0, 0});
  // Total order: -0 < +0 and NaN above everything; NaN equals itself.
  CHECK(Ints(Eval(cmp("LT", ", type=TOTALORDER"), {a, b})) == std::vector<int64_t>{0, 0, 1, 1});
  CHECK(Ints(Eval(cmp("EQ", ", type=TOTALORDER"), {a, b})) == std::vector<int64_t>{1, 1, 0, 0});
  auto u = Eval(
      "HloModule m\nENTRY e {\n  a = u32[1] parameter(0)\n  b = u32[1] parameter(1)\n  ROOT r = pred[1] compare(a, b), direction=GT\n}\n",
      {UVec(P::U32, {0x80000000u}), UVec(P::U32, {1})});
  CHECK(u.GetInt(0) == 1);
  auto s = Eval(
      "HloModule m\nENTRY e {\n  a = s8[1] parameter(0)\n  b = s8[1] parameter(1)\n  ROOT r = pred[1] compare(a, b), direction=GT\n}\n",
      {IVec(P::S8, {-1}), IVec(P::S8, {1})});
  CHECK(s.GetInt(0) == 0);
}

TEST_CASE("convert saturates floats and wraps integers", "[eval]") {
  auto f = Vec(P::F32, {1e10, -1e10, kNaN, -3.7, 3.7});
  CHECK(Ints(Eval(Unary("convert", "f32", 5, "s32"), {f})) ==
        std::vector<int64_t>{2147483647, -2147483648LL, 0, -3, 3});
  CHECK(Ints(Eval(Unary("convert", "f32", 5, "u8"), {f})) == std::vector<int64_t>{255, 0, 0, 0, 3});
  CHECK(Ints(Eval(Unary("convert", "s32", 2, "s8"), {IVec(P::S32, {300, -129})})) == std::vector<int64_t>{44, 127});
  CHECK(Ints(Eval(Unary("convert", "f32", 3, "pred"), {Vec(P::F32, {0.5, 0, -0.0})})) == std::vector<int64_t>{1, 0, 0});
  CHECK(Ints(Eval(Unary("convert", "f64", 1, "s64"), {Vec(P::F64, {1e30})})) ==
        std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
  auto bf = Eval(Unary("convert", "f32", 2, "bf16"), {Vec(P::F32, {1.00390625, 1.01171875})});
  CHECK(Doubles(bf) == std::vector<double>{1.0, 1.015625});  // ties to even
  auto f8 = Eval(Unary("convert", "f32", 2, "f8e5m2"), {Vec(P::F32, {1e6, 0.3})});
  CHECK(std::isinf(f8.GetDouble(0)));
  CHECK(f8.GetDouble(1) == 0.3125);
  auto big = Eval(Unary("convert", "s64", 1, "f32"), {IVec(P::S64, {(int64_t{1} << 53) + 1})});
  CHECK(big.GetDouble(0) == std::ldexp(1.0, 53));
  const std::string c = "HloModule m\nENTRY e {\n  a = c64[1] parameter(0)\n  ROOT r = f32[1] convert(a)\n}\n";
  Literal z(Shape(P::C64, {1}));
  z.SetComplex(0, {2.5, -1});
  CHECK(Eval(c, {z}).GetDouble(0) == 2.5);
}

TEST_CASE("bitcast-convert reinterprets bits, splitting and merging little-endian", "[eval]") {
  auto u = Eval(Unary("bitcast-convert", "f32", 1, "u32"), {Vec(P::F32, {1.0})});
  CHECK(u.GetUint(0) == 0x3f800000u);
  const std::string split = "HloModule m\nENTRY e {\n  a = u32[2] parameter(0)\n  ROOT r = u8[2,4] bitcast-convert(a)\n}\n";
  auto s = Eval(split, {UVec(P::U32, {0x04030201u, 0xA0B0C0D0u})});
  CHECK(Ints(s) == std::vector<int64_t>{1, 2, 3, 4, 0xD0, 0xC0, 0xB0, 0xA0});
  const std::string merge = "HloModule m\nENTRY e {\n  a = u16[3,2] parameter(0)\n  ROOT r = s32[3] bitcast-convert(a)\n}\n";
  auto m = Eval(merge, {IVec(P::U16, {1, 0, 0xFFFF, 0xFFFF, 0, 1}, {3, 2})});
  CHECK(Ints(m) == std::vector<int64_t>{1, -1, 65536});
  const std::string nib = "HloModule m\nENTRY e {\n  a = u8[1] parameter(0)\n  ROOT r = s4[1,2] bitcast-convert(a)\n}\n";
  CHECK(Ints(Eval(nib, {IVec(P::U8, {0x9A})})) == std::vector<int64_t>{-6, -7});
}

TEST_CASE("reduce-precision rounds to nearest even and overflows to inf", "[eval]") {
  auto rp = [](int e, int m) {
    return "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  ROOT r = f32[4] reduce-precision(a), exponent_bits=" +
           std::to_string(e) + ", mantissa_bits=" + std::to_string(m) + "\n}\n";
  };
  auto x = Vec(P::F32, {1.00390625, 1.01171875, 70000, kNaN});
  auto bf = Doubles(Eval(rp(8, 7), {x}));
  CHECK(bf[0] == 1.0);
  CHECK(bf[1] == 1.015625);
  CHECK(bf[2] == 70144);  // 70000 in bf16
  CHECK(std::isnan(bf[3]));
  auto h = Doubles(Eval(rp(5, 10), {x}));
  CHECK(std::isinf(h[2]));  // beyond f16's range
  CHECK(std::isnan(h[3]));
}

TEST_CASE("select and clamp", "[eval]") {
  const std::string sel = R"(HloModule m
ENTRY e {
  p = pred[3] parameter(0)
  a = s16[3] parameter(1)
  b = s16[3] parameter(2)
  ROOT r = s16[3] select(p, a, b)
})";
  CHECK(Ints(Eval(sel, {IVec(P::PRED, {1, 0, 1}), IVec(P::S16, {1, 2, 3}), IVec(P::S16, {-1, -2, -3})})) ==
        std::vector<int64_t>{1, -2, 3});
  const std::string clamp = R"(HloModule m
ENTRY e {
  lo = f32[] parameter(0)
  x = f32[4] parameter(1)
  hi = f32[] parameter(2)
  ROOT r = f32[4] clamp(lo, x, hi)
})";
  auto c = Doubles(Eval(clamp, {Scalar(P::F32, -1), Vec(P::F32, {-5, 0.5, 5, kNaN}), Scalar(P::F32, 1)}));
  CHECK(c[0] == -1);
  CHECK(c[1] == 0.5);
  CHECK(c[2] == 1);
  CHECK(std::isnan(c[3]));
}

TEST_CASE("iota, broadcast, reshape, transpose", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  i = s32[2,3] iota(), iota_dimension=1
  x = f32[3] parameter(0)
  b = f32[2,3] broadcast(x), dimensions={1}
  t = f32[3,2] transpose(b), dimensions={1,0}
  r = f32[6] reshape(t)
  ROOT out = (s32[2,3], f32[6]) tuple(i, r)
})";
  auto r = Eval(text, {Vec(P::F32, {1, 2, 3})});
  CHECK(Ints(r.tuple_element(0)) == std::vector<int64_t>{0, 1, 2, 0, 1, 2});
  CHECK(Doubles(r.tuple_element(1)) == std::vector<double>{1, 1, 2, 2, 3, 3});
  auto f = Eval("HloModule m\nENTRY e {\n  ROOT i = bf16[4] iota(), iota_dimension=0\n}\n");
  CHECK(Doubles(f) == std::vector<double>{0, 1, 2, 3});
}

TEST_CASE("slice, reverse, concatenate, pad", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  x = s32[2,5] parameter(0)
  s = s32[2,2] slice(x), slice={[0:2], [1:5:2]}
  r = s32[2,5] reverse(x), dimensions={1}
  c = s32[2,7] concatenate(s, x), dimensions={1}
  z = s32[] constant(0)
  p = s32[4,4] pad(s, z), padding=1_1x-1_1_2
  ROOT t = (s32[2,2], s32[2,5], s32[2,7], s32[4,4]) tuple(s, r, c, p)
})";
  auto r = Eval(text, {IVec(P::S32, {0, 1, 2, 3, 4, 10, 11, 12, 13, 14}, {2, 5})});
  CHECK(Ints(r.tuple_element(0)) == std::vector<int64_t>{1, 3, 11, 13});
  CHECK(Ints(r.tuple_element(1)) == std::vector<int64_t>{4, 3, 2, 1, 0, 14, 13, 12, 11, 10});
  CHECK(Ints(r.tuple_element(2)) == std::vector<int64_t>{1, 3, 0, 1, 2, 3, 4, 11, 13, 10, 11, 12, 13, 14});
  // Dimension 1: interior 2 turns [a,b] into [a,0,0,b]; low -1 drops a; high 1 appends 0.
  CHECK(Ints(r.tuple_element(3)) ==
        std::vector<int64_t>{0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 13, 0, 0, 0, 0, 0});
}

TEST_CASE("dynamic-slice and dynamic-update-slice clamp their starts", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  i = s64[] parameter(1)
  j = u8[] parameter(2)
  ds = f32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}
  u = f32[2] constant({-1, -2})
  dus = f32[5] dynamic-update-slice(x, u, j)
  ROOT t = (f32[2], f32[5]) tuple(ds, dus)
})";
  auto r = Eval(text, {Vec(P::F32, {0, 1, 2, 3, 4}), IVec(P::S64, {7}, std::vector<int64_t>{}), IVec(P::U8, {200}, std::vector<int64_t>{})});
  CHECK(Doubles(r.tuple_element(0)) == std::vector<double>{3, 4});
  CHECK(Doubles(r.tuple_element(1)) == std::vector<double>{0, 1, 2, -1, -2});
  auto neg = Eval(text, {Vec(P::F32, {0, 1, 2, 3, 4}), IVec(P::S64, {-3}, std::vector<int64_t>{}), IVec(P::U8, {1}, std::vector<int64_t>{})});
  CHECK(Doubles(neg.tuple_element(0)) == std::vector<double>{0, 1});
  CHECK(Doubles(neg.tuple_element(1)) == std::vector<double>{0, -1, -2, 3, 4});
}

TEST_CASE("bitcast reinterprets the physical layout", "[eval]") {
  // x is column-major: its bytes are x00 x10 x01 x11 x02 x12, read back row-major as [3,2].
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  ROOT b = f32[3,2]{1,0} bitcast(x)
})";
  CHECK(Doubles(Eval(text, {Vec(P::F32, {0, 1, 2, 3, 4, 5}, {2, 3})})) == std::vector<double>{0, 3, 1, 4, 2, 5});
}

TEST_CASE("while loop, call, fusion and tuples", "[eval]") {
  const std::string text = R"(HloModule m
body {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  x = f32[4] get-tuple-element(t), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  c = f32[] convert(i2)
  cb = f32[4] broadcast(c), dimensions={}
  x2 = f32[4] add(x, cb)
  ROOT r = (s32[], f32[4]) tuple(i2, x2)
}
cond {
  t = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
double {
  p = f32[4] parameter(0)
  ROOT d = f32[4] add(p, p)
}
fused {
  p = f32[4] parameter(0)
  ROOT n = f32[4] negate(p)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  y = f32[4] get-tuple-element(w), index=1
  d = f32[4] call(y), to_apply=double
  ROOT f = f32[4] fusion(d), kind=kLoop, calls=fused
})";
  auto r = Eval(text, {Vec(P::F32, {0, 1, 2, 3})});
  CHECK(Doubles(r) == std::vector<double>{-110, -112, -114, -116});  // -(2 * (x + 55))
  EvaluatorOptions few;
  few.max_loop_iterations = 5;
  auto capped = TryEval(text, {Vec(P::F32, {0, 1, 2, 3})}, few);
  REQUIRE(!capped.ok());
  CHECK(capped.status().message().find("max_loop_iterations") != std::string::npos);
  CHECK(capped.status().message().find("%w") != std::string::npos);
}

TEST_CASE("a loop updating a buffer in place", "[eval]") {
  // Writes i into element i of a 100000-element buffer, 2000 times; copying the buffer on
  // every trip would move 800 MB.
  const std::string text = R"(HloModule m
body {
  t = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  buf = f32[100000] get-tuple-element(t), index=1
  v = f32[] convert(i)
  vv = f32[1] reshape(v)
  u = f32[100000] dynamic-update-slice(buf, vv, i)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[100000]) tuple(i2, u)
}
cond {
  t = (s32[], f32[100000]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(2000)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  z = s32[] constant(0)
  zf = f32[] constant(-1)
  b = f32[100000] broadcast(zf), dimensions={}
  init = (s32[], f32[100000]) tuple(z, b)
  w = (s32[], f32[100000]) while(init), condition=cond, body=body
  ROOT y = f32[100000] get-tuple-element(w), index=1
})";
  auto r = Eval(text);
  CHECK(r.GetDouble(0) == 0);
  CHECK(r.GetDouble(1999) == 1999);
  CHECK(r.GetDouble(2000) == -1);
}

TEST_CASE("a tuple element read twice is not taken over", "[eval]") {
  const std::string text = R"(HloModule m
body {
  t = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  a = f32[2] get-tuple-element(t), index=1
  b = f32[2] get-tuple-element(t), index=1
  s = f32[2] add(a, b)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[2]) tuple(i2, s)
}
cond {
  t = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  x = f32[2] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, x)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT y = f32[2] get-tuple-element(w), index=1
})";
  CHECK(Doubles(Eval(text, {Vec(P::F32, {1, 2})})) == std::vector<double>{8, 16});
}

TEST_CASE("conditional by pred and by index", "[eval]") {
  const std::string text = R"(HloModule m
b0 {
  p = f32[] parameter(0)
  ROOT r = f32[] negate(p)
}
b1 {
  p = f32[] parameter(0)
  ROOT r = f32[] add(p, p)
}
b2 {
  p = f32[] parameter(0)
  ROOT r = f32[] multiply(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
})";
  auto run = [&](int64_t i) { return Eval(text, {IVec(P::S32, {i}, std::vector<int64_t>{}), Scalar(P::F32, 3)}).GetDouble(0); };
  CHECK(run(0) == -3);
  CHECK(run(1) == 6);
  CHECK(run(2) == 9);
  CHECK(run(7) == 9);   // out of range: the last branch
  CHECK(run(-1) == 9);
  const std::string pred = R"(HloModule m
t {
  p = f32[] parameter(0)
  ROOT r = f32[] negate(p)
}
f {
  p = f32[] parameter(0)
  ROOT r = f32[] add(p, p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[] parameter(1)
  ROOT r = f32[] conditional(c, x, x), true_computation=t, false_computation=f
})";
  CHECK(Eval(pred, {IVec(P::PRED, {1}, std::vector<int64_t>{}), Scalar(P::F32, 3)}).GetDouble(0) == -3);
  CHECK(Eval(pred, {IVec(P::PRED, {0}, std::vector<int64_t>{}), Scalar(P::F32, 3)}).GetDouble(0) == 6);
}

TEST_CASE("async wrappers, copy-start/done, routing ops", "[eval]") {
  const std::string text = R"(HloModule m
wrapped {
  p = f32[2] parameter(0)
  ROOT r = f32[2] add(p, p)
}
ENTRY e {
  x = f32[2] parameter(0)
  s = ((f32[2]), f32[2], s32[]) async-start(x), calls=wrapped
  d = f32[2] async-done(s)
  cs = (f32[2], f32[2], u32[]) copy-start(d)
  cd = f32[2] copy-done(cs)
  ob = f32[2] opt-barrier(cd)
  sh = f32[2] custom-call(ob), custom_call_target="Sharding"
  ROOT c = f32[2] copy(sh)
})";
  CHECK(Doubles(Eval(text, {Vec(P::F32, {1, 2})})) == std::vector<double>{2, 4});
}

TEST_CASE("errors name the instruction; dead code is not evaluated", "[eval]") {
  const std::string bad = R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(x), custom_call_target="my_kernel"
})";
  auto r = TryEval(bad, {Vec(P::F32, {1, 2})});
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("%cc") != std::string::npos);
  CHECK(r.status().message().find("unsupported custom-call target \"my_kernel\"") != std::string::npos);
  const std::string infeed = R"(HloModule m
ENTRY e {
  tok = token[] after-all()
  ROOT in = ((f32[2]), token[]) infeed(tok)
})";
  auto i = TryEval(infeed, {});
  REQUIRE(!i.ok());
  CHECK(i.status().message().find("unsupported on the host evaluator") != std::string::npos);
  const std::string dead = R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  unused = f32[2] custom-call(x), custom_call_target="my_kernel"
  ROOT n = f32[2] negate(x)
})";
  CHECK(Doubles(Eval(dead, {Vec(P::F32, {1, 2})})) == std::vector<double>{-1, -2});
  auto wrong = TryEval(dead, {Vec(P::F32, {1, 2, 3})});
  CHECK(!wrong.ok());
  auto missing = TryEval(dead, {});
  CHECK(!missing.ok());
}

TEST_CASE("replica-id and partition-id", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})";
  auto r = Eval(text);
  CHECK(r.tuple_element(0).GetUint(0) == 0);
  EvaluatorOptions o;
  o.partition_id = 1;
  auto r1 = TryEval(text, {}, o);
  REQUIRE(r1.ok());
  CHECK(r1->tuple_element(1).GetUint(0) == 1);
}

TEST_CASE("calls nest to a bounded depth", "[eval]") {
  // A computation that calls itself: bad input that must fail, not overflow the stack.
  HloModule module("m");
  auto comp = std::make_unique<HloComputation>("rec");
  HloComputation* c = module.AddComputation(std::move(comp), /*is_entry=*/true);
  Shape s(P::F32, {});
  auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, s, "p");
  HloInstruction* param = c->AddInstruction(std::move(p));
  auto call = std::make_unique<HloInstruction>(HloOpcode::kCall, s, "call");
  call->AppendOperand(param);
  call->mutable_called_computations().push_back(c);
  c->set_root_instruction(c->AddInstruction(std::move(call)));
  Literal x = Scalar(P::F32, 1);
  const Literal* args[] = {&x};
  auto r = EvaluateComputation(*c, args);
  REQUIRE(!r.ok());
  CHECK(r.status().message().find("deeper than") != std::string::npos);
}

// Known-answer vectors published with Random123 (kat_vectors).
TEST_CASE("three-fry and philox block functions match Random123", "[eval][rng]") {
  uint32_t x[2] = {0, 0};
  eval_internal::ThreeFry2x32(0, 0, x);
  CHECK(x[0] == 0x6b200159u);
  CHECK(x[1] == 0x99ba4efeu);
  uint32_t y[2] = {0x243f6a88u, 0x85a308d3u};
  eval_internal::ThreeFry2x32(0x13198a2eu, 0x03707344u, y);
  CHECK(y[0] == 0xc4923a9cu);
  CHECK(y[1] == 0x483df7a0u);
  uint32_t z[4] = {0, 0, 0, 0};
  eval_internal::Philox4x32(0, 0, z);
  CHECK(z[0] == 0x6627e8d5u);
  CHECK(z[1] == 0xe169c58du);
  CHECK(z[2] == 0xbc57ac4cu);
  CHECK(z[3] == 0x9b00dbd8u);
  uint32_t w[4] = {0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u};
  eval_internal::Philox4x32(0xa4093822u, 0x299f31d0u, w);
  CHECK(w[0] == 0xd16cfe09u);
  CHECK(w[1] == 0x94fdccebu);
  CHECK(w[2] == 0x5001e420u);
  CHECK(w[3] == 0x24126ea1u);
}

TEST_CASE("rng-bit-generator lays out state and outputs as XLA", "[eval][rng]") {
  auto gen = [](const std::string& alg, const std::string& out) {
    return "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  ROOT r = (u64[2], " + out +
           ") rng-bit-generator(s), algorithm=" + alg + "\n}\n";
  };
  // Philox (the default): a 2-word state is (key, counter low word); counter 0, key 0.
  auto p = Eval(gen("rng_default", "u32[4]"), {UVec(P::U64, {0, 0})});
  CHECK(Uints(p.tuple_element(1)) == std::vector<uint64_t>{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u});
  CHECK(Uints(p.tuple_element(0)) == std::vector<uint64_t>{0, 1});
  auto p64 = Eval(gen("rng_philox", "u64[2]"), {UVec(P::U64, {0, 0})});
  CHECK(Uints(p64.tuple_element(1)) == std::vector<uint64_t>{0xe169c58d6627e8d5ull, 0x9b00dbd8bc57ac4cull});
  // Three-fry: u32[2] comes from one block split along dimension 0.
  auto t = Eval(gen("rng_three_fry", "u32[2]"), {UVec(P::U64, {0, 0})});
  CHECK(Uints(t.tuple_element(1)) == std::vector<uint64_t>{0x6b200159u, 0x99ba4efeu});
  CHECK(Uints(t.tuple_element(0)) == std::vector<uint64_t>{0, 1});
  auto t64 = Eval(gen("rng_three_fry", "u64[1]"), {UVec(P::U64, {0, 0})});
  CHECK(t64.tuple_element(1).GetUint(0) == 0x99ba4efe6b200159ull);
  auto t16 = Eval(gen("rng_three_fry", "u16[2]"), {UVec(P::U64, {0, 0})});
  CHECK(Uints(t16.tuple_element(1)) == std::vector<uint64_t>{0x0159, 0x4efe});
  // An odd length: the block count rounds up and the last block's second word is dropped.
  auto odd = Eval(gen("rng_three_fry", "u32[3]"), {UVec(P::U64, {7, 5})});
  CHECK(Uints(odd.tuple_element(0)) == std::vector<uint64_t>{7, 7});
}

TEST_CASE("rng-get-and-update-state starts at XLA's initial state", "[eval][rng]") {
  auto r = Eval("HloModule m\nENTRY e {\n  ROOT s = u64[2] rng-get-and-update-state(), delta=8\n}\n");
  CHECK(Uints(r) == std::vector<uint64_t>{0x7012395u, 0});
}

TEST_CASE("rng draws from the requested range", "[eval][rng]") {
  const std::string text = R"(HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(3)
  ROOT r = f32[1000] rng(a, b), distribution=rng_uniform
})";
  auto r = Eval(text);
  for (double v : Doubles(r)) {
    CHECK(v >= 2);
    CHECK(v < 3);
  }
}

TEST_CASE("ConvertLiteral covers every pair of element classes", "[eval]") {
  const P types[] = {P::PRED, P::S4, P::S8, P::S32, P::S64, P::U4, P::U8, P::U32, P::U64, P::F16, P::BF16,
                     P::F32, P::F64, P::F8E4M3FN, P::F8E5M2, P::F4E2M1FN, P::C64, P::C128};
  for (P from : types) {
    Literal l(Shape(from, {2}));
    l.SetInt(0, 1);
    l.SetInt(1, 0);
    for (P to : types) {
      auto r = eval_internal::ConvertLiteral(l, to);
      INFO(PrimitiveTypeName(from) << " -> " << PrimitiveTypeName(to));
      REQUIRE(r.ok());
      CHECK(r->GetDouble(0) == 1);
      CHECK(r->GetDouble(1) == 0);
    }
  }
}


TEST_CASE("compare type overrides the element's signedness", "[eval]") {
  auto cmp = [](const std::string& t, const std::string& type) {
    return "HloModule m\nENTRY e {\n  a = " + t + "[1] parameter(0)\n  b = " + t + "[1] parameter(1)\n  ROOT r = pred[1] compare(a, b), direction=LT, type=" + type + "\n}\n";
  };
  CHECK(Eval(cmp("u32", "SIGNED"), {UVec(P::U32, {0xFFFFFFFFu}), UVec(P::U32, {0})}).GetInt(0) == 1);
  CHECK(Eval(cmp("s32", "UNSIGNED"), {IVec(P::S32, {-1}), IVec(P::S32, {0})}).GetInt(0) == 0);
  CHECK(Eval(cmp("u64", "SIGNED"), {UVec(P::U64, {~uint64_t{0}}), UVec(P::U64, {1})}).GetInt(0) == 1);
  CHECK(Eval(cmp("s64", "UNSIGNED"), {IVec(P::S64, {-1}), IVec(P::S64, {1})}).GetInt(0) == 0);
}

TEST_CASE("sub-byte and one-byte float types", "[eval]") {
  CHECK(Eval(Binary("add", "u4", 1), {IVec(P::U4, {15}), IVec(P::U4, {2})}).GetInt(0) == 1);
  CHECK(Eval(Binary("add", "u2", 1), {IVec(P::U2, {3}), IVec(P::U2, {1})}).GetInt(0) == 0);
  CHECK(Eval(Binary("add", "s2", 1), {IVec(P::S2, {1}), IVec(P::S2, {1})}).GetInt(0) == -2);
  auto f4 = Eval(Binary("add", "f4e2m1fn", 2), {Vec(P::F4E2M1FN, {1, 6}), Vec(P::F4E2M1FN, {0.5, 6})});
  CHECK(Doubles(f4) == std::vector<double>{1.5, 6});  // no inf or NaN: saturates
  auto e8 = Eval(Binary("multiply", "f8e8m0fnu", 1), {Vec(P::F8E8M0FNU, {4}), Vec(P::F8E8M0FNU, {8})});
  CHECK(e8.GetDouble(0) == 32);
  auto b11 = Eval(Unary("negate", "f8e4m3b11fnuz", 1), {Vec(P::F8E4M3B11FNUZ, {0.5})});
  CHECK(b11.GetDouble(0) == -0.5);
}

TEST_CASE("stochastic-convert rounds by the random bits", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[5] parameter(0)
  r = u32[5] parameter(1)
  ROOT c = s8[5] stochastic-convert(x, r)
})";
  // 2.25: fraction 0.25 * 2^32 = 0x40000000; random below rounds up.
  auto r = Eval(text, {Vec(P::F32, {2.25, 2.25, -2.25, 1000, kNaN}), UVec(P::U32, {0x3FFFFFFFu, 0x40000000u, 0, 0, 0})});
  CHECK(Ints(r) == std::vector<int64_t>{3, 2, -3, 127, 0});
}

TEST_CASE("philox with a three-word state keeps a 128-bit counter", "[eval][rng]") {
  const std::string text = R"(HloModule m
ENTRY e {
  s = u64[3] parameter(0)
  ROOT r = (u64[3], u32[5]) rng-bit-generator(s), algorithm=rng_philox
})";
  // Counter (low = state[1], high = state[2]) = 2^64 - 1: the second block carries into the
  // high word.
  auto r = Eval(text, {UVec(P::U64, {0, ~uint64_t{0}, 0})});
  CHECK(Uints(r.tuple_element(0)) == std::vector<uint64_t>{0, 1, 1});
  uint32_t x[4] = {0, 0, 1, 0};  // counter 2^64
  eval_internal::Philox4x32(0, 0, x);
  CHECK(r.tuple_element(1).GetUint(4) == x[0]);
}

TEST_CASE("values beyond max_value_bytes fail cleanly", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  z = f32[] constant(0)
  ROOT b = f32[100000,100000,100] broadcast(z), dimensions={}
})";
  auto r = TryEval(text, {});
  REQUIRE(!r.ok());
  CHECK(r.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(r.status().message().find("%b") != std::string::npos);
}

TEST_CASE("get-dimension-size and nested tuples", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[3,7] parameter(0)
  d = s32[] get-dimension-size(x), dimensions={1}
  t = ((f32[3,7], s32[]), s32[]) tuple((f32[3,7], s32[]) tuple(x, d), d)
  a = (f32[3,7], s32[]) get-tuple-element(t), index=0
  b = s32[] get-tuple-element(a), index=1
  c = s32[] get-tuple-element(t), index=1
  ROOT s = s32[] add(b, c)
})";
  Literal x(Shape(P::F32, {3, 7}));
  CHECK(Eval(text, {x}).GetInt(0) == 14);
}

TEST_CASE("bitcast-convert between complex and real views", "[eval]") {
  const std::string text = R"(HloModule m
ENTRY e {
  z = c64[2] parameter(0)
  ROOT f = f32[2,2] bitcast-convert(z)
})";
  Literal z(Shape(P::C64, {2}));
  z.SetComplex(0, {1, 2});
  z.SetComplex(1, {3, 4});
  CHECK(Doubles(Eval(text, {z})) == std::vector<double>{1, 2, 3, 4});
}


// Expected values produced by XLA itself (JAX 0.11.2's lax.rng_bit_generator, identical on
// its CPU and GPU backends) for the key u32[4] {0x12345678, 0x9abcdef0, 0xdeadbeef,
// 0x01234567}, i.e. the state u64[2] below.
TEST_CASE("rng-bit-generator is bit-exact with XLA", "[eval][rng]") {
  auto run = [](const std::string& alg, const std::string& out) {
    const std::string text = "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n  ROOT r = (u64[2], " + out +
                             ") rng-bit-generator(s), algorithm=" + alg + "\n}\n";
    return Eval(text, {UVec(P::U64, {0x9abcdef012345678ull, 0x01234567deadbeefull})});
  };
  auto d = run("rng_default", "u32[3,4]");
  CHECK(Uints(d.tuple_element(1)) == std::vector<uint64_t>{0xaf5fd5aa, 0x79cc4ecd, 0x20ab91ad, 0x9cf7935e, 0xb52ad8af,
                                                           0xe730b68a, 0x6d6c3236, 0x9183466b, 0x0561f0b4, 0x33ca374c,
                                                           0x3256fe79, 0xefee43e5});
  CHECK(Uints(d.tuple_element(0)) == std::vector<uint64_t>{0x9abcdef012345678ull, 0x01234567deadbef2ull});
  auto p = run("rng_philox", "u64[5]");
  CHECK(Uints(p.tuple_element(1)) == std::vector<uint64_t>{0x79cc4ecdaf5fd5aaull, 0x9cf7935e20ab91adull,
                                                           0xe730b68ab52ad8afull, 0x9183466b6d6c3236ull,
                                                           0x33ca374c0561f0b4ull});
  auto t = run("rng_three_fry", "u32[7,3]");
  CHECK(Uints(t.tuple_element(1)) ==
        std::vector<uint64_t>{0xf3e0554b, 0xc7695d7e, 0x5d63d480, 0xf006cd5c, 0x9d664860, 0x24e5fd26, 0xf326ec27,
                              0x8492a566, 0x1407e270, 0x50531f3e, 0xb6ad3261, 0x4ca4b6fb, 0x21307050, 0x99574b04,
                              0x22c63b4d, 0x1d83f484, 0x31e1f7f3, 0xef444306, 0x0cc67cc6, 0xd18082e6, 0x0f08529c});
  CHECK(Uints(t.tuple_element(0)) == std::vector<uint64_t>{0x9abcdef012345678ull, 0x01234567deadbefbull});
  auto t8 = run("rng_three_fry", "u8[2,3,5]");
  CHECK(Uints(t8.tuple_element(1)) ==
        std::vector<uint64_t>{0x4b, 0x7e, 0x80, 0x27, 0x66, 0x70, 0x50, 0x04, 0x4d, 0xc6, 0xe6, 0x9c, 0x57, 0x42, 0x78,
                              0x5c, 0x60, 0x26, 0x3e, 0x61, 0xfb, 0x84, 0xf3, 0x06, 0x42, 0x33, 0xf9, 0x5e, 0x22, 0xf8});
  CHECK(Uints(t8.tuple_element(0)) == std::vector<uint64_t>{0x9abcdef012345678ull, 0x01234567deadbefeull});
}


// Expected values produced by XLA:GPU (JAX 0.11.2) on these inputs. (XLA:CPU agrees except
// that it flushes the denormal 1e-40 to zero; this evaluator, like the GPU, keeps it.)
TEST_CASE("convert, rounding and reduce-precision on edge values match XLA", "[eval]") {
  const std::vector<double> x = {0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, 1e10, -1e10, 3e9, kInf, -kInf, kNaN, 300.7, -129.2,
                                 65504, 1e-40, 7.99, -kInf, 1e-8};
  const int n = static_cast<int>(x.size());
  auto run = [&](const std::string& op, const std::string& out) {
    const std::string text = "HloModule m\nENTRY e {\n  a = f32[" + std::to_string(n) + "] parameter(0)\n  ROOT r = " + out +
                             "[" + std::to_string(n) + "] " + op + "\n}\n";
    return Eval(text, {Vec(P::F32, x)});
  };
  CHECK(Ints(run("convert(a)", "s8")) ==
        std::vector<int64_t>{0, 0, 1, -1, 2, -2, 0, 127, -128, 127, 127, -128, 0, 127, -128, 127, 0, 7, -128, 0});
  CHECK(Ints(run("convert(a)", "u4")) ==
        std::vector<int64_t>{0, 0, 1, 0, 2, 0, 0, 15, 0, 15, 15, 0, 0, 15, 0, 15, 0, 7, 0, 0});
  CHECK(Ints(run("convert(a)", "s4")) ==
        std::vector<int64_t>{0, 0, 1, -1, 2, -2, 0, 7, -8, 7, 7, -8, 0, 7, -8, 7, 0, 7, -8, 0});
  auto same = [](const std::vector<double>& got, const std::vector<double>& want) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      INFO("element " << i << ": " << got[i] << " vs " << want[i]);
      CHECK(((std::isnan(got[i]) && std::isnan(want[i])) ||
             (got[i] == want[i] && std::signbit(got[i]) == std::signbit(want[i]))));
    }
  };
  same(Doubles(run("convert(a)", "f8e4m3fn")),
       {0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, 288, -128, kNaN, 0, 8, kNaN, 0});
  same(Doubles(run("convert(a)", "f16")), {0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, kInf, -kInf, kInf, kInf, -kInf, kNaN,
                                           300.75, -129.25, 65504, 0, 7.98828125, -kInf, 0});
  same(Doubles(run("reduce-precision(a), exponent_bits=4, mantissa_bits=3", "f32")),
       {0, -0.0, 1.5, -1.5, 2.5, -2.5, 0.5, kInf, -kInf, kInf, kInf, -kInf, kNaN, kInf, -128, kInf, 0, 8, -kInf, 0});
  same(Doubles(run("round-nearest-afz(a)", "f32")),
       {0, -0.0, 2, -2, 3, -3, 1, 1e10, -1e10, 3e9, kInf, -kInf, kNaN, 301, -129, 65504, 0, 8, -kInf, 0});
}


// Builds ENTRY { p0..pn = parameter(i); ROOT r = opcode(p0..pn) } by hand, bypassing the
// parser's checks, to feed the evaluator malformed instructions.
struct Handmade {
  HloModule module{"m"};
  HloComputation* comp = nullptr;
  HloInstruction* root = nullptr;
  Handmade(HloOpcode op, const Shape& shape, const std::vector<Shape>& params,
           const std::function<void(InstructionAttributes&)>& attrs = nullptr) {
    comp = module.AddComputation(std::make_unique<HloComputation>("e"), /*is_entry=*/true);
    std::vector<HloInstruction*> ps;
    for (size_t i = 0; i < params.size(); ++i) {
      auto p = std::make_unique<HloInstruction>(HloOpcode::kParameter, params[i], "p" + std::to_string(i));
      p->mutable_attrs().parameter_number = static_cast<int64_t>(i);
      ps.push_back(comp->AddInstruction(std::move(p)));
    }
    auto r = std::make_unique<HloInstruction>(op, shape, "r");
    for (HloInstruction* p : ps) r->AppendOperand(p);
    if (attrs) attrs(r->mutable_attrs());
    root = comp->AddInstruction(std::move(r));
    comp->set_root_instruction(root);
  }
  absl::StatusOr<Literal> Run() {
    std::vector<Literal> args;
    for (const HloInstruction* p : comp->parameters()) args.emplace_back(p->shape());
    return EvaluateModule(module, args);
  }
};

TEST_CASE("malformed instructions fail with errors, not crashes", "[eval]") {
  using O = HloOpcode;
  const Shape f2(P::F32, {2}), f3(P::F32, {3}), f23(P::F32, {2, 3}), s32(P::S32, {}), pred(P::PRED, {});
  std::vector<std::unique_ptr<Handmade>> cases;
  cases.push_back(std::make_unique<Handmade>(O::kAdd, f2, std::vector<Shape>{f2, f3}));
  cases.push_back(std::make_unique<Handmade>(O::kAdd, f3, std::vector<Shape>{f2, f2}));
  cases.push_back(std::make_unique<Handmade>(O::kNegate, f2, std::vector<Shape>{}));
  cases.push_back(std::make_unique<Handmade>(O::kSlice, f2, std::vector<Shape>{f3}, [](InstructionAttributes& a) {
    a.slice = {{2, 4, 1}};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kSlice, f2, std::vector<Shape>{f3}, [](InstructionAttributes& a) {
    a.slice = {{0, 2, 0}};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kBroadcast, f23, std::vector<Shape>{f3}, [](InstructionAttributes& a) {
    a.dimensions = {0};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kTranspose, f23, std::vector<Shape>{f23}, [](InstructionAttributes& a) {
    a.dimensions = {0, 0};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kReverse, f3, std::vector<Shape>{f3}, [](InstructionAttributes& a) {
    a.dimensions = {5};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kConcatenate, f3, std::vector<Shape>{f2, f2}, [](InstructionAttributes& a) {
    a.dimensions = {0};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kDynamicSlice, f2, std::vector<Shape>{f23}, [](InstructionAttributes& a) {
    a.dynamic_slice_sizes = {2};
  }));
  cases.push_back(std::make_unique<Handmade>(O::kDynamicUpdateSlice, f3, std::vector<Shape>{f3, f23, s32}));
  cases.push_back(std::make_unique<Handmade>(O::kPad, f3, std::vector<Shape>{f2, Shape(P::F32, {})},
                                             [](InstructionAttributes& a) {
                                               a.padding_config = PaddingConfig{{{INT64_MIN, INT64_MAX, INT64_MAX}}};
                                             }));
  cases.push_back(std::make_unique<Handmade>(O::kIota, f3, std::vector<Shape>{}, [](InstructionAttributes& a) {
    a.iota_dimension = 3;
  }));
  cases.push_back(std::make_unique<Handmade>(O::kGetTupleElement, f2, std::vector<Shape>{Shape::Tuple({f2})},
                                             [](InstructionAttributes& a) { a.tuple_index = 4; }));
  cases.push_back(std::make_unique<Handmade>(O::kGetTupleElement, f2, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kCompare, Shape(P::PRED, {2}), std::vector<Shape>{f2, f2}));
  cases.push_back(std::make_unique<Handmade>(O::kSelect, f2, std::vector<Shape>{Shape(P::PRED, {3}), f2, f2}));
  cases.push_back(std::make_unique<Handmade>(O::kConditional, f2, std::vector<Shape>{pred, f2}));
  cases.push_back(std::make_unique<Handmade>(O::kWhile, f2, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kCall, f2, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kBitcast, f2, std::vector<Shape>{f3}));
  cases.push_back(std::make_unique<Handmade>(O::kBitcastConvert, Shape(P::U8, {3}), std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kConvert, f3, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kReducePrecision, f2, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kRngBitGenerator, f2, std::vector<Shape>{Shape(P::U64, {1})}));
  cases.push_back(std::make_unique<Handmade>(O::kRngGetAndUpdateState, Shape(P::U64, {2}), std::vector<Shape>{}));
  cases.push_back(std::make_unique<Handmade>(O::kConstant, f2, std::vector<Shape>{}));
  cases.push_back(std::make_unique<Handmade>(O::kAsyncStart, f2, std::vector<Shape>{f2}));
  cases.push_back(std::make_unique<Handmade>(O::kClamp, f2, std::vector<Shape>{f3, f2, f2}));
  for (size_t i = 0; i < cases.size(); ++i) {
    auto r = cases[i]->Run();
    INFO("case " << i << " (" << HloOpcodeString(cases[i]->root->opcode()) << ")");
    CHECK(!r.ok());
    if (!r.ok()) CHECK(r.status().message().find("%r") != std::string::npos);
  }
}

}  // namespace
}  // namespace hloc
