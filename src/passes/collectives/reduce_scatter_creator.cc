#include "passes/collectives/reduce_scatter_creator.h"

#include <algorithm>
#include <optional>

#include "ir/computation.h"
#include "ir/sharding_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// The value of a scalar integer expression on device `device` (partition id = device when
// there is one replica; replica id = device when there is one partition), or nullopt.
std::optional<int64_t> ValueOn(const HloInstruction* x, int64_t device, int64_t partitions, int depth = 0) {
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

// The dimension `ds` takes one group-position chunk of, when it does so on every device.
std::optional<int64_t> ScatterDimension(const HloInstruction& ds, const HloInstruction& ar,
                                        const std::vector<std::vector<int64_t>>& groups, int64_t devices,
                                        int64_t partitions) {
  const Shape& full = ar.shape();
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
        auto start = ValueOn(ds.operand(1 + d), g[pos], partitions);
        if (!start || *start != (d == *dim ? pos * chunk : 0)) return std::nullopt;
      }
    }
  }
  return dim;
}

// The all-reduce's groups as device ids (flattened), or nullopt for modes this pass leaves alone.
std::optional<std::vector<std::vector<int64_t>>> DeviceGroups(const HloInstruction& ar, int64_t replicas,
                                                              int64_t partitions) {
  const InstructionAttributes& a = ar.attrs();
  // Device ids are flattened ids with use_global_device_ids; without a channel, replica ids,
  // which are device ids when there is one partition; with a channel and one replica,
  // partition ids.
  bool ids_are_devices = a.use_global_device_ids || (!a.channel_id && partitions == 1) ||
                         (a.channel_id && !a.use_global_device_ids && replicas == 1);
  if (!ids_are_devices) return std::nullopt;
  std::vector<std::vector<int64_t>> groups;
  if (a.replica_groups.empty()) {
    std::vector<int64_t> all;
    for (int64_t d = 0; d < replicas * partitions; ++d) all.push_back(d);
    groups.push_back(all);
  } else {
    auto expanded = ExpandDeviceList(a.replica_groups);
    if (!expanded.ok() || expanded->empty()) return std::nullopt;
    groups = *expanded;
  }
  return groups;
}

}  // namespace

absl::StatusOr<bool> CreateReduceScatters(HloModule& module) {
  const int64_t replicas = std::max<int64_t>(1, module.config().replica_count);
  const int64_t partitions = std::max<int64_t>(1, module.config().num_partitions);
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* ds : c->MakeInstructionPostOrder()) {
      if (ds->opcode() != O::kDynamicSlice) continue;
      HloInstruction* ar = ds->operand(0);
      if (ar->opcode() != O::kAllReduce || ar->operand_count() != 1 || !ar->shape().IsArray()) continue;
      auto groups = DeviceGroups(*ar, replicas, partitions);
      if (!groups) continue;
      auto dim = ScatterDimension(*ds, *ar, *groups, replicas * partitions, partitions);
      if (!dim) continue;
      auto rs = std::make_unique<HloInstruction>(O::kReduceScatter, ds->shape(), "reduce-scatter");
      rs->AppendOperand(ar->operand(0));
      rs->mutable_attrs() = ar->attrs();
      rs->mutable_attrs().dimensions = {*dim};
      rs->mutable_attrs().metadata = ds->attrs().metadata;
      rs->mutable_called_computations() = ar->called_computations();
      HloInstruction* added = AddInstructionWithUniqueName(*c, std::move(rs), names, ds);
      ds->ReplaceAllUsesWith(added);
      if (c->root_instruction() == ds) c->set_root_instruction(added);
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
