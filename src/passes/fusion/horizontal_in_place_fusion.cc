// horizontal-in-place-fusion (horizontal_in_place_fusion.h).
#include "passes/fusion/horizontal_in_place_fusion.h"

#include <iostream>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/compile_recorder.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_legality.h"
#include "passes/fusion/priority_fusion.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using O = HloOpcode;
using fusion::kMaxOperandsAndOutputs;

// The update dimensions of an in-place DUS loop fusion, or null when `f` is not one.
const std::vector<int64_t>* InPlaceUpdateDims(const HloInstruction* f) {
  if (f->opcode() != O::kFusion || f->attrs().fusion_kind != FusionKind::kLoop) return nullptr;
  if (HasControlDependencies(*f) || !f->shape().IsArray()) return nullptr;
  const HloComputation* body = f->fused_instructions_computation();
  if (body == nullptr) return nullptr;
  const HloInstruction* root = body->root_instruction();
  if (root == nullptr || root->opcode() != O::kDynamicUpdateSlice) return nullptr;
  const HloInstruction* target = root->operand(0);
  if (target->opcode() != O::kParameter || target->user_count() != 1) return nullptr;
  return &root->operand(1)->shape().dimensions();
}

// The value the DUS of `f` updates in place (the fusion operand behind its fused parameter).
const HloInstruction* Target(const HloInstruction* f) {
  const HloInstruction* p = f->fused_instructions_computation()->root_instruction()->operand(0);
  return f->operand(p->attrs().parameter_number);
}

class Grouper {
 public:
  explicit Grouper(HloComputation& comp) : post_(comp.MakeInstructionPostOrder()) {
    for (size_t i = 0; i < post_.size(); ++i) position_[post_[i]] = static_cast<int64_t>(i);
  }

  // Groups of two or more, each in post order.
  std::vector<std::vector<HloInstruction*>> Groups(int64_t max_group) {
    std::map<std::vector<int64_t>, std::vector<std::vector<HloInstruction*>>> open;
    for (HloInstruction* f : post_) {
      const std::vector<int64_t>* dims = InPlaceUpdateDims(f);
      if (dims == nullptr) continue;
      std::vector<std::vector<HloInstruction*>>& groups = open[*dims];
      bool placed = false;
      for (std::vector<HloInstruction*>& g : groups) {
        if (static_cast<int64_t>(g.size()) >= max_group || !Fits(g, f)) continue;
        g.push_back(f);
        placed = true;
        break;
      }
      if (!placed) groups.push_back({f});
    }
    std::vector<std::vector<HloInstruction*>> out;
    for (auto& [dims, groups] : open)
      for (std::vector<HloInstruction*>& g : groups)
        if (g.size() >= 2) out.push_back(std::move(g));
    return out;
  }

 private:
  // `f` (later in post order than every member) may join `g`: no member reaches it, no
  // member's target is read by it or the other way round, and the operand limit holds.
  bool Fits(const std::vector<HloInstruction*>& g, const HloInstruction* f) {
    absl::flat_hash_set<const HloInstruction*> members(g.begin(), g.end()), operands;
    for (const HloInstruction* m : g)
      for (const HloInstruction* o : m->operands()) operands.insert(o);
    for (const HloInstruction* m : g) {
      const HloInstruction* t = Target(m);
      for (const HloInstruction* o : f->operands())
        if (o == t) return false;
      const HloInstruction* ft = Target(f);
      for (const HloInstruction* o : m->operands())
        if (o == ft) return false;
    }
    for (const HloInstruction* o : f->operands()) operands.insert(o);
    if (static_cast<int64_t>(operands.size() + g.size() + 1) > kMaxOperandsAndOutputs) return false;
    return !ReachedFrom(f, members, position_.at(g.front()));
  }

  // Whether a member is an ancestor of `f` (operands and control predecessors, back to the
  // first member's position: nothing earlier can be a member).
  bool ReachedFrom(const HloInstruction* f, const absl::flat_hash_set<const HloInstruction*>& members,
                   int64_t earliest) {
    std::vector<const HloInstruction*> stack(f->operands().begin(), f->operands().end());
    stack.insert(stack.end(), f->control_predecessors().begin(), f->control_predecessors().end());
    absl::flat_hash_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* h = stack.back();
      stack.pop_back();
      if (!seen.insert(h).second) continue;
      if (members.contains(h)) return true;
      auto it = position_.find(h);
      if (it == position_.end() || it->second < earliest) continue;
      for (const HloInstruction* o : h->operands()) stack.push_back(o);
      for (const HloInstruction* o : h->control_predecessors()) stack.push_back(o);
    }
    return false;
  }

  std::vector<HloInstruction*> post_;
  absl::flat_hash_map<const HloInstruction*, int64_t> position_;
};

}  // namespace

