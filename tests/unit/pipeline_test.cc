// The pass manager, pipeline manifests, hardware profiles and their patches (src/engine/
// pipeline.h, profile_loader.h, pass_manager.h, yaml_util.h), on passes registered here in a
// private registry so the behaviour tested does not depend on the real passes; then the real
// manifests and profiles (pipelines/, configs/) against the global registry, and the GPU
// pipeline on the corpus with the reference evaluator before and after.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "engine/yaml_util.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"

using namespace hloc;

namespace {

namespace fs = std::filesystem;

// --- test passes ----------------------------------------------------------------------------------

std::vector<std::string>& RunLog() {
  static std::vector<std::string> log;
  return log;
}

// Removes one negate per run (all with option all=true): a pass that needs several runs to
// reach its fixed point.
class StripNegate : public HloPass {
 public:
  explicit StripNegate(bool all) : all_(all) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override {
    RunLog().push_back("strip-negate");
    bool changed = false;
    for (HloInstruction* inst : module.entry_computation()->MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kNegate) continue;
      inst->ReplaceAllUsesWith(inst->operand(0));
      if (absl::Status s = module.entry_computation()->RemoveInstruction(inst); !s.ok()) return s;
      changed = true;
      if (!all_) break;
    }
    return changed;
  }

 private:
  bool all_;
};

class AlwaysChanges : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule&, PassContext&) override {
    RunLog().push_back("always-changes");
    return true;
  }
};

// Leaves a module the verifier rejects (the root's element type no longer matches).
class Corrupt : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override {
    module.entry_computation()->root_instruction()->mutable_shape().set_element_type(PrimitiveType::S32);
    return true;
  }
};

class Fails : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule&, PassContext&) override { return absl::InternalError("boom"); }
};

// Logs its options and the rule lists the pass manager hands it.
class Record : public HloPass {
 public:
  explicit Record(const PassOptions& o) : o_(o) {}
  absl::StatusOr<bool> Run(HloModule&, PassContext& context) override {
    RunLog().push_back(absl::StrCat(
        "record tag=", o_.GetString("tag"), " n=", o_.GetInt("n"), " f=", o_.GetFloat("f"),
        " b=", o_.GetBool("b") ? "true" : "false", " l=", absl::StrJoin(o_.GetStringList("l"), "+"),
        " enable=", absl::StrJoin(context.enabled_rules, "+"), " disable=", absl::StrJoin(context.disabled_rules, "+"),
        " profile=", context.profile ? context.profile->name : "none"));
    return false;
  }

 private:
  PassOptions o_;
};

PassRegistry& TestPasses() {
  static PassRegistry* r = [] {
    auto* reg = new PassRegistry();
    PassInfo strip;
    strip.name = "strip-negate";
    strip.description = "removes negates";
    strip.options = {{"all", OptionType::kBool, OptionValue(false), "all at once"}};
    strip.factory = [](const PassOptions& o) { return std::make_unique<StripNegate>(o.GetBool("all")); };
    reg->Register(strip);
    PassInfo always;
    always.name = "always-changes";
    always.factory = [](const PassOptions&) { return std::make_unique<AlwaysChanges>(); };
    reg->Register(always);
    PassInfo corrupt;
    corrupt.name = "corrupt";
    corrupt.factory = [](const PassOptions&) { return std::make_unique<Corrupt>(); };
    reg->Register(corrupt);
    PassInfo fails;
    fails.name = "fails";
    fails.factory = [](const PassOptions&) { return std::make_unique<Fails>(); };
    reg->Register(fails);
    PassInfo record;
    record.name = "record";
    record.options = {{"tag", OptionType::kString, OptionValue(std::string("-")), ""},
                      {"n", OptionType::kInt, OptionValue(int64_t{7}), ""},
                      {"f", OptionType::kFloat, OptionValue(0.5), ""},
                      {"b", OptionType::kBool, OptionValue(false), ""},
                      {"l", OptionType::kStringList, OptionValue(std::vector<std::string>{}), ""}};
    record.factory = [](const PassOptions& o) { return std::make_unique<Record>(o); };
    reg->Register(record);
    return reg;
  }();
  return *r;
}

bool NoRule(RewriteContext&, HloInstruction*) { return false; }

RuleRegistry& TestRuleRegistry() {
  static const RuleInfo rules[] = {
      {"RuleA", "record", "group-a", 0, "test.td", 1, -1, nullptr, 0, "a", &NoRule},
      {"RuleB", "record", "group-b", 0, "test.td", 2, -1, nullptr, 0, "b", &NoRule},
      {"Other", "strip-negate", "", 0, "test.td", 3, -1, nullptr, 0, "c", &NoRule},
  };
  static RuleRegistry* r = [] {
    auto* reg = new RuleRegistry();
    for (const RuleInfo& info : rules) reg->Register(&info);
    return reg;
  }();
  return *r;
}

Registries TestRegistries() { return Registries{&TestPasses(), &TestRuleRegistry()}; }

Pipeline Load(const std::string& text) {
  absl::StatusOr<Pipeline> p = LoadPipelineString(text, "m.yaml", TestRegistries());
  INFO((p.ok() ? std::string("ok") : std::string(p.status().message())));
  REQUIRE(p.ok());
  return *p;
}

std::string LoadError(const std::string& text) {
  absl::StatusOr<Pipeline> p = LoadPipelineString(text, "m.yaml", TestRegistries());
  REQUIRE_FALSE(p.ok());
  return std::string(p.status().message());
}

