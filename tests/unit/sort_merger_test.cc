// sort-merger (src/passes/sort/sort_merger.h): a sort of X and a sort of (X, Y) with agreeing
// comparators become one sort. The evaluator gives bit-identical outputs before and after (on
// sort_topk.small and on hand-made modules with ties, -0/+0 and NaNs), and sorts that differ in
// comparator, dimension or operands, or whose extra operands come from the shorter sort, stay.
#include <cmath>
#include <fstream>
#include <map>
#include <random>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "corpus_inputs.h"
#include "engine/pass.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"

namespace hloc {
namespace {

absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  std::unique_ptr<HloPass> pass = info->factory(options);
  PassContext context;
  return pass->Run(module, context);
}

int64_t CountSorts(const HloModule& m) {
  int64_t n = 0;
  for (const auto& c : m.computations())
    for (const auto& i : c->instructions()) n += i->opcode() == HloOpcode::kSort;
  return n;
}

// Runs call-inliner + sort-merger (+ dce); checks the verifier, the printed text parses, and
// that the evaluator's outputs are bit-identical to the original module's on `args`.
bool MergeAndCompare(const std::string& text, const std::vector<Literal>& args, int64_t* sorts_after = nullptr) {
  auto original = ParseHloModule(text);
  REQUIRE(original.ok());
  auto reference = EvaluateModule(**original, args);
  INFO(reference.status().message());
  REQUIRE(reference.ok());
  auto module = ParseHloModule(text);
  REQUIRE(module.ok());
  REQUIRE(RunPass(**module, "call-inliner").ok());
  auto changed = RunPass(**module, "sort-merger");
  INFO(changed.status().message());
  REQUIRE(changed.ok());
  REQUIRE(RunPass(**module, "dce").ok());
  absl::Status verified = VerifyModule(**module);
  INFO(verified.message());
  REQUIRE(verified.ok());
  REQUIRE(ParseHloModule(PrintModule(**module)).ok());
  if (sorts_after) *sorts_after = CountSorts(**module);
  auto result = EvaluateModule(**module, args);
  INFO(result.status().message());
  REQUIRE(result.ok());
  const std::vector<const Literal*> a = FlattenLeaves(*result), b = FlattenLeaves(*reference);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("output " << i);
    REQUIRE(a[i]->element_type() == b[i]->element_type());
    REQUIRE(a[i]->element_count() == b[i]->element_count());
    for (int64_t e = 0; e < a[i]->element_count(); ++e) CHECK(a[i]->GetRawBits(e) == b[i]->GetRawBits(e));
  }
  return *changed;
}

// f32[rows, n] with many ties, signed zeros and NaNs.
Literal TieHeavyInput(int64_t rows, int64_t n, uint32_t seed) {
  auto lit = Literal::Create(Shape(PrimitiveType::F32, {rows, n}));
  REQUIRE(lit.ok());
  std::mt19937 rng(seed);
  const double choices[] = {0.0, -0.0, 1.0, -1.0, 2.5, std::nan(""), -std::nan("")};
  for (int64_t i = 0; i < rows * n; ++i) lit->SetDouble(i, choices[rng() % 7]);
  return std::move(*lit);
}

// JAX's total-order "less than" (NaNs and signed zeros canonicalized), on operand 0 only.
constexpr char kJaxLess2[] = R"(
lt2 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(a_zero, zero, a)
  a_nan = pred[] compare(a, a), direction=NE
  a1 = f32[] select(a_nan, qnan, a0)
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(b_zero, zero, b)
  b_nan = pred[] compare(b, b), direction=NE
  b1 = f32[] select(b_nan, qnan, b0)
  ROOT lt = pred[] compare(a1, b1), direction=LT, order=TOTAL
}
)";

std::string Less4(const std::string& name, const std::string& direction, bool uses_payload) {
  return absl::StrCat(name, R"( {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(a_zero, zero, a)
  a_nan = pred[] compare(a, a), direction=NE
  a1 = f32[] select(a_nan, qnan, a0)
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(b_zero, zero, b)
  b_nan = pred[] compare(b, b), direction=NE
  b1 = f32[] select(b_nan, qnan, b0)
  )", uses_payload ? "lt0 = pred[] compare(a1, b1), direction=" + direction + R"(, order=TOTAL
  lt1 = pred[] compare(c, d), direction=GT
  ROOT lt = pred[] or(lt0, lt1)
}
)" : "ROOT lt = pred[] compare(a1, b1), direction=" + direction + ", order=TOTAL\n}\n");
}

std::string Module(const std::string& comparators, const std::string& body) {
  return absl::StrCat("HloModule m\n", comparators, "\nENTRY e {\n", body, "}\n");
}

TEST_CASE("sort-merger: sort_topk.small's sort and argsort become one sort", "[sort-merger][corpus]") {
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus/";
  auto m = ParseHloModuleFile(dir + "sort_topk.small.before_optimizations.txt");
  REQUIRE(m.ok());
  auto inputs = LoadCorpusInputs(**m, dir + "sort_topk.small.inputs.npz");
  REQUIRE(inputs.ok());
  std::ifstream in(dir + "sort_topk.small.before_optimizations.txt");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  int64_t sorts = 0;
  CHECK(MergeAndCompare(text, *inputs, &sorts));
  CHECK(sorts == 1);
  // And on inputs full of ties, signed zeros and NaNs.
  std::vector<Literal> ties;
  ties.push_back(TieHeavyInput(4, 33, 7));
  CHECK(MergeAndCompare(text, ties, &sorts));
  CHECK(sorts == 1);
}

