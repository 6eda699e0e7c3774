// zero_sized_hlo_elimination: XLA's ZeroSizedHloElimination. An array instruction with no
// elements (a zero in its static dimensions) computes nothing, so it becomes a constant of its
// shape; a zero-sized parameter stays but its users read such a constant instead.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ZeroSizedHloEliminationPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

void RegisterZeroSizedHloEliminationPass(PassRegistry& registry);

}  // namespace hloc