Profile LoadProfile(const std::string& text) {
  absl::StatusOr<Profile> p = LoadProfileString(text, "p.yaml", TestRegistries());
  INFO((p.ok() ? std::string("ok") : std::string(p.status().message())));
  REQUIRE(p.ok());
  return *p;
}

std::string PatchError(const std::string& manifest, const std::string& profile) {
  Pipeline p = Load(manifest);
  absl::StatusOr<Profile> prof = LoadProfileString(profile, "p.yaml", TestRegistries());
  if (!prof.ok()) return std::string(prof.status().message());
  absl::Status s = ApplyPatches(*prof, p, TestRegistries());
  REQUIRE_FALSE(s.ok());
  return std::string(s.message());
}

constexpr char kThreeNegates[] = R"(
HloModule negs

ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0)
  %n1 = f32[4]{0} negate(%p)
  %n2 = f32[4]{0} negate(%n1)
  %n3 = f32[4]{0} negate(%n2)
  ROOT %e = f32[4]{0} exponential(%n3)
}
)";

std::unique_ptr<HloModule> Module(const char* text = kThreeNegates) {
  auto m = ParseHloModule(text);
  REQUIRE(m.ok());
  return std::move(*m);
}

int CountOpcode(const HloModule& m, HloOpcode op) {
  int n = 0;
  for (const auto& c : m.computations())
    for (const auto& i : c->instructions()) n += i->opcode() == op;
  return n;
}

struct Run {
  absl::StatusOr<bool> changed;
  PassManagerReport report;
  std::string notes;
};

Run RunOn(const Pipeline& p, HloModule& m, PassManagerOptions options = {}, const HardwareProfile* hw = nullptr) {
  RunLog().clear();
  std::ostringstream notes;
  options.notes = &notes;
  options.registry = &TestPasses();
  PassContext context;
  context.profile = hw;
  Run r{false, {}, ""};
  r.changed = RunPipeline(p, m, context, options, &r.report);
  r.notes = notes.str();
  return r;
}

std::string TempDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / absl::StrCat("hloc_pipeline_test_", ::getpid(), "_", name);
  fs::remove_all(d);
  return d.string();
}

}  // namespace

// --- yaml_util ------------------------------------------------------------------------------------

TEST_CASE("yaml scalars are typed strictly", "[pipeline][yaml]") {
  int64_t i = 0;
  CHECK(yaml::ParseInt("25", &i));
  CHECK(i == 25);
  CHECK(yaml::ParseInt("-9223372036854775808", &i));
  CHECK(i == std::numeric_limits<int64_t>::min());
  CHECK_FALSE(yaml::ParseInt("9223372036854775808", &i));
  CHECK(yaml::ParseInt("0x1F", &i));
  CHECK(i == 31);
  CHECK_FALSE(yaml::ParseInt("1.5", &i));
  CHECK_FALSE(yaml::ParseInt("", &i));
  CHECK_FALSE(yaml::ParseInt("12abc", &i));
  double d = 0;
  CHECK(yaml::ParseFloat("4.8e12", &d));
  CHECK(d == 4.8e12);
  CHECK(yaml::ParseFloat("-.inf", &d));
  CHECK(std::isinf(d));
  CHECK_FALSE(yaml::ParseFloat("1e999", &d));
  CHECK_FALSE(yaml::ParseFloat("e5", &d));
  CHECK_FALSE(yaml::ParseFloat("nan", &d));
  bool b = false;
  CHECK(yaml::ParseBool("True", &b));
  CHECK(b);
  CHECK_FALSE(yaml::ParseBool("yes", &b));
  for (double v : {0.0, 25.0, 0.1, 1e-5, 1.0 / 3.0, -2.5e300, 123456789.125}) {
    double back = 0;
    REQUIRE(yaml::ParseFloat(yaml::FormatFloat(v), &back));
    CHECK(back == v);
  }
  CHECK(yaml::FormatFloat(25) == "25.0");
  CHECK(yaml::QuoteIfNeeded("algsimp") == "algsimp");
  CHECK(yaml::QuoteIfNeeded("layout assignment") == "\"layout assignment\"");
  CHECK(yaml::QuoteIfNeeded("true") == "\"true\"");
  CHECK(yaml::QuoteIfNeeded("a\"b\n") == "\"a\\\"b\\n\"");
  CHECK(yaml::QuoteIfNeeded("") == "\"\"");
}

TEST_CASE("suggestions find the name that was meant", "[pipeline][yaml]") {
  std::vector<std::string> names = {"algsimp", "dce", "cse", "tuple-simplifier", "zero_sized_hlo_elimination"};
  CHECK(yaml::Closest("algsmp", names) == "algsimp");
  CHECK(yaml::Closest("dec", names) == "dce");
  CHECK(yaml::Closest("tuple_simplifier", names) == "tuple-simplifier");
  CHECK(yaml::Closest("zero-sized-hlo-elimination", names) == "zero_sized_hlo_elimination");
  CHECK(yaml::Closest("fusion", names).empty());
  CHECK(yaml::EditDistance("kitten", "sitting") == 3);
  CHECK(yaml::DidYouMean("cs", names) == " (did you mean 'cse'?)");
}

// --- manifests ------------------------------------------------------------------------------------

