#include "passes/spmd/spmd_partitioner.h"

#include <algorithm>
#include <iostream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/shape_inference.h"
#include "ir/sharding_util.h"
#include "passes/pass_util.h"
#include "passes/spmd/partitioner_impl.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/sharding_rules.h"

namespace hloc::spmd {

using O = HloOpcode;
using Kind = HloSharding::Kind;

HloSharding SubSharding(const HloSharding& s, const Shape& tuple_shape, int64_t index) {
  if (s.kind != Kind::kTuple) return s;
  int64_t begin = 0;
  for (int64_t i = 0; i < index; ++i) begin += LeafCount(tuple_shape.tuple_shapes(i));
  const Shape& e = tuple_shape.tuple_shapes(index);
  if (!e.IsTuple()) return s.tuple_elements.at(begin);
  HloSharding out;
  out.kind = Kind::kTuple;
  out.tuple_elements.assign(s.tuple_elements.begin() + begin, s.tuple_elements.begin() + begin + LeafCount(e));
  return out;
}

Shape LocalShape(const Shape& shape, const HloSharding& s) {
  if (!shape.IsTuple()) return ShardShape(s, shape);
  std::vector<Shape> parts;
  for (int64_t i = 0; i < (int64_t)shape.tuple_shapes().size(); ++i)
    parts.push_back(LocalShape(shape.tuple_shapes(i), SubSharding(s, shape, i)));
  return Shape::Tuple(std::move(parts));
}

bool AllManual(const HloSharding& s) {
  if (s.kind != Kind::kTuple) return IsManual(s);
  for (const HloSharding& e : s.tuple_elements)
    if (!IsManual(e)) return false;
  return !s.tuple_elements.empty();
}

bool AnyTiled(const HloSharding& s) {
  if (s.kind != Kind::kTuple) return IsTiled(s);
  for (const HloSharding& e : s.tuple_elements)
    if (IsTiled(e)) return true;
  return false;
}

bool AnyManualOperand(const HloInstruction& inst) {
  for (const HloInstruction* op : inst.operands())
    if (op->attrs().sharding && AllManual(ExpandSharding(*op->attrs().sharding, op->shape()))) return true;
  return false;
}

HloSharding Partitioner::ShardingOf(const HloInstruction* orig) const {
  HloSharding s = orig->attrs().sharding ? *orig->attrs().sharding : ReplicatedSharding();
  if (s.kind == Kind::kMaximal) s = ReplicatedSharding();
  s = ExpandSharding(s, orig->shape());
  if (whole_) {
    if (s.kind == Kind::kTuple) {
      for (HloSharding& e : s.tuple_elements)
        if (!IsManual(e)) e = ReplicatedSharding();
    } else if (!IsManual(s)) {
      s = ReplicatedSharding();
    }
  }
  return s;
}

void Partitioner::Set(const HloInstruction* orig, HloInstruction* hlo, HloSharding s) {
  values_[orig] = PValue{hlo, ExpandSharding(s, orig->shape())};
}

void Partitioner::Warn(const std::string& message) {
  (options_.warnings ? *options_.warnings : std::cerr) << message << "\n";
}

absl::StatusOr<HloInstruction*> Partitioner::AddLocal(SpmdBuilder& b, std::unique_ptr<HloInstruction> inst,
                                                      const Shape& shape) {
  inst->mutable_shape() = shape;
  HloInstruction* added = b.b().Add(std::move(inst));
  if (added == nullptr) return b.b().status();
  return added;
}

absl::StatusOr<HloInstruction*> Partitioner::CloneLocal(SpmdBuilder& b, const HloInstruction& inst,
                                                        std::vector<HloInstruction*> operands, const Shape& shape) {
  auto clone = CloneInstruction(inst, operands);
  clone->mutable_attrs().sharding.reset();
  return AddLocal(b, std::move(clone), shape);
}

// Reshards a value of any shape: tuples leaf by leaf (get-tuple-element, reshard, tuple).
absl::StatusOr<HloInstruction*> Partitioner::Reshard(SpmdBuilder& b, HloInstruction* x, const Shape& shape,
                                                     const HloSharding& from, const HloSharding& to,
                                                     const HloInstruction& op) {
  if (from == to) return x;
  if (!shape.IsTuple()) {
    auto r = spmd::Reshard(b, x, shape, from, to, options_.reshard);
    if (!r.ok()) return absl::Status(r.status().code(), absl::StrCat(op.name(), ": ", r.status().message()));
    if (r->full_rematerialization)
      Warn(absl::StrCat("[SPMD] Involuntary full rematerialization. The compiler cannot go from sharding ",
                        ShardingToString(from), " to ", ShardingToString(to), " efficiently for HLO operation ",
                        op.name(), ". As the last resort, SPMD will replicate the tensor and then partition it "
                        "to obtain the target sharding, which is inefficient."));
    return r->value;
  }
  std::vector<HloInstruction*> parts;
  for (int64_t i = 0; i < (int64_t)shape.tuple_shapes().size(); ++i) {
    HloInstruction* e = b.b().GetTupleElement(x, i);
    if (e == nullptr) return b.b().status();
    auto r = Reshard(b, e, shape.tuple_shapes(i), SubSharding(from, shape, i), SubSharding(to, shape, i), op);
    if (!r.ok()) return r.status();
    parts.push_back(*r);
  }
  HloInstruction* t = b.b().Tuple(parts);
  if (t == nullptr) return b.b().status();
  return t;
}

absl::StatusOr<HloInstruction*> Partitioner::Get(SpmdBuilder& b, const HloInstruction* orig, const HloSharding& want_in) {
  auto it = values_.find(orig);
  if (it == values_.end()) return absl::InternalError(absl::StrCat("spmd: ", orig->name(), " used before partitioned"));
  HloSharding want = ExpandSharding(want_in, orig->shape());
  const PValue& v = it->second;
  if (v.sharding == want) return v.hlo;
  // Manual values are the same on both sides of a replicated/manual boundary inside a
  // shard_map body (constants there are written in local shapes).
  if (AllManual(want) && !AnyTiled(v.sharding)) return v.hlo;
  auto key = std::make_pair(orig, ShardingToString(want));
  if (auto c = reshard_cache_.find(key); c != reshard_cache_.end()) return c->second;
  auto r = Reshard(b, v.hlo, orig->shape(), v.sharding, want, *orig);
  if (!r.ok()) return r.status();
  reshard_cache_[key] = *r;
  return *r;
}

// --- generic ops ----------------------------------------------------------------------------------

// Every operand gathered, the op run on whole arrays; its users slice what they need.
absl::Status Partitioner::HandleReplicated(SpmdBuilder& b, const HloInstruction& inst, bool warn) {
  std::vector<HloInstruction*> ops;
  bool gathered = false;
  for (const HloInstruction* op : inst.operands()) {
    const PValue& v = ValueOf(op);
    gathered |= AnyTiled(v.sharding);
    auto x = Get(b, op, UniformSharding(op->shape(), ReplicatedSharding()));
    if (!x.ok()) return x.status();
    ops.push_back(*x);
  }
  if (warn && gathered)
    Warn(absl::StrCat("[SPMD] Involuntary full rematerialization: hloc partitions no ", std::string(HloOpcodeString(inst.opcode())),
                      " of this form; HLO operation ", inst.name(), " runs on whole operands on every device."));
  auto clone = CloneLocal(b, inst, ops, inst.shape());
  if (!clone.ok()) return clone.status();
  Set(&inst, *clone, UniformSharding(inst.shape(), ReplicatedSharding()));
  return absl::OkStatus();
}

// Inside a shard_map body every value already is the device's own: the op is copied.
absl::Status Partitioner::HandleManual(SpmdBuilder& b, const HloInstruction& inst) {
  std::vector<HloInstruction*> ops;
  for (const HloInstruction* op : inst.operands()) {
    auto x = Get(b, op, UniformSharding(op->shape(), ManualSharding()));
    if (!x.ok()) return x.status();
    ops.push_back(*x);
  }
  auto clone = CloneLocal(b, inst, ops, inst.shape());
  if (!clone.ok()) return clone.status();
  Set(&inst, *clone, ShardingOf(&inst));
  return absl::OkStatus();
}

namespace {

// Local attributes of an op whose split dims it leaves whole: those dims keep their local size.
void LocalizeAttributes(HloInstruction& inst, const Shape& local_operand0) {
  InstructionAttributes& a = inst.mutable_attrs();
  switch (inst.opcode()) {
    case O::kSlice:
      for (int64_t d = 0; d < (int64_t)a.slice.size(); ++d)
        if (local_operand0.dimensions(d) != inst.operand(0)->shape().dimensions(d) || true) {
          // Untouched dims (full range, stride 1) follow the local size.
          if (a.slice[d].start == 0 && a.slice[d].stride == 1 && a.slice[d].limit >= local_operand0.dimensions(d) &&
              inst.shape().dimensions(d) != local_operand0.dimensions(d))
            a.slice[d].limit = local_operand0.dimensions(d);
        }
      break;
    default: break;
  }
}

}  // namespace

// Ops whose operand shardings follow from the result's: each operand is resharded to what the
// result needs of it (sharding_rules.h, backward), the op runs on shards, and the result is in
// the sharding those operands give (forward), resharded by users as needed.
absl::Status Partitioner::HandleByOperands(SpmdBuilder& b, const HloInstruction& inst) {
  HloSharding target = ShardingOf(&inst);
  ShardingMap want_map;
  want_map[&inst] = target;
  for (const HloInstruction* op : inst.operands()) want_map[op] = ValueOf(op).sharding;
  ShardingMap got_map;
  std::vector<HloInstruction*> ops;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction* op = inst.operand(i);
    std::optional<HloSharding> want = InferForOperand(inst, i, want_map, n());
    // A tuple element is read where the tuple is: no data moves.
    if (inst.opcode() == O::kGetTupleElement) want = ValueOf(op).sharding;
    if (!want || (op->shape().IsArray() && op->shape().rank() == 0)) want = UniformSharding(op->shape(), ReplicatedSharding());
    got_map[op] = ExpandSharding(*want, op->shape());
  }
  std::optional<HloSharding> out = InferFromOperands(inst, got_map, n());
  // A broadcast makes any split of its result locally (its operand is cut to match).
  if (inst.opcode() == O::kBroadcast) out = target;
  if (!out) return HandleReplicated(b, inst, true);
  // The operands must agree with what the result says of them (an elementwise op whose
  // operands the rules could not align): otherwise run it replicated.
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction* op = inst.operand(i);
    if (op->shape().rank() == inst.shape().rank() && inst.IsElementwise() && !(got_map[op] == ExpandSharding(*out, op->shape())))
      return HandleReplicated(b, inst, true);
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    auto x = Get(b, inst.operand(i), got_map[inst.operand(i)]);
    if (!x.ok()) return x.status();
    ops.push_back(*x);
  }
  HloSharding result = ExpandSharding(*out, inst.shape());
  Shape local = LocalShape(inst.shape(), result);
  auto clone = CloneInstruction(inst, ops);
  clone->mutable_attrs().sharding.reset();
  if (inst.opcode() == O::kSlice) LocalizeAttributes(*clone, ops[0]->shape());
  if (inst.opcode() == O::kDynamicSlice)
    for (int64_t d = 0; d < local.rank(); ++d) clone->mutable_attrs().dynamic_slice_sizes[d] = local.dimensions(d);
  auto added = AddLocal(b, std::move(clone), local);
  if (!added.ok()) return added.status();
  Set(&inst, *added, result);
  return absl::OkStatus();
}

