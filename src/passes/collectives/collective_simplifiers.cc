#include "passes/collectives/collective_simplifiers.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "passes/collectives/collective_util.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;
using Groups = std::vector<std::vector<int64_t>>;

bool AllSingletons(const Groups& groups) {
  for (const std::vector<int64_t>& g : groups)
    if (g.size() != 1) return false;
  return true;
}

// Each group of `inner` lies inside one group of `outer`.
bool Covers(const Groups& outer, const Groups& inner, int64_t devices) {
  std::vector<int64_t> group_of(devices, -1);
  for (size_t i = 0; i < outer.size(); ++i)
    for (int64_t d : outer[i])
      if (d >= 0 && d < devices) group_of[d] = static_cast<int64_t>(i);
  for (const std::vector<int64_t>& g : inner)
    for (int64_t d : g)
      if (d < 0 || d >= devices || group_of[d] < 0 || group_of[d] != group_of[g[0]]) return false;
  return true;
}

// XLA's HloReplicationAnalysis, cut down to what a freshly partitioned program holds: whether a
// value is the same on every device of each of `groups`.
class Replication {
 public:
  Replication(const Groups& groups, DeviceCounts counts) : groups_(groups), counts_(counts) {}

  bool Replicated(const HloInstruction* x, int depth = 0) {
    if (auto it = memo_.find(x); it != memo_.end()) return it->second;
    const bool r = depth < 64 && Compute(x, depth);
    memo_[x] = r;
    return r;
  }

 private:
  bool Compute(const HloInstruction* x, int depth) {
    switch (x->opcode()) {
      case O::kConstant: case O::kIota: return true;
      case O::kAllReduce: case O::kAllGather: {
        absl::StatusOr<Groups> g = CollectiveDeviceGroups(*x, counts_);
        return g.ok() && Covers(*g, groups_, counts_.num_devices());
      }
      case O::kReduce:
        if (!PureComputation(x->to_apply())) return false;
        break;
      default:
        if (!x->called_computations().empty() || !IsLocalPure(x->opcode())) return false;
    }
    for (const HloInstruction* op : x->operands())
      if (!Replicated(op, depth + 1)) return false;
    return true;
  }

  // Ops whose result depends only on their operands' values.
  static bool IsLocalPure(HloOpcode op) {
    if (IsElementwise(op)) return op != O::kRng;
    switch (op) {
      case O::kBroadcast: case O::kReshape: case O::kTranspose: case O::kSlice: case O::kConcatenate:
      case O::kPad: case O::kReverse: case O::kBitcast: case O::kCopy: case O::kDot: case O::kDynamicSlice:
      case O::kDynamicUpdateSlice: case O::kGetTupleElement: case O::kTuple: case O::kConvolution:
        return true;
      default:
        return false;
    }
  }

  static bool PureComputation(const HloComputation* c) {
    if (c == nullptr) return false;
    for (const auto& inst : c->instructions())
      if (inst->opcode() != O::kParameter && inst->opcode() != O::kConstant && !IsElementwise(inst->opcode()))
        return false;
    return true;
  }

  const Groups& groups_;
  DeviceCounts counts_;
  absl::flat_hash_map<const HloInstruction*, bool> memo_;
};

// The all-reduce's value computed on the device: its operand, scaled by the group size for add.
HloInstruction* LocalAllReduce(HloInstruction* ar, const std::string& reduction, int64_t group_size,
                               NameUniquer& names) {
  HloInstruction* x = ar->operand(0);
  const PrimitiveType t = x->shape().element_type();
  if (reduction == "min" || reduction == "max" || reduction == "and" || reduction == "or") return x;
  if (reduction != "add") return nullptr;
  if (t == PrimitiveType::PRED) return x;  // add on pred is or
  if (IsComplex(t)) return nullptr;
  expanders::ExpanderBuilder b(ar->parent(), &names, ar);
  HloInstruction* k = b.BroadcastScalar(b.ScalarConstant(t, static_cast<double>(group_size)), x->shape());
  HloInstruction* product = b.Mul(x, k);
  if (!b.ok()) {
    b.Discard();
    return nullptr;
  }
  return product;
}