TEST_CASE("a manifest loads passes, groups, options, labels and verify settings", "[pipeline]") {
  Pipeline p = Load(R"(name: test
description: a test pipeline
verify: {at_start: false, layout_sensitive: true}
passes:
  - strip-negate
  - pass: record
    name: first
    options: {tag: hello, n: -3, f: 2, b: true, l: [x, "y z"]}
    rules: {enable: [group-a], disable: [RuleB]}
  - group: simplification
    fixed_point: {max_iterations: 4}
    passes:
      - pass: strip-negate
        enabled: false
      - group: inner
        fixed_point: true
        passes: []
)");
  CHECK(p.name == "test");
  CHECK(p.description == "a test pipeline");
  CHECK_FALSE(p.verify.at_start);
  CHECK(p.verify.after_changed_pass);
  CHECK(p.verify.layout_sensitive);
  REQUIRE(p.passes.size() == 3);
  CHECK(p.passes[0].pass == "strip-negate");
  CHECK(p.passes[0].location.line == 5);
  CHECK(p.passes[0].location.column == 5);
  const PipelineEntry& rec = p.passes[1];
  CHECK(rec.label == "first");
  CHECK(std::get<std::string>(rec.options.at("tag")) == "hello");
  CHECK(std::get<int64_t>(rec.options.at("n")) == -3);
  CHECK(std::get<double>(rec.options.at("f")) == 2.0);  // an int literal for a float option
  CHECK(std::get<bool>(rec.options.at("b")));
  CHECK(std::get<std::vector<std::string>>(rec.options.at("l")) == std::vector<std::string>{"x", "y z"});
  CHECK(rec.enabled_rules == std::vector<std::string>{"group-a"});
  CHECK(rec.disabled_rules == std::vector<std::string>{"RuleB"});
  const PipelineEntry& g = p.passes[2];
  CHECK(g.is_group());
  CHECK(g.fixed_point);
  CHECK(g.max_iterations == 4);
  REQUIRE(g.passes.size() == 2);
  CHECK_FALSE(g.passes[0].enabled);
  CHECK(g.passes[1].fixed_point);
  CHECK(g.passes[1].max_iterations == PipelineEntry::kDefaultMaxIterations);

  // Defaults fill what the entry leaves out.
  PassOptions o = ResolvedOptions(*TestPasses().Find("record"), rec);
  CHECK(o.GetInt("n") == -3);
  PipelineEntry bare;
  bare.pass = "record";
  PassOptions d = ResolvedOptions(*TestPasses().Find("record"), bare);
  CHECK(d.GetInt("n") == 7);
  CHECK(d.GetString("tag") == "-");
}

TEST_CASE("--print-pipeline output loads back to the same pipeline", "[pipeline]") {
  Pipeline p = Load(R"(name: "round trip"
description: "quotes \" and: colons"
passes:
  - pass: record
    name: "label with spaces"
    options: {tag: "true", f: 0.1, l: []}
    rules: {disable: [group-a, RuleB]}
  - group: "g 1"
    enabled: false
    fixed_point: {max_iterations: 3}
    passes:
      - pass: strip-negate
        options: {all: true}
  - group: empty
    passes: []
)");
  std::string printed = PrintPipeline(p);
  absl::StatusOr<Pipeline> back = LoadPipelineString(printed, "printed.yaml", TestRegistries());
  INFO(printed);
  REQUIRE(back.ok());
  CHECK(SamePipeline(p, *back));
  CHECK(PrintPipeline(*back) == printed);
  // A change is visible to SamePipeline.
  back->passes[1].passes[0].options["all"] = false;
  CHECK_FALSE(SamePipeline(p, *back));
}

TEST_CASE("manifest mistakes are located errors", "[pipeline][errors]") {
  CHECK(LoadError("name: x\npasses:\n  - pass: strip-negat\n") ==
        "m.yaml:3:11: unknown pass 'strip-negat' (did you mean 'strip-negate'?)");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    options: {nn: 1}\n") ==
        "m.yaml:4:15: unknown option 'nn' for pass 'record' (did you mean 'n'?)");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    options: {n: many}\n") ==
        "m.yaml:4:18: expected an integer for option 'n' of pass 'record', got 'many'");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    options: {n: \"3\"}\n") ==
        "m.yaml:4:18: expected an integer for option 'n' of pass 'record', got the quoted string \"3\"");
  CHECK(LoadError("name: x\npasses:\n  - pass: always-changes\n    options: {a: 1}\n") ==
        "m.yaml:4:15: pass 'always-changes' has no options");
  CHECK(LoadError("name: x\npases: []\n") ==
        "m.yaml:2:1: unknown key 'pases' in a pipeline manifest (did you mean 'passes'?)");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    enable: false\n") ==
        "m.yaml:4:5: unknown key 'enable' in a pass entry (did you mean 'enabled'?)");
  CHECK(LoadError("name: x\npasses:\n  - group: g\n    passes: [record]\n  - group: g\n    passes: []\n") ==
        "m.yaml:5:5: group name 'g' is already used at m.yaml:3:5; labels and group names must be unique");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    rules: {disable: [RuleC]}\n") ==
        "m.yaml:4:23: pass 'record' has no rule or rule group named 'RuleC' (did you mean 'RuleA'?)");
  CHECK(LoadError("name: x\npasses:\n  - pass: fails\n    rules: {disable: [RuleA]}\n") ==
        "m.yaml:4:23: pass 'fails' has no rewrite rules or other decision records, so it has no rule 'RuleA' to enable or disable");
  CHECK(LoadError("name: x\npasses: [\n").find("m.yaml:3:1: ") == 0);
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    name: record\n") ==
        "m.yaml:3:5: label 'record' is the name of a pass; choose another");
  CHECK(LoadError("name: x\npasses:\n  - pass: record\n    options: {l: [a, [b]]}\n") ==
        "m.yaml:4:22: expected a string for an element of option 'l' of pass 'record', got a list");
  CHECK(LoadError("") == "m.yaml: empty pipeline manifest (expected 'name:' and 'passes:')");
  CHECK(LoadError("name: x\npasses: []\n---\nname: y\n").find("m.yaml:4:1: a file holds one YAML document") == 0);
}