// --- custom calls -----------------------------------------------------------------------------------

absl::Status Partitioner::HandleCustomCall(SpmdBuilder& b, const HloInstruction& inst) {
  const std::string& target = inst.attrs().custom_call_target;
  if (target == "Sharding") {
    auto x = Get(b, inst.operand(0), ShardingOf(&inst));
    if (!x.ok()) return x.status();
    Set(&inst, *x, ShardingOf(&inst));
    return absl::OkStatus();
  }
  if (target == "xla.sdy.GlobalToLocalShape" || target == "SPMDFullToShardShape") {
    // The operand's shard is the manual value: its sharding is what the operand was given.
    const HloInstruction* op = inst.operand(0);
    auto x = Get(b, op, ShardingOf(op));
    if (!x.ok()) return x.status();
    if (!((*x)->shape().dimensions() == inst.shape().dimensions()))
      return absl::InvalidArgumentError(absl::StrCat(inst.name(), ": the shard of ", op->name(), " is ",
                                                     (*x)->shape().ToString(), ", not the local shape ",
                                                     inst.shape().ToString()));
    Set(&inst, *x, ShardingOf(&inst));
    return absl::OkStatus();
  }
  if (target == "xla.sdy.LocalToGlobalShape" || target == "SPMDShardToFullShape") {
    HloSharding out = ShardingOf(&inst);
    std::vector<HloInstruction*> parts;
    for (const HloInstruction* op : inst.operands()) {
      auto x = Get(b, op, UniformSharding(op->shape(), ManualSharding()));
      if (!x.ok()) return x.status();
      parts.push_back(*x);
    }
    HloInstruction* v = inst.shape().IsTuple() ? b.b().Tuple(parts) : parts.at(0);
    if (v == nullptr) return b.b().status();
    if (!(v->shape().dimensions() == LocalShape(inst.shape(), out).dimensions()) && !inst.shape().IsTuple())
      return absl::InvalidArgumentError(absl::StrCat(inst.name(), ": local shape ", v->shape().ToString(),
                                                     " is not the shard shape of ", inst.shape().ToString()));
    Set(&inst, v, out);
    return absl::OkStatus();
  }
  if (AllManual(ShardingOf(&inst))) return HandleManual(b, inst);
  return HandleReplicated(b, inst, true);
}

