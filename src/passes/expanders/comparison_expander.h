// comparison-expander (XLA's ComparisonExpander): a compare with type=TOTALORDER on floats
// becomes a signed-integer compare of keys made from the bit patterns: a negative value's
// sign-magnitude bits are flipped into two's-complement order (x ^ INT_MAX), so that
// -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN. Types without -0 (the *fnuz f8 types) use
// INT_MIN - x instead and put their NaN (the -0 pattern) first, as XLA does.
// expand_via_upcast lists "from:to" float pairs (XLA's constructor argument; XLA:GPU passes
// bf16:f32) whose operands are first converted to the wider type.
#pragma once
#include <utility>
#include <vector>

#include "engine/pass.h"

namespace hloc {

class ComparisonExpander : public HloPass {
 public:
  static constexpr const char* kName = "comparison-expander";
  // Pairs written "bf16:f32" (or "bf16->f32"); checked when the pass runs.
  explicit ComparisonExpander(std::vector<std::string> expand_via_upcast = {})
      : expand_via_upcast_(std::move(expand_via_upcast)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  std::vector<std::string> expand_via_upcast_;
};

}  // namespace hloc