// The replacement of all-reduce `ar`, or null to keep it.
HloInstruction* SimplifiedAllReduce(HloInstruction* ar, DeviceCounts counts, NameUniquer& names) {
  if (ar->opcode() != O::kAllReduce || HasControlDependencies(*ar)) return nullptr;
  absl::StatusOr<Groups> groups = CollectiveDeviceGroups(*ar, counts);
  if (!groups.ok() || groups->empty()) return nullptr;
  if (AllSingletons(*groups)) {
    if (ar->shape().IsArray() && ar->operand_count() == 1) return ar->operand(0);
    expanders::ExpanderBuilder b(ar->parent(), &names, ar);
    HloInstruction* t = b.Tuple(std::vector<HloInstruction*>(ar->operands().begin(), ar->operands().end()));
    return b.ok() ? t : nullptr;
  }
  if (!ar->shape().IsArray() || ar->operand_count() != 1) return nullptr;
  const size_t k = (*groups)[0].size();
  for (const std::vector<int64_t>& g : *groups)
    if (g.size() != k) return nullptr;
  absl::StatusOr<std::string> reduction = CollectiveReduction(*ar);
  if (!reduction.ok()) return nullptr;
  Replication replication(*groups, counts);
  if (!replication.Replicated(ar->operand(0))) return nullptr;
  return LocalAllReduce(ar, *reduction, static_cast<int64_t>(k), names);
}

// Replaces every instruction `rewrite` returns a replacement for; true when one was replaced.
template <typename Rewrite>
absl::StatusOr<bool> RewriteEach(HloModule& module, Rewrite rewrite) {
  const DeviceCounts counts = DeviceCountsOf(module);
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
      HloInstruction* replacement = rewrite(inst, counts, names);
      if (replacement == nullptr) continue;
      absl::StatusOr<bool> replaced = ReplaceInstruction(inst, replacement);
      if (!replaced.ok()) return replaced.status();
      changed |= *replaced;
    }
  }
  return changed;
}

HloInstruction* DegenerateAllGather(HloInstruction* ag, DeviceCounts counts, NameUniquer&) {
  if (ag->opcode() != O::kAllGather || !ag->shape().IsArray() || ag->operand_count() != 1) return nullptr;
  if (HasControlDependencies(*ag) || !ag->operand(0)->shape().SameDimensions(ag->shape())) return nullptr;
  absl::StatusOr<Groups> groups = CollectiveDeviceGroups(*ag, counts);
  return groups.ok() && AllSingletons(*groups) ? ag->operand(0) : nullptr;
}

HloInstruction* OwnChunkOfAllGather(HloInstruction* ds, DeviceCounts counts, NameUniquer&) {
  if (ds->opcode() != O::kDynamicSlice) return nullptr;
  HloInstruction* ag = ds->operand(0);
  if (ag->opcode() != O::kAllGather || !ag->shape().IsArray() || ag->operand_count() != 1 ||
      ag->attrs().dimensions.size() != 1)
    return nullptr;
  absl::StatusOr<Groups> groups = CollectiveDeviceGroups(*ag, counts);
  if (!groups.ok()) return nullptr;
  std::optional<int64_t> dim = OwnChunkDimension(*ds, ag->shape(), *groups, counts);
  if (!dim || *dim != ag->attrs().dimensions[0]) return nullptr;
  return ag->operand(0)->shape().SameDimensions(ds->shape()) ? ag->operand(0) : nullptr;
}

}  // namespace

absl::StatusOr<bool> SimplifyAllReduces(HloModule& module) { return RewriteEach(module, SimplifiedAllReduce); }
absl::StatusOr<bool> SimplifyAllGathers(HloModule& module) { return RewriteEach(module, DegenerateAllGather); }
absl::StatusOr<bool> SimplifyAllGatherDynamicSlices(HloModule& module) {
  return RewriteEach(module, OwnChunkOfAllGather);
}

}  // namespace hloc
