// The rule compiler's output and the rewrite driver, on tests/unit/rules/TestRules.td (compiled
// into this binary by hloc-tblgen) and the generated layout/fusion tables of TestTables.td.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>

#include "engine/profile.h"
#include "engine/rewrite.h"
#include "engine/rule_helpers.h"
#include "engine/rule_tables.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "passes/passes.h"
#include "unit/rules/test_rule_helpers.h"

namespace hloc {
// Generated from tests/unit/rules/*.td.
void RegisterRules_TestRules(RuleRegistry& registry);
void RegisterLayout_TestTables(GeneratedTables& tables);
void RegisterFusion_TestTables(GeneratedTables& tables);

// TestRules.td's own C++ (declared in unit/rules/test_rule_helpers.h).
bool TestIsNegativeConstant(RewriteContext&, const HloInstruction* c) {
  const HloInstruction* k = rules::EffectiveConstant(c);
  if (k == nullptr || !k->attrs().literal) return false;
  const Literal& lit = *k->attrs().literal;
  for (int64_t i = 0; i < lit.element_count(); ++i)
    if (!(lit.GetDouble(i) < 0)) return false;
  return lit.element_count() > 0;
}

bool TestNativeTanhOfZero(RewriteContext& ctx, HloInstruction* root, HloInstruction* x) {
  if (!rules::IsZero(x)) return false;
  return ctx.Replace(root, x);  // tanh(0) = 0
}
}  // namespace hloc

using namespace hloc;

namespace {

void EnsureTestRules() {
  static bool registered = [] {
    RegisterRules_TestRules(RuleRegistry::Global());
    return true;
  }();
  (void)registered;
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  INFO((m.ok() ? std::string("parsed") : std::string(m.status().message())));
  REQUIRE(m.ok());
  absl::Status verified = VerifyModule(**m);
  INFO(verified.message());
  REQUIRE(verified.ok());
  return std::move(*m);
}

struct RunResult {
  bool changed = false;
  RewriteStats stats;
  std::string trace;
};

// Runs `pass` with only `enabled` rules (and `disabled` off), then verifies the module.
RunResult Rewrite(HloModule& m, std::vector<std::string> enabled, const std::string& pass = "test-rewrite",
                  const HardwareProfile* profile = nullptr, std::vector<std::string> disabled = {},
                  int64_t max_iterations = 100) {
  EnsureTestRules();
  PassContext ctx;
  ctx.enabled_rules = std::move(enabled);
  ctx.disabled_rules = std::move(disabled);
  ctx.profile = profile;
  ctx.trace_rules = true;
  std::ostringstream trace;
  ctx.trace_out = &trace;
  RunResult r;
  auto changed = RunRewriteRules(m, pass, ctx, max_iterations, &r.stats);
  REQUIRE(changed.ok());
  r.changed = *changed;
  r.trace = trace.str();
  absl::Status verified = VerifyModule(m);
  INFO(verified.message() << "\n" << PrintModule(m));
  REQUIRE(verified.ok());
  // What a rewrite leaves behind must print and parse back (definitions ahead of uses).
  REQUIRE(ParseHloModule(PrintModule(m)).ok());
  return r;
}

const HloInstruction* Root(const HloModule& m) { return m.entry_computation()->root_instruction(); }

std::vector<Literal> Inputs(const HloModule& m) {
  std::vector<Literal> args;
  int seed = 1;
  for (const HloInstruction* p : m.entry_computation()->parameters()) {
    Literal l(p->shape());
    for (int64_t i = 0; i < l.element_count(); ++i) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      double v = (seed % 2000) / 100.0 - 10.0;
      if (IsIntegral(l.element_type())) l.SetInt(i, static_cast<int64_t>(v));
      else if (l.element_type() == PrimitiveType::PRED) l.SetInt(i, seed & 1);
      else l.SetDouble(i, v);
    }
    args.push_back(std::move(l));
  }
  return args;
}

