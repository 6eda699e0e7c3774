// dce: XLA's HloDCE. Removes instructions nothing uses (not roots, no side effects, no control
// edges), unused outputs of multi-output fusions, and computations no live instruction calls.
#pragma once
#include "engine/pass.h"

namespace hloc {

struct DceOptions {
  // Dead collectives without constrain_layout may go although they carry a channel id (and are
  // so side-effecting); also whiles whose only side effects are such collectives.
  bool remove_cross_partition_collective_ops = false;
};

class HloDcePass : public HloPass {
 public:
  explicit HloDcePass(DceOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

  // The pass without a context, for passes that clean up after themselves (call-inliner).
  static absl::StatusOr<bool> RunOnModule(HloModule& module, const DceOptions& options = {});
  // Dead instructions of one computation only (no computation removal).
  static absl::StatusOr<bool> RunOnComputation(HloComputation& computation, const DceOptions& options = {});

 private:
  DceOptions options_;
};

void RegisterDcePass(PassRegistry& registry);

}  // namespace hloc
