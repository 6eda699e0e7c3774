// constant_folding: XLA's HloConstantFolding. An instruction whose operands are constants (at
// least one), broadcasts of constants or iotas is evaluated with the reference evaluator and
// replaced by a constant. Broadcasts, iotas, FFTs, side effects, rng, after-all, custom-calls,
// collectives and (at the default level) whiles are left alone, as are results or operands
// above a size limit.
#pragma once
#include <cstdint>
#include <string>

#include "engine/pass.h"

namespace hloc {

struct ConstantFoldingOptions {
  // XLA's Level: kDefault folds only instructions with a constant operand, keeps whiles and
  // the size limit; kAggressive also folds whiles (up to max_loop_iterations trips), pure
  // broadcast/iota operands and any size.
  bool aggressive = false;
  // XLA's kMaximumConstantSizeElements: neither the result nor the operands together may hold
  // more elements (default level).
  int64_t max_constant_size_elements = 45 * 1000 * 1000;
  // Trip limit for while loops at the aggressive level (a loop that runs longer stays).
  int64_t max_loop_iterations = 1 << 20;
  // A `level` option value other than default/aggressive, reported when the pass runs (the
  // registry's factories cannot fail).
  std::string invalid_level;
};

class ConstantFoldingPass : public HloPass {
 public:
  explicit ConstantFoldingPass(ConstantFoldingOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  ConstantFoldingOptions options_;
};

void RegisterConstantFoldingPass(PassRegistry& registry);

}  // namespace hloc
