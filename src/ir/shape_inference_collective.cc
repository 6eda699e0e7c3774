// Shape inference for collectives: all-reduce, all-gather, reduce-scatter, all-to-all,
// ragged-all-to-all, collective-permute, collective-broadcast, their async start/done forms,
// and partition-id / replica-id. Replica groups and source-target pairs are checked here too,
// as XLA's ShapeVerifier does, against the module's replica and partition counts.
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/collective_groups.h"
#include "ir/module.h"
#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

struct ModuleCounts {
  int64_t replicas = 1, partitions = 1;
};
ModuleCounts Counts(const HloInstruction& inst) {
  ModuleCounts c;
  if (inst.parent() != nullptr && inst.parent()->parent() != nullptr) {
    c.replicas = inst.parent()->parent()->config().replica_count;
    c.partitions = inst.parent()->parent()->config().num_partitions;
  }
  return c;
}

// XLA's GetCollectiveOpGroupMode. all-to-all and collective-permute have no
// use_global_device_ids (has_global_ids = false).
absl::StatusOr<GroupMode> GroupModeOf(const HloInstruction& inst, bool has_global_ids) {
  bool channel = inst.attrs().channel_id.has_value();
  bool global = has_global_ids && inst.attrs().use_global_device_ids;
  if (!channel) {
    if (global) return InvalidArgument("Invalid combination of has_channel_id and use_global_device_ids");
    return GroupMode::kCrossReplica;
  }
  if (!has_global_ids) return GroupMode::kCrossPartition;
  return global ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

// The replica groups as explicit lists; nullopt when they are kept as Shardy mesh text.
std::optional<std::vector<std::vector<int64_t>>> ExpandGroups(const CollectiveDeviceList& list) {
  if (!list.mesh_text.empty()) return std::nullopt;
  if (!list.iota) return list.groups;
  const IotaTileAssignment& iota = *list.iota;
  // dims = [num_groups, group_size]: reshape iota(N) to reshape_dims, transpose, flatten.
  int64_t total = 1;
  for (int64_t d : iota.reshape_dims) {
    if (d <= 0 || total > (int64_t{1} << 20) / d) return std::nullopt;
    total *= d;
  }
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty()) {
    perm.resize(iota.reshape_dims.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  }
  if (perm.size() != iota.reshape_dims.size() || iota.dims.empty()) return std::nullopt;
  std::vector<int64_t> tdims(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] < 0 || perm[i] >= static_cast<int64_t>(perm.size())) return std::nullopt;
    tdims[i] = iota.reshape_dims[perm[i]];
  }
  std::vector<int64_t> strides = RowMajorStrides(iota.reshape_dims);
  std::vector<int64_t> flat;
  flat.reserve(total);
  std::vector<int64_t> idx(tdims.size(), 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t v = 0;
    for (size_t i = 0; i < idx.size(); ++i) v += idx[i] * strides[perm[i]];
    flat.push_back(v);
    for (int64_t i = static_cast<int64_t>(idx.size()) - 1; i >= 0; --i) {
      if (++idx[i] < tdims[i]) break;
      idx[i] = 0;
    }
  }
  int64_t group_size = iota.dims.back();
  if (group_size <= 0 || total % group_size != 0) return std::nullopt;
  std::vector<std::vector<int64_t>> groups;
  for (int64_t g = 0; g < total / group_size; ++g)
    groups.emplace_back(flat.begin() + g * group_size, flat.begin() + (g + 1) * group_size);
  return groups;
}

