#include "ir/module.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloc {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c, bool is_entry) {
  c->set_parent(this);
  for (const auto& inst : c->instructions())
    if (inst->unique_id() < 0) inst->set_unique_id(NextUniqueId());
  HloComputation* raw = c.get();
  raw->slot_ = static_cast<int64_t>(computations_.size());
  computations_.push_back(std::move(c));
  if (is_entry) entry_ = raw;
  return raw;
}

absl::Status HloModule::RemoveComputation(HloComputation* c) {
  for (const auto& comp : computations())
    for (const auto& inst : comp->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (callee == c && comp.get() != c)
          return absl::FailedPreconditionError(
              absl::StrCat("cannot remove ", c->name(), ": called by ", inst->name()));
  return EraseComputation(c);
}

absl::Status HloModule::RemoveFusedComputation(HloComputation* c) {
  if (c->FusionInstruction() != nullptr)
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove ", c->name(), ": called by ", c->FusionInstruction()->name()));
  return EraseComputation(c);
}

absl::Status HloModule::RemoveComputations(const absl::flat_hash_set<const HloComputation*>& dead) {
  if (dead.contains(entry_)) return absl::FailedPreconditionError("cannot remove the entry computation");
  for (const auto& comp : computations()) {
    if (dead.contains(comp.get())) continue;
    for (const auto& inst : comp->instructions())
      for (HloComputation* callee : inst->called_computations())
        if (dead.contains(callee))
          return absl::FailedPreconditionError(
              absl::StrCat("cannot remove ", callee->name(), ": called by ", inst->name()));
  }
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [&](const std::unique_ptr<HloComputation>& c) { return dead.contains(c.get()); }),
                      computations_.end());
  for (size_t i = 0; i < computations_.size(); ++i) computations_[i]->slot_ = static_cast<int64_t>(i);
  return absl::OkStatus();
}

absl::Status HloModule::EraseComputation(HloComputation* c) {
  if (c == entry_) return absl::FailedPreconditionError("cannot remove the entry computation");
  if (c->parent() != this || c->slot_ < 0 || c->slot_ >= static_cast<int64_t>(computations_.size()) ||
      computations_[c->slot_].get() != c)
    return absl::NotFoundError(absl::StrCat("no computation ", c->name()));
  computations_[c->slot_].reset();
  dirty_ = true;
  return absl::OkStatus();
}

absl::Status HloModule::MoveComputationToEnd(HloComputation* c) {
  if (c->parent() != this || c->slot_ < 0 || c->slot_ >= static_cast<int64_t>(computations_.size()) ||
      computations_[c->slot_].get() != c)
    return absl::NotFoundError(absl::StrCat("no computation ", c->name()));
  std::unique_ptr<HloComputation> owned = std::move(computations_[c->slot_]);
  c->slot_ = static_cast<int64_t>(computations_.size());
  computations_.push_back(std::move(owned));
  dirty_ = true;
  return absl::OkStatus();
}

void HloModule::Compact() const {
  if (!dirty_) return;
  computations_.erase(std::remove(computations_.begin(), computations_.end(), nullptr), computations_.end());
  for (size_t i = 0; i < computations_.size(); ++i) computations_[i]->slot_ = static_cast<int64_t>(i);
  dirty_ = false;
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> seen;
  // Iterative DFS over the call graph, starting from every computation in text order so
  // that unreachable computations are kept too; entry visited last.
  auto visit = [&](HloComputation* root) {
    if (seen.contains(root)) return;
    // (computation, its callees, the next callee to visit): an index, not erasing the front,
    // since the entry of a fused module calls thousands of fusions.
    std::vector<std::tuple<HloComputation*, std::vector<HloComputation*>, size_t>> stack;
    auto callees = [](HloComputation* c) {
      std::vector<HloComputation*> out;
      for (const auto& inst : c->instructions())
        for (HloComputation* callee : inst->called_computations()) out.push_back(callee);
      return out;
    };
    seen.insert(root);
    stack.push_back({root, callees(root), 0});
    while (!stack.empty()) {
      auto& [comp, pending, i] = stack.back();
      if (i < pending.size()) {
        HloComputation* next = pending[i++];
        if (seen.insert(next).second) stack.push_back({next, callees(next), 0});
      } else {
        order.push_back(comp);
        stack.pop_back();
      }
    }
  };
  for (const auto& c : computations())
    if (c.get() != entry_) visit(c.get());
  if (entry_) visit(entry_);
  return order;
}

HloComputation* HloModule::GetComputationWithName(const std::string& name) const {
  for (const auto& c : computations())
    if (c->name() == name) return c.get();
  return nullptr;
}

}  // namespace hloc