TEST_CASE("hostile manifests are refused, not followed", "[pipeline][errors]") {
  // Deep nesting.
  std::string deep = "name: x\npasses:\n";
  std::string indent = "  ";
  for (int i = 0; i < 40; ++i) {
    deep += indent + "- group: g" + std::to_string(i) + "\n" + indent + "  passes:\n";
    indent += "    ";
  }
  deep += indent + "- record\n";
  CHECK(LoadError(deep).find("groups nest more than 32 deep") != std::string::npos);
  // An alias bomb: each level repeats the previous list ten times.
  std::string text =
      "name: x\npasses:\n  - group: a0\n    passes: &a0 [record, record, record, record, record, record, record, "
      "record, record, record]\n";
  for (int i = 1; i < 6; ++i) {
    text += "  - group: a" + std::to_string(i) + "\n    passes: &a" + std::to_string(i) + " [";
    for (int k = 0; k < 10; ++k)
      text += absl::StrCat(k ? ", " : "", "{group: b", i, "_", k, ", passes: *a", i - 1, "}");
    text += "]\n";
  }
  std::string err = LoadError(text);
  CHECK((err.find("more than 10000 entries") != std::string::npos || err.find("already used") != std::string::npos));
}

// --- the pass manager -----------------------------------------------------------------------------

TEST_CASE("passes run in order, disabled ones are skipped, options reach the pass", "[pipeline][manager]") {
  Pipeline p = Load(R"(name: t
passes:
  - pass: record
    options: {tag: one}
  - pass: record
    enabled: false
    options: {tag: skipped}
  - group: g
    passes:
      - pass: record
        options: {tag: two, n: 1, f: 0.25, b: true, l: [a, b]}
        rules: {enable: [group-a], disable: [RuleB]}
  - group: off
    enabled: false
    passes: [record]
)");
  auto m = Module();
  HardwareProfile hw;
  hw.name = "testhw";
  Run r = RunOn(p, *m, {}, &hw);
  REQUIRE(r.changed.ok());
  CHECK_FALSE(*r.changed);
  REQUIRE(RunLog().size() == 2);
  CHECK(RunLog()[0] == "record tag=one n=7 f=0.5 b=false l= enable= disable= profile=testhw");
  CHECK(RunLog()[1] == "record tag=two n=1 f=0.25 b=true l=a+b enable=group-a disable=RuleB profile=testhw");
  REQUIRE(r.report.runs.size() == 2);
  CHECK(r.report.runs[1].path == "t/g/record");
}

TEST_CASE("a fixed-point group runs until nothing changes", "[pipeline][manager]") {
  Pipeline p = Load(R"(name: t
passes:
  - group: simplification
    fixed_point: {max_iterations: 10}
    passes: [strip-negate]
)");
  auto m = Module();
  Run r = RunOn(p, *m);
  REQUIRE(r.changed.ok());
  CHECK(*r.changed);
  CHECK(CountOpcode(*m, HloOpcode::kNegate) == 0);
  // Three iterations remove one negate each; the fourth changes nothing.
  CHECK(r.report.group_iterations.at("t/simplification") == 4);
  CHECK(r.notes.empty());
  CHECK(r.report.fixed_point_limit_hit.empty());
}

TEST_CASE("a fixed-point group stops at max_iterations with a note", "[pipeline][manager]") {
  Pipeline p = Load(R"(name: t
passes:
  - group: simplification
    fixed_point: {max_iterations: 2}
    passes: [strip-negate]
  - pass: record
)");
  auto m = Module();
  Run r = RunOn(p, *m);
  REQUIRE(r.changed.ok());
  CHECK(CountOpcode(*m, HloOpcode::kNegate) == 1);
  CHECK(r.report.group_iterations.at("t/simplification") == 2);
  CHECK(r.notes.find("note: fixed-point group 'simplification' (t/simplification) still changed the module after 2 "
                     "iterations") != std::string::npos);
  CHECK(RunLog().back().rfind("record", 0) == 0);  // the pipeline went on

  // A pass that always reports a change: bounded by the limit, never a hang.
  Pipeline spin =
      Load("name: t\npasses:\n  - group: spin\n    fixed_point: {max_iterations: 25}\n    passes: [always-changes]\n");
  Run s = RunOn(spin, *m);
  REQUIRE(s.changed.ok());
  CHECK(RunLog().size() == 25);
  // Without fixed_point a group runs once.
  Pipeline once = Load("name: t\npasses:\n  - group: once\n    passes: [strip-negate]\n");
  auto m2 = Module();
  RunOn(once, *m2);
  CHECK(CountOpcode(*m2, HloOpcode::kNegate) == 2);
}

