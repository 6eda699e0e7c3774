// The reference evaluator's kernels for XLA:GPU's library calls (library_calls.h): cuBLAS /
// cuBLASLt GEMMs with their epilogues, and cuDNN convolutions (forward, backward input,
// backward filter, conv + bias + activation). Our own passes create these calls
// (src/passes/library/) and XLA's optimized modules carry them, so both must stay checkable
// against the oracle.
//
// Accumulation follows the rest of the evaluator: products summed in double (complex<double>,
// wrapping 64-bit integers for integer results), the epilogue applied to that value, and each
// output element rounded once to its type, as the libraries compute epilogues in their
// (f32 or wider) compute type before the final store.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/library_calls.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

absl::Status Bad(const HloInstruction& inst, const std::string& why) { return evalops::Malformed(inst, why); }

// A literal of `shape` with every element zero: the workspace / scratch outputs.
absl::StatusOr<Literal> Zeros(const Shape& shape) { return Literal::Create(shape); }

// The custom-call's result: `main` (and `aux`) as the first tuple elements, the remaining
// elements (workspace, scratch) zero-filled. A non-tuple result is `main` itself.
absl::StatusOr<Literal> AssembleResult(const Shape& shape, Literal main, std::optional<Literal> aux) {
  if (!shape.IsTuple()) return main;
  std::vector<Literal> elems;
  elems.push_back(std::move(main));
  if (aux) elems.push_back(std::move(*aux));
  for (size_t i = elems.size(); i < shape.tuple_shapes().size(); ++i) {
    auto z = Zeros(shape.tuple_shapes(i));
    if (!z.ok()) return z.status();
    elems.push_back(std::move(*z));
  }
  Literal out = Literal::MakeTuple(std::move(elems));
  out.mutable_shape() = shape;
  return out;
}

// cuBLASLt's GELU epilogue: the tanh approximation.
double GeluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535588;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

double ApplyGemmActivation(GemmEpilogue e, double x) {
  switch (e) {
    case GemmEpilogue::kRelu: case GemmEpilogue::kBiasRelu:
      return std::isnan(x) ? x : std::max(x, 0.0);
    case GemmEpilogue::kGelu: case GemmEpilogue::kGeluAux: case GemmEpilogue::kBiasGelu:
    case GemmEpilogue::kBiasGeluAux:
      return GeluTanh(x);
    case GemmEpilogue::kSilu: case GemmEpilogue::kBiasSilu:
      return x / (1.0 + std::exp(-x));
    default:
      return x;
  }
}

// For each logical dimension of a bias vector, the output dimension it runs along: the bias's
// minor-to-major dimensions align with the output's most minor physical dimensions (the
// condition XLA checks before it fuses a broadcast into the BIAS epilogue).
absl::StatusOr<DimVec> BiasDims(const Shape& out, const Shape& bias) {
  const int64_t r = bias.rank();
  if (r > out.rank()) return absl::InvalidArgumentError("bias has more dimensions than the output");
  auto m2m = [](const Shape& s) {
    if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
      return s.layout().minor_to_major;
    DimVec v;
    for (int64_t i = s.rank() - 1; i >= 0; --i) v.push_back(i);
    return v;
  };
  const DimVec om = m2m(out), bm = m2m(bias);
  DimVec map(r, -1);
  for (int64_t i = 0; i < r; ++i) {
    map[bm[i]] = om[i];
    if (bias.dimensions(bm[i]) != out.dimensions(om[i]))
      return absl::InvalidArgumentError(absl::StrCat("bias dimension ", bm[i], " (", bias.dimensions(bm[i]),
                                                     ") does not match output dimension ", om[i], " (",
                                                     out.dimensions(om[i]), ")"));
  }
  return map;
}

