// The library-call passes (src/passes/library/) and the evaluator's library-call kernels
// (src/eval/eval_library_calls.cc): every small corpus module keeps its values through the
// passes under an H200-like profile and is untouched under a CPU profile; the backend_config
// text round-trips and reads XLA's own; the cuDNN backward calls are the adjoints of the
// forward convolution (so their index arithmetic is checked for strides, padding, dilation and
// feature groups without a second implementation); the GEMM epilogues follow cuBLASLt.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "corpus_inputs.h"
#include "engine/pass.h"
#include "engine/profile.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/custom_calls/library_calls.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"

using namespace hloc;

namespace {

namespace fs = std::filesystem;

HardwareProfile GpuProfile() {
  HardwareProfile p;
  p.name = "h200-test";
  p.kind = "gpu";
  p.compute_capability_major = 9;
  p.has_tensor_cores = true;
  p.capabilities["HasTensorCores"] = true;
  return p;
}
HardwareProfile CpuProfile() {
  HardwareProfile p;
  p.name = "cpu-test";
  p.kind = "cpu";
  return p;
}

absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name, const HardwareProfile& profile,
                             const std::map<std::string, OptionValue>& overrides = {}) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  for (const auto& [k, v] : overrides) options.Set(k, v);
  PassContext context;
  context.profile = &profile;
  return info->factory(options)->Run(module, context);
}

struct Step {
  std::string pass;
  std::map<std::string, OptionValue> options;
};
// The library rewrites pipelines/gpu.yaml runs (the conv ones in conv_canonicalization, before
// layout assignment; the GEMM ones after it), after the dot canonicalization XLA does first.
std::vector<Step> LibrarySteps() {
  return {{"dot_decomposer", {}},
          {"conv-rewriter", {}},
          {"cudnn-fused-convolution-rewriter", {}},
          {"cublas-pad-for-gemms", {{"datatype", std::string("bf16")}, {"min_compute_capability", std::string("8.0")}}},
          {"cublas-pad-for-gemms", {{"datatype", std::string("s8")}, {"pad_to_multiple_of", int64_t{4}}}},
          {"cublas-pad-for-gemms", {{"datatype", std::string("f16")}}},
          {"cublas-gemm-rewriter", {}}};
}

// Library calls reorder dot and convolution sums: f32 within 1e-4.
double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    default: return 1e-4;
  }
}

int64_t CountLibraryCalls(const HloModule& m) {
  int64_t n = 0;
  for (const auto& c : m.computations())
    for (const auto& i : c->instructions())
      n += i->opcode() == HloOpcode::kCustomCall && IsLibraryCallTarget(i->attrs().custom_call_target);
  return n;
}

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  INFO((m.ok() ? std::string("parsed") : std::string(m.status().message())));
  REQUIRE(m.ok());
  return std::move(*m);
}

Literal Pseudo(const Shape& shape, uint64_t seed) {
  Literal l(shape);
  uint64_t s = seed * 6364136223846793005ull + 1;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    l.SetDouble(i, static_cast<double>((s >> 11) % 2001) / 1000.0 - 1.0);
  }
  return l;
}

double Dot(const Literal& a, const Literal& b) {
  double sum = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) sum += a.GetDouble(i) * b.GetDouble(i);
  return sum;
}

Literal Eval(const HloModule& m, std::vector<Literal> args) {
  auto r = EvaluateModule(m, args);
  INFO((r.ok() ? std::string("ok") : std::string(r.status().message())));
  REQUIRE(r.ok());
  return r->shape().IsTuple() ? r->tuple_element(0) : *r;
}

}  // namespace

