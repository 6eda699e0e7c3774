// flatten-call-graph: XLA's FlattenCallGraph. A computation called from more than one
// control-flow call site (call, while, conditional) gets a copy per extra site, recursively, so
// that afterwards each such computation has one caller. Embedded uses (reduce, map, sort,
// fusion, ...) may keep sharing; async-wrapped computations are left alone.
#pragma once
#include "engine/pass.h"

namespace hloc {

class FlattenCallGraphPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

void RegisterFlattenCallGraphPass(PassRegistry& registry);

}  // namespace hloc