absl::StatusOr<Literal> EvalGemm(const HloInstruction& inst, Operands ops) {
  auto cfg = ParseGemmBackendConfig(inst.attrs().backend_config);
  if (!cfg.ok()) return Bad(inst, std::string(cfg.status().message()));
  const Shape& shape = inst.shape();
  if (shape.IsTuple() && shape.tuple_shapes().empty()) return Bad(inst, "empty result tuple");
  const Shape& out_shape = shape.IsTuple() ? shape.tuple_shapes(0) : shape;
  if (!out_shape.IsArray()) return Bad(inst, "the GEMM result must be an array");
  if (cfg->damax_output) return absl::UnimplementedError("GEMM with damax_output (FP8) is not supported");
  const GemmEpilogue epi = cfg->epilogue;
  const bool has_c = cfg->beta != 0, has_bias = EpilogueAddsBias(epi), has_aux = EpilogueHasAux(epi);
  const size_t expected = 2 + (has_c ? 1 : 0) + (has_bias ? 1 : 0);
  if (ops.size() != expected)
    return Bad(inst, absl::StrCat("expected ", expected, " operands (a, b", has_c ? ", c" : "", has_bias ? ", bias" : "",
                                  ") for beta=", cfg->beta, " and epilogue ", std::string(GemmEpilogueName(epi)), ", got ", ops.size()));
  if (has_aux && (!shape.IsTuple() || shape.tuple_shapes().size() < 2 ||
                  !shape.tuple_shapes(1).EqualIgnoringLayout(out_shape)))
    return Bad(inst, "an *_AUX epilogue needs a second result element shaped like the first");
  for (const Literal* l : ops)
    if (!l->shape().IsArray()) return Bad(inst, "operands must be arrays");
  const PrimitiveType t = out_shape.element_type();
  const bool is_complex = IsComplex(t), is_int = IsIntegral(t) || t == PrimitiveType::PRED;
  if ((is_complex || is_int) && epi != GemmEpilogue::kDefault)
    return Bad(inst, "epilogues apply to real floating-point GEMMs only");

  // alpha * dot(a, b): the product in the wide storage class, then scaled below.
  const PrimitiveType acc_type = is_complex ? PrimitiveType::C128 : is_int ? PrimitiveType::S64 : PrimitiveType::F64;
  HloInstruction dot(HloOpcode::kDot, Shape(acc_type, out_shape.dimensions()), inst.name());
  dot.mutable_attrs().dot_dimension_numbers = cfg->dot_dimension_numbers;
  EvalContext ctx;
  const Literal* ab[] = {ops[0], ops[1]};
  auto acc = EvalDot(dot, ab, ctx);
  if (!acc.ok()) return acc.status();

  const Literal* c = has_c ? ops[2] : nullptr;
  const Literal* bias = has_bias ? ops[has_c ? 3 : 2] : nullptr;
  if (c != nullptr && !c->shape().SameDimensions(out_shape)) return Bad(inst, "the C operand must be shaped like the result");
  DimVec bias_dims;
  DimVec bias_strides;
  if (bias != nullptr) {
    auto m = BiasDims(out_shape, bias->shape());
    if (!m.ok()) return Bad(inst, std::string(m.status().message()));
    bias_dims = std::move(*m);
    bias_strides = RowMajorStrides(bias->shape().dimensions());
  }
  auto out = Literal::Create(out_shape);
  if (!out.ok()) return out.status();
  std::optional<Literal> aux;
  if (has_aux) aux = Literal(shape.tuple_shapes(1));

  const int64_t n = out->element_count();
  if (is_complex) {
    const std::complex<double> alpha(cfg->alpha_real, cfg->alpha_imag), beta(cfg->beta, 0);
    for (int64_t i = 0; i < n; ++i) {
      std::complex<double> v = alpha * acc->GetComplex(i);
      if (c) v += beta * c->GetComplex(i);
      out->SetComplex(i, v);
    }
  } else if (is_int) {
    // cuBLAS integer GEMMs take integral alpha/beta; the sum wraps like the result type.
    const uint64_t alpha = static_cast<uint64_t>(static_cast<int64_t>(cfg->alpha_real));
    const uint64_t beta = static_cast<uint64_t>(static_cast<int64_t>(cfg->beta));
    for (int64_t i = 0; i < n; ++i) {
      uint64_t v = alpha * static_cast<uint64_t>(acc->GetInt(i));
      if (c) v += beta * static_cast<uint64_t>(c->GetInt(i));
      out->SetInt(i, static_cast<int64_t>(v));
    }
  } else {
    const DimVec& dims = out_shape.dimensions();
    DimVec idx(dims.size(), 0);
    for (int64_t i = 0; i < n; ++i, evalops::NextIndex(dims, absl::MakeSpan(idx))) {
      double v = cfg->alpha_real * acc->GetDouble(i);
      if (c) v += cfg->beta * c->GetDouble(i);
      if (bias) {
        int64_t b = 0;
        for (size_t d = 0; d < bias_dims.size(); ++d) b += idx[bias_dims[d]] * bias_strides[d];
        v += bias->GetDouble(b);
      }
      if (aux) aux->SetDouble(i, v);
      out->SetDouble(i, ApplyGemmActivation(epi, v));
    }
  }
  return AssembleResult(shape, std::move(*out), std::move(aux));
}