// XLA's CheckReplicaGroups: every id 0..n-1 named exactly once, n matching the replica /
// partition count for the mode (unless that count is 1), groups of one size where required.
absl::Status CheckReplicaGroups(const HloInstruction& inst, GroupMode mode, bool uniform) {
  std::optional<std::vector<std::vector<int64_t>>> groups = ExpandGroups(inst.attrs().replica_groups);
  if (!groups) return absl::OkStatus();
  if (groups->empty()) {
    if (mode == GroupMode::kFlattenedId) return InvalidArgument("Replica groups must be specified in flattened-id mode");
    return absl::OkStatus();
  }
  absl::flat_hash_set<int64_t> seen;
  for (const auto& g : *groups) {
    if (g.empty()) return InvalidArgument("Instruction cannot have an empty replica group.");
    for (int64_t id : g) {
      if (!seen.insert(id).second) return InvalidArgument("Replica %d is repeated in instruction's replica-groups.", id);
    }
  }
  int64_t n = seen.size();
  for (int64_t i = 0; i < n; ++i) {
    if (!seen.contains(i)) return InvalidArgument("Replica %d is not named in instruction's replica-groups.", i);
  }
  ModuleCounts c = Counts(inst);
  int64_t expected = mode == GroupMode::kCrossPartition ? c.partitions
                     : mode == GroupMode::kFlattenedId  ? c.replicas * c.partitions
                                                        : c.replicas;
  if (expected != 1 && n != expected) {
    return InvalidArgument("Replica groups should contain %d ids (replicas/partitions for the collective's mode), but found %d.",
                           expected, n);
  }
  if (uniform) {
    for (const auto& g : *groups) {
      if (g.size() != (*groups)[0].size()) return InvalidArgument("Replica groups expected to be of uniform size.");
    }
  }
  return absl::OkStatus();
}

// XLA's GetSubgroupSize: participants per group.
int64_t SubgroupSize(const HloInstruction& inst, GroupMode mode) {
  ModuleCounts c = Counts(inst);
  std::optional<std::vector<std::vector<int64_t>>> groups = ExpandGroups(inst.attrs().replica_groups);
  bool have = groups && !groups->empty();
  if (!groups) return 1;  // mesh text: size unknown, the shard-count check is skipped
  switch (mode) {
    case GroupMode::kCrossReplica:
    case GroupMode::kCrossReplicaAndPartition: {
      int64_t size = have ? (*groups)[0].size() : c.replicas;
      return mode == GroupMode::kCrossReplicaAndPartition ? size * c.partitions : size;
    }
    case GroupMode::kFlattenedId:
      return have ? (*groups)[0].size() : 1;
    case GroupMode::kCrossPartition:
      return have ? (*groups)[0].size() : c.partitions;
  }
  return 1;
}

// all-reduce and reduce-scatter reduce elementwise with a scalar binary computation.
absl::Status CheckCollectiveReducer(const HloInstruction& inst) {
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  if (to_apply->parameters.size() != 2) {
    return InvalidArgument("The reduction computation of %s must take 2 parameters, takes %d.",
                           std::string(HloOpcodeString(inst.opcode())), to_apply->parameters.size());
  }
  const Shape& r = to_apply->result;
  if (!IsScalar(r) || !IsScalar(to_apply->parameters[0]) || !IsScalar(to_apply->parameters[1])) {
    return InvalidArgument("The reduction computation of %s must map two scalars to a scalar.",
                           std::string(HloOpcodeString(inst.opcode())));
  }
  for (const HloInstruction* op : inst.operands()) {
    if (op->shape().IsArray() && !SameElementTypeIgnoringFpPrecision(op->shape(), r)) {
      return InvalidArgument("The reduction computation returns %s but reduces an operand of type %s.", Str(r),
                             TypeName(op->shape().element_type()));
    }
  }
  return absl::OkStatus();
}

