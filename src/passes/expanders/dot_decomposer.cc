#include "passes/expanders/dot_decomposer.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// XLA's IsCanonical for one operand.
bool IsCanonical(const Shape& shape, const std::vector<int64_t>& contracting, const std::vector<int64_t>& batch) {
  // More than one contracting dimension (or none) is not canonical.
  if (contracting.size() != 1) return false;
  // Nor is more than one non-contracting dimension.
  if (static_cast<int64_t>(batch.size()) + 2 < shape.rank()) return false;
  // Batch dimensions, if any, must be the leading ones in order.
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// XLA's CanonicalizeOperand: transpose to [batch, non-contracting, contracting] (lhs,
// contracting most minor) or [batch, contracting, non-contracting] (rhs), then reshape the
// non-contracting and the contracting dimensions into one each (the non-contracting one left
// out when its size is 1). Returns the reshaped operand; *canonical_contracting receives the
// contracting dimension's new index.
HloInstruction* CanonicalizeOperand(ExpanderBuilder& b, HloInstruction* operand, const std::vector<int64_t>& batch_dims,
                                    const std::vector<int64_t>& contracting_dims, bool contracting_most_minor,
                                    int64_t* canonical_contracting) {
  const Shape& shape = operand->shape();
  std::vector<int64_t> non_contracting_dims;
  int64_t contracting_size = 1, non_contracting_size = 1;
  bool contracting_dynamic = false, non_contracting_dynamic = false;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (Contains(contracting_dims, i)) {
      contracting_size *= shape.dimensions(i);
      contracting_dynamic |= shape.is_dynamic_dimension(i);
    } else if (!Contains(batch_dims, i)) {
      non_contracting_dims.push_back(i);
      non_contracting_size *= shape.dimensions(i);
      non_contracting_dynamic |= shape.is_dynamic_dimension(i);
    }
  }
  std::vector<int64_t> permutation = batch_dims;
  const std::vector<int64_t>& first = contracting_most_minor ? non_contracting_dims : contracting_dims;
  const std::vector<int64_t>& second = contracting_most_minor ? contracting_dims : non_contracting_dims;
  permutation.insert(permutation.end(), first.begin(), first.end());
  permutation.insert(permutation.end(), second.begin(), second.end());
  b.set_metadata(&operand->attrs().metadata);
  HloInstruction* transpose = b.Transpose(operand, permutation);

  // Each operand keeps its own batch dimensions' dynamism: a reshape must not make a static
  // dimension dynamic.
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t d : batch_dims) {
    dims.push_back(shape.dimensions(d));
    dynamic.push_back(shape.is_dynamic_dimension(d));
  }
  const int64_t nb = static_cast<int64_t>(batch_dims.size());
  if (contracting_most_minor) {
    *canonical_contracting = nb + (non_contracting_size != 1 ? 1 : 0);
    if (non_contracting_size != 1) {
      dims.push_back(non_contracting_size);
      dynamic.push_back(non_contracting_dynamic);
    }
    dims.push_back(contracting_size);
    dynamic.push_back(contracting_dynamic);
  } else {
    *canonical_contracting = nb;
    dims.push_back(contracting_size);
    dynamic.push_back(contracting_dynamic);
    if (non_contracting_size != 1) {
      dims.push_back(non_contracting_size);
      dynamic.push_back(non_contracting_dynamic);
    }
  }
  if (transpose != nullptr) b.set_metadata(&transpose->attrs().metadata);
  HloInstruction* reshaped = b.Reshape(transpose, std::move(dims), std::move(dynamic));
  b.set_metadata(nullptr);
  return reshaped;
}

absl::Status CanonicalizeDot(HloInstruction* dot, NameUniquer& names) {
  // A dot written without dimension numbers contracts nothing (an outer product).
  const DotDimensionNumbers dnums = dot->attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
  ExpanderBuilder b(dot->parent(), &names, dot);
  DotDimensionNumbers canonical;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    canonical.lhs_batch_dimensions.push_back(static_cast<int64_t>(i));
    canonical.rhs_batch_dimensions.push_back(static_cast<int64_t>(i));
  }
  int64_t lhs_contracting = 0, rhs_contracting = 0;
  // lhs: [batch, non-contracting product, contracting product].
  HloInstruction* lhs = CanonicalizeOperand(b, dot->operand(0), dnums.lhs_batch_dimensions,
                                            dnums.lhs_contracting_dimensions, /*contracting_most_minor=*/true,
                                            &lhs_contracting);
  // rhs: [batch, contracting product, non-contracting product].
  HloInstruction* rhs = CanonicalizeOperand(b, dot->operand(1), dnums.rhs_batch_dimensions,
                                            dnums.rhs_contracting_dimensions, /*contracting_most_minor=*/false,
                                            &rhs_contracting);
  canonical.lhs_contracting_dimensions = {lhs_contracting};
  canonical.rhs_contracting_dimensions = {rhs_contracting};
  // The new dot is derived from the old one (XLA's SetupDerivedInstruction).
  b.set_metadata(&dot->attrs().metadata);
  HloInstruction* new_dot = b.Dot(lhs, rhs, canonical, dot->attrs().precision_config, dot->shape().element_type());
  b.set_metadata(nullptr);
  if (new_dot != nullptr) new_dot->mutable_attrs().frontend_attributes = dot->attrs().frontend_attributes;
  HloInstruction* replacement = b.ReshapeTo(new_dot, dot->shape());
  if (!b.ok()) {
    absl::Status st = b.status();
    b.Discard();
    return st;
  }
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> replaced = ReplaceInstruction(dot, replacement, options);
  if (!replaced.ok()) return replaced.status();
  if (!*replaced) return absl::InternalError(absl::StrCat("dot_decomposer: could not replace ", dot->name()));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> DotDecomposer::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  std::vector<HloInstruction*> non_canonical;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions()) {
      // Sparse dots carry meta operands; XLA's sparse handling is not modelled here.
      if (inst->opcode() != HloOpcode::kDot || inst->operand_count() != 2) continue;
      const DotDimensionNumbers d = inst->attrs().dot_dimension_numbers.value_or(DotDimensionNumbers{});
      if (!inst->operand(0)->shape().IsArray() || !inst->operand(1)->shape().IsArray() || !inst->shape().IsArray())
        continue;
      if (!IsCanonical(inst->operand(0)->shape(), d.lhs_contracting_dimensions, d.lhs_batch_dimensions) ||
          !IsCanonical(inst->operand(1)->shape(), d.rhs_contracting_dimensions, d.rhs_batch_dimensions))
        non_canonical.push_back(inst.get());
    }
  }
  for (HloInstruction* dot : non_canonical) {
    absl::Status st = CanonicalizeDot(dot, names);
    if (!st.ok()) return st;
  }
  return !non_canonical.empty();
}

}  // namespace hloc