// ---- cuDNN convolutions -----------------------------------------------------------------------

double ApplyConvActivation(ConvActivation a, double x, double alpha) {
  switch (a) {
    case ConvActivation::kRelu: return std::isnan(x) ? x : std::max(x, 0.0);
    case ConvActivation::kRelu6: return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
    case ConvActivation::kTanh: return std::tanh(x);
    case ConvActivation::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ConvActivation::kElu: return x > 0 ? x : std::expm1(x);
    case ConvActivation::kLeakyRelu: return x > 0 ? x : alpha * x;
    case ConvActivation::kGeluExact: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    default: return x;
  }
}

// Visits every multiply-add term input[i] * kernel[k] -> output[o] of the forward convolution
// that `window`, `d` and `feature_group_count` describe (batch_group_count 1), as linear
// row-major indices. The backward calls accumulate the same terms the other way round.
template <typename Fn>
absl::Status ForEachConvTerm(const DimVec& in, const DimVec& ker, const DimVec& out, const ConvolutionDimensionNumbers& d,
                             const Window& w, int64_t fgc, Fn&& fn) {
  const size_t nsp = d.input_spatial_dimensions.size();
  if (d.kernel_spatial_dimensions.size() != nsp || d.output_spatial_dimensions.size() != nsp || w.dimensions.size() != nsp)
    return absl::InvalidArgumentError("window and dim_labels disagree on the number of spatial dimensions");
  if (in.size() != nsp + 2 || ker.size() != nsp + 2 || out.size() != nsp + 2)
    return absl::InvalidArgumentError(absl::StrCat("input, kernel and output must have rank ", nsp + 2));
  auto in_range = [](int64_t dim, size_t rank) { return dim >= 0 && dim < static_cast<int64_t>(rank); };
  for (int64_t dim : {d.input_batch_dimension, d.input_feature_dimension, d.kernel_input_feature_dimension,
                      d.kernel_output_feature_dimension, d.output_batch_dimension, d.output_feature_dimension})
    if (!in_range(dim, nsp + 2)) return absl::InvalidArgumentError("dim_labels out of range");
  for (size_t s = 0; s < nsp; ++s)
    if (!in_range(d.input_spatial_dimensions[s], nsp + 2) || !in_range(d.kernel_spatial_dimensions[s], nsp + 2) ||
        !in_range(d.output_spatial_dimensions[s], nsp + 2))
      return absl::InvalidArgumentError("dim_labels out of range");
  if (fgc < 1) return absl::InvalidArgumentError("feature_group_count must be positive");
  const int64_t C = in[d.input_feature_dimension], Ck = ker[d.kernel_input_feature_dimension];
  const int64_t O = ker[d.kernel_output_feature_dimension];
  if (Ck * fgc != C || O % fgc != 0 || out[d.output_feature_dimension] != O ||
      out[d.output_batch_dimension] != in[d.input_batch_dimension])
    return absl::InvalidArgumentError("input, kernel and output feature/batch sizes do not fit together");
  DimVec wsizes;
  for (size_t s = 0; s < nsp; ++s) {
    const WindowDimension& wd = w.dimensions[s];
    if (wd.size != ker[d.kernel_spatial_dimensions[s]] || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1)
      return absl::InvalidArgumentError("window does not fit the kernel");
    auto o = evalops::WindowedOutputSize(in[d.input_spatial_dimensions[s]], wd);
    if (!o.ok()) return o.status();
    if (*o != out[d.output_spatial_dimensions[s]])
      return absl::InvalidArgumentError("output spatial size does not match the window");
    wsizes.push_back(wd.size);
  }
  auto total = evalops::CheckedProduct(out);
  auto per = evalops::CheckedProduct(wsizes);
  if (!total.ok() || !per.ok() || static_cast<double>(*total) * static_cast<double>(*per) * Ck > 4e10)
    return absl::ResourceExhaustedError("convolution too large to evaluate");
  const DimVec is = RowMajorStrides(in), ks = RowMajorStrides(ker);
  const int64_t o_per_group = O / fgc;
  DimVec oidx(out.size(), 0), widx(nsp, 0);
  for (int64_t o = 0; o < *total; ++o, evalops::NextIndex(out, absl::MakeSpan(oidx))) {
    const int64_t ob = oidx[d.output_batch_dimension], oz = oidx[d.output_feature_dimension];
    const int64_t g = oz / o_per_group;
    const int64_t in_base = ob * is[d.input_batch_dimension] + g * Ck * is[d.input_feature_dimension];
    const int64_t ker_base = oz * ks[d.kernel_output_feature_dimension];
    if (*per == 0) continue;
    std::fill(widx.begin(), widx.end(), 0);
    do {
      int64_t ioff = in_base, koff = ker_base;
      bool valid = true;
      for (size_t s = 0; s < nsp && valid; ++s) {
        const WindowDimension& wd = w.dimensions[s];
        const int64_t pos = oidx[d.output_spatial_dimensions[s]] * wd.stride - wd.padding_low + widx[s] * wd.window_dilation;
        if (pos < 0 || pos % wd.base_dilation != 0) { valid = false; break; }
        const int64_t i = pos / wd.base_dilation;
        if (i >= in[d.input_spatial_dimensions[s]]) { valid = false; break; }
        ioff += i * is[d.input_spatial_dimensions[s]];
        koff += (wd.window_reversal ? wd.size - 1 - widx[s] : widx[s]) * ks[d.kernel_spatial_dimensions[s]];
      }
      if (valid)
        for (int64_t iz = 0; iz < Ck; ++iz)
          fn(ioff + iz * is[d.input_feature_dimension], koff + iz * ks[d.kernel_input_feature_dimension], o);
    } while (evalops::NextIndex(wsizes, absl::MakeSpan(widx)));
  }
  return absl::OkStatus();
}

