#include "passes/expanders/select_and_scatter_expander.h"

#include <limits>

#include "absl/container/flat_hash_map.h"
#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

int64_t Elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s.dimensions()) n *= d;
  return n;
}

bool Matches(const HloInstruction& sas) {
  if (sas.opcode() != HloOpcode::kSelectAndScatter || sas.operand_count() != 3) return false;
  if (sas.called_computations().size() != 2 || !sas.called_computations()[0] || !sas.called_computations()[1])
    return false;
  if (!sas.attrs().window) return false;
  const Shape& operand = sas.operand(0)->shape();
  for (const Shape* s : {&sas.shape(), &operand, &sas.operand(1)->shape(), &sas.operand(2)->shape()})
    if (!s->IsArray() || !s->is_static()) return false;
  if (operand.rank() == 0 || Elements(operand) == 0 || Elements(sas.operand(1)->shape()) == 0) return false;
  const Window& w = *sas.attrs().window;
  if (static_cast<int64_t>(w.dimensions.size()) != operand.rank()) return false;
  // A reversed window walks its elements backwards: row-major window order is then not the
  // order of linear indices.
  for (const WindowDimension& d : w.dimensions)
    if (d.window_reversal) return false;
  const HloComputation& select = *sas.called_computations()[0];
  if (select.num_parameters() != 2 || select.root_instruction() == nullptr) return false;
  const Shape& root = select.root_instruction()->shape();
  return root.IsArray() && root.rank() == 0 && root.element_type() == PrimitiveType::PRED;
}

// The value of `comp` applied to `args`, its instructions copied into b's computation.
HloInstruction* Inline(ExpanderBuilder& b, const HloComputation& comp, std::vector<HloInstruction*> args) {
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* inst : comp.MakeInstructionPostOrder()) {
    if (!b.ok()) return nullptr;
    if (inst->opcode() == HloOpcode::kParameter) {
      map[inst] = args[inst->attrs().parameter_number];
      continue;
    }
    std::vector<HloInstruction*> operands;
    for (const HloInstruction* x : inst->operands()) operands.push_back(map.at(x));
    std::unique_ptr<HloInstruction> clone = CloneInstruction(*inst, operands);
    map[inst] = b.Add(std::move(clone));
  }
  return b.ok() ? map.at(comp.root_instruction()) : nullptr;
}

// The reduce-window's reducer over (value, index) pairs: (lhs value, lhs index, rhs value,
// rhs index) -> the pair select-and-scatter would pick (see the header).
HloComputation* MakeReducer(HloModule& module, NameUniquer& computations, NameUniquer& names,
                            const HloComputation& select, PrimitiveType vt, PrimitiveType it, absl::Status& status) {
  HloComputation* comp = expanders::AddEmptyComputation(module, computations, select.name() + ".reduce_window");
  ExpanderBuilder r(comp, &names);
  const Shape sv = expanders::MakeShape(vt, {});
  const Shape si = expanders::MakeShape(it, {});
  HloInstruction* v_l = r.Parameter(0, sv, "operand_lhs");
  HloInstruction* i_l = r.Parameter(1, si, "index_lhs");
  HloInstruction* v_r = r.Parameter(2, sv, "operand_rhs");
  HloInstruction* i_r = r.Parameter(3, si, "index_rhs");
  HloInstruction* lr = Inline(r, select, {v_l, v_r});
  HloInstruction* rl = Inline(r, select, {v_r, v_l});
  HloInstruction* none = r.ScalarConstant(it, -1);
  HloInstruction* lhs_real = r.Compare(i_l, none, ComparisonDirection::kNe);
  HloInstruction* rhs_none = r.Compare(i_r, none, ComparisonDirection::kEq);
  HloInstruction* lhs_earlier = r.Compare(i_l, i_r, ComparisonDirection::kLt);
  // A tie (select agrees both ways): the earlier element when select keeps on ties, else the later.
  HloInstruction* tie_pick = r.Unary(HloOpcode::kNot, r.Xor(lr, lhs_earlier));
  HloInstruction* pick_real = r.Select(r.Xor(lr, rl), lr, tie_pick);
  HloInstruction* pick = r.Or(rhs_none, r.Binary(HloOpcode::kAnd, lhs_real, pick_real));
  HloInstruction* root = r.Tuple({r.Select(pick, v_l, v_r), r.Select(pick, i_l, i_r)});
  if (!r.ok()) {
    status = r.status();
    return nullptr;
  }
  comp->set_root_instruction(root);
  return comp;
}

