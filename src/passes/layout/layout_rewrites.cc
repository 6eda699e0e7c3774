// reshape-decomposer, move_copy_to_users and transpose-folding (declared in
// layout_normalization.h): the small rewrites around layout normalization.
#include <algorithm>

#include "passes/layout/layout_normalization.h"
#include "passes/layout/layout_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using layout::Builder;
using layout::HasDefaultLayout;
using layout::WithDefaultLayouts;

std::vector<HloComputation*> Computations(HloModule& module) {
  std::vector<HloComputation*> out;
  for (HloComputation* c : module.MakeComputationPostOrder())
    if (!c->IsFusionComputation()) out.push_back(c);
  return out;
}

absl::Status Replace(HloInstruction* old_inst, HloInstruction* replacement) {
  old_inst->ReplaceAllUsesWith(replacement);
  if (IsDead(*old_inst) && IsSafelyRemovable(*old_inst)) return RemoveInstruction(old_inst);
  return absl::OkStatus();
}

// A copy that changes the layout of an array, and nothing else.
bool IsLayoutChangingCopy(const HloInstruction* x) {
  return x->opcode() == HloOpcode::kCopy && x->shape().IsArray() &&
         x->operand(0)->shape().EqualIgnoringLayout(x->shape()) && !layout::SameLayout(x->operand(0)->shape(), x->shape());
}

}  // namespace

absl::StatusOr<bool> ReshapeDecomposer::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : Computations(module)) {
    for (HloInstruction* x : c->MakeInstructionPostOrder()) {
      if (x->opcode() != HloOpcode::kReshape || !x->shape().IsArray()) continue;
      HloInstruction* o = x->operand(0);
      if (layout::ReshapeIsBitcast(o->shape(), x->shape())) continue;
      Builder b(c, &names, x);
      HloInstruction* in = HasDefaultLayout(o->shape()) ? o : b.Copy(o, WithDefaultLayouts(o->shape()));
      HloInstruction* r = b.Make(HloOpcode::kReshape, WithDefaultLayouts(x->shape()), {in}, x->name());
      r->mutable_attrs().metadata = x->attrs().metadata;
      HloInstruction* out = HasDefaultLayout(x->shape()) ? r : b.Copy(r, x->shape());
      HLOC_LAYOUT_RETURN_IF_ERROR(Replace(x, out));
      changed = true;
    }
  }
  return changed;
}

absl::StatusOr<bool> MoveCopyToUsers::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : Computations(module)) {
    for (HloInstruction* x : c->MakeInstructionPostOrder()) {
      if (!x->control_predecessors().empty() || !x->control_successors().empty()) continue;
      // A reduce reads any layout (a column reduction is a reduction too): it drops the copy.
      if (x->opcode() == HloOpcode::kReduce && x->shape().IsArray() && x->operand_count() == 2 &&
          x->operand(0)->opcode() == HloOpcode::kCopy && x->operand(0)->shape().IsArray()) {
        HloInstruction* copy = x->operand(0);
        x->ReplaceOperandWith(0, copy->operand(0));
        if (IsDead(*copy) && IsSafelyRemovable(*copy)) HLOC_LAYOUT_RETURN_IF_ERROR(RemoveInstruction(copy));
        changed = true;
        continue;
      }
      // XLA's list: elementwise unary (not reduce-precision) and binary ops, convert, slice,
      // dynamic-slice, pad, reverse, reduce-window, concatenate; select and clamp as binary ops.
      const HloOpcode op = x->opcode();
      if (!layout::PreservesLayout(*x) || op == HloOpcode::kSort || op == HloOpcode::kMap ||
          op == HloOpcode::kReducePrecision || op == HloOpcode::kBitcastConvert ||
          op == HloOpcode::kDynamicUpdateSlice)
        continue;
      // Every array operand of the result's rank must be a layout-changing copy of a source
      // in one common layout; scalars (clamp bounds, pad value, indices) may be anything.
      const int64_t rank = x->shape().rank();
      std::vector<HloInstruction*> ops;
      std::optional<Shape> source_layout;
      bool ok = rank > 0;
      for (HloInstruction* o : x->operands()) {
        if (o->shape().rank() != rank) {
          ops.push_back(o);
          continue;
        }
        if (!IsLayoutChangingCopy(o)) {
          ok = false;
          break;
        }
        const Shape& src = o->operand(0)->shape();
        if (source_layout && !layout::SameLayout(*source_layout, src)) ok = false;
        source_layout = src;
        ops.push_back(o->operand(0));
      }
      if (!ok || !source_layout) continue;
      Builder b(c, &names, x);
      std::unique_ptr<HloInstruction> moved = CloneInstruction(*x, ops);
      moved->mutable_shape() = layout::WithLayout(x->shape(), layout::LayoutFromMajorToMinor(layout::MajorToMinor(*source_layout)));
      HloInstruction* m = b.Add(std::move(moved));
      HloInstruction* copy = b.Copy(m, x->shape());
      HLOC_LAYOUT_RETURN_IF_ERROR(Replace(x, copy));
      changed = true;
    }
  }
  return changed;
}