TEST_CASE("library passes keep the small corpus's values under a GPU profile", "[library][corpus]") {
  const HardwareProfile gpu = GpuProfile();
  int evaluated = 0, with_calls = 0;
  for (const std::string& file : SmallCorpusModules()) {
    const std::string name = fs::path(file).filename().string();
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO("module " << name);
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    auto inputs = LoadCorpusInputs(**module, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    auto reference = EvaluateModule(**module, *inputs);
    if (!reference.ok()) continue;
    ++evaluated;
    for (const Step& s : LibrarySteps()) {
      INFO("pass " << s.pass);
      auto r = RunPass(**module, s.pass, gpu, s.options);
      INFO((r.ok() ? std::string("ok") : std::string(r.status().message())));
      REQUIRE(r.ok());
      absl::Status verified = VerifyModule(**module);
      INFO("verifier: " << verified.message());
      REQUIRE(verified.ok());
    }
    REQUIRE(ParseHloModule(PrintModule(**module)).ok());
    with_calls += CountLibraryCalls(**module) > 0;
    auto result = EvaluateModule(**module, *inputs);
    INFO((result.ok() ? std::string("ok") : std::string(result.status().message())));
    REQUIRE(result.ok());
    std::vector<const Literal*> a = FlattenLeaves(*result), b = FlattenLeaves(*reference);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      CompareResult cmp = CompareLiterals(*a[i], *b[i], Tolerance(b[i]->element_type()));
      INFO("output " << i << ": " << cmp.message);
      CHECK(cmp.ok);
    }
  }
  CHECK(evaluated >= 20);
  // mlp, attention, transformer, dot_variants, conv modules, scan_rnn, seed_example, ...
  CHECK(with_calls >= 8);
}

TEST_CASE("library passes are no-ops under a CPU profile", "[library][corpus]") {
  const HardwareProfile cpu = CpuProfile();
  for (const std::string& file : SmallCorpusModules()) {
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    for (const Step& s : LibrarySteps()) {
      if (s.pass == "dot_decomposer") continue;
      INFO(file << " " << s.pass);
      auto r = RunPass(**module, s.pass, cpu, s.options);
      REQUIRE(r.ok());
      CHECK_FALSE(*r);
    }
  }
}

TEST_CASE("GEMM backend_config text round-trips and reads XLA's", "[library][config]") {
  GemmBackendConfig c;
  c.alpha_real = 0.01f;  // as XLA stores an f32 constant: 0.0099999997764825821
  c.beta = 1;
  c.epilogue = GemmEpilogue::kBiasGeluAux;
  c.dot_dimension_numbers.lhs_batch_dimensions = {0};
  c.dot_dimension_numbers.rhs_batch_dimensions = {0};
  c.dot_dimension_numbers.lhs_contracting_dimensions = {2};
  c.dot_dimension_numbers.rhs_contracting_dimensions = {1};
  c.lhs_stride = 262144;
  c.rhs_stride = 16;
  c.grad_x = true;
  const std::string text = GemmBackendConfigToJson(c);
  CHECK(absl::StrContains(text, "\"alpha_real\":0.0099999997764825821"));
  CHECK(absl::StrContains(text, "\"lhs_stride\":\"262144\""));
  auto back = ParseGemmBackendConfig(text);
  REQUIRE(back.ok());
  CHECK(back->alpha_real == c.alpha_real);
  CHECK(back->beta == 1);
  CHECK(back->epilogue == GemmEpilogue::kBiasGeluAux);
  CHECK(back->dot_dimension_numbers == c.dot_dimension_numbers);
  CHECK(back->lhs_stride == 262144);
  CHECK(back->grad_x);
  CHECK(GemmBackendConfigToJson(*back) == text);

  // XLA's own text (tests/corpus/mlp_train_step_f32.large.after_optimizations.txt).
  auto xla = ParseGemmBackendConfig(
      R"({"device_type":"DEVICE_TYPE_INVALID","force_earliest_schedule":false,"gemm_backend_config":{"alpha_imag":0,"alpha_real":0.0099999997764825821,"autotune_workspace_size":"33554432","beta":0,"damax_output":false,"dot_dimension_numbers":{"lhs_batch_dimensions":[],"lhs_contracting_dimensions":["0"],"rhs_batch_dimensions":[],"rhs_contracting_dimensions":["0"]},"epilogue":"DEFAULT","grad_x":false,"grad_y":false,"lhs_stride":"4194304","precision_config":{"algorithm":"ALG_UNSET","operand_precision":["DEFAULT","DEFAULT"]},"rhs_stride":"16777216","scale_mode":0,"selected_algorithm":"1"},"operation_queue_id":"0","reification_cost":[]})");
  REQUIRE(xla.ok());
  CHECK(xla->alpha_real == static_cast<double>(0.01f));
  CHECK(xla->dot_dimension_numbers.lhs_contracting_dimensions == std::vector<int64_t>{0});
  CHECK(xla->selected_algorithm == 1);
  CHECK(xla->autotune_workspace_size == 33554432);

  CudnnConvBackendConfig cc;
  cc.activation_mode = ConvActivation::kRelu;
  cc.conv_result_scale = 0.5;
  cc.side_input_scale = 1;
  auto cback = ParseCudnnConvBackendConfig(CudnnConvBackendConfigToJson(cc));
  REQUIRE(cback.ok());
  CHECK(cback->activation_mode == ConvActivation::kRelu);
  CHECK(cback->conv_result_scale == 0.5);
  CHECK(cback->side_input_scale == 1);

  // Bad text is an error, not a crash.
  CHECK_FALSE(ParseGemmBackendConfig("{\"gemm_backend_config\":{\"epilogue\":\"NOPE\"}}").ok());
  CHECK_FALSE(ParseGemmBackendConfig(std::string(200, '[')).ok());
  CHECK_FALSE(ParseCudnnConvBackendConfig("{\"cudnn_conv_backend_config\":").ok());
}

