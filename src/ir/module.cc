#include "ir/module.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloc {

HloComputation* HloModule::AddComputation(std::unique_ptr<HloComputation> c, bool is_entry) {
  c->set_parent(this);
  for (const auto& inst : c->instructions())
    if (inst->unique_id() < 0) inst->set_unique_id(NextUniqueId());
  HloComputation* raw = c.get();
  computations_.push_back(std::move(c));
  if (is_entry) entry_ = raw;
  return raw;
}

absl::Status HloModule::RemoveComputation(HloComputation* c) {
  for (const auto& comp : computations_)
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
  for (const auto& comp : computations_) {
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
  return absl::OkStatus();
}

absl::Status HloModule::EraseComputation(HloComputation* c) {
  if (c == entry_) return absl::FailedPreconditionError("cannot remove the entry computation");
  for (auto it = computations_.begin(); it != computations_.end(); ++it) {
    if (it->get() == c) {
      computations_.erase(it);
      return absl::OkStatus();
    }
  }
  return absl::NotFoundError(absl::StrCat("no computation ", c->name()));
}

std::vector<HloComputation*> HloModule::MakeComputationPostOrder() const {
  std::vector<HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> seen;
  // Iterative DFS over the call graph, starting from every computation in text order so
  // that unreachable computations are kept too; entry visited last.
  auto visit = [&](HloComputation* root) {
    if (seen.contains(root)) return;
    std::vector<std::pair<HloComputation*, std::vector<HloComputation*>>> stack;
    auto callees = [](HloComputation* c) {
      std::vector<HloComputation*> out;
      for (const auto& inst : c->instructions())
        for (HloComputation* callee : inst->called_computations()) out.push_back(callee);
      return out;
    };
    seen.insert(root);
    stack.push_back({root, callees(root)});
    while (!stack.empty()) {
      auto& [comp, pending] = stack.back();
      if (!pending.empty()) {
        HloComputation* next = pending.front();
        pending.erase(pending.begin());
        if (seen.insert(next).second) stack.push_back({next, callees(next)});
      } else {
        order.push_back(comp);
        stack.pop_back();
      }
    }
  };
  for (const auto& c : computations_)
    if (c.get() != entry_) visit(c.get());
  if (entry_) visit(entry_);
  return order;
}

HloComputation* HloModule::GetComputationWithName(const std::string& name) const {
  for (const auto& c : computations_)
    if (c->name() == name) return c.get();
  return nullptr;
}

}  // namespace hloc