// --- control flow -------------------------------------------------------------------------------

absl::Status Partitioner::HandleWhile(SpmdBuilder& b, const HloInstruction& inst) {
  HloSharding w = ShardingOf(&inst);
  auto init = Get(b, inst.operand(0), w);
  if (!init.ok()) return init.status();
  auto cond = PartitionComputation(*inst.while_condition(), {w}, ReplicatedSharding());
  if (!cond.ok()) return cond.status();
  auto body = PartitionComputation(*inst.while_body(), {w}, w);
  if (!body.ok()) return body.status();
  auto clone = CloneInstruction(inst, {*init});
  clone->mutable_attrs().sharding.reset();
  clone->mutable_called_computations() = {*cond, *body};
  auto added = AddLocal(b, std::move(clone), LocalShape(inst.shape(), w));
  if (!added.ok()) return added.status();
  Set(&inst, *added, w);
  return absl::OkStatus();
}

// Conditional and call: each callee's parameters take the shardings propagation gave them,
// their roots the result's.
absl::Status Partitioner::HandleCalls(SpmdBuilder& b, const HloInstruction& inst) {
  HloSharding r = ShardingOf(&inst);
  std::vector<HloInstruction*> ops;
  std::vector<HloComputation*> callees;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction* op = inst.operand(i);
    HloSharding want = UniformSharding(op->shape(), ReplicatedSharding());
    if (inst.opcode() == O::kCall) want = ShardingOf(inst.to_apply()->parameter_instruction(i));
    if (inst.opcode() == O::kConditional && i > 0)
      want = ShardingOf(inst.called_computations()[i - 1]->parameter_instruction(0));
    auto x = Get(b, op, want);
    if (!x.ok()) return x.status();
    ops.push_back(*x);
  }
  for (const HloComputation* c : inst.called_computations()) {
    std::vector<HloSharding> params;
    for (const HloInstruction* p : c->parameters()) params.push_back(ShardingOf(p));
    auto pc = PartitionComputation(*c, params, r);
    if (!pc.ok()) return pc.status();
    callees.push_back(*pc);
  }
  auto clone = CloneInstruction(inst, ops);
  clone->mutable_attrs().sharding.reset();
  clone->mutable_called_computations() = callees;
  // A shard_map body is called late (inlineable="xla_late"): once partitioned it may inline.
  clone->mutable_attrs().frontend_attributes.erase("inlineable");
  auto added = AddLocal(b, std::move(clone), LocalShape(inst.shape(), r));
  if (!added.ok()) return added.status();
  Set(&inst, *added, r);
  return absl::OkStatus();
}

