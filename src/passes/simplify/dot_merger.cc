#include "passes/simplify/dot_merger.h"

#include <algorithm>
#include <map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "passes/expanders/expander_util.h"

namespace hloc {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The single free (neither batch nor contracting) dimension of operand `side` of `dot`, or -1
// when it has none or several (XLA merges along one dimension only).
int64_t FreeDimension(const HloInstruction& dot, int side) {
  const DotDimensionNumbers& d = *dot.attrs().dot_dimension_numbers;
  const auto& batch = side == 0 ? d.lhs_batch_dimensions : d.rhs_batch_dimensions;
  const auto& contracting = side == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
  int64_t free = -1;
  for (int64_t k = 0; k < dot.operand(side)->shape().rank(); ++k) {
    if (Contains(batch, k) || Contains(contracting, k)) continue;
    if (free >= 0) return -1;
    free = k;
  }
  return free;
}

// Whether `a` and `b`, dots with `shared` as operand `side`, can be one dot: same dimension
// numbers, precision, result type and other-operand type, other operands equal but along the
// free dimension, both static and dense.
bool Compatible(const HloInstruction& a, const HloInstruction& b, int side) {
  if (!(*a.attrs().dot_dimension_numbers == *b.attrs().dot_dimension_numbers)) return false;
  if (!(a.attrs().precision_config == b.attrs().precision_config)) return false;
  if (a.shape().element_type() != b.shape().element_type()) return false;
  const Shape& x = a.operand(1 - side)->shape();
  const Shape& y = b.operand(1 - side)->shape();
  if (x.element_type() != y.element_type() || x.rank() != y.rank()) return false;
  const int64_t f = FreeDimension(a, 1 - side);
  if (f < 0 || f != FreeDimension(b, 1 - side)) return false;
  for (int64_t k = 0; k < x.rank(); ++k)
    if (k != f && x.dimensions(k) != y.dimensions(k)) return false;
  return true;
}

bool Eligible(const HloInstruction& dot, int side, int64_t max_size) {
  if (dot.opcode() != HloOpcode::kDot || dot.operand_count() != 2 || !dot.attrs().dot_dimension_numbers) return false;
  if (!dot.control_predecessors().empty() || !dot.control_successors().empty()) return false;
  if (!dot.shape().IsArray() || !dot.shape().is_static()) return false;
  for (const HloInstruction* op : dot.operands())
    if (!op->shape().IsArray() || !op->shape().is_static()) return false;
  if (dot.operand(0) == dot.operand(1)) return false;  // x.x^T: which side would be shared?
  if (dot.shape().byte_size() > max_size || dot.operand(1 - side)->shape().byte_size() > max_size) return false;
  return FreeDimension(dot, 1 - side) >= 0;
}

// Answers "does a path lead from a to b" by a forward search from a, pruned by post-order
// position (a path only goes to later positions).
class Paths {
 public:
  explicit Paths(const HloComputation& comp) {
    const std::vector<HloInstruction*> order = comp.MakeInstructionPostOrder();
    for (size_t i = 0; i < order.size(); ++i) position_[order[i]] = static_cast<int64_t>(i);
  }
  bool Reaches(const HloInstruction* a, const HloInstruction* b) const {
    const int64_t limit = position_.at(b);
    if (position_.at(a) >= limit) return false;
    std::vector<const HloInstruction*> work = {a};
    absl::flat_hash_set<const HloInstruction*> seen = {a};
    while (!work.empty()) {
      const HloInstruction* x = work.back();
      work.pop_back();
      auto visit = [&](const HloInstruction* y) {
        if (y == b) return true;
        auto it = position_.find(y);
        if (it != position_.end() && it->second < limit && seen.insert(y).second) work.push_back(y);
        return false;
      };
      for (const HloInstruction* u : x->users())
        if (visit(u)) return true;
      for (const HloInstruction* s : x->control_successors())
        if (visit(s)) return true;
    }
    return false;
  }