// Evaluates before and after `rewrite` on the same inputs; the results must be identical.
void CheckSameResults(HloModule& m, const std::function<void()>& rewrite) {
  std::vector<Literal> args = Inputs(m);
  auto before = EvaluateModule(m, args);
  REQUIRE(before.ok());
  rewrite();
  auto after = EvaluateModule(m, args);
  REQUIRE(after.ok());
  CHECK(*before == *after);
}

const RuleInfo* FindRule(const std::string& name) {
  EnsureTestRules();
  for (const RuleInfo* r : RuleRegistry::Global().all())
    if (name == r->name) return r;
  return nullptr;
}

std::string ToCamel(const std::string& enumerator) { return enumerator.substr(1); }  // kAdd -> Add

}  // namespace

TEST_CASE("rules/base/Ops.td has one def per opcode, named after its enumerator", "[rewrite][tblgen]") {
  std::ifstream in(std::string(HLOC_SOURCE_DIR) + "/rules/base/Ops.td");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  std::map<std::string, std::string> defs;  // def name -> text name
  std::map<std::string, std::string> traits;  // def name -> its trait list as written
  std::regex def_re(R"re(def (\w+) : Op<"([^"]+)"(?:, \[([\w, ]*)\])?>;)re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), def_re); it != std::sregex_iterator(); ++it) {
    defs[(*it)[1]] = (*it)[2];
    traits[(*it)[1]] = (*it)[3];
  }
  std::map<std::string, std::string> want;
#define HLOC_TEST_OPCODE(e, name, arity) want[ToCamel(#e)] = name;
  HLOC_OPCODES(HLOC_TEST_OPCODE)
#undef HLOC_TEST_OPCODE
  CHECK(defs == want);
  CHECK(defs.size() == static_cast<size_t>(kNumOpcodes));
  // The Elementwise trait (an OpSet can select ops by it) is exactly src/ir/opcode.cc's
  // IsElementwise.
  for (int i = 0; i < kNumOpcodes; ++i) {
    const HloOpcode op = static_cast<HloOpcode>(i);
    std::string name;
#define HLOC_TEST_OPCODE(e, text, arity) \
  if (op == HloOpcode::e) name = ToCamel(#e);
    HLOC_OPCODES(HLOC_TEST_OPCODE)
#undef HLOC_TEST_OPCODE
    INFO(name << " in rules/base/Ops.td: traits [" << traits[name] << "]");
    CHECK(std::regex_search(traits[name], std::regex(R"(\bElementwise\b)")) == IsElementwise(op));
  }
}

TEST_CASE("a rule over an op set is one row and one function per op, under the rule's name", "[rewrite][tblgen]") {
  EnsureTestRules();
  std::vector<const RuleInfo*> rows;
  for (const RuleInfo* r : RuleRegistry::Global().all())
    if (std::string(r->name) == "TOpOfBroadcast") rows.push_back(r);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]->root_opcode == static_cast<int>(HloOpcode::kNegate));
  CHECK(rows[1]->root_opcode == static_cast<int>(HloOpcode::kAbs));
  CHECK(rows[0]->line == rows[1]->line);
  CHECK(rows[0]->fn != rows[1]->fn);
  CHECK(std::string(rows[0]->summary) == "op(broadcast(s)) => broadcast(op(s)) for op in negate, abs: one row and function per op");
  for (const char* op : {"negate", "abs"}) {
    auto m = Parse(std::string(R"(HloModule m
ENTRY main {
  s = f32[] parameter(0)
  b = f32[2,3]{1,0} broadcast(s), dimensions={}
  ROOT n = f32[2,3]{1,0} )") + op + R"((b)
})");
    INFO(op);
    CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TOpOfBroadcast"}).changed); });
    const HloInstruction* root = Root(*m);
    REQUIRE(root->opcode() == HloOpcode::kBroadcast);
    CHECK(HloOpcodeString(root->operand(0)->opcode()) == op);
  }
  // Not for an op outside the set.
  auto m = Parse(R"(HloModule m
ENTRY main {
  s = f32[] parameter(0)
  b = f32[2,3]{1,0} broadcast(s), dimensions={}
  ROOT n = f32[2,3]{1,0} exponential(b)
})");
  CHECK_FALSE(Rewrite(*m, {"TOpOfBroadcast"}).changed);
}

