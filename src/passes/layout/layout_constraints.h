// The layout rules of rules/layout/*.td (generated into GeneratedTables::Global().layout) as
// the layout-assignment engine consults them: which rows apply under a profile, and the
// layout each LayoutKind names for one instruction's operand or result.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pass.h"
#include "engine/rule_tables.h"
#include "ir/instruction.h"
#include "passes/layout/layout_kinds.h"

namespace hloc::layout {

// The names of the rules/layout/*.td rows: layout-assignment's decision records
// (PassInfo::records), switched by a pipeline entry's `rules: {enable, disable}`.
std::vector<std::string> LayoutConstraintNames();

// The constraint rows that apply under `profile` (null: only rows without requirements),
// minus the rows `disabled` names (and, when `enabled` names some rows, only those: as for
// rewrite rules), strongest first: requirements before preferences, then higher priority,
// then declaration order. Names of other records are ignored (the manifest loader checks an
// entry's names against the pass's records).
class ConstraintSet {
 public:
  static ConstraintSet Build(const HardwareProfile* profile, const std::vector<std::string>& enabled,
                             const std::vector<std::string>& disabled);
  // The rows for opcode `op` and slot `slot` (an operand index or LayoutConstraintInfo::kResult).
  std::vector<const LayoutConstraintInfo*> RowsFor(HloOpcode op, int slot) const;
  const std::vector<const LayoutConstraintInfo*>& rows() const { return rows_; }

 private:
  std::vector<const LayoutConstraintInfo*> rows_;
};

// What a slot's strongest applicable row says.
struct SlotDecision {
  const LayoutConstraintInfo* row = nullptr;  // the deciding row (null: no row decided)
  Layout layout;
};

// The layout the LayoutKind `kind` names for `inst`'s slot. `current` is the slot's shape as
// assigned so far (the operand's or the result's), or null while propagating (then kinds that
// only check the current layout, BatchMajor, say nothing). `operand0` / `result` give
// SameAsOperand0 / SameAsResult their reference (null: not known yet). Returns nullopt when the
// kind does not constrain this slot. Every LayoutKind has its case (hloc-tblgen refuses a
// LayoutKind record that is not in layout_kinds.h).
// For a tuple-shaped result (a cuDNN convolution call's (result, scratch)) the layout is the
// one of tuple element 0.
absl::StatusOr<std::optional<Layout>> ComputeKind(LayoutKind kind, const HloInstruction& inst, int slot,
                                                  const Shape* current, const Shape* operand0,
                                                  const Shape* result);

// The first row of `rows` whose kind constrains the slot.
absl::StatusOr<std::optional<SlotDecision>> Decide(const ConstraintSet& rows, const HloInstruction& inst, int slot,
                                                   const Shape* current, const Shape* operand0, const Shape* result);

}  // namespace hloc::layout
