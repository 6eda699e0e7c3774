// The printer's round-trip targets, with P = PrintModule and Q = ParseHloModule:
//  1. for every corpus HLO file F and every valid XLA parser case: P(Q(F)) parses and
//     P(Q(P(Q(F)))) == P(Q(F)) byte for byte, in each of the three option sets (XLA dump
//     form, long form, ShortParsable);
//  2. fidelity: P(Q(F)) == F for the corpus files, which are XLA's own dumps.
// The exact-text checks of the XLA cases against XLA's expected prints (with their allowlist)
// live in xla_cases_test.cc; here their counts are reported so that a printer change shows
// its effect in one place.
#include <catch2/catch.hpp>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "test_util.h"

using namespace hloc;
using namespace hloc::testutil;

namespace {

struct NamedOptions {
  const char* name;
  HloPrintOptions options;
};

std::vector<NamedOptions> AllOptionSets() {
  return {{"default", HloPrintOptions()},
          {"long", HloPrintOptions::Long()},
          {"short", HloPrintOptions::ShortParsable()}};
}

}  // namespace

TEST_CASE("printer: corpus files print back byte for byte and are fixed points",
          "[roundtrip][corpus]") {
  Watchdog watchdog(std::chrono::seconds(120));
  int files = 0, parsed = 0, identical = 0, fixed_points = 0, checks = 0;
  std::vector<std::string> failures;
  for (const std::string& path : CorpusHloFiles()) {
    ++files;
    std::string name = Basename(path);
    watchdog.Kick(name);
    auto text = ReadFile(path);
    REQUIRE(text.ok());
    auto module = ParseHloModule(*text, name);
    if (!module.ok()) {
      failures.push_back(absl::StrCat(name, ": does not parse: ", std::string(module.status().message())));
      continue;
    }
    ++parsed;
    std::string printed = PrintModule(**module);
    if (printed == *text) {
      ++identical;
    } else {
      failures.push_back(absl::StrCat(name, ": P(Q(F)) != F: ", FirstDifference(*text, printed)));
    }
    bool all_fixed = true;
    for (const NamedOptions& o : AllOptionSets()) {
      ++checks;
      FixedPointResult r = CheckPrintFixedPoint(**module, o.options);
      if (!r.ok) {
        all_fixed = false;
        failures.push_back(absl::StrCat(name, " [", o.name, "]: ", Shorten(r.error, 1500)));
      }
    }
    if (all_fixed) ++fixed_points;
  }
  std::printf("\nprinter/corpus: %d files; parsed %d; P(Q(F)) == F for %d; fixed point in all "
              "three option sets for %d\n",
              files, parsed, identical, fixed_points);
  for (const std::string& f : failures) std::printf("  FAILED: %s\n", Shorten(f, 2500).c_str());
  CHECK(files > 0);
  CHECK(failures.empty());
}

TEST_CASE("printer: XLA parser cases print to fixed points", "[roundtrip][xla]") {
  Watchdog watchdog(std::chrono::seconds(120));
  auto rows = ReadManifest(XlaCasesDir() + "/manifest.tsv");
  REQUIRE(rows.ok());
  int cases = 0, parsed = 0, fixed_points = 0;
  int long_cases = 0, long_exact = 0, short_cases = 0, short_exact = 0, nonrt_cases = 0,
      nonrt_exact = 0;
  std::vector<std::string> failures, inexact;
  for (const ManifestRow& row : *rows) {
    if (row.set == "invalid" || row.kind == "shape") continue;
    ++cases;
    std::string path = XlaCasesDir() + "/" + row.file;
    watchdog.Kick(row.file);
    auto text = ReadFile(path);
    REQUIRE(text.ok());
    HloParserOptions popts = ParserOptionsFor(row);
    auto module = ParseHloModule(*text, Basename(path), popts);
    if (!module.ok()) {
      failures.push_back(absl::StrCat(row.file, ": does not parse: ", std::string(module.status().message())));
      continue;
    }
    ++parsed;
    bool all_fixed = true;
    for (const NamedOptions& o : AllOptionSets()) {
      FixedPointResult r = CheckPrintFixedPoint(**module, o.options, popts);
      if (!r.ok) {
        all_fixed = false;
        failures.push_back(absl::StrCat(row.file, " [", o.name, "]: ", Shorten(r.error, 1500)));
      }
    }
    if (all_fixed) ++fixed_points;
    if (row.set != "valid") continue;
    // The exact text XLA prints for this case.
    if (EndsWith(row.file, "_nonroundtrip.hlo")) {
      ++nonrt_cases;
      std::string expected_path = path.substr(0, path.size() - 4) + ".expected_print";
      auto expected = ReadFile(expected_path);
      REQUIRE(expected.ok());
      std::string got = PrintModule(**module, HloPrintOptions::ShortParsable());
      if (StripWhitespace(got) == StripWhitespace(*expected)) {
        ++nonrt_exact;
      } else {
        inexact.push_back(absl::StrCat(row.file, ": ", FirstDifference(*expected, got)));
      }
    } else if (EndsWith(row.file, "_short.hlo")) {
      ++short_cases;
      std::string got = PrintModule(**module, HloPrintOptions::ShortParsable());
      if (got == *text) {
        ++short_exact;
      } else {
        inexact.push_back(absl::StrCat(row.file, ": ", FirstDifference(*text, got)));
      }
    } else {
      ++long_cases;
      std::string got = PrintModule(**module, HloPrintOptions::Long());
      if (got == *text) {
        ++long_exact;
      } else {
        inexact.push_back(absl::StrCat(row.file, ": ", FirstDifference(*text, got)));
      }
    }
  }
  std::printf("\nprinter/xla cases: %d modules; parsed %d; fixed point in all three option sets "
              "for %d; exact text: long %d/%d, short %d/%d, non-round-trip %d/%d\n",
              cases, parsed, fixed_points, long_exact, long_cases, short_exact, short_cases,
              nonrt_exact, nonrt_cases);
  for (const std::string& f : inexact) std::printf("  inexact: %s\n", Shorten(f, 600).c_str());
  for (const std::string& f : failures) std::printf("  FAILED: %s\n", Shorten(f, 2500).c_str());
  CHECK(cases > 0);
  CHECK(failures.empty());
}
