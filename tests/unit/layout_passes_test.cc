// The layout stage: layout-assignment, layout_normalization, reshape-decomposer,
// move_copy_to_users, transpose-folding and float-normalization (src/passes/layout/).
//
// - Every small corpus module, through pipelines/gpu.yaml under the h200 profile (and
//   pipelines/cpu.yaml under the cpu profile) up to and including the layout stage, verifies
//   (layout-sensitive), prints and parses back, has a layout on every shape, has only default
//   layouts left after normalization (GPU), and evaluates to the same outputs as the original.
// - Hand-written modules with non-default layouts (the lit tests' inputs) evaluate the same
//   before and after each layout pass on random inputs: the evaluator honours layouts in
//   bitcasts, copies and transposes, and the rewrites keep the meaning.
// - The h200 and cpu profiles choose different layouts where the rules say so.
// - The passes survive every module of XLA's parser tests (a result or an error, no crash).
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "corpus_inputs.h"
#include "engine/pass.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "passes/layout/layout_util.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

const std::string kRepo = std::string(HLOC_TESTS_DIR) + "/..";

std::vector<std::string> FilesIn(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::directory_iterator(dir))
    if (absl::EndsWith(e.path().filename().string(), suffix)) files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

bool ContainsPass(const PipelineEntry& e, const std::string& pass) {
  if (!e.is_group()) return e.pass == pass;
  for (const PipelineEntry& c : e.passes)
    if (ContainsPass(c, pass)) return true;
  return false;
}

// The named pipeline patched by the profile, cut after the top-level entry that runs `last`.
struct Stage {
  Pipeline pipeline;
  Profile profile;
};
Stage LoadStage(const std::string& pipeline_name, const std::string& profile_name, const std::string& last) {
  auto pipeline = LoadPipelineFile(kRepo + "/pipelines/" + pipeline_name + ".yaml");
  INFO("pipeline: " << (pipeline.ok() ? "ok" : std::string(pipeline.status().message())));
  REQUIRE(pipeline.ok());
  auto profile = LoadProfileFile(kRepo + "/configs/" + profile_name + ".yaml");
  INFO("profile: " << (profile.ok() ? "ok" : std::string(profile.status().message())));
  REQUIRE(profile.ok());
  REQUIRE(ApplyPatches(*profile, *pipeline).ok());
  auto& entries = pipeline->passes;
  auto it = std::find_if(entries.begin(), entries.end(), [&](const PipelineEntry& e) { return ContainsPass(e, last); });
  REQUIRE(it != entries.end());
  entries.erase(it + 1, entries.end());
  return {std::move(*pipeline), std::move(*profile)};
}

absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name, const HardwareProfile* profile) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  PassContext context;
  context.profile = profile;
  return info->factory(options)->Run(module, context);
}

double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    // Normalized reduces walk their dimensions in another order.
    default: return IsF8OrF4(t) ? 1e-2 : 1e-4;
  }
}

void CompareOutputs(const Literal& got, const Literal& want) {
  const std::vector<const Literal*> a = FlattenLeaves(got), b = FlattenLeaves(want);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    CompareResult cmp = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->element_type()));
    INFO("output " << i << ": " << cmp.message << " error " << cmp.error);
    CHECK(cmp.ok);
  }
}

bool EveryShapeHasLayout(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes())
      if (!EveryShapeHasLayout(e)) return false;
    return true;
  }
  return !s.IsArray() || s.has_layout();
}

// Instructions layout normalization must leave with the default layout: every array-shaped
// instruction but parameters and bitcasts (which carry the original layouts at the edges) and
// what passes a value through (get-tuple-element of a parameter or while).
std::vector<std::string> NonDefaultLayouts(const HloModule& module) {
  std::vector<std::string> out;
  for (const auto& c : module.computations())
    for (const auto& inst : c->instructions()) {
      const HloOpcode op = inst->opcode();
      if (op == HloOpcode::kParameter || op == HloOpcode::kBitcast || op == HloOpcode::kGetTupleElement) continue;
      if (inst->shape().IsArray() && !layout::HasDefaultLayout(inst->shape())) out.push_back(inst->name());
    }
  return out;
}

// Random arguments for the entry's parameters (small integers, floats in [-2, 2], pred 0/1).
std::vector<Literal> RandomArgs(const HloModule& module, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> real(-2.0, 2.0);
  std::uniform_int_distribution<int> small(-8, 8);
  std::vector<Literal> args;
  for (const HloInstruction* p : module.entry_computation()->parameters()) {
    Literal lit(p->shape());
    const PrimitiveType t = p->shape().element_type();
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (t == PrimitiveType::PRED) lit.SetInt(i, small(rng) & 1);
      else if (IsFloatingPoint(t)) lit.SetDouble(i, real(rng));
      else if (IsUnsignedIntegral(t)) lit.SetInt(i, small(rng) + 8);
      else lit.SetInt(i, small(rng));
    }
    args.push_back(std::move(lit));
  }
  return args;
}

