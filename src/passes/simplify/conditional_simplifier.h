// simplify-conditional (XLA's ConditionalSimplifier):
//   - a conditional with one branch, a constant predicate / branch index, or branches that
//     all compute the same thing from the same operand is replaced by the inlined branch;
//   - a two-branch predicated conditional whose branches are cheap becomes a select of both
//     inlined branches;
//   - duplicate and unused elements of its tuple result are merged / removed, and a
//     conditional nobody reads returns an empty tuple;
//   - tuple elements of a branch operand that the branch never reads are dropped.
// Conditionals with side effects, control edges, channel instructions or a sharding are
// left alone, as in XLA.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ConditionalSimplifier : public HloPass {
 public:
  static constexpr const char* kName = "simplify-conditional";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
