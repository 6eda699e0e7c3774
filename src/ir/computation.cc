#include "ir/computation.h"

#include <algorithm>

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
  const int64_t slot = static_cast<int64_t>(instructions_.size());
  raw->slot_ = slot;
  instructions_.push_back(std::move(inst));
  next_.push_back(-1);
  prev_.push_back(-1);
  Link(slot, -1);
  ++live_;
  return raw;
}

HloInstruction* HloComputation::AddInstructionBefore(std::unique_ptr<HloInstruction> inst,
                                                    const HloInstruction* before) {
  HloInstruction* raw = AddInstruction(std::move(inst));
  if (before == nullptr || !Owns(before) || before == raw) return raw;
  Unlink(raw->slot_);
  Link(raw->slot_, before->slot_);
  dirty_ = true;
  return raw;
}

bool HloComputation::Owns(const HloInstruction* inst) const {
  return inst->parent() == this && inst->slot_ >= 0 && inst->slot_ < static_cast<int64_t>(instructions_.size()) &&
         instructions_[inst->slot_].get() == inst;
}

void HloComputation::Link(int64_t slot, int64_t before) {
  const int64_t after = before < 0 ? tail_ : prev_[before];
  prev_[slot] = after;
  next_[slot] = before;
  (after < 0 ? head_ : next_[after]) = slot;
  (before < 0 ? tail_ : prev_[before]) = slot;
}

void HloComputation::Unlink(int64_t slot) {
  const int64_t p = prev_[slot], n = next_[slot];
  (p < 0 ? head_ : next_[p]) = n;
  (n < 0 ? tail_ : prev_[n]) = p;
  prev_[slot] = next_[slot] = -1;
}

void HloComputation::Compact() const {
  if (!dirty_) return;
  std::vector<std::unique_ptr<HloInstruction>> ordered;
  ordered.reserve(live_);
  for (int64_t s = head_; s >= 0; s = next_[s]) ordered.push_back(std::move(instructions_[s]));
  instructions_ = std::move(ordered);
  const int64_t n = static_cast<int64_t>(instructions_.size());
  next_.resize(n);
  prev_.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    instructions_[i]->slot_ = i;
    next_[i] = i + 1 < n ? i + 1 : -1;
    prev_[i] = i - 1;
  }
  head_ = n > 0 ? 0 : -1;
  tail_ = n - 1;
  dirty_ = false;
}