TEST_CASE("sort-merger: what merges and what does not", "[sort-merger]") {
  std::vector<Literal> args;
  args.push_back(TieHeavyInput(8, 37, 11));
  const std::string body_head = R"(  x = f32[8,37]{1,0} parameter(0)
  iota = s32[8,37]{1,0} iota(), iota_dimension=1
)";
  int64_t sorts = 0;
  SECTION("an unstable value sort merges into a stable (x, iota) sort") {
    const std::string text = Module(std::string(kJaxLess2) + Less4("lt4", "LT", false),
                                    body_head + R"(  s = f32[8,37]{1,0} sort(x), dimensions={1}, to_apply=lt2
  t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={1}, is_stable=true, to_apply=lt4
  i = s32[8,37]{1,0} get-tuple-element(t), index=1
  ROOT r = (f32[8,37]{1,0}, s32[8,37]{1,0}) tuple(s, i)
)");
    CHECK(MergeAndCompare(text, args, &sorts));
    CHECK(sorts == 1);
  }
  SECTION("a stable value sort makes the merged sort stable") {
    const std::string text = Module(std::string(kJaxLess2) + Less4("lt4", "LT", false),
                                    body_head + R"(  s = f32[8,37]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt2
  t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={1}, to_apply=lt4
  i = s32[8,37]{1,0} get-tuple-element(t), index=1
  ROOT r = (f32[8,37]{1,0}, s32[8,37]{1,0}) tuple(s, i)
)");
    auto m = ParseHloModule(text);
    REQUIRE(m.ok());
    REQUIRE(RunPass(**m, "sort-merger").ok());
    bool stable = false;
    for (const auto& inst : (*m)->entry_computation()->instructions())
      if (inst->opcode() == HloOpcode::kSort) stable = inst->attrs().is_stable;
    CHECK(stable);
    CHECK(CountSorts(**m) == 1);
  }
  SECTION("a two-operand sort merges into a three-operand one (results through a tuple)") {
    const std::string lt6 = R"(
lt6 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = s32[] parameter(4)
  f = s32[] parameter(5)
  ROOT lt = pred[] compare(a, b), direction=LT, order=TOTAL
}
lt4b {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT, order=TOTAL
}
)";
    const std::string text = Module(lt6, body_head + R"(  y = s32[8,37]{1,0} multiply(iota, iota)
  s = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={1}, is_stable=true, to_apply=lt4b
  t = (f32[8,37]{1,0}, s32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota, y), dimensions={1}, is_stable=true, to_apply=lt6
  t2 = s32[8,37]{1,0} get-tuple-element(t), index=2
  ROOT r = ((f32[8,37]{1,0}, s32[8,37]{1,0}), s32[8,37]{1,0}) tuple(s, t2)
)");
    CHECK(MergeAndCompare(text, args, &sorts));
    CHECK(sorts == 1);
  }
  SECTION("different comparators, dimensions, operands or a payload-reading comparator stay apart") {
    const std::string comparators = std::string(kJaxLess2) + Less4("lt4", "LT", false) + Less4("gt4", "GT", false) +
                                    Less4("lt4p", "LT", true);
    for (const std::string& t :
         {std::string("t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={1}, is_stable=true, to_apply=gt4"),
          std::string("t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={1}, is_stable=true, to_apply=lt4p"),
          std::string("t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x, iota), dimensions={0}, is_stable=true, to_apply=lt4"),
          std::string("t = (f32[8,37]{1,0}, s32[8,37]{1,0}) sort(x2, iota), dimensions={1}, is_stable=true, to_apply=lt4")}) {
      INFO(t);
      const std::string text = Module(comparators, body_head + R"(  x2 = f32[8,37]{1,0} negate(x)
  s = f32[8,37]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt2
  )" + t + R"(
  i = s32[8,37]{1,0} get-tuple-element(t), index=1
  ROOT r = (f32[8,37]{1,0}, s32[8,37]{1,0}) tuple(s, i)
)");
      CHECK_FALSE(MergeAndCompare(text, args, &sorts));
      CHECK(sorts == 2);
    }
  }
  SECTION("a payload computed from the shorter sort stays apart (merging would make a cycle)") {
    const std::string text = Module(std::string(kJaxLess2) + R"(
lt4f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  a_zero = pred[] compare(a, zero), direction=EQ
  a0 = f32[] select(a_zero, zero, a)
  a_nan = pred[] compare(a, a), direction=NE
  a1 = f32[] select(a_nan, qnan, a0)
  b_zero = pred[] compare(b, zero), direction=EQ
  b0 = f32[] select(b_zero, zero, b)
  b_nan = pred[] compare(b, b), direction=NE
  b1 = f32[] select(b_nan, qnan, b0)
  ROOT lt = pred[] compare(a1, b1), direction=LT, order=TOTAL
}
)",
                                    body_head + R"(  s = f32[8,37]{1,0} sort(x), dimensions={1}, is_stable=true, to_apply=lt2
  t = (f32[8,37]{1,0}, f32[8,37]{1,0}) sort(x, s), dimensions={1}, is_stable=true, to_apply=lt4f
  i = f32[8,37]{1,0} get-tuple-element(t), index=1
  ROOT r = (f32[8,37]{1,0}, f32[8,37]{1,0}) tuple(s, i)
)");
    CHECK_FALSE(MergeAndCompare(text, args, &sorts));
    CHECK(sorts == 2);
  }
}

}  // namespace
}  // namespace hloc