Shape TupleOrSingle(std::vector<Shape> parts) {
  if (parts.size() == 1) return parts[0];
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> InferAllReduce(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  absl::StatusOr<GroupMode> mode = GroupModeOf(inst, true);
  if (!mode.ok()) return mode.status();
  if (s.ok()) s = CheckReplicaGroups(inst, *mode, /*uniform=*/false);
  if (s.ok()) s = CheckCollectiveReducer(inst);
  if (s.ok() && inst.attrs().channel_id && *inst.attrs().channel_id <= 0) {
    s = InvalidArgument("All reduce channel id must be greater than 0.");
  }
  if (!s.ok()) return s;
  std::vector<Shape> parts;
  for (const HloInstruction* op : inst.operands()) {
    s = ExpectArray(op->shape(), "operand of cross replica sum");
    if (!s.ok()) return s;
    parts.push_back(StripLayout(op->shape()));
  }
  return TupleOrSingle(std::move(parts));
}

// The output of all-gather (or all-gather-start's {1}) for operand i.
const Shape* AllGatherOutput(const HloInstruction& inst, int64_t i) {
  const Shape* out = &inst.shape();
  if (inst.opcode() == HloOpcode::kAllGatherStart) {
    if (!out->IsTuple() || out->tuple_shapes().size() < 2) return nullptr;
    out = &out->tuple_shapes(1);
  }
  if (inst.operand_count() == 1) return out;
  if (!out->IsTuple() || i >= static_cast<int64_t>(out->tuple_shapes().size())) return nullptr;
  return &out->tuple_shapes(i);
}

absl::StatusOr<Shape> InferAllGather(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  absl::StatusOr<GroupMode> mode = GroupModeOf(inst, true);
  if (!mode.ok()) return mode.status();
  s = CheckReplicaGroups(inst, *mode, /*uniform=*/true);
  if (!s.ok()) return s;
  absl::StatusOr<int64_t> dim_or = SingleDimension(inst, "all-gather");
  if (!dim_or.ok()) return dim_or.status();
  int64_t dim = *dim_or;
  if (dim < 0) return InvalidArgument("all-gather dimension %d is negative.", dim);
  int64_t shard_count = 0;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& in = inst.operand(i)->shape();
    s = ExpectArray(in, "operand of all-gather");
    if (!s.ok()) return s;
    const Shape* out = AllGatherOutput(inst, i);
    if (out == nullptr || !out->IsArray()) {
      return InvalidArgument("all-gather result %s does not have one array per operand.", Str(inst.shape()));
    }
    if (dim >= in.rank() || dim >= out->rank()) {
      return InvalidArgument("all-gather dimension %d is out of range for %s -> %s.", dim, Str(in), Str(*out));
    }
    // The shard count is what the result says it is (XLA's verifier does the same).
    if (i == 0) {
      int64_t a = out->dimensions(dim), b = in.dimensions(dim);
      shard_count = b <= 0 ? 1 : a / b + (a % b != 0);
    }
  }
  int64_t subgroup = SubgroupSize(inst, *mode);
  if (subgroup != 1 && shard_count != subgroup) {
    return InvalidArgument("all-gather gathers %d shards but its replica group has %d participants.", shard_count,
                           subgroup);
  }
  if (shard_count <= 0) shard_count = 1;
  std::vector<Shape> outs;
  for (const HloInstruction* op : inst.operands()) {
    Shape out = StripLayout(op->shape());
    int64_t d = out.dimensions(dim);
    if (!IsUnbounded(d)) {
      if (d > (int64_t{1} << 62) / shard_count) return InvalidArgument("all-gather result is too large.");
      out.mutable_dimensions()[dim] = d * shard_count;
    }
    outs.push_back(out);
  }
  Shape gathered = TupleOrSingle(outs);
  if (inst.opcode() == HloOpcode::kAllGather) return gathered;
  std::vector<Shape> ins;
  for (const HloInstruction* op : inst.operands()) ins.push_back(StripLayout(op->shape()));
  return Shape::Tuple({TupleOrSingle(ins), gathered});
}

absl::StatusOr<Shape> InferReduceScatter(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  absl::StatusOr<GroupMode> mode = GroupModeOf(inst, true);
  if (!mode.ok()) return mode.status();
  s = CheckReplicaGroups(inst, *mode, /*uniform=*/true);
  if (s.ok()) s = CheckCollectiveReducer(inst);
  if (!s.ok()) return s;
  absl::StatusOr<int64_t> dim_or = SingleDimension(inst, "reduce-scatter");
  if (!dim_or.ok()) return dim_or.status();
  int64_t dim = *dim_or;
  const Shape& out0 = inst.operand_count() == 1 || !inst.shape().IsTuple() || inst.shape().tuple_shapes().empty()
                          ? inst.shape()
                          : inst.shape().tuple_shapes(0);
  const Shape& in0 = inst.operand(0)->shape();
  for (const HloInstruction* op : inst.operands()) {
    s = ExpectArray(op->shape(), "operand of reduce-scatter");
    if (!s.ok()) return s;
    if (dim < 0 || dim >= op->shape().rank()) return InvalidArgument("reduce-scatter dimension %d is out of range.", dim);
  }
  if (!out0.IsArray() || dim >= out0.rank()) return InvalidArgument("reduce-scatter result %s is malformed.", Str(inst.shape()));
  int64_t b = out0.dimensions(dim);
  int64_t a = in0.dimensions(dim);
  int64_t shard_count = b <= 0 ? 1 : a / b + (a % b != 0);
  int64_t subgroup = SubgroupSize(inst, *mode);
  if (subgroup != 1 && shard_count != subgroup) {
    return InvalidArgument("reduce-scatter splits into %d shards but its replica group has %d participants.",
                           shard_count, subgroup);
  }
  if (shard_count <= 0) shard_count = 1;
  std::vector<Shape> outs;
  for (const HloInstruction* op : inst.operands()) {
    Shape out = StripLayout(op->shape());
    int64_t d = out.dimensions(dim);
    if (d % shard_count != 0) {
      return InvalidArgument("ReduceScatter operand scatter dimension size %d must be dividable by shard_count %d.", d,
                             shard_count);
    }
    out.mutable_dimensions()[dim] = out.is_dynamic_dimension(dim) ? Shape::kUnboundedSize : d / shard_count;
    outs.push_back(out);
  }
  return TupleOrSingle(outs);
}