absl::StatusOr<HloInstruction*> Expand(HloInstruction* sas, NameUniquer& names, NameUniquer& computations) {
  HloModule& module = *sas->parent()->parent();
  HloInstruction* operand = sas->operand(0);
  HloInstruction* source = sas->operand(1);
  HloInstruction* init = sas->operand(2);
  const HloComputation& select = *sas->called_computations()[0];
  HloComputation* scatter_comp = sas->called_computations()[1];
  const PrimitiveType vt = operand->shape().element_type();
  const PrimitiveType st = sas->shape().element_type();
  const int64_t n = Elements(operand->shape());
  const PrimitiveType it = n - 1 <= std::numeric_limits<int32_t>::max() ? PrimitiveType::S32 : PrimitiveType::S64;

  absl::Status status;
  HloComputation* reducer = MakeReducer(module, computations, names, select, vt, it, status);
  if (reducer == nullptr) return status;

  ExpanderBuilder b(sas->parent(), &names, sas);
  b.set_metadata(&sas->attrs().metadata);
  const std::vector<int64_t> dims(operand->shape().dimensions().begin(), operand->shape().dimensions().end());
  const std::vector<int64_t> source_dims(source->shape().dimensions().begin(), source->shape().dimensions().end());
  // Each operand element's row-major position.
  HloInstruction* index = b.Iota(expanders::MakeShape(it, {n}), 0);
  if (dims.size() != 1) index = b.Reshape(index, dims);
  HloInstruction* value_init = b.ScalarConstant(vt, 0);  // never picked: its index is -1
  HloInstruction* index_init = b.ScalarConstant(it, -1);
  if (!b.ok()) return b.status();
  auto rw = std::make_unique<HloInstruction>(
      HloOpcode::kReduceWindow,
      Shape::Tuple({expanders::MakeShape(vt, source_dims), expanders::MakeShape(it, source_dims)}), "reduce-window");
  for (HloInstruction* x : {operand, index, value_init, index_init}) rw->AppendOperand(x);
  rw->mutable_attrs().window = sas->attrs().window;
  rw->mutable_called_computations().push_back(reducer);
  HloInstruction* windows = b.Add(std::move(rw));
  HloInstruction* picked = b.GetTupleElement(windows, 1);
  // Scatter source[w] into a flat buffer at picked[w]; -1 (a window of padding only) is out of
  // bounds and dropped.
  HloInstruction* flat = b.BroadcastScalar(init, expanders::MakeShape(st, {n}));
  if (!b.ok()) return b.status();
  auto scatter = std::make_unique<HloInstruction>(HloOpcode::kScatter, expanders::MakeShape(st, {n}), "scatter");
  for (HloInstruction* x : {flat, picked, source}) scatter->AppendOperand(x);
  ScatterDimensionNumbers dn;
  dn.inserted_window_dims = {0};
  dn.scatter_dims_to_operand_dims = {0};
  dn.index_vector_dim = static_cast<int64_t>(source_dims.size());
  scatter->mutable_attrs().scatter_dimension_numbers = dn;
  scatter->mutable_attrs().indices_are_sorted = false;
  scatter->mutable_attrs().unique_indices = false;
  scatter->mutable_called_computations().push_back(scatter_comp);
  HloInstruction* result = b.Add(std::move(scatter));
  if (dims.size() != 1) result = b.ReshapeTo(result, sas->shape());
  if (!b.ok()) return b.status();
  return result;
}

}  // namespace

absl::StatusOr<bool> SelectAndScatterExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computations = ComputationNameUniquer(module);
  return expanders::RunOpExpander(
      module, [](const HloInstruction& inst) { return Matches(inst); },
      [&](HloInstruction* sas) { return Expand(sas, names, computations); });
}

}  // namespace hloc