std::string ExplainHorizontalInPlaceFusion(const HloInstruction* a, const HloInstruction* b) {
  auto say = [](const std::string& s) { return absl::StrCat("  horizontal-in-place-fusion: ", s, "\n"); };
  const std::vector<int64_t>* da = InPlaceUpdateDims(a);
  const std::vector<int64_t>* db = InPlaceUpdateDims(b);
  if (da == nullptr || db == nullptr)
    return say(absl::StrCat("'", (da == nullptr ? a : b)->name(),
                            "' is not an in-place dynamic-update-slice loop fusion (only those are grouped)"));
  if (*da != *db) return say("their updates have different dimensions");
  for (const HloInstruction* o : b->operands())
    if (o == Target(a)) return say(absl::StrCat("'", b->name(), "' reads the buffer '", a->name(), "' updates"));
  for (const HloInstruction* o : a->operands())
    if (o == Target(b)) return say(absl::StrCat("'", a->name(), "' reads the buffer '", b->name(), "' updates"));
  auto depends = [](const HloInstruction* to, const HloInstruction* from) {
    std::vector<const HloInstruction*> stack(to->operands().begin(), to->operands().end());
    absl::flat_hash_set<const HloInstruction*> seen;
    while (!stack.empty()) {
      const HloInstruction* h = stack.back();
      stack.pop_back();
      if (h == from) return true;
      if (!seen.insert(h).second) continue;
      for (const HloInstruction* o : h->operands()) stack.push_back(o);
      for (const HloInstruction* o : h->control_predecessors()) stack.push_back(o);
    }
    return false;
  };
  if (depends(a, b) || depends(b, a)) return say("one depends on the other: merging would make a cycle");
  absl::flat_hash_set<const HloInstruction*> operands(a->operands().begin(), a->operands().end());
  operands.insert(b->operands().begin(), b->operands().end());
  if (static_cast<int64_t>(operands.size() + 2) > kMaxOperandsAndOutputs)
    return say(absl::StrCat("more than ", kMaxOperandsAndOutputs, " operands and outputs together"));
  return say("may share one kernel (one group, up to the pass's max_group members)");
}

absl::StatusOr<bool> HorizontalInPlaceFusion::Run(HloModule& module, PassContext& context) {
  if (max_group_ < 2) return false;
  fusion::FusionBuilder builder(module);
  bool changed = false;
  for (HloComputation* comp : FusibleComputations(module)) {
    // One group at a time, the groups found again after each merge: two groups found together
    // could each reach the other through different members, and merging both would make a
    // cycle. A merged fusion has a tuple root and is no candidate, so this ends; the cap
    // guards bugs (and says so).
    constexpr int64_t kMaxMerges = 1 << 16;
    int64_t merges = 0;
    for (; merges < kMaxMerges; ++merges) {
      std::vector<std::vector<HloInstruction*>> groups = Grouper(*comp).Groups(max_group_);
      if (groups.empty()) break;
      if (context.trace_rules && context.trace_out != nullptr)
        *context.trace_out << "horizontal-in-place-fusion: merged " << groups.front().size() << " in-place updates ("
                           << groups.front()[0]->name() << ", ...)\n";
      if (context.recorder != nullptr) {
        CompileRecorder::FusionEvent e;
        e.producer = groups.front()[0]->name();
        for (size_t i = 1; i < groups.front().size(); ++i)
          absl::StrAppend(&e.consumers, i > 1 ? "," : "", groups.front()[i]->name());
        e.fused = true;
        e.reason = absl::StrCat("horizontal in-place fusion: ", groups.front().size(),
                                " independent in-place updates share one kernel");
        context.recorder->AddFusion(std::move(e));
      }
      absl::StatusOr<HloInstruction*> f = builder.Merge(groups.front());
      if (!f.ok()) return f.status();
      if (absl::Status s = fusion::EnsureDefinitionOrder(*comp); !s.ok()) return s;
      changed = true;
    }
    if (merges == kMaxMerges)
      std::cerr << "hloc: note: horizontal-in-place-fusion stopped after " << kMaxMerges << " merges in "
                << comp->name() << " (its cap); continuing\n";
  }
  return changed;
}

}  // namespace hloc