absl::StatusOr<Shape> InferAllToAll(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  absl::StatusOr<GroupMode> mode = GroupModeOf(inst, false);
  if (!mode.ok()) return mode.status();
  s = CheckReplicaGroups(inst, *mode, /*uniform=*/true);
  if (!s.ok()) return s;
  int64_t split_count = SubgroupSize(inst, *mode);
  const auto& dims = inst.attrs().dimensions;
  if (!dims.empty()) {
    // Array form: split dimension d into split_count pieces and concatenate them along d.
    s = CheckOperandCount(inst, 1);
    if (!s.ok()) return s;
    int64_t d = dims[0];
    const Shape& shape = inst.operand(0)->shape();
    s = ExpectArray(shape, "operand of all-to-all");
    if (!s.ok()) return s;
    if (dims.size() != 1 || d < 0 || d >= shape.rank()) {
      return InvalidArgument("AllToAll split_dimension %s is out-of-bounds in shape %s.", Join(dims), Str(shape));
    }
    if (split_count <= 0) split_count = 1;
    if (!IsUnbounded(shape.dimensions(d)) && shape.dimensions(d) % split_count != 0) {
      return InvalidArgument("AllToAll split dimension size %d must be dividable by split_count %d.",
                             shape.dimensions(d), split_count);
    }
    return StripLayout(shape);
  }
  // Tuple form: one operand per participant, all of one shape.
  bool groups_known = ExpandGroups(inst.attrs().replica_groups).has_value();
  if (groups_known && inst.operand_count() != split_count) {
    return InvalidArgument("all-to-all without a split dimension needs one operand per participant (%d), has %d.",
                           split_count, inst.operand_count());
  }
  std::vector<Shape> parts;
  for (const HloInstruction* op : inst.operands()) {
    if (!ShapesCompatible(op->shape(), inst.operand(0)->shape())) {
      return InvalidArgument("HLO all-to-all has operands with different shapes: %s vs %s.", Str(inst.operand(0)->shape()),
                             Str(op->shape()));
    }
    parts.push_back(StripLayout(op->shape()));
  }
  return Shape::Tuple(std::move(parts));
}

