// simplify-sorts (XLA's SortSimplifier): a multi-operand sort whose outputs are read only
// through get-tuple-element drops the operands nobody reads, unless the comparator looks at
// them (they take part in the order).
#pragma once
#include "engine/pass.h"

namespace hloc {

class SortSimplifier : public HloPass {
 public:
  static constexpr const char* kName = "simplify-sorts";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
