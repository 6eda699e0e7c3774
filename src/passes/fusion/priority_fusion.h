// priority-fusion (XLA's PriorityFusion, xla/service/gpu/transforms/priority_fusion.cc):
// producers are fused into all of their consumers, best first by the cost model's benefit
// (time unfused - time fused), while the benefit is not negative and every consumer may
// take it (rules/fusion/*.td). A producer with several consumers is duplicated into each.
// After each fusion the priorities of the new fusions and of their operands are recomputed.
#pragma once
#include <ostream>
#include <string>

#include "engine/pass.h"

namespace hloc {

class PriorityFusion : public HloPass {
 public:
  static constexpr char kName[] = "priority-fusion";
  // target: "cpu" / "gpu" force the IsCpu / IsGpu rule requirements; "" follows the profile.
  explicit PriorityFusion(std::string target = "") : target_(std::move(target)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  std::string target_;
};

// Computations where fusion runs: the entry and control-flow bodies (while, conditional,
// call), not fused or embedded (to_apply) computations.
std::vector<HloComputation*> FusibleComputations(const HloModule& module);

// `hloc opt --explain-fusion A,B`: why producer A would or would not fuse into consumer B in
// `module` as it is (legality with the veto's rule file:line, then the cost numbers).
std::string ExplainFusion(HloModule& module, const std::string& producer, const std::string& consumer,
                          PassContext& context);

}  // namespace hloc