TEST_CASE("generated RuleInfo carries tags; YAML's tag:NAME selects by them", "[rewrite][tblgen]") {
  const RuleInfo* add_zero = FindRule("AddZero");
  REQUIRE(add_zero != nullptr);
  REQUIRE(add_zero->num_tags == 1);
  CHECK(std::string(add_zero->tags[0]) == "inexact_like_xla");
  CHECK(RuleHasTag(*add_zero, "inexact_like_xla"));
  CHECK(RuleNamedBy("tag:inexact_like_xla", *add_zero));
  CHECK(RuleNamedBy("AddZero", *add_zero));
  CHECK_FALSE(RuleNamedBy("inexact_like_xla", *add_zero));  // a tag is named with its prefix
  const RuleInfo* sub_zero = FindRule("SubZero");
  REQUIRE(sub_zero != nullptr);
  CHECK(sub_zero->num_tags == 0);
  CHECK_FALSE(RuleNamedBy("tag:inexact_like_xla", *sub_zero));
  const TagInfo* tag = RuleRegistry::Global().FindTag("inexact_like_xla");
  REQUIRE(tag != nullptr);
  CHECK(std::string(tag->summary).find("inexact") != std::string::npos);
  CHECK(RuleRegistry::Global().FindTag("inexact_like_xl") == nullptr);
}

TEST_CASE("generated RuleInfo carries file, line, pass, group, summary and root", "[rewrite][tblgen]") {
  const RuleInfo* add_zero = FindRule("TAddZero");
  REQUIRE(add_zero != nullptr);
  CHECK(std::string(add_zero->file) == "tests/unit/rules/TestRules.td");
  CHECK(std::string(add_zero->pass) == "test-rewrite");
  CHECK(std::string(add_zero->group) == "identities");
  CHECK(std::string(add_zero->summary) == "A + 0 => A");
  CHECK(add_zero->root_opcode == static_cast<int>(HloOpcode::kAdd));
  CHECK(add_zero->num_requires == 0);
  // The line of its def in the .td file.
  std::ifstream in(std::string(HLOC_SOURCE_DIR) + "/" + add_zero->file);
  std::string line;
  for (int i = 0; i < add_zero->line && std::getline(in, line); ++i) {
  }
  CHECK(line.find("def TAddZero") != std::string::npos);

  const RuleInfo* mul_two = FindRule("TMulTwo");
  REQUIRE(mul_two != nullptr);
  CHECK(std::string(mul_two->summary) == "(Multiply $x, (ScalarConstant 2)) => (Add $x, $x)");
  const RuleInfo* seven = FindRule("TSevenToEight");
  REQUIRE(seven != nullptr);
  CHECK(seven->root_opcode == -1);
  const RuleInfo* cap = FindRule("TNeedsCap");
  REQUIRE(cap != nullptr);
  REQUIRE(cap->num_requires == 1);
  CHECK(cap->requirements[0] == Requirement::kHasTma);
  CHECK(std::string(RequirementName(cap->requirements[0])) == "HasTma");
  const RuleInfo* high = FindRule("TNegNegHigh");
  REQUIRE(high != nullptr);
  CHECK(high->priority == 10);

  // Priority first, then declaration order.
  std::vector<const RuleInfo*> rules = RuleRegistry::Global().RulesForPass("test-rewrite");
  auto pos = [&](const char* name) {
    for (size_t i = 0; i < rules.size(); ++i)
      if (std::string(rules[i]->name) == name) return static_cast<int>(i);
    return -1;
  };
  CHECK(pos("TNegNegHigh") == 0);
  CHECK(pos("TAddZero") < pos("TMulOne"));
  CHECK(pos("TMulOne") < pos("TTransposeTranspose"));
  CHECK(RuleRegistry::Global().RulesForPass("no-such-pass").empty());
}