// --- dispatch ---------------------------------------------------------------------------------------

absl::Status Partitioner::Handle(SpmdBuilder& b, const HloInstruction& inst) {
  HloSharding s = ShardingOf(&inst);
  if (whole_ && !AllManual(s) && inst.opcode() != O::kWhile && inst.opcode() != O::kConditional &&
      inst.opcode() != O::kCall) {
    if (inst.opcode() == O::kCustomCall && inst.attrs().custom_call_target == "Sharding") {
      auto x = Get(b, inst.operand(0), s);
      if (!x.ok()) return x.status();
      Set(&inst, *x, s);
      return absl::OkStatus();
    }
    if (inst.opcode() != O::kCustomCall || !AnyManualOperand(inst)) return HandleReplicated(b, inst, false);
  }
  switch (inst.opcode()) {
    case O::kCustomCall: return HandleCustomCall(b, inst);
    case O::kWhile: return HandleWhile(b, inst);
    case O::kConditional: case O::kCall: return HandleCalls(b, inst);
    default: break;
  }
  if (AllManual(s)) return HandleManual(b, inst);
  switch (inst.opcode()) {
    case O::kDot: return HandleDot(b, inst);
    case O::kConvolution: return HandleConvolution(b, inst);
    case O::kReduce: return HandleReduce(b, inst);
    case O::kGather: return HandleGather(b, inst);
    case O::kScatter: return HandleScatter(b, inst);
    case O::kTopK: return HandleTopK(b, inst);
    case O::kConstant: case O::kIota: case O::kRng: case O::kRngBitGenerator: case O::kPartitionId:
    case O::kReplicaId: case O::kAfterAll:
      return HandleReplicated(b, inst, false);
    case O::kBroadcast: case O::kTranspose: case O::kReshape: case O::kSlice: case O::kPad:
    case O::kDynamicSlice: case O::kDynamicUpdateSlice: case O::kReverse: case O::kConcatenate:
    case O::kSort: case O::kGetTupleElement: case O::kTuple: case O::kCopy: case O::kOptimizationBarrier:
      return HandleByOperands(b, inst);
    default: break;
  }
  if (inst.IsElementwise() && !inst.shape().IsTuple()) return HandleByOperands(b, inst);
  return HandleReplicated(b, inst, true);
}

