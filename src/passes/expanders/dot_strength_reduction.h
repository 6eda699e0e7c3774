// dot-strength-reduction (XLA's AlgebraicSimplifier dot strength reduction, as the GPU
// pipeline enables it): a dot one of whose operands has only batch and contracting dimensions
// (a matrix-vector or vector-vector product per batch) is multiply + reduce: the vector is
// broadcast over the other operand, the product reduced over the contracting dimensions.
// Such a dot reads each matrix element once for one multiply-add: bandwidth-bound work the
// reduction emitter streams, where a GEMM (cuBLAS, or our small-GEMM kernel with one output
// column of 32 lanes busy) wastes its tiles. moe_top2's combine of 8 expert outputs per token
// (2048 x [1024 x 8] x [8]) took 162 us as a GEMM.
#pragma once
#include "engine/pass.h"

namespace hloc {

class DotStrengthReduction : public HloPass {
 public:
  static constexpr const char* kName = "dot-strength-reduction";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
