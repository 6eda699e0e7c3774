#include "passes/collectives/collective_util.h"

#include <algorithm>

namespace hloc {
namespace {

using O = HloOpcode;

std::optional<int64_t> ValueOn(const HloInstruction* x, int64_t device, int64_t partitions, int depth) {
  if (depth > 16) return std::nullopt;
  auto operand = [&](int64_t i) { return ValueOn(x->operand(i), device, partitions, depth + 1); };
  switch (x->opcode()) {
    case O::kConstant: {
      if (!x->attrs().literal || x->shape().num_elements() != 1 || !IsIntegral(x->shape().element_type()))
        return std::nullopt;
      return x->attrs().literal->GetInt(0);
    }
    case O::kPartitionId: return device % partitions;
    case O::kReplicaId: return device / partitions;
    case O::kReshape: case O::kConvert: case O::kCopy: case O::kBitcast:
      if (x->operand(0)->shape().num_elements() != 1 || !IsIntegral(x->operand(0)->shape().element_type()))
        return std::nullopt;
      return operand(0);
    case O::kAdd: case O::kSubtract: case O::kMultiply: {
      auto a = operand(0), b = operand(1);
      if (!a || !b) return std::nullopt;
      return x->opcode() == O::kAdd ? *a + *b : x->opcode() == O::kSubtract ? *a - *b : *a * *b;
    }
    case O::kDynamicSlice: {
      // table[i] for a constant rank-1 table and a one-element slice (starts clamp as HLO's do).
      const HloInstruction* table = x->operand(0);
      if (table->opcode() != O::kConstant || table->shape().rank() != 1 || x->shape().num_elements() != 1 ||
          !table->attrs().literal || !IsIntegral(table->shape().element_type()))
        return std::nullopt;
      auto i = operand(1);
      if (!i) return std::nullopt;
      int64_t at = std::clamp<int64_t>(*i, 0, table->shape().dimensions(0) - 1);
      return table->attrs().literal->GetInt(at);
    }
    default: return std::nullopt;
  }
}

}  // namespace

std::optional<int64_t> ValueOnDevice(const HloInstruction* x, int64_t device, DeviceCounts counts) {
  return ValueOn(x, device, counts.num_partitions, 0);
}

std::optional<int64_t> OwnChunkDimension(const HloInstruction& ds, const Shape& full,
                                         const std::vector<std::vector<int64_t>>& groups, DeviceCounts counts) {
  if (ds.opcode() != HloOpcode::kDynamicSlice || !full.IsArray() || groups.empty()) return std::nullopt;
  const int64_t devices = counts.num_devices(), partitions = counts.num_partitions;
  std::optional<int64_t> dim;
  for (int64_t d = 0; d < full.rank(); ++d) {
    if (ds.shape().dimensions(d) == full.dimensions(d)) continue;
    if (dim) return std::nullopt;  // one sliced dimension only
    dim = d;
  }
  if (!dim) return std::nullopt;
  const int64_t k = static_cast<int64_t>(groups[0].size());
  const int64_t chunk = ds.shape().dimensions(*dim);
  if (chunk * k != full.dimensions(*dim)) return std::nullopt;
  for (const std::vector<int64_t>& g : groups) {
    if (static_cast<int64_t>(g.size()) != k) return std::nullopt;
    for (int64_t pos = 0; pos < k; ++pos) {
      if (g[pos] < 0 || g[pos] >= devices) return std::nullopt;
      for (int64_t d = 0; d < full.rank(); ++d) {
        auto start = ValueOn(ds.operand(1 + d), g[pos], partitions, 0);
        if (!start || *start != (d == *dim ? pos * chunk : 0)) return std::nullopt;
      }
    }
  }
  return dim;
}

}  // namespace hloc
