// reshape-mover (XLA's ReshapeMover): sinks reshapes and transposes below elementwise ops,
//
//   add(reshape(a), reshape(b))  =>  reshape(add(a, b))
//
// when every operand of the elementwise op is an equivalent rearrange (reshape/transpose
// with the same shapes or permutation) or is trivially rearrangeable itself (a constant, an
// rng with one user, a broadcast of a scalar, ...), and every user of those rearranges is
// moved too. The rearranges then meet and cancel in algsimp.
#pragma once
#include "engine/pass.h"

namespace hloc {

struct ReshapeMoverOptions {
  // XLA's reshape_of_1d_broadcast_is_cheap: also treat a broadcast of an effectively 1-D
  // value (or one whose broadcast dimensions the reshape leaves alone) as free to reshape.
  bool reshape_of_1d_broadcast_is_cheap = false;
};

class ReshapeMover : public HloPass {
 public:
  static constexpr const char* kName = "reshape-mover";
  explicit ReshapeMover(ReshapeMoverOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

  // Exposed for tests: whether `instr` can take on the inverse of `rearrange` (a reshape or
  // transpose) for free.
  bool CanTriviallyRearrange(const HloInstruction* instr, const HloInstruction* rearrange) const;

 private:
  const HloInstruction* FirstNontrivialRearrange(const std::vector<HloInstruction*>& operands) const;
  bool IsReshapeMoveCandidate(const HloInstruction* instruction) const;

  ReshapeMoverOptions options_;
};

}  // namespace hloc
