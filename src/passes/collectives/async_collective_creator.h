// async-collective-creator (XLA's AsyncCollectiveCreator): each collective becomes a start / done
// pair, so the latency-hiding scheduler can move the start early and the done late and the
// runtime can run the transfer on its own stream while compute goes on between them:
//   all-reduce -> all-reduce-start / all-reduce-done (same shape);
//   all-gather -> all-gather-start ((operands), (results)) / all-gather-done;
//   collective-permute -> collective-permute-start (operand, result, u32[], u32[]) / -done;
//   reduce-scatter, all-to-all, collective-broadcast -> async-start / async-done around a
//     computation holding the collective (XLA's generic async wrapping).
// Which kinds convert is the pass's `convert` option (XLA's per-op enable flags).
#pragma once
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

// Converts the collectives whose opcode names are in `kinds` ("all-reduce", "all-gather", ...).
absl::StatusOr<bool> CreateAsyncCollectives(HloModule& module, const std::set<std::string>& kinds);

// Every kind the pass converts.
const std::set<std::string>& AsyncCollectiveKinds();

}  // namespace hloc
