// The core simplification passes (dce, cse, constant_folding, tuple-simplifier, call-inliner,
// flatten-call-graph, zero_sized_hlo_elimination) and their helpers (passes/pass_util.h).
//
// Semantics: every small corpus module is run through each pass alone and through all of them
// in sequence; the result must verify, print and parse back, and evaluate to the same outputs
// as the original (f32 1e-5, f16 1e-3, bf16 1e-2, integers exactly).
#include <algorithm>
#include <filesystem>
#include <map>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/pass.h"
#include "corpus_inputs.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "passes/pass_util.h"
#include "passes/simplify/call_inliner.h"
#include "passes/simplify/hlo_dce.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) FAIL("parse failed: " << m.status().message());
  return std::move(*m);
}

// Runs the registered pass `name` with its default options, `overrides` on top.
absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name,
                             const std::map<std::string, OptionValue>& overrides = {}) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  for (const auto& [k, v] : overrides) options.Set(k, v);
  std::unique_ptr<HloPass> pass = info->factory(options);
  PassContext context;
  return pass->Run(module, context);
}

double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    default: return IsF8OrF4(t) ? 1e-2 : 1e-5;
  }
}

struct Config {
  std::string label;
  std::vector<std::pair<std::string, std::map<std::string, OptionValue>>> passes;
};

std::vector<Config> Configs() {
  std::vector<Config> out;
  for (const char* p : {"dce", "cse", "constant_folding", "tuple-simplifier", "call-inliner", "flatten-call-graph",
                        "zero_sized_hlo_elimination"})
    out.push_back({p, {{p, {}}}});
  out.push_back({"constant_folding(aggressive)", {{"constant_folding", {{"level", std::string("aggressive")}}}}});
  out.push_back({"cse(layout-sensitive)", {{"cse", {{"is_layout_sensitive", true}}}}});
  // The order XLA's GPU simplification uses them in, twice so later passes see earlier results.
  Config all{"all in sequence", {}};
  for (int round = 0; round < 2; ++round)
    for (const char* p : {"call-inliner", "flatten-call-graph", "zero_sized_hlo_elimination", "constant_folding",
                          "tuple-simplifier", "cse", "dce"})
      all.passes.push_back({p, {}});
  out.push_back(all);
  return out;
}

}  // namespace

TEST_CASE("simplify passes keep the evaluator's outputs on the small corpus", "[simplify][corpus]") {
  std::vector<std::string> files = SmallCorpusModules();
  REQUIRE(files.size() >= 20);
  int evaluated = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    const std::string name = fs::path(file).filename().string();
    {
      INFO("module " << name);
      auto original = ParseHloModuleFile(file);
      REQUIRE(original.ok());
      auto inputs = LoadCorpusInputs(**original, stem + "inputs.npz");
      REQUIRE(inputs.ok());
      auto reference = EvaluateModule(**original, *inputs);
      if (!reference.ok()) {
        WARN(name << ": the evaluator cannot run it (" << reference.status().message() << "); skipped");
        continue;
      }
      ++evaluated;
      const std::vector<const Literal*> ref_leaves = FlattenLeaves(*reference);
      for (const Config& config : Configs()) {
        INFO(name << " after " << config.label);
        auto module = ParseHloModuleFile(file);
        REQUIRE(module.ok());
        bool changed = false;
        for (const auto& [pass, options] : config.passes) {
          auto r = RunPass(**module, pass, options);
          INFO("pass " << pass);
          REQUIRE(r.ok());
          changed |= *r;
          absl::Status verified = VerifyModule(**module);
          INFO("verifier: " << verified.message());
          REQUIRE(verified.ok());
        }
        // The result is valid HLO text.
        auto reparsed = ParseHloModule(PrintModule(**module));
        INFO("reparse: " << (reparsed.ok() ? "ok" : std::string(reparsed.status().message())));
        REQUIRE(reparsed.ok());
        if (!changed) continue;
        auto result = EvaluateModule(**module, *inputs);
        INFO("evaluation: " << (result.ok() ? "ok" : std::string(result.status().message())));
        REQUIRE(result.ok());
        const std::vector<const Literal*> leaves = FlattenLeaves(*result);
        REQUIRE(leaves.size() == ref_leaves.size());
        for (size_t i = 0; i < leaves.size(); ++i) {
          CompareResult cmp = CompareLiterals(*leaves[i], *ref_leaves[i], Tolerance(ref_leaves[i]->element_type()));
          INFO("output " << i << ": " << cmp.message << " error " << cmp.error);
          CHECK(cmp.ok);
        }
      }
    }
  }
  CHECK(evaluated >= 20);
}

