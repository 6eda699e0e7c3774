#include "passes/sort/stable_sort_expander.h"

#include <limits>

#include "passes/expanders/expander_util.h"
#include "passes/passes.h"
#include "passes/simplify/control_flow_util.h"

namespace hloc {

bool IsPositionIota(const HloInstruction& op, int64_t dim) {
  if (op.opcode() != HloOpcode::kIota || op.attrs().iota_dimension != dim || !op.shape().IsArray()) return false;
  const PrimitiveType t = op.shape().element_type();
  if (!IsIntegral(t)) return false;
  // The position must not wrap: an iota of a narrow type over a long row repeats values.
  const int64_t n = op.shape().dimensions(dim);
  const int bits = ByteWidth(t) * 8 - (IsSignedIntegral(t) ? 1 : 0);
  return bits >= 63 || n <= (int64_t{1} << bits);
}

namespace {

// The operand holding each element's position along `dim`, or -1.
int64_t FindPositionOperand(const HloInstruction& sort, int64_t dim) {
  for (int64_t i = 0; i < sort.operand_count(); ++i)
    if (IsPositionIota(*sort.operand(i), dim)) return i;
  return -1;
}

// A copy of `old` over `operands` sort operands (2 parameters each) that orders like `old` and
// breaks ties by the values of operand `pos` (parameters 2*pos, 2*pos+1): less(a, b) or
// (not less(b, a) and pos(a) < pos(b)).
absl::StatusOr<HloComputation*> TieBreakingComparator(cf::Builder& cb, NameUniquer& names, const HloComputation& old,
                                                      int64_t operands, int64_t pos, PrimitiveType pos_type) {
  HLOC_CF_ASSIGN_OR_RETURN(HloComputation* cmp, cb.CloneComputation(old));
  for (int64_t p = cmp->num_parameters(); p < 2 * operands; ++p) {
    auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, Shape(pos_type, {}),
                                                  names.GetUniqueName(p % 2 == 0 ? "position.lhs" : "position.rhs"));
    param->mutable_attrs().parameter_number = p;
    cmp->AddInstruction(std::move(param));
  }
  HloInstruction* less_ab = cmp->root_instruction();
  std::vector<HloInstruction*> swapped;
  for (int64_t p = 0; p < old.num_parameters(); ++p) swapped.push_back(cmp->parameter_instruction(p ^ 1));
  HLOC_CF_ASSIGN_OR_RETURN(HloInstruction* less_ba, cb.Inline(cmp, old, swapped, less_ab));
  expanders::ExpanderBuilder b(cmp, &names);
  HloInstruction* earlier = b.Compare(cmp->parameter_instruction(2 * pos), cmp->parameter_instruction(2 * pos + 1),
                                      ComparisonDirection::kLt);
  HloInstruction* root = b.Or(less_ab, b.Binary(HloOpcode::kAnd, b.Unary(HloOpcode::kNot, less_ba), earlier));
  if (!b.ok()) return b.status();
  cmp->set_root_instruction(root);
  return cmp;
}

absl::StatusOr<bool> Expand(cf::Builder& cb, NameUniquer& names, HloInstruction* sort,
                            std::vector<HloComputation*>& orphans) {
  const int64_t dim = sort->attrs().dimensions[0];
  HloComputation* comp = sort->parent();
  const HloInstruction* keys = sort->operand(0);
  int64_t pos = FindPositionOperand(*sort, dim);
  HloInstruction* iota = nullptr;
  if (pos < 0) {
    const int64_t n = keys->shape().dimensions(dim);
    Shape shape = keys->shape();
    shape.set_element_type(n <= std::numeric_limits<int32_t>::max() ? PrimitiveType::S32 : PrimitiveType::S64);
    expanders::ExpanderBuilder b(comp, &names, sort);
    iota = b.Iota(shape, dim);
    if (!b.ok()) return b.status();
    pos = sort->operand_count();
  }
  const int64_t operands = sort->operand_count() + (iota != nullptr ? 1 : 0);
  const PrimitiveType pos_type = iota != nullptr ? iota->shape().element_type() : sort->operand(pos)->shape().element_type();
  HLOC_CF_ASSIGN_OR_RETURN(HloComputation* cmp,
                           TieBreakingComparator(cb, names, *sort->to_apply(), operands, pos, pos_type));
  orphans.push_back(sort->to_apply());
  if (iota == nullptr) {
    sort->mutable_called_computations()[0] = cmp;
    sort->mutable_attrs().is_stable = false;
    return true;
  }
  std::vector<Shape> shapes;
  for (const HloInstruction* op : sort->operands()) shapes.push_back(op->shape());
  shapes.push_back(iota->shape());
  auto expanded = std::make_unique<HloInstruction>(HloOpcode::kSort, Shape::Tuple(shapes));
  for (HloInstruction* op : sort->operands()) expanded->AppendOperand(op);
  expanded->AppendOperand(iota);
  expanded->mutable_attrs().dimensions = sort->attrs().dimensions;
  expanded->mutable_attrs().is_stable = false;
  expanded->mutable_attrs().metadata = sort->attrs().metadata;
  expanded->mutable_called_computations().push_back(cmp);
  HloInstruction* added = cb.Add(comp, std::move(expanded), sort, "sort");
  HloInstruction* replacement;
  if (!sort->shape().IsTuple()) {
    replacement = cb.Gte(comp, added, 0, sort);
  } else {
    std::vector<HloInstruction*> parts;
    for (int64_t i = 0; i + 1 < operands; ++i) parts.push_back(cb.Gte(comp, added, i, sort));
    replacement = cb.Tuple(comp, parts, sort);
  }
  HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(sort, replacement));
  return true;
}

}  // namespace

absl::StatusOr<bool> StableSortExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  std::vector<HloInstruction*> sorts;
  for (const auto& comp : module.computations()) {
    if (comp->IsFusionComputation()) continue;
    for (const auto& inst : comp->instructions())
      if (inst->opcode() == HloOpcode::kSort && inst->attrs().is_stable && inst->attrs().dimensions.size() == 1 &&
          inst->to_apply() != nullptr && inst->operand_count() > 0 &&
          inst->operand(0)->shape().dimensions(inst->attrs().dimensions[0]) >= min_row_length_ &&
          !cf::HasControlDependencies(*inst))
        sorts.push_back(inst.get());
  }
  if (sorts.empty()) return false;
  cf::Builder cb(module);
  NameUniquer& names = cb.names.instructions;  // one uniquer for the clones and the new instructions
  std::vector<HloComputation*> orphans;
  for (HloInstruction* sort : sorts) {
    absl::StatusOr<bool> r = Expand(cb, names, sort, orphans);
    if (!r.ok()) return r.status();
  }
  HLOC_CF_RETURN_IF_ERROR(cf::RemoveUncalledComputations(module, orphans));
  return true;
}

void RegisterStableSortExpanderPass(PassRegistry& registry) {
  registry.Register(PassInfo{
      StableSortExpander::kName,
      "stable sort -> unstable sort whose comparator breaks ties by an iota operand's position",
      {{"min_row_length", OptionType::kInt, OptionValue(int64_t{1}),
        "expand only sorts whose sort dimension has at least this many elements (XLA: every one)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<StableSortExpander>(o.Has("min_row_length") ? o.GetInt("min_row_length") : 1);
      }});
}

}  // namespace hloc
