#include "passes/collectives/async_collective_creator.h"

#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

Shape OperandsShape(const HloInstruction& inst) {
  if (inst.operand_count() == 1) return inst.operand(0)->shape();
  std::vector<Shape> shapes;
  for (const HloInstruction* op : inst.operands()) shapes.push_back(op->shape());
  return Shape::Tuple(std::move(shapes));
}

struct Pair {
  HloOpcode start, done;
};

// The dedicated start/done opcodes, when the collective has them.
std::optional<Pair> DedicatedPair(HloOpcode op) {
  switch (op) {
    case O::kAllReduce: return Pair{O::kAllReduceStart, O::kAllReduceDone};
    case O::kAllGather: return Pair{O::kAllGatherStart, O::kAllGatherDone};
    case O::kCollectivePermute: return Pair{O::kCollectivePermuteStart, O::kCollectivePermuteDone};
    default: return std::nullopt;
  }
}

Shape StartShape(const HloInstruction& inst) {
  const Shape u32 = expanders::MakeShape(PrimitiveType::U32, {});
  switch (inst.opcode()) {
    case O::kAllReduce: return inst.shape();
    case O::kAllGather: return Shape::Tuple({OperandsShape(inst), inst.shape()});
    default:  // collective-permute: (input, output, context); the in-place form's input is operand 0
      return Shape::Tuple({IsInPlacePermute(inst) ? inst.operand(0)->shape() : OperandsShape(inst), inst.shape(),
                           u32, u32});
  }
}

// start / done with the collective's operands, attributes and reducer; returns the done.
HloInstruction* MakeDedicated(HloInstruction* inst, Pair pair, NameUniquer& names) {
  HloComputation& c = *inst->parent();
  auto start = std::make_unique<HloInstruction>(pair.start, StartShape(*inst), std::string(HloOpcodeString(pair.start)));
  for (HloInstruction* op : inst->operands()) start->AppendOperand(op);
  start->mutable_attrs() = inst->attrs();
  start->mutable_called_computations() = inst->called_computations();
  HloInstruction* s = AddInstructionWithUniqueName(c, std::move(start), names, inst);
  auto done = std::make_unique<HloInstruction>(pair.done, inst->shape(), absl::StrCat(inst->name(), ".done"));
  done->AppendOperand(s);
  done->mutable_attrs().metadata = inst->attrs().metadata;
  return AddInstructionWithUniqueName(c, std::move(done), names, inst);
}

// async-start / async-done around a computation that runs the collective; returns the done.
HloInstruction* MakeWrapped(HloInstruction* inst, NameUniquer& names, NameUniquer& computation_names) {
  HloModule& module = *inst->parent()->parent();
  HloComputation* wrapped = expanders::AddEmptyComputation(
      module, computation_names, absl::StrCat("wrapped_", std::string(HloOpcodeString(inst->opcode()))));
  std::vector<HloInstruction*> params;
  std::vector<Shape> param_shapes;
  for (int64_t i = 0; i < inst->operand_count(); ++i) {
    const Shape& shape = inst->operand(i)->shape();
    auto p = std::make_unique<HloInstruction>(O::kParameter, shape, absl::StrCat("param_", i));
    p->mutable_attrs().parameter_number = i;
    params.push_back(AddInstructionWithUniqueName(*wrapped, std::move(p), names));
    param_shapes.push_back(shape);
  }
  HloInstruction* body = AddInstructionWithUniqueName(*wrapped, CloneInstruction(*inst, params), names);
  wrapped->set_root_instruction(body);
  HloComputation& c = *inst->parent();
  const Shape s32 = expanders::MakeShape(PrimitiveType::S32, {});
  auto start = std::make_unique<HloInstruction>(
      O::kAsyncStart, Shape::Tuple({Shape::Tuple(param_shapes), inst->shape(), s32}), "async-start");
  for (HloInstruction* op : inst->operands()) start->AppendOperand(op);
  start->mutable_called_computations() = {wrapped};
  start->mutable_attrs().metadata = inst->attrs().metadata;
  HloInstruction* s = AddInstructionWithUniqueName(c, std::move(start), names, inst);
  auto done = std::make_unique<HloInstruction>(O::kAsyncDone, inst->shape(), absl::StrCat(inst->name(), ".done"));
  done->AppendOperand(s);  // the computation is the start's alone (the call graph's one caller)
  return AddInstructionWithUniqueName(c, std::move(done), names, inst);
}

bool Convertible(const HloInstruction& inst, const std::set<std::string>& kinds) {
  if (HasControlDependencies(inst)) return false;
  switch (inst.opcode()) {
    case O::kAllReduce: case O::kAllGather: case O::kCollectivePermute: case O::kReduceScatter:
    case O::kAllToAll: case O::kCollectiveBroadcast:
      return kinds.count(std::string(HloOpcodeString(inst.opcode()))) > 0;
    default:
      return false;
  }
}

}  // namespace

const std::set<std::string>& AsyncCollectiveKinds() {
  static const std::set<std::string> kinds = {"all-reduce", "all-gather", "collective-permute",
                                              "reduce-scatter", "all-to-all", "collective-broadcast"};
  return kinds;
}

absl::StatusOr<bool> CreateAsyncCollectives(HloModule& module, const std::set<std::string>& kinds) {
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computation_names = ComputationNameUniquer(module);
  std::vector<HloInstruction*> todo;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    for (HloInstruction* inst : c->MakeInstructionPostOrder())
      if (Convertible(*inst, kinds)) todo.push_back(inst);
  }
  for (HloInstruction* inst : todo) {
    std::optional<Pair> pair = DedicatedPair(inst->opcode());
    const std::string name = inst->name();
    HloInstruction* done = pair ? MakeDedicated(inst, *pair, names) : MakeWrapped(inst, names, computation_names);
    absl::StatusOr<bool> replaced = ReplaceInstruction(inst, done, {.remove_unused_operands = false});
    if (!replaced.ok()) return replaced.status();
    if (!*replaced) return absl::InternalError(absl::StrCat("could not replace %", name, " by its async pair"));
    // The start takes the collective's name (now free): schedules, thunks and runtime errors
    // keep naming the op the user wrote; the done is NAME.done.
    done->operand(0)->set_name(name);
  }
  return !todo.empty();
}

}  // namespace hloc
