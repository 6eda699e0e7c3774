// convolution with XLA's semantics (HloEvaluatorTypedVisitor::HandleConvolutionWithLiterals):
// any dim_labels, window strides, low/high padding (negative too), lhs (base) dilation, rhs
// (window) dilation, window reversal, feature_group_count and batch_group_count. Products
// accumulate in double (complex<double>, or wrapping 64-bit integers for integer results) and
// round once to the result type.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

struct ConvPlan {
  int64_t nsp = 0;
  DimVec out_dims;
  int64_t in_batch = 0, in_z = 0, out_z = 0;
  int64_t in_fg_size = 0;   // input features per feature group
  int64_t out_fg_size = 0;  // output features per feature group
  int64_t batch_group_size = 0;
  int64_t depthwise_multiplier = 1;  // output features per batch group
  DimVec window_sizes;
};

absl::StatusOr<ConvPlan> PlanConv(const Shape& lhs, const Shape& rhs, const HloInstruction& inst) {
  const auto& a = inst.attrs();
  if (!a.convolution_dimension_numbers) return absl::InvalidArgumentError("missing dim_labels");
  const ConvolutionDimensionNumbers& d = *a.convolution_dimension_numbers;
  ConvPlan p;
  p.nsp = static_cast<int64_t>(d.input_spatial_dimensions.size());
  if (d.kernel_spatial_dimensions.size() != static_cast<size_t>(p.nsp) ||
      d.output_spatial_dimensions.size() != static_cast<size_t>(p.nsp))
    return absl::InvalidArgumentError("input, kernel and output have different spatial ranks");
  if (lhs.rank() != p.nsp + 2 || rhs.rank() != p.nsp + 2)
    return absl::InvalidArgumentError(absl::StrCat("operands must have rank ", p.nsp + 2));
  const Window empty;
  const Window& w = a.window ? *a.window : empty;
  if (w.dimensions.size() != static_cast<size_t>(p.nsp))
    return absl::InvalidArgumentError(absl::StrCat("window has ", w.dimensions.size(),
                                                   " dimensions, expected ", p.nsp));
  DimVec in = d.input_spatial_dimensions, ker = d.kernel_spatial_dimensions,
         out = d.output_spatial_dimensions;
  in.push_back(d.input_batch_dimension);
  in.push_back(d.input_feature_dimension);
  ker.push_back(d.kernel_input_feature_dimension);
  ker.push_back(d.kernel_output_feature_dimension);
  out.push_back(d.output_batch_dimension);
  out.push_back(d.output_feature_dimension);
  if (auto s = evalops::CheckDimList(in, p.nsp + 2, "input dimension labels"); !s.ok()) return s;
  if (auto s = evalops::CheckDimList(ker, p.nsp + 2, "kernel dimension labels"); !s.ok()) return s;
  if (auto s = evalops::CheckDimList(out, p.nsp + 2, "output dimension labels"); !s.ok()) return s;
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  if (fgc < 1 || bgc < 1) return absl::InvalidArgumentError("group counts must be positive");
  p.in_batch = lhs.dimensions(d.input_batch_dimension);
  p.in_z = lhs.dimensions(d.input_feature_dimension);
  p.out_z = rhs.dimensions(d.kernel_output_feature_dimension);
  const int64_t k_in_z = rhs.dimensions(d.kernel_input_feature_dimension);
  if (p.in_z % fgc != 0 || p.in_z / fgc != k_in_z)
    return absl::InvalidArgumentError(absl::StrCat(
        "input features (", p.in_z, ") / feature_group_count (", fgc,
        ") must equal the kernel's input features (", k_in_z, ")"));
  if (p.out_z % fgc != 0 || p.out_z % bgc != 0)
    return absl::InvalidArgumentError("kernel output features must divide by both group counts");
  if (p.in_batch % bgc != 0)
    return absl::InvalidArgumentError("input batch must divide by batch_group_count");
  p.in_fg_size = k_in_z;
  p.out_fg_size = p.out_z / fgc;
  p.batch_group_size = p.in_batch / bgc;
  p.depthwise_multiplier = bgc > 1 ? p.out_z / bgc : 1;

  p.out_dims.assign(p.nsp + 2, 0);
  p.out_dims[d.output_batch_dimension] = p.in_batch / bgc;
  p.out_dims[d.output_feature_dimension] = p.out_z;
  for (int64_t s = 0; s < p.nsp; ++s) {
    const WindowDimension& wd = w.dimensions[s];
    const int64_t ksize = rhs.dimensions(d.kernel_spatial_dimensions[s]);
    if (wd.size != ksize)
      return absl::InvalidArgumentError(absl::StrCat("window size ", wd.size,
                                                     " differs from the kernel's spatial size ", ksize));
    absl::StatusOr<int64_t> out = evalops::WindowedOutputSize(lhs.dimensions(d.input_spatial_dimensions[s]), wd);
    if (!out.ok()) return out.status();
    p.out_dims[d.output_spatial_dimensions[s]] = *out;
    p.window_sizes.push_back(ksize);
  }
  return p;
}