TEST_CASE("commutative rule matches both operand orders; dead leftovers are removed", "[rewrite]") {
  for (const char* operands : {"p, zb", "zb, p"}) {
    auto m = Parse(std::string(R"(HloModule m
ENTRY main {
  p = f32[4]{0} parameter(0)
  z = f32[] constant(0)
  zb = f32[4]{0} broadcast(z), dimensions={}
  ROOT a = f32[4]{0} add()") + operands + R"()
})");
    RunResult r = Rewrite(*m, {"TAddZero"});
    CHECK(r.changed);
    CHECK(Root(*m)->opcode() == HloOpcode::kParameter);
    CHECK(m->entry_computation()->instruction_count() == 1);  // add, broadcast, constant gone
    CHECK(r.stats.firings["TAddZero"] == 1);
  }
}

TEST_CASE("a non-commutative rule matches only the written order", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = s32[3] parameter(0)
  one = s32[3] constant({1, 1, 1})
  ROOT a = s32[3] multiply(one, p)
})");
  CHECK_FALSE(Rewrite(*m, {"TMulOne"}).changed);
  auto m2 = Parse(R"(HloModule m
ENTRY main {
  p = s32[3] parameter(0)
  one = s32[3] constant({1, 1, 1})
  ROOT a = s32[3] multiply(p, one)
})");
  CHECK(Rewrite(*m2, {"TMulOne"}).changed);
  CHECK(Root(*m2)->opcode() == HloOpcode::kParameter);
}

TEST_CASE("transpose of transpose composes the permutations", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[2,3,4]{2,1,0} parameter(0)
  t1 = f32[3,4,2]{2,1,0} transpose(p), dimensions={1,2,0}
  ROOT t2 = f32[4,3,2]{2,1,0} transpose(t1), dimensions={1,0,2}
})");
  CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TTransposeTranspose"}).changed); });
  const HloInstruction* root = Root(*m);
  REQUIRE(root->opcode() == HloOpcode::kTranspose);
  CHECK(root->operand(0)->opcode() == HloOpcode::kParameter);
  CHECK(root->attrs().dimensions == std::vector<int64_t>{2, 1, 0});
  CHECK(root->shape().has_layout());  // the old root's layout is kept
  CHECK(m->entry_computation()->instruction_count() == 2);
}

TEST_CASE("result DAGs: new ops with inferred shapes, reused named nodes, builders and attr fns", "[rewrite]") {
  SECTION("x * 2 => x + x") {
    auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[5] parameter(0)
  two = f32[] constant(2)
  b = f32[5] broadcast(two), dimensions={}
  ROOT a = f32[5] multiply(p, b)
})");
    CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TMulTwo"}).changed); });
    CHECK(Root(*m)->opcode() == HloOpcode::kAdd);
    CHECK(Root(*m)->operand(0) == Root(*m)->operand(1));
  }
  SECTION("x * 4 => d + d with d = x + x built once") {
    auto m = Parse(R"(HloModule m
ENTRY main {
  p = s32[5] parameter(0)
  four = s32[5] constant({4, 4, 4, 4, 4})
  ROOT a = s32[5] multiply(p, four)
})");
    CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TMulFour"}).changed); });
    const HloInstruction* root = Root(*m);
    REQUIRE(root->opcode() == HloOpcode::kAdd);
    CHECK(root->operand(0) == root->operand(1));
    CHECK(root->operand(0)->opcode() == HloOpcode::kAdd);
  }
  SECTION("x - x => 0 for integers only (constraint)") {
    auto m = Parse(R"(HloModule m
ENTRY main {
  p = s32[2,3] parameter(0)
  ROOT s = s32[2,3] subtract(p, p)
})");
    CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TSubSelf"}).changed); });
    CHECK(rules::IsZero(Root(*m)));
    auto f = Parse(R"(HloModule m
ENTRY main {
  p = f32[2,3] parameter(0)
  ROOT s = f32[2,3] subtract(p, p)
})");
    CHECK_FALSE(Rewrite(*f, {"TSubSelf"}).changed);
  }
  SECTION("-broadcast(s) => broadcast(-s): shape and dimensions from the matched broadcast") {
    auto m = Parse(R"(HloModule m
ENTRY main {
  s = f32[] parameter(0)
  b = f32[2,3]{1,0} broadcast(s), dimensions={}
  ROOT n = f32[2,3]{1,0} negate(b), metadata={op_name="jit(f)/neg"}
})");
    CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TNegBroadcast"}).changed); });
    const HloInstruction* root = Root(*m);
    REQUIRE(root->opcode() == HloOpcode::kBroadcast);
    CHECK(root->operand(0)->opcode() == HloOpcode::kNegate);
    CHECK(root->attrs().metadata.op_name == "jit(f)/neg");  // created instructions take the root's metadata
    CHECK(root->operand(0)->attrs().metadata.op_name == "jit(f)/neg");
  }
}

