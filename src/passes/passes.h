// Registration of hloc's passes, one function per area. Each area's file registers its passes
// under XLA's names with their typed options.
#pragma once
#include "engine/pass.h"

namespace hloc {

// src/passes/simplify/: dce, cse, constant_folding, tuple-simplifier, call-inliner,
// flatten-call-graph, zero_sized_hlo_elimination.
void RegisterSimplifyPasses(PassRegistry& registry);
// src/passes/simplify/: simplify-while-loops, simplify-conditional, simplify-sorts,
// reshape-mover, convert-mover.
void RegisterControlFlowAndMoverPasses(PassRegistry& registry);
// src/passes/expanders/: rng-bit-generator-expander, logistic-expander, batchnorm_expander,
// comparison-expander, dot_decomposer.
void RegisterExpanderPasses(PassRegistry& registry);
// src/passes/rewrite_passes.cc: the rule-driven passes (algsimp, ...), one per `Pass` name
// used by the generated rules.
void RegisterRewritePasses(PassRegistry& registry);

}  // namespace hloc