// XLA's CheckDuplicatedSourceOrTarget: ids in range, each source and target used once (or once
// per update slice for in-place permutes).
absl::Status CheckSourceTargetPairs(const HloInstruction& inst, GroupMode mode, int64_t allowed) {
  ModuleCounts c = Counts(inst);
  int64_t limit = mode == GroupMode::kCrossReplica ? c.replicas : c.partitions;
  absl::flat_hash_map<int64_t, int64_t> sources, targets;
  for (const auto& [src, dst] : inst.attrs().source_target_pairs) {
    for (int64_t id : {src, dst}) {
      if (id < 0) return InvalidArgument("Source/target %d in the instruction's source-target pairs must be >= 0.", id);
      if (limit != 1 && id >= limit) {
        return InvalidArgument("Source/target %d in the instruction's source-target pairs must be < %d.", id, limit);
      }
    }
    if (++sources[src] > allowed) return InvalidArgument("Source %d appears more than %d time(s) in instruction's source-target pairs.", src, allowed);
    if (++targets[dst] > allowed) return InvalidArgument("Target %d appears more than %d time(s) in instruction's source-target pairs.", dst, allowed);
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferCollectivePermute(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  absl::StatusOr<GroupMode> mode = GroupModeOf(inst, false);
  if (!mode.ok()) return mode.status();
  bool inplace = IsInPlacePermute(inst);
  int64_t allowed = 1;
  if (inplace) {
    const Shape& offsets = inst.operand(2)->shape();
    if (inst.operand(0)->shape().IsArray()) {
      allowed = offsets.tuple_shapes().size();
    } else if (!offsets.tuple_shapes().empty() && offsets.tuple_shapes(0).IsTuple()) {
      allowed = offsets.tuple_shapes(0).tuple_shapes().size();
    }
    if (allowed < 1) allowed = 1;
  }
  s = CheckSourceTargetPairs(inst, *mode, allowed);
  if (!s.ok()) return s;
  Shape base;
  if (inplace) {
    base = StripLayout(inst.operand(1)->shape());
  } else {
    std::vector<Shape> parts;
    for (const HloInstruction* op : inst.operands()) {
      s = ExpectArray(op->shape(), "operand of collective-permute");
      if (!s.ok()) return s;
      parts.push_back(StripLayout(op->shape()));
    }
    base = TupleOrSingle(parts);
  }
  if (inst.opcode() == HloOpcode::kCollectivePermute) return base;
  // collective-permute-start: (input, output, context...), the context taken from the result.
  std::vector<Shape> parts;
  if (inplace) {
    parts = {StripLayout(inst.operand(0)->shape()), base};
  } else {
    parts = {base, base};
  }
  const Shape& shape = inst.shape();
  if (shape.IsTuple())
    for (size_t i = 2; i < shape.tuple_shapes().size(); ++i) parts.push_back(StripLayout(shape.tuple_shapes(i)));
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> TupleElementOfOperand(const HloInstruction& inst, int64_t index) {
  const Shape& op = inst.operand(0)->shape();
  if (!op.IsTuple() || static_cast<int64_t>(op.tuple_shapes().size()) <= index) {
    return InvalidArgument("%s expects a tuple operand with an element %d, got %s.",
                           std::string(HloOpcodeString(inst.opcode())), index, Str(op));
  }
  return StripLayout(op.tuple_shapes(index));
}

}  // namespace

absl::StatusOr<Shape> InferCollectiveFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  switch (inst.opcode()) {
    case O::kAllReduce: case O::kAllReduceStart:
      return InferAllReduce(inst);
    case O::kAllReduceDone:
      return StripLayout(inst.operand(0)->shape());
    case O::kAllGather: case O::kAllGatherStart:
      return InferAllGather(inst);
    case O::kAllGatherDone: case O::kCollectivePermuteDone:
      return TupleElementOfOperand(inst, 1);
    case O::kReduceScatter:
      return InferReduceScatter(inst);
    case O::kAllToAll:
      return InferAllToAll(inst);
    case O::kRaggedAllToAll: {
      absl::StatusOr<GroupMode> mode = GroupModeOf(inst, false);
      if (!mode.ok()) return mode.status();
      absl::Status s = CheckReplicaGroups(inst, *mode, /*uniform=*/true);
      if (s.ok()) s = ExpectArray(inst.operand(1)->shape(), "operand 1 of ragged-all-to-all");
      if (!s.ok()) return s;
      return StripLayout(inst.operand(1)->shape());
    }
    case O::kCollectivePermute: case O::kCollectivePermuteStart:
      return InferCollectivePermute(inst);
    case O::kCollectiveBroadcast: {
      // XLA's InferCollectiveBroadcastShape: one result per operand (a tuple for several).
      absl::Status s = CheckMinOperandCount(inst, 1);
      if (!s.ok()) return s;
      std::vector<Shape> parts;
      for (const HloInstruction* op : inst.operands()) {
        s = ExpectArray(op->shape(), "operand of collective-broadcast");
        if (!s.ok()) return s;
        parts.push_back(StripLayout(op->shape()));
      }
      return TupleOrSingle(std::move(parts));
    }
    case O::kPartitionId: case O::kReplicaId:
      return MakeShape(PrimitiveType::U32, {});
    default:
      return absl::InternalError(absl::StrCat("not a collective opcode: ", std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
