// multi_output_fusion (XLA's GPU MultiOutputFusion, xla/service/gpu/transforms/
// multi_output_fusion.cc), and the passes that finish the fusion stage.
//  - producer-consumer: a producer whose value is also needed elsewhere joins its consumer's
//    kernel and becomes an extra output (the consumer then reads it from registers, the other
//    users from the fusion's tuple);
//  - sibling: two consumers of one operand share a kernel, so that operand is read once.
// Both only when the kernels iterate the same shape (ShapesCompatibleForMultiOutputFusion),
// no cycle would arise (reachability), the heroes agree, the operand limit holds and the cost
// model expects a gain.
#pragma once
#include <string>

#include "engine/pass.h"

namespace hloc {

class MultiOutputFusion : public HloPass {
 public:
  static constexpr char kName[] = "multi_output_fusion";
  MultiOutputFusion(bool producer_consumer, bool siblings) : producer_consumer_(producer_consumer), siblings_(siblings) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool producer_consumer_, siblings_;
};

// `hloc opt --explain-fusion A,B` for this pass: whether multi-output fusion would merge the two
// kernels (producer-consumer when B reads A, siblings when they read a common operand), each of
// the pass's checks in its order with the first that fails, and the cost model's numbers.
// Lines start with "  multi-output fusion: ".
std::string ExplainMultiOutputFusion(HloInstruction* a, HloInstruction* b, PassContext& context);

// rename_fusions (XLA's RenameFusions): fusions get "<kind>_<heroes>_fusion" names
// (loop_add_fusion, input_reduce_fusion) and their computations "fused_<heroes>".
class RenameFusions : public HloPass {
 public:
  static constexpr char kName[] = "rename_fusions";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

// fusion-wrapper (XLA's FusionWrapper): every instruction left outside a fusion that a
// kernel computes (elementwise, data movement, reduce, scatter, ...) is wrapped in a fusion
// of its own ("wrapped_<op>", computation "wrapped_<op>_computation"), so code generation
// only meets fusions.
class FusionWrapper : public HloPass {
 public:
  static constexpr char kName[] = "fusion-wrapper";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
