// The elemental emitter against the reference evaluator: every elementwise opcode on every
// element type HLO accepts (the verifier decides which combinations exist), conversions between
// all pairs of types, and the edge cases XLA defines (x/0, INT_MIN/-1, shifts past the width,
// NaN and signed zeros in min/max, out-of-range float -> int, f8 overflow, denormals).
#include <catch2/catch.hpp>

#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backend/elemental_harness.h"

namespace hloc::elemental_test {
namespace {

using P = PrimitiveType;

const std::vector<P>& AllTypes() {
  static const std::vector<P> types = {
      P::PRED, P::S2, P::S4, P::S8, P::S16, P::S32, P::S64, P::U2, P::U4, P::U8, P::U16, P::U32, P::U64,
      P::F16, P::BF16, P::F32, P::F64, P::F4E2M1FN, P::F8E3M4, P::F8E4M3, P::F8E4M3FN, P::F8E4M3B11FNUZ,
      P::F8E4M3FNUZ, P::F8E5M2, P::F8E5M2FNUZ, P::F8E8M0FNU, P::C64, P::C128};
  return types;
}

std::string N(P t) { return std::string(PrimitiveTypeName(t)); }

void Report(const std::string& what, const Outcome& o) {
  std::cout << what << ": " << o.passed << "/" << o.run << " cases match the evaluator; "
            << o.rejected_by_verifier << " op x type combinations HLO rejects, " << o.rejected_by_evaluator
            << " the evaluator rejects\n";
  std::vector<std::string> by_evaluator;
  for (const std::string& r : o.rejected)
    if (r.find("(evaluator)") != std::string::npos) by_evaluator.push_back(r.substr(0, r.size() - 12));
  if (!by_evaluator.empty()) std::cout << "  evaluator rejects: " << absl::StrJoin(by_evaluator, ", ") << "\n";
  for (const std::string& f : o.failures) UNSCOPED_INFO(f);
  CHECK(o.failures.empty());
  CHECK(o.passed == o.run);
}

P ComponentOf(P t) { return t == P::C64 ? P::F32 : P::F64; }

TEST_CASE("elemental: unary ops on every element type", "[elemental]") {
  const std::vector<std::string> ops = {
      "abs", "cbrt", "ceil", "count-leading-zeros", "cosine", "erf", "exponential", "exponential-minus-one",
      "floor", "imag", "is-finite", "log", "log-plus-one", "logistic", "negate", "not", "popcnt", "real",
      "round-nearest-afz", "round-nearest-even", "rsqrt", "sign", "sine", "sqrt", "tan", "tanh", "copy"};
  std::vector<Case> cases;
  for (const std::string& op : ops) {
    for (P t : AllTypes()) {
      P rt = t;
      if (op == "is-finite") rt = P::PRED;
      if (IsComplex(t) && (op == "abs" || op == "real" || op == "imag")) rt = ComponentOf(t);
      const int64_t n = EdgeCount(t) + 6;
      Case c;
      c.name = op + " " + N(t);
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(t), "[", n, "] parameter(0)\n  ROOT r = ", N(rt), "[",
                           n, "] ", op, "(p)\n}\n");
      c.args.push_back(EdgeInput(t, {n}));
      c.must_verify = false;
      if (IsComplex(t)) c.tolerance = t == P::C64 ? 2e-6 : 1e-13;
      cases.push_back(std::move(c));
    }
  }
  Outcome o = RunBatch(cases);
  Report("unary", o);
  CHECK(o.run > 300);
}

TEST_CASE("elemental: binary ops on every element type, edge value pairs", "[elemental]") {
  const std::vector<std::string> ops = {"add", "and", "atan2", "complex", "divide", "maximum", "minimum", "multiply",
                                        "or", "power", "remainder", "shift-left", "shift-right-arithmetic",
                                        "shift-right-logical", "subtract", "xor"};
  std::vector<Case> cases;
  for (const std::string& op : ops) {
    for (P t : AllTypes()) {
      P rt = t;
      if (op == "complex") rt = t == P::F64 ? P::C128 : P::C64;
      const int64_t e = EdgeCount(t) + 6;
      const int64_t n = e * e;  // every pair of edge values
      Case c;
      c.name = op + " " + N(t);
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  a = ", N(t), "[", n, "] parameter(0)\n  b = ", N(t), "[", n,
                           "] parameter(1)\n  ROOT r = ", N(rt), "[", n, "] ", op, "(a, b)\n}\n");
      c.args.push_back(EdgeInput(t, {n}, 1, 1));
      c.args.push_back(EdgeInput(t, {n}, e, 2));
      c.must_verify = false;
      if (IsComplex(t)) c.tolerance = t == P::C64 ? 2e-6 : 1e-13;
      c.branch_cut = op == "atan2" && IsComplex(t);
      cases.push_back(std::move(c));
    }
  }
  Outcome o = RunBatch(cases);
  Report("binary", o);
  CHECK(o.run > 150);
}

TEST_CASE("elemental: compare in every direction and comparison type", "[elemental]") {
  std::vector<Case> cases;
  for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
    for (P t : AllTypes()) {
      for (const char* type : {"", "TOTALORDER", "SIGNED", "UNSIGNED", "FLOAT"}) {
        const int64_t e = EdgeCount(t) + 6, n = e * e;
        Case c;
        c.name = absl::StrCat("compare ", dir, " ", type, " ", N(t));
        std::string attr = absl::StrCat("direction=", dir);
        if (*type) absl::StrAppend(&attr, ", type=", type);
        c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  a = ", N(t), "[", n, "] parameter(0)\n  b = ", N(t), "[", n,
                             "] parameter(1)\n  ROOT r = pred[", n, "] compare(a, b), ", attr, "\n}\n");
        c.args.push_back(EdgeInput(t, {n}, 1, 1));
        c.args.push_back(EdgeInput(t, {n}, e, 2));
        c.must_verify = false;
        cases.push_back(std::move(c));
      }
    }
  }
  Outcome o = RunBatch(cases);
  Report("compare", o);
  CHECK(o.run > 150);
}

