// The expanders XLA's GPU pipeline runs before layout assignment (src/passes/expanders/):
// rng-bit-generator-expander, logistic-expander, batchnorm_expander, comparison-expander and
// dot_decomposer. Each test parses hand-written HLO, evaluates it, runs the pass (through the
// global registry, as hloc opt does), verifies the module and evaluates it again: rng bits and
// comparisons must match exactly, floats within the brief's tolerances. The corpus modules
// run through all five passes the same way.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "engine/pass.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"

using namespace hloc;

namespace {

namespace fs = std::filesystem;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto module = ParseHloModule(text);
  INFO((module.ok() ? std::string("parsed") : std::string(module.status().message())));
  REQUIRE(module.ok());
  return std::move(*module);
}

// Runs the registered pass `name` with its default options, `overrides` on top.
absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name,
                             const std::map<std::string, OptionValue>& overrides = {}) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  REQUIRE(info != nullptr);
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  for (const auto& [k, v] : overrides) options.Set(k, v);
  std::unique_ptr<HloPass> pass = info->factory(options);
  PassContext context;
  return pass->Run(module, context);
}

int64_t CountOpcode(const HloModule& module, HloOpcode op) {
  int64_t n = 0;
  for (const auto& c : module.computations())
    for (const auto& i : c->instructions()) n += i->opcode() == op;
  return n;
}

// Deterministic pseudo-random values (an LCG), so failures reproduce.
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  uint64_t Next() {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return s >> 11;
  }
  double Uniform(double lo, double hi) { return lo + (hi - lo) * (Next() % (1ull << 40)) / double(1ull << 40); }
};

Literal RandomLiteral(const Shape& shape, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  Literal l(shape);
  Lcg rng(seed);
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (IsFloatingPoint(shape.element_type())) l.SetDouble(i, rng.Uniform(lo, hi));
    else l.SetInt(i, static_cast<int64_t>(rng.Uniform(lo, hi)));
  }
  return l;
}

std::vector<Literal> RandomArgs(const HloModule& module, uint64_t seed, double lo = -2.0, double hi = 2.0) {
  std::vector<Literal> args;
  for (const HloInstruction* p : module.entry_computation()->parameters())
    args.push_back(RandomLiteral(p->shape(), seed++, lo, hi));
  return args;
}

// Evaluates, runs `pass`, verifies and evaluates again; outputs must agree within `tolerance`
// (0: bit-exact). Returns the module after the pass for further checks.
std::unique_ptr<HloModule> CheckPreserves(const std::string& text, const std::string& pass, double tolerance,
                                          const std::vector<Literal>* given_args = nullptr,
                                          const std::map<std::string, OptionValue>& options = {},
                                          bool expect_change = true) {
  std::unique_ptr<HloModule> module = Parse(text);
  std::vector<Literal> args = given_args ? std::vector<Literal>() : RandomArgs(*module, 7);
  if (given_args)
    for (const Literal& l : *given_args) args.push_back(l);
  auto before = EvaluateModule(*module, args);
  INFO((before.ok() ? std::string("evaluated") : std::string(before.status().message())));
  REQUIRE(before.ok());
  absl::StatusOr<bool> changed = RunPass(*module, pass, options);
  INFO((changed.ok() ? std::string("ran") : std::string(changed.status().message())));
  REQUIRE(changed.ok());
  CHECK(*changed == expect_change);
  INFO(PrintModule(*module));
  absl::Status verified = VerifyModule(*module);
  INFO(std::string(verified.message()));
  REQUIRE(verified.ok());
  auto after = EvaluateModule(*module, args);
  INFO((after.ok() ? std::string("evaluated") : std::string(after.status().message())));
  REQUIRE(after.ok());
  if (tolerance == 0) {
    for (size_t i = 0; i < FlattenLeaves(*before).size(); ++i)
      CHECK(*FlattenLeaves(*after)[i] == *FlattenLeaves(*before)[i]);
  } else {
    CompareResult r = CompareLiterals(*after, *before, tolerance);
    INFO(r.message);
    CHECK(r.ok);
  }
  return module;
}

// ---- logistic-expander ---------------------------------------------------------------------

// logistic in double (complex: in std::complex<double>), stored in x's type.
Literal LogisticReference(const Literal& x) {
  Literal out(x.shape());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    if (IsComplex(x.element_type())) out.SetComplex(i, 1.0 / (1.0 + std::exp(-x.GetComplex(i))));
    else out.SetDouble(i, 1.0 / (1.0 + std::exp(-x.GetDouble(i))));
  }
  return out;
}

