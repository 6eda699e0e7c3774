// cse: XLA's HloCSE. Identical constants merge; then, in post order, an instruction identical to
// an earlier one (same opcode, operands, shape, attributes and called computations, commutative
// operands in either order) is replaced by it. Side-effecting instructions never merge.
#pragma once
#include "engine/pass.h"

namespace hloc {

struct CseOptions {
  // Shapes (and constants) must agree in layout too, not only in dimensions and type.
  bool is_layout_sensitive = false;
  // Only run on fused computations (XLA's only_fusion_computations).
  bool only_fusion_computations = false;
  // Merge instructions with control edges too, relaying the edges.
  bool ignore_control_dependencies = false;
  // Only merge instructions of scalar shape (XLA's only_scalars).
  bool only_scalars = false;
};

class HloCsePass : public HloPass {
 public:
  explicit HloCsePass(CseOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
  static absl::StatusOr<bool> RunOnComputation(HloComputation& computation, const CseOptions& options);

 private:
  CseOptions options_;
};

void RegisterCsePass(PassRegistry& registry);

}  // namespace hloc