TEST_CASE("elemental: convert between every pair of element types", "[elemental]") {
  std::vector<Case> cases;
  for (P from : AllTypes()) {
    for (P to : AllTypes()) {
      const int64_t n = EdgeCount(from) + 6;
      Case c;
      c.name = "convert " + N(from) + " -> " + N(to);
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(from), "[", n, "] parameter(0)\n  ROOT r = ", N(to),
                           "[", n, "] convert(p)\n}\n");
      c.args.push_back(EdgeInput(from, {n}));
      c.must_verify = false;
      cases.push_back(std::move(c));
    }
  }
  Outcome o = RunBatch(cases);
  Report("convert", o);
  CHECK(o.run > 600);
}

TEST_CASE("elemental: every f8/f4/f16/bf16 bit pattern decodes and re-encodes", "[elemental]") {
  // All 256 (or 65536) encodings through f32 and back, and through f64.
  std::vector<Case> cases;
  for (P t : AllTypes()) {
    if (!IsFloatingPoint(t) || t == P::F32 || t == P::F64) continue;
    const int w = BitWidth(t);
    const int64_t n = int64_t{1} << w;
    Literal all(Shape(t, {n}));
    for (int64_t i = 0; i < n; ++i) all.SetRawBits(i, static_cast<uint64_t>(i));
    for (P mid : {P::F32, P::F64}) {
      Case c;
      c.name = "roundtrip " + N(t) + " via " + N(mid);
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(t), "[", n, "] parameter(0)\n  c = ", N(mid), "[", n,
                           "] convert(p)\n  ROOT r = ", N(t), "[", n, "] convert(c)\n}\n");
      c.args.push_back(all);
      cases.push_back(std::move(c));
    }
    // Every value of a wider type rounds like the evaluator (RNE, overflow, denormals).
    Case c;
    c.name = "f32 grid -> " + N(t);
    const int64_t m = 4096;
    Literal grid(Shape(P::F32, {m}));
    for (int64_t i = 0; i < m; ++i) {
      const double mag = std::ldexp(1.0 + (i % 64) / 64.0 + (i % 7) / 4096.0, static_cast<int>(i / 64) - 32);
      grid.SetDouble(i, (i % 2) ? -mag : mag);
    }
    c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = f32[", m, "] parameter(0)\n  ROOT r = ", N(t), "[", m,
                         "] convert(p)\n}\n");
    c.args.push_back(std::move(grid));
    cases.push_back(std::move(c));
  }
  Outcome o = RunBatch(cases);
  Report("narrow float round trips", o);
}

TEST_CASE("elemental: bitcast-convert between types of equal and different widths", "[elemental]") {
  std::vector<Case> cases;
  for (P from : AllTypes()) {
    for (P to : AllTypes()) {
      const int wi = from == P::PRED ? 8 : BitWidth(from), wo = to == P::PRED ? 8 : BitWidth(to);
      std::string in_dims = "[5]", out_dims = "[5]";
      std::vector<int64_t> dims = {5};
      if (wi > wo) {
        if (wi % wo) continue;
        out_dims = absl::StrCat("[5,", wi / wo, "]");
      } else if (wi < wo) {
        if (wo % wi) continue;
        in_dims = absl::StrCat("[5,", wo / wi, "]");
        dims = {5, wo / wi};
      }
      Case c;
      c.name = "bitcast-convert " + N(from) + " -> " + N(to);
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(from), in_dims, " parameter(0)\n  ROOT r = ", N(to),
                           out_dims, " bitcast-convert(p)\n}\n");
      c.args.push_back(EdgeInput(from, dims, 1, 5));
      c.must_verify = false;
      cases.push_back(std::move(c));
    }
  }
  Outcome o = RunBatch(cases);
  Report("bitcast-convert", o);
  CHECK(o.run > 100);
}