// For modules whose outputs are logistic(parameter i), in order: the expansion is compared
// with the reference evaluator's logistic when it has one, else with LogisticReference.
std::unique_ptr<HloModule> CheckLogistic(const std::string& text, double tolerance,
                                         const std::map<std::string, OptionValue>& options = {},
                                         double lo = -6, double hi = 6) {
  std::unique_ptr<HloModule> module = Parse(text);
  std::vector<Literal> args = RandomArgs(*module, 3, lo, hi);
  auto before = EvaluateModule(*module, args);
  absl::StatusOr<bool> changed = RunPass(*module, "logistic-expander", options);
  REQUIRE(changed.ok());
  CHECK(*changed);
  INFO(PrintModule(*module));
  REQUIRE(VerifyModule(*module).ok());
  CHECK(CountOpcode(*module, HloOpcode::kLogistic) == 0);
  auto after = EvaluateModule(*module, args);
  INFO((after.ok() ? std::string("evaluated") : std::string(after.status().message())));
  REQUIRE(after.ok());
  std::vector<const Literal*> got = FlattenLeaves(*after);
  REQUIRE(got.size() == args.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("output " << i << (before.ok() ? " against the evaluator" : " against the C++ reference"));
    const Literal want = before.ok() ? *FlattenLeaves(*before)[i] : LogisticReference(args[i]);
    CompareResult r = CompareLiterals(*got[i], want, tolerance);
    INFO(r.message);
    CHECK(r.ok);
  }
  return module;
}

TEST_CASE("logistic-expander: 1/(1+exp(-x)) keeps the values", "[expanders][logistic]") {
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    INFO(type);
    const double tol = std::string(type) == "f16" ? 2e-3 : std::string(type) == "bf16" ? 1e-2 : 1e-5;
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY main {
  p = $T[4,5] parameter(0)
  s = $T[] parameter(1)
  l = $T[4,5] logistic(p)
  ls = $T[] logistic(s)
  ROOT t = ($T[4,5], $T[]) tuple(l, ls)
})", {{"$T", type}});
    auto module = CheckLogistic(text, tol);
    // divide(one, add(one, exp(negate(p)))), the constant broadcast for the array.
    const HloInstruction* l = module->entry_computation()->root_instruction()->operand(0);
    REQUIRE(l->opcode() == HloOpcode::kDivide);
    CHECK(l->operand(0)->opcode() == HloOpcode::kBroadcast);
    CHECK(l->operand(1)->opcode() == HloOpcode::kAdd);
    CHECK(l->operand(1)->operand(1)->opcode() == HloOpcode::kExp);
    CHECK(l->operand(1)->operand(1)->operand(0)->opcode() == HloOpcode::kNegate);
    // The scalar needs no broadcast.
    const HloInstruction* ls = module->entry_computation()->root_instruction()->operand(1);
    CHECK(ls->operand(0)->opcode() == HloOpcode::kConstant);
  }
}

TEST_CASE("logistic-expander: tanh expansion, large inputs, complex", "[expanders][logistic]") {
  const std::string text = R"(
HloModule m
ENTRY main {
  p = f32[64] parameter(0)
  ROOT l = f32[64] logistic(p)
})";
  auto module = CheckLogistic(text, 1e-5, {{"expansion_type", std::string("tanh")}});
  CHECK(module->entry_computation()->root_instruction()->opcode() == HloOpcode::kAdd);
  CHECK(CountOpcode(*module, HloOpcode::kTanh) == 1);
  // Saturating inputs: exp(-x) overflows to inf and 1/inf is 0, as logistic gives.
  CheckLogistic(text, 1e-5, {}, -120, 120);
  CheckLogistic(R"(
HloModule m
ENTRY main {
  p = c64[6] parameter(0)
  ROOT l = c64[6] logistic(p)
})", 1e-5);
  // Nothing to do: unchanged.
  CheckPreserves("HloModule m\nENTRY main {\n  p = f32[3] parameter(0)\n  ROOT e = f32[3] exponential(p)\n}\n",
                 "logistic-expander", 1e-5, nullptr, {}, /*expect_change=*/false);
}

// ---- comparison-expander -------------------------------------------------------------------

// All pairs of bit patterns of an 8-bit (or narrower) float type, through iota and
// bitcast-convert, compared in each direction with type=TOTALORDER.
std::string AllPairsModule(const std::string& type, int bits) {
  const int64_t n = int64_t{1} << bits;
  const std::string itype = bits == 8 ? "u8" : "u4";
  std::string text = absl::StrCat("HloModule m\nENTRY main {\n  a = ", itype, "[", n, ",", n,
                                  "] iota(), iota_dimension=0\n  b = ", itype, "[", n, ",", n,
                                  "] iota(), iota_dimension=1\n  fa = ", type, "[", n, ",", n,
                                  "] bitcast-convert(a)\n  fb = ", type, "[", n, ",", n, "] bitcast-convert(b)\n");
  std::string root = "  ROOT t = (";
  std::string ops;
  for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    absl::StrAppend(&text, "  c", dir, " = pred[", n, ",", n, "] compare(fa, fb), direction=", dir, ", type=TOTALORDER\n");
    absl::StrAppend(&root, ops.empty() ? "" : ", ", "pred[", n, ",", n, "]");
    absl::StrAppend(&ops, ops.empty() ? "" : ", ", "c", dir);
  }
  return absl::StrCat(text, root, ") tuple(", ops, ")\n}\n");
}