void StoreReal(Literal& out, int64_t i, double v) {
  if (IsIntegral(out.element_type())) out.SetInt(i, static_cast<int64_t>(std::llround(v)));
  else out.SetDouble(i, v);
}

absl::StatusOr<Literal> EvalCudnnConv(const HloInstruction& inst, Operands ops) {
  const std::string& target = inst.attrs().custom_call_target;
  auto cfg = ParseCudnnConvBackendConfig(inst.attrs().backend_config);
  if (!cfg.ok()) return Bad(inst, std::string(cfg.status().message()));
  const Shape& shape = inst.shape();
  if (shape.IsTuple() && shape.tuple_shapes().empty()) return Bad(inst, "empty result tuple");
  const Shape& out_shape = shape.IsTuple() ? shape.tuple_shapes(0) : shape;
  if (!out_shape.IsArray()) return Bad(inst, "the convolution result must be an array");
  if (IsComplex(out_shape.element_type())) return absl::UnimplementedError("cuDNN has no complex convolutions");
  if (!inst.attrs().convolution_dimension_numbers) return Bad(inst, "missing dim_labels");
  for (const Literal* l : ops)
    if (!l->shape().IsArray()) return Bad(inst, "operands must be arrays");
  const ConvolutionDimensionNumbers& d = *inst.attrs().convolution_dimension_numbers;
  const Window empty;
  const Window& w = inst.attrs().window ? *inst.attrs().window : empty;
  auto out = Literal::Create(out_shape);
  if (!out.ok()) return out.status();

  const bool fused = target == kCudnnConvBiasActivationForwardCallTarget;
  if (target == kCudnnConvForwardCallTarget || fused) {
    if (ops.size() != (fused ? 3u : 2u) && !(fused && ops.size() == 4))
      return Bad(inst, fused ? "expects (input, filter, bias[, side_input])" : "expects (input, filter)");
    const bool is_int = IsIntegral(out_shape.element_type());
    HloInstruction conv(HloOpcode::kConvolution,
                        Shape(is_int ? PrimitiveType::S64 : PrimitiveType::F64, out_shape.dimensions()), inst.name());
    InstructionAttributes& a = conv.mutable_attrs();
    a.window = inst.attrs().window;
    a.convolution_dimension_numbers = d;
    a.feature_group_count = inst.attrs().feature_group_count;
    a.batch_group_count = inst.attrs().batch_group_count;
    EvalContext ctx;
    const Literal* io[] = {ops[0], ops[1]};
    auto acc = EvalConvolution(conv, io, ctx);
    if (!acc.ok()) return acc.status();
    if (!fused && cfg->conv_result_scale == 1) {
      for (int64_t i = 0; i < out->element_count(); ++i)
        if (is_int) out->SetInt(i, acc->GetInt(i)); else out->SetDouble(i, acc->GetDouble(i));
      return AssembleResult(shape, std::move(*out), std::nullopt);
    }
    const Literal* bias = fused ? ops[2] : nullptr;
    const Literal* side = fused && ops.size() == 4 ? ops[3] : nullptr;
    const int64_t nf = out_shape.dimensions(d.output_feature_dimension);
    if (bias && (bias->shape().rank() != 1 || bias->shape().dimensions(0) != nf))
      return Bad(inst, absl::StrCat("bias must be a vector of the ", nf, " output features"));
    if (side && !side->shape().SameDimensions(out_shape)) return Bad(inst, "side_input must be shaped like the result");
    const DimVec& dims = out_shape.dimensions();
    DimVec idx(dims.size(), 0);
    for (int64_t i = 0; i < out->element_count(); ++i, evalops::NextIndex(dims, absl::MakeSpan(idx))) {
      double v = cfg->conv_result_scale * acc->GetDouble(i);
      if (side) v += cfg->side_input_scale * side->GetDouble(i);
      if (bias) v += bias->GetDouble(idx[d.output_feature_dimension]);
      StoreReal(*out, i, ApplyConvActivation(cfg->activation_mode, v, cfg->leakyrelu_alpha));
    }
    return AssembleResult(shape, std::move(*out), std::nullopt);
  }

  const bool bwd_input = target == kCudnnConvBackwardInputCallTarget;
  if (!bwd_input && target != kCudnnConvBackwardFilterCallTarget) return Bad(inst, "not a cuDNN convolution");
  if (ops.size() != 2) return Bad(inst, bwd_input ? "expects (output_grad, filter)" : "expects (input, output_grad)");
  if (inst.attrs().batch_group_count != 1) return Bad(inst, "backward convolutions take batch_group_count 1");
  // The forward convolution input (*) kernel -> output the call is the gradient of.
  const Literal& in = bwd_input ? *out : *ops[0];
  const Literal& ker = bwd_input ? *ops[1] : *out;
  const Literal& grad = bwd_input ? *ops[0] : *ops[1];
  std::vector<double> acc(out->element_count(), 0.0);
  std::vector<double> g(grad.element_count()), other(bwd_input ? ker.element_count() : in.element_count());
  for (int64_t i = 0; i < grad.element_count(); ++i) g[i] = grad.GetDouble(i);
  const Literal& o_lit = bwd_input ? ker : in;
  for (int64_t i = 0; i < o_lit.element_count(); ++i) other[i] = o_lit.GetDouble(i);
  absl::Status st = ForEachConvTerm(
      in.shape().dimensions(), ker.shape().dimensions(), grad.shape().dimensions(), d, w, inst.attrs().feature_group_count,
      [&](int64_t ii, int64_t ki, int64_t oi) {
        if (bwd_input) acc[ii] += other[ki] * g[oi];
        else acc[ki] += other[ii] * g[oi];
      });
  if (!st.ok()) return Bad(inst, std::string(st.message()));
  for (int64_t i = 0; i < out->element_count(); ++i) StoreReal(*out, i, cfg->conv_result_scale * acc[i]);
  return AssembleResult(shape, std::move(*out), std::nullopt);
}

}  // namespace

absl::StatusOr<Literal> EvalLibraryCall(const HloInstruction& inst, absl::Span<const Literal* const> operands) {
  const std::string& target = inst.attrs().custom_call_target;
  if (IsCublasGemmTarget(target) || target == kSmallGemmCallTarget) return EvalGemm(inst, operands);
  if (IsCudnnConvTarget(target)) return EvalCudnnConv(inst, operands);
  return absl::UnimplementedError(absl::StrCat("unsupported custom-call target \"", target, "\""));
}

}  // namespace hloc
