// horizontal-in-place-fusion: independent in-place dynamic-update-slice fusions of one
// computation whose updates have the same shape become one multi-output fusion, one kernel
// writing every update (XLA's in-place DUS emitter takes such tuples of updates of one shape).
//
// Why: a scan body stacks each residual the backward pass needs into its own [T, ...] buffer,
// one dynamic-update-slice each (flax_gru_train's forward step: 9 of them, 9 kernels of
// 1.5 us a step after the step's math). Their updates read the same few values (the gates),
// so one kernel also reads those once.
//
// A group is kLoop fusions whose root is a dynamic-update-slice of a fused parameter used by
// nothing else (the in-place form), with the same update dimensions, no control edges, no path
// between any two of them (the merge would make a cycle), and at most `max_group` members and
// the multi-output operand limit.
#pragma once
#include <string>

#include "engine/pass.h"

namespace hloc {

class HorizontalInPlaceFusion : public HloPass {
 public:
  static constexpr char kName[] = "horizontal-in-place-fusion";
  explicit HorizontalInPlaceFusion(int64_t max_group) : max_group_(max_group) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t max_group_;
};

// `hloc opt --explain-fusion A,B` for this pass: whether A and B could share one kernel here, or
// the first condition above that fails. Lines start with "  horizontal-in-place-fusion: ".
std::string ExplainHorizontalInPlaceFusion(const HloInstruction* a, const HloInstruction* b);

}  // namespace hloc
