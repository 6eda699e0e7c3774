// Helpers shared by the conformance tests (corpus, XLA parser cases, fuzz): test-data
// paths, file listing, the print -> parse -> print fixed-point check, the XLA case
// manifest, error-location checks and a watchdog that turns a hang into a failure.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/module.h"

namespace hloc::testutil {

// Absolute tests/ directory (HLOC_TESTS_DIR when the build defines it, else "tests").
std::string TestsDir();
std::string CorpusDir();    // tests/corpus
std::string XlaCasesDir();  // tests/xla-hlo-cases

absl::StatusOr<std::string> ReadFile(const std::string& path);
// Regular files directly in `dir` whose names end with `suffix`, as full paths, sorted.
std::vector<std::string> ListFiles(const std::string& dir, std::string_view suffix);
std::string Basename(const std::string& path);
bool EndsWith(std::string_view s, std::string_view suffix);
// Leading and trailing whitespace removed (XLA's absl::StripAsciiWhitespace).
std::string_view StripWhitespace(std::string_view s);

// The HLO modules of the corpus: NAME.SIZE.{before,after}_optimizations.txt in corpus/ and
// corpus/spmd/ (not the buffer-assignment or thunk-sequence dumps).
std::vector<std::string> CorpusHloFiles();

// Whether a parser error starts with a location: "FILE:LINE:COL: ".
bool HasLocation(std::string_view message);

// Where two texts first differ, for a failure message: the line number and both lines.
std::string FirstDifference(std::string_view a, std::string_view b);
// At most `max` characters of s, with a marker when cut (keeps failure output readable).
std::string Shorten(std::string_view s, size_t max = 400);

// Print -> parse -> print: prints `module` with `options`, parses that text back (with
// `parser_options`) and prints again; ok when both prints are identical. `printed` holds the
// first print; `error` says what went wrong (the re-parse error or the first difference).
struct FixedPointResult {
  bool ok = false;
  std::string printed;
  std::string error;
};
FixedPointResult CheckPrintFixedPoint(const HloModule& module, const HloPrintOptions& options,
                                      const HloParserOptions& parser_options = {});

// One row of tests/xla-hlo-cases/manifest.tsv (see its README).
struct ManifestRow {
  std::string set;     // valid, invalid, valid_other
  std::string file;    // relative to xla-hlo-cases/
  std::string test;    // XLA's test name
  std::string kind;    // module, single_instruction, shape
  std::string check;   // what XLA checks, in words
  int64_t replica_count = 1;
  std::string options; // e.g. "fill_missing_layouts=false,keep_module_auto_layouts=false"
  std::string expect;  // sibling .expect file with XLA's message substring (may be empty)
  std::string notes;
};
absl::StatusOr<std::vector<ManifestRow>> ReadManifest(const std::string& path);
// Parser options the row asks for (replica_count, fill_missing_layouts). Options hloc's
// parser has no counterpart for (keep_module_auto_layouts) are left out.
HloParserOptions ParserOptionsFor(const ManifestRow& row);

// Names of every instruction and computation in `module` (to check that a verifier error
// names the offending instruction).
std::vector<std::string> InstructionAndComputationNames(const HloModule& module);

// A thread that aborts the process with a message when Kick() has not been called for
// `limit`: a hang in the code under test becomes a failure that says what was running.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit);
  ~Watchdog();
  void Kick(std::string what);

 private:
  void Run();
  std::chrono::seconds limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  uint64_t generation_ = 0;
  std::string what_;
  std::thread thread_;
};

}  // namespace hloc::testutil
