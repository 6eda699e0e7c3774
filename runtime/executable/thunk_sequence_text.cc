// ThunkSequenceToString: thunk_sequence.txt in the form of XLA's dumps, e.g.
//   001: kCopy   [source       | next=003 (2)] kCopy
//   002: kKernel [source       | next=003 (1)] loop_add_fusion grid: [1, 1, 1] threads: [1, 1, 1]  shared_memory: 0 bytes
//   003: kWhile  [prev=002 (1) | sink        ]
//   condition:
//       004: kKernel [source | sink] loop_compare_fusion ...
//     body:
//       005: ...
// Thunks are numbered in pre-order across nested sequences. The bracket shows the thunk's place
// in its sequence's dependency graph, as XLA's execution graph prints it: the nearest earlier
// thunk it depends on ("prev=N (distance)") or "source", and the nearest later thunk that
// depends on it ("next=N (distance)") or "sink". Two thunks depend on each other when they
// touch overlapping bytes and at least one writes them (nested sequences count as their
// parent's uses).
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {
namespace {

struct Use {
  BufferSlice slice;
  bool write;
};

bool ArgumentWritten(const Thunk& t, size_t i) {
  if (i < t.written.size()) return t.written[i];
  // Without flags: the kind's convention (copy writes its destination, memset its only
  // argument, a GEMM its last), everything else conservatively written.
  switch (t.kind) {
    case ThunkKind::kCopy: return i == 1;
    case ThunkKind::kMemset: return true;
    case ThunkKind::kGemm:
    case ThunkKind::kConvolution: return i + 1 == t.arguments.size();
    default: return true;
  }
}

void CollectUses(const Thunk& t, std::vector<Use>* uses, int depth) {
  for (size_t i = 0; i < t.arguments.size(); ++i) uses->push_back({t.arguments[i], ArgumentWritten(t, i)});
  if (t.predicate.valid()) uses->push_back({t.predicate, false});
  if (depth > 64) return;  // deserialized executables are capped far below this
  auto nested = [&](const ThunkSequence& seq) {
    for (const Thunk& n : seq) CollectUses(n, uses, depth + 1);
  };
  nested(t.condition);
  nested(t.body);
  for (const ThunkSequence& b : t.branches) nested(b);
}

bool Overlap(const BufferSlice& a, const BufferSlice& b) {
  if (a.allocation != b.allocation || !a.valid()) return false;
  return a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

bool Conflict(const Use& x, const Use& y) { return (x.write || y.write) && Overlap(x.slice, y.slice); }

// The thunks' uses grouped by allocation, in thunk order, so that the nearest dependent thunk
// is searched among the thunks touching the same allocation only: comparing every pair of
// thunks made printing quadratic (a root tuple of 20,000 leaves, 20,000 independent copies,
// took seconds; issue 17's T3).
class UseIndex {
 public:
  explicit UseIndex(const std::vector<std::vector<Use>>& uses) : uses_(uses) {
    for (size_t i = 0; i < uses.size(); ++i)
      for (const Use& u : uses[i])
        if (u.slice.valid()) by_allocation_[u.slice.allocation].push_back({i, &u});
  }

  // The nearest thunk before j (after j when `later`) that thunk j depends on (that depends on
  // thunk j), or -1.
  int64_t Nearest(size_t j, bool later) const {
    int64_t best = -1;
    for (const Use& x : uses_[j]) {
      if (!x.slice.valid()) continue;
      const auto& list = by_allocation_.at(x.slice.allocation);
      auto at = std::lower_bound(list.begin(), list.end(), j,
                                 [](const std::pair<size_t, const Use*>& e, size_t k) { return e.first < k; });
      if (later) {
        for (auto it = at; it != list.end(); ++it) {
          if (it->first == j) continue;
          if (best >= 0 && static_cast<int64_t>(it->first) >= best) break;
          if (Conflict(x, *it->second)) {
            best = static_cast<int64_t>(it->first);
            break;
          }
        }
      } else {
        for (auto it = at; it != list.begin();) {
          --it;
          if (static_cast<int64_t>(it->first) <= best) break;
          if (Conflict(x, *it->second)) {
            best = static_cast<int64_t>(it->first);
            break;
          }
        }
      }
    }
    return best;
  }

 private:
  const std::vector<std::vector<Use>>& uses_;
  absl::flat_hash_map<int64_t, std::vector<std::pair<size_t, const Use*>>> by_allocation_;
};

void Number(const ThunkSequence& seq, int64_t* next, std::vector<std::pair<const Thunk*, int64_t>>* numbers) {
  for (const Thunk& t : seq) {
    numbers->push_back({&t, ++*next});
    Number(t.condition, next, numbers);
    Number(t.body, next, numbers);
    for (const ThunkSequence& b : t.branches) Number(b, next, numbers);
  }
}

class Printer {
 public:
  explicit Printer(const ThunkSequence& top) : numbers_(NumberThunks(top)) {}

  int NumberOf(const Thunk* t) const {
    auto it = std::lower_bound(numbers_.begin(), numbers_.end(), std::make_pair(t, int64_t{0}));
    return it != numbers_.end() && it->first == t ? static_cast<int>(it->second) : 0;
  }

  // The sequence's lines joined by '\n' (no trailing newline), each indented by 2*indent.
  std::string Sequence(const ThunkSequence& seq, int indent, int depth) const {
    const std::string pad(2 * indent, ' ');
    if (seq.empty()) return pad + "No thunks.";
    std::vector<std::vector<Use>> uses(seq.size());
    for (size_t i = 0; i < seq.size(); ++i) CollectUses(seq[i], &uses[i], depth);
    std::vector<std::string> left(seq.size()), right(seq.size());
    size_t left_width = 0, right_width = 0, kind_width = 0;
    const UseIndex index(uses);
    for (size_t j = 0; j < seq.size(); ++j) {
      left[j] = "source";
      if (const int64_t i = index.Nearest(j, /*later=*/false); i >= 0)
        left[j] = absl::StrFormat("prev=%03d (%d)", NumberOf(&seq[i]), static_cast<int64_t>(j) - i);
      right[j] = "sink";
      if (const int64_t k = index.Nearest(j, /*later=*/true); k >= 0)
        right[j] = absl::StrFormat("next=%03d (%d)", NumberOf(&seq[k]), k - static_cast<int64_t>(j));
      left_width = std::max(left_width, left[j].size());
      right_width = std::max(right_width, right[j].size());
      kind_width = std::max(kind_width, std::string(ThunkKindName(seq[j].kind)).size());
    }
    std::string out;
    for (size_t j = 0; j < seq.size(); ++j) {
      const Thunk& t = seq[j];
      if (j > 0) out += "\n";
      absl::StrAppendFormat(&out, "%s%03d: %-*s [%-*s | %-*s] ", pad, NumberOf(&t), static_cast<int>(kind_width),
                            ThunkKindName(t.kind), static_cast<int>(left_width), left[j],
                            static_cast<int>(right_width), right[j]);
      out += Details(t, indent + 1, depth);
    }
    return out;
  }

 private:
  // replica_groups and pairs in device ids, as XLA prints them (only for several devices).
  static std::string CollectiveDetails(const CollectiveConfig& c) {
    if (c.op.empty()) return "";
    std::string s;
    if (!c.groups.empty()) {
      std::vector<std::string> groups;
      for (const std::vector<int64_t>& g : c.groups) groups.push_back(absl::StrCat("{", absl::StrJoin(g, ","), "}"));
      absl::StrAppend(&s, " replica_groups={", absl::StrJoin(groups, ","), "}");
    }
    if (!c.source_target_pairs.empty()) {
      std::vector<std::string> pairs;
      for (const auto& [a, b] : c.source_target_pairs) pairs.push_back(absl::StrCat("{", a, ",", b, "}"));
      absl::StrAppend(&s, " source_target_pairs={", absl::StrJoin(pairs, ","), "}");
    }
    if (c.dimension >= 0) absl::StrAppend(&s, " dimensions={", c.dimension, "}");
    if (!c.reduction.empty()) absl::StrAppend(&s, " reduction=", c.reduction);
    if (c.async_id >= 0) absl::StrAppend(&s, " async_id=", c.async_id);
    return s;
  }

  std::string Details(const Thunk& t, int indent, int depth) const {
    const std::string pad(2 * indent, ' ');
    const LaunchDimensions& l = t.launch;
    switch (t.kind) {
      case ThunkKind::kKernel: {
        std::string s = absl::StrFormat("%s grid: [%d, %d, %d] threads: [%d, %d, %d]  shared_memory: %d bytes",
                                        t.kernel_name, l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y,
                                        l.block_z, l.shared_memory_bytes);
        if (l.partitions != 1) absl::StrAppend(&s, "  partitions: ", l.partitions);
        return s;
      }
      case ThunkKind::kWhile: {
        std::string s = absl::StrCat(pad, "\ncondition:\n", Sequence(t.condition, indent + 1, depth + 1), "\n", pad,
                                     "body:\n", Sequence(t.body, indent + 1, depth + 1));
        return s;
      }
      case ThunkKind::kConditional: {
        std::string s = pad;
        // A pred selects branches[0] when true (XLA's true_computation is branch 0).
        const bool is_pred = t.predicate.size == 1 && t.branches.size() == 2;
        for (size_t i = 0; i < t.branches.size(); ++i) {
          std::string label = is_pred ? (i == 0 ? "true_branch" : "false_branch") : absl::StrCat("branch_", i);
          absl::StrAppend(&s, "\n", pad, label, ":\n", Sequence(t.branches[i], indent + 1, depth + 1));
        }
        return s;
      }
      case ThunkKind::kSequential:
        return absl::StrCat(pad, "\n", Sequence(t.body, indent + 1, depth + 1));
      case ThunkKind::kCommandBuffer:
        return absl::StrCat("lanes=", t.lanes, "\n", Sequence(t.body, indent + 1, depth + 1));
      case ThunkKind::kCustomCall:
        return absl::StrCat(t.target, " ", t.name);
      case ThunkKind::kCollective:
        return absl::StrCat(t.target, " ", t.name, CollectiveDetails(t.collective));
      case ThunkKind::kFft:
        return absl::StrCat(t.fft.fft_type, " fft_length={", absl::StrJoin(t.fft.fft_length, ","), "} ", t.name,
                            t.kernel_name.empty() ? "" : absl::StrCat(" scaled by ", t.kernel_name));
      default:
        return ThunkKindName(t.kind);
    }
  }

  std::vector<std::pair<const Thunk*, int64_t>> numbers_;
};

}  // namespace

std::vector<std::pair<const Thunk*, int64_t>> NumberThunks(const ThunkSequence& thunks) {
  std::vector<std::pair<const Thunk*, int64_t>> numbers;
  int64_t next = 0;
  Number(thunks, &next, &numbers);
  std::sort(numbers.begin(), numbers.end());
  return numbers;
}

std::string ThunkSequenceToString(const ThunkSequence& thunks) {
  Printer printer(thunks);
  return printer.Sequence(thunks, 0, 0) + "\n";
}

std::string ExecutableThunksToString(const Executable& executable) {
  std::string text = ThunkSequenceToString(executable.thunks);
  if (executable.num_devices() == 1) return text;
  return absl::StrCat("devices: num_partitions=", executable.num_partitions, " replica_count=",
                      executable.replica_count, "\n", text);
}

}  // namespace hloc::runtime
