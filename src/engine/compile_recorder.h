// A structured record of one compilation, for the browser view (`--dump-html`, html_report.h):
// each pass run (changed, time, the module text before/after as snapshot indices), each rewrite
// rule firing (rewrite.cc) and each fusion decision (priority_fusion.cc). The pass manager fills
// the pass rows when PassContext::recorder is set; passes add their events to the current pass.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hloc {

struct CompileRecorder {
  struct PassStep {
    std::string path;  // "gpu/simplification/algsimp"
    std::string pass;
    bool changed = false;
    double seconds = 0;
    int before = 0, after = 0;  // indices into snapshots (equal when unchanged)
  };
  struct RuleFiring {
    int pass = -1;  // index into passes
    std::string rule, file;
    int line = 0;
    std::string before, after;
  };
  struct FusionEvent {
    int pass = -1;
    std::string producer, consumers;  // consumers: comma-separated names
    bool fused = false;
    // The cost model's numbers (microseconds); 0 when the decision came before them (a veto).
    double time_unfused_us = 0, time_fused_us = 0, benefit_us = 0;
    std::string reason, record, file;  // why not, the veto record and its .td file:line
    int line = 0;
  };

  std::vector<std::string> snapshots;  // printed module texts; [0] is the input
  std::vector<PassStep> passes;
  std::vector<RuleFiring> firings;
  std::vector<FusionEvent> fusions;
  int64_t dropped_fusion_events = 0;  // over kMaxFusionEvents (refusals are many on big modules)
  static constexpr size_t kMaxFusionEvents = 5000;

  int current_pass() const { return passes.empty() ? -1 : static_cast<int>(passes.size()) - 1; }
  void AddFusion(FusionEvent e) {
    if (!e.fused && fusions.size() >= kMaxFusionEvents) {
      ++dropped_fusion_events;
      return;
    }
    e.pass = current_pass();
    fusions.push_back(std::move(e));
  }
};

}  // namespace hloc
