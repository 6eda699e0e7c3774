// Internal to src/schedule/: the logical-buffer view of one computation that the memory
// schedulers, rematerialization and the latency-hiding scheduler share (a small version of XLA's
// TuplePointsToAnalysis). Every instruction defines one buffer per leaf of its shape, except
// those that only hand their operand on (bitcast, get-tuple-element, tuple, optimization-barrier,
// add-dependency, domain), which point at their operands' buffers. Parameters and constants are
// "fixed": allocated before the computation starts and live to its end.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc::schedule_internal {

struct LogicalBuffers {
  std::vector<int64_t> size;                   // by buffer id
  std::vector<const HloInstruction*> definer;  // by buffer id
  std::vector<bool> fixed;                     // parameter or constant
  std::vector<bool> is_parameter;
  std::vector<bool> live_out;                  // the root points to it
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> defined;    // buffers it defines
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> points_to;  // one per leaf of its shape
  absl::flat_hash_map<const HloInstruction*, std::vector<int64_t>> uses;       // unique buffers of its operands
  int64_t num_buffers() const { return static_cast<int64_t>(size.size()); }
};

absl::StatusOr<LogicalBuffers> ComputeLogicalBuffers(const HloComputation& computation);

// Peak bytes of each sequential computation a caller may call (parameters excluded: they are
// the caller's operands), filled callee-first.
using MemoryByComputation = absl::flat_hash_map<const HloComputation*, int64_t>;

// while / conditional / call / async ops: the callee runs as a sequence of its own (XLA's
// control-flow call context), not element by element as a reducer or fused computation does.
bool IsSequentialCaller(HloOpcode op);

// Extra bytes live while `inst` runs because of the computations it calls: the largest callee's
// peak (they never run at once). While/call/conditional results are the callee root's buffers,
// so what `inst` defines itself is not counted twice (XLA's ListScheduler rule).
int64_t SubcomputationBytes(const HloInstruction& inst, const MemoryByComputation& memory, int64_t bytes_defined);

// Peak bytes of `computation` run in `sequence` (a permutation of its instructions), through the
// heap simulator: buffers are allocated when defined and freed after their last use; live-out
// and fixed buffers stay to the end; parameters count only with include_parameters.
absl::StatusOr<int64_t> PeakOfSequence(const std::vector<HloInstruction*>& sequence, const LogicalBuffers& buffers,
                                       const MemoryByComputation& memory, bool include_parameters);

// Bytes live while each instruction of `sequence` runs (its operands, what it defines, what
// its callees need, and everything else still live), in the model PeakOfSequence simulates: the
// peak is the largest entry (or the fixed bytes alone for an empty sequence).
absl::StatusOr<std::vector<int64_t>> LiveBytesPerStep(const std::vector<HloInstruction*>& sequence,
                                                      const LogicalBuffers& buffers, const MemoryByComputation& memory,
                                                      bool include_parameters);

// Operands and control predecessors come before each instruction; `sequence` is a permutation
// of the computation's instructions.
absl::Status CheckSequence(const HloComputation& computation, const std::vector<HloInstruction*>& sequence);

// The three memory schedulers (XLA's ListMemoryScheduler, DFSMemoryScheduler,
// PostOrderMemoryScheduler).
absl::StatusOr<std::vector<HloInstruction*>> ListSchedule(const HloComputation& computation,
                                                          const LogicalBuffers& buffers,
                                                          const MemoryByComputation& memory);
absl::StatusOr<std::vector<HloInstruction*>> DfsSchedule(const HloComputation& computation,
                                                         const LogicalBuffers& buffers);
absl::StatusOr<std::vector<HloInstruction*>> PostOrderSchedule(const HloComputation& computation);

// Sequential computations of `module` (entry, while condition/body, conditional branches, call
// and async callees, and computations nothing calls), callees first; fused computations and
// reducers/comparators are not in it.
std::vector<HloComputation*> SequentialComputations(const HloModule& module);

// Memory of each sequential computation in its current order (for callers' accounting).
absl::StatusOr<MemoryByComputation> CurrentMemoryByComputation(const HloModule& module);

std::string HumanBytes(int64_t bytes);

}  // namespace hloc::schedule_internal
