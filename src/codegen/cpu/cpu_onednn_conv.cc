// __onednn$convolution custom calls (onednn-convolution-rewriter, issue 16 part 4) as kConvolution
// thunks: the arguments are {lhs, rhs, result}; backend_config is the JSON the runtime
// (runtime/cpu/onednn_conv.h) builds its oneDNN primitive from: each operand's logical dimensions
// and minor_to_major, the dimension numbers, the window and the feature group count.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cpu/cpu_kernel_emitter.h"
#include "passes/library/onednn_convolution_rewriter.h"

namespace hloc::codegen::cpu {
namespace {

std::string Ints(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ","), "]"); }

std::vector<int64_t> MinorToMajorOf(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

std::string ShapeJson(const Shape& s) {
  return absl::StrCat("{\"dims\":", Ints(s.dimensions()), ",\"minor_to_major\":", Ints(MinorToMajorOf(s)), "}");
}

}  // namespace

absl::StatusOr<std::optional<runtime::Thunk>> OneDnnConvThunk(const HloInstruction& hlo,
                                                              const std::vector<KernelArgument>& arguments) {
  if (hlo.opcode() != HloOpcode::kCustomCall || hlo.attrs().custom_call_target != kOneDnnConvolutionTarget)
    return std::optional<runtime::Thunk>();
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("%", hlo.name(), " (", kOneDnnConvolutionTarget, "): ", why));
  };
  if (arguments.size() != 3 || arguments[0].is_output || arguments[1].is_output || !arguments[2].is_output)
    return bad("expects {lhs, rhs, result}");
  if (!hlo.attrs().convolution_dimension_numbers || !hlo.attrs().window) return bad("has no window or dim_labels");
  for (const KernelArgument& a : arguments)
    if (!a.shape.IsArray() || a.shape.element_type() != PrimitiveType::F32) return bad("expects f32 arrays");
  const ConvolutionDimensionNumbers& dn = *hlo.attrs().convolution_dimension_numbers;
  std::vector<int64_t> strides, pad_lo, pad_hi, dilation, lhs_dilation;
  for (const WindowDimension& d : hlo.attrs().window->dimensions) {
    if (d.window_reversal) return bad("window reversal is not supported");
    strides.push_back(d.stride);
    pad_lo.push_back(d.padding_low);
    pad_hi.push_back(d.padding_high);
    dilation.push_back(d.window_dilation);
    lhs_dilation.push_back(d.base_dilation);
  }
  runtime::Thunk t;
  t.kind = runtime::ThunkKind::kConvolution;
  t.name = hlo.name();
  t.target = kOneDnnConvolutionTarget;
  for (const KernelArgument& a : arguments) {
    t.arguments.push_back(a.slice);
    t.written.push_back(a.is_output);
  }
  t.backend_config = absl::StrCat(
      "{\"type\":\"f32\",\"lhs\":", ShapeJson(arguments[0].shape), ",\"rhs\":", ShapeJson(arguments[1].shape),
      ",\"out\":", ShapeJson(arguments[2].shape), ",\"input_batch\":", dn.input_batch_dimension,
      ",\"input_feature\":", dn.input_feature_dimension, ",\"input_spatial\":", Ints(dn.input_spatial_dimensions),
      ",\"kernel_input_feature\":", dn.kernel_input_feature_dimension,
      ",\"kernel_output_feature\":", dn.kernel_output_feature_dimension,
      ",\"kernel_spatial\":", Ints(dn.kernel_spatial_dimensions), ",\"output_batch\":", dn.output_batch_dimension,
      ",\"output_feature\":", dn.output_feature_dimension, ",\"output_spatial\":", Ints(dn.output_spatial_dimensions),
      ",\"strides\":", Ints(strides), ",\"pad_lo\":", Ints(pad_lo), ",\"pad_hi\":", Ints(pad_hi),
      ",\"dilation\":", Ints(dilation), ",\"lhs_dilation\":", Ints(lhs_dilation), ",\"groups\":", hlo.attrs().feature_group_count, "}");
  return std::optional<runtime::Thunk>(std::move(t));
}

}  // namespace hloc::codegen::cpu