TEST_CASE("the verifier runs after a changed pass and names it", "[pipeline][manager]") {
  Pipeline p = Load("name: t\npasses:\n  - strip-negate\n  - corrupt\n");
  auto m = Module();
  Run r = RunOn(p, *m);
  REQUIRE_FALSE(r.changed.ok());
  std::string msg(r.changed.status().message());
  CHECK(msg.rfind("verification failed after pass 'corrupt' (t/corrupt, m.yaml:4:5): ", 0) == 0);
  // With after_changed_pass off, the broken module goes through unchecked.
  Pipeline off = Load("name: t\nverify: {after_changed_pass: false}\npasses:\n  - corrupt\n");
  auto m2 = Module();
  CHECK(RunOn(off, *m2).changed.ok());
  // The input is checked first unless at_start is off.
  Pipeline check_input = Load("name: t\npasses:\n  - record\n");
  m2->entry_computation()->root_instruction()->mutable_shape().set_element_type(PrimitiveType::S32);
  Run bad = RunOn(check_input, *m2);
  REQUIRE_FALSE(bad.changed.ok());
  CHECK(std::string(bad.changed.status().message()).rfind("the input module does not verify (before any pass): ", 0) ==
        0);
}

TEST_CASE("a failing pass stops the pipeline with its name", "[pipeline][manager]") {
  Pipeline p = Load("name: t\npasses:\n  - group: g\n    passes:\n      - fails\n  - record\n");
  auto m = Module();
  Run r = RunOn(p, *m);
  REQUIRE_FALSE(r.changed.ok());
  CHECK(std::string(r.changed.status().message()) == "pass 'fails' (t/g/fails, m.yaml:5:9) failed: boom");
  CHECK(RunLog().empty());  // record never ran
}

TEST_CASE("dumps are named as XLA's --xla_dump_to names them", "[pipeline][manager][dump]") {
  Pipeline p = Load(R"(name: opt
passes:
  - record
  - group: simplification
    fixed_point: {max_iterations: 5}
    passes: [strip-negate, record]
)");
  auto m = Module();
  PassManagerOptions options;
  options.dump.dump_to = TempDir("dumps");
  options.dump.pass_re = "strip";
  Run r = RunOn(p, *m, options);
  REQUIRE(r.changed.ok());
  std::vector<std::string> names;
  for (const std::string& f : r.report.dumped_files) names.push_back(fs::path(f).filename().string());
  // Between-pass dumps where either neighbour matches: the start of each iteration (before
  // strip-negate) and after strip-negate, 4 iterations; always, since the regex is not ".*".
  std::vector<std::string> expected = {"module_0000.negs.before_optimizations.txt"};
  for (int it = 0; it < 4; ++it) {
    expected.push_back(
        absl::StrFormat("module_0000.negs.%04d.simplification.after_pipeline-start.before_strip-negate.txt", 2 * it));
    expected.push_back(
        absl::StrFormat("module_0000.negs.%04d.simplification.after_strip-negate.before_record.txt", 2 * it + 1));
  }
  expected.push_back("module_0000.negs.after_optimizations.txt");
  CHECK(names == expected);
  for (const std::string& f : r.report.dumped_files) CHECK(fs::exists(f));
  // Each dump parses back; the first between-pass dump still has all three negates.
  std::ifstream in(r.report.dumped_files[1]);
  std::stringstream text;
  text << in.rdbuf();
  auto dumped = ParseHloModule(text.str());
  REQUIRE(dumped.ok());
  CHECK(CountOpcode(**dumped, HloOpcode::kNegate) == 3);

  // ".*" dumps only after passes that changed something (XLA's rule), and every pipeline start.
  auto m2 = Module();
  options.dump.dump_to = TempDir("dumps_all");
  options.dump.pass_re = ".*";
  Run all = RunOn(p, *m2, options);
  REQUIRE(all.changed.ok());
  int after_record = 0;
  for (const std::string& f : all.report.dumped_files) after_record += f.find("after_record") != std::string::npos;
  CHECK(after_record == 0);
  fs::remove_all(TempDir("dumps"));
  fs::remove_all(TempDir("dumps_all"));
}

TEST_CASE("dump file names follow XLA's FilenameFor", "[pipeline][dump]") {
  CHECK(DumpFileName(3, "jit_f", "after_optimizations") == "module_0003.jit_f.after_optimizations.txt");
  CHECK(DumpFileName(0, "m", "0001.layout assignment.after_a.before_b") ==
        "module_0000.m.0001.layout_assignment.after_a.before_b.txt");
  std::string long_name(300, 'x');
  CHECK(DumpFileName(0, long_name, "before_optimizations") == "module_0000.before_optimizations.txt");
  CHECK_FALSE(CheckDumpRegex("(").ok());
  CHECK(CheckDumpRegex("algsimp|dce").ok());
}

// --- profiles -------------------------------------------------------------------------------------