absl::Status HloComputation::SetInstructionOrder(const std::vector<HloInstruction*>& order) {
  Compact();
  if (order.size() != instructions_.size())
    return absl::InvalidArgumentError(absl::StrCat("instruction order for ", name_, " has ", order.size(),
                                                   " entries; the computation has ", instructions_.size()));
  // Check the whole permutation before moving anything, so a bad order leaves us unchanged.
  std::vector<bool> seen(instructions_.size(), false);
  for (HloInstruction* inst : order) {
    if (inst == nullptr || !Owns(inst) || seen[inst->slot_])
      return absl::InvalidArgumentError(absl::StrCat("instruction order for ", name_, " names ",
                                                     inst ? inst->name() : "null", " twice or from elsewhere"));
    seen[inst->slot_] = true;
  }
  std::vector<std::unique_ptr<HloInstruction>> reordered;
  reordered.reserve(order.size());
  for (HloInstruction* inst : order) reordered.push_back(std::move(instructions_[inst->slot_]));
  instructions_ = std::move(reordered);
  for (size_t i = 0; i < instructions_.size(); ++i) instructions_[i]->slot_ = static_cast<int64_t>(i);
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveInstruction(HloInstruction* inst) {
  if (inst->user_count() > 0)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove ", inst->name(), ": it has users"));
  if (inst == root_)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove root ", inst->name()));
  if (inst->opcode() == HloOpcode::kParameter)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove parameter ", inst->name()));
  if (!Owns(inst)) return absl::NotFoundError(absl::StrCat(inst->name(), " is not in computation ", name_));
  inst->DetachFromOperandsAndUsers();
  // A fused computation must not point back at a fusion that no longer exists.
  for (HloComputation* callee : inst->called_computations())
    if (callee->FusionInstruction() == inst) callee->SetFusionInstruction(nullptr);
  if (removal_observer_) removal_observer_(inst);
  const int64_t slot = inst->slot_;
  Unlink(slot);
  instructions_[slot].reset();  // freed now: nothing may hold its address past the removal
  --live_;
  dirty_ = true;
  return absl::OkStatus();
}

absl::Status HloComputation::RemoveParameter(int64_t number) {
  if (number < 0 || number >= num_parameters() || params_[number] == nullptr)
    return absl::NotFoundError(absl::StrCat(name_, " has no parameter ", number));
  HloInstruction* param = params_[number];
  if (param->user_count() > 0 || param == root_)
    return absl::FailedPreconditionError(absl::StrCat("cannot remove parameter ", param->name(), ": it is used"));
  param->DetachFromOperandsAndUsers();
  if (removal_observer_) removal_observer_(param);
  params_.erase(params_.begin() + number);
  for (int64_t i = number; i < num_parameters(); ++i)
    if (params_[i] != nullptr) params_[i]->mutable_attrs().parameter_number = i;
  const int64_t slot = param->slot_;
  Unlink(slot);
  instructions_[slot].reset();
  --live_;
  dirty_ = true;
  return absl::OkStatus();
}

HloInstruction* HloComputation::MoveParametersToFront() {
  for (auto it = params_.rbegin(); it != params_.rend(); ++it) {
    if (*it == nullptr) continue;
    const int64_t slot = (*it)->slot_;
    Unlink(slot);
    Link(slot, head_);
  }
  dirty_ = true;
  int64_t s = head_;
  while (s >= 0 && instructions_[s]->opcode() == HloOpcode::kParameter) s = next_[s];
  return s >= 0 ? instructions_[s].get() : nullptr;
}

std::vector<HloInstruction*> HloComputation::MakeInstructionPostOrder() const {
  // Iterative DFS over operands and control predecessors, roots visited in definition order.
  // The visit state is indexed by slot (compacted: slots are 0..n-1), not hashed: every pass
  // asks for a post order, fusion passes once per fused body they analyse.
  Compact();
  std::vector<HloInstruction*> order;
  order.reserve(instructions_.size());
  // Most computations are kept in definition order (the parser and the fusion builder write
  // them so), and then the walk below emits them as they stand: each start's operands were
  // emitted before it. Checking that is cheaper than the walk; fusion passes ask for the post
  // order of every body they analyse and of the computation after every merge.
  bool in_order = true;
  for (size_t i = 0; i < instructions_.size() && in_order; ++i) {
    const HloInstruction* inst = instructions_[i].get();
    for (const HloInstruction* dep : inst->operands())
      in_order &= !Owns(dep) || dep->slot_ < static_cast<int64_t>(i);
    for (const HloInstruction* dep : inst->control_predecessors())
      in_order &= !Owns(dep) || dep->slot_ < static_cast<int64_t>(i);
  }
  if (in_order) {
    for (const auto& inst : instructions_) order.push_back(inst.get());
    return order;
  }
  std::vector<uint8_t> state(instructions_.size(), 0);  // 1 = on stack, 2 = done
  std::vector<std::pair<HloInstruction*, size_t>> stack;
  for (const auto& start : instructions_) {
    if (state[start->slot_] == 2) continue;
    stack.assign(1, {start.get(), 0});
    state[start->slot_] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      size_t nops = inst->operands().size();
      size_t total = nops + inst->control_predecessors().size();
      if (next < total) {
        HloInstruction* dep = next < nops ? inst->operand(next) : inst->control_predecessors()[next - nops];
        ++next;
        if (!Owns(dep) || state[dep->slot_] != 0) continue;  // cycles are the verifier's to report
        state[dep->slot_] = 1;
        stack.push_back({dep, 0});
      } else {
        state[inst->slot_] = 2;
        order.push_back(inst);
        stack.pop_back();
      }
    }
  }
  return order;
}

HloInstruction* HloComputation::GetInstructionWithName(const std::string& name) const {
  for (const auto& i : instructions())
    if (i->name() == name) return i.get();
  return nullptr;
}

}  // namespace hloc
