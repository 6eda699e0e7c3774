#include "ir/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/module.h"

namespace hloc {

HloInstruction* HloComputation::AddInstruction(std::unique_ptr<HloInstruction> inst) {
  inst->set_parent(this);
  if (inst->unique_id() < 0 && parent_) inst->set_unique_id(parent_->NextUniqueId());
  HloInstruction* raw = inst.get();
  if (raw->opcode() == HloOpcode::kParameter) {
    int64_t n = raw->attrs().parameter_number;
    if (n >= 0 && n < (int64_t{1} << 20)) {
      if ((int64_t)params_.size() <= n) params_.resize(n + 1, nullptr);
      params_[n] = raw;
    }
  }
  instructions_.push_back(std::move(inst));
  return raw;
}

HloInstruction* HloComputation::AddInstructionBefore(std::unique_ptr<HloInstruction> inst,
                                                    const HloInstruction* before) {
  HloInstruction* raw = AddInstruction(std::move(inst));
  if (before == nullptr) return raw;
  for (auto it = instructions_.begin(); it != instructions_.end(); ++it) {
    if (it->get() == before) {
      // Move the appended element (the last one) to just before `before`.
      std::rotate(it, instructions_.end() - 1, instructions_.end());
      break;
    }
  }
  return raw;
}

absl::Status HloComputation::SetInstructionOrder(const std::vector<HloInstruction*>& order) {
  if (order.size() != instructions_.size())
    return absl::InvalidArgumentError(absl::StrCat("instruction order for ", name_, " has ", order.size(),
                                                   " entries; the computation has ", instructions_.size()));
  absl::flat_hash_map<const HloInstruction*, size_t> slot;
  for (size_t i = 0; i < instructions_.size(); ++i) slot[instructions_[i].get()] = i;
  // Check the whole permutation before moving anything, so a bad order leaves us unchanged.
  absl::flat_hash_set<const HloInstruction*> seen;
  for (HloInstruction* inst : order) {
    if (!slot.contains(inst) || !seen.insert(inst).second)
      return absl::InvalidArgumentError(absl::StrCat("instruction order for ", name_, " names ",
                                                     inst ? inst->name() : "null", " twice or from elsewhere"));
  }
  std::vector<std::unique_ptr<HloInstruction>> reordered;
  reordered.reserve(order.size());
  for (HloInstruction* inst : order) reordered.push_back(std::move(instructions_[slot[inst]]));
  instructions_ = std::move(reordered);
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* inst) {
  if (inst->user_count() > 0)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove ", inst->name(), ": it has users"));
  if (inst == root_)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove root ", inst->name()));
  if (inst->opcode() == HloOpcode::kParameter)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove parameter ", inst->name()));
  inst->DetachFromOperandsAndUsers();
  // A fused computation must not point back at a fusion that no longer exists.
  for (HloComputation* callee : inst->called_computations())
    if (callee->FusionInstruction() == inst) callee->SetFusionInstruction(nullptr);
  for (auto it = instructions_.begin(); it != instructions_.end(); ++it) {
    if (it->get() == inst) {
      instructions_.erase(it);
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrCat(inst->name(), " is not in computation ", name_));
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Iterative DFS over operands and control predecessors, roots visited in definition order.
  std::vector<HloInstruction*> order;
  absl::flat_hash_map<const HloInstruction*, int> state;  // 1 = on stack, 2 = done
  for (const auto& start : instructions_) {
    if (state[start.get()] == 2) continue;
    std::vector<std::pair<HloInstruction*, size_t>> stack = {{start.get(), 0}};
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      size_t nops = inst->operands().size();
      size_t total = nops + inst->control_predecessors().size();
      if (next < total) {
        HloInstruction* dep = next < nops ? inst->operand(next) : inst->control_predecessors()[next - nops];
        ++next;
        if (dep->parent() != this || state[dep] != 0) continue;  // cycles are the verifier's to report
        state[dep] = 1;
        stack.push_back({dep, 0});
      } else {
        state[inst] = 2;
        order.push_back(inst);
        stack.pop_back();
      }
    }
  }
  return order;
}

HloInstruction* HloComputation::GetInstructionWithName(const std::string& name) const {
  for (const auto& i : instructions_)
    if (i->name() == name) return i.get();
  return nullptr;
}

}  // namespace hloc