TEST_CASE("profiles read facts with units and derive capabilities", "[pipeline][profile]") {
  Profile p = LoadProfile(R"(name: testgpu
kind: gpu
pipeline: gpu
hardware:
  sm_count: 132
  memory_bandwidth: 4.8 TB/s
  peak_flops_f32: 67 TFLOP/s
  peak_flops_bf16: 989e12
  shared_memory_per_block: 227 KiB
  l2_cache_size: 60 MiB
  compute_capability: "9.0"
  memory_size: 141 GB
  tensor_cores: true
  capabilities: {HasFp8: false, IsHopperOrNewer: false}
)");
  const HardwareProfile& hw = p.hardware;
  CHECK(hw.name == "testgpu");
  CHECK(hw.kind == "gpu");
  CHECK(hw.pipeline == "gpu");
  CHECK(hw.sm_count == 132);
  CHECK(hw.memory_bandwidth == 4.8e12);
  CHECK(hw.peak_flops_f32 == 67e12);
  CHECK(hw.peak_flops_bf16 == 989e12);
  CHECK(hw.shared_memory_per_block == 227 * 1024);
  CHECK(hw.l2_cache_size == 60 * 1048576);
  CHECK(hw.compute_capability_major == 9);
  CHECK(hw.compute_capability_minor == 0);
  CHECK(hw.memory_size == 141000000000);
  CHECK(hw.has_tensor_cores);
  CHECK(hw.capabilities.at("HasTensorCores"));
  CHECK(hw.capabilities.at("HasTma"));
  CHECK(hw.capabilities.at("HasWgmma"));
  CHECK_FALSE(hw.capabilities.at("HasFp8"));  // the explicit entry wins
  CHECK_FALSE(hw.capabilities.at("IsHopperOrNewer"));  // explicit, where 9.0 would derive true
  // A name no record requires and hloc does not derive is a typo.
  CHECK_FALSE(LoadProfileString("name: t\nkind: gpu\npipeline: gpu\nhardware: {capabilities: {Custom: true}}\n", "p.yaml",
                                 TestRegistries()).ok());
  CHECK_FALSE(hw.capabilities.at("IsCpu"));

  Profile a100 =
      LoadProfile("name: a\nkind: gpu\npipeline: gpu\nhardware: {compute_capability: \"8.0\", tensor_cores: true}\n");
  CHECK(a100.hardware.capabilities.at("HasBf16"));
  CHECK_FALSE(a100.hardware.capabilities.at("HasFp8"));
  CHECK_FALSE(a100.hardware.capabilities.at("HasTma"));
}

TEST_CASE("profile mistakes are located errors", "[pipeline][profile][errors]") {
  auto err = [](const std::string& text) {
    absl::StatusOr<Profile> p = LoadProfileString(text, "p.yaml", TestRegistries());
    REQUIRE_FALSE(p.ok());
    return std::string(p.status().message());
  };
  CHECK(err("name: a\nkind: tpu\npipeline: gpu\n") ==
        "p.yaml:2:7: kind must be gpu or cpu, got 'tpu' (did you mean 'gpu'?)");
  CHECK(err("name: a\nkind: gpu\n") == "p.yaml:1:1: a profile needs 'pipeline:'");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\nhardware: {sm_cont: 1}\n") ==
        "p.yaml:4:12: unknown key 'sm_cont' in 'hardware' (did you mean 'sm_count'?)");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\nhardware: {memory_bandwidth: 4.8 TB}\n") ==
        "p.yaml:4:30: unknown unit 'TB' for hardware: memory_bandwidth (did you mean 'TB/s'?) (units: B/s, KB/s, "
        "MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\nhardware: {compute_capability: nine}\n") ==
        "p.yaml:4:32: expected MAJOR.MINOR for compute_capability (\"9.0\"), got 'nine'");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\nhardware: {l2_cache_size: 1.5 B}\n") ==
        "p.yaml:4:27: hardware: l2_cache_size must be a whole number of bytes below 2^63");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\npatches:\n  - disabel: x\n") ==
        "p.yaml:5:5: unknown patch action 'disabel' (did you mean 'disable'?)");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\npatches:\n  - disable: x\n    enable: y\n") ==
        "p.yaml:6:5: a patch does one thing: 'disable' and 'enable' cannot be combined (write two patches)");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\npatches:\n  - insert_after: x\n    pass: nope\n") ==
        "p.yaml:6:11: unknown pass 'nope' ('hloc opt --list-passes' lists them)");
  CHECK(err("name: a\nkind: gpu\npipeline: gpu\npatches:\n  - set: x\n") ==
        "p.yaml:5:5: a 'set' patch needs 'options:', 'fixed_point:' or 'rules:'");
}

