// dot_decomposer (XLA's DotDecomposer): a dot not in canonical form (batch dimensions leading
// and in order, exactly one contracting dimension and at most one non-contracting dimension
// per operand) is rewritten as transposes and reshapes of its operands into
// lhs [batch..., m, k] x rhs [batch..., k, n] (m or n left out when it is 1), a canonical
// dot, and a reshape back to the original result shape. Sparse dots (meta operands) are left
// alone.
#pragma once
#include "engine/pass.h"

namespace hloc {

class DotDecomposer : public HloPass {
 public:
  static constexpr const char* kName = "dot_decomposer";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
