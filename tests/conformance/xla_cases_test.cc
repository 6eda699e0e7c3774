// XLA's own HLO parser test cases (tests/xla-hlo-cases, see its README and manifest.tsv):
// every valid module parses, verifies with the manifest's replica_count and reprints to a
// fixed point and exactly as XLA prints it; valid_other inputs are accepted in their mode;
// every invalid input is rejected with a located error; and the DeeplyNested* cases that
// XLA builds in code are generated here.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hloc {
namespace {

using testutil::ManifestRow;
using testutil::XlaCasesDir;

const std::vector<ManifestRow>& Manifest() {
  static const std::vector<ManifestRow> rows = [] {
    auto r = testutil::ReadManifest(XlaCasesDir() + "/manifest.tsv");
    return r.ok() ? *r : std::vector<ManifestRow>();
  }();
  return rows;
}

// tests/conformance/xla_print_known_failures.txt: "FILE REASON" per line, '#' comments.
// Cases whose exact-text print is known not to match XLA yet, each with its reason.
const std::map<std::string, std::string>& KnownPrintFailures() {
  static const std::map<std::string, std::string> known = [] {
    std::map<std::string, std::string> m;
    auto text = testutil::ReadFile(testutil::TestsDir() + "/conformance/xla_print_known_failures.txt");
    if (!text.ok()) return m;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      std::string_view l = testutil::StripWhitespace(std::string_view(line.data(), line.size()));
      if (l.empty() || l[0] == '#') continue;
      size_t space = l.find_first_of(" \t");
      std::string file(l.substr(0, space));
      std::string reason(space == std::string_view::npos
                             ? std::string_view()
                             : testutil::StripWhitespace(l.substr(space)));
      m[file] = reason;
    }
    return m;
  }();
  return known;
}

struct Stats {
  int valid = 0, valid_parsed = 0, valid_verified = 0, valid_fixed_point = 0, valid_exact = 0,
      valid_known_inexact = 0;
  int other = 0, other_accepted = 0, other_fixed_point = 0;
  int invalid = 0, by_parser = 0, by_verifier = 0, located = 0, expect_matched = 0, expects = 0;
  std::vector<std::string> needs_verifier;  // XLA's parser rejects these; ours leaves them to the verifier
  std::vector<std::string> expect_differs;  // our message lacks XLA's substring (allowed; listed)
};
Stats& stats() {
  static Stats s;
  return s;
}

std::string PathOf(const ManifestRow& row) { return XlaCasesDir() + "/" + row.file; }

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '-';
}