TEST_CASE("comparison-expander: every pair of f8 and f4 values", "[expanders][comparison]") {
  for (const char* t : {"f8e5m2", "f8e4m3fn", "f8e4m3", "f8e3m4", "f8e8m0fnu"}) {
    INFO(t);
    auto module = CheckPreserves(AllPairsModule(t, 8), "comparison-expander", 0);
    for (const auto& inst : module->entry_computation()->instructions())
      if (inst->opcode() == HloOpcode::kCompare) CHECK(inst->attrs().comparison_type != ComparisonType::kTotalOrder);
  }
  CheckPreserves(AllPairsModule("f4e2m1fn", 4), "comparison-expander", 0);
}

// XLA's total-order key for types without -0 (ToSignMagnitude in comparison_util): negative
// values close the gap -0 would leave, and NaN (the -0 pattern) is the smallest value.
int64_t XlaFnuzKey(uint8_t bits) {
  if (bits == 0x80) return -128;
  const int64_t magnitude = bits & 0x7f;
  return (bits & 0x80) ? -magnitude : magnitude;
}

TEST_CASE("comparison-expander: f8 types without -0 order NaN first, as XLA", "[expanders][comparison]") {
  for (const char* t : {"f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz"}) {
    INFO(t);
    std::unique_ptr<HloModule> module = Parse(AllPairsModule(t, 8));
    auto before = EvaluateModule(*module, {});
    REQUIRE(before.ok());
    REQUIRE(RunPass(*module, "comparison-expander").value());
    REQUIRE(VerifyModule(*module).ok());
    auto after = EvaluateModule(*module, {});
    REQUIRE(after.ok());
    const char* dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    for (int d = 0; d < 6; ++d) {
      INFO(dirs[d]);
      const Literal& got = after->tuple_element(d);
      const Literal& evaluator = before->tuple_element(d);
      int64_t wrong = 0, evaluator_differs_off_nan = 0;
      for (int a = 0; a < 256; ++a) {
        for (int b = 0; b < 256; ++b) {
          const int64_t ka = XlaFnuzKey(a), kb = XlaFnuzKey(b);
          const bool want = d == 0 ? ka == kb : d == 1 ? ka != kb : d == 2 ? ka < kb : d == 3 ? ka <= kb : d == 4 ? ka > kb : ka >= kb;
          wrong += got.GetPred(a * 256 + b) != want;
          // The reference evaluator places this NaN elsewhere; every other pair must agree.
          if (a != 0x80 && b != 0x80) evaluator_differs_off_nan += got.GetPred(a * 256 + b) != evaluator.GetPred(a * 256 + b);
        }
      }
      CHECK(wrong == 0);
      CHECK(evaluator_differs_off_nan == 0);
    }
  }
}

TEST_CASE("comparison-expander: every f16 and bf16 bit pattern", "[expanders][comparison]") {
  for (const char* t : {"f16", "bf16"}) {
    INFO(t);
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY main {
  a = u16[256,256] iota(), iota_dimension=0
  b = u16[256,256] iota(), iota_dimension=1
  c = u16[] constant(256)
  cb = u16[256,256] broadcast(c), dimensions={}
  m = u16[256,256] multiply(a, cb)
  x = u16[256,256] add(m, b)
  y = u16[256,256] transpose(x), dimensions={1,0}
  z = u16[256,256] reverse(x), dimensions={0}
  fx = $T[256,256] bitcast-convert(x)
  fy = $T[256,256] bitcast-convert(y)
  fz = $T[256,256] bitcast-convert(z)
  r1 = pred[256,256] compare(fx, fy), direction=LT, type=TOTALORDER
  r2 = pred[256,256] compare(fx, fz), direction=GE, type=TOTALORDER
  r3 = pred[256,256] compare(fx, fy), direction=EQ, type=TOTALORDER
  ROOT r = (pred[256,256], pred[256,256], pred[256,256]) tuple(r1, r2, r3)
})", {{"$T", t}});
    CheckPreserves(text, "comparison-expander", 0);
    if (std::string(t) == "bf16") {
      // XLA:GPU's configuration: bf16 compared through f32.
      auto module = CheckPreserves(text, "comparison-expander", 0, nullptr,
                                   {{"expand_via_upcast", std::vector<std::string>{"bf16:f32"}}});
      CHECK(CountOpcode(*module, HloOpcode::kConvert) >= 2);
    }
  }
}

