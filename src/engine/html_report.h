// The browser view of one compilation (`hloc opt|compile ... --dump-to DIR --dump-html`): one
// self-contained HTML file, DIR/module_NNNN.NAME.html, with the passes in order (changed, time,
// the module's line diff), every rule firing, every fusion decision with the cost model's
// numbers, the fusions as a graph (SVG from Graphviz's `dot` when it is on the PATH, else a
// table), buffer live ranges over the schedule and the thunk sequence. The data is embedded as
// JSON (with '<' escaped, so no "</script>" ends it early) and drawn by inline JS; nothing is
// fetched from the network.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
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
};

// The page as a string. `module` is the module after the pipeline (scheduled or not).
std::string RenderHtmlReport(const HloModule& module, const CompileRecorder& recorder, const HtmlReportExtras& extras);

// Writes it to DIR/module_NNNN.NAME.html (DumpFileName's name with .html).
absl::Status WriteHtmlReport(const std::string& dump_to, int64_t module_id, const HloModule& module,
                             const CompileRecorder& recorder, const HtmlReportExtras& extras = {});

}  // namespace hloc
