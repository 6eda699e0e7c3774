// HeapSimulator: replays allocations and frees in schedule order and reports the peak bytes
// live, and (for buffer assignment) packs the buffers into one heap with offsets. Knows nothing
// about HLO: the scheduler and BufferAssignment each turn their view of the module into events.
#pragma once
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc {

struct HeapEvent {
  enum Kind { kAlloc, kFree } kind = kAlloc;
  int64_t buffer = 0;  // caller's buffer id
  int64_t size = 0;    // bytes (kAlloc only)
  // kAlloc only: a buffer freed earlier in the same step whose space this one may reuse in
  // place (XLA's "ShareWith": elementwise ops may write over their operand). -1: none.
  int64_t share_with = -1;
};

struct HeapSimulatorResult {
  int64_t peak_bytes = 0;        // the most bytes live at once (sum of sizes)
  int64_t heap_size = 0;         // the packed heap's size (>= peak_bytes, alignment included)
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (buffer, offset) for every allocated buffer
};

struct HeapSimulatorOptions {
  int64_t alignment = 64;        // every offset a multiple of this
  bool compute_offsets = true;   // false: only peak_bytes (cheap; used to rank schedules)
};

// Errors: freeing a buffer that is not live, allocating one twice, negative sizes.
// Packing uses global decreasing-size best-fit over the buffers' live ranges (XLA's
// GlobalDecreasingSizeBestFitHeap), which sees the whole sequence before placing anything.
absl::StatusOr<HeapSimulatorResult> SimulateHeap(const std::vector<HeapEvent>& events,
                                                 const HeapSimulatorOptions& options);

}  // namespace hloc
