#include "passes/simplify/reshape_mover.h"

#include <algorithm>

#include "passes/simplify/control_flow_util.h"

namespace hloc {
namespace {

// A "rearrange" is a reshape or a transpose.
bool IsRearrange(const HloInstruction* inst) {
  return inst->opcode() == HloOpcode::kReshape || inst->opcode() == HloOpcode::kTranspose;
}

bool AreEquivalentRearranges(const HloInstruction* a, const HloInstruction* b) {
  if (a->opcode() != b->opcode() || !a->shape().SameDimensions(b->shape())) return false;
  switch (a->opcode()) {
    case HloOpcode::kTranspose:
      return a->attrs().dimensions == b->attrs().dimensions;
    case HloOpcode::kReshape:
      return a->operand(0)->shape().SameDimensions(b->operand(0)->shape());
    default:
      return false;
  }
}

// Where the broadcast dimensions land after a transpose with permutation `perm`:
// new_dims[k] = InversePermutation(perm)[bcast_dims[k]].
std::vector<int64_t> TransposedBroadcastDims(const std::vector<int64_t>& bcast_dims,
                                             const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse = cf::InversePermutation(perm);
  std::vector<int64_t> out;
  for (int64_t d : bcast_dims) out.push_back(inverse[d]);
  return out;
}

// Boundaries (i, j) with product(a[:i]) == product(b[:j]) splitting a reshape from `a` to `b`
// into the smallest groups of dimensions that map onto each other; size-1 dimensions form
// groups of their own. {(0,0), (|a|,|b|)} when nothing finer holds (e.g. zero-sized shapes).
std::vector<std::pair<int64_t, int64_t>> CommonFactors(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const int64_t n = a.size(), m = b.size();
  std::vector<std::pair<int64_t, int64_t>> whole = {{0, 0}, {n, m}};
  for (int64_t d : a)
    if (d == 0) return whole;
  for (int64_t d : b)
    if (d == 0) return whole;
  std::vector<std::pair<int64_t, int64_t>> bounds = {{0, 0}};
  int64_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && a[i] == 1) {
      bounds.push_back({++i, j});
      continue;
    }
    if (j < m && b[j] == 1) {
      bounds.push_back({i, ++j});
      continue;
    }
    if (i >= n || j >= m) return whole;
    int64_t pa = a[i++], pb = b[j++];
    while (pa != pb) {
      // The products stay below the element count, which the verifier bounds.
      if (pa < pb) {
        if (i >= n) return whole;
        pa *= a[i++];
      } else {
        if (j >= m) return whole;
        pb *= b[j++];
      }
    }
    bounds.push_back({i, j});
  }
  return bounds;
}

// XLA's ShapeUtil::ReshapeLeavesDimensionsUnmodified: where the (sorted) dimensions
// `dims` of `from` land in `to`, if the reshape keeps each of them whole.
std::optional<std::vector<int64_t>> ReshapeLeavesDimensionsUnmodified(const Shape& from, const Shape& to,
                                                                      const std::vector<int64_t>& dims) {
  std::vector<std::pair<int64_t, int64_t>> bounds = CommonFactors(from.dimensions(), to.dimensions());
  std::vector<std::pair<int64_t, int64_t>> unmodified;
  for (size_t k = 0; k + 1 < bounds.size(); ++k)
    if (bounds[k + 1].first - bounds[k].first == 1 && bounds[k + 1].second - bounds[k].second == 1)
      unmodified.push_back(bounds[k]);
  std::vector<int64_t> out;
  size_t k = 0;
  for (int64_t d : dims) {
    while (k < unmodified.size() && unmodified[k].first < d) ++k;
    if (k >= unmodified.size() || unmodified[k].first != d) return std::nullopt;
    out.push_back(unmodified[k].second);
  }
  return out;
}

int64_t TrueRank(const Shape& shape) {
  int64_t r = 0;
  for (int64_t d : shape.dimensions()) r += d != 1;
  return r;
}

// `operand` rearranged by the inverse of `rearrange`, reusing what is already there instead
// of stacking no-op or cancelling rearranges. XLA skips only the reshape pairs and leaves
// transpose(transpose(x)) to algsimp; skipping the transpose pairs too gives algsimp's result
// directly and keeps repeated runs from stacking transposes when algsimp does not run between.
HloInstruction* ApplyInverseRearrange(cf::Builder& b, const HloInstruction* rearrange, HloInstruction* operand,
                                      const HloInstruction* before) {
  HloComputation* comp = before->parent();
  if (rearrange->opcode() == HloOpcode::kReshape) {
    Shape new_shape(operand->shape().element_type(), rearrange->operand(0)->shape().dimensions());
    if (operand->shape().EqualIgnoringLayout(new_shape)) return operand;
    if (operand->opcode() == HloOpcode::kReshape && operand->operand(0)->shape().EqualIgnoringLayout(new_shape))
      return operand->operand(0);
    return b.Reshape(comp, new_shape, operand, before);
  }
  const std::vector<int64_t>& perm = rearrange->attrs().dimensions;
  if (cf::IsIdentityPermutation(perm)) return operand;
  if (operand->opcode() == HloOpcode::kTranspose && operand->attrs().dimensions == perm) return operand->operand(0);
  return b.Transpose(comp, operand, cf::InversePermutation(perm), before);
}

}  // namespace

