#include "passes/library/library_util.h"

#include <algorithm>

namespace hloc::library {

bool TargetsGpu(const PassContext& context) { return context.profile == nullptr || context.profile->kind == "gpu"; }

bool ComputeCapabilityAtLeast(const PassContext& context, int major, int minor) {
  if (context.profile == nullptr) return false;
  const HardwareProfile& p = *context.profile;
  return p.compute_capability_major > major || (p.compute_capability_major == major && p.compute_capability_minor >= minor);
}

bool HasTensorCores(const PassContext& context) {
  if (context.profile == nullptr) return false;
  auto it = context.profile->capabilities.find("HasTensorCores");
  if (it != context.profile->capabilities.end()) return it->second;
  return context.profile->has_tensor_cores;
}

std::optional<double> EffectiveScalarConstant(const HloInstruction* inst) {
  if (inst == nullptr || inst->opcode() != HloOpcode::kConstant || !inst->attrs().literal) return std::nullopt;
  const Literal& l = *inst->attrs().literal;
  if (!l.shape().IsArray() || l.element_count() != 1) return std::nullopt;
  if (IsComplex(l.element_type())) {
    if (l.GetComplex(0).imag() != 0) return std::nullopt;
    return l.GetComplex(0).real();
  }
  return l.GetDouble(0);
}

std::optional<double> BroadcastOfScalarConstant(const HloInstruction* inst) {
  if (inst == nullptr || inst->opcode() != HloOpcode::kBroadcast || inst->operand_count() != 1) return std::nullopt;
  return EffectiveScalarConstant(inst->operand(0));
}

bool IsBroadcastOfScalar(const HloInstruction* inst, double value) {
  std::optional<double> v = BroadcastOfScalarConstant(inst);
  return v.has_value() && *v == value;
}

int64_t UniqueUserCount(const HloInstruction* inst) {
  std::vector<const HloInstruction*> seen;
  for (const HloInstruction* u : inst->users())
    if (std::find(seen.begin(), seen.end(), u) == seen.end()) seen.push_back(u);
  return static_cast<int64_t>(seen.size());
}

bool IsCustomCall(const HloInstruction* inst, std::string_view target) {
  return inst != nullptr && inst->opcode() == HloOpcode::kCustomCall && inst->attrs().custom_call_target == target;
}

DimVec MinorToMajor(const Shape& shape) {
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == shape.rank())
    return shape.layout().minor_to_major;
  DimVec v;
  for (int64_t i = shape.rank() - 1; i >= 0; --i) v.push_back(i);
  return v;
}

bool HasDefaultLayout(const Shape& shape) {
  const DimVec m = MinorToMajor(shape);
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i] != static_cast<int64_t>(m.size() - 1 - i)) return false;
  return true;
}

bool IsMatrixLayoutRepresentable(const Shape& shape, const DimVec& batch, const DimVec& rows, const DimVec& cols) {
  const DimVec m2m = MinorToMajor(shape);
  std::vector<char> groups;  // minor to major
  size_t i = 0;
  auto sequential = [&](const DimVec& dims) {
    for (auto it = dims.rbegin(); it != dims.rend(); ++it)
      if (i >= m2m.size() || m2m[i++] != *it) return false;
    return true;
  };
  while (i < m2m.size()) {
    const int64_t dim = m2m[i];
    if (!rows.empty() && dim == rows.back()) {
      groups.push_back('R');
      if (!sequential(rows)) return false;
    } else if (!cols.empty() && dim == cols.back()) {
      groups.push_back('C');
      if (!sequential(cols)) return false;
    } else if (!batch.empty() && dim == batch.back()) {
      groups.push_back('B');
      if (!sequential(batch)) return false;
    } else {
      return false;
    }
  }
  // MatrixLayout::For rejects "batch in most minor dimension".
  return groups.empty() || groups.front() != 'B';
}

DimVec OtherDims(int64_t rank, const DimVec& a, const DimVec& b) {
  DimVec out;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(a.begin(), a.end(), d) == a.end() && std::find(b.begin(), b.end(), d) == b.end()) out.push_back(d);
  return out;
}

HloInstruction* AddNew(expanders::ExpanderBuilder& b, HloOpcode opcode, const Shape& shape,
                       const std::vector<HloInstruction*>& operands, const std::string& name) {
  for (HloInstruction* op : operands)
    if (op == nullptr) return nullptr;
  auto inst = std::make_unique<HloInstruction>(opcode, shape, name);
  for (HloInstruction* op : operands) inst->AppendOperand(op);
  return b.Add(std::move(inst));
}

}  // namespace hloc::library
