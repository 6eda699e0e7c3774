// cse, after XLA's HloCSE (xla/hlo/transforms/simplifiers/hlo_cse.cc).
//
// Constants merge first (same shape and bits; one map lookup each, so thousands of scalar
// constants stay cheap). Then every instruction, in post order, is looked up among the
// representatives met so far: the lookup hashes the opcode, dimensions, operands (sorted for
// commutative ops) and the main attributes, and confirms with the full identity check. Iotas
// count as the same operand when they are identical, as XLA's eq_instructions says.
#include "passes/simplify/hlo_cse.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;

// XLA skips instructions that a frontend wants fused whole.
constexpr char kMustFuseAttr[] = "MUST_FUSE";

bool ShapesMatch(const Shape& a, const Shape& b, bool layout_sensitive) {
  return layout_sensitive ? a == b : a.EqualIgnoringLayout(b);
}

// Hash of a literal's shape (ignoring layout) and bytes, tuples included; iterative.
size_t LiteralHash(const Literal& literal) {
  size_t h = 0;
  std::vector<const Literal*> stack = {&literal};
  while (!stack.empty()) {
    const Literal* l = stack.back();
    stack.pop_back();
    h = absl::HashOf(h, static_cast<int>(l->shape().element_type()), l->shape().dimensions(), l->tuple_size(),
                     std::string_view(reinterpret_cast<const char*>(l->untyped_data()), l->size_bytes()));
    for (const Literal& e : l->tuple_elements()) stack.push_back(&e);
  }
  return h;
}

absl::StatusOr<bool> CombineConstants(HloComputation& computation, bool layout_sensitive) {
  // XLA only merges constants of the same sharding domain; hloc has no domain map, so a
  // computation with domain instructions keeps its constants apart.
  for (const auto& inst : computation.instructions())
    if (inst->opcode() == O::kDomain) return false;
  absl::flat_hash_map<size_t, std::vector<HloInstruction*>> buckets;
  std::vector<HloInstruction*> constants;
  for (const auto& inst : computation.instructions())
    if (inst->opcode() == O::kConstant && inst->attrs().literal && !HasControlDependencies(*inst))
      constants.push_back(inst.get());
  bool changed = false;
  for (HloInstruction* c : constants) {
    std::vector<HloInstruction*>& bucket = buckets[LiteralHash(*c->attrs().literal)];
    HloInstruction* match = nullptr;
    for (HloInstruction* other : bucket) {
      if (ShapesMatch(c->shape(), other->shape(), layout_sensitive) &&
          *c->attrs().literal == *other->attrs().literal) {
        match = other;
        break;
      }
    }
    if (match == nullptr) {
      bucket.push_back(c);
      continue;
    }
    c->ReplaceAllUsesWith(match);
    absl::Status st = RemoveInstruction(c);
    if (!st.ok()) return st;
    changed = true;
  }
  return changed;
}

bool IsIota(const HloInstruction* i) { return i->opcode() == O::kIota; }

// The bucket key: what XLA's CseKey hashes. Equal instructions always get equal keys.
size_t CseHash(const HloInstruction& inst) {
  size_t h = absl::HashOf(static_cast<int>(inst.opcode()));
  if (inst.shape().IsArray()) h = absl::HashOf(h, inst.shape().dimensions());
  // Identical iotas count as the same operand, so iotas do not enter the hash.
  if (IsBinaryCommutative(inst.opcode()) && inst.operand_count() == 2) {
    const HloInstruction* a = IsIota(inst.operand(0)) ? nullptr : inst.operand(0);
    const HloInstruction* b = IsIota(inst.operand(1)) ? nullptr : inst.operand(1);
    if (std::less<const HloInstruction*>()(b, a)) std::swap(a, b);
    h = absl::HashOf(h, a, b);
  } else {
    for (const HloInstruction* op : inst.operands())
      if (!IsIota(op)) h = absl::HashOf(h, op);
  }
  for (const HloComputation* c : inst.called_computations())
    if (c != nullptr && c->root_instruction() != nullptr)
      h = absl::HashOf(h, static_cast<int>(c->root_instruction()->opcode()));
  const InstructionAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case O::kSlice:
      for (const SliceDimension& d : a.slice) h = absl::HashOf(h, d.start, d.limit, d.stride);
      return h;
    case O::kConcatenate: case O::kBroadcast: case O::kTranspose: case O::kReduce:
      return absl::HashOf(h, a.dimensions);
    case O::kGetTupleElement:
      return absl::HashOf(h, a.tuple_index);
    case O::kCompare:
      return absl::HashOf(h, a.comparison_direction ? static_cast<int>(*a.comparison_direction) : -1);
    case O::kDot:
      if (a.dot_dimension_numbers) {
        const DotDimensionNumbers& d = *a.dot_dimension_numbers;
        h = absl::HashOf(h, d.lhs_contracting_dimensions, d.rhs_contracting_dimensions, d.lhs_batch_dimensions,
                         d.rhs_batch_dimensions);
      }
      return h;
    default:
      return h;
  }
}

bool ShouldEliminateInstruction(const HloInstruction& inst) {
  // Constants, parameters, iotas, ... have nothing to share (constants merge separately);
  // partition-id and replica-id are the exceptions.
  if (inst.operand_count() == 0 && inst.opcode() != O::kPartitionId && inst.opcode() != O::kReplicaId) return false;
  if (inst.attrs().frontend_attributes.count(kMustFuseAttr)) return false;
  return !HasSideEffect(inst);
}

