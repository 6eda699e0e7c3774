// The browser view of one compilation (`hloc opt|compile ... --dump-to DIR --dump-html`): one
// self-contained HTML file, DIR/module_NNNN.NAME.html, with the passes in order (changed, time,
// the module's line diff), every rule firing, every fusion decision with the cost model's
// numbers, the fusions as a graph (SVG from Graphviz's `dot` when it is on the PATH, else a
// table), buffer live ranges over the schedule and the thunk sequence (with each thunk's time
// when an earlier `hloc run --per-thunk --dump-to DIR` left DIR/...thunk_times.json). The data is embedded as
// JSON (with '<' escaped, so no "</script>" ends it early) and drawn by inline JS; nothing is
// fetched from the network.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/compile_recorder.h"
#include "ir/module.h"

namespace hloc {

// What the compiler knows after the pipeline (empty for `hloc opt`).
struct HtmlReportExtras {
  std::string buffer_assignment_text;  // XLA's ...-buffer-assignment.txt
  std::string thunk_sequence_text;     // ...thunk_sequence.txt
  // The buffer assignment's own live ranges (compile): one row per value placed in device or
  // host memory, on its flattened schedule. Empty (hloc opt): the page approximates them from
  // the entry's order.
  struct LiveRange {
    std::string name, op;  // the defining instruction (with {index} for a tuple leaf), its opcode
    int64_t bytes = 0, allocation = -1, offset = 0, start = 0, end = 0;
  };
  std::vector<LiveRange> live_ranges;
  int64_t timeline_length = 0;
  // Per-thunk times for the thunk sequence, as ReadThunkTimesForPage gives them; empty: none
  // (WriteHtmlReport then looks for DIR's thunk_times.json itself).
  std::string thunk_times_json;
};

// module_NNNN.NAME.thunk_times.json (DumpFileName's name): where `hloc run --bench N --per-thunk
// --dump-to DIR` writes its times (tools/per_thunk.h ThunkTimesJson) and where the page of a
// compile into the same DIR looks for them.
std::string ThunkTimesFileName(int64_t module_id, const std::string& module_name);

// The times file at `path`, checked and cut down to what the page shows: {"file", "device",
// "profile", "calls", "total_us", "thunks": [{"position", "name", "kind", "kernel", "us",
// "floor_us", "runs"}]}, as JSON that can sit inside <script>. Errors name `path`: cannot be
// read, not JSON, or a field missing or of the wrong type.
absl::StatusOr<std::string> ReadThunkTimesForPage(const std::string& path);

// The page as a string. `module` is the module after the pipeline (scheduled or not).
std::string RenderHtmlReport(const HloModule& module, const CompileRecorder& recorder, const HtmlReportExtras& extras);

// Writes it to DIR/module_NNNN.NAME.html (DumpFileName's name with .html). With a thunk
// sequence and no times in `extras`, the times of DIR/ThunkTimesFileName are shown when that
// file exists; a malformed one is a warning on stderr and the page is written without times.
absl::Status WriteHtmlReport(const std::string& dump_to, int64_t module_id, const HloModule& module,
                             const CompileRecorder& recorder, const HtmlReportExtras& extras = {});

}  // namespace hloc