namespace {

// A transpose whose dimensions are a permutation of its rank (unverified modules are skipped).
bool ValidTranspose(const HloInstruction* t) {
  if (t->opcode() != HloOpcode::kTranspose || !t->shape().IsArray()) return false;
  std::vector<int64_t> sorted = t->attrs().dimensions;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i)) return false;
  return static_cast<int64_t>(sorted.size()) == t->shape().rank();
}

bool AllBelow(const std::vector<int64_t>& v, int64_t n) {
  return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < n; });
}

// dot(transpose(a), ...): the dimension numbers in terms of a, if the transpose keeps the
// operand's free dimensions in order (then the dot's result is unchanged).
bool FoldIntoDot(HloInstruction* dot, int64_t operand) {
  HloInstruction* t = dot->operand(operand);
  if (!ValidTranspose(t) || !dot->attrs().dot_dimension_numbers) return false;
  const std::vector<int64_t>& perm = t->attrs().dimensions;
  DotDimensionNumbers d = *dot->attrs().dot_dimension_numbers;
  std::vector<int64_t>& batch = operand == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  std::vector<int64_t>& contracting = operand == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  if (!AllBelow(batch, t->shape().rank()) || !AllBelow(contracting, t->shape().rank())) return false;
  std::vector<int64_t> free_mapped;
  for (int64_t i = 0; i < t->shape().rank(); ++i)
    if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), i) == contracting.end())
      free_mapped.push_back(perm[i]);
  if (!std::is_sorted(free_mapped.begin(), free_mapped.end())) return false;
  // As XLA's GPU folding: batch dimensions stay where they are (cuBLAS wants them most major,
  // which layout assignment already arranged for the transpose's operand).
  for (int64_t v : batch)
    if (perm[v] != v) return false;
  for (int64_t& v : batch) v = perm[v];
  for (int64_t& v : contracting) v = perm[v];
  dot->mutable_attrs().dot_dimension_numbers = d;
  dot->ReplaceOperandWith(operand, t->operand(0));
  return true;
}

bool FoldIntoConvolution(HloInstruction* conv, int64_t operand) {
  HloInstruction* t = conv->operand(operand);
  if (!ValidTranspose(t) || !conv->attrs().convolution_dimension_numbers) return false;
  const std::vector<int64_t>& perm = t->attrs().dimensions;
  ConvolutionDimensionNumbers c = *conv->attrs().convolution_dimension_numbers;
  const int64_t r = t->shape().rank();
  if (operand == 0 ? !(AllBelow({c.input_batch_dimension, c.input_feature_dimension}, r) &&
                       AllBelow(c.input_spatial_dimensions, r))
                   : !(AllBelow({c.kernel_input_feature_dimension, c.kernel_output_feature_dimension}, r) &&
                       AllBelow(c.kernel_spatial_dimensions, r)))
    return false;
  if (operand == 0) {
    c.input_batch_dimension = perm[c.input_batch_dimension];
    c.input_feature_dimension = perm[c.input_feature_dimension];
    for (int64_t& v : c.input_spatial_dimensions) v = perm[v];
  } else {
    c.kernel_input_feature_dimension = perm[c.kernel_input_feature_dimension];
    c.kernel_output_feature_dimension = perm[c.kernel_output_feature_dimension];
    for (int64_t& v : c.kernel_spatial_dimensions) v = perm[v];
  }
  conv->mutable_attrs().convolution_dimension_numbers = c;
  conv->ReplaceOperandWith(operand, t->operand(0));
  return true;
}

}  // namespace

absl::StatusOr<bool> TransposeFolding::Run(HloModule& module, PassContext&) {
  bool changed = false;
  for (HloComputation* c : Computations(module)) {
    for (HloInstruction* x : c->MakeInstructionPostOrder()) {
      const bool dot = x->opcode() == HloOpcode::kDot && x->operand_count() == 2;
      const bool conv = fold_convolutions_ && x->opcode() == HloOpcode::kConvolution && x->operand_count() == 2;
      if (!dot && !conv) continue;
      for (int64_t i = 0; i < 2; ++i) {
        HloInstruction* t = x->operand(i);
        if (!(dot ? FoldIntoDot(x, i) : FoldIntoConvolution(x, i))) continue;
        changed = true;
        if (IsDead(*t) && IsSafelyRemovable(*t)) HLOC_LAYOUT_RETURN_IF_ERROR(RemoveInstruction(t));
      }
    }
  }
  return changed;
}

}  // namespace hloc