TEST_CASE("priority decides between rules; rules and groups can be disabled", "[rewrite]") {
  const char* text = R"(HloModule m
ENTRY main {
  p = f32[3] parameter(0)
  n1 = f32[3] negate(p)
  ROOT n2 = f32[3] negate(n1)
})";
  auto m = Parse(text);
  RunResult r = Rewrite(*m, {"prio"});
  CHECK(Root(*m)->opcode() == HloOpcode::kParameter);
  CHECK(r.stats.firings.count("TNegNegLow") == 0);

  auto m2 = Parse(text);
  Rewrite(*m2, {"prio"}, "test-rewrite", nullptr, {"TNegNegHigh"});
  CHECK(Root(*m2)->opcode() == HloOpcode::kAbs);

  auto m3 = Parse(text);
  CHECK_FALSE(Rewrite(*m3, {}, "test-rewrite", nullptr, {"prio", "TNegBroadcast"}).changed);
  CHECK(Root(*m3)->opcode() == HloOpcode::kNegate);
}

TEST_CASE("a rule that refuses leaves the computation as it was", "[rewrite]") {
  const char* text = R"(HloModule m
ENTRY main {
  p = f32[2,3] parameter(0)
  a = f32[2,3] abs(p)
  s = f32[2,3] sqrt(a)
  ROOT e = f32[2,3] exponential(s)
})";
  auto m = Parse(text);
  std::string before = PrintModule(*m);
  RunResult r = Rewrite(*m, {"TAbsBadDims", "TSqrtNoShape", "TExpWrongShape"});
  CHECK_FALSE(r.changed);
  CHECK(r.trace.empty());
  CHECK(PrintModule(*m) == before);
}

TEST_CASE("Unless and a rule file's own constraints", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = s32[2] parameter(0)
  c = s32[2] constant({-3, -1})
  ROOT mx = s32[2] maximum(p, c)
})");
  CHECK(Rewrite(*m, {"TMaxNotNegative"}).changed);
  CHECK(Root(*m)->opcode() == HloOpcode::kParameter);
  auto pos = Parse(R"(HloModule m
ENTRY main {
  p = s32[2] parameter(0)
  c = s32[2] constant({-3, 1})
  ROOT mx = s32[2] maximum(p, c)
})");
  CHECK_FALSE(Rewrite(*pos, {"TMaxNotNegative"}).changed);
  auto f = Parse(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  c = f32[2] constant({-3, -1})
  ROOT mx = f32[2] maximum(p, c)
})");
  CHECK_FALSE(Rewrite(*f, {"TMaxNotNegative"}).changed);
}

