#include "passes/simplify/elementwise_while_to_map.h"

#include <optional>

#include "absl/container/flat_hash_map.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"
#include "passes/passes.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// The loop state: scalars and arrays, the arrays all of one shape (their dimensions).
std::optional<std::vector<int64_t>> ArrayDims(const Shape& state) {
  if (!state.IsTuple()) return std::nullopt;
  std::optional<std::vector<int64_t>> dims;
  for (const Shape& s : state.tuple_shapes()) {
    if (!s.IsArray()) return std::nullopt;
    for (int64_t d = 0; d < s.rank(); ++d)
      if (s.is_dynamic_dimension(d)) return std::nullopt;
    if (s.rank() == 0) continue;
    std::vector<int64_t> here(s.dimensions().begin(), s.dimensions().end());
    if (dims && *dims != here) return std::nullopt;
    dims = here;
  }
  return dims;
}

// Whether `comp` (a loop body or condition over that state) maps arrays element by element:
// each instruction a scalar or an array of `dims`, of a kind the scalar copy can mirror.
bool Elementwise(const HloComputation& comp, const std::vector<int64_t>& dims) {
  for (const auto& inst : comp.instructions()) {
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) return false;
    const Shape& s = inst->shape();
    if (s.IsArray() && s.rank() != 0 &&
        std::vector<int64_t>(s.dimensions().begin(), s.dimensions().end()) != dims)
      return false;
    switch (inst->opcode()) {
      case O::kParameter: case O::kTuple:
        break;
      case O::kGetTupleElement:
        if (inst->operand(0)->opcode() != O::kParameter) return false;
        break;
      case O::kConstant:
        if (!s.IsArray() || s.rank() != 0) return false;  // a scalar; arrays come from broadcasts
        break;
      case O::kBroadcast:
        if (inst->operand(0)->shape().rank() != 0) return false;
        break;
      default:
        if (!inst->IsElementwise() || !s.IsArray() || !inst->called_computations().empty()) return false;
    }
  }
  return true;
}

Shape Scalar(const Shape& s) { return s.IsTuple() ? s : Shape(s.element_type(), {}); }

// A copy of `comp` over scalars: arrays become their element type, broadcasts of a scalar the
// scalar itself, tuples tuples of scalars.
HloComputation* ScalarCopy(HloModule& module, cf::Builder& cb, const HloComputation& comp) {
  HloComputation* out = expanders::AddEmptyComputation(module, cb.names.computations, comp.name() + ".scalar");
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* inst : comp.MakeInstructionPostOrder()) {
    if (inst->opcode() == O::kBroadcast) {
      map[inst] = map.at(inst->operand(0));
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (HloInstruction* op : inst->operands()) operands.push_back(map.at(op));
    std::unique_ptr<HloInstruction> copy = CloneInstruction(*inst, operands);
    if (inst->shape().IsTuple()) {
      std::vector<Shape> parts;
      for (const Shape& p : inst->shape().tuple_shapes()) parts.push_back(Scalar(p));
      copy->mutable_shape() = Shape::Tuple(parts);
    } else {
      copy->mutable_shape() = Scalar(inst->shape());
    }
    map[inst] = cb.Add(out, std::move(copy), nullptr, inst->name());
  }
  out->set_root_instruction(map.at(comp.root_instruction()));
  return out;
}

// The state element read after the loop: the one array index every user reads, or nullopt
// (several, a scalar, or the tuple itself).
std::optional<int64_t> ReadElement(const HloInstruction& loop) {
  std::optional<int64_t> index;
  for (const HloInstruction* u : loop.users()) {
    if (u->opcode() != O::kGetTupleElement) return std::nullopt;
    const int64_t k = u->attrs().tuple_index;
    if (u->user_count() == 0 && !u->IsRoot()) continue;
    if (index && *index != k) return std::nullopt;
    index = k;
  }
  if (!index || loop.shape().tuple_shapes()[*index].rank() == 0) return std::nullopt;
  return index;
}

