// Totals of a `...-buffer-assignment.txt` dump (XLA's or ours: the format is the same), and the
// temp-bytes comparison the backend issue asks for: for every corpus module, our buffer
// assignment of XLA's own optimized (scheduled) HLO beside XLA's dump of the same module.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc {

struct BufferDumpTotals {
  int64_t allocations = 0;
  int64_t temp_bytes = 0;          // preallocated-temp allocations
  int64_t parameter_bytes = 0;
  int64_t output_bytes = 0;        // maybe-live-out, not parameters
  int64_t constant_bytes = 0;
  int64_t thread_local_bytes = 0;
  int64_t total_bytes = 0;         // every allocation
};

// Reads the "allocation N: size S, ...:" lines; error if there are none.
absl::StatusOr<BufferDumpTotals> ParseBufferAssignmentDump(const std::string& text);

struct TempBytesRow {
  std::string module;       // NAME.small / NAME.large
  int64_t xla_temp = -1;    // from XLA's dump
  int64_t ours_temp = -1;   // our assignment of XLA's optimized HLO (-1: failed, see error)
  int64_t xla_total = -1, ours_total = -1;
  std::string error;
};

// Every NAME.SIZE.after_optimizations.txt in `corpus_dir` that has a buffer-assignment dump.
// `alignment`: our allocator's (XLA:GPU packs temps at 256 bytes... as its dumps show).
std::vector<TempBytesRow> CompareTempBytesWithXla(const std::string& corpus_dir, int64_t alignment);
// A markdown table of the rows, with the sums.
std::string FormatTempBytesTable(const std::vector<TempBytesRow>& rows);

}  // namespace hloc