bool ReshapeMover::CanTriviallyRearrange(const HloInstruction* instr, const HloInstruction* rearrange) const {
  // No-op rearranges are trivial by definition (algsimp normally removes them first).
  if (rearrange->opcode() == HloOpcode::kReshape &&
      rearrange->shape().EqualIgnoringLayout(rearrange->operand(0)->shape()))
    return true;
  if (rearrange->opcode() == HloOpcode::kTranspose && cf::IsIdentityPermutation(rearrange->attrs().dimensions))
    return true;
  // A constant can hold its literal in any arrangement.
  if (instr->opcode() == HloOpcode::kConstant) return true;
  // An rng can take any shape as long as nothing else sees the one it has.
  if (instr->opcode() == HloOpcode::kRng && instr->user_count() == 1) return true;
  if (instr->opcode() == HloOpcode::kBroadcast) {
    const std::vector<int64_t>& dims = instr->attrs().dimensions;
    // Broadcasts with unsorted dimensions are transposes in disguise; leave them.
    if (!std::is_sorted(dims.begin(), dims.end())) return false;
    if (rearrange->opcode() == HloOpcode::kReshape) {
      const Shape& operand_shape = instr->operand(0)->shape();
      return cf::IsScalar(operand_shape) ||
             (options_.reshape_of_1d_broadcast_is_cheap && TrueRank(operand_shape) <= 1) ||
             (options_.reshape_of_1d_broadcast_is_cheap &&
              ReshapeLeavesDimensionsUnmodified(rearrange->shape(), rearrange->operand(0)->shape(), dims).has_value());
    }
    // transpose(broadcast(x)) is a broadcast of x when the transpose keeps the broadcast
    // dimensions in their relative order.
    std::vector<int64_t> moved =
        TransposedBroadcastDims(dims, cf::InversePermutation(rearrange->attrs().dimensions));
    return std::is_sorted(moved.begin(), moved.end());
  }
  return false;
}

const HloInstruction* ReshapeMover::FirstNontrivialRearrange(const std::vector<HloInstruction*>& operands) const {
  for (const HloInstruction* op : operands)
    if (IsRearrange(op) && !CanTriviallyRearrange(op->operand(0), op)) return op;
  return nullptr;
}

bool ReshapeMover::IsReshapeMoveCandidate(const HloInstruction* instruction) const {
  if (!instruction->IsElementwise() || !instruction->shape().IsArray()) return false;
  // Elementwise ops whose operands differ in shape from the result (clamp with scalar
  // bounds, bitcast-convert between widths) cannot take one rearrange for all operands.
  for (const HloInstruction* op : instruction->operands())
    if (!op->shape().IsArray() || !op->shape().SameDimensions(instruction->shape())) return false;
  if (cf::HasControlDependencies(*instruction)) return false;
  const HloInstruction* rearrange = FirstNontrivialRearrange(instruction->operands());
  if (rearrange == nullptr) return false;
  for (const HloInstruction* op : instruction->operands()) {
    bool ok = IsRearrange(op) ? AreEquivalentRearranges(op, rearrange) : CanTriviallyRearrange(op, rearrange);
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<bool> ReshapeMover::Run(HloModule& module, PassContext& context) {
  (void)context;
  cf::Builder b(module);
  bool changed = false;
  std::vector<HloComputation*> comps;
  for (const auto& comp : module.computations())
    if (!comp->IsFusionComputation()) comps.push_back(comp.get());
  for (HloComputation* comp : comps) {
    std::vector<HloInstruction*> order;
    absl::flat_hash_set<const HloInstruction*> candidates;
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (IsReshapeMoveCandidate(inst)) {
        order.push_back(inst);
        candidates.insert(inst);
      }
    }
    // A rearrange can only move if every one of its users moves: drop the users of any
    // rearrange that also feeds a non-candidate, until that holds for all that remain.
    bool removed = true;
    while (!candidates.empty() && removed) {
      removed = false;
      std::vector<const HloInstruction*> rearranges;
      absl::flat_hash_set<const HloInstruction*> seen;
      for (const HloInstruction* inst : order) {
        if (!candidates.contains(inst)) continue;
        for (const HloInstruction* op : inst->operands())
          if (IsRearrange(op) && seen.insert(op).second) rearranges.push_back(op);
      }
      for (const HloInstruction* r : rearranges) {
        bool escapes = r->IsRoot();
        for (const HloInstruction* user : r->users()) escapes |= !candidates.contains(user);
        if (!escapes) continue;
        for (const HloInstruction* user : r->users()) removed |= candidates.erase(user) > 0;
      }
    }
    for (HloInstruction* inst : order) {
      if (!candidates.contains(inst)) continue;
      // Earlier sinks may have turned an operand into a rearrange; any one that is not
      // trivial drives the move (semantics hold for whichever is chosen).
      const HloInstruction* rearrange = FirstNontrivialRearrange(inst->operands());
      if (rearrange == nullptr) continue;
      std::vector<HloInstruction*> operands;
      for (HloInstruction* op : inst->operands()) operands.push_back(ApplyInverseRearrange(b, rearrange, op, inst));
      Shape new_shape(inst->shape().element_type(), rearrange->operand(0)->shape().dimensions());
      HLOC_CF_ASSIGN_OR_RETURN(HloInstruction * moved, b.CloneWithNewOperands(*inst, new_shape, operands, inst));
      // The sharding described the old shape.
      moved->mutable_attrs().sharding.reset();
      HloInstruction* replacement;
      if (rearrange->opcode() == HloOpcode::kReshape) {
        replacement = b.Reshape(comp, inst->shape(), moved, inst);
      } else {
        replacement = b.Transpose(comp, moved, rearrange->attrs().dimensions, inst);
        replacement->mutable_shape() = inst->shape();
      }
      replacement->mutable_attrs().metadata = inst->attrs().metadata;
      HLOC_CF_RETURN_IF_ERROR(cf::ReplaceInstruction(inst, replacement));
      changed = true;
    }
  }
  return changed;
}

}  // namespace hloc
