// The fusion stage (src/passes/fusion/, rules/fusion/*.td): priority-fusion,
// multi_output_fusion, rename_fusions, fusion-wrapper, the GPU cost model and the generated
// fusion tables.
//
// Semantics: every small corpus module is taken through pipelines/gpu.yaml (h200 profile) up
// to the fusion stage, evaluated, then fused; the fused module must verify, print and parse
// back, and evaluate to the same outputs (f32 1e-5, f16 1e-3, bf16 1e-2, integers exactly).
// The whole pipeline, fusion included, must keep the original module's outputs (f32 1e-4: the
// pipeline reorders dots and reductions).
#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "corpus_inputs.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "engine/rule_tables.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "passes/fusion/fusion_analysis.h"
#include "passes/fusion/fusion_legality.h"
#include "passes/fusion/gpu_cost_model.h"
#include "passes/fusion/kernel_report.h"
#include "passes/fusion/priority_fusion.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

std::string Source(const std::string& rel) { return (fs::path(HLOC_SOURCE_DIR) / rel).string(); }

Profile LoadProfile(const std::string& name) {
  auto p = LoadProfileFile(Source("configs/" + name + ".yaml"));
  if (!p.ok()) FAIL("profile " << name << ": " << p.status().message());
  return *p;
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) FAIL("parse failed: " << m.status().message());
  return std::move(*m);
}

// The GPU pipeline under `profile`, with the fusion stage removed when `without_fusion`.
Pipeline GpuPipeline(const Profile& profile, bool without_fusion) {
  auto p = LoadPipelineFile(Source("pipelines/gpu.yaml"));
  if (!p.ok()) FAIL("pipeline: " << p.status().message());
  Pipeline pipeline = std::move(*p);
  REQUIRE(ApplyPatches(profile, pipeline).ok());
  if (without_fusion) {
    absl::Status s = DisableTargets(pipeline, {"fusion", "multi-output-fusion", "rename_fusions", "fusion-wrapper"});
    INFO(s.message());
    REQUIRE(s.ok());
  }
  return pipeline;
}

absl::StatusOr<bool> RunPasses(HloModule& module, const std::vector<std::string>& passes, PassContext& context) {
  auto p = PipelineFromPassList(passes);
  if (!p.ok()) return p.status();
  return RunPipeline(*p, module, context);
}

const std::vector<std::string> kFusionPasses = {"priority-fusion", "multi_output_fusion", "cse", "dce",
                                                "rename_fusions", "fusion-wrapper"};

double Tolerance(PrimitiveType t, double f32) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    default: return IsF8OrF4(t) ? 1e-2 : f32;
  }
}

void CheckSameOutputs(const Literal& got, const Literal& want, double f32_tol) {
  const std::vector<const Literal*> a = FlattenLeaves(got), b = FlattenLeaves(want);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CompareResult cmp = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->element_type(), f32_tol));
    INFO("output " << i << ": " << cmp.message << " error " << cmp.error);
    CHECK(cmp.ok);
  }
}

int64_t CountFusions(const HloModule& module) {
  int64_t n = 0;
  for (const HloComputation* c : FusibleComputations(module))
    for (const auto& i : c->instructions()) n += i->opcode() == HloOpcode::kFusion;
  return n;
}

}  // namespace

TEST_CASE("fusion keeps the evaluator's outputs on the small corpus (gpu.yaml, h200)", "[fusion][corpus]") {
  const Profile h200 = LoadProfile("h200");
  const Pipeline before_fusion = GpuPipeline(h200, /*without_fusion=*/true);
  std::vector<std::string> files = SmallCorpusModules();
  REQUIRE(files.size() >= 20);
  int evaluated = 0, fused_modules = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO("module " << fs::path(file).filename().string());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    auto inputs = LoadCorpusInputs(**module, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    PassContext context;
    context.profile = &h200.hardware;
    auto pre = RunPipeline(before_fusion, **module, context);
    INFO("pipeline before fusion: " << pre.status().message());
    REQUIRE(pre.ok());
    auto reference = EvaluateModule(**module, *inputs);
    if (!reference.ok()) {
      WARN("the evaluator cannot run the unfused module (" << reference.status().message() << "); skipped");
      continue;
    }
    auto fused = RunPasses(**module, kFusionPasses, context);
    INFO("fusion: " << fused.status().message());
    REQUIRE(fused.ok());
    absl::Status verified = VerifyModule(**module);
    INFO("verifier: " << verified.message());
    REQUIRE(verified.ok());
    auto reparsed = ParseHloModule(PrintModule(**module));
    INFO("reparse: " << reparsed.status().message());
    REQUIRE(reparsed.ok());
    fused_modules += CountFusions(**module) > 0;
    auto result = EvaluateModule(**module, *inputs);
    INFO("evaluation: " << result.status().message());
    REQUIRE(result.ok());
    CheckSameOutputs(*result, *reference, 1e-5);
    ++evaluated;
    // A second run finds nothing left to fuse.
    auto again = RunPasses(**module, {"priority-fusion", "multi_output_fusion"}, context);
    REQUIRE(again.ok());
    CHECK_FALSE(*again);
  }
  CHECK(evaluated >= 20);
  CHECK(fused_modules >= 20);
}