TEST_CASE("cuDNN backward calls are the adjoints of the forward convolution", "[library][eval]") {
  // <bwd_input(g, w), x> == <g, fwd(x, w)> == <bwd_filter(x, g), w> for every x, w, g.
  struct Case {
    const char* window;
    const char* labels;
    int fgc;
    const char* x;
    const char* w;
    const char* y;
  };
  const Case cases[] = {
      {"size=3x3 stride=2x2 pad=1_0x0_1", "b01f_01io->b01f", 1, "f32[2,7,6,3]", "f32[3,3,3,4]", "f32[2,3,3,4]"},
      {"size=2x3 pad=1_1x0_2 rhs_dilate=2x1", "bf01_oi01->bf01", 1, "f32[1,2,5,5]", "f32[3,2,2,3]", "f32[1,3,5,5]"},
      {"size=3x3 pad=1_1x1_1", "b01f_01io->b01f", 2, "f32[2,5,5,4]", "f32[3,3,2,6]", "f32[2,5,5,6]"},
  };
  for (const Case& c : cases) {
    INFO(c.window << " " << c.labels << " groups " << c.fgc);
    const std::string attrs = absl::StrCat("window={", c.window, "}, dim_labels=", c.labels,
                                           c.fgc > 1 ? absl::StrCat(", feature_group_count=", c.fgc) : "");
    auto fwd = Parse(absl::StrCat("HloModule f\nENTRY %e (x: ", c.x, ", w: ", c.w, ") -> ", c.y, " {\n  %x = ", c.x,
                                  " parameter(0)\n  %w = ", c.w, " parameter(1)\n  %c = (", c.y,
                                  ", u8[0]) custom-call(%x, %w), ", attrs,
                                  ", custom_call_target=\"__cudnn$convForward\"\n  ROOT %r = ", c.y,
                                  " get-tuple-element(%c), index=0\n}\n"));
    auto bwd_in = Parse(absl::StrCat("HloModule bi\nENTRY %e (g: ", c.y, ", w: ", c.w, ") -> ", c.x, " {\n  %g = ", c.y,
                                     " parameter(0)\n  %w = ", c.w, " parameter(1)\n  %c = (", c.x,
                                     ", u8[0]) custom-call(%g, %w), ", attrs,
                                     ", custom_call_target=\"__cudnn$convBackwardInput\"\n  ROOT %r = ", c.x,
                                     " get-tuple-element(%c), index=0\n}\n"));
    auto bwd_f = Parse(absl::StrCat("HloModule bf\nENTRY %e (x: ", c.x, ", g: ", c.y, ") -> ", c.w, " {\n  %x = ", c.x,
                                    " parameter(0)\n  %g = ", c.y, " parameter(1)\n  %c = (", c.w,
                                    ", u8[0]) custom-call(%x, %g), ", attrs,
                                    ", custom_call_target=\"__cudnn$convBackwardFilter\"\n  ROOT %r = ", c.w,
                                    " get-tuple-element(%c), index=0\n}\n"));
    const Shape xs = fwd->entry_computation()->parameter_instruction(0)->shape();
    const Shape ws = fwd->entry_computation()->parameter_instruction(1)->shape();
    const Shape ys = bwd_in->entry_computation()->parameter_instruction(0)->shape();
    const Literal x = Pseudo(xs, 1), w = Pseudo(ws, 2), g = Pseudo(ys, 3);
    const double forward = Dot(g, Eval(*fwd, {x, w}));
    const double input = Dot(Eval(*bwd_in, {g, w}), x);
    const double filter = Dot(Eval(*bwd_f, {x, g}), w);
    CHECK(std::fabs(forward) > 1e-3);
    CHECK(input == Approx(forward).epsilon(1e-5));
    CHECK(filter == Approx(forward).epsilon(1e-5));
  }
}

