// Per-op sharding rules of the propagation: what an instruction's result sharding is given its
// operands' (forward), and what sharding an instruction wants of its operand given its own
// (backward). Shardings are normalized (ir/sharding_util.h); tuples have one leaf per array.
// Each rule maps dimensions through the op, so a split dimension keeps its devices.
#pragma once
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "ir/instruction.h"

namespace hloc::spmd {

using ShardingMap = absl::flat_hash_map<const HloInstruction*, HloSharding>;

// Strategy records the rules consult (rules/spmd/SpmdStrategies.td).
struct RuleOptions {
  bool sort_move_split = true;  // SortMoveSplit: a sorted dim's split moves to a whole dim
};

// The result sharding `inst` gets from its operands' shardings in `known`; nullopt when the op
// has no rule or its operands have none yet.
std::optional<HloSharding> InferFromOperands(const HloInstruction& inst, const ShardingMap& known, int64_t num_devices,
                                             const RuleOptions& options = {});

// The sharding `user` (whose sharding is known) wants for its operand number `operand`.
std::optional<HloSharding> InferForOperand(const HloInstruction& user, int64_t operand, const ShardingMap& known,
                                           int64_t num_devices);

// For each output dim of a reshape from `in` to `out`, the input dim it keeps whole or splits
// / merges at its major end (the tiles of that input dim carry over), or -1.
std::vector<int64_t> ReshapeDimSources(const Shape& in, const Shape& out);

// Tiles summed over the leaves: how specific a sharding is (replicated 1 per leaf).
int64_t Specificity(const HloSharding& s);

// Dims of `inst`'s operand 0 that the op moves data across (slice bounds, pad, reverse,
// concatenate, sort, dynamic-slice sizes): they cannot stay split without communication.
std::vector<int64_t> DimsNeedingWholeOperand(const HloInstruction& inst);

}  // namespace hloc::spmd
