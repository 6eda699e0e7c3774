#include "passes/layout/layout_constraints.h"

// ComputeKind switches over every LayoutKind with no default: a kind without its case is an error.
#pragma GCC diagnostic error "-Wswitch"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "engine/profile.h"
#include "engine/requirements.h"
#include "ir/custom_calls/library_calls.h"
#include "passes/layout/layout_util.h"

namespace hloc::layout {

namespace {

// Logical dimensions of a dot operand (0: lhs, 1: rhs) by role.
void DotDims(const HloInstruction& dot, int operand, std::vector<int64_t>& batch, std::vector<int64_t>& contracting) {
  const DotDimensionNumbers& d = *dot.attrs().dot_dimension_numbers;
  batch = operand == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  contracting = operand == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
}

// Major-to-minor: `major`, then the dimensions in none of the lists in increasing order, then `minor`.
Layout Arrange(int64_t rank, const std::vector<int64_t>& major, const std::vector<int64_t>& minor) {
  std::vector<int64_t> order = major;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(major.begin(), major.end(), d) == major.end() && std::find(minor.begin(), minor.end(), d) == minor.end())
      order.push_back(d);
  order.insert(order.end(), minor.begin(), minor.end());
  return LayoutFromMajorToMinor(order);
}

bool IsInt8(PrimitiveType t) { return t == PrimitiveType::S8 || t == PrimitiveType::U8; }

// ---- cuDNN convolution custom-calls (conv-rewriter's), XLA's AddBackendConstraintsToDnnConvCustomCall.
// Which of the convolution's tensors a slot of the call holds.
enum class ConvRole { kNone, kInput, kFilter, kOutput };

ConvRole CudnnConvRole(const HloInstruction& call, int slot) {
  const std::string& t = call.attrs().custom_call_target;
  const bool result = slot == LayoutConstraintInfo::kResult;
  if (t == kCudnnConvForwardCallTarget || t == kCudnnConvBiasActivationForwardCallTarget) {
    // (input, filter[, bias[, side input]]) -> output; the side input has the output's layout.
    if (result || slot == 3) return ConvRole::kOutput;
    return slot == 0 ? ConvRole::kInput : slot == 1 ? ConvRole::kFilter : ConvRole::kNone;
  }
  if (t == kCudnnConvBackwardInputCallTarget)  // (output gradient, filter) -> input gradient
    return result ? ConvRole::kInput : slot == 0 ? ConvRole::kOutput : slot == 1 ? ConvRole::kFilter : ConvRole::kNone;
  if (t == kCudnnConvBackwardFilterCallTarget)  // (input, output gradient) -> filter gradient
    return result ? ConvRole::kFilter : slot == 0 ? ConvRole::kInput : slot == 1 ? ConvRole::kOutput : ConvRole::kNone;
  return ConvRole::kNone;
}

// XLA's HeuristicLayoutAssignment, one kind per branch. Every kind looks at the call as a whole
// (operand 0's element type, the number of spatial dimensions), never at the slot, so the three
// tensors of one call always land on the same format.
std::optional<bool> CudnnConvWantsNhwc(LayoutKind kind, const HloInstruction& call) {
  const PrimitiveType t = call.operand(0)->shape().element_type();
  const size_t spatial = call.attrs().convolution_dimension_numbers->input_spatial_dimensions.size();
  if (kind == LayoutKind::kCudnnConvNchw) return false;
  // Integer and FP8 convolutions only exist in NHWC (NCHW_VECT_C is not modelled).
  if (kind == LayoutKind::kCudnnConvIntegerNhwc)
    return IsIntegral(t) || IsF8OrF4(t) ? std::optional<bool>(true) : std::nullopt;
  // Hopper on: NHWC, except f64 (cuDNN has no NHWC f64) and 3-D convolutions.
  if (kind == LayoutKind::kCudnnConvHopperNhwc)
    return t != PrimitiveType::F64 && spatial <= 2 ? std::optional<bool>(true) : std::nullopt;
  // Volta..Ada tensor cores: f16/bf16 2-D convolutions.
  if (kind == LayoutKind::kCudnnConvHalfNhwc)
    return (t == PrimitiveType::F16 || t == PrimitiveType::BF16) && spatial == 2 ? std::optional<bool>(true) : std::nullopt;
  return std::nullopt;
}

bool IsCudnnConvKind(LayoutKind kind) {
  switch (kind) {
    case LayoutKind::kCudnnConvIntegerNhwc:
    case LayoutKind::kCudnnConvHopperNhwc:
    case LayoutKind::kCudnnConvHalfNhwc:
    case LayoutKind::kCudnnConvNchw:
      return true;
    case LayoutKind::kDefaultLayout:
    case LayoutKind::kContractingMinor:
    case LayoutKind::kInt8ContractingMinor:
    case LayoutKind::kBatchMajor:
    case LayoutKind::kChannelsLast:
    case LayoutKind::kChannelsFirst:
    case LayoutKind::kSameAsOperand0:
    case LayoutKind::kSameAsResult:
    case LayoutKind::kOperandLayoutConstraints:
    case LayoutKind::kAsWritten:
      return false;
  }
  return false;
}

// The layout a cuDNN kind gives slot `slot` of `call` (nullopt: not a cuDNN convolution slot, or
// the kind's branch does not apply). A tuple result means its element 0, the convolution's result.
std::optional<Layout> CudnnConvKind(LayoutKind kind, const HloInstruction& call, int slot) {
  if (call.opcode() != HloOpcode::kCustomCall || !call.attrs().convolution_dimension_numbers ||
      call.operand_count() < 2 || !call.operand(0)->shape().IsArray())
    return std::nullopt;
  const ConvRole role = CudnnConvRole(call, slot);
  if (role == ConvRole::kNone) return std::nullopt;
  const Shape* shape = &call.shape();
  if (slot != LayoutConstraintInfo::kResult) shape = &call.operand(slot)->shape();
  else if (shape->IsTuple()) shape = shape->tuple_shapes().empty() ? nullptr : &shape->tuple_shapes(0);
  if (shape == nullptr || !shape->IsArray()) return std::nullopt;
  std::optional<bool> nhwc = CudnnConvWantsNhwc(kind, call);
  if (!nhwc) return std::nullopt;
  const ConvolutionDimensionNumbers& c = *call.attrs().convolution_dimension_numbers;
  int64_t major, feature;  // batch/feature (activations) or output/input feature (filter)
  std::vector<int64_t> spatial;
  if (role == ConvRole::kInput) {
    major = c.input_batch_dimension, feature = c.input_feature_dimension, spatial = c.input_spatial_dimensions;
  } else if (role == ConvRole::kOutput) {
    major = c.output_batch_dimension, feature = c.output_feature_dimension, spatial = c.output_spatial_dimensions;
  } else {
    major = c.kernel_output_feature_dimension, feature = c.kernel_input_feature_dimension;
    spatial = c.kernel_spatial_dimensions;
  }
  std::vector<int64_t> order{major};
  if (!*nhwc) order.push_back(feature);
  order.insert(order.end(), spatial.begin(), spatial.end());
  if (*nhwc) order.push_back(feature);
  if (static_cast<int64_t>(order.size()) != shape->rank()) return std::nullopt;
  std::vector<int64_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < shape->rank(); ++i)
    if (sorted[i] != i) return std::nullopt;  // malformed dimension numbers: leave it to the verifier
  return LayoutFromMajorToMinor(order);
}

}  // namespace