template <typename T, typename Set>
void Convolve(const ConvPlan& p, const HloInstruction& inst, const Shape& lhs_shape,
              const Shape& rhs_shape, const std::vector<T>& L, const std::vector<T>& R,
              Literal& out, Set&& set) {
  const ConvolutionDimensionNumbers& d = *inst.attrs().convolution_dimension_numbers;
  const Window empty;
  const Window& w = inst.attrs().window ? *inst.attrs().window : empty;
  const DimVec ls = RowMajorStrides(lhs_shape.dimensions());
  const DimVec rs = RowMajorStrides(rhs_shape.dimensions());
  const int64_t nsp = p.nsp;
  // For each spatial dim: for output position o and window position k, the lhs element offset
  // (index * lhs stride) or -1 when the position falls in padding or between dilated elements.
  std::vector<std::vector<int64_t>> lhs_off(nsp), rhs_off(nsp);
  for (int64_t s = 0; s < nsp; ++s) {
    const WindowDimension& wd = w.dimensions[s];
    const int64_t outn = p.out_dims[d.output_spatial_dimensions[s]];
    const int64_t inn = lhs_shape.dimensions(d.input_spatial_dimensions[s]);
    const int64_t k = p.window_sizes[s];
    lhs_off[s].assign(outn * k, -1);
    for (int64_t o = 0; o < outn; ++o)
      for (int64_t j = 0; j < k; ++j) {
        const int64_t pos = o * wd.stride - wd.padding_low + j * wd.window_dilation;
        if (pos % wd.base_dilation != 0) continue;
        const int64_t idx = pos / wd.base_dilation;
        if (idx < 0 || idx >= inn) continue;
        lhs_off[s][o * k + j] = idx * ls[d.input_spatial_dimensions[s]];
      }
    rhs_off[s].resize(k);
    for (int64_t j = 0; j < k; ++j)
      rhs_off[s][j] = (wd.window_reversal ? k - 1 - j : j) * rs[d.kernel_spatial_dimensions[s]];
  }
  const int64_t ls_b = ls[d.input_batch_dimension], ls_z = ls[d.input_feature_dimension];
  const int64_t rs_iz = rs[d.kernel_input_feature_dimension];
  const int64_t rs_oz = rs[d.kernel_output_feature_dimension];
  const DimVec& odims = p.out_dims;
  DimVec oidx(odims.size(), 0);
  const int64_t total = out.element_count();
  DimVec widx(nsp, 0);
  for (int64_t linear = 0; linear < total; ++linear, evalops::NextIndex(odims, absl::MakeSpan(oidx))) {
    const int64_t ob = oidx[d.output_batch_dimension];
    const int64_t oz = oidx[d.output_feature_dimension];
    const int64_t fgi = oz / p.out_fg_size;
    const int64_t bgi = oz / p.depthwise_multiplier;
    const int64_t lhs_base = ob * ls_b + ((bgi * p.batch_group_size) % p.in_batch) * ls_b +
                             fgi * p.in_fg_size * ls_z;
    const int64_t rhs_base = oz * rs_oz;
    T acc{};
    bool any_window = true;
    for (int64_t s = 0; s < nsp; ++s)
      if (p.window_sizes[s] == 0) any_window = false;
    std::fill(widx.begin(), widx.end(), 0);
    while (any_window) {
      int64_t loff = lhs_base, roff = rhs_base;
      bool valid = true;
      for (int64_t s = 0; s < nsp; ++s) {
        const int64_t o = oidx[d.output_spatial_dimensions[s]];
        const int64_t off = lhs_off[s][o * p.window_sizes[s] + widx[s]];
        if (off < 0) { valid = false; break; }
        loff += off;
        roff += rhs_off[s][widx[s]];
      }
      if (valid)
        for (int64_t iz = 0; iz < p.in_fg_size; ++iz)
          acc = acc + L[loff + iz * ls_z] * R[roff + iz * rs_iz];
      if (!evalops::NextIndex(p.window_sizes, absl::MakeSpan(widx))) break;
    }
    set(out, linear, acc);
  }
}

}  // namespace

absl::StatusOr<Literal> EvalConvolution(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2) return evalops::Malformed(inst, "expected 2 operands");
  for (int i = 0; i < 2; ++i)
    if (auto s = evalops::CheckArrayLiteral(*ops[i], absl::StrCat("operand ", i)); !s.ok())
      return evalops::Malformed(inst, std::string(s.message()));
  const auto& prec = inst.attrs().precision_config.operand_precision;
  if (std::count(prec.begin(), prec.end(), Precision::kPackedNibble) > 0)
    return evalops::Malformed(inst, "PACKED_NIBBLE operand precision is not supported");
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  absl::StatusOr<ConvPlan> plan = PlanConv(lhs.shape(), rhs.shape(), inst);
  if (!plan.ok()) return evalops::Malformed(inst, std::string(plan.status().message()));
  if (auto s = evalops::CheckResultDims(inst.shape(), plan->out_dims, "convolution"); !s.ok())
    return evalops::Malformed(inst, std::string(s.message()));
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_count() == 0) return out;
  // Per-dim lookup tables hold out x window entries; bound them like reduce-window does.
  for (int64_t s = 0; s < plan->nsp; ++s) {
    const int64_t o = plan->out_dims[inst.attrs().convolution_dimension_numbers->output_spatial_dimensions[s]];
    absl::StatusOr<int64_t> cells = evalops::CheckedProduct({o, plan->window_sizes[s]});
    if (!cells.ok() || *cells > (int64_t{1} << 27))
      return evalops::Malformed(inst, "window too large to evaluate");
  }
  evalops::WithStorageClass(inst.shape().element_type(), lhs, rhs, [&](auto l, auto r, auto set) {
    Convolve(*plan, inst, lhs.shape(), rhs.shape(), l, r, *out, set);
  });
  return out;
}

}  // namespace hloc
