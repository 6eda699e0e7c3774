#include "passes/collectives/collective_combiner.h"

#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// What members of one combined collective share, as text; nullopt when `inst` is not combinable.
std::optional<std::string> CombineKey(const HloInstruction& inst, HloOpcode op, DeviceCounts counts) {
  if (inst.opcode() != op || inst.operand_count() != 1 || !inst.shape().IsArray()) return std::nullopt;
  if (inst.attrs().constrain_layout || HasControlDependencies(inst)) return std::nullopt;
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = CollectiveDeviceGroups(inst, counts);
  if (!groups.ok()) return std::nullopt;
  std::string key = absl::StrCat(inst.attrs().channel_id.has_value(), "/", inst.attrs().use_global_device_ids, "/");
  for (const std::vector<int64_t>& g : *groups) absl::StrAppend(&key, "{", absl::StrJoin(g, ","), "}");
  if (op != O::kAllReduce) {
    if (inst.attrs().dimensions.size() != 1) return std::nullopt;
    absl::StrAppend(&key, "/dim", inst.attrs().dimensions[0]);
  }
  if (op != O::kAllGather) {
    absl::StatusOr<std::string> reduction = CollectiveReduction(inst);
    if (!reduction.ok()) return std::nullopt;
    // One reducer serves every member: same element type (the reducer's scalar type).
    absl::StrAppend(&key, "/", *reduction, "/", std::string(PrimitiveTypeName(inst.shape().element_type())));
  }
  return key;
}

// Whether `inst` depends (through operands or control edges) on one of `members`.
bool DependsOnAny(const HloInstruction* inst, const absl::flat_hash_set<const HloInstruction*>& members) {
  std::vector<const HloInstruction*> stack(inst->operands().begin(), inst->operands().end());
  stack.insert(stack.end(), inst->control_predecessors().begin(), inst->control_predecessors().end());
  absl::flat_hash_set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* x = stack.back();
    stack.pop_back();
    if (!seen.insert(x).second) continue;
    if (members.contains(x)) return true;
    stack.insert(stack.end(), x->operands().begin(), x->operands().end());
    stack.insert(stack.end(), x->control_predecessors().begin(), x->control_predecessors().end());
  }
  return false;
}

struct Group {
  std::vector<HloInstruction*> members;
  absl::flat_hash_set<const HloInstruction*> set;
  int64_t bytes = 0;
};

// One collective over every member's operand; each member becomes a get-tuple-element of it.
absl::Status Combine(HloComputation& c, const Group& group, NameUniquer& names) {
  const HloInstruction& first = *group.members.front();
  const HloInstruction* last = group.members.back();  // every operand is defined before it
  std::vector<Shape> shapes;
  for (const HloInstruction* m : group.members) shapes.push_back(m->shape());
  auto combined = std::make_unique<HloInstruction>(first.opcode(), Shape::Tuple(shapes), first.name());
  for (HloInstruction* m : group.members) combined->AppendOperand(m->operand(0));
  combined->mutable_attrs() = first.attrs();
  combined->mutable_called_computations() = first.called_computations();
  HloInstruction* added = AddInstructionWithUniqueName(c, std::move(combined), names, last);
  for (size_t i = 0; i < group.members.size(); ++i) {
    auto gte = std::make_unique<HloInstruction>(O::kGetTupleElement, shapes[i], "get-tuple-element");
    gte->AppendOperand(added);
    gte->mutable_attrs().tuple_index = static_cast<int64_t>(i);
    HloInstruction* g = AddInstructionWithUniqueName(c, std::move(gte), names, last);
    absl::StatusOr<bool> replaced = ReplaceInstruction(group.members[i], g, {.remove_unused_operands = false});
    if (!replaced.ok()) return replaced.status();
    if (!*replaced) return absl::InternalError(absl::StrCat("could not replace %", group.members[i]->name()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> CombineIn(HloComputation& c, HloOpcode op, CombineLimits limits, DeviceCounts counts,
                               NameUniquer& names) {
  std::map<std::string, Group> open;
  std::vector<Group> done;
  auto close = [&](const std::string& key) {
    auto it = open.find(key);
    if (it == open.end()) return;
    if (it->second.members.size() > 1) done.push_back(std::move(it->second));
    open.erase(it);
  };
  for (HloInstruction* inst : c.MakeInstructionPostOrder()) {
    std::optional<std::string> key = CombineKey(*inst, op, counts);
    if (!key) continue;
    const int64_t bytes = inst->shape().byte_size();
    if (bytes > limits.threshold_bytes) continue;
    auto it = open.find(*key);
    if (it != open.end() &&
        (it->second.bytes + bytes > limits.threshold_bytes ||
         static_cast<int64_t>(it->second.members.size()) >= limits.threshold_count || DependsOnAny(inst, it->second.set)))
      close(*key);
    Group& g = open[*key];
    g.members.push_back(inst);
    g.set.insert(inst);
    g.bytes += bytes;
  }
  while (!open.empty()) close(open.begin()->first);
  for (const Group& g : done)
    if (absl::Status s = Combine(c, g, names); !s.ok()) return s;
  return !done.empty();
}

}  // namespace

absl::StatusOr<bool> CombineCollectives(HloModule& module, HloOpcode op, CombineLimits limits) {
  if (limits.threshold_bytes <= 0 || limits.threshold_count < 2) return false;
  const DeviceCounts counts = DeviceCountsOf(module);
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    absl::StatusOr<bool> combined = CombineIn(*c, op, limits, counts, names);
    if (!combined.ok()) return combined.status();
    changed |= *combined;
  }
  return changed;
}

}  // namespace hloc
