// sort-merger: a sort of operands X and a sort of X followed by more operands Y, over the same
// dimension, with comparators that agree (the longer one ignores Y's parameters), become one
// sort: the shorter sort's results are the longer one's first |X| results. JAX's
// `sort(x)` + `argsort(x)` (a sort of (x, iota)) is the case: XLA reaches the same single
// variadic sort through stable-sort-expander and CSE (see
// tests/corpus/sort_topk.large.after_optimizations.txt), and it halves the sorting work.
//
// Stability: for comparators that ignore Y, a stable sort's first |X| results do not depend on
// Y; an unstable sort may return any order consistent with the comparator, the stable one
// included. So the merged sort is stable when either was.
#pragma once
#include "engine/pass.h"

namespace hloc {

class SortMerger : public HloPass {
 public:
  static constexpr const char* kName = "sort-merger";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
