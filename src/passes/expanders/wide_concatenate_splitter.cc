#include "passes/expanders/wide_concatenate_splitter.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/profile.h"
#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

int64_t DistinctOperands(const std::vector<HloInstruction*>& xs) {
  absl::flat_hash_set<const HloInstruction*> seen(xs.begin(), xs.end());
  return static_cast<int64_t>(seen.size());
}

// Consecutive runs of `xs`, each with at most k distinct members.
std::vector<std::vector<HloInstruction*>> Groups(const std::vector<HloInstruction*>& xs, int64_t k) {
  std::vector<std::vector<HloInstruction*>> groups(1);
  absl::flat_hash_set<const HloInstruction*> in_group;
  for (HloInstruction* x : xs) {
    if (!in_group.contains(x) && static_cast<int64_t>(in_group.size()) == k) {
      groups.emplace_back();
      in_group.clear();
    }
    in_group.insert(x);
    groups.back().push_back(x);
  }
  return groups;
}

// A concatenate of `xs` along `dim` with the layout of `like` (the pass runs after layout
// assignment; the builder gives new shapes the default layout).
HloInstruction* ConcatenateLike(ExpanderBuilder& b, const std::vector<HloInstruction*>& xs, int64_t dim,
                                const HloInstruction* like) {
  HloInstruction* c = b.Concatenate(xs, dim);
  if (c != nullptr && like->shape().has_layout()) c->mutable_shape().set_layout(like->shape().layout());
  return c;
}

}  // namespace

absl::StatusOr<bool> WideConcatenateSplitter::Run(HloModule& module, PassContext& context) {
  Tuning defaults;
  const Tuning& tuning = context.profile != nullptr ? context.profile->tuning : defaults;
  const int64_t k = max_distinct_ >= 0 ? max_distinct_ : tuning.Get(TuningKnob::kConcatenateMaxDistinctOperands);
  if (k < 2) return absl::InvalidArgumentError(absl::StrCat(kName, ": max_distinct_operands must be at least 2, not ", k));
  NameUniquer names = InstructionNameUniquer(module);
  return expanders::RunOpExpander(
      module,
      [k](const HloInstruction& inst) {
        return inst.opcode() == HloOpcode::kConcatenate && inst.shape().IsArray() &&
               inst.attrs().dimensions.size() == 1 &&
               DistinctOperands(std::vector<HloInstruction*>(inst.operands().begin(), inst.operands().end())) > k;
      },
      [&](HloInstruction* concat) -> absl::StatusOr<HloInstruction*> {
        const int64_t dim = concat->attrs().dimensions[0];
        const OpMetadata metadata = concat->attrs().metadata;
        ExpanderBuilder b(concat->parent(), &names, concat);
        b.set_metadata(&metadata);
        std::vector<HloInstruction*> level(concat->operands().begin(), concat->operands().end());
        while (DistinctOperands(level) > k) {
          std::vector<HloInstruction*> next;
          for (const std::vector<HloInstruction*>& g : Groups(level, k))
            next.push_back(g.size() == 1 ? g[0] : ConcatenateLike(b, g, dim, concat));
          level = std::move(next);
        }
        HloInstruction* root = ConcatenateLike(b, level, dim, concat);
        if (!b.ok()) {
          b.Discard();
          return b.status();
        }
        return root;
      });
}

}  // namespace hloc
