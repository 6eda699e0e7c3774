#include "passes/library/cublas_pad_for_gemms.h"

#include "absl/strings/str_cat.h"
#include "passes/library/library_util.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;
using library::DimVec;

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// XLA's CheckCanonical: every dimension but the last two is a batch dimension, in order.
bool IsCanonical(const HloInstruction* dot) {
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  if (nb + 2 != dot->operand(0)->shape().rank() || static_cast<int64_t>(dn.rhs_batch_dimensions.size()) + 2 !=
                                                       dot->operand(1)->shape().rank())
    return false;
  for (int64_t i = 0; i < nb; ++i)
    if (dn.lhs_batch_dimensions[i] != i || dn.rhs_batch_dimensions[i] != i) return false;
  return dot->shape().rank() == nb + 2;
}

// A dot cuBLAS will run (cublas-gemm-rewriter rewrites it): a matrix-matrix product that is
// not small enough for the classical emitters.
bool IsCublasMatMul(const HloInstruction* dot, int64_t threshold) {
  if (dot->opcode() != HloOpcode::kDot || dot->operand_count() != 2 || !dot->attrs().dot_dimension_numbers) return false;
  for (const HloInstruction* x : {static_cast<const HloInstruction*>(dot->operand(0)), static_cast<const HloInstruction*>(dot->operand(1)), static_cast<const HloInstruction*>(dot)})
    if (!x->shape().IsArray() || !x->shape().is_static() || x->shape().num_elements() == 0) return false;
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  if (dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1) return false;
  const PrimitiveType out = dot->shape().element_type();
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  int64_t k = ls.dimensions(dn.lhs_contracting_dimensions[0]), m = 1, n = 1;
  for (int64_t d : library::OtherDims(ls.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions)) m *= ls.dimensions(d);
  for (int64_t d : library::OtherDims(rs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions)) n *= rs.dimensions(d);
  const bool classical = out == PrimitiveType::F16 || out == PrimitiveType::F32 || out == PrimitiveType::BF16;
  return !(classical && static_cast<double>(m + n) * k < static_cast<double>(threshold));
}

Shape PadMatrixDims(Shape s, int64_t multiple) {
  const int64_t r = s.rank();
  for (int64_t d = r - 2; d < r; ++d) s.mutable_dimensions()[d] = RoundUp(s.dimensions(d), multiple);
  return s;
}

HloInstruction* PadTo(ExpanderBuilder& b, HloInstruction* x, HloInstruction* zero, const Shape& target) {
  if (x == nullptr || zero == nullptr) return nullptr;
  auto pad = std::make_unique<HloInstruction>(HloOpcode::kPad, target, "pad");
  PaddingConfig pc;
  for (int64_t d = 0; d < target.rank(); ++d) pc.dimensions.push_back({0, target.dimensions(d) - x->shape().dimensions(d), 0});
  pad->mutable_attrs().padding_config = pc;
  pad->AppendOperand(x);
  pad->AppendOperand(zero);
  return b.Add(std::move(pad));
}

}  // namespace

absl::StatusOr<bool> CublasPadForGemms::Run(HloModule& module, PassContext& context) {
  if (context.profile == nullptr || !library::TargetsGpu(context) || !library::HasTensorCores(context) ||
      !library::ComputeCapabilityAtLeast(context, min_major_, min_minor_))
    return false;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> dots;
    for (const auto& i : comp->instructions())
      if (IsCublasMatMul(i.get(), size_threshold_) && i->operand(0)->shape().element_type() == datatype_ &&
          i->operand(1)->shape().element_type() == datatype_ && IsCanonical(i.get()))
        dots.push_back(i.get());
    for (HloInstruction* dot : dots) {
      HloInstruction* lhs = dot->operand(0);
      HloInstruction* rhs = dot->operand(1);
      const Shape new_l = PadMatrixDims(lhs->shape(), multiple_), new_r = PadMatrixDims(rhs->shape(), multiple_);
      if (new_l == lhs->shape() && new_r == rhs->shape()) continue;
      const Shape new_out = PadMatrixDims(dot->shape(), multiple_);
      ExpanderBuilder b(comp, &names, dot);
      b.set_metadata(&dot->attrs().metadata);
      HloInstruction* zero = b.ScalarConstant(datatype_, 0);
      HloInstruction* lpad = new_l == lhs->shape() ? lhs : PadTo(b, lhs, zero, new_l);
      HloInstruction* rpad = new_r == rhs->shape() ? rhs : PadTo(b, rhs, zero, new_r);
      HloInstruction* ops[] = {lpad, rpad};
      HloInstruction* new_dot = nullptr;
      if (lpad != nullptr && rpad != nullptr) {
        std::unique_ptr<HloInstruction> clone = CloneInstruction(*dot, ops);
        clone->mutable_shape() = new_out;
        new_dot = b.Add(std::move(clone));
      }
      HloInstruction* slice = nullptr;
      if (new_dot != nullptr) {
        std::vector<int64_t> starts(dot->shape().rank(), 0);
        slice = b.Slice(new_dot, starts, dot->shape().dimensions());
        if (slice != nullptr) slice->mutable_shape() = dot->shape();  // keep the dot's layout
      }
      if (!b.ok()) {
        absl::Status st = b.status();
        b.Discard();
        return st;
      }
      ReplaceOptions options;
      options.relay_control_dependency = true;
      absl::StatusOr<bool> ok = ReplaceInstruction(dot, slice, options);
      if (!ok.ok()) return ok.status();
      if (!*ok) return absl::InternalError(absl::StrCat("cublas-pad-for-gemms: could not replace ", dot->name()));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