bool IsScalar(const Shape& s) { return s.IsArray() && s.rank() == 0; }

}  // namespace

absl::StatusOr<bool> HloCsePass::RunOnComputation(HloComputation& computation, const CseOptions& options) {
  auto constants_changed = CombineConstants(computation, options.is_layout_sensitive);
  if (!constants_changed.ok()) return constants_changed.status();
  bool changed = *constants_changed;

  const bool layout_sensitive = options.is_layout_sensitive;
  auto eq_instructions = [&](const HloInstruction* a, const HloInstruction* b) {
    if (a == b) return true;
    if (a->opcode() != O::kIota || b->opcode() != O::kIota) return false;
    return a->attrs().iota_dimension == b->attrs().iota_dimension && ShapesMatch(a->shape(), b->shape(), layout_sensitive);
  };
  auto eq_computations = [](const HloComputation* a, const HloComputation* b) { return ComputationsEqual(*a, *b, true); };
  IdenticalOptions identical;
  identical.layout_sensitive = layout_sensitive;
  identical.sharding_sensitive = true;
  identical.ignore_commutative_operand_order = true;

  absl::flat_hash_map<size_t, std::vector<HloInstruction*>> representatives;
  absl::flat_hash_set<const HloInstruction*> removed;
  std::vector<const HloInstruction*> just_removed;
  for (HloInstruction* inst : computation.MakeInstructionPostOrder()) {
    if (removed.contains(inst)) continue;
    if (!ShouldEliminateInstruction(*inst)) continue;
    if (options.only_scalars && !IsScalar(inst->shape())) continue;
    if (!IsSafelyRemovable(*inst, options.ignore_control_dependencies)) continue;

    std::vector<HloInstruction*>& bucket = representatives[CseHash(*inst)];
    HloInstruction* equivalent = nullptr;
    for (HloInstruction* r : bucket) {
      if (InstructionsIdentical(*inst, *r, eq_instructions, eq_computations, identical)) {
        equivalent = r;
        break;
      }
    }
    if (equivalent != nullptr) {
      inst->ReplaceAllUsesWith(equivalent);
      just_removed.clear();
      absl::Status st = RemoveInstructionAndUnusedOperands(inst, options.ignore_control_dependencies, &just_removed);
      if (!st.ok()) return st;
      removed.insert(just_removed.begin(), just_removed.end());
      changed = true;
      continue;
    }
    bucket.push_back(inst);
    // Identical iota operands of one instruction become one.
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      HloInstruction* a = inst->operand(i);
      if (a->opcode() != O::kIota) continue;
      for (int64_t j = i + 1; j < inst->operand_count(); ++j) {
        HloInstruction* b = inst->operand(j);
        if (a == b || !eq_instructions(a, b)) continue;
        inst->ReplaceOperandWith(j, a);
        changed = true;
        if (IsDead(*b) && IsSafelyRemovable(*b)) {
          absl::Status st = RemoveInstruction(b);
          if (!st.ok()) return st;
          removed.insert(b);
        }
      }
    }
  }

  // Duplicate roots of a multi-output fusion: users read the first copy, so DCE can drop the rest.
  if (HloInstruction* fusion = computation.FusionInstruction()) {
    HloInstruction* root = computation.root_instruction();
    if (root != nullptr && root->opcode() == O::kTuple && fusion->shape().IsTuple()) {
      absl::flat_hash_map<const HloInstruction*, int64_t> first_index;
      for (int64_t i = 0; i < root->operand_count(); ++i) first_index.emplace(root->operand(i), i);
      if (static_cast<int64_t>(first_index.size()) < root->operand_count()) {
        for (HloInstruction* user : fusion->users()) {
          if (user->opcode() != O::kGetTupleElement) continue;
          int64_t index = user->attrs().tuple_index;
          if (index < 0 || index >= root->operand_count()) continue;
          int64_t first = first_index[root->operand(index)];
          if (first != index) {
            user->mutable_attrs().tuple_index = first;
            changed = true;
          }
        }
      }
    }
  }
  return changed;
}

absl::StatusOr<bool> HloCsePass::Run(HloModule& module, PassContext&) {
  bool changed = false;
  std::vector<HloComputation*> computations;
  for (const auto& c : module.computations()) computations.push_back(c.get());
  for (HloComputation* c : computations) {
    if (options_.only_fusion_computations && !c->IsFusionComputation()) continue;
    auto r = RunOnComputation(*c, options_);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  return changed;
}

void RegisterCsePass(PassRegistry& registry) {
  PassInfo info;
  info.name = "cse";
  info.description = "common subexpression elimination: identical instructions and constants merge";
  info.options = {
      {"is_layout_sensitive", OptionType::kBool, OptionValue(false), "shapes must also agree in layout"},
      {"only_fusion_computations", OptionType::kBool, OptionValue(false), "only run inside fused computations"},
      {"ignore_control_dependencies", OptionType::kBool, OptionValue(false),
       "merge instructions with control edges too, relaying the edges"},
      {"only_scalars", OptionType::kBool, OptionValue(false), "only merge scalar-shaped instructions"},
  };
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    CseOptions options;
    auto flag = [&](const char* name, bool& out) {
      if (o.Has(name)) out = o.GetBool(name);
    };
    flag("is_layout_sensitive", options.is_layout_sensitive);
    flag("only_fusion_computations", options.only_fusion_computations);
    flag("ignore_control_dependencies", options.ignore_control_dependencies);
    flag("only_scalars", options.only_scalars);
    return std::make_unique<HloCsePass>(options);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
