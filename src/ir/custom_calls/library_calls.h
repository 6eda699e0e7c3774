// XLA:GPU's library calls as HLO custom-calls: cuBLAS / cuBLASLt GEMMs ("__cublas$gemm",
// "__cublas$lt$matmul") and cuDNN convolutions ("__cudnn$convForward", ...), with the
// backend_config JSON XLA writes for them (xla/service/gpu/backend_configs.proto:
// GpuBackendConfig.gemm_backend_config / cudnn_conv_backend_config).
//
// Both the library-call passes (src/passes/library/, which write these configs) and the
// reference evaluator (eval_library_calls.cc, which runs the calls with the libraries'
// semantics) read this header, so the text form is defined once. The evaluator accepts XLA's
// own optimized modules too (tests/corpus/*.after_optimizations.txt), which carry more fields
// (algorithm, workspace sizes); fields that do not change the result are kept but ignored.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace hloc {

// Custom-call targets (xla/service/gpu/cublas_cudnn.h).
inline constexpr std::string_view kGemmCallTarget = "__cublas$gemm";
inline constexpr std::string_view kCublasLtMatmulCallTarget = "__cublas$lt$matmul";
inline constexpr std::string_view kCublasLtMatmulF8CallTarget = "__cublas$lt$matmul$f8";
inline constexpr std::string_view kCudnnConvForwardCallTarget = "__cudnn$convForward";
inline constexpr std::string_view kCudnnConvBackwardInputCallTarget = "__cudnn$convBackwardInput";
inline constexpr std::string_view kCudnnConvBackwardFilterCallTarget = "__cudnn$convBackwardFilter";
inline constexpr std::string_view kCudnnConvBiasActivationForwardCallTarget = "__cudnn$convBiasActivationForward";

bool IsCublasGemmTarget(std::string_view target);  // __cublas$gemm, __cublas$lt$matmul
bool IsCudnnConvTarget(std::string_view target);   // the four __cudnn$conv* targets above

// hloc's own GEMM kernel (codegen/gpu/gpu_small_gemm.h) in place of cuBLAS, as decided by
// small-gemm-selector (passes/library/small_gemm_selector.h), the one place that decides it;
// codegen only reads the record (issue 15: decide once, upstream, and record it):
//   - a cuBLAS custom-call the kernel runs gets this target instead of __cublas$lt$matmul /
//     __cublas$gemm, keeping its operands, its (D, workspace) result and its GemmBackendConfig
//     (the workspace is then unused): the call target names what runs, as XLA's does;
//   - a plain dot the kernel runs (dots are not library calls, and turning one into a
//     custom-call would change its buffers and the kernel's parameter order) records it in its
//     backend_config as {"kind":"__hloc$small_gemm"}, as XLA records "kind":"__triton_gemm" in
//     a fusion's backend_config.
inline constexpr std::string_view kSmallGemmCallTarget = "__hloc$small_gemm";
// Whether `inst` is so marked (either form).
bool IsSmallGemmMarked(const HloInstruction& inst);
// The dot's backend_config with "kind":"__hloc$small_gemm" added (an empty config becomes
// {"kind":"__hloc$small_gemm"}); nullopt when the config is not a JSON object.
std::optional<std::string> DotConfigWithSmallGemmKind(std::string_view backend_config);

// Targets EvalLibraryCall evaluates.
inline bool IsLibraryCallTarget(std::string_view target) {
  return IsCublasGemmTarget(target) || target == kSmallGemmCallTarget || IsCudnnConvTarget(target);
}

// ---- backend_config JSON, read with nlohmann::json ------------------------------------------
// Parses one JSON document. Malformed text is "invalid JSON: line L, column C: <what> at offset N"
// (N counts bytes from 0); nesting deeper than 64 levels below the top is refused before parsing
// ("invalid JSON: nesting too deep at offset N"), so a hostile config cannot exhaust the stack.
absl::StatusOr<nlohmann::json> ParseJson(std::string_view text);

// ---- GemmBackendConfig ----------------------------------------------------------------------
// cuBLASLt epilogues, as GemmBackendConfig.Epilogue names them.
enum class GemmEpilogue { kDefault, kBias, kRelu, kBiasRelu, kGelu, kGeluAux, kBiasGelu, kBiasGeluAux, kSilu, kBiasSilu };
std::string_view GemmEpilogueName(GemmEpilogue e);  // "DEFAULT", "BIAS_RELU", ...
std::optional<GemmEpilogue> ParseGemmEpilogue(std::string_view name);
bool EpilogueAddsBias(GemmEpilogue e);
bool EpilogueHasAux(GemmEpilogue e);  // GELU_AUX, BIAS_GELU_AUX: an extra output (pre-activation)

struct GemmBackendConfig {
  double alpha_real = 1, alpha_imag = 0, beta = 0;
  DotDimensionNumbers dot_dimension_numbers;
  // precision_config: operand precisions ("DEFAULT", "HIGH", "HIGHEST") and the algorithm
  // ("ALG_UNSET", "ALG_DOT_BF16_BF16_F32", ...), as XLA's enum names.
  std::vector<std::string> operand_precision = {"DEFAULT", "DEFAULT"};
  std::string algorithm = "ALG_UNSET";
  GemmEpilogue epilogue = GemmEpilogue::kDefault;
  bool grad_x = false, grad_y = false, damax_output = false;
  int64_t lhs_stride = 0, rhs_stride = 0;
  int64_t scale_mode = 0;
  // Set by autotuning (gemm-algorithm-picker); absent right after cublas-gemm-rewriter.
  std::optional<int64_t> selected_algorithm, autotune_workspace_size;
};

// ---- CudnnConvBackendConfig -----------------------------------------------------------------
// se::dnn::ActivationMode names as XLA prints them ("kNone", "kRelu", ...).
enum class ConvActivation { kNone, kSigmoid, kRelu, kRelu6, kReluX, kTanh, kBandPass, kElu, kLeakyRelu, kGeluExact };
std::string_view ConvActivationName(ConvActivation a);
std::optional<ConvActivation> ParseConvActivation(std::string_view name);

struct CudnnConvBackendConfig {
  ConvActivation activation_mode = ConvActivation::kNone;
  double conv_result_scale = 1, side_input_scale = 0, leakyrelu_alpha = 0;
  // The algorithm object autotuning writes (JSON text), printed when set; the reader does
  // not fill it (hloc has no autotuner yet).
  std::string algorithm_json;
};

// GpuBackendConfig text with XLA's fields in XLA's (alphabetical) order:
// {"device_type":"DEVICE_TYPE_INVALID","force_earliest_schedule":false,"gemm_backend_config":{...},
//  "operation_queue_id":"0","reification_cost":[]}
std::string GemmBackendConfigToJson(const GemmBackendConfig& config);
std::string CudnnConvBackendConfigToJson(const CudnnConvBackendConfig& config);
// Reads the gemm_backend_config / cudnn_conv_backend_config of a GpuBackendConfig (or the bare
// inner object). Missing fields keep their proto defaults (alpha_real 0 in the proto: XLA always
// writes it, so a missing alpha_real reads as 1 only when the whole config is absent).
absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(std::string_view json);
absl::StatusOr<CudnnConvBackendConfig> ParseCudnnConvBackendConfig(std::string_view json);

// Shortest decimal text that reads back as the same double (as protobuf's JSON printer writes).
std::string JsonDouble(double v);

// ---- Evaluation -----------------------------------------------------------------------------

}  // namespace hloc