TEST_CASE("comparison-expander: f32 and f64 special values", "[expanders][comparison]") {
  // -NaN, -inf, -max, -1, -min normal, -min subnormal, -0, 0, min subnormal, min normal, 1,
  // max, inf, NaN, NaN with another payload.
  const std::string f32_bits =
      "0xffc00000, 0xff800000, 0xff7fffff, 0xbf800000, 0x80800000, 0x80000001, 0x80000000, 0, 1, 0x00800000, "
      "0x3f800000, 0x7f7fffff, 0x7f800000, 0x7fc00000, 0x7f800001";
  const std::string f64_bits =
      "0xfff8000000000000, 0xfff0000000000000, 0xffefffffffffffff, 0xbff0000000000000, 0x8000000000000001, "
      "0x8000000000000000, 0, 1, 0x3ff0000000000000, 0x7fefffffffffffff, 0x7ff0000000000000, "
      "0x7ff8000000000000, 0x7ff0000000000001, 0x7ff8000000000000, 0x4000000000000000";
  for (auto [ftype, itype, bits] : {std::tuple<std::string, std::string, std::string>{"f32", "u32", f32_bits},
                                    {"f64", "u64", f64_bits}}) {
    INFO(ftype);
    // Hex constants are not HLO; write the patterns as decimal.
    std::vector<std::string> decimal;
    for (absl::string_view h : absl::StrSplit(bits, ", ")) decimal.push_back(std::to_string(std::stoull(std::string(h), nullptr, 0)));
    const std::string list = absl::StrJoin(decimal, ", ");
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY main {
  v = $I[15] constant({$LIST})
  a = $I[15,15] broadcast(v), dimensions={0}
  b = $I[15,15] broadcast(v), dimensions={1}
  fa = $F[15,15] bitcast-convert(a)
  fb = $F[15,15] bitcast-convert(b)
  lt = pred[15,15] compare(fa, fb), direction=LT, type=TOTALORDER
  le = pred[15,15] compare(fa, fb), direction=LE, type=TOTALORDER
  eq = pred[15,15] compare(fa, fb), direction=EQ, type=TOTALORDER
  ne = pred[15,15] compare(fa, fb), direction=NE, type=TOTALORDER
  partial = pred[15,15] compare(fa, fb), direction=LT
  ROOT t = (pred[15,15], pred[15,15], pred[15,15], pred[15,15], pred[15,15]) tuple(lt, le, eq, ne, partial)
})", {{"$I", itype}, {"$F", ftype}, {"$LIST", list}});
    auto module = CheckPreserves(text, "comparison-expander", 0);
    // The partial-order compare is left alone.
    const HloInstruction* partial = module->entry_computation()->root_instruction()->operand(4);
    CHECK(partial->operand(0)->opcode() == HloOpcode::kBitcastConvert);
  }
}

TEST_CASE("comparison-expander: leaves other compares alone and checks its options", "[expanders][comparison]") {
  CheckPreserves(R"(
HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  i = s32[8] parameter(2)
  a = pred[8] compare(p, q), direction=LT
  b = pred[8] compare(i, i), direction=GE, type=SIGNED
  ROOT t = (pred[8], pred[8]) tuple(a, b)
})", "comparison-expander", 0, nullptr, {}, /*expect_change=*/false);
  std::unique_ptr<HloModule> module = Parse(
      "HloModule m\nENTRY main {\n  p = f32[2] parameter(0)\n  ROOT c = pred[2] compare(p, p), direction=LT, "
      "type=TOTALORDER\n}\n");
  CHECK_FALSE(RunPass(*module, "comparison-expander", {{"expand_via_upcast", std::vector<std::string>{"f32:bf16"}}}).ok());
  CHECK_FALSE(RunPass(*module, "comparison-expander", {{"expand_via_upcast", std::vector<std::string>{"f32"}}}).ok());
}

// ---- rng-bit-generator-expander ------------------------------------------------------------

std::string RngModule(const std::string& algorithm, const std::string& state_type, const std::string& state,
                      const std::string& data_shape) {
  return absl::StrCat("HloModule m\nENTRY main {\n  s = ", state_type, " constant(", state, ")\n  ROOT r = (",
                      state_type, ", ", data_shape, ") rng-bit-generator(s), algorithm=", algorithm, "\n}\n");
}

TEST_CASE("rng-bit-generator-expander: identical bits for three-fry and philox", "[expanders][rng]") {
  const std::vector<std::pair<std::string, std::string>> states = {
      {"u64[2]", "{12345, 987654321}"},
      // Counters about to carry out of their low words.
      {"u64[2]", "{18446744073709551615, 18446744073709551614}"},
      {"u64[3]", "{42, 18446744073709551615, 7}"},
      {"u64[4]", "{1, 18446744073709551612, 18446744073709551615, 99}"},
  };
  const std::vector<std::string> shapes = {"u32[3,5]", "u32[7]", "u32[]", "u32[4,1,3]", "u32[5,3,7]", "u64[7]",
                                           "u64[]", "u64[2,3]", "u16[5,3]", "u8[9]", "s32[4,3]", "f32[2,2,3]",
                                           "s64[3]", "f64[5]", "f16[3,3]", "bf16[6]", "s8[5]", "s4[5]", "u4[3,3]",
                                           "f8e4m3fn[4]", "f4e2m1fn[6]", "u32[0]", "u32[2,0]"};
  for (const char* algorithm : {"rng_three_fry", "rng_philox", "rng_default"}) {
    for (const auto& [stype, state] : states) {
      for (const std::string& shape : shapes) {
        INFO(algorithm << " " << stype << " " << state << " " << shape);
        auto module = CheckPreserves(RngModule(algorithm, stype, state, shape), "rng-bit-generator-expander", 0);
        CHECK(CountOpcode(*module, HloOpcode::kRngBitGenerator) == 0);
        CHECK(module->entry_computation()->root_instruction()->opcode() == HloOpcode::kCall);
      }
    }
  }
}