TEST_CASE("the whole GPU pipeline keeps the small corpus's outputs (h200)", "[fusion][corpus][pipeline]") {
  const Profile h200 = LoadProfile("h200");
  const Pipeline pipeline = GpuPipeline(h200, /*without_fusion=*/false);
  int evaluated = 0;
  for (const std::string& file : SmallCorpusModules()) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO("module " << fs::path(file).filename().string());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    auto inputs = LoadCorpusInputs(**module, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    auto reference = EvaluateModule(**module, *inputs);
    if (!reference.ok()) continue;
    PassContext context;
    context.profile = &h200.hardware;
    auto run = RunPipeline(pipeline, **module, context);
    INFO("pipeline: " << run.status().message());
    REQUIRE(run.ok());
    auto result = EvaluateModule(**module, *inputs);
    INFO("evaluation: " << result.status().message());
    REQUIRE(result.ok());
    CheckSameOutputs(*result, *reference, 1e-4);
    ++evaluated;
  }
  CHECK(evaluated >= 20);
}

namespace {

// Softmax over rows of `cols` f32 elements: one kernel when a row fits in shared memory.
std::string SoftmaxModule(int64_t rows, int64_t cols) {
  const std::string s = absl::StrCat("f32[", rows, ",", cols, "]");
  const std::string r = absl::StrCat("f32[", rows, "]");
  return absl::StrCat(R"(HloModule softmax
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  x = )", s, R"( parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rmax = )", r, R"( reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bmax = )", s, R"( broadcast(rmax), dimensions={0}
  sub = )", s, R"( subtract(x, bmax)
  e = )", s, R"( exponential(sub)
  rsum = )", r, R"( reduce(e, zero), dimensions={1}, to_apply=add_f32
  bsum = )", s, R"( broadcast(rsum), dimensions={0}
  ROOT out = )", s, R"( divide(e, bsum)
})");
}

int64_t KernelsAfterFusion(const std::string& text, const Profile& profile, const std::string& target = "") {
  auto module = Parse(text);
  PassContext context;
  context.profile = &profile.hardware;
  auto pipeline = PipelineFromPassList({"priority-fusion"});
  REQUIRE(pipeline.ok());
  if (!target.empty()) pipeline->passes[0].options["target"] = target;
  REQUIRE(RunPipeline(*pipeline, *module, context).ok());
  REQUIRE(VerifyModule(*module).ok());
  return CountKernels(*module, &profile.hardware).total();
}

}  // namespace

TEST_CASE("profiles change fusion decisions where the hardware differs", "[fusion][profiles]") {
  const Profile h200 = LoadProfile("h200"), a100 = LoadProfile("a100"), cpu = LoadProfile("cpu");
  // A small softmax is one kernel everywhere on a GPU.
  CHECK(KernelsAfterFusion(SoftmaxModule(16, 100), h200) == 1);
  CHECK(KernelsAfterFusion(SoftmaxModule(16, 100), a100) == 1);
  // Rows of 48K f32 (192 KiB) fit in an H200's 227 KiB of shared memory per block but not in an
  // A100's 163 KiB: the row-normalization fusion is refused there (RowTooLongForSharedMemory).
  CHECK(KernelsAfterFusion(SoftmaxModule(4, 48 * 1024), h200) == 1);
  CHECK(KernelsAfterFusion(SoftmaxModule(4, 48 * 1024), a100) > 1);
  // The CPU backend emits reductions only as fusion roots: no epilogues or chains.
  CHECK(KernelsAfterFusion(SoftmaxModule(16, 100), cpu, "cpu") == 3);
}

