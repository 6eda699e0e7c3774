// Registration of the expanders XLA's GPU (and CPU) pipeline runs before layout assignment,
// under XLA's pass names, with XLA's constructor arguments as typed options.
#include "passes/expanders/batchnorm_expander.h"
#include "passes/expanders/comparison_expander.h"
#include "passes/expanders/dot_decomposer.h"
#include "passes/expanders/dot_strength_reduction.h"
#include "passes/expanders/logistic_expander.h"
#include "passes/expanders/patch_convolution_to_dot.h"
#include "passes/expanders/rng_bit_generator_expander.h"
#include "passes/expanders/select_and_scatter_expander.h"
#include "passes/expanders/wide_concatenate_splitter.h"
#include "passes/passes.h"

namespace hloc {

namespace {

bool BoolOption(const PassOptions& o, const std::string& name, bool def) { return o.Has(name) ? o.GetBool(name) : def; }
std::string StringOption(const PassOptions& o, const std::string& name, const std::string& def) {
  return o.Has(name) ? o.GetString(name) : def;
}

}  // namespace

void RegisterExpanderPasses(PassRegistry& registry) {
  registry.Register(PassInfo{
      WideConcatenateSplitter::kName,
      "a concatenate of more than K distinct operands -> a tree of concatenates of at most K each",
      {{"max_distinct_operands", OptionType::kInt, OptionValue(int64_t{-1}),
        "K; -1: the profile's tuning concatenate_max_distinct_operands"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<WideConcatenateSplitter>(o.Has("max_distinct_operands") ? o.GetInt("max_distinct_operands")
                                                                                        : -1);
      }});

  registry.Register(PassInfo{
      RngBitGeneratorExpander::kName,
      "rng-bit-generator -> a call of three-fry / philox written in HLO (bit-exact with XLA)",
      {{"default_algorithm", OptionType::kString, OptionValue(std::string("philox")),
        "algorithm for RNG_DEFAULT: philox (XLA:GPU and XLA:CPU) or three_fry"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<RngBitGeneratorExpander>(StringOption(o, "default_algorithm", "philox"));
      }});

  registry.Register(PassInfo{
      LogisticExpander::kName,
      "logistic(x) -> 1 / (1 + exp(-x))",
      {{"expansion_type", OptionType::kString, OptionValue(std::string("exp")),
        "exp: 1/(1+exp(-x)) (XLA today); tanh: 0.5+0.5*tanh(0.5*x) (older XLA's kTanh)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        const std::string type = StringOption(o, "expansion_type", "exp");
        // Anything but "tanh" is the exp expansion; the manifest documents the two values.
        return std::make_unique<LogisticExpander>(type == "tanh" ? LogisticExpander::ExpansionType::kTanh
                                                                 : LogisticExpander::ExpansionType::kExp);
      }});

  registry.Register(PassInfo{
      BatchNormExpander::kName,
      "batch-norm-training / -inference / -grad -> elementwise ops and reductions",
      {{"rewrite_training_op", OptionType::kBool, OptionValue(true), "expand batch-norm-training"},
       {"rewrite_inference_op", OptionType::kBool, OptionValue(true), "expand batch-norm-inference"},
       {"rewrite_grad_op", OptionType::kBool, OptionValue(true), "expand batch-norm-grad"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<BatchNormExpander>(BoolOption(o, "rewrite_training_op", true),
                                                   BoolOption(o, "rewrite_inference_op", true),
                                                   BoolOption(o, "rewrite_grad_op", true));
      }});

  registry.Register(PassInfo{
      ComparisonExpander::kName,
      "compare type=TOTALORDER on floats -> signed-integer compare of sign-flipped bit patterns",
      {{"expand_via_upcast", OptionType::kStringList, OptionValue(std::vector<std::string>{}),
        "float types converted first, as from:to pairs (XLA:GPU uses [\"bf16:f32\"])"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<ComparisonExpander>(o.Has("expand_via_upcast") ? o.GetStringList("expand_via_upcast")
                                                                                : std::vector<std::string>{});
      }});

  registry.Register(PassInfo{
      DotStrengthReduction::kName,
      "dots with a vector operand (only batch and contracting dimensions) -> multiply + reduce",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<DotStrengthReduction>(); }});

  registry.Register(PassInfo{
      PatchConvolutionToDot::kName,
      "convolutions with non-overlapping windows (patch embeddings and their weight gradients) -> reshape, dot, transpose",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<PatchConvolutionToDot>(); }});

  registry.Register(PassInfo{
      DotDecomposer::kName,
      "non-canonical dots -> transpose/reshape to [batch, m, k] x [batch, k, n] and reshape back",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<DotDecomposer>(); }});

  registry.Register(PassInfo{
      SelectAndScatterExpander::kName,
      "select-and-scatter -> reduce-window of (operand, element index) picking each window's element, "
      "then scatter of the source at those indices",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SelectAndScatterExpander>(); }});
}

}  // namespace hloc
