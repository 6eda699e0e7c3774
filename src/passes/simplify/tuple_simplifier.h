// tuple-simplifier: XLA's TupleSimplifier. get-tuple-element(tuple(..., x, ...)) -> x (through
// chains of get-tuple-elements), and tuple(gte(t, 0), ..., gte(t, n-1)) -> t when it rebuilds
// all of t.
#pragma once
#include "engine/pass.h"

namespace hloc {

struct TupleSimplifierOptions {
  // Leave the entry computation alone (XLA's exclude_entry_computation).
  bool exclude_entry_computation = false;
};

class TupleSimplifierPass : public HloPass {
 public:
  explicit TupleSimplifierPass(TupleSimplifierOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  TupleSimplifierOptions options_;
};

void RegisterTupleSimplifierPass(PassRegistry& registry);

}  // namespace hloc