absl::StatusOr<bool> Rewrite(HloModule& module, cf::Builder& cb, HloInstruction* loop) {
  const std::optional<std::vector<int64_t>> dims = ArrayDims(loop->shape());
  if (!dims || loop->IsRoot() || cf::HasControlDependencies(*loop)) return false;
  if (!Elementwise(*loop->while_body(), *dims) || !Elementwise(*loop->while_condition(), *dims)) return false;
  const std::optional<int64_t> read = ReadElement(*loop);
  if (!read) return false;
  HloComputation* comp = loop->parent();
  HloComputation* body = ScalarCopy(module, cb, *loop->while_body());
  HloComputation* cond = ScalarCopy(module, cb, *loop->while_condition());
  // The map's computation: its parameters are the state's elements, as scalars.
  const std::vector<Shape>& parts = loop->shape().tuple_shapes();
  HloComputation* apply = expanders::AddEmptyComputation(module, cb.names.computations, loop->name() + ".element");
  expanders::ExpanderBuilder in(apply, &cb.names.instructions);
  std::vector<HloInstruction*> params;
  for (size_t k = 0; k < parts.size(); ++k)
    params.push_back(in.Parameter(static_cast<int64_t>(k), Scalar(parts[k]), "state." + std::to_string(k)));
  HloInstruction* init = in.Tuple(params);
  std::vector<Shape> scalar_parts;
  for (const Shape& p : parts) scalar_parts.push_back(Scalar(p));
  auto w = std::make_unique<HloInstruction>(O::kWhile, Shape::Tuple(scalar_parts),
                                            cb.names.instructions.GetUniqueName(loop->name() + ".scalar"));
  w->AppendOperand(init);
  w->mutable_called_computations() = {cond, body};
  w->mutable_attrs().metadata = loop->attrs().metadata;
  HloInstruction* scalar_loop = in.Add(std::move(w));
  HloInstruction* result = in.GetTupleElement(scalar_loop, *read);
  if (!in.ok()) return in.status();
  apply->set_root_instruction(result);
  // The map over the initial state, scalars broadcast to the arrays' shape.
  expanders::ExpanderBuilder out(comp, &cb.names.instructions, loop);
  out.set_metadata(&loop->attrs().metadata);
  const Shape array(parts[*read].element_type(), *dims);
  std::vector<HloInstruction*> operands;
  for (size_t k = 0; k < parts.size(); ++k) {
    HloInstruction* x = out.GetTupleElement(loop->operand(0), static_cast<int64_t>(k));
    operands.push_back(parts[k].rank() == 0 ? out.BroadcastScalar(x, expanders::ShapeWithType(array, parts[k].element_type())) : x);
  }
  auto map = std::make_unique<HloInstruction>(O::kMap, array, cb.names.instructions.GetUniqueName(loop->name() + ".map"));
  for (HloInstruction* op : operands) map->AppendOperand(op);
  map->mutable_attrs().dimensions.clear();
  for (int64_t d = 0; d < array.rank(); ++d) map->mutable_attrs().dimensions.push_back(d);
  map->mutable_called_computations().push_back(apply);
  HloInstruction* mapped = out.Add(std::move(map));
  if (!out.ok()) return out.status();
  const std::vector<HloInstruction*> users(loop->users().begin(), loop->users().end());
  for (HloInstruction* u : users)
    if (u->attrs().tuple_index == *read) HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(u, mapped));
  return true;
}

}  // namespace

absl::StatusOr<bool> ElementwiseWhileToMap::Run(HloModule& module, PassContext& context) {
  (void)context;
  std::vector<HloInstruction*> loops;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == O::kWhile) loops.push_back(inst.get());
  }
  cf::Builder cb(module);
  bool changed = false;
  for (HloInstruction* loop : loops) {
    absl::StatusOr<bool> r = Rewrite(module, cb, loop);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  return changed;
}

void RegisterElementwiseWhileToMapPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      ElementwiseWhileToMap::kName,
      "a while loop that maps one array element by element -> an elementwise map whose scalar computation "
      "holds the loop (one kernel, the loop inside each thread)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<ElementwiseWhileToMap>(); }});
}

}  // namespace hloc
