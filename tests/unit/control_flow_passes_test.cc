// The control-flow simplifiers and movers (simplify-while-loops, simplify-conditional,
// simplify-sorts, reshape-mover, convert-mover): the evaluator's outputs must not change on
// the corpus nor on the lit tests' inputs, the module must verify after every run, XLA's
// parser cases must not trip any pass, and the loop trip-count analysis and the reshape
// mover's option behave as XLA's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/pass.h"
#include "corpus_inputs.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "passes/simplify/control_flow_util.h"
#include "passes/simplify/reshape_mover.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kPasses = {"simplify-while-loops", "simplify-conditional", "simplify-sorts",
                                          "reshape-mover", "convert-mover"};

absl::StatusOr<bool> RunPass(const std::string& name, HloModule& module) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  std::unique_ptr<HloPass> pass = info->factory(PassOptions());
  PassContext context;
  return pass->Run(module, context);
}

// The shared tolerances for one pass's before/after outputs: f32 (and wider) 1e-5, f16 1e-3,
// bf16 1e-2, integers and pred exact. None of these passes reorders a reduction or a dot.
double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16:
      return 1e-3;
    case PrimitiveType::BF16:
      return 1e-2;
    default:
      return IsFloatingPoint(t) || IsComplex(t) ? 1e-5 : 0;
  }
}

// Compares leaf by leaf; returns "" when they agree.
std::string CompareOutputs(const Literal& after, const Literal& before) {
  std::vector<const Literal*> a = FlattenLeaves(after), b = FlattenLeaves(before);
  if (a.size() != b.size()) return absl::StrCat(a.size(), " outputs after, ", b.size(), " before");
  for (size_t i = 0; i < a.size(); ++i) {
    CompareResult r = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->element_type()));
    if (!r.ok) return absl::StrCat("output ", i, ": ", r.message, " (error ", r.error, ")");
  }
  return "";
}

// Deterministic inputs for a lit test module: floats in [-2, 2], integers in [0, 4] (small,
// so loop bounds stay small), preds either way.
std::vector<Literal> MakeInputs(const HloModule& module, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Literal> args;
  const HloComputation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    Literal lit(entry->parameter_instruction(i)->shape());
    for (int64_t k = 0; k < lit.element_count(); ++k) {
      PrimitiveType t = lit.element_type();
      if (IsFloatingPoint(t)) {
        lit.SetDouble(k, std::uniform_real_distribution<double>(-2, 2)(rng));
      } else if (t == PrimitiveType::PRED) {
        lit.SetInt(k, rng() % 2);
      } else {
        lit.SetInt(k, rng() % 5);
      }
    }
    args.push_back(std::move(lit));
  }
  return args;
}