// Whether `message` mentions one of `names` as a whole word.
bool NamesOneOf(std::string_view message, const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (name.empty()) continue;
    for (size_t at = message.find(name); at != std::string_view::npos;
         at = message.find(name, at + 1)) {
      bool left = at == 0 || !IsNameChar(message[at - 1]);
      size_t end = at + name.size();
      bool right = end >= message.size() || !IsNameChar(message[end]) ||
                   (message[end] == '.' && (end + 1 >= message.size() || !IsNameChar(message[end + 1])));
      if (left && right) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------

void CheckValid(const ManifestRow& row) {
  Stats& s = stats();
  ++s.valid;
  const std::string path = PathOf(row);
  auto text = testutil::ReadFile(path);
  REQUIRE(text.ok());
  HloParserOptions parser_options = testutil::ParserOptionsFor(row);
  auto module = ParseHloModuleFile(path, parser_options);
  if (!module.ok()) {
    FAIL_CHECK("parse failed: " << module.status().message());
    return;
  }
  ++s.valid_parsed;
  absl::Status verified = VerifyModule(**module);
  if (verified.ok()) {
    ++s.valid_verified;
  } else {
    FAIL_CHECK("verifier rejected it (XLA verified it with replica_count=" << row.replica_count
                                                                            << "): " << verified.message());
  }

  const bool nonroundtrip = testutil::EndsWith(row.file, "_nonroundtrip.hlo");
  const bool short_form = row.check.find("ShortParsable") != std::string::npos;
  const HloPrintOptions options = short_form ? HloPrintOptions::ShortParsable() : HloPrintOptions::Long();

  testutil::FixedPointResult fp = testutil::CheckPrintFixedPoint(**module, options, parser_options);
  testutil::FixedPointResult fp_default =
      testutil::CheckPrintFixedPoint(**module, HloPrintOptions(), parser_options);
  if (fp.ok && fp_default.ok) {
    ++s.valid_fixed_point;
  } else {
    if (!fp.ok) FAIL_CHECK((short_form ? "ShortParsable" : "long-form") << " print: " << fp.error);
    if (!fp_default.ok) FAIL_CHECK("default print: " << fp_default.error);
  }

  // The exact text XLA's test expects.
  std::string expected = *text, got = fp.printed;
  if (nonroundtrip) {
    std::string expected_path = path.substr(0, path.size() - 4) + ".expected_print";
    auto e = testutil::ReadFile(expected_path);
    REQUIRE(e.ok());
    expected = std::string(testutil::StripWhitespace(*e));
    got = std::string(testutil::StripWhitespace(got));
  }
  auto known = KnownPrintFailures().find(row.file);
  if (got == expected) {
    ++s.valid_exact;
    if (known != KnownPrintFailures().end()) {
      FAIL_CHECK("prints exactly now: remove it from xla_print_known_failures.txt");
    }
  } else if (known != KnownPrintFailures().end()) {
    ++s.valid_known_inexact;
    CHECK_FALSE(known->second.empty());  // every entry carries its reason
  } else {
    FAIL_CHECK("print differs from XLA's expected text: " << testutil::FirstDifference(expected, got));
  }
}

TEST_CASE("xla cases: the manifest lists every case file", "[xla]") {
  const std::vector<ManifestRow>& rows = Manifest();
  REQUIRE(rows.size() == 356);
  std::set<std::string> listed;
  for (const ManifestRow& row : rows) {
    listed.insert(row.file);
    INFO(row.file);
    CHECK(std::filesystem::exists(PathOf(row)));
    if (!row.expect.empty()) CHECK(std::filesystem::exists(XlaCasesDir() + "/" + row.expect));
  }
  for (const char* dir : {"valid", "valid_other", "invalid"}) {
    for (const std::string& f : testutil::ListFiles(XlaCasesDir() + "/" + dir, ".hlo")) {
      INFO(f);
      CHECK(listed.count(std::string(dir) + "/" + testutil::Basename(f)) == 1);
    }
  }
  // Allowlist entries must name real valid cases.
  for (const auto& [file, reason] : KnownPrintFailures()) {
    INFO(file);
    CHECK(listed.count(file) == 1);
    CHECK(file.rfind("valid/", 0) == 0);
  }
}

TEST_CASE("xla cases: valid modules parse, verify and print as XLA does", "[xla][valid]") {
  for (const ManifestRow& row : Manifest()) {
    if (row.set != "valid") continue;
    DYNAMIC_SECTION(row.file) { CheckValid(row); }
  }
}

// ---------------------------------------------------------------------------------------

void CheckValidOther(const ManifestRow& row) {
  Stats& s = stats();
  ++s.other;
  const std::string path = PathOf(row);
  auto text = testutil::ReadFile(path);
  REQUIRE(text.ok());
  if (row.kind == "shape") {
    auto shape = ParseShape(*text);
    if (shape.ok()) {
      ++s.other_accepted;
      ++s.other_fixed_point;  // shapes have no module print
      // A shape prints back to text that parses to the same shape.
      auto again = ParseShape(shape->ToString(true));
      CHECK(again.ok());
      if (again.ok()) CHECK(*again == *shape);
    } else {
      FAIL_CHECK("ParseShape failed: " << shape.status().message());
    }
    return;
  }
  HloParserOptions parser_options = testutil::ParserOptionsFor(row);
  auto module = ParseHloModuleFile(path, parser_options);
  if (!module.ok()) {
    FAIL_CHECK("parse failed: " << module.status().message());
    return;
  }
  if (row.check.find("verify") != std::string::npos) {
    absl::Status verified = VerifyModule(**module);
    if (!verified.ok()) {
      FAIL_CHECK("verifier rejected it (XLA verified it): " << verified.message());
      return;
    }
  }
  ++s.other_accepted;
  testutil::FixedPointResult fp =
      testutil::CheckPrintFixedPoint(**module, HloPrintOptions(), parser_options);
  if (fp.ok) {
    ++s.other_fixed_point;
  } else {
    FAIL_CHECK("default print: " << fp.error);
  }
}

TEST_CASE("xla cases: valid_other inputs are accepted in their mode", "[xla][valid_other]") {
  for (const ManifestRow& row : Manifest()) {
    if (row.set != "valid_other") continue;
    DYNAMIC_SECTION(row.file) { CheckValidOther(row); }
  }
}

// ---------------------------------------------------------------------------------------

void CheckInvalid(const ManifestRow& row) {
  Stats& s = stats();
  ++s.invalid;
  const std::string path = PathOf(row);
  auto text = testutil::ReadFile(path);
  REQUIRE(text.ok());
  std::string message;
  if (row.kind == "shape") {
    auto shape = ParseShape(*text);
    if (shape.ok()) {
      FAIL_CHECK("ParseShape accepted it: " << shape->ToString(true));
      return;
    }
    ++s.by_parser;
    message = std::string(shape.status().message());
    if (testutil::HasLocation(message)) {
      ++s.located;
    } else {
      FAIL_CHECK("shape error without a location: " << message);
    }
  } else {
    auto module = ParseHloModuleFile(path);
    if (!module.ok()) {
      ++s.by_parser;
      message = std::string(module.status().message());
      if (testutil::HasLocation(message)) {
        ++s.located;
      } else {
        FAIL_CHECK("parse error without FILE:LINE:COL: " << message);
      }
    } else {
      absl::Status verified = VerifyModule(**module);
      if (verified.ok()) {
        FAIL_CHECK("accepted by both the parser and the verifier");
        return;
      }
      ++s.by_verifier;
      message = std::string(verified.message());
      if (row.check.find("Unverified") != std::string::npos) s.needs_verifier.push_back(row.file);
      // A verifier error has no text location; it must name what it is about.
      if (NamesOneOf(message, testutil::InstructionAndComputationNames(**module))) {
        ++s.located;
      } else {
        FAIL_CHECK("verifier error names no instruction or computation: " << message);
      }
    }
  }
  INFO("error: " << message);
  CHECK_FALSE(message.empty());
  // XLA's expected substring is for reference only (our messages need not match); count it.
  if (!row.expect.empty()) {
    ++s.expects;
    auto e = testutil::ReadFile(XlaCasesDir() + "/" + row.expect);
    if (e.ok()) {
      std::string sub = *e;
      if (!sub.empty() && sub.back() == '\n') sub.pop_back();
      if (message.find(sub) != std::string::npos) {
        ++s.expect_matched;
      } else {
        s.expect_differs.push_back(row.file);
      }
    }
  }
}

TEST_CASE("xla cases: invalid inputs are rejected with a located error", "[xla][invalid]") {
  for (const ManifestRow& row : Manifest()) {
    if (row.set != "invalid") continue;
    DYNAMIC_SECTION(row.file) { CheckInvalid(row); }
  }
}

// ---------------------------------------------------------------------------------------
// XLA's DeeplyNested* tests, which build their inputs in code.

constexpr int kTestRecursionDepth = 10;

HloParserOptions Depth(int depth) {
  HloParserOptions o;
  o.max_recursion_depth = depth;
  return o;
}

void ExpectRecursionError(const std::string& text, const HloParserOptions& options) {
  auto result = ParseHloModule(text, "deep.hlo", options);
  REQUIRE_FALSE(result.ok());
  std::string message(result.status().message());
  INFO(testutil::Shorten(message));
  CHECK(message.find("maximum recursion depth exceeded") != std::string::npos);
  CHECK(testutil::HasLocation(message));
}

std::string NestedOperands(int depth) {
  std::string s = "f32[] ";
  for (int i = 0; i < depth; ++i) s += "add(f32[] constant(0), f32[] ";
  s += "constant(0)";
  for (int i = 0; i < depth; ++i) s += ")";
  return s;
}

std::string NestedShapesModule(int depth) {
  std::string shape;
  for (int i = 0; i < depth; ++i) shape += "(";
  shape += "f32[]";
  for (int i = 0; i < depth; ++i) shape += ")";
  return "HloModule test\nENTRY entry (p0: " + shape + ") -> " + shape + " {\n  ROOT %p0 = " +
         shape + " parameter(0)\n}";
}

std::string NestedTupleLiteralModule(int depth) {
  std::string shape, literal;
  for (int i = 0; i < depth; ++i) {
    shape += "(";
    literal += "(";
  }
  shape += "f32[]";
  literal += "0";
  for (int i = 0; i < depth; ++i) {
    shape += ")";
    literal += ")";
  }
  return "HloModule test\nENTRY entry () -> " + shape + " {\n  ROOT %c = " + shape + " constant(" +
         literal + ")\n}";
}

std::string NestedInlineComputationsModule(int depth) {
  std::string nested;
  for (int i = 0; i < depth; ++i) {
    nested += "p" + std::to_string(i) + " = f32[] parameter(0)\n";
    nested += "ROOT r" + std::to_string(i) + " = f32[] call(p" + std::to_string(i) + "), to_apply={\n";
  }
  nested += "p_inner = f32[] parameter(0)\nROOT r_inner = f32[] negate(p_inner)\n";
  for (int i = 0; i < depth; ++i) nested += "}\n";
  return "HloModule test\nENTRY entry {\n" + nested + "}";
}

TEST_CASE("xla cases: DeeplyNestedOperandsExceedsRecursionLimit", "[xla][deep]") {
  ExpectRecursionError(NestedOperands(kTestRecursionDepth + 1), Depth(kTestRecursionDepth));
  // Shallow nesting under the same limit parses.
  CHECK(ParseHloModule(NestedOperands(2), "shallow.hlo", Depth(kTestRecursionDepth)).ok());
}

TEST_CASE("xla cases: DeeplyNestedShapesExceedsRecursionLimit", "[xla][deep]") {
  ExpectRecursionError(NestedShapesModule(kTestRecursionDepth + 1), Depth(kTestRecursionDepth));
  CHECK(ParseHloModule(NestedShapesModule(2), "shallow.hlo", Depth(kTestRecursionDepth)).ok());
}

TEST_CASE("xla cases: DeeplyNestedTupleLiteralsExceedsRecursionLimit", "[xla][deep]") {
  ExpectRecursionError(NestedTupleLiteralModule(kTestRecursionDepth + 1), Depth(kTestRecursionDepth));
  CHECK(ParseHloModule(NestedTupleLiteralModule(2), "shallow.hlo", Depth(kTestRecursionDepth)).ok());
}

TEST_CASE("xla cases: DeeplyNestedInlineComputationsExceedsRecursionLimit", "[xla][deep]") {
  ExpectRecursionError(NestedInlineComputationsModule(kTestRecursionDepth + 1),
                       Depth(kTestRecursionDepth));
  CHECK(ParseHloModule(NestedInlineComputationsModule(2), "shallow.hlo", Depth(kTestRecursionDepth)).ok());
}

TEST_CASE("xla cases: DeeplyNestedOperandsDoesNotStackOverflow", "[xla][deep]") {
  // 50000 levels with the default options: a clean error, not a stack overflow.
  constexpr int kDepth = 50000;
  std::string text = "f32[] ";
  for (int i = 0; i < kDepth; ++i) text += "add(f32[] ";
  text += "constant(0)";
  for (int i = 0; i < kDepth; ++i) text += ", f32[] constant(0))";
  ExpectRecursionError(text, HloParserOptions());
  // The same depth for shapes, tuple literals and inline computations.
  ExpectRecursionError(NestedShapesModule(kDepth), HloParserOptions());
  ExpectRecursionError(NestedTupleLiteralModule(kDepth), HloParserOptions());
  ExpectRecursionError(NestedInlineComputationsModule(kDepth), HloParserOptions());
}

// ---------------------------------------------------------------------------------------

TEST_CASE("xla cases: summary", "[xla][summary]") {
  const Stats& s = stats();
  if (s.valid > 0) {
    std::printf("\nxla valid/: %d cases; parsed %d, verified %d, print fixed point %d, exact text %d"
                " (%d known inexact, see xla_print_known_failures.txt)\n",
                s.valid, s.valid_parsed, s.valid_verified, s.valid_fixed_point, s.valid_exact,
                s.valid_known_inexact);
  }
  if (s.other > 0) {
    std::printf("xla valid_other/: %d cases; accepted %d, print fixed point %d\n", s.other,
                s.other_accepted, s.other_fixed_point);
  }
  if (s.invalid > 0) {
    std::printf("xla invalid/: %d cases; rejected by the parser %d, by the verifier %d; located %d;"
                " XLA's message substring found in %d of %d\n",
                s.invalid, s.by_parser, s.by_verifier, s.located, s.expect_matched, s.expects);
    if (!s.expect_differs.empty()) {
      std::printf("  message differs from XLA's (allowed):");
      for (const std::string& f : s.expect_differs) std::printf(" %s", f.c_str());
      std::printf("\n");
    }
    if (!s.needs_verifier.empty()) {
      std::printf("  rejected by XLA's parser but only by our verifier:");
      for (const std::string& f : s.needs_verifier) std::printf(" %s", f.c_str());
      std::printf("\n");
    }
  }
  SUCCEED();
}

}  // namespace
}  // namespace hloc