void RunStageOnCorpus(const std::string& pipeline_name, const std::string& profile_name, bool expect_normalized) {
  Stage stage = LoadStage(pipeline_name, profile_name, "float-normalization");
  std::vector<std::string> files = FilesIn(std::string(HLOC_TESTS_DIR) + "/corpus", ".small.before_optimizations.txt");
  REQUIRE(files.size() >= 20);
  int evaluated = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO("module " << fs::path(file).filename().string() << " through " << pipeline_name << ".yaml under "
                   << profile_name);
    auto original = ParseHloModuleFile(file);
    REQUIRE(original.ok());
    auto inputs = LoadCorpusInputs(**original, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    auto reference = EvaluateModule(**original, *inputs);
    REQUIRE(reference.ok());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    PassContext context;
    context.profile = &stage.profile.hardware;
    std::ostringstream notes;
    PassManagerOptions options;
    options.notes = &notes;
    auto ran = RunPipeline(stage.pipeline, **module, context, options);
    INFO("pipeline: " << (ran.ok() ? "ok" : std::string(ran.status().message())));
    REQUIRE(ran.ok());
    VerifierOptions vo;
    vo.layout_sensitive = true;
    vo.allow_mixed_precision = true;
    absl::Status verified = VerifyModule(**module, vo);
    INFO("layout-sensitive verifier: " << verified.message());
    REQUIRE(verified.ok());
    for (const auto& c : (*module)->computations())
      for (const auto& inst : c->instructions()) {
        INFO("instruction " << inst->name());
        CHECK(EveryShapeHasLayout(inst->shape()));
      }
    if (expect_normalized) {
      std::vector<std::string> left = NonDefaultLayouts(**module);
      INFO("non-default layouts left: " << left.size() << (left.empty() ? "" : " e.g. " + left[0]));
      CHECK(left.empty());
    }
    auto reparsed = ParseHloModule(PrintModule(**module));
    INFO("reparse: " << (reparsed.ok() ? "ok" : std::string(reparsed.status().message())));
    REQUIRE(reparsed.ok());
    auto result = EvaluateModule(**module, *inputs);
    INFO("evaluation: " << (result.ok() ? "ok" : std::string(result.status().message())));
    REQUIRE(result.ok());
    CompareOutputs(*result, *reference);
    ++evaluated;
  }
  CHECK(evaluated == static_cast<int>(files.size()));
}

}  // namespace

TEST_CASE("gpu.yaml through the layout stage (h200) keeps every small corpus module's meaning",
          "[layout][corpus]") {
  RunStageOnCorpus("gpu", "h200", /*expect_normalized=*/true);
}

TEST_CASE("cpu.yaml through the layout stage (cpu) keeps every small corpus module's meaning", "[layout][corpus]") {
  RunStageOnCorpus("cpu", "cpu", /*expect_normalized=*/false);
}

TEST_CASE("gpu.yaml through the layout stage (h200) verifies every large corpus module", "[layout][corpus]") {
  Stage stage = LoadStage("gpu", "h200", "float-normalization");
  std::vector<std::string> files = FilesIn(std::string(HLOC_TESTS_DIR) + "/corpus", ".large.before_optimizations.txt");
  REQUIRE(files.size() >= 20);
  for (const std::string& file : files) {
    INFO("module " << fs::path(file).filename().string());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    PassContext context;
    context.profile = &stage.profile.hardware;
    std::ostringstream notes;
    PassManagerOptions options;
    options.notes = &notes;
    auto ran = RunPipeline(stage.pipeline, **module, context, options);
    INFO("pipeline: " << (ran.ok() ? "ok" : std::string(ran.status().message())));
    REQUIRE(ran.ok());
    VerifierOptions vo;
    vo.layout_sensitive = true;
    vo.allow_mixed_precision = true;
    absl::Status verified = VerifyModule(**module, vo);
    INFO("layout-sensitive verifier: " << verified.message());
    CHECK(verified.ok());
    std::vector<std::string> left = NonDefaultLayouts(**module);
    INFO("non-default layouts left: " << left.size() << (left.empty() ? "" : " e.g. " + left[0]));
    CHECK(left.empty());
  }
}

