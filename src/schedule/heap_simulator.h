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
  bool compute_offsets = true;   // false: only peak_bytes (cheap; used to rank schedules);
                                 // offsets stay empty and heap_size 0
};

// Time is the event's index: a buffer lives from its kAlloc to its kFree (inclusive; to the end
// when never freed), and two buffers may share bytes only when those ranges are disjoint.
// share_with must name a buffer already freed; the two are then placed at one offset (honoured
// when the new buffer is no larger). Zero-sized buffers get offset 0.
// Errors: freeing a buffer that is not live, allocating one twice, negative sizes, sharing
// with a buffer that is still live or never existed, alignment <= 0.
// Packing uses global decreasing-size best-fit over the buffers' live ranges (XLA's
// GlobalDecreasingSizeBestFitHeap), which sees the whole sequence before placing anything.
absl::StatusOr<HeapSimulatorResult> SimulateHeap(const std::vector<HeapEvent>& events,
                                                 const HeapSimulatorOptions& options);

}  // namespace hloc