TEST_CASE("GEMM epilogues evaluate as cuBLASLt applies them", "[library][eval]") {
  // GELU_AUX: D = gelu(A*B + bias), aux = A*B + bias. With the output laid out column-major
  // ({0,1}) the BIAS vector runs along dimension 0, the most minor one.
  auto m = Parse(R"(HloModule g
ENTRY %e (a: f32[4,3], b: f32[3,5], bias: f32[5], bias2: f32[4]) -> (f32[4,5], f32[4,5], f32[4,5]) {
  %a = f32[4,3] parameter(0)
  %b = f32[3,5] parameter(1)
  %bias = f32[5] parameter(2)
  %bias2 = f32[4] parameter(3)
  %c = (f32[4,5], f32[4,5], s8[16]) custom-call(%a, %b, %bias), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"epilogue":"BIAS_GELU_AUX"}}
  %d = f32[4,5] get-tuple-element(%c), index=0
  %x = f32[4,5] get-tuple-element(%c), index=1
  %c2 = f32[4,5]{0,1} custom-call(%a, %b, %bias2), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]},"epilogue":"BIAS"}}
  ROOT %t = (f32[4,5], f32[4,5], f32[4,5]) tuple(%d, %x, %c2)
})");
  const HloComputation* e = m->entry_computation();
  std::vector<Literal> args;
  for (int i = 0; i < 4; ++i) args.push_back(Pseudo(e->parameter_instruction(i)->shape(), 10 + i));
  auto r = EvaluateModule(*m, args);
  INFO((r.ok() ? std::string("ok") : std::string(r.status().message())));
  REQUIRE(r.ok());
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      double ab = 0;
      for (int64_t k = 0; k < 3; ++k) ab += args[0].GetDouble(i * 3 + k) * args[1].GetDouble(k * 5 + j);
      const double pre = ab + args[2].GetDouble(j);
      const double gelu = 0.5 * pre * (1 + std::tanh(std::sqrt(2 / M_PI) * (pre + 0.044715 * pre * pre * pre)));
      CHECK(r->tuple_element(1).GetDouble(i * 5 + j) == Approx(pre).epsilon(1e-6));
      CHECK(r->tuple_element(0).GetDouble(i * 5 + j) == Approx(gelu).epsilon(1e-5).margin(1e-6));
      CHECK(r->tuple_element(2).GetDouble(i * 5 + j) == Approx(ab + args[3].GetDouble(i)).epsilon(1e-6));
    }
  // A wrong operand count is an error naming the call, not a crash.
  auto bad = Parse(R"(HloModule b
ENTRY %e (a: f32[4,3], b: f32[3,5]) -> f32[4,5] {
  %a = f32[4,3] parameter(0)
  %b = f32[3,5] parameter(1)
  ROOT %c = f32[4,5] custom-call(%a, %b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":1,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"]}}}
})");
  std::vector<Literal> bad_args = {Pseudo(Shape(PrimitiveType::F32, {4, 3}), 1), Pseudo(Shape(PrimitiveType::F32, {3, 5}), 2)};
  auto br = EvaluateModule(*bad, bad_args);
  REQUIRE_FALSE(br.ok());
  CHECK(absl::StrContains(br.status().message(), "operands"));
}
