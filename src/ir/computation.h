// HloComputation: instructions in definition order (operands before users; for a scheduled
// module this order is the schedule), parameters by number, and one root.
#pragma once
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

  const std::vector<std::unique_ptr<HloInstruction>>& instructions() const { return instructions_; }
  int64_t instruction_count() const { return static_cast<int64_t>(instructions_.size()); }
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
  std::string name_;
  HloModule* parent_ = nullptr;
  std::vector<std::unique_ptr<HloInstruction>> instructions_;
  std::vector<HloInstruction*> params_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instruction_ = nullptr;
  std::string execution_thread_;
};

}  // namespace hloc