TEST_CASE("rng-bit-generator-expander: seeds from parameters, shared generators, default algorithm",
          "[expanders][rng]") {
  const std::string text = R"(
HloModule m
ENTRY main {
  s = u64[2] parameter(0)
  r1 = (u64[2], u32[16,16]) rng-bit-generator(s), algorithm=rng_philox
  s1 = u64[2] get-tuple-element(r1), index=0
  r2 = (u64[2], u32[16,16]) rng-bit-generator(s1), algorithm=rng_philox
  r3 = (u64[2], u32[16,16]) rng-bit-generator(s1), algorithm=rng_three_fry
  r4 = (u64[2], u32[33]) rng-bit-generator(s), algorithm=rng_default
  b1 = u32[16,16] get-tuple-element(r1), index=1
  b2 = u32[16,16] get-tuple-element(r2), index=1
  b3 = u32[16,16] get-tuple-element(r3), index=1
  b4 = u32[33] get-tuple-element(r4), index=1
  ROOT t = (u32[16,16], u32[16,16], u32[16,16], u32[33]) tuple(b1, b2, b3, b4)
})";
  Lcg lcg(99);
  for (int seed = 0; seed < 4; ++seed) {
    Literal state(Shape(PrimitiveType::U64, {2}));
    state.SetUint(0, lcg.Next() * 2654435761u);
    state.SetUint(1, seed == 3 ? ~uint64_t{0} - 3 : lcg.Next());
    std::vector<Literal> args = {state};
    auto module = CheckPreserves(text, "rng-bit-generator-expander", 0, &args);
    // r1 and r2 share one philox generator; three-fry and the other shape have their own.
    CHECK(CountOpcode(*module, HloOpcode::kCall) == 4);
    int64_t generators = 0;
    for (const auto& c : module->computations()) generators += c.get() != module->entry_computation();
    CHECK(generators == 3);
  }
  // RNG_DEFAULT as three-fry when so configured: the bits then differ from philox's.
  std::unique_ptr<HloModule> module = Parse(RngModule("rng_default", "u64[2]", "{1, 2}", "u32[8]"));
  auto philox = EvaluateModule(*module, {});
  REQUIRE(philox.ok());
  REQUIRE(RunPass(*module, "rng-bit-generator-expander", {{"default_algorithm", std::string("three_fry")}}).value());
  auto three_fry = EvaluateModule(*module, {});
  REQUIRE(three_fry.ok());
  CHECK_FALSE(three_fry->tuple_element(1) == philox->tuple_element(1));
  CHECK_FALSE(RunPass(*module, "rng-bit-generator-expander", {{"default_algorithm", std::string("mt19937")}}).ok());
}

TEST_CASE("rng-bit-generator-expander: uniform and normal floats from the bits", "[expanders][rng]") {
  // JAX's uniform: 23 random mantissa bits under exponent 0 give [1, 2); minus 1. Then a
  // Box-Muller step, as jax.random.normal builds on top of the bits.
  const std::string text = R"(
HloModule m
ENTRY main {
  s = u64[2] parameter(0)
  r = (u64[2], u32[64,64]) rng-bit-generator(s), algorithm=rng_three_fry
  bits = u32[64,64] get-tuple-element(r), index=1
  nine = u32[] constant(9)
  nines = u32[64,64] broadcast(nine), dimensions={}
  mant = u32[64,64] shift-right-logical(bits, nines)
  one_bits = u32[] constant(1065353216)
  ones_bits = u32[64,64] broadcast(one_bits), dimensions={}
  fbits = u32[64,64] or(mant, ones_bits)
  f = f32[64,64] bitcast-convert(fbits)
  one = f32[] constant(1)
  ones = f32[64,64] broadcast(one), dimensions={}
  u = f32[64,64] subtract(f, ones)
  tiny = f32[] constant(1e-7)
  tinys = f32[64,64] broadcast(tiny), dimensions={}
  umax = f32[64,64] maximum(u, tinys)
  l = f32[64,64] log(umax)
  m2 = f32[] constant(-2)
  m2s = f32[64,64] broadcast(m2), dimensions={}
  ml = f32[64,64] multiply(m2s, l)
  radius = f32[64,64] sqrt(ml)
  v = f32[64,64] transpose(u), dimensions={1,0}
  twopi = f32[] constant(6.28318548)
  twopis = f32[64,64] broadcast(twopi), dimensions={}
  angle = f32[64,64] multiply(twopis, v)
  c = f32[64,64] cosine(angle)
  ROOT normal = f32[64,64] multiply(radius, c)
})";
  Literal state(Shape(PrimitiveType::U64, {2}));
  state.SetUint(0, 0);
  state.SetUint(1, 42);
  std::vector<Literal> args = {state};
  CheckPreserves(text, "rng-bit-generator-expander", 0, &args);
}

