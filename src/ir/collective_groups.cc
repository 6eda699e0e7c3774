// Collective participants and reductions (see collective_groups.h).
#include "ir/collective_groups.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/opcode.h"
#include "ir/sharding_util.h"

namespace hloc {
namespace {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// Ops that carry use_global_device_ids (XLA gives the others none, so their channel_id alone
// means cross-partition).
bool HasGlobalIdsAttribute(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce:
    case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather:
    case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<GroupMode> ModeOf(const HloInstruction& inst) {
  const bool channel = inst.attrs().channel_id.has_value();
  const bool global = inst.attrs().use_global_device_ids;
  if (!channel) {
    if (global) return absl::InvalidArgumentError("use_global_device_ids=true needs a channel_id");
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalIdsAttribute(inst.opcode())) return GroupMode::kCrossPartition;
  return global ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// The groups as written (explicit, iota or mesh form); empty means every id of the mode's kind.
absl::StatusOr<std::vector<std::vector<int64_t>>> WrittenGroups(const HloInstruction& inst, GroupMode mode,
                                                                DeviceCounts c) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ExpandDeviceList(inst.attrs().replica_groups);
  if (!groups.ok()) return groups.status();
  const int64_t limit = mode == GroupMode::kCrossPartition ? c.num_partitions
                        : mode == GroupMode::kFlattenedId  ? c.num_devices()
                                                           : c.replica_count;
  if (groups->empty()) {
    if (mode == GroupMode::kFlattenedId)
      return absl::InvalidArgumentError("use_global_device_ids=true needs explicit replica_groups");
    groups->push_back(Iota(limit));
  }
  for (const std::vector<int64_t>& g : *groups) {
    for (int64_t id : g) {
      if (id < 0 || id >= limit)
        return absl::InvalidArgumentError(absl::StrCat("replica group id ", id, " is outside [0, ", limit,
                                                       ") for this collective's group mode"));
    }
  }
  return groups;
}

// Every device in exactly one group (XLA's verifier asks the same of replica groups).
absl::Status CheckCoverage(const std::vector<std::vector<int64_t>>& groups, int64_t num_devices) {
  std::vector<int> count(num_devices, 0);
  for (const std::vector<int64_t>& g : groups)
    for (int64_t d : g) ++count[d];
  for (int64_t d = 0; d < num_devices; ++d) {
    if (count[d] != 1)
      return absl::InvalidArgumentError(absl::StrCat("device ", d, " is in ", count[d],
                                                     " replica groups (needs exactly one)"));
  }
  return absl::OkStatus();
}

}  // namespace

DeviceCounts DeviceCountsOf(const HloModule& module) {
  return {std::max<int64_t>(1, module.config().replica_count), std::max<int64_t>(1, module.config().num_partitions)};
}

absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveDeviceGroups(const HloInstruction& inst,
                                                                         DeviceCounts c) {
  absl::StatusOr<GroupMode> mode = ModeOf(inst);
  if (!mode.ok()) return mode.status();
  const int64_t P = c.num_partitions, R = c.replica_count;
  std::vector<std::vector<int64_t>> out;
  const bool permute =
      inst.opcode() == HloOpcode::kCollectivePermute || inst.opcode() == HloOpcode::kCollectivePermuteStart;
  std::vector<std::vector<int64_t>> written;
  if (permute) {
    // Pairs, not groups: the devices that may exchange data are one replica's partitions (or one
    // partition's replicas).
    written.push_back(Iota(*mode == GroupMode::kCrossReplica ? R : P));
  } else {
    absl::StatusOr<std::vector<std::vector<int64_t>>> w = WrittenGroups(inst, *mode, c);
    if (!w.ok()) return w.status();
    written = std::move(*w);
  }
  switch (*mode) {
    case GroupMode::kCrossReplica:
      for (const auto& g : written)
        for (int64_t p = 0; p < P; ++p) {
          out.emplace_back();
          for (int64_t r : g) out.back().push_back(r * P + p);
        }
      break;
    case GroupMode::kCrossPartition:
      for (int64_t r = 0; r < R; ++r)
        for (const auto& g : written) {
          out.emplace_back();
          for (int64_t p : g) out.back().push_back(r * P + p);
        }
      break;
    case GroupMode::kCrossReplicaAndPartition:
      for (const auto& g : written) {
        out.emplace_back();
        for (int64_t r : g)
          for (int64_t p = 0; p < P; ++p) out.back().push_back(r * P + p);
      }
      break;
    case GroupMode::kFlattenedId:
      out = std::move(written);
      break;
  }
  if (absl::Status s = CheckCoverage(out, c.num_devices()); !s.ok()) return s;
  return out;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermuteDevicePairs(const HloInstruction& inst,
                                                                             DeviceCounts c) {
  absl::StatusOr<GroupMode> mode = ModeOf(inst);
  if (!mode.ok()) return mode.status();
  const bool cross_replica = *mode == GroupMode::kCrossReplica;
  const int64_t P = c.num_partitions, limit = cross_replica ? c.replica_count : c.num_partitions;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [s, t] : inst.attrs().source_target_pairs) {
    if (s < 0 || s >= limit || t < 0 || t >= limit)
      return absl::InvalidArgumentError(absl::StrCat("source_target_pairs {", s, ",", t, "} outside [0, ", limit,
                                                     ")"));
  }
  const int64_t copies = cross_replica ? c.num_partitions : c.replica_count;
  for (int64_t k = 0; k < copies; ++k) {
    for (const auto& [s, t] : inst.attrs().source_target_pairs) {
      if (cross_replica) out.push_back({s * P + k, t * P + k});
      else out.push_back({k * P + s, k * P + t});
    }
  }
  return out;
}

absl::StatusOr<std::string> CollectiveReduction(const HloInstruction& inst) {
  const HloComputation* f = inst.to_apply();
  auto unsupported = [&](const std::string& why) {
    return absl::UnimplementedError(absl::StrCat(
        "the reduction computation ", f ? f->name() : std::string("(none)"), " of %", inst.name(), " ", why,
        "; this backend's collectives reduce with add, multiply, minimum, maximum, and, or, xor of the two "
        "parameters"));
  };
  if (f == nullptr || f->num_parameters() != 2) return unsupported("does not take two parameters");
  const HloInstruction* root = f->root_instruction();
  if (root->operand_count() != 2) return unsupported("is not one binary op");
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  const HloInstruction* p0 = f->parameter_instruction(0);
  const HloInstruction* p1 = f->parameter_instruction(1);
  if (!((a == p0 && b == p1) || (a == p1 && b == p0))) return unsupported("does not combine its two parameters");
  switch (root->opcode()) {
    case HloOpcode::kAdd: return std::string("add");
    case HloOpcode::kMultiply: return std::string("mul");
    case HloOpcode::kMinimum: return std::string("min");
    case HloOpcode::kMaximum: return std::string("max");
    case HloOpcode::kAnd: return std::string("and");
    case HloOpcode::kOr: return std::string("or");
    case HloOpcode::kXor: return std::string("xor");
    default:
      return unsupported(absl::StrCat("computes ", std::string(HloOpcodeString(root->opcode()))));
  }
}

bool IsInPlacePermute(const HloInstruction& inst) {
  if (inst.operand_count() != 4) return false;
  for (const auto& [name, value] : inst.attrs().raw_attributes)
    if (name == "slice_sizes") return true;
  return inst.operand(2)->shape().IsTuple();
}

}  // namespace hloc