std::vector<std::string> Files(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string p = e.path().string();
    if (p.size() >= suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("control-flow passes are registered under XLA's names", "[control_flow]") {
  for (const std::string& name : kPasses) {
    INFO(name);
    const PassInfo* info = PassRegistry::Global().Find(name);
    REQUIRE(info != nullptr);
    CHECK(!info->description.empty());
  }
}

TEST_CASE("control-flow passes keep the corpus's meaning", "[control_flow][corpus]") {
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus/";
  std::vector<std::string> modules = Files(dir, ".small.before_optimizations.txt");
  REQUIRE(modules.size() >= 20);
  int changed_runs = 0;
  for (const std::string& path : modules) {
    std::string stem = path.substr(0, path.size() - std::string("before_optimizations.txt").size());
    INFO(path);
    absl::StatusOr<std::unique_ptr<HloModule>> original = ParseHloModuleFile(path);
    REQUIRE(original.ok());
    absl::StatusOr<std::vector<Literal>> args = LoadCorpusInputs(**original, stem + "inputs.npz");
    REQUIRE(args.ok());
    absl::StatusOr<Literal> before = EvaluateModule(**original, *args);
    REQUIRE(before.ok());
    const std::string text = PrintModule(**original);
    // Each pass alone, run to its fixed point, and then all five in turn to theirs.
    std::vector<std::vector<std::string>> schedules;
    for (const std::string& p : kPasses) schedules.push_back({p});
    schedules.push_back(kPasses);
    for (const std::vector<std::string>& schedule : schedules) {
      INFO("passes: " << schedule.front() << (schedule.size() > 1 ? " (all five)" : ""));
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, path);
      REQUIRE(module.ok());
      bool changed = false;
      for (int round = 0; round < 8; ++round) {
        bool any = false;
        for (const std::string& p : schedule) {
          absl::StatusOr<bool> c = RunPass(p, **module);
          REQUIRE(c.ok());
          absl::Status verified = VerifyModule(**module);
          INFO("after " << p << ": " << verified.message());
          REQUIRE(verified.ok());
          any |= *c;
        }
        changed |= any;
        if (!any) break;
      }
      if (!changed) continue;
      ++changed_runs;
      absl::StatusOr<Literal> after = EvaluateModule(**module, *args);
      REQUIRE(after.ok());
      std::string mismatch = CompareOutputs(*after, *before);
      INFO(mismatch);
      CHECK(mismatch.empty());
      // What the pass wrote must read back as the same module.
      absl::StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(PrintModule(**module), path);
      REQUIRE(reparsed.ok());
      CHECK(PrintModule(**reparsed) == PrintModule(**module));
    }
  }
  // The movers have work on the bf16 and reshape-heavy modules.
  CHECK(changed_runs >= 5);
}

TEST_CASE("control-flow passes keep the meaning of their lit tests' modules", "[control_flow][lit]") {
  int evaluated = 0, changed = 0;
  for (const std::string& pass : kPasses) {
    for (const std::string& path : Files(std::string(HLOC_TESTS_DIR) + "/lit/" + pass, ".hlo")) {
      INFO(path);
      absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModuleFile(path);
      REQUIRE(module.ok());
      REQUIRE(VerifyModule(**module).ok());
      std::vector<Literal> args = MakeInputs(**module, 1234);
      // Side-effecting custom-calls (the negative tests' "log_value") have no evaluation.
      absl::StatusOr<Literal> before = EvaluateModule(**module, args);
      absl::StatusOr<bool> c = RunPass(pass, **module);
      REQUIRE(c.ok());
      absl::Status verified = VerifyModule(**module);
      INFO(verified.message());
      REQUIRE(verified.ok());
      if (!before.ok()) continue;
      ++evaluated;
      changed += *c;
      absl::StatusOr<Literal> after = EvaluateModule(**module, args);
      REQUIRE(after.ok());
      std::string mismatch = CompareOutputs(*after, *before);
      INFO(mismatch);
      CHECK(mismatch.empty());
    }
  }
  CHECK(evaluated >= 40);
  CHECK(changed >= 25);
}

TEST_CASE("control-flow passes never crash on XLA's parser cases", "[control_flow][robustness]") {
  int ran = 0;
  for (const char* sub : {"/xla-hlo-cases/valid", "/xla-hlo-cases/valid_other"}) {
    for (const std::string& path : Files(std::string(HLOC_TESTS_DIR) + sub, ".hlo")) {
      absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModuleFile(path);
      if (!parsed.ok() || !VerifyModule(**parsed).ok()) continue;
      const std::string text = PrintModule(**parsed);
      for (const std::string& pass : kPasses) {
        INFO(path << " with " << pass);
        absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, path);
        REQUIRE(module.ok());
        absl::StatusOr<bool> c = RunPass(pass, **module);
        if (!c.ok()) continue;  // a reported error is fine; a crash or a broken module is not
        absl::Status verified = VerifyModule(**module);
        INFO(verified.message());
        CHECK(verified.ok());
        ++ran;
      }
    }
  }
  CHECK(ran > 100);
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  REQUIRE(m.ok());
  REQUIRE(VerifyModule(**m).ok());
  return std::move(*m);
}

