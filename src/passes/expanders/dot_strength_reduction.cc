#include "passes/expanders/dot_strength_reduction.h"

#include <algorithm>

#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Whether operand `side` (0 lhs, 1 rhs) has only batch and contracting dimensions.
bool IsVectorSide(const HloInstruction& dot, int side) {
  const DotDimensionNumbers& d = *dot.attrs().dot_dimension_numbers;
  const auto& batch = side == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const auto& contracting = side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  return static_cast<int64_t>(batch.size() + contracting.size()) == dot.operand(side)->shape().rank();
}

bool Matches(const HloInstruction& dot) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || !dot.attrs().dot_dimension_numbers) return false;
  if (!dot.shape().IsArray() || IsComplex(dot.shape().element_type())) return false;
  for (const HloInstruction* op : dot.operands())
    if (!op->shape().IsArray() || !op->shape().is_static() || IsComplex(op->shape().element_type())) return false;
  if (!IsFloatingPoint(dot.shape().element_type())) return false;
  const DotDimensionNumbers& d = *dot.attrs().dot_dimension_numbers;
  if (d.lhs_contracting_dimensions.empty()) return false;  // an outer product: algsimp's DotToMultiply
  return IsVectorSide(dot, 0) || IsVectorSide(dot, 1);
}

absl::StatusOr<HloInstruction*> Reduce(HloInstruction* dot, NameUniquer& names, NameUniquer& computations) {
  const DotDimensionNumbers& d = *dot->attrs().dot_dimension_numbers;
  // `m` is the operand with free dimensions (or the lhs when both are vectors), `v` the vector.
  const int vs = IsVectorSide(*dot, 1) ? 1 : 0;
  const int ms = 1 - vs;
  HloInstruction* m = dot->operand(ms);
  HloInstruction* v = dot->operand(vs);
  const auto& m_batch = ms == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const auto& m_contract = ms == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  const auto& v_batch = vs == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const auto& v_contract = vs == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  const PrimitiveType t = dot->shape().element_type();
  ExpanderBuilder b(dot->parent(), &names, dot);
  b.set_metadata(&dot->attrs().metadata);
  // Products in the result type (a bf16 x bf16 -> f32 dot accumulates in f32).
  if (m->shape().element_type() != t) m = b.Convert(m, t);
  if (v->shape().element_type() != t) v = b.Convert(v, t);
  // v's dimension j lands on m's dimension target[j]; transpose v so those ascend.
  std::vector<int64_t> target(v->shape().rank());
  for (size_t i = 0; i < v_batch.size(); ++i) target[v_batch[i]] = m_batch[i];
  for (size_t i = 0; i < v_contract.size(); ++i) target[v_contract[i]] = m_contract[i];
  std::vector<int64_t> order(target.size());
  for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int64_t>(j);
  std::sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return target[x] < target[y]; });
  std::vector<int64_t> dims;
  for (int64_t j : order) dims.push_back(target[j]);
  if (!std::is_sorted(order.begin(), order.end())) v = b.Transpose(v, order);
  if (v == nullptr || m == nullptr) return b.status();
  HloInstruction* product = b.Mul(m, b.Broadcast(v, m->shape(), dims));
  HloComputation* add =
      expanders::MakeScalarAddComputation(*dot->parent()->parent(), computations, names, t, "add");
  HloInstruction* sum = b.Reduce(product, b.ScalarConstant(t, 0), m_contract, add);
  if (sum == nullptr) return b.status();
  // The reduce keeps m's batch and free dimensions in m's order; the dot wants batch (in the
  // dimension numbers' order) then free.
  std::vector<int64_t> kept;
  for (int64_t k = 0; k < m->shape().rank(); ++k)
    if (!Contains(m_contract, k)) kept.push_back(k);
  std::vector<int64_t> want = m_batch;
  for (int64_t k : kept)
    if (!Contains(m_batch, k)) want.push_back(k);
  std::vector<int64_t> perm;
  for (int64_t k : want) perm.push_back(std::find(kept.begin(), kept.end(), k) - kept.begin());
  if (!std::is_sorted(perm.begin(), perm.end())) sum = b.Transpose(sum, perm);
  if (sum == nullptr || !b.ok()) return b.status();
  return sum;
}

}  // namespace

absl::StatusOr<bool> DotStrengthReduction::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computations = ComputationNameUniquer(module);
  return expanders::RunOpExpander(
      module, [](const HloInstruction& inst) { return Matches(inst); },
      [&](HloInstruction* dot) { return Reduce(dot, names, computations); });
}

}  // namespace hloc