TEST_CASE("the cost model follows the profile's hardware facts", "[fusion][cost-model]") {
  const Profile h200 = LoadProfile("h200"), a100 = LoadProfile("a100");
  auto module = Parse(R"(HloModule m
ENTRY main {
  x = f32[4096,4096] parameter(0)
  e = f32[4096,4096] exponential(x)
  ROOT n = f32[4096,4096] negate(e)
})");
  const HloInstruction* e = module->entry_computation()->GetInstructionWithName("e");
  const HloInstruction* n = module->entry_computation()->GetInstructionWithName("n");
  fusion::GpuCostModel on_h200(&h200.hardware), on_a100(&a100.hardware);
  const fusion::KernelEstimate eh = on_h200.Estimate(e), ea = on_a100.Estimate(e);
  CHECK(eh.bytes_read == 4096 * 4096 * 4);
  CHECK(eh.bytes_written == 4096 * 4096 * 4);
  // Memory-bound: the A100's lower bandwidth makes it slower by about the bandwidth ratio.
  CHECK(ea.exec_time > eh.exec_time * 2.0);
  CHECK(ea.exec_time < eh.exec_time * 2.8);
  // Fusing exp into negate saves a write and a read of 64 MiB and a launch.
  const fusion::FusionRunTimes t = on_h200.EstimateRunTimes(e, {const_cast<HloInstruction*>(n)});
  CHECK(t.benefit() > 0);
  const fusion::KernelEstimate fused = on_h200.EstimateFused(e, n);
  CHECK(fused.bytes_read == 4096 * 4096 * 4);
}

// An expensive producer (tanh) whose consumer reads each element 64 times (a broadcast).
constexpr char kReusedTanh[] = R"(HloModule m
ENTRY main {
  x = f32[64] parameter(0)
  t = f32[64] tanh(x)
  b = f32[64,64] broadcast(t), dimensions={0}
  ROOT a = f32[64,64] add(b, b)
})";

TEST_CASE("an expensive producer is not duplicated into a consumer that reuses its elements", "[fusion][vetoes]") {
  auto module = Parse(kReusedTanh);
  PassContext context;
  auto fused = RunPasses(*module, {"priority-fusion"}, context);
  REQUIRE(fused.ok());
  // tanh stays a kernel of its own; the broadcast and add fuse.
  const HloInstruction* root = module->entry_computation()->root_instruction();
  REQUIRE(root->opcode() == HloOpcode::kFusion);
  CHECK(root->operand(0)->opcode() == HloOpcode::kTanh);
  InputInstruction producer{"t"}, consumer{root->name()};
  const FusionExplanation why = ExplainFusion(*module, producer, consumer, context);
  CHECK(why.found);
  CHECK(absl::StrContains(why.text, "ExpensiveProducerReused"));
}

TEST_CASE("a fusion veto is switched off or selected by name through the context's rule lists", "[fusion][vetoes]") {
  auto module = Parse(kReusedTanh);
  HloComputation* entry = module->entry_computation();
  HloInstruction* t = entry->GetInstructionWithName("t");
  HloInstruction* b = entry->GetInstructionWithName("b");
  REQUIRE(t != nullptr);
  REQUIRE(b != nullptr);
  PassContext context;
  CHECK(fusion::FusionLegality(&context).CanFuse(t, b).rule == "ExpensiveProducerReused");
  context.disabled_rules = {"ExpensiveProducerReused"};
  CHECK(fusion::FusionLegality(&context).CanFuse(t, b).ok);
  // An enabled list naming vetoes keeps only those.
  context.disabled_rules.clear();
  context.enabled_rules = {"TooManyOperands"};
  CHECK(fusion::FusionLegality(&context).CanFuse(t, b).ok);
  context.enabled_rules = {"ExpensiveProducerReused"};
  CHECK_FALSE(fusion::FusionLegality(&context).CanFuse(t, b).ok);
  // The fusion passes declare the vetoes as their records (the manifest loader checks names).
  const PassInfo* info = PassRegistry::Global().Find("priority-fusion");
  REQUIRE(info != nullptr);
  REQUIRE(info->records);
  const std::vector<std::string> records = info->records();
  CHECK(std::find(records.begin(), records.end(), "ComputationCopiedTooOften") != records.end());
}

TEST_CASE("every capability a record requires is derived by hloc or set by a shipped profile", "[profiles][records]") {
  // A renamed Requirement record (or a renamed derived name in DeriveCapabilities) would make
  // the rows requiring it silently never apply: this names the record instead.
  std::set<std::string> provided;
  for (const char* name : {"h200", "h100", "a100", "cpu"}) {
    const Profile p = LoadProfile(name);
    for (const auto& [cap, on] : p.hardware.capabilities) provided.insert(cap);
  }
  for (const auto& [cap, where] : KnownCapabilities()) {
    if (where.empty()) continue;  // derived, required by nothing
    INFO(where << " requires '" << cap << "'");
    CHECK(provided.count(cap) == 1);
  }
}