const HloInstruction* FindWhile(const HloModule& module) {
  for (const auto& inst : module.entry_computation()->instructions())
    if (inst->opcode() == HloOpcode::kWhile) return inst.get();
  return nullptr;
}

// A counter loop: i from `start`, compared `dir` against `bound`, stepping by `step`.
std::string CounterLoop(const std::string& start, const std::string& dir, const std::string& bound,
                        const std::string& step) {
  return absl::StrCat(R"(
HloModule counter
body {
  bp = (s32[]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  k = s32[] constant()", step, R"()
  next = s32[] add(bi, k)
  ROOT bt = (s32[]) tuple(next)
}
cond {
  cp = (s32[]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant()", bound, R"()
  ROOT c = pred[] compare(ci, n), direction=)", dir, R"(
}
ENTRY main {
  s = s32[] constant()", start, R"()
  init = (s32[]) tuple(s)
  ROOT w = (s32[]) while(init), condition=cond, body=body
}
)");
}

TEST_CASE("while-loop trip counts follow XLA's analysis", "[control_flow][while]") {
  struct Case {
    std::string start, dir, bound, step;
    std::optional<int64_t> trips;
  };
  const std::vector<Case> cases = {
      {"0", "LT", "10", "1", 10},  {"0", "LT", "10", "3", 4},  {"0", "LE", "10", "3", 4},
      {"5", "LT", "5", "1", 0},    {"7", "LE", "5", "1", 0},   {"-3", "LT", "4", "2", 4},
      {"0", "LE", "0", "1", 1},    {"0", "LT", "2147483647", "1", 2147483647},
  };
  for (const Case& c : cases) {
    INFO(c.start << " " << c.dir << " " << c.bound << " step " << c.step);
    std::unique_ptr<HloModule> m = Parse(CounterLoop(c.start, c.dir, c.bound, c.step));
    const HloInstruction* w = FindWhile(*m);
    REQUIRE(w != nullptr);
    CHECK(cf::GetLoopInductionVarTupleIdx(w) == std::optional<int64_t>(0));
    CHECK(cf::ComputeWhileLoopTripCount(w) == c.trips);
  }
  SECTION("a decreasing counter is no pattern, but brute force counts it") {
    std::unique_ptr<HloModule> m = Parse(CounterLoop("3", "GT", "0", "-1"));
    const HloInstruction* w = FindWhile(*m);
    CHECK(cf::ComputeWhileLoopTripCount(w, /*max_brute_force_iters=*/1) == std::nullopt);
    CHECK(cf::ComputeWhileLoopTripCount(w, /*max_brute_force_iters=*/10) == std::optional<int64_t>(3));
  }
}

TEST_CASE("a loop bounded by a parameter has no trip count", "[control_flow][while]") {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule bounded_by_parameter
body {
  bp = (s32[], s32[]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bn = s32[] get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(bi, one)
  ROOT bt = (s32[], s32[]) tuple(next, bn)
}
cond {
  cp = (s32[], s32[]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] get-tuple-element(cp), index=1
  ROOT c = pred[] compare(ci, cn), direction=LT
}
ENTRY main {
  n = s32[] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, n)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
)");
  const HloInstruction* w = FindWhile(*m);
  // The condition reads two elements: no single induction variable.
  CHECK(cf::GetLoopInductionVarTupleIdx(w) == std::nullopt);
  CHECK(cf::ComputeWhileLoopTripCount(w) == std::nullopt);
  absl::StatusOr<bool> changed = RunPass("simplify-while-loops", *m);
  REQUIRE(changed.ok());
  CHECK_FALSE(*changed);
}

TEST_CASE("a loop whose result is its root keeps every element", "[control_flow][while]") {
  // Element 1 is unread inside the loop, but the root hands the whole tuple to the caller.
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule root_loop
body {
  bp = (s32[], f32[2], s32[]) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bn = s32[] get-tuple-element(bp), index=2
  one = s32[] constant(1)
  next = s32[] add(bi, one)
  c = f32[2] constant({1, 2})
  ROOT bt = (s32[], f32[2], s32[]) tuple(next, c, bn)
}
cond {
  cp = (s32[], f32[2], s32[]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] get-tuple-element(cp), index=2
  ROOT lt = pred[] compare(ci, cn), direction=LT
}
ENTRY main {
  x = f32[2] parameter(0)
  n = s32[] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[2], s32[]) tuple(zero, x, n)
  ROOT w = (s32[], f32[2], s32[]) while(init), condition=cond, body=body
}
)");
  absl::StatusOr<bool> changed = RunPass("simplify-while-loops", *m);
  REQUIRE(changed.ok());
  CHECK_FALSE(*changed);
  CHECK(m->entry_computation()->root_instruction()->opcode() == HloOpcode::kWhile);
}