TEST_CASE("rules with Requires run only when the profile has the capability", "[rewrite]") {
  const char* text = R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT f = f32[2] floor(p)
})";
  auto m = Parse(text);
  CHECK_FALSE(Rewrite(*m, {"TNeedsCap"}).changed);  // no profile
  HardwareProfile without;
  without.capabilities["HasTma"] = false;
  CHECK_FALSE(Rewrite(*m, {"TNeedsCap"}, "test-rewrite", &without).changed);
  HardwareProfile with;
  with.capabilities["HasTma"] = true;
  CHECK(Rewrite(*m, {"TNeedsCap"}, "test-rewrite", &with).changed);
  CHECK(Root(*m)->opcode() == HloOpcode::kCeil);
}

TEST_CASE("any-root rules, native rules and bare ? operands", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = s32[] parameter(0)
  seven = s32[] constant(7)
  v = s32[2] constant({7, 7})
  a = s32[] add(p, seven)
  b = s32[2] broadcast(a), dimensions={}
  ROOT t = (s32[2], s32[2]) tuple(b, v)
})");
  CHECK(Rewrite(*m, {"TSevenToEight"}).changed);
  const HloInstruction* add = Root(*m)->operand(0)->operand(0);
  REQUIRE(add->opcode() == HloOpcode::kAdd);
  CHECK(rules::IsScalarConstant(add->operand(1), 8));
  CHECK(rules::IsScalarConstant(Root(*m)->operand(1), 7));  // not a scalar: IsScalar refuses

  auto n = Parse(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  z = f32[2] constant({0, 0})
  t0 = f32[2] tanh(z)
  t1 = f32[2] tanh(p)
  ROOT sum = f32[2] add(t0, t1)
})");
  CHECK(Rewrite(*n, {"TNativeTanh"}).changed);
  CHECK(Root(*n)->operand(0)->opcode() == HloOpcode::kConstant);
  CHECK(Root(*n)->operand(1)->opcode() == HloOpcode::kTanh);

  auto s = Parse(R"(HloModule m
ENTRY main {
  c = pred[2] parameter(0)
  a = f32[2] parameter(1)
  b = f32[2] parameter(2)
  same = f32[2] select(c, a, a)
  differ = f32[2] select(c, a, b)
  ROOT res = (f32[2], f32[2]) tuple(same, differ)
})");
  CHECK(Rewrite(*s, {"TSelectSame"}).changed);
  CHECK(Root(*s)->operand(0)->opcode() == HloOpcode::kParameter);
  CHECK(Root(*s)->operand(1)->opcode() == HloOpcode::kSelect);
}

TEST_CASE("rules reach called computations; new instructions get fresh names", "[rewrite]") {
  auto m = Parse(R"(HloModule m
inner {
  x = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  ROOT add.1 = f32[4] add(z, x)
}
ENTRY main {
  p = f32[4] parameter(0)
  two = f32[4] constant({2, 2, 2, 2})
  m.1 = f32[4] multiply(p, two)
  ROOT c = f32[4] call(m.1), to_apply=inner
})");
  CheckSameResults(*m, [&] { CHECK(Rewrite(*m, {"TAddZero", "TMulTwo"}).changed); });
  HloComputation* inner = m->GetComputationWithName("inner");
  REQUIRE(inner != nullptr);
  CHECK(inner->root_instruction()->opcode() == HloOpcode::kParameter);
  const HloInstruction* add = Root(*m)->operand(0);
  REQUIRE(add->opcode() == HloOpcode::kAdd);
  CHECK(add->name() != "add.1");  // unique across the module
}

TEST_CASE("rules that undo each other stop at max_iterations", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[2] parameter(0)
  ROOT s = f32[2] sine(p)
})");
  RunResult r = Rewrite(*m, {}, "test-pingpong", nullptr, {}, 3);
  CHECK(r.changed);
  CHECK(r.stats.iterations == 3);
  CHECK(r.stats.firings["TSinToCos"] > 0);
  CHECK(m->entry_computation()->instruction_count() == 2);  // the flip-flopped ops were cleaned up
}