TEST_CASE("a second run of dce, call-inliner, flatten-call-graph and zero_sized_hlo_elimination changes nothing",
          "[simplify][corpus]") {
  for (const std::string& file : SmallCorpusModules()) {
    for (const char* pass : {"dce", "call-inliner", "flatten-call-graph", "zero_sized_hlo_elimination", "cse"}) {
      INFO(file << " " << pass);
      auto module = ParseHloModuleFile(file);
      REQUIRE(module.ok());
      REQUIRE(RunPass(**module, pass).ok());
      auto again = RunPass(**module, pass);
      REQUIRE(again.ok());
      CHECK_FALSE(*again);
    }
  }
}

TEST_CASE("call-inliner flattens the corpus's calls and dce leaves no uncalled computation", "[simplify][corpus]") {
  for (const std::string& file : SmallCorpusModules()) {
    INFO(file);
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    REQUIRE(RunPass(**module, "call-inliner").ok());
    auto callers = ComputeCallers(**module);
    for (const auto& c : (*module)->computations()) {
      for (const auto& inst : c->instructions()) {
        // Only calls the frontend wants kept (JAX's shard_map bodies) may remain.
        if (inst->opcode() == HloOpcode::kCall) CHECK(inst->attrs().frontend_attributes.count("inlineable") == 1);
      }
      if (c.get() != (*module)->entry_computation()) CHECK(callers.contains(c.get()));
    }
  }
}

TEST_CASE("simplify passes handle every module of XLA's parser tests", "[simplify][xla-cases]") {
  // Verified modules must still verify afterwards and print parsable text; unverifiable ones
  // (the passes normally never see them) must give a result or an error, not a crash.
  std::vector<std::string> files;
  for (const char* sub : {"valid", "valid_other"}) {
    const std::string dir = std::string(HLOC_TESTS_DIR) + "/xla-hlo-cases/" + sub;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".hlo") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() > 200);
  int verified_cases = 0;
  for (const std::string& file : files) {
    for (const char* pass : {"dce", "cse", "constant_folding", "tuple-simplifier", "call-inliner", "flatten-call-graph",
                             "zero_sized_hlo_elimination"}) {
      INFO(file << " " << pass);
      auto module = ParseHloModuleFile(file);
      if (!module.ok()) break;  // a case for another parser feature (a bare instruction, ...)
      const bool verified = VerifyModule(**module).ok();
      auto r = RunPass(**module, pass);
      if (!verified) continue;
      ++verified_cases;
      REQUIRE(r.ok());
      absl::Status after = VerifyModule(**module);
      INFO("verifier: " << after.message());
      CHECK(after.ok());
      CHECK(ParseHloModule(PrintModule(**module)).ok());
    }
  }
  CHECK(verified_cases > 1000);
}

TEST_CASE("NameUniquer follows XLA's numbering", "[simplify][util]") {
  NameUniquer u;
  u.Register("add");
  u.Register("add.3");
  u.Register("mul.1");
  CHECK(u.GetUniqueName("sub") == "sub");
  CHECK(u.GetUniqueName("sub") == "sub.1");
  CHECK(u.GetUniqueName("add") == "add.1");
  CHECK(u.GetUniqueName("add.3") == "add.2");
  CHECK(u.GetUniqueName("add.7") == "add.7");
  CHECK(u.GetUniqueName("add") == "add.4");
  CHECK(u.GetUniqueName("x.clone") == "x.clone");
  CHECK(u.GetUniqueName("x.clone") == "x.clone.1");
  CHECK(u.GetUniqueName("") == "name");
  // A suffix too long for a number is part of the name.
  CHECK(u.GetUniqueName("v.12345678901234567890") == "v.12345678901234567890");
}