TEST_CASE("layout passes keep the meaning of modules with non-default layouts", "[layout]") {
  // The lit tests' modules: non-default parameter layouts, copies, transposes, bitcasts,
  // dots, convolutions, reduces, variadic reduces and sorts, constants, iotas, slices.
  std::vector<std::string> files;
  for (const char* dir : {"layout-assignment", "layout_normalization", "reshape-decomposer", "move_copy_to_users",
                          "transpose-folding", "float-normalization"})
    for (const std::string& f : FilesIn(std::string(HLOC_TESTS_DIR) + "/lit/" + dir, ".hlo")) files.push_back(f);
  REQUIRE(files.size() >= 20);
  auto h200 = LoadProfileFile(kRepo + "/configs/h200.yaml");
  auto cpu = LoadProfileFile(kRepo + "/configs/cpu.yaml");
  REQUIRE(h200.ok());
  REQUIRE(cpu.ok());
  const std::vector<std::vector<std::string>> sequences = {
      {"layout-assignment"},
      {"reshape-decomposer"},
      {"move_copy_to_users"},
      {"transpose-folding"},
      {"layout_normalization"},
      {"float-normalization"},
      {"layout-assignment", "transpose-folding", "reshape-decomposer", "move_copy_to_users", "layout_normalization",
       "dce", "float-normalization"},
  };
  int compared = 0;
  for (const std::string& file : files) {
    auto original = ParseHloModuleFile(file);
    if (!original.ok() || !VerifyModule(**original).ok()) continue;  // error-case inputs
    std::vector<Literal> args = RandomArgs(**original, 7);
    auto reference = EvaluateModule(**original, args);
    if (!reference.ok()) continue;
    for (const HardwareProfile* profile : {&h200->hardware, &cpu->hardware}) {
      for (const auto& seq : sequences) {
        INFO(fs::path(file).filename().string() << " under " << profile->name << " after " << seq.back() << " ("
                                                << seq.size() << " passes)");
        auto module = ParseHloModuleFile(file);
        REQUIRE(module.ok());
        for (const std::string& pass : seq) {
          auto r = RunPass(**module, pass, profile);
          INFO("pass " << pass << ": " << (r.ok() ? "ok" : std::string(r.status().message())));
          REQUIRE(r.ok());
          VerifierOptions vo;
          vo.allow_mixed_precision = true;
          absl::Status v = VerifyModule(**module, vo);
          INFO("verifier after " << pass << ": " << v.message());
          REQUIRE(v.ok());
        }
        if (seq.size() > 1 && profile == &h200->hardware) {
          std::vector<std::string> left = NonDefaultLayouts(**module);
          INFO("non-default layouts left: " << (left.empty() ? "" : left[0]));
          CHECK(left.empty());
        }
        auto result = EvaluateModule(**module, args);
        INFO("evaluation: " << (result.ok() ? "ok" : std::string(result.status().message())));
        REQUIRE(result.ok());
        CompareOutputs(*result, *reference);
        ++compared;
      }
    }
  }
  CHECK(compared >= 200);
}

TEST_CASE("h200 and cpu profiles lay out convolutions and int8 dots differently", "[layout][profile]") {
  const char* text = R"(
HloModule profiles
ENTRY main {
  x = f32[2,4,8,8] parameter(0)
  w = f32[8,4,3,3] parameter(1)
  c = f32[2,8,8,8] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  a = s8[16,32] parameter(2)
  b = s8[32,16] parameter(3)
  d = s32[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,8,8,8], s32[16,16]) tuple(c, d)
}
)";
  auto h200 = LoadProfileFile(kRepo + "/configs/h200.yaml");
  auto cpu = LoadProfileFile(kRepo + "/configs/cpu.yaml");
  REQUIRE(h200.ok());
  REQUIRE(cpu.ok());
  auto layouts = [&](const HardwareProfile& p) {
    auto m = ParseHloModule(text);
    REQUIRE(m.ok());
    REQUIRE(RunPass(**m, "layout-assignment", &p).ok());
    const HloComputation* e = (*m)->entry_computation();
    const HloInstruction* conv = e->GetInstructionWithName("c");
    const HloInstruction* dot = e->GetInstructionWithName("d");
    REQUIRE(conv != nullptr);
    REQUIRE(dot != nullptr);
    return std::vector<std::vector<int64_t>>{
        conv->shape().layout().minor_to_major, conv->operand(0)->shape().layout().minor_to_major,
        conv->operand(1)->shape().layout().minor_to_major, dot->operand(1)->shape().layout().minor_to_major};
  };
  auto g = layouts(h200->hardware);
  auto c = layouts(cpu->hardware);
  // Tensor cores: NHWC result and input, OHWI filter (GpuConv*Nhwc / GpuConvFilterOhwi).
  CHECK(g[0] == std::vector<int64_t>{1, 3, 2, 0});
  CHECK(g[1] == std::vector<int64_t>{1, 3, 2, 0});
  CHECK(g[2] == std::vector<int64_t>{1, 3, 2, 0});
  // cuBLAS int8: the rhs with its contracting dimension minor (GpuDotS8RhsContractingMinor).
  CHECK(g[3] == std::vector<int64_t>{0, 1});
  // The CPU: row-major everywhere (CpuConv*RowMajor, CpuDot*RowMajor).
  CHECK(c[0] == std::vector<int64_t>{3, 2, 1, 0});
  CHECK(c[1] == std::vector<int64_t>{3, 2, 1, 0});
  CHECK(c[2] == std::vector<int64_t>{3, 2, 1, 0});
  CHECK(c[3] == std::vector<int64_t>{1, 0});
}