TEST_CASE("rng-bit-generator-expander: the corpus random_normal module is unchanged", "[expanders][rng]") {
  // JAX writes its three-fry in HLO already; the pass has nothing to do there.
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus/";
  auto module = ParseHloModuleFile(dir + "random_normal.small.before_optimizations.txt");
  REQUIRE(module.ok());
  const std::string before = PrintModule(**module);
  auto changed = RunPass(**module, "rng-bit-generator-expander");
  REQUIRE(changed.ok());
  CHECK_FALSE(*changed);
  CHECK(PrintModule(**module) == before);
}

TEST_CASE("rng-bit-generator-expander: unsupported states are errors, not crashes", "[expanders][rng]") {
  for (const std::string& text :
       {RngModule("rng_philox", "u64[1]", "{1}", "u32[4]"), RngModule("rng_philox", "u32[4]", "{1, 2, 3, 4}", "u32[4]"),
        RngModule("rng_three_fry", "u64[2]", "{1, 2}", "pred[4]")}) {
    auto module = ParseHloModule(text);
    if (!module.ok()) continue;  // the parser already refuses it
    CHECK_FALSE(RunPass(**module, "rng-bit-generator-expander").ok());
  }
}

// ---- batchnorm_expander --------------------------------------------------------------------

const char* kBatchNormModule = R"(
HloModule m
ENTRY main {
  x = f32[2,3,4,5] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  mean = f32[3] parameter(3)
  var = f32[3] parameter(4)
  grad = f32[2,3,4,5] parameter(5)
  t = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1, metadata={op_name="bn"}
  i = f32[2,3,4,5] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
  g = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-grad(x, scale, mean, var, grad), epsilon=0.001, feature_index=1
  ROOT r = ((f32[2,3,4,5], f32[3], f32[3]), f32[2,3,4,5], (f32[2,3,4,5], f32[3], f32[3])) tuple(t, i, g)
})";

std::vector<Literal> BatchNormArgs(const HloModule& module) {
  std::vector<Literal> args = RandomArgs(module, 11, -2, 2);
  // Variances must be positive.
  args[4] = RandomLiteral(args[4].shape(), 5, 0.2, 3.0);
  return args;
}

TEST_CASE("batchnorm_expander: training, inference and grad", "[expanders][batchnorm]") {
  std::unique_ptr<HloModule> parsed = Parse(kBatchNormModule);
  std::vector<Literal> args = BatchNormArgs(*parsed);
  auto module = CheckPreserves(kBatchNormModule, "batchnorm_expander", 1e-5, &args);
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormTraining) == 0);
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormInference) == 0);
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormGrad) == 0);
  CHECK(CountOpcode(*module, HloOpcode::kReduce) == 4);
  CHECK(CountOpcode(*module, HloOpcode::kGetDimensionSize) == 6);
  // The training expansion carries the batch norm's metadata.
  const HloInstruction* t = module->entry_computation()->root_instruction()->operand(0);
  REQUIRE(t->opcode() == HloOpcode::kTuple);
  CHECK(t->operand(0)->attrs().metadata.op_name == "bn");
}

TEST_CASE("batchnorm_expander: other layouts, ranks and types", "[expanders][batchnorm]") {
  for (auto [dims, fdim, fi, type, tol] :
       {std::tuple<std::string, std::string, int, std::string, double>{"4,5,3", "3", 2, "f32", 1e-5},
        {"6,7", "7", 1, "f32", 1e-5},
        {"8,2", "8", 0, "f64", 1e-5},
        // In f16/bf16 every one of XLA's ~20 steps rounds (E[X^2] - E[X]^2 and the grad's
        // N*dy - sum(dy) - ... cancel), while the evaluator's batch-norm rounds once: the
        // corpus README's GPU thresholds for these types, not the per-op ones, apply.
        {"2,3,4,5", "3", 1, "f16", 2e-3},
        {"2,4,3", "4", 1, "bf16", 3e-2}}) {
    INFO(dims << " feature " << fi << " " << type);
    const std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY main {
  x = $T[$D] parameter(0)
  scale = $T[$F] parameter(1)
  offset = $T[$F] parameter(2)
  mean = $T[$F] parameter(3)
  var = $T[$F] parameter(4)
  grad = $T[$D] parameter(5)
  t = ($T[$D], $T[$F], $T[$F]) batch-norm-training(x, scale, offset), epsilon=0.01, feature_index=$I
  i = $T[$D] batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, feature_index=$I
  g = ($T[$D], $T[$F], $T[$F]) batch-norm-grad(x, scale, mean, var, grad), epsilon=0.01, feature_index=$I
  ROOT r = (($T[$D], $T[$F], $T[$F]), $T[$D], ($T[$D], $T[$F], $T[$F])) tuple(t, i, g)
})", {{"$T", type}, {"$D", dims}, {"$F", fdim}, {"$I", std::to_string(fi)}});
    std::unique_ptr<HloModule> parsed = Parse(text);
    std::vector<Literal> args = BatchNormArgs(*parsed);
    CheckPreserves(text, "batchnorm_expander", tol, &args);
  }
}

