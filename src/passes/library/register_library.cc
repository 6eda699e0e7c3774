// Registration of the library-call passes (src/passes/library/) under XLA's names.
#include "passes/library/conv_rewriter.h"
#include "passes/library/cublas_pad_for_gemms.h"
#include "passes/library/cudnn_fused_conv_rewriter.h"
#include "passes/library/gemm_rewriter.h"
#include "passes/library/onednn_convolution_rewriter.h"
#include "passes/library/small_gemm_selector.h"
#include <algorithm>
#include <cstdlib>

#include "engine/rule_tables.h"
#include "passes/passes.h"

namespace hloc {

namespace {

bool BoolOption(const PassOptions& o, const std::string& name, bool def) { return o.Has(name) ? o.GetBool(name) : def; }
int64_t IntOption(const PassOptions& o, const std::string& name, int64_t def) { return o.Has(name) ? o.GetInt(name) : def; }
std::string StringOption(const PassOptions& o, const std::string& name, const std::string& def) {
  return o.Has(name) ? o.GetString(name) : def;
}

// The names and groups of a library pass's pattern records (rules/library/*.td): what its
// pipeline entry's `rules: {enable, disable}` may name.
std::vector<std::string> LibraryPatternNames(const std::string& pass) {
  std::vector<std::string> names;
  for (const LibraryPatternInfo* p : GeneratedTables::Global().library_patterns) {
    if (p->pass != pass) continue;
    names.push_back(p->name);
    if (p->group[0] != '\0' && std::find(names.begin(), names.end(), p->group) == names.end()) names.push_back(p->group);
  }
  return names;
}

}  // namespace

void RegisterLibraryPasses(PassRegistry& registry) {
  registry.Register(PassInfo{
      GemmRewriter::kName,
      "dot -> cuBLASLt/cuBLAS custom-call, absorbing alpha, bias, relu, gelu and output converts (GPU profiles; the "
      "epilogue patterns are records in rules/library/GemmEpilogues.td)",
      {{"size_threshold", OptionType::kInt, OptionValue(int64_t{100}),
        "dots with (m + n) * k below this stay dots when the GPU's own emitters run them "
        "(xla_gpu_gemm_rewrite_size_threshold)"},
       {"enable_cublaslt", OptionType::kBool, OptionValue(true), "use __cublas$lt$matmul where cuBLASLt takes the types"},
       {"fuse_bias", OptionType::kBool, OptionValue(true), "fold vector and matrix bias adds into the GEMM"},
       {"fuse_output_convert", OptionType::kBool, OptionValue(true),
        "fold a narrowing float convert of the result into the GEMM's output type"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        GemmRewriter::Options options;
        options.size_threshold = IntOption(o, "size_threshold", 100);
        options.enable_cublaslt = BoolOption(o, "enable_cublaslt", true);
        options.fuse_bias = BoolOption(o, "fuse_bias", true);
        options.fuse_output_convert = BoolOption(o, "fuse_output_convert", true);
        return std::make_unique<GemmRewriter>(options);
      },
      [] { return LibraryPatternNames(GemmRewriter::kName); }});

  registry.Register(PassInfo{
      CublasPadForGemms::kName,
      "zero-pad the matrix dimensions of canonical dots of one type to a multiple for tensor cores",
      {{"datatype", OptionType::kString, OptionValue(std::string("f16")), "operand element type this instance pads"},
       {"pad_to_multiple_of", OptionType::kInt, OptionValue(int64_t{8}), "multiple the two matrix dimensions round up to"},
       {"min_compute_capability", OptionType::kString, OptionValue(std::string("7.0")),
        "only on GPUs at least this capable (XLA pads bf16 from Ampere, 8.0)"},
       {"size_threshold", OptionType::kInt, OptionValue(int64_t{100}),
        "dots cublas-gemm-rewriter leaves to the GPU's emitters are not padded (keep equal to its option)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        const std::string type_name = StringOption(o, "datatype", "f16");
        PrimitiveType type = ParsePrimitiveType(type_name).value_or(PrimitiveType::F16);
        const std::string cc = StringOption(o, "min_compute_capability", "7.0");
        int major = 7, minor = 0;
        if (size_t dot = cc.find('.'); dot != std::string::npos) {
          major = std::atoi(cc.substr(0, dot).c_str());
          minor = std::atoi(cc.substr(dot + 1).c_str());
        } else {
          major = std::atoi(cc.c_str());
        }
        return std::make_unique<CublasPadForGemms>(type, std::max<int64_t>(1, IntOption(o, "pad_to_multiple_of", 8)),
                                                   major, minor, IntOption(o, "size_threshold", 100));
      }});

  registry.Register(PassInfo{
      SmallGemmSelector::kName,
      "GEMMs hloc's small-GEMM kernel runs instead of cuBLAS: custom-call target __hloc$small_gemm, or "
      "a dot's backend_config {\"kind\":\"__hloc$small_gemm\"} (limits: the profile's tuning "
      "small_gemm_max_macs / small_gemm_max_short_side; GPU profiles)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SmallGemmSelector>(); }});

  registry.Register(PassInfo{
      ConvRewriter::kName,
      "convolution -> cuDNN forward / backward-input / backward-filter custom-calls (GPU profiles)",
      {{"depthwise_to_cudnn", OptionType::kBool, OptionValue(true),
        "false: depthwise convolutions (one input feature per group) and their input gradients stay "
        "convolutions, emitted as fused loop kernels; filter gradients still go to cuDNN"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<ConvRewriter>(BoolOption(o, "depthwise_to_cudnn", true));
      }});

  registry.Register(PassInfo{
      OneDnnConvolutionRewriter::kName,
      "convolution -> __onednn$convolution custom-call run by oneDNN (CPU targets, builds with oneDNN; issue 16)",
      {{"min_flops", OptionType::kInt, OptionValue(int64_t{0}),
        "convolutions with fewer flops (2 x multiply-adds) stay elemental kernels"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<OneDnnConvolutionRewriter>(IntOption(o, "min_flops", 0));
      }});

  registry.Register(PassInfo{
      CudnnFusedConvRewriter::kName,
      "fold alpha, bias, side input and relu into __cudnn$convBiasActivationForward (GPU profiles)",
      {{"use_runtime_fusion", OptionType::kBool, OptionValue(false),
        "also fuse relu6 through cuDNN's runtime fusion engine (xla_gpu_use_runtime_fusion)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<CudnnFusedConvRewriter>(BoolOption(o, "use_runtime_fusion", false));
      }});
}

}  // namespace hloc