TEST_CASE("ReshapeIsBitcast follows the physical order", "[layout]") {
  auto shape = [](std::vector<int64_t> dims, std::vector<int64_t> m2m) {
    Shape s(PrimitiveType::F32, dims);
    s.set_layout(layout::MakeLayout(m2m));
    return s;
  };
  CHECK(layout::ReshapeIsBitcast(shape({4, 6}, {1, 0}), shape({24}, {0})));
  CHECK_FALSE(layout::ReshapeIsBitcast(shape({4, 6}, {0, 1}), shape({24}, {0})));
  CHECK(layout::ReshapeIsBitcast(shape({4, 6}, {0, 1}), shape({4, 1, 6}, {0, 1, 2})));
  CHECK(layout::ReshapeIsBitcast(shape({4, 6}, {0, 1}), shape({4, 3, 2}, {0, 2, 1})));
  CHECK_FALSE(layout::ReshapeIsBitcast(shape({4, 6}, {0, 1}), shape({4, 3, 2}, {2, 1, 0})));
  CHECK(layout::ReshapeIsBitcast(shape({6, 4}, {1, 0}), shape({4, 6}, {1, 0})));  // not refinable, row-major
  CHECK_FALSE(layout::ReshapeIsBitcast(shape({6, 4}, {0, 1}), shape({4, 6}, {0, 1})));
  CHECK(layout::ReshapeIsBitcast(shape({2, 3, 4}, {0, 2, 1}), shape({2, 12}, {0, 1})));
  // AlignedReshapeLayout finds the bitcast layout when the dimension groups allow one.
  auto aligned = layout::AlignedReshapeLayout(shape({4, 6}, {0, 1}), Shape(PrimitiveType::F32, {4, 3, 2}));
  REQUIRE(aligned.has_value());
  CHECK(aligned->minor_to_major == std::vector<int64_t>{0, 2, 1});
  aligned = layout::AlignedReshapeLayout(shape({4, 1, 6}, {0, 1, 2}), Shape(PrimitiveType::F32, {24}));
  CHECK_FALSE(aligned.has_value());  // 4 minor of 6: no 1-d layout reads it in order
  aligned = layout::AlignedReshapeLayout(shape({2, 3, 4}, {0, 2, 1}), Shape(PrimitiveType::F32, {2, 1, 12}));
  REQUIRE(aligned.has_value());
  CHECK(layout::ReshapeIsBitcast(shape({2, 3, 4}, {0, 2, 1}), layout::WithLayout(Shape(PrimitiveType::F32, {2, 1, 12}), *aligned)));
}

TEST_CASE("layout passes survive every module of XLA's parser tests", "[layout][xla-cases]") {
  std::vector<std::string> files;
  for (const char* sub : {"valid", "valid_other"})
    for (const std::string& f : FilesIn(std::string(HLOC_TESTS_DIR) + "/xla-hlo-cases/" + sub, ".hlo"))
      files.push_back(f);
  REQUIRE(files.size() > 200);
  auto h200 = LoadProfileFile(kRepo + "/configs/h200.yaml");
  REQUIRE(h200.ok());
  for (const std::string& file : files) {
    auto module = ParseHloModuleFile(file);
    if (!module.ok()) continue;
    const bool verified = VerifyModule(**module).ok();
    for (const char* pass : {"layout-assignment", "transpose-folding", "reshape-decomposer", "move_copy_to_users",
                             "layout_normalization", "float-normalization"}) {
      INFO(file << " " << pass);
      auto r = RunPass(**module, pass, &h200->hardware);
      if (!r.ok()) break;  // an error is a fine answer; a crash is not
      if (verified) {
        VerifierOptions vo;
        vo.allow_mixed_precision = true;
        absl::Status v = VerifyModule(**module, vo);
        INFO("verifier: " << v.message());
        CHECK(v.ok());
      }
    }
  }
}

}  // namespace hloc