TEST_CASE("side effects follow XLA's HasSideEffect", "[simplify][util]") {
  auto m = Parse(R"(
HloModule m
%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
%noisy (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  ROOT %cc = f32[4] custom-call(%x), custom_call_target="t", custom_call_has_side_effect=true
}
%wrapper (y: f32[4]) -> f32[4] {
  %y = f32[4] parameter(0)
  ROOT %inner = f32[4] call(%y), to_apply=%noisy
}
ENTRY %main (p: f32[4]) -> (f32[4], f32[4], f32[4], f32[4], f32[4]) {
  %p = f32[4] parameter(0)
  %ar_plain = f32[4] all-reduce(%p), replica_groups={}, to_apply=%sum
  %ar_channel = f32[4] all-reduce(%p), channel_id=1, replica_groups={}, to_apply=%sum
  %pure = f32[4] custom-call(%p), custom_call_target="t"
  %nested = f32[4] call(%p), to_apply=%wrapper
  %reduce_like = f32[4] map(%p, %p), dimensions={0}, to_apply=%sum
  ROOT %t = (f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(%ar_plain, %ar_channel, %pure, %nested, %reduce_like)
}
)");
  const HloComputation* entry = m->entry_computation();
  CHECK_FALSE(HasSideEffect(*entry->GetInstructionWithName("ar_plain")));
  CHECK(HasSideEffect(*entry->GetInstructionWithName("ar_channel")));
  CHECK_FALSE(HasSideEffect(*entry->GetInstructionWithName("pure")));
  CHECK(HasSideEffect(*entry->GetInstructionWithName("nested")));  // through two calls
  CHECK_FALSE(HasSideEffectNoRecurse(*entry->GetInstructionWithName("nested")));
  CHECK_FALSE(HasSideEffect(*entry->GetInstructionWithName("reduce_like")));
  CHECK(ComputationHasSideEffect(*m->GetComputationWithName("wrapper")));
  CHECK_FALSE(ComputationHasSideEffect(*m->GetComputationWithName("sum")));
}

TEST_CASE("CloneComputation copies names, control edges and owned fused computations", "[simplify][util]") {
  auto m = Parse(R"(
HloModule m
%fused (fx: f32[4]) -> f32[4] {
  %fx = f32[4] parameter(0)
  ROOT %fn = f32[4] negate(%fx)
}
%body (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %e = f32[4] exponential(%x)
  ROOT %f = f32[4] fusion(%x), kind=kLoop, calls=%fused, control-predecessors={%e}
}
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  ROOT %c = f32[4] call(%p), to_apply=%body
}
)");
  CloneNames names = CloneNames::ForModule(*m);
  auto copy = CloneComputation(*m->GetComputationWithName("body"), *m, names);
  REQUIRE(copy.ok());
  HloComputation* c = *copy;
  CHECK(c->name() == "body.clone");
  REQUIRE(c->GetInstructionWithName("e.clone") != nullptr);
  HloInstruction* f = c->GetInstructionWithName("f.clone");
  REQUIRE(f != nullptr);
  CHECK(f->IsRoot());
  REQUIRE(f->control_predecessors().size() == 1);
  CHECK(f->control_predecessors()[0]->name() == "e.clone");
  // The fusion got its own fused computation, which names it.
  REQUIRE(f->called_computations().size() == 1);
  CHECK(f->called_computations()[0]->name() == "fused.clone");
  CHECK(f->called_computations()[0]->FusionInstruction() == f);
  CHECK(ComputationsEqual(*c, *m->GetComputationWithName("body")));
  // A second copy of the copy gets fresh names too.
  auto again = CloneComputation(*c, *m, names);
  REQUIRE(again.ok());
  CHECK((*again)->name() == "body.clone.clone");
  CHECK((*again)->GetInstructionWithName("e.clone2") != nullptr);
  // The clones are unused; the module still verifies and dce removes them.
  CHECK(VerifyModule(*m).ok());
  auto dce = HloDcePass::RunOnModule(*m);
  REQUIRE(dce.ok());
  CHECK(*dce);
  CHECK(m->computations().size() == 3);
}

TEST_CASE("ComputationsEqual compares structure, not names", "[simplify][util]") {
  auto m = Parse(R"(
HloModule m
%a (a0: f32[], a1: f32[]) -> f32[] {
  %a0 = f32[] parameter(0)
  %a1 = f32[] parameter(1)
  ROOT %as = f32[] add(%a0, %a1)
}
%b (b0: f32[], b1: f32[]) -> f32[] {
  %b0 = f32[] parameter(0)
  %b1 = f32[] parameter(1)
  ROOT %bs = f32[] add(%b0, %b1), metadata={op_name="other"}
}
%swapped (c0: f32[], c1: f32[]) -> f32[] {
  %c0 = f32[] parameter(0)
  %c1 = f32[] parameter(1)
  ROOT %cs = f32[] add(%c1, %c0)
}
%const (d0: f32[], d1: f32[]) -> f32[] {
  %d0 = f32[] parameter(0)
  %d1 = f32[] parameter(1)
  ROOT %dc = f32[] constant(1)
}
ENTRY %main (p: f32[]) -> f32[] {
  ROOT %p = f32[] parameter(0)
}
)");
  auto get = [&](const char* n) { return m->GetComputationWithName(n); };
  CHECK(ComputationsEqual(*get("a"), *get("b")));
  CHECK_FALSE(ComputationsEqual(*get("a"), *get("swapped")));  // parameters by number
  CHECK_FALSE(ComputationsEqual(*get("a"), *get("const")));
}

