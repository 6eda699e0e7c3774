// batchnorm_expander (XLA's BatchNormExpander): batch-norm-training, batch-norm-inference and
// batch-norm-grad become elementwise ops, broadcasts and add-reductions over the non-feature
// dimensions, with XLA's formulas (variance as E[X^2] - E[X]^2, the element count per feature
// from get-dimension-size so dynamic shapes work). Each kind is rewritten only when its option
// is on; XLA's constructor defaults are off, but XLA:GPU and XLA:CPU turn all three on, and
// so do hloc's defaults.
#pragma once
#include "engine/pass.h"

namespace hloc {

class BatchNormExpander : public HloPass {
 public:
  static constexpr const char* kName = "batchnorm_expander";
  BatchNormExpander(bool rewrite_training_op = true, bool rewrite_inference_op = true, bool rewrite_grad_op = true)
      : rewrite_training_op_(rewrite_training_op),
        rewrite_inference_op_(rewrite_inference_op),
        rewrite_grad_op_(rewrite_grad_op) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool rewrite_training_op_;
  bool rewrite_inference_op_;
  bool rewrite_grad_op_;
};

}  // namespace hloc
