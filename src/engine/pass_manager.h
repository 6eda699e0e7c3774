// The pass manager: runs a Pipeline (pipeline.h) on a module the way XLA's HloPassPipeline and
// HloPassFix do. Passes run in order; a fixed-point group re-runs until none of its passes
// changes the module or its max_iterations is reached (then a note, not an error); disabled
// entries are skipped; the verifier runs on the input and after every pass that changed the
// module (an error names the pass); and, as XLA's --xla_dump_to / --xla_dump_hlo_pass_re,
// the module is dumped before and after optimization and between passes:
//
//   module_0000.NAME.before_optimizations.txt
//   module_0000.NAME.0003.PIPELINE.after_PASS.before_NEXT.txt   (xla/service/dump.cc's names)
//   module_0000.NAME.after_optimizations.txt
//   module_0000.NAME.after_spmd-partitioning.txt   (when spmd-partitioning changed the module)
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/pass.h"
#include "engine/pipeline.h"
#include "ir/hlo_printer.h"
#include "ir/module.h"

namespace hloc {

struct DumpOptions {
  std::string dump_to;            // folder (created if missing); "" = no dumps
  std::string pass_re;            // ECMAScript regex searched in pass names; "" = no per-pass dumps
  int64_t module_id = 0;          // the NNNN of module_NNNN (XLA's module unique id)
  HloPrintOptions print_options;  // XLA's dump form by default
};

struct PassManagerOptions {
  DumpOptions dump;
  std::ostream* notes = nullptr;  // fixed-point limit notes ("note: ..."); null: std::cerr
  std::ostream* log = nullptr;    // one line per pass run (--verbose); null: silent
  // Passes by name; null: PassRegistry::Global().
  const PassRegistry* registry = nullptr;
};

// What happened, for tests, --verbose and callers that want statistics.
struct PassRunRecord {
  std::string path;  // "gpu/simplification/algsimp"
  std::string pass;  // the pass or group name
  bool changed = false;
  double seconds = 0;
};
struct PassManagerReport {
  std::vector<PassRunRecord> runs;                  // leaf passes, in run order
  std::map<std::string, int64_t> group_iterations;  // group path -> iterations run (last run)
  std::vector<std::string> fixed_point_limit_hit;   // group paths that stopped at max_iterations
  std::vector<std::string> dumped_files;            // paths written, in order
};

// Checks that `pass_re` is a valid regular expression (so the CLI can reject it up front).
absl::Status CheckDumpRegex(const std::string& pass_re);

// XLA's dump file name: module_NNNN.NAME.SUFFIX.txt with NAME dropped when the name gets too
// long, and '/', '\\', '[', ']' and ' ' replaced as XLA's SanitizeFileName does.
std::string DumpFileName(int64_t module_id, const std::string& module_name, const std::string& suffix);

// Runs `pipeline` on `module`. Returns whether anything changed. Errors (a pass failing, the
// verifier failing after a pass, a dump that cannot be written) stop the run and name the pass.
absl::StatusOr<bool> RunPipeline(const Pipeline& pipeline, HloModule& module, PassContext& context,
                                 const PassManagerOptions& options = {}, PassManagerReport* report = nullptr);

}  // namespace hloc
