// GEMM configs and convolution descriptors for the GPU's library thunks (see
// gpu_library_calls.h). XLA reference: xla/service/gpu/matmul_utils.cc (MatrixLayout,
// GemmConfig::For), xla/service/gpu/gpu_conv_runner.cc (GpuConvConfig).
#include "codegen/gpu/gpu_library_calls.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/gpu/gpu_kernel_util.h"
#include "codegen/linalg_thunks.h"
#include "ir/custom_calls/library_calls.h"

namespace hloc::codegen::gpu {
namespace {

struct MatrixView {
  bool transposed = false;  // stored [cols, rows]
  int64_t rows = 1, cols = 1, batch = 1, leading_dim = 1, batch_stride = 0;
};

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= s.dimensions(d);
  return n;
}

// A batch of matrices whose batch, row and column dimension groups are each physically
// contiguous in their listed order, the batch group most major (XLA's MatrixLayout::For).
// Dimensions of size 1 are placed anywhere.
std::optional<MatrixView> View(const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& rows,
                               const std::vector<int64_t>& cols) {
  std::vector<int64_t> m2m = MinorToMajorOf(s);
  std::vector<int64_t> phys;
  for (auto it = m2m.rbegin(); it != m2m.rend(); ++it)
    if (s.dimensions(*it) != 1) phys.push_back(*it);
  auto filtered = [&](const std::vector<int64_t>& v) {
    std::vector<int64_t> out;
    for (int64_t d : v)
      if (s.dimensions(d) != 1) out.push_back(d);
    return out;
  };
  std::vector<int64_t> fb = filtered(batch), fr = filtered(rows), fc = filtered(cols);
  std::vector<int64_t> normal = fb, transposed = fb;
  normal.insert(normal.end(), fr.begin(), fr.end());
  normal.insert(normal.end(), fc.begin(), fc.end());
  transposed.insert(transposed.end(), fc.begin(), fc.end());
  transposed.insert(transposed.end(), fr.begin(), fr.end());
  MatrixView v;
  v.rows = Product(s, rows);
  v.cols = Product(s, cols);
  v.batch = Product(s, batch);
  if (phys == normal) {
    v.transposed = false;
    v.leading_dim = v.cols;
  } else if (phys == transposed) {
    v.transposed = true;
    v.leading_dim = v.rows;
  } else {
    return std::nullopt;
  }
  v.batch_stride = v.rows * v.cols;
  return v;
}

std::vector<int64_t> Others(int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  return out;
}

bool CublasTypes(PrimitiveType a, PrimitiveType b, PrimitiveType out) {
  using P = PrimitiveType;
  const bool f8a = a == P::F8E4M3FN || a == P::F8E5M2, f8b = b == P::F8E4M3FN || b == P::F8E5M2;
  if (f8a && f8b) return out == P::F32 || out == P::BF16 || out == P::F16 || out == a;
  if (a != b) return false;
  switch (a) {
    case P::F32: return out == P::F32;
    case P::F64: return out == P::F64;
    case P::BF16: return out == P::BF16 || out == P::F32;
    case P::F16: return out == P::F16 || out == P::F32;
    case P::S8: return out == P::S32 || out == P::F32;
    case P::C64: return out == P::C64;    // CUDA_C_32F
    case P::C128: return out == P::C128;  // CUDA_C_64F
    default: return false;
  }
}

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
  if (!lhs.IsArray() || !rhs.IsArray() || !out.IsArray()) return std::nullopt;
  if (!CublasTypes(lhs.element_type(), rhs.element_type(), out.element_type())) return std::nullopt;
  if (dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) return std::nullopt;
  if (dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size()) return std::nullopt;
  const std::vector<int64_t> lhs_free = Others(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_free = Others(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  if (out.rank() != nb + static_cast<int64_t>(lhs_free.size() + rhs_free.size())) return std::nullopt;
  std::vector<int64_t> out_batch, out_m, out_n;
  for (int64_t i = 0; i < nb; ++i) out_batch.push_back(i);
  for (size_t i = 0; i < lhs_free.size(); ++i) out_m.push_back(nb + static_cast<int64_t>(i));
  for (size_t i = 0; i < rhs_free.size(); ++i) out_n.push_back(nb + static_cast<int64_t>(lhs_free.size() + i));
  std::optional<MatrixView> a = View(lhs, dn.lhs_batch_dimensions, lhs_free, dn.lhs_contracting_dimensions);
  std::optional<MatrixView> b = View(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions, rhs_free);
  std::optional<MatrixView> d = View(out, out_batch, out_m, out_n);
  if (!a || !b || !d) return std::nullopt;
  if (a->batch != b->batch || a->batch != d->batch) return std::nullopt;
  if (a->cols != b->rows || a->rows != d->rows || b->cols != d->cols) return std::nullopt;
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i)
    if (lhs.dimensions(dn.lhs_contracting_dimensions[i]) != rhs.dimensions(dn.rhs_contracting_dimensions[i]))
      return std::nullopt;
  GemmPlan plan;
  runtime::GemmConfig& g = plan.config;
  g.lhs_type = TypeName(lhs.element_type());
  g.rhs_type = TypeName(rhs.element_type());
  g.output_type = TypeName(out.element_type());
  const PrimitiveType in = lhs.element_type();
  g.compute_type = in == PrimitiveType::F64 || in == PrimitiveType::C128 ? "f64"
                   : in == PrimitiveType::S8                             ? "s32"
                                                                         : "f32";
  g.batch = a->batch;
  g.k = a->cols;
  if (!d->transposed) {
    g.m = d->rows;
    g.n = d->cols;
    g.lhs_transposed = a->transposed;
    g.rhs_transposed = b->transposed;
    g.lhs_leading_dim = a->leading_dim;
    g.rhs_leading_dim = b->leading_dim;
    g.lhs_batch_stride = a->batch_stride;
    g.rhs_batch_stride = b->batch_stride;
  } else {
    // A column-major result: D^T = op(B)^T op(A)^T with the operands swapped.
    plan.swap_operands = true;
    g.m = d->cols;
    g.n = d->rows;
    g.lhs_transposed = !b->transposed;
    g.rhs_transposed = !a->transposed;
    g.lhs_leading_dim = b->leading_dim;
    g.rhs_leading_dim = a->leading_dim;
    g.lhs_batch_stride = b->batch_stride;
    g.rhs_batch_stride = a->batch_stride;
    std::swap(g.lhs_type, g.rhs_type);
  }
  g.output_leading_dim = d->leading_dim;
  g.output_batch_stride = d->batch_stride;
  if (g.batch == 1) g.lhs_batch_stride = g.rhs_batch_stride = g.output_batch_stride = 0;
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
  if (IsCublasGemmTarget(target)) {
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