 private:
  absl::flat_hash_map<const HloInstruction*, int64_t> position_;
};

// Replaces `group` (dots with `shared` as operand `side`) by one dot and slices of it.
absl::StatusOr<bool> Merge(const std::vector<HloInstruction*>& group, int side, NameUniquer& names) {
  HloInstruction* first = group.front();
  const DotDimensionNumbers& d = *first->attrs().dot_dimension_numbers;
  const int64_t f = FreeDimension(*first, 1 - side);
  // Where the concatenated dimension lands in the result: batch dims, lhs free, rhs free.
  const int64_t batch = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  const int64_t out_dim = side == 1 ? batch : first->shape().rank() - 1;
  // Appended: the post order follows operands, not the instruction list.
  expanders::ExpanderBuilder b(first->parent(), &names, nullptr);
  // A copy: the loop below replaces (frees) `first`, and every slice after that would read
  // its metadata through a dangling pointer.
  const OpMetadata metadata = first->attrs().metadata;
  b.set_metadata(&metadata);
  std::vector<HloInstruction*> others;
  for (HloInstruction* g : group) others.push_back(g->operand(1 - side));
  HloInstruction* cat = b.Concatenate(others, f);
  HloInstruction* shared = first->operand(side);
  HloInstruction* merged = side == 0 ? b.Dot(shared, cat, d, first->attrs().precision_config, first->shape().element_type())
                                     : b.Dot(cat, shared, d, first->attrs().precision_config, first->shape().element_type());
  if (merged == nullptr || !b.ok()) {
    b.Discard();
    return false;
  }
  int64_t offset = 0;
  for (HloInstruction* g : group) {
    std::vector<int64_t> starts(g->shape().rank(), 0), limits(g->shape().dimensions().begin(), g->shape().dimensions().end());
    starts[out_dim] = offset;
    limits[out_dim] = offset + g->shape().dimensions(out_dim);
    offset = limits[out_dim];
    HloInstruction* slice = b.Slice(merged, starts, limits);
    if (slice == nullptr) return b.status();
    ReplaceOptions options;
    options.remove_unused_operands = false;  // the other operand may be shared with the group
    absl::StatusOr<bool> r = ReplaceInstruction(g, slice, options);
    if (!r.ok()) return r.status();
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> DotMerger::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
    // Candidate groups: (shared operand, side) -> its dot users in post order.
    std::map<std::pair<int64_t, int>, std::vector<HloInstruction*>> users;
    std::map<std::pair<int64_t, int>, HloInstruction*> key_inst;
    absl::flat_hash_map<const HloInstruction*, int64_t> pos;
    for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int64_t>(i);
    for (HloInstruction* inst : order) {
      if (inst->opcode() != HloOpcode::kDot || inst->operand_count() != 2) continue;
      for (int side = 0; side < 2; ++side) {
        if (!Eligible(*inst, side, max_size_)) continue;
        users[{pos[inst->operand(side)], side}].push_back(inst);
      }
    }
    // Rebuilt after every merge: a path may now run through the merged dot.
    std::unique_ptr<Paths> paths;
    auto reaches = [&](const HloInstruction* a, const HloInstruction* b) {
      if (!paths) paths = std::make_unique<Paths>(*comp);
      return paths->Reaches(a, b);
    };
    absl::flat_hash_set<const HloInstruction*> merged;  // removed by an earlier group
    for (auto& [key, dots] : users) {
      if (dots.size() < 2) continue;
      std::vector<bool> taken(dots.size(), false);
      for (size_t i = 0; i < dots.size(); ++i) {
        if (taken[i] || merged.count(dots[i])) continue;
        std::vector<HloInstruction*> group = {dots[i]};
        for (size_t j = i + 1; j < dots.size(); ++j) {
          if (taken[j] || merged.count(dots[j]) || !Compatible(*dots[i], *dots[j], key.second)) continue;
          bool independent = true;
          for (HloInstruction* g : group)
            independent = independent && !reaches(g, dots[j]) && !reaches(dots[j], g);
          if (!independent) continue;
          group.push_back(dots[j]);
          taken[j] = true;
        }
        if (group.size() < 2) continue;
        absl::StatusOr<bool> r = Merge(group, key.second, names);
        if (!r.ok()) return r.status();
        if (*r) {
          for (HloInstruction* g : group) merged.insert(g);
          changed = true;
          paths.reset();
        }
      }
    }
    // The new instructions were appended: put them before their users (the printed module
    // defines every value before it is read); the rest keeps its order.
    if (changed) {
      if (absl::Status s = comp->SetInstructionOrder(comp->MakeInstructionPostOrder()); !s.ok()) return s;
    }
  }
  return changed;
}

void RegisterDotMergerPass(PassRegistry& registry) {
  PassInfo info;
  info.name = DotMerger::kName;
  info.description = "dots sharing an operand, independent of each other -> one dot over concatenated operands, sliced";
  info.options = {{"max_size_to_merge", OptionType::kInt, OptionValue(int64_t{32} << 20),
                   "bytes: a dot whose result or other operand is larger is not merged (XLA's GPU value)"}};
  info.factory = [](const PassOptions& o) -> std::unique_ptr<HloPass> {
    return std::make_unique<DotMerger>(o.Has("max_size_to_merge") ? o.GetInt("max_size_to_merge") : int64_t{32} << 20);
  };
  registry.Register(std::move(info));
}

}  // namespace hloc
