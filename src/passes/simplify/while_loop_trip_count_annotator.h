// while-loop-trip-count-annotator (XLA's WhileLoopTripCountAnnotator): records on every while
// loop with an induction variable what is known about it in its backend_config, in XLA's
// WhileLoopBackendConfig JSON:
//   {"dynamic_variables":[],"known_induction_variable":{"tuple_index":"0"},
//    "known_init_step":{"init":"0","step":"1"},"known_trip_count":{"n":"128"}}
// The backends read known_trip_count: the GPU while thunk then runs the body n times without
// evaluating the condition (no predicate read back to the host each trip). For a loop of the
// trivial form `for (i = c0; i < c1 (or <= c1); i += k)` the pass also replaces reads of the
// induction variable from the while's result with its final value, as XLA does.
// dynamic_variables (host-offloading's dynamic-update-slice indices) is always empty: hloc has
// no host offloading.
#pragma once
#include "engine/pass.h"

namespace hloc {

class WhileLoopTripCountAnnotator : public HloPass {
 public:
  static constexpr const char* kName = "while-loop-trip-count-annotator";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