TEST_CASE("batchnorm_expander: options select the kinds, shardings spread", "[expanders][batchnorm]") {
  std::unique_ptr<HloModule> parsed = Parse(kBatchNormModule);
  std::vector<Literal> args = BatchNormArgs(*parsed);
  auto module = CheckPreserves(kBatchNormModule, "batchnorm_expander", 1e-5, &args,
                               {{"rewrite_training_op", false}, {"rewrite_grad_op", false}});
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormTraining) == 1);
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormInference) == 0);
  CHECK(CountOpcode(*module, HloOpcode::kBatchNormGrad) == 1);
  CheckPreserves(kBatchNormModule, "batchnorm_expander", 1e-5, &args,
                 {{"rewrite_training_op", false}, {"rewrite_inference_op", false}, {"rewrite_grad_op", false}},
                 /*expect_change=*/false);

  auto sharded = Parse(R"(
HloModule m
ENTRY main {
  x = f32[4,3] parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT t = (f32[4,3], f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1, sharding={{maximal device=1}, {maximal device=1}, {maximal device=1}}
})");
  REQUIRE(RunPass(*sharded, "batchnorm_expander").value());
  REQUIRE(VerifyModule(*sharded).ok());
  const HloInstruction* root = sharded->entry_computation()->root_instruction();
  REQUIRE(root->attrs().sharding.has_value());
  CHECK(root->attrs().sharding->kind == HloSharding::Kind::kTuple);
  for (const HloInstruction* op : root->operands()) {
    REQUIRE(op->attrs().sharding.has_value());
    CHECK(op->attrs().sharding->kind == HloSharding::Kind::kMaximal);
    CHECK(op->attrs().sharding->device == 1);
  }
}

// ---- dot_decomposer ------------------------------------------------------------------------

bool AllDotsCanonical(const HloModule& module) {
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kDot) continue;
      const DotDimensionNumbers d = inst->attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
      for (int side = 0; side < 2; ++side) {
        const auto& batch = side == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
        const auto& contracting = side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
        if (contracting.size() != 1 || inst->operand(side)->shape().rank() > static_cast<int64_t>(batch.size()) + 2)
          return false;
        for (size_t i = 0; i < batch.size(); ++i)
          if (batch[i] != static_cast<int64_t>(i)) return false;
      }
    }
  return true;
}

TEST_CASE("dot_decomposer: non-canonical dots become canonical ones", "[expanders][dot]") {
  const std::vector<std::string> dots = {
      // Two non-contracting lhs dimensions.
      "a = f32[2,16,8] parameter(0)\n  b = f32[8,5] parameter(1)\n"
      "  ROOT d = f32[2,16,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}",
      // Two contracting dimensions, listed out of order.
      "a = f32[3,4,6] parameter(0)\n  b = f32[6,4,7] parameter(1)\n"
      "  ROOT d = f32[3,7] dot(a, b), lhs_contracting_dims={2,1}, rhs_contracting_dims={0,1}",
      // Batch dimensions not leading.
      "a = f32[5,2,3] parameter(0)\n  b = f32[3,2,4] parameter(1)\n"
      "  ROOT d = f32[2,5,4] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={1}, "
      "rhs_contracting_dims={0}",
      // Two batch dimensions, swapped, and several non-contracting ones on the rhs.
      "a = f32[2,3,4,5] parameter(0)\n  b = f32[3,2,5,6,2] parameter(1)\n"
      "  ROOT d = f32[2,3,4,6,2] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={1,0}, "
      "rhs_contracting_dims={2}",
      // No contracting dimension: an outer product.
      "a = f32[3,4] parameter(0)\n  b = f32[5] parameter(1)\n  ROOT d = f32[3,4,5] dot(a, b)",
      // Vector x vector with the batch dimension last.
      "a = f32[6,4] parameter(0)\n  b = f32[4,6] parameter(1)\n"
      "  ROOT d = f32[4] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={0}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}",
      // Integers (exact) and a precision config that must survive.
      "a = s8[2,3,4] parameter(0)\n  b = s8[4,5] parameter(1)\n"
      "  ROOT d = s32[2,3,5] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}, "
      "operand_precision={highest,highest}",
      // bf16 operands, f32 result.
      "a = bf16[4,2,8] parameter(0)\n  b = bf16[2,8,3] parameter(1)\n"
      "  e = f32[2,4,3] dot(a, b), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, "
      "rhs_contracting_dims={1}\n  ROOT d = f32[2,4,3] negate(e)",
  };
  for (const std::string& body : dots) {
    INFO(body);
    const std::string text = absl::StrCat("HloModule m\nENTRY main {\n  ", body, "\n}\n");
    std::unique_ptr<HloModule> probe = Parse(text);
    absl::Status valid = VerifyModule(*probe);
    INFO(std::string(valid.message()));
    REQUIRE(valid.ok());
    const bool is_int = body.find("s32[") != std::string::npos;
    auto module = CheckPreserves(text, "dot_decomposer", is_int ? 0 : 1e-4);
    CHECK(AllDotsCanonical(*module));
    // Running again changes nothing: the new dots are canonical by XLA's rule too.
    CHECK_FALSE(RunPass(*module, "dot_decomposer").value());
    if (is_int) {
      for (const auto& inst : module->entry_computation()->instructions())
        if (inst->opcode() == HloOpcode::kDot) CHECK(inst->attrs().precision_config.operand_precision.size() == 2);
    }
  }
}