std::vector<std::string> LayoutConstraintNames() {
  std::vector<std::string> names;
  for (const LayoutConstraintInfo* row : GeneratedTables::Global().layout) names.push_back(row->name);
  return names;
}

ConstraintSet ConstraintSet::Build(const HardwareProfile* profile, const std::vector<std::string>& enabled,
                                   const std::vector<std::string>& disabled) {
  ConstraintSet set;
  const auto& all = GeneratedTables::Global().layout;
  std::vector<const char*> family;
  for (const LayoutConstraintInfo* row : all) family.push_back(row->name);
  const RecordSwitch on(enabled, disabled, family);
  for (const LayoutConstraintInfo* row : all)
    if (on.On(row->name) && RequirementsHold(row->requirements, row->num_requires, profile)) set.rows_.push_back(row);
  std::stable_sort(set.rows_.begin(), set.rows_.end(), [](const LayoutConstraintInfo* a, const LayoutConstraintInfo* b) {
    if (a->required != b->required) return a->required;
    return a->priority > b->priority;
  });
  return set;
}

std::vector<const LayoutConstraintInfo*> ConstraintSet::RowsFor(HloOpcode op, int slot) const {
  std::vector<const LayoutConstraintInfo*> out;
  for (const LayoutConstraintInfo* row : rows_) {
    if (row->opcode != static_cast<int>(op)) continue;
    if (row->operand == slot || (slot >= 0 && row->operand == LayoutConstraintInfo::kEveryOperand)) out.push_back(row);
  }
  return out;
}