absl::StatusOr<HloComputation*> Partitioner::PartitionComputation(const HloComputation& c,
                                                                  const std::vector<HloSharding>& params,
                                                                  const HloSharding& root) {
  HloComputation* out = expanders::AddEmptyComputation(module_, *ctx_.computation_names, c.name());
  SpmdBuilder b(ctx_, out);
  for (const HloInstruction* p : c.parameters()) {
    int64_t i = p->attrs().parameter_number;
    HloSharding s = ExpandSharding(i < (int64_t)params.size() ? params[i] : ShardingOf(p), p->shape());
    HloInstruction* np = b.b().Parameter(i, LocalShape(p->shape(), s), p->name());
    if (np == nullptr) return b.b().status();
    Set(p, np, s);
  }
  for (const HloInstruction* inst : c.MakeInstructionPostOrder()) {
    if (inst->opcode() == O::kParameter) continue;
    b.b().set_metadata(&inst->attrs().metadata);
    if (absl::Status st = Handle(b, *inst); !st.ok()) return st;
    if (!b.b().ok()) return b.b().status();
  }
  auto r = Get(b, c.root_instruction(), ExpandSharding(root, c.root_instruction()->shape()));
  if (!r.ok()) return r.status();
  out->set_root_instruction(*r);
  return out;
}