TEST_CASE("patches set options, enable, disable and insert", "[pipeline][profile]") {
  const std::string manifest = R"(name: base
passes:
  - pass: record
    name: first
  - group: simplification
    fixed_point: {max_iterations: 25}
    passes:
      - strip-negate
      - pass: record
        name: second
        enabled: false
)";
  Pipeline p = Load(manifest);
  Profile prof = LoadProfile(R"(name: x
kind: gpu
pipeline: base
patches:
  - set: record
    options: {n: 99}
  - set: second
    options: {tag: late}
    rules: {disable: [RuleA]}
  - enable: second
  - disable: first
  - set: simplification
    fixed_point: {max_iterations: 3}
  - insert_before: strip-negate
    pass: record
    name: inserted
    options: {tag: new}
  - insert_after: simplification
    group: tail
    passes: [strip-negate]
)");
  absl::Status applied = ApplyPatches(prof, p, TestRegistries());
  INFO(applied.message());
  REQUIRE(applied.ok());
  CHECK_FALSE(p.passes[0].enabled);
  CHECK(std::get<int64_t>(p.passes[0].options.at("n")) == 99);
  const PipelineEntry& g = p.passes[1];
  CHECK(g.max_iterations == 3);
  REQUIRE(g.passes.size() == 3);
  CHECK(g.passes[0].label == "inserted");
  CHECK(g.passes[0].location.file == "p.yaml");
  CHECK(g.passes[1].pass == "strip-negate");
  CHECK(g.passes[2].enabled);
  CHECK(std::get<int64_t>(g.passes[2].options.at("n")) == 99);
  CHECK(std::get<std::string>(g.passes[2].options.at("tag")) == "late");
  CHECK(g.passes[2].disabled_rules == std::vector<std::string>{"RuleA"});
  REQUIRE(p.passes.size() == 3);
  CHECK(p.passes[2].group == "tail");

  // The patched pipeline round-trips through its printed form.
  absl::StatusOr<Pipeline> back = LoadPipelineString(PrintPipeline(p), "printed.yaml", TestRegistries());
  REQUIRE(back.ok());
  CHECK(SamePipeline(p, *back));

  // And runs as patched.
  auto m = Module();
  Run r = RunOn(p, *m);
  REQUIRE(r.changed.ok());
  CHECK(CountOpcode(*m, HloOpcode::kNegate) == 0);
  CHECK(r.report.group_iterations.at("base/simplification") == 3);

  // Errors point into the profile.
  CHECK(PatchError(manifest, "name: x\nkind: gpu\npipeline: b\npatches:\n  - disable: simplificaton\n") ==
        "p.yaml:5:14: patch target 'simplificaton' names no pass, group or label in pipeline 'base' (did you mean "
        "'simplification'?)");
  CHECK(
      PatchError(manifest, "name: x\nkind: gpu\npipeline: b\npatches:\n  - insert_after: record\n    pass: fails\n") ==
      "p.yaml:5:19: 'record' names 2 entries of pipeline 'base'; give the one you mean a label (name:) and insert "
      "at it");
  CHECK(PatchError(manifest, "name: x\nkind: gpu\npipeline: b\npatches:\n  - set: first\n    options: {bogus: 1}\n") ==
        "p.yaml:6:15: unknown option 'bogus' for pass 'record' (its options: tag, n, f, b, l)");
  CHECK(PatchError(manifest,
                   "name: x\nkind: gpu\npipeline: b\npatches:\n  - set: simplification\n    options: {n: 1}\n") ==
        "p.yaml:5:10: 'simplification' is a group: it has no options or rules of its own (set fixed_point, or target "
        "a pass)");
  CHECK(PatchError(manifest, "name: x\nkind: gpu\npipeline: b\npatches:\n  - set: first\n    fixed_point: true\n") ==
        "p.yaml:6:18: 'first' is a pass; fixed_point applies to groups");
  CHECK(
      PatchError(
          manifest,
          "name: x\nkind: gpu\npipeline: b\npatches:\n  - insert_after: first\n    pass: record\n    name: second\n") ==
      "p.yaml:5:5: the inserted name 'second' is already used at m.yaml:9:9; labels and group names must be "
      "unique");
}

TEST_CASE("--disable-passes targets labels, groups and passes", "[pipeline]") {
  Pipeline p =
      Load("name: t\npasses:\n  - pass: record\n    name: r1\n  - group: g\n    passes: [strip-negate, record]\n");
  REQUIRE(DisableTargets(p, {"strip-negate", "r1"}).ok());
  CHECK_FALSE(p.passes[0].enabled);
  CHECK_FALSE(p.passes[1].passes[0].enabled);
  CHECK(p.passes[1].passes[1].enabled);
  absl::Status s = DisableTargets(p, {"strip"});
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()) ==
        "no pass, group or label named 'strip' in pipeline 't' (did you mean 'strip-negate'?)");
  CHECK(std::string(DisableTargets(p, {"fusion"}).message()) ==
        "no pass, group or label named 'fusion' in pipeline 't'");
  CHECK(std::string(DisableTargets(p, {"reccord"}).message()) ==
        "no pass, group or label named 'reccord' in pipeline 't' (did you mean 'record'?)");
  // --passes builds a pipeline from registered names only.
  CHECK(PipelineFromPassList({"record", "strip-negate"}, TestRegistries()).ok());
  CHECK(std::string(PipelineFromPassList({"strip_negate"}, TestRegistries()).status().message()) ==
        "unknown pass 'strip_negate' (did you mean 'strip-negate'?)");
}

// --- the real manifests and profiles --------------------------------------------------------------

namespace {
std::string Source(const std::string& rel) { return (fs::path(HLOC_SOURCE_DIR) / rel).string(); }
}  // namespace

TEST_CASE("pipelines/*.yaml load and list only registered passes", "[pipeline][manifests]") {
  for (const char* name : {"gpu", "cpu"}) {
    absl::StatusOr<Pipeline> p = LoadPipelineFile(Source(absl::StrCat("pipelines/", name, ".yaml")));
    INFO(name << ": " << (p.ok() ? std::string("ok") : std::string(p.status().message())));
    REQUIRE(p.ok());
    CHECK(p->name == name);
    absl::StatusOr<Pipeline> back = LoadPipelineString(PrintPipeline(*p), "printed.yaml");
    REQUIRE(back.ok());
    CHECK(SamePipeline(*p, *back));
  }
  // XLA's stage order: the simplification fixed point inside "optimization", before layout assignment.
  absl::StatusOr<Pipeline> gpu = LoadPipelineFile(Source("pipelines/gpu.yaml"));
  REQUIRE(gpu.ok());
  std::vector<std::string> top;
  for (const PipelineEntry& e : gpu->passes) top.push_back(e.name());
  // XLA:GPU's order: sharding, optimization, conv canonicalization (cuDNN calls), layout
  // assignment, normalization + library rewrites, fusion, copy insertion, scheduling.
  CHECK(top == std::vector<std::string>{"spmd-partitioner", "collective-optimizations", "sharding-removal", "optimization", "conv_canonicalization", "layout assignment",
                                        "hlo normalization", "post-layout_assignment", "fusion",
                                        "multi-output-fusion", "horizontal-fusion", "rename_fusions", "fusion-wrapper",
                                        "small-gemm-selector", "fusion-emitter-assignment",
                                        "post-fusion optimization", "async-collective-conversion",
                                        "GPU-ir-emit-prepare", "scheduling"});
  std::vector<PipelineEntry*> simp = FindTargets(*gpu, "simplification");
  REQUIRE(simp.size() == 1);
  CHECK(simp[0]->fixed_point);
  CHECK(simp[0]->max_iterations == 25);
}