absl::StatusOr<std::optional<Layout>> ComputeKind(LayoutKind kind, const HloInstruction& inst, int slot,
                                                  const Shape* current, const Shape* operand0, const Shape* result) {
  const bool is_result = slot == LayoutConstraintInfo::kResult;
  // cuDNN calls return (result, scratch): their kinds lay out the tuple's element 0.
  if (IsCudnnConvKind(kind)) return CudnnConvKind(kind, inst, slot);
  const Shape& shape = is_result ? inst.shape() : inst.operand(slot)->shape();
  if (!shape.IsArray()) return std::optional<Layout>();
  const int64_t rank = shape.rank();
  switch (kind) {
    case LayoutKind::kCudnnConvIntegerNhwc:
    case LayoutKind::kCudnnConvHopperNhwc:
    case LayoutKind::kCudnnConvHalfNhwc:
    case LayoutKind::kCudnnConvNchw:
      break;  // computed above
    case LayoutKind::kDefaultLayout:
      return std::optional<Layout>(DefaultLayout(rank));
    case LayoutKind::kContractingMinor:
    case LayoutKind::kInt8ContractingMinor: {
      if (inst.opcode() != HloOpcode::kDot || is_result || slot > 1 || !inst.attrs().dot_dimension_numbers)
        return std::optional<Layout>();
      if (kind == LayoutKind::kInt8ContractingMinor &&
          !(IsInt8(inst.operand(0)->shape().element_type()) && IsInt8(inst.operand(1)->shape().element_type())))
        return std::optional<Layout>();
      std::vector<int64_t> batch, contracting;
      DotDims(inst, slot, batch, contracting);
      return std::optional<Layout>(Arrange(rank, batch, contracting));
    }
    case LayoutKind::kBatchMajor: {
      if (inst.opcode() != HloOpcode::kDot || !inst.attrs().dot_dimension_numbers || (!is_result && slot > 1))
        return std::optional<Layout>();
      if (current == nullptr) return std::optional<Layout>();  // a check of the layout it gets
      std::vector<int64_t> batch, contracting;
      if (is_result) {
        for (size_t i = 0; i < inst.attrs().dot_dimension_numbers->lhs_batch_dimensions.size(); ++i)
          batch.push_back(static_cast<int64_t>(i));
      } else {
        DotDims(inst, slot, batch, contracting);
      }
      std::vector<int64_t> m2m = MajorToMinor(*current);
      std::set<int64_t> leading(m2m.begin(), m2m.begin() + std::min<size_t>(batch.size(), m2m.size()));
      if (leading == std::set<int64_t>(batch.begin(), batch.end()))
        return std::optional<Layout>(LayoutFromMajorToMinor(m2m));
      return std::optional<Layout>(Arrange(rank, batch, {}));
    }
    case LayoutKind::kChannelsLast:
    case LayoutKind::kChannelsFirst: {
      if (inst.opcode() != HloOpcode::kConvolution || !inst.attrs().convolution_dimension_numbers || slot > 1)
        return std::optional<Layout>();
      const ConvolutionDimensionNumbers& c = *inst.attrs().convolution_dimension_numbers;
      int64_t major, feature;
      std::vector<int64_t> spatial;
      if (is_result) {
        major = c.output_batch_dimension, feature = c.output_feature_dimension, spatial = c.output_spatial_dimensions;
      } else if (slot == 0) {
        major = c.input_batch_dimension, feature = c.input_feature_dimension, spatial = c.input_spatial_dimensions;
      } else {  // the filter: output feature major, input feature as the "channel"
        major = c.kernel_output_feature_dimension, feature = c.kernel_input_feature_dimension;
        spatial = c.kernel_spatial_dimensions;
      }
      std::vector<int64_t> order{major};
      if (kind == LayoutKind::kChannelsFirst) order.push_back(feature);
      order.insert(order.end(), spatial.begin(), spatial.end());
      if (kind == LayoutKind::kChannelsLast) order.push_back(feature);
      if (static_cast<int64_t>(order.size()) != rank) return std::optional<Layout>();
      return std::optional<Layout>(LayoutFromMajorToMinor(order));
    }
    case LayoutKind::kSameAsOperand0:
      if (is_result || slot == 0 || operand0 == nullptr || !operand0->IsArray() || operand0->rank() != rank)
        return std::optional<Layout>();
      return std::optional<Layout>(LayoutFromMajorToMinor(MajorToMinor(*operand0)));
    case LayoutKind::kSameAsResult:
      if (is_result || result == nullptr || !result->IsArray() || result->rank() != rank) return std::optional<Layout>();
      return std::optional<Layout>(LayoutFromMajorToMinor(MajorToMinor(*result)));
    case LayoutKind::kOperandLayoutConstraints: {
      const auto& olc = inst.attrs().operand_layout_constraints;
      if (is_result || !olc || slot >= static_cast<int>(olc->size())) return std::optional<Layout>();
      const Shape& c = (*olc)[slot];
      if (!c.IsArray() || c.rank() != rank) return std::optional<Layout>();
      return std::optional<Layout>(LayoutFromMajorToMinor(MajorToMinor(c)));
    }
    case LayoutKind::kAsWritten:
      // Only layout-constrained custom calls keep what is written (XLA: the others are free).
      if (!is_result || !inst.attrs().operand_layout_constraints) return std::optional<Layout>();
      return std::optional<Layout>(LayoutFromMajorToMinor(MajorToMinor(inst.shape())));
  }
  // The cuDNN kinds returned above; an out-of-range value (not a generated row's) ends here.
  return absl::InternalError(absl::StrCat("layout kind ", static_cast<int>(kind), " has no computation"));
}

absl::StatusOr<std::optional<SlotDecision>> Decide(const ConstraintSet& rows, const HloInstruction& inst, int slot,
                                                   const Shape* current, const Shape* operand0, const Shape* result) {
  for (const LayoutConstraintInfo* row : rows.RowsFor(inst.opcode(), slot)) {
    absl::StatusOr<std::optional<Layout>> l = ComputeKind(static_cast<LayoutKind>(row->kind), inst, slot, current, operand0, result);
    if (!l.ok())
      return absl::Status(l.status().code(), absl::StrCat(row->file, ":", row->line, ": ", row->name, ": ",
                                                          l.status().message()));
    if (l->has_value()) return std::optional<SlotDecision>(SlotDecision{row, **l});
  }
  return std::optional<SlotDecision>();
}

}  // namespace hloc::layout
