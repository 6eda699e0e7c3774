// HloComputation: instructions in definition order (operands before users; for a scheduled
// module this order is the schedule), parameters by number, and one root.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace hloc {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }

  // Takes ownership; appends in definition order; registers parameters by number.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> inst);
  // As AddInstruction, but placed just before `before` in definition order (appended when
  // `before` is null or not here), so a rewrite keeps definitions ahead of their uses.
  HloInstruction* AddInstructionBefore(std::unique_ptr<HloInstruction> inst, const HloInstruction* before);
  // Removes an instruction with no users (drops its operand edges). Error if it has users
  // or is the root.
  absl::Status RemoveInstruction(HloInstruction* inst);
  // Removes parameter `number` (it must have no users) and renumbers the later ones down by
  // one (XLA's HloComputation::RemoveParameter; names are the caller's).
  absl::Status RemoveParameter(int64_t number);
  // Puts the parameters first in definition order, by number, keeping the other instructions'
  // order; returns the first other instruction (null when there is none). O(parameters): a
  // fusion grown in place keeps the order a rebuilt one would have.
  HloInstruction* MoveParametersToFront();
  // Called with each instruction RemoveInstruction takes out, just before it is freed; null for
  // none. A rewrite that walks a saved post order while its handlers remove instructions skips
  // the removed ones by this, rather than rescanning the computation after each change.
  void set_removal_observer(std::function<void(const HloInstruction*)> observer) {
    removal_observer_ = std::move(observer);
  }

  // In definition order. Removals and inserts-before are O(1) and only recorded (a null slot, a
  // link); the first read after them puts the storage back in order (O(n) once), so a pass
  // that edits many times between reads pays one compaction, not one vector shift per edit.
  // The reference stays valid, but read it again after editing.
  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const {
    Compact();
    return instructions_;
  }
  int64_t instruction_count() const { return live_; }
  // Instructions with operands before users (iterative, handles any order of definition).
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  // Puts the instructions in `order` (a permutation of instructions()). In a scheduled module
  // (HloModule::is_scheduled) this order is the computation's schedule: the printer writes it
  // and thunk emission follows it. Fails if `order` is not a permutation.
  absl::Status SetInstructionOrder(const std::vector<HloInstruction*>& order);

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* r) { root_ = r; }

  const std::vector<HloInstruction*>& parameters() const { return params_; }
  HloInstruction* parameter_instruction(int64_t i) const { return params_[i]; }
  int64_t num_parameters() const { return static_cast<int64_t>(params_.size()); }

  // The fusion instruction this computation is the body of, if any.
  HloInstruction* FusionInstruction() const { return fusion_instruction_; }
  void SetFusionInstruction(HloInstruction* f) { fusion_instruction_ = f; }
  bool IsFusionComputation() const { return fusion_instruction_ != nullptr; }

  // execution_thread (async computations); empty means "main".
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  HloInstruction* GetInstructionWithName(const std::string& name) const;

 private:
  friend class HloModule;
  // True when `inst` is the live instruction of one of this computation's slots.
  bool Owns(const HloInstruction* inst) const;
  void Link(int64_t slot, int64_t before);  // into the order, ahead of `before` (-1: at the end)
  void Unlink(int64_t slot);
  void Compact() const;  // storage in definition order again, slots renumbered

  std::string name_;
  HloModule* parent_ = nullptr;
  // Slot i owns the instruction whose slot_ is i, or null once it is removed; next_/prev_ link
  // the live slots in definition order (-1 at the ends). Between edits and the next read the
  // slots are out of order (dirty_); Compact makes slot order the definition order.
  mutable std::vector<std::unique_ptr<HloInstruction>> instructions_;
  mutable std::vector<int64_t> next_, prev_;
  mutable int64_t head_ = -1, tail_ = -1;
  mutable bool dirty_ = false;
  int64_t live_ = 0;
  std::function<void(const HloInstruction*)> removal_observer_;
  int64_t slot_ = -1;  // in the parent module's computation storage (HloModule keeps it)
  std::vector<HloInstruction*> params_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
  std::string execution_thread_;
};

}  // namespace hloc