TEST_CASE("configs/*.yaml load, patch their pipelines and hold real facts", "[pipeline][manifests]") {
  for (const char* name : {"h200", "h100", "a100", "cpu"}) {
    absl::StatusOr<std::string> path = FindProfileFile(name, {Source("configs")});
    REQUIRE(path.ok());
    absl::StatusOr<Profile> prof = LoadProfileFile(*path);
    INFO(name << ": " << (prof.ok() ? std::string("ok") : std::string(prof.status().message())));
    REQUIRE(prof.ok());
    CHECK(prof->hardware.name == name);
    absl::StatusOr<std::string> pipeline =
        FindPipelineFile(prof->hardware.pipeline, {Source("pipelines")}, prof->source);
    REQUIRE(pipeline.ok());
    absl::StatusOr<Pipeline> p = LoadPipelineFile(*pipeline);
    REQUIRE(p.ok());
    CHECK(ApplyPatches(*prof, *p).ok());
    CHECK(prof->hardware.sm_count > 0);
    CHECK(prof->hardware.memory_bandwidth > 0);
    CHECK(prof->hardware.peak_flops_f32 > 0);
    CHECK(prof->hardware.memory_size > 0);
  }
  absl::StatusOr<Profile> h200 = LoadProfileFile(Source("configs/h200.yaml"));
  REQUIRE(h200.ok());
  CHECK(h200->hardware.sm_count == 132);
  CHECK(h200->hardware.l2_cache_size == 60 * 1048576);
  CHECK(h200->hardware.compute_capability_major == 9);
  CHECK(h200->hardware.capabilities.at("HasTensorCores"));
  CHECK(FindProfileFile("h20", {Source("configs")}).status().message().find("did you mean 'h200'?") !=
        absl::string_view::npos);
}

// --- the GPU pipeline keeps the corpus's meaning --------------------------------------------------

namespace {

double Tolerance(PrimitiveType t, bool reordered) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    case PrimitiveType::F32:
    case PrimitiveType::F64:
    case PrimitiveType::C64:
    case PrimitiveType::C128: return reordered ? 1e-4 : 1e-5;
    default: return 0;
  }
}

}  // namespace

TEST_CASE("the GPU pipeline preserves evaluator outputs on the corpus", "[pipeline][corpus]") {
  absl::StatusOr<Pipeline> gpu = LoadPipelineFile(Source("pipelines/gpu.yaml"));
  REQUIRE(gpu.ok());
  absl::StatusOr<Profile> h200 = LoadProfileFile(Source("configs/h200.yaml"));
  REQUIRE(h200.ok());
  REQUIRE(ApplyPatches(*h200, *gpu).ok());
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(Source("tests/corpus"))) {
    std::string f = e.path().filename().string();
    if (f.size() > 35 && f.find(".small.before_optimizations.txt") == f.size() - 31) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE_FALSE(files.empty());
  int compared = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO(file);
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    auto arrays = ReadNpz(stem + "inputs.npz");
    if (!arrays.ok()) continue;  // no inputs recorded: nothing to evaluate on
    const HloComputation* entry = (*module)->entry_computation();
    if (static_cast<int64_t>(arrays->size()) != entry->num_parameters()) continue;
    std::vector<Literal> args;
    bool args_ok = true;
    for (int64_t i = 0; i < entry->num_parameters() && args_ok; ++i) {
      auto lit = ReinterpretAs((*arrays)[i], entry->parameter_instruction(i)->shape());
      args_ok = lit.ok();
      if (args_ok) args.push_back(std::move(*lit));
    }
    if (!args_ok) continue;
    auto before = EvaluateModule(**module, args);
    if (!before.ok()) continue;  // the evaluator cannot run it: the conformance suite reports that
    const std::vector<bool> reordered = OutputsFedByDotOrConvolution(**module);

    PassContext context;
    context.profile = &h200->hardware;
    std::ostringstream notes;
    PassManagerOptions options;
    options.notes = &notes;
    absl::StatusOr<bool> changed = RunPipeline(*gpu, **module, context, options);
    INFO((changed.ok() ? std::string("ran") : std::string(changed.status().message())));
    REQUIRE(changed.ok());
    REQUIRE(VerifyModule(**module).ok());
    auto after = EvaluateModule(**module, args);
    INFO((after.ok() ? std::string("evaluated") : std::string(after.status().message())));
    REQUIRE(after.ok());
    std::vector<const Literal*> a = FlattenLeaves(*after), b = FlattenLeaves(*before);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      // Whether an output came from a dot is decided on the module before the pipeline.
      bool dot = i < reordered.size() && reordered[i];
      CompareResult cmp = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->shape().element_type(), dot));
      INFO("output " << i << ": " << cmp.message << " error " << cmp.error);
      CHECK(cmp.ok);
    }
    ++compared;
  }
  CHECK(compared > 0);
}