// A regression guard for compile time that counts instead of timing: PriorityFusion asks about
// each fusion many times (every candidate pair it touches), and before FusionFactsCache each
// question re-walked the fusion's body, so a chain fusing into one kernel took quadratic time
// (numpyro's logprob gradient: 40 s). Now each fusion's body is analysed about once.
TEST_CASE("priority-fusion analyses each fusion body about once (linear compile time)", "[fusion][compile-time]") {
  constexpr int kChain = 300;
  std::string text = "HloModule m\nENTRY main {\n";
  for (int p = 0; p < 4; ++p) absl::StrAppend(&text, "  p", p, " = f32[256] parameter(", p, ")\n");
  absl::StrAppend(&text, "  a0 = f32[256] multiply(p0, p1)\n");
  for (int i = 1; i < kChain; ++i)
    absl::StrAppend(&text, "  a", i, " = f32[256] ", i % 2 ? "add" : "multiply", "(a", i - 1, ", p", i % 4, ")\n");
  absl::StrAppend(&text, "  ROOT r = f32[256] negate(a", kChain - 1, ")\n}\n");
  auto module = Parse(text);
  PassContext context;
  const int64_t before = fusion::FusionBodyAnalyses();
  auto fused = RunPasses(*module, {"priority-fusion"}, context);
  INFO(fused.status().message());
  REQUIRE(fused.ok());
  const int64_t analyses = fusion::FusionBodyAnalyses() - before;
  CHECK(CountFusions(*module) == 1);  // the whole chain is one kernel
  INFO("fusion body analyses: " << analyses);
  CHECK(analyses <= 2 * kChain);
}

TEST_CASE("multi-output fusions evaluate like the instructions they replace", "[fusion][multi-output]") {
  const char* text = R"(HloModule m
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
ENTRY main {
  x = f32[8,32] parameter(0)
  zero = f32[] constant(0)
  ninf = f32[] constant(-inf)
  e = f32[8,32] exponential(x)
  s = f32[8] reduce(e, zero), dimensions={1}, to_apply=add_f32
  m = f32[8] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  ROOT t = (f32[8,32], f32[8], f32[8]) tuple(e, s, m)
})";
  auto original = Parse(text);
  Literal x(Shape(PrimitiveType::F32, {8, 32}));
  for (int64_t i = 0; i < 8 * 32; ++i) x.SetDouble(i, static_cast<double>((i * 37) % 23) / 7.0 - 1.5);
  std::vector<Literal> args;
  args.push_back(x);
  auto reference = EvaluateModule(*original, args);
  REQUIRE(reference.ok());
  auto module = Parse(text);
  PassContext context;
  auto fused = RunPasses(*module, kFusionPasses, context);
  INFO(fused.status().message());
  REQUIRE(fused.ok());
  REQUIRE(VerifyModule(*module).ok());
  // exp, both reductions: one kernel with three outputs.
  CHECK(CountFusions(*module) == 1);
  bool tuple_root = false;
  for (const auto& c : module->computations())
    if (c->IsFusionComputation()) tuple_root |= c->root_instruction()->opcode() == HloOpcode::kTuple;
  CHECK(tuple_root);
  auto result = EvaluateModule(*module, args);
  REQUIRE(result.ok());
  CheckSameOutputs(*result, *reference, 1e-6);
}

namespace {

// Cross-entropy's mean logsumexp: the row max has a second user (the add in the final mean's
// kernel), so PriorityFusion cannot fuse it into the exp-sum (ReductionWithManyUsers).
std::string LogSumExpModule(int64_t rows, int64_t cols) {
  const std::string s = absl::StrCat("f32[", rows, ",", cols, "]");
  const std::string r = absl::StrCat("f32[", rows, "]");
  return absl::StrCat(R"(HloModule lse
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  x = )", s, R"( parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rmax = )", r, R"( reduce(x, ninf), dimensions={1}, to_apply=max_f32
  bmax = )", s, R"( broadcast(rmax), dimensions={0}
  sub = )", s, R"( subtract(x, bmax)
  e = )", s, R"( exponential(sub)
  rsum = )", r, R"( reduce(e, zero), dimensions={1}, to_apply=add_f32
  l = )", r, R"( log(rsum)
  lse = )", r, R"( add(l, rmax)
  ROOT out = f32[] reduce(lse, zero), dimensions={0}, to_apply=add_f32
})");
}

}  // namespace