TEST_CASE("reshape-mover's reshape_of_1d_broadcast_is_cheap", "[control_flow][reshape_mover]") {
  const std::string text = R"(
HloModule cheap_broadcast
ENTRY main {
  a = f32[6,4] parameter(0)
  v = f32[4] parameter(1)
  ra = f32[2,3,4] reshape(a)
  bv = f32[2,3,4] broadcast(v), dimensions={2}
  ROOT s = f32[2,3,4] add(ra, bv)
}
)";
  std::unique_ptr<HloModule> m = Parse(text);
  const HloComputation* entry = m->entry_computation();
  const HloInstruction* ra = entry->GetInstructionWithName("ra");
  const HloInstruction* bv = entry->GetInstructionWithName("bv");
  CHECK_FALSE(ReshapeMover().CanTriviallyRearrange(bv, ra));
  ReshapeMoverOptions cheap;
  cheap.reshape_of_1d_broadcast_is_cheap = true;
  CHECK(ReshapeMover(cheap).CanTriviallyRearrange(bv, ra));

  PassContext context;
  absl::StatusOr<bool> unchanged = ReshapeMover().Run(*m, context);
  REQUIRE(unchanged.ok());
  CHECK_FALSE(*unchanged);

  std::vector<Literal> args = MakeInputs(*m, 7);
  absl::StatusOr<Literal> before = EvaluateModule(*m, args);
  REQUIRE(before.ok());
  absl::StatusOr<bool> moved = ReshapeMover(cheap).Run(*m, context);
  REQUIRE(moved.ok());
  CHECK(*moved);
  REQUIRE(VerifyModule(*m).ok());
  CHECK(m->entry_computation()->root_instruction()->opcode() == HloOpcode::kReshape);
  absl::StatusOr<Literal> after = EvaluateModule(*m, args);
  REQUIRE(after.ok());
  CHECK(CompareOutputs(*after, *before).empty());
}

TEST_CASE("EvaluateExpression folds constants only", "[control_flow][util]") {
  std::unique_ptr<HloModule> m = Parse(R"(
HloModule expr
ENTRY main {
  p = s32[] parameter(0)
  a = s32[] constant(20)
  b = s32[] constant(22)
  s = s32[] add(a, b)
  t = s32[] add(s, p)
  ROOT r = (s32[], s32[]) tuple(s, t)
}
)");
  const HloComputation* entry = m->entry_computation();
  std::optional<Literal> s = cf::EvaluateExpression(entry->GetInstructionWithName("s"));
  REQUIRE(s.has_value());
  CHECK(s->GetInt(0) == 42);
  CHECK_FALSE(cf::EvaluateExpression(entry->GetInstructionWithName("t")).has_value());
  Literal one = Literal::ScalarInt(PrimitiveType::S32, 1);
  std::optional<Literal> t = cf::EvaluateExpression(entry->GetInstructionWithName("t"),
                                                    {{entry->GetInstructionWithName("p"), &one}});
  REQUIRE(t.has_value());
  CHECK(t->GetInt(0) == 43);
}

}  // namespace
}  // namespace hloc