// --- the pass -----------------------------------------------------------------------------------------

bool IsPartitioned(const HloModule& module) {
  const HloModuleConfig& c = module.config();
  return c.spmd_output_sharding.has_value() || !c.spmd_parameters_shardings.empty() || module.is_scheduled();
}

namespace {

int64_t MaxChannelId(const HloModule& module) {
  int64_t m = 0;
  for (const auto& c : module.computations())
    if (c)
      for (const auto& inst : c->instructions())
        if (inst && inst->attrs().channel_id) m = std::max<int64_t>(m, *inst->attrs().channel_id);
  return m;
}

// Drops the computations the new entry no longer reaches (the global originals).
absl::Status RemoveUnreachable(HloModule& module) {
  absl::flat_hash_set<const HloComputation*> live;
  std::vector<const HloComputation*> stack = {module.entry_computation()};
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    if (!live.insert(c).second) continue;
    for (const auto& inst : c->instructions())
      if (inst)
        for (const HloComputation* callee : inst->called_computations()) stack.push_back(callee);
  }
  absl::flat_hash_set<const HloComputation*> dead;
  for (const auto& c : module.computations())
    if (c && !live.contains(c.get())) dead.insert(c.get());
  return module.RemoveComputations(dead);
}

}  // namespace

absl::StatusOr<bool> PartitionModule(HloModule& module, const SpmdOptions& options) {
  if (module.config().num_partitions <= 1 || IsPartitioned(module)) return false;
  HloComputation* entry = module.entry_computation();
  NameUniquer inst_names = InstructionNameUniquer(module);
  NameUniquer comp_names = ComputationNameUniquer(module);
  SpmdContext ctx;
  ctx.module = &module;
  ctx.num_devices = module.config().num_partitions;
  ctx.next_channel_id = MaxChannelId(module) + 1;
  ctx.instruction_names = &inst_names;
  ctx.computation_names = &comp_names;
  Partitioner p(module, ctx, options);
  std::vector<HloSharding> params;
  for (const HloInstruction* param : entry->parameters()) params.push_back(p.ShardingOf(param));
  HloSharding root = p.ShardingOf(entry->root_instruction());
  auto partitioned = p.PartitionComputation(*entry, params, root);
  if (!partitioned.ok()) {
    // Never a wrong answer and never a crash: a module the partitioner cannot handle runs whole
    // on every device (shard_map bodies, written per device, still run per device), loudly.
    const std::string why(partitioned.status().message());
    Partitioner whole(module, ctx, options, /*whole=*/true);
    params.clear();
    for (const HloInstruction* param : entry->parameters()) params.push_back(whole.ShardingOf(param));
    root = whole.ShardingOf(entry->root_instruction());
    partitioned = whole.PartitionComputation(*entry, params, root);
    if (!partitioned.ok()) return absl::Status(partitioned.status().code(), absl::StrCat("SPMD partitioning: ", why));
    (options.warnings ? *options.warnings : std::cerr)
        << "[SPMD] hloc could not partition " << module.name() << " (" << why
        << "); every device runs it on whole arrays, which is correct but not faster.\n";
  }
  std::string name = entry->name();
  module.set_entry_computation(*partitioned);
  if (absl::Status st = RemoveUnreachable(module); !st.ok()) return st;
  (*partitioned)->set_name(name);
  for (HloInstruction* param : (*partitioned)->parameters())
    param->mutable_attrs().sharding = params[param->attrs().parameter_number];
  HloModuleConfig& config = module.config();
  config.spmd_parameters_shardings = params;
  config.spmd_output_sharding = root;
  // The entry layout now names per-device shapes.
  if (config.entry_computation_layout) {
    ComputationLayout layout;
    for (const HloInstruction* param : (*partitioned)->parameters()) layout.parameter_shapes.push_back(param->shape());
    layout.result_shape = (*partitioned)->root_instruction()->shape();
    config.entry_computation_layout = layout;
  }
  return true;
}

}  // namespace hloc::spmd