TEST_CASE("a row max with other users joins its exp-sum chain as an output", "[fusion][multi-output][chain]") {
  const Profile h200 = LoadProfile("h200");
  auto fuse = [&](const std::string& text, std::unique_ptr<HloModule>& module) {
    module = Parse(text);
    PassContext context;
    context.profile = &h200.hardware;
    auto fused = RunPasses(*module, kFusionPasses, context);
    INFO(fused.status().message());
    REQUIRE(fused.ok());
    REQUIRE(VerifyModule(*module).ok());
  };
  // Both reduces in one kernel that returns the sum and the max; the epilogue reads the max
  // from the tuple.
  std::unique_ptr<HloModule> module;
  fuse(LogSumExpModule(8192, 32000), module);
  int reductions_in_one = 0;
  for (const auto& c : module->computations()) {
    if (!c->IsFusionComputation()) continue;
    int n = 0;
    for (const auto& i : c->instructions()) n += i->opcode() == HloOpcode::kReduce;
    if (n == 2 && c->root_instruction()->opcode() == HloOpcode::kTuple) ++reductions_in_one;
  }
  CHECK(reductions_in_one == 1);
  CHECK(CountFusions(*module) == 2);

  // Same outputs as the unfused module.
  const std::string small = LogSumExpModule(6, 40);
  auto original = Parse(small);
  Literal x(Shape(PrimitiveType::F32, {6, 40}));
  for (int64_t i = 0; i < 6 * 40; ++i) x.SetDouble(i, static_cast<double>((i * 37) % 23) / 3.0 - 4.0);
  std::vector<Literal> args;
  args.push_back(x);
  auto reference = EvaluateModule(*original, args);
  REQUIRE(reference.ok());
  fuse(small, module);
  CHECK(CountFusions(*module) == 2);
  auto result = EvaluateModule(*module, args);
  REQUIRE(result.ok());
  CheckSameOutputs(*result, *reference, 1e-5);

  // A row that does not fit in shared memory per block stays two kernels (the chain's veto).
  fuse(LogSumExpModule(64, 64 * 1024), module);
  CHECK(CountFusions(*module) == 3);
}

TEST_CASE("a reduction merged as an output never creates a cycle", "[fusion][multi-output][chain]") {
  // The max's other user (m2) feeds the exp-sum too: putting the max into the sum's kernel
  // would make that kernel both produce and consume m2's value.
  auto module = Parse(R"(HloModule m
max_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT m = f32[] maximum(a, b) }
add_f32 { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY main {
  x = f32[64,4096] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  rmax = f32[64] reduce(x, ninf), dimensions={1}, to_apply=max_f32
  y = f32[64,4096] parameter(1)
  c = f32[64,4096] custom-call(y), custom_call_target="opaque"
  m2 = f32[64,4096] custom-call(c, rmax), custom_call_target="opaque2"
  bmax = f32[64,4096] broadcast(rmax), dimensions={0}
  sub = f32[64,4096] subtract(x, bmax)
  a2 = f32[64,4096] add(sub, m2)
  e = f32[64,4096] exponential(a2)
  rsum = f32[64] reduce(e, zero), dimensions={1}, to_apply=add_f32
  ROOT out = (f32[64], f32[64,4096]) tuple(rsum, m2)
})");
  const Profile h200 = LoadProfile("h200");
  PassContext context;
  context.profile = &h200.hardware;
  auto fused = RunPasses(*module, kFusionPasses, context);
  INFO(fused.status().message());
  REQUIRE(fused.ok());
  REQUIRE(VerifyModule(*module).ok());
  // The max stays a kernel of its own.
  for (const auto& c : module->computations()) {
    if (!c->IsFusionComputation()) continue;
    int n = 0;
    for (const auto& i : c->instructions()) n += i->opcode() == HloOpcode::kReduce;
    CHECK(n <= 1);
  }
}

TEST_CASE("the generated fusion tables carry their sources and reasons", "[fusion][tables]") {
  const GeneratedTables& t = GeneratedTables::Global();
  CHECK(t.fusible.size() >= 60);
  CHECK(t.op_costs.size() >= 60);
  CHECK(t.vetoes.size() >= 12);
  for (const FusionVetoInfo* v : t.vetoes) {
    INFO(v->name);
    CHECK(std::string(v->reason).size() > 20);
    CHECK(absl::StartsWith(v->file, "rules/fusion/"));
    CHECK(v->line > 0);
  }
  int cost = 0;
  CHECK(fusion::RelativeCost(HloOpcode::kTanh) >= 20);
  CHECK(fusion::RelativeCost(HloOpcode::kAdd) == 1);
  CHECK(fusion::RelativeCost(HloOpcode::kReshape) == 0);
  (void)cost;
}

}  // namespace hloc