TEST_CASE("elemental: reduce-precision, stochastic-convert, select, clamp, map", "[elemental]") {
  std::vector<Case> cases;
  for (P t : {P::F32, P::F64, P::BF16, P::F16, P::F8E4M3FN}) {
    for (auto [eb, mb] : std::vector<std::pair<int, int>>{{5, 10}, {8, 7}, {4, 3}, {5, 2}, {2, 1}, {8, 0}, {11, 52}}) {
      const int64_t n = EdgeCount(t) + 6;
      Case c;
      c.name = absl::StrCat("reduce-precision e", eb, "m", mb, " ", N(t));
      c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(t), "[", n, "] parameter(0)\n  ROOT r = ", N(t), "[", n,
                           "] reduce-precision(p), exponent_bits=", eb, ", mantissa_bits=", mb, "\n}\n");
      c.args.push_back(EdgeInput(t, {n}));
      cases.push_back(std::move(c));
    }
  }
  for (P t : {P::F32, P::BF16, P::F16, P::F64}) {
    for (P r : {P::U8, P::U32, P::U16}) {
      for (P o : {P::S32, P::S8, P::S16, P::S64}) {
        const int64_t n = EdgeCount(t) + 6;
        Case c;
        c.name = absl::StrCat("stochastic-convert ", N(t), " ", N(r), " -> ", N(o));
        c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  p = ", N(t), "[", n, "] parameter(0)\n  q = ", N(r), "[", n,
                             "] parameter(1)\n  ROOT r = ", N(o), "[", n, "] stochastic-convert(p, q)\n}\n");
        c.args.push_back(EdgeInput(t, {n}));
        c.args.push_back(RandomInput(r, {n}, 0, 250, 9));
        c.must_verify = false;
        cases.push_back(std::move(c));
      }
    }
  }
  for (P t : AllTypes()) {
    const int64_t e = EdgeCount(t) + 6, n = e * e;
    Case c;
    c.name = "select " + N(t);
    c.hlo = absl::StrCat("HloModule m\nENTRY e {\n  s = pred[", n, "] parameter(0)\n  a = ", N(t), "[", n,
                         "] parameter(1)\n  b = ", N(t), "[", n, "] parameter(2)\n  ROOT r = ", N(t), "[", n,
                         "] select(s, a, b)\n}\n");
    c.args.push_back(RandomInput(P::PRED, {n}, 0, 1, 3));
    c.args.push_back(EdgeInput(t, {n}, 1, 1));
    c.args.push_back(EdgeInput(t, {n}, e, 2));
    cases.push_back(std::move(c));
    Case k;
    k.name = "clamp " + N(t);
    k.hlo = absl::StrCat("HloModule m\nENTRY e {\n  lo = ", N(t), "[", n, "] parameter(0)\n  x = ", N(t), "[", n,
                         "] parameter(1)\n  hi = ", N(t), "[", n, "] parameter(2)\n  ROOT r = ", N(t), "[", n,
                         "] clamp(lo, x, hi)\n}\n");
    k.args.push_back(EdgeInput(t, {n}, 1, 1));
    k.args.push_back(EdgeInput(t, {n}, e, 2));
    k.args.push_back(EdgeInput(t, {n}, 3, 4));
    k.must_verify = false;
    cases.push_back(std::move(k));
    Case s;
    s.name = "clamp with scalar bounds " + N(t);
    s.hlo = absl::StrCat("HloModule m\nENTRY e {\n  lo = ", N(t), "[] parameter(0)\n  x = ", N(t), "[", n,
                         "] parameter(1)\n  hi = ", N(t), "[] parameter(2)\n  ROOT r = ", N(t), "[", n,
                         "] clamp(lo, x, hi)\n}\n");
    s.args.push_back(EdgeInput(t, {}, 1, 1));
    s.args.push_back(EdgeInput(t, {n}, 1, 2));
    s.args.push_back(EdgeInput(t, {}, 1, 5));
    s.args[2] = RandomInput(t, {}, 5, 9, 3);
    s.must_verify = false;
    cases.push_back(std::move(s));
  }
  {
    Case c;
    c.name = "map x*y+x";
    c.hlo = R"(HloModule m
f {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  m = f32[] multiply(x, y)
  ROOT a = f32[] add(m, x)
}
ENTRY e {
  a = f32[4,5] parameter(0)
  b = f32[4,5] parameter(1)
  ROOT r = f32[4,5] map(a, b), dimensions={0,1}, to_apply=f
}
)";
    c.args.push_back(RandomInput(P::F32, {4, 5}, -3, 3, 1));
    c.args.push_back(RandomInput(P::F32, {4, 5}, -3, 3, 2));
    cases.push_back(std::move(c));
  }
  Outcome o = RunBatch(cases);
  Report("reduce-precision/stochastic-convert/select/clamp/map", o);
}

}  // namespace
}  // namespace hloc::elemental_test
