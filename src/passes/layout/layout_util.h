// Layout helpers shared by the layout passes (layout-assignment, layout_normalization,
// reshape-decomposer, move_copy_to_users, transpose-folding): XLA's LayoutUtil / ShapeUtil
// pieces they need, and a small instruction builder that names new instructions uniquely.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/pass_util.h"

#define HLOC_LAYOUT_RETURN_IF_ERROR(expr)   \
  do {                                     \
    absl::Status _hloc_layout_status = (expr); \
    if (!_hloc_layout_status.ok()) return _hloc_layout_status; \
  } while (0)

namespace hloc::layout {

// {rank-1, ..., 1, 0}.
Layout DefaultLayout(int64_t rank);
Layout MakeLayout(std::vector<int64_t> minor_to_major);
// The layout from a major-to-minor order of dimensions.
Layout LayoutFromMajorToMinor(const std::vector<int64_t>& major_to_minor);
// The dimensions from most major to most minor (a shape without a layout: descending).
std::vector<int64_t> MajorToMinor(const Shape& shape);
// A shape with no layout counts as having the default one.
bool HasDefaultLayout(const Shape& shape);           // arrays only; tuples: every leaf
bool SameLayout(const Shape& a, const Shape& b);     // minor-to-major equal (missing = default)
// Only minor_to_major matters to hloc's layouts (tiles etc. are kept verbatim but ignored).
bool LayoutsEqual(const Layout& a, const Layout& b);
// Arrays and every tuple leaf get the default layout where they have none.
void FillDefaultLayouts(Shape& shape);
// Every array of the shape (tuple leaves too) with the default layout.
Shape WithDefaultLayouts(const Shape& shape);
// `shape` with its minor-to-major replaced (an array).
Shape WithLayout(const Shape& shape, const Layout& layout);
// XLA's MakeShapeWithDescendingLayoutAndSamePhysicalLayout: the dimensions in major-to-minor
// order with the default layout; a bitcast of `shape` reads the same bytes.
Shape Normalize(const Shape& shape);
// XLA's ShapeUtil::ReshapeIsBitcast: the reshape from `from` to `to` reads and writes the
// elements in the same physical order (same element type and count assumed).
bool ReshapeIsBitcast(const Shape& from, const Shape& to);
// XLA's ShapeUtil::AlignLayouts, for a reshape: a layout for an array of `dims` such that the
// reshape between it and `from` (either direction) is a bitcast, or nullopt when none keeps
// `from`'s dimension groups contiguous.
std::optional<Layout> AlignedReshapeLayout(const Shape& from, const Shape& to_dims);
// XLA's ShapeUtil::TransposeIsBitcast: transpose(operand, dims) with result layout of `result`
// moves no data.
bool TransposeIsBitcast(const Shape& operand, const Shape& result, const std::vector<int64_t>& dims);
// The result layout that makes transpose(operand, dims) a bitcast.
Layout TransposeBitcastLayout(const Shape& operand, const std::vector<int64_t>& dims);
// The operand layout that makes transpose(operand, dims) -> result a bitcast.
Layout TransposeOperandBitcastLayout(const Shape& result, const std::vector<int64_t>& dims);
bool IsIdentityPermutation(const std::vector<int64_t>& perm);
std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm);

// XLA's LayoutAssignment::InstructionCanChangeLayout, negated: instructions whose operands of
// the result's rank must have the result's layout (elementwise ops, slice, pad, concatenate,
// reverse, dynamic-slice, dynamic-update-slice, sort, map, array reduce-window). Copy is the op
// that changes layouts, so it is not one of them; nor is an op whose array operands differ in
// rank from its result (a bitcast-convert between widths).
bool PreservesLayout(const HloInstruction& inst);

// Adds instructions next to an existing one, named uniquely in the module.
class Builder {
 public:
  Builder(HloComputation* computation, NameUniquer* names, const HloInstruction* before)
      : computation_(computation), names_(names), before_(before) {}
  void set_before(const HloInstruction* before) { before_ = before; }
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst);
  HloInstruction* Make(HloOpcode op, const Shape& shape, const std::vector<HloInstruction*>& operands,
                       const std::string& name_hint);
  HloInstruction* Bitcast(HloInstruction* x, const Shape& shape);
  HloInstruction* Copy(HloInstruction* x, const Shape& shape);
  HloInstruction* Transpose(HloInstruction* x, const std::vector<int64_t>& dims);  // result default layout
  HloInstruction* Convert(HloInstruction* x, PrimitiveType t);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);
  HloInstruction* Tuple(const std::vector<HloInstruction*>& elements);
  HloComputation* computation() const { return computation_; }
  // Every instruction this builder added, in order.
  const std::vector<HloInstruction*>& added() const { return added_; }

 private:
  std::vector<HloInstruction*> added_;
  HloComputation* computation_;
  NameUniquer* names_;
  const HloInstruction* before_;
};

// The computations of the module that are fused computations (skipped by the layout passes:
// a fusion's body follows its instruction, which they treat as one op).
bool IsFusedComputation(const HloComputation& c);

}  // namespace hloc::layout