TEST_CASE("RemoveInstructionAndUnusedOperands and ReplaceInstruction", "[simplify][util]") {
  auto m = Parse(R"(
HloModule m
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  %a = f32[4] negate(%p)
  %b = f32[4] exponential(%a)
  %side = f32[4] custom-call(%a), custom_call_target="t", custom_call_has_side_effect=true
  %c = f32[4] add(%b, %side)
  %d = f32[4] sqrt(%p)
  %e = f32[4] log(%p), control-predecessors={%d}
  ROOT %r = f32[4] add(%e, %p)
}
)");
  HloComputation* entry = m->entry_computation();
  // %c goes with %b; %side (side-effecting) and so %a stay.
  std::vector<const HloInstruction*> removed;
  REQUIRE(RemoveInstructionAndUnusedOperands(entry->GetInstructionWithName("c"), false, &removed).ok());
  CHECK(removed.size() == 2);
  CHECK(entry->GetInstructionWithName("b") == nullptr);
  CHECK(entry->GetInstructionWithName("side") != nullptr);
  CHECK(entry->GetInstructionWithName("a") != nullptr);
  // The root cannot be removed, nor an instruction with users.
  CHECK_FALSE(RemoveInstructionAndUnusedOperands(entry->root_instruction()).ok());
  CHECK_FALSE(RemoveInstructionAndUnusedOperands(entry->GetInstructionWithName("a")).ok());

  // Replacing %e (with a control predecessor) by %d: refused unless edges are relayed.
  HloInstruction* e = entry->GetInstructionWithName("e");
  HloInstruction* d = entry->GetInstructionWithName("d");
  auto refused = ReplaceInstruction(e, d);
  REQUIRE(refused.ok());
  CHECK_FALSE(*refused);
  ReplaceOptions relay;
  relay.relay_control_dependency = true;
  auto replaced = ReplaceInstruction(e, d, relay);
  REQUIRE(replaced.ok());
  CHECK(*replaced);
  CHECK(entry->GetInstructionWithName("e") == nullptr);
  CHECK(entry->root_instruction()->operand(0) == d);
  CHECK(VerifyModule(*m).ok());
}

TEST_CASE("CallInlinerPass::Inline returns the map from callee instructions to their copies", "[simplify]") {
  auto m = Parse(R"(
HloModule m
%f (a: f32[4]) -> f32[4] {
  %a = f32[4] parameter(0)
  %n = f32[4] negate(%a)
  ROOT %e = f32[4] exponential(%n)
}
ENTRY %main (p: f32[4]) -> f32[4] {
  %p = f32[4] parameter(0)
  ROOT %c = f32[4] call(%p), to_apply=%f
}
)");
  HloComputation* callee = m->GetComputationWithName("f");
  auto map = CallInlinerPass::Inline(m->entry_computation()->root_instruction());
  REQUIRE(map.ok());
  CHECK(map->at(callee->parameter_instruction(0)) == m->entry_computation()->parameter_instruction(0));
  HloInstruction* root = m->entry_computation()->root_instruction();
  CHECK(map->at(callee->root_instruction()) == root);
  CHECK(root->opcode() == HloOpcode::kExp);
  CHECK(root->name() == "e.1");  // "e" is still taken by the callee
  CHECK(VerifyModule(*m).ok());
}

TEST_CASE("passes report errors instead of crashing on modules without an entry", "[simplify]") {
  HloModule empty("empty");
  for (const char* pass : {"dce", "cse", "constant_folding", "tuple-simplifier", "call-inliner", "flatten-call-graph",
                           "zero_sized_hlo_elimination"}) {
    INFO(pass);
    auto r = RunPass(empty, pass);
    // dce needs an entry; the others have nothing to do.
    if (std::string(pass) == "dce") CHECK_FALSE(r.ok());
    else CHECK((r.ok() && !*r));
  }
}

}  // namespace hloc