TEST_CASE("dot_decomposer: canonical dots are left alone", "[expanders][dot]") {
  CheckPreserves(R"(
HloModule m
ENTRY main {
  a = f32[3,4] parameter(0)
  b = f32[4,5] parameter(1)
  c = f32[7,4] parameter(2)
  v = f32[4] parameter(3)
  bm = f32[2,3,4] parameter(4)
  bn = f32[2,4,5] parameter(5)
  e = f32[3,5] parameter(6)
  w = f32[2,6] parameter(7)
  d1 = f32[3,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[3,7] dot(a, c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  d3 = f32[3] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d4 = f32[2,3,5] dot(bm, bn), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  d5 = f32[4,5] dot(a, e), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  d6 = f32[2] dot(w, w), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  ROOT t = (f32[3,5], f32[3,7], f32[3], f32[2,3,5], f32[4,5], f32[2]) tuple(d1, d2, d3, d4, d5, d6)
})", "dot_decomposer", 1e-4, nullptr, {}, /*expect_change=*/false);
}

// ---- The corpus --------------------------------------------------------------------------------

double Tolerance(PrimitiveType t, bool reordered) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    case PrimitiveType::F32: case PrimitiveType::F64: case PrimitiveType::C64: case PrimitiveType::C128:
      return reordered ? 1e-4 : 1e-5;
    default: return 0;
  }
}

TEST_CASE("expanders keep every corpus module's meaning", "[expanders][corpus]") {
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus";
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().string();
    if (f.size() > 31 && f.find(".small.before_optimizations.txt") == f.size() - 31) files.push_back(f);
  }
  std::sort(files.begin(), files.end());
  REQUIRE_FALSE(files.empty());
  int compared = 0, decomposed = 0;
  for (const std::string& file : files) {
    INFO(file);
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    auto arrays = ReadNpz(stem + "inputs.npz");
    const HloComputation* entry = (*module)->entry_computation();
    if (!arrays.ok() || static_cast<int64_t>(arrays->size()) != entry->num_parameters()) continue;
    std::vector<Literal> args;
    for (int64_t i = 0; i < entry->num_parameters(); ++i) {
      auto lit = ReinterpretAs((*arrays)[i], entry->parameter_instruction(i)->shape());
      REQUIRE(lit.ok());
      args.push_back(std::move(*lit));
    }
    auto before = EvaluateModule(**module, args);
    if (!before.ok()) continue;  // the conformance suite reports what the evaluator cannot run
    const std::vector<bool> reordered = OutputsFedByDotOrConvolution(**module);
    // XLA:GPU's order.
    for (const char* pass : {"rng-bit-generator-expander", "comparison-expander", "dot_decomposer",
                             "batchnorm_expander", "logistic-expander"}) {
      INFO(pass);
      auto changed = RunPass(**module, pass);
      INFO((changed.ok() ? std::string("ran") : std::string(changed.status().message())));
      REQUIRE(changed.ok());
      if (*changed && std::string(pass) == "dot_decomposer") ++decomposed;
      absl::Status verified = VerifyModule(**module);
      INFO(std::string(verified.message()));
      REQUIRE(verified.ok());
    }
    CHECK(AllDotsCanonical(**module));
    auto after = EvaluateModule(**module, args);
    REQUIRE(after.ok());
    std::vector<const Literal*> a = FlattenLeaves(*after), b = FlattenLeaves(*before);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("output " << i);
      CompareResult r = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->element_type(), i < reordered.size() && reordered[i]));
      INFO(r.message);
      CHECK(r.ok);
    }
    ++compared;
  }
  CHECK(compared >= 20);
  // The transformer block has dots with several non-contracting dimensions.
  CHECK(decomposed >= 1);
}

}  // namespace
