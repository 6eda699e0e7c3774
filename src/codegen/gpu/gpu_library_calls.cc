// GEMM configs and convolution descriptors for the GPU's library thunks (see
// gpu_library_calls.h). XLA reference: xla/service/gpu/matmul_utils.cc (MatrixLayout,
// GemmConfig::For), xla/service/gpu/gpu_conv_runner.cc (GpuConvConfig).
#include "codegen/gpu/gpu_library_calls.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/gpu/gpu_kernel_util.h"
#include "codegen/linalg_thunks.h"
#include "ir/custom_calls/gemm_geometry.h"
#include "ir/custom_calls/library_calls.h"

namespace hloc::codegen::gpu {
namespace {

std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

std::string ShapeJson(const Shape& s) {
  return absl::StrCat("{\"type\":\"", TypeName(s.element_type()), "\",\"dims\":[", absl::StrJoin(s.dimensions(), ","),
                      "],\"minor_to_major\":[", absl::StrJoin(MinorToMajorOf(s), ","), "]}");
}

std::string IntList(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

absl::StatusOr<runtime::Thunk> GemmThunk(const HloInstruction& hlo, const std::vector<KernelArgument>& args) {
  absl::StatusOr<GemmBackendConfig> cfg = ParseGemmBackendConfig(hlo.attrs().backend_config);
  if (!cfg.ok()) return cfg.status();
  const int64_t nops = hlo.operand_count();
  if (nops < 2 || static_cast<int64_t>(args.size()) <= nops)
    return absl::InvalidArgumentError("a GEMM custom-call needs two operands and a result");
  if (EpilogueHasAux(cfg->epilogue))
    return absl::UnimplementedError(absl::StrCat("GEMM epilogue ", std::string(GemmEpilogueName(cfg->epilogue)),
                                                 " (an auxiliary output) is not supported by the GPU runtime"));
  const KernelArgument& a = args[0];
  const KernelArgument& b = args[1];
  const KernelArgument& d = args[nops];  // result leaf 0: D (then the workspace)
  std::optional<GemmPlan> plan = GpuGemmPlan(a.shape, b.shape, d.shape, cfg->dot_dimension_numbers);
  if (!plan)
    return absl::UnimplementedError("a GEMM whose operand layouts cuBLAS cannot read (the library rewrite "
                                    "should have left it a dot)");
  runtime::GemmConfig& g = plan->config;
  g.alpha = cfg->alpha_real;
  g.alpha_imag = cfg->alpha_imag;
  if (g.alpha_imag != 0 && !IsComplex(d.shape.element_type()))
    return absl::InvalidArgumentError("a GEMM of real numbers with an imaginary alpha");
  g.beta = cfg->beta;
  g.epilogue = std::string(GemmEpilogueName(cfg->epilogue));
  if (cfg->selected_algorithm) g.algorithm = *cfg->selected_algorithm;
  const bool bias = EpilogueAddsBias(cfg->epilogue);
  // XLA's (a, b, c, bias) form: the runtime takes one addend (its third argument is C or the
  // bias), so refuse rather than read the bias from C (cublas-gemm-rewriter does not emit it).
  if (bias && cfg->beta != 0)
    return absl::UnimplementedError("a GEMM with both a matrix addend (beta != 0) and a bias epilogue");
  if (bias && plan->swap_operands)
    return absl::UnimplementedError("a bias epilogue on a column-major GEMM result");
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kGemm;
  t.name = hlo.name();
  t.gemm = g;
  t.arguments = {plan->swap_operands ? b.slice : a.slice, plan->swap_operands ? a.slice : b.slice};
  if (bias || cfg->beta != 0) {
    if (nops < 3) return absl::InvalidArgumentError("a GEMM with a bias or beta != 0 needs a third operand");
    t.arguments.push_back(args[2].slice);
  }
  t.arguments.push_back(d.slice);
  t.written.assign(t.arguments.size(), false);
  t.written.back() = true;
  return t;
}

absl::StatusOr<runtime::Thunk> ConvThunk(const HloInstruction& hlo, const std::vector<KernelArgument>& args) {
  const std::string& target = hlo.attrs().custom_call_target;
  if (!hlo.attrs().convolution_dimension_numbers || !hlo.attrs().window)
    return absl::InvalidArgumentError("a cuDNN convolution without dim_labels or window");
  absl::StatusOr<CudnnConvBackendConfig> cfg = ParseCudnnConvBackendConfig(hlo.attrs().backend_config);
  if (!cfg.ok()) return cfg.status();
  const int64_t nops = hlo.operand_count();
  if (static_cast<int64_t>(args.size()) <= nops || nops < 2)
    return absl::InvalidArgumentError("a cuDNN convolution needs two operands and a result");
  const KernelArgument& result = args[nops];
  std::string kind;
  std::vector<std::string> roles;
  const Shape *input = nullptr, *filter = nullptr, *output = nullptr;
  if (target == kCudnnConvForwardCallTarget) {
    kind = "forward";
    roles = {"input", "filter", "output"};
    input = &args[0].shape, filter = &args[1].shape, output = &result.shape;
  } else if (target == kCudnnConvBackwardInputCallTarget) {
    kind = "backward_input";
    roles = {"output", "filter", "input"};
    output = &args[0].shape, filter = &args[1].shape, input = &result.shape;
  } else if (target == kCudnnConvBackwardFilterCallTarget) {
    kind = "backward_filter";
    roles = {"input", "output", "filter"};
    input = &args[0].shape, output = &args[1].shape, filter = &result.shape;
  } else if (target == kCudnnConvBiasActivationForwardCallTarget) {
    kind = "bias_activation_forward";
    if (nops < 3 || nops > 4) return absl::InvalidArgumentError("conv-bias-activation needs 3 or 4 operands");
    roles = {"input", "filter", "bias"};
    if (nops == 4) roles.push_back("side_input");
    roles.push_back("output");
    input = &args[0].shape, filter = &args[1].shape, output = &result.shape;
  } else {
    return absl::UnimplementedError(absl::StrCat("cuDNN call \"", target, "\""));
  }
  const ConvolutionDimensionNumbers& dn = *hlo.attrs().convolution_dimension_numbers;
  std::vector<std::string> window;
  for (const WindowDimension& w : hlo.attrs().window->dimensions)
    window.push_back(absl::StrCat("{\"size\":", w.size, ",\"stride\":", w.stride, ",\"pad_low\":", w.padding_low,
                                  ",\"pad_high\":", w.padding_high, ",\"lhs_dilation\":", w.base_dilation,
                                  ",\"rhs_dilation\":", w.window_dilation,
                                  ",\"reversal\":", w.window_reversal ? "true" : "false", "}"));
  std::vector<std::string> quoted;
  for (const std::string& r : roles) quoted.push_back(absl::StrCat("\"", r, "\""));
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kConvolution;
  t.name = hlo.name();
  t.target = target;
  t.backend_config = absl::StrCat(
      "{\"kind\":\"", kind, "\",\"input\":", ShapeJson(*input), ",\"filter\":", ShapeJson(*filter),
      ",\"output\":", ShapeJson(*output), ",\"input_batch_dim\":", dn.input_batch_dimension,
      ",\"input_feature_dim\":", dn.input_feature_dimension, ",\"input_spatial_dims\":",
      IntList(dn.input_spatial_dimensions), ",\"kernel_input_feature_dim\":", dn.kernel_input_feature_dimension,
      ",\"kernel_output_feature_dim\":", dn.kernel_output_feature_dimension, ",\"kernel_spatial_dims\":",
      IntList(dn.kernel_spatial_dimensions), ",\"output_batch_dim\":", dn.output_batch_dimension,
      ",\"output_feature_dim\":", dn.output_feature_dimension, ",\"output_spatial_dims\":",
      IntList(dn.output_spatial_dimensions), ",\"window\":[", absl::StrJoin(window, ","),
      "],\"feature_group_count\":", hlo.attrs().feature_group_count,
      ",\"batch_group_count\":", hlo.attrs().batch_group_count, ",\"conv_result_scale\":",
      JsonDouble(cfg->conv_result_scale), ",\"side_input_scale\":", JsonDouble(cfg->side_input_scale),
      ",\"activation\":\"", std::string(ConvActivationName(cfg->activation_mode)), "\",\"leakyrelu_alpha\":",
      JsonDouble(cfg->leakyrelu_alpha), ",\"arguments\":[", absl::StrJoin(quoted, ","), "]}");
  for (int64_t i = 0; i < nops; ++i) {
    t.arguments.push_back(args[i].slice);
    t.written.push_back(false);
  }
  t.arguments.push_back(result.slice);
  t.written.push_back(true);
  return t;
}

}  // namespace

std::optional<GemmPlan> GpuGemmPlan(const Shape& lhs, const Shape& rhs, const Shape& out, const DotDimensionNumbers& dn) {
  std::optional<GemmGeometry> geo = GemmGeometryOf(lhs, rhs, out, dn);
  if (!geo) return std::nullopt;
  GemmPlan plan;
  plan.swap_operands = geo->swap_operands;
  runtime::GemmConfig& g = plan.config;
  g.lhs_type = geo->lhs_type;
  g.rhs_type = geo->rhs_type;
  g.output_type = geo->output_type;
  g.compute_type = geo->compute_type;
  g.batch = geo->batch;
  g.m = geo->m;
  g.n = geo->n;
  g.k = geo->k;
  g.lhs_transposed = geo->lhs_transposed;
  g.rhs_transposed = geo->rhs_transposed;
  g.lhs_leading_dim = geo->lhs_leading_dim;
  g.rhs_leading_dim = geo->rhs_leading_dim;
  g.output_leading_dim = geo->output_leading_dim;
  g.lhs_batch_stride = geo->lhs_batch_stride;
  g.rhs_batch_stride = geo->rhs_batch_stride;
  g.output_batch_stride = geo->output_batch_stride;
  return plan;
}

std::optional<GemmPlan> GpuGemmPlanForDot(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || !dot.attrs().dot_dimension_numbers)
    return std::nullopt;
  Shape lhs = dot.operand(0)->shape(), rhs = dot.operand(1)->shape(), out = dot.shape();
  for (Shape* s : {&lhs, &rhs, &out})
    if (s->IsArray() && !s->has_layout()) s->SetDefaultLayout();
  // Products of integers other than s8 x s8 -> s32, and tiny ones, stay kernels.
  std::optional<GemmPlan> plan = GpuGemmPlan(lhs, rhs, out, *dot.attrs().dot_dimension_numbers);
  return plan;
}

absl::StatusOr<std::optional<runtime::Thunk>> LibraryCallThunk(const HloInstruction& hlo,
                                                               const std::vector<KernelArgument>& arguments) {
  if (IsLinalgOp(hlo)) return GpuLinalgThunk(hlo, arguments);
  if (hlo.opcode() != HloOpcode::kCustomCall) return std::optional<runtime::Thunk>();
  const std::string& target = hlo.attrs().custom_call_target;
  // __hloc$small_gemm too: its cuBLAS thunk (GpuKernelEmitter::EmitLibraryCall runs it on the
  // small-GEMM kernel, with this thunk as the fallback).
  if (IsCublasGemmTarget(target) || target == kSmallGemmCallTarget) {
    absl::StatusOr<runtime::Thunk> t = GemmThunk(hlo, arguments);
    if (!t.ok()) return t.status();
    return std::optional<runtime::Thunk>(std::move(*t));
  }
  if (IsCudnnConvTarget(target)) {
    absl::StatusOr<runtime::Thunk> t = ConvThunk(hlo, arguments);
    if (!t.ok()) return t.status();
    return std::optional<runtime::Thunk>(std::move(*t));
  }
  return std::optional<runtime::Thunk>();
}

}  // namespace hloc::codegen::gpu