TEST_CASE("--trace-rules prints the rule, its file:line, before and after", "[rewrite]") {
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  ROOT a = f32[4] add(p, z)
})");
  RunResult r = Rewrite(*m, {"TAddZero"});
  const RuleInfo* rule = FindRule("TAddZero");
  std::string header = "[test-rewrite] TAddZero (tests/unit/rules/TestRules.td:" + std::to_string(rule->line) + ")\n";
  CHECK(r.trace.rfind(header, 0) == 0);
  CHECK(r.trace.find("  before: %a = f32[4]{0} add(%p, %z)") != std::string::npos);
  CHECK(r.trace.find("  after:  %p = f32[4]{0} parameter(0)") != std::string::npos);
}

TEST_CASE("bad enable/disable names and arguments are errors", "[rewrite]") {
  EnsureTestRules();
  auto m = Parse(R"(HloModule m
ENTRY main {
  ROOT p = f32[] parameter(0)
})");
  PassContext ctx;
  ctx.disabled_rules = {"NoSuchRule"};
  auto r = RunRewriteRules(*m, "test-rewrite", ctx, 10);
  REQUIRE_FALSE(r.ok());
  CHECK(std::string(r.status().message()).find("NoSuchRule") != std::string::npos);
  PassContext ok;
  CHECK_FALSE(RunRewriteRules(*m, "test-rewrite", ok, 0).ok());
  auto none = RunRewriteRules(*m, "pass-without-rules", ok, 10);
  REQUIRE(none.ok());
  CHECK_FALSE(*none);
}

TEST_CASE("rewrite passes are registered per Pass name, algsimp always", "[rewrite]") {
  EnsureTestRules();
  PassRegistry registry;
  RegisterRewritePasses(registry);
  const PassInfo* algsimp = registry.Find("algsimp");
  REQUIRE(algsimp != nullptr);
  REQUIRE(algsimp->options.size() == 1);
  CHECK(algsimp->options[0].name == "max_iterations");
  CHECK(std::get<int64_t>(algsimp->options[0].default_value) == 100);
  const PassInfo* test = registry.Find("test-rewrite");
  REQUIRE(test != nullptr);

  auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  z = f32[4] constant({0, 0, 0, 0})
  ROOT a = f32[4] add(z, p)
})");
  PassOptions options;
  options.Set("max_iterations", int64_t{5});
  std::unique_ptr<HloPass> pass = test->factory(options);
  PassContext ctx;
  ctx.enabled_rules = {"TAddZero"};
  auto changed = pass->Run(*m, ctx);
  REQUIRE(changed.ok());
  CHECK(*changed);
  CHECK(Root(*m)->opcode() == HloOpcode::kParameter);
}

TEST_CASE("generated layout and fusion tables", "[rewrite][tblgen]") {
  GeneratedTables tables;
  RegisterLayout_TestTables(tables);
  RegisterFusion_TestTables(tables);
  REQUIRE(tables.layout.size() == 3);
  const LayoutConstraintInfo* dot = tables.layout[0];
  CHECK(std::string(dot->name) == "DotLhsContractingMinor");
  CHECK(dot->opcode == static_cast<int>(HloOpcode::kDot));
  CHECK(dot->operand == 0);
  CHECK(std::string(dot->layout) == "ContractingMinor");
  CHECK(dot->required);
  CHECK(std::string(dot->summary) == "A dot's left operand with the contracting dimension most minor.");
  const LayoutConstraintInfo* conv = tables.layout[1];
  CHECK(conv->operand == LayoutConstraintInfo::kResult);
  CHECK_FALSE(conv->required);
  CHECK(conv->priority == 2);
  REQUIRE(conv->num_requires == 1);
  CHECK(conv->requirements[0] == Requirement::kHasTensorCores);
  CHECK(tables.layout[2]->operand == LayoutConstraintInfo::kEveryOperand);

  REQUIRE(tables.fusible.size() == 2);
  CHECK(tables.fusible[0]->num_kinds == 3);
  CHECK(std::string(tables.fusible[0]->kinds[0]) == "kLoop");
  CHECK_FALSE(tables.fusible[1]->as_producer);
  REQUIRE(tables.op_costs.size() == 2);
  CHECK(std::string(tables.op_costs[0]->cost_class) == "ExpensiveOp");
  CHECK(tables.op_costs[0]->relative_cost > tables.op_costs[1]->relative_cost);

  REQUIRE(tables.vetoes.size() == 1);
  const FusionVetoInfo* veto = tables.vetoes[0];
  CHECK(std::string(veto->reason) == "the producer has other users and would be computed twice");
  auto m = Parse(R"(HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  e = f32[4] exponential(p)
  a = f32[4] add(e, e)
  n = f32[4] negate(a)
  ROOT t = (f32[4], f32[4]) tuple(a, n)
})");
  HloComputation* c = m->entry_computation();
  RewriteContext ctx(c, nullptr);
  HloInstruction* e = c->GetInstructionWithName("e");
  HloInstruction* a = c->GetInstructionWithName("a");
  HloInstruction* n = c->GetInstructionWithName("n");
  CHECK(veto->fn(ctx, e, a));        // e is used twice (by a)
  CHECK(veto->fn(ctx, a, n));        // a is used by n and the tuple
  CHECK_FALSE(veto->fn(ctx, n, c->root_instruction()));  // n has one use
  // The build's own tables (rules/layout, rules/fusion) load without error.
  (void)GeneratedTables::Global();
}

TEST_CASE("the build's Fusible and OpCost rows, op sets expanded, give each op its recorded facts",
          "[rewrite][tblgen]") {
  // tests/unit/rules/fusion_op_facts.txt: the per-op facts the one-op records gave before they
  // became op-set rows (issue 15). A Fusible row is read first-wins and an OpCost row last-wins
  // by the engines; hloc-tblgen rejects a second row for an op within a file, and here each op
  // has at most one of each across files.
  std::map<std::string, std::string> fusible, cost;
  const GeneratedTables& tables = GeneratedTables::Global();
  for (const FusibleInfo* row : tables.fusible) {
    std::string name(HloOpcodeString(static_cast<HloOpcode>(row->opcode)));
    std::string kinds;
    for (int k = 0; k < row->num_kinds; ++k) kinds += (k ? "," : "") + std::string(row->kinds[k]);
    CHECK(row->num_requires == 0);
    INFO(name << " has two Fusible rows");
    CHECK(fusible.count(name) == 0);
    fusible[name] = kinds + " producer=" + std::to_string(row->as_producer) + " consumer=" + std::to_string(row->as_consumer);
  }
  for (const OpCostInfo* row : tables.op_costs) {
    std::string name(HloOpcodeString(static_cast<HloOpcode>(row->opcode)));
    INFO(name << " has two OpCost rows");
    CHECK(cost.count(name) == 0);
    cost[name] = std::string(row->cost_class) + "/" + std::to_string(row->relative_cost) +
                 " slow_in_f64=" + std::to_string(row->slow_in_f64) + " expensive=" + std::to_string(row->expensive);
  }
  std::map<std::string, std::string> have, want;
  for (const auto& [op, f] : fusible) have[op] = "fusible=" + f;
  for (const auto& [op, c] : cost) have[op] += std::string(have[op].empty() ? "fusible=-" : "") + " cost=" + c;
  for (auto& [op, line] : have)
    if (line.find(" cost=") == std::string::npos) line += " cost=-";
  std::ifstream in(std::string(HLOC_SOURCE_DIR) + "/tests/unit/rules/fusion_op_facts.txt");
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const size_t space = line.find(' ');
    want[line.substr(0, space)] = line.substr(space + 1);
  }
  REQUIRE(want.size() == 87);
  for (const auto& [op, facts] : want) {
    INFO(op);
    CHECK(have[op] == facts);
  }
  CHECK(have.size() == want.size());
}
