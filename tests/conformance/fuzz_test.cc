// Seeded parser fuzz test: a few hundred inputs derived from corpus files and XLA's parser
// cases (truncations, byte flips, insertions, deletions, line shuffles, extreme numbers) and
// deep nestings (tuple shapes, operands, literal braces, inline computations, attribute
// braces), and mutations that keep the text well formed (small numbers, swapped opcodes) to
// reach the verifier. Each must give a module or a located error; what parses is verified,
// and what verifies is printed and must parse back to a fixed point. A crash kills the
// process, which is the failure signal; a hang trips the watchdog. Deterministic: a fixed seed (override
// with HLOC_FUZZ_SEED / HLOC_FUZZ_COUNT to explore, never in CI).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "test_util.h"

namespace hloc {
namespace {

constexpr uint64_t kDefaultSeed = 0x5eed'2024'0c0f'fee5ull;
constexpr int kDefaultCount = 600;
constexpr double kBudgetSeconds = 60.0;

// splitmix64: tiny, and the same sequence on every platform (unlike std distributions).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform-enough in [0, n) for n > 0.
  size_t Below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(Next() % n); }
  template <typename T>
  const T& Pick(const std::vector<T>& v) { return v[Below(v.size())]; }

 private:
  uint64_t state_;
};

uint64_t EnvOr(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 0);
}

struct Source {
  std::string name;
  std::string text;
};

// Corpus modules (small before/after, spmd) and XLA's valid cases, in a fixed order.
std::vector<Source> LoadSources() {
  std::vector<std::string> paths;
  for (const std::string& p : testutil::CorpusHloFiles()) {
    if (p.find(".small.") != std::string::npos) paths.push_back(p);
  }
  for (const std::string& p : testutil::ListFiles(testutil::XlaCasesDir() + "/valid", ".hlo")) {
    paths.push_back(p);
  }
  std::vector<Source> sources;
  for (const std::string& p : paths) {
    auto text = testutil::ReadFile(p);
    if (text.ok()) sources.push_back({testutil::Basename(p), std::move(*text)});
  }
  return sources;
}

const std::vector<std::string>& Tokens() {
  static const std::vector<std::string> tokens = {
      "{", "}", "(", ")", "[", "]", ",", "=", "%", "\"", "'", ":", "#", "/*", "*/", "//", "\n",
      "\r", "\\", "\0", "ROOT ", "ENTRY ", "HloModule x\n", "f32[] ", "f32[3,4]{1,0} ", "s32[",
      "pred[]", "bf16[2,<=3]", "(f32[], s32[])", "token[]", "parameter(0)", "constant(",
      "tuple(", "get-tuple-element(", "%tuple#1", "index=", "dimensions={", "to_apply=",
      "calls=", "sharding={replicated}", "metadata={op_name=\"x\"}", "backend_config={",
      "nan", "-inf", "nan(0x7fff)", "0x", "-1", "1e400", "9223372036854775808",
      "18446744073709551616", "99999999999999999999999999", "{1,0:T(8,128)}", "<=",
      "replica_groups={{0,1}}", "channel_id=", "\xff\xfe", "\xc3\xa9"};
  return tokens;
}

const std::vector<std::string>& Numbers() {
  static const std::vector<std::string> numbers = {
      "0", "-1", "1", "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
      "-9223372036854775809", "18446744073709551616", "99999999999999999999999", "1e309", "0x10"};
  return numbers;
}

std::string Truncate(Rng& rng, const std::string& s) { return s.substr(0, rng.Below(s.size() + 1)); }

std::string FlipBytes(Rng& rng, std::string s) {
  static const std::string interesting = "{}()[],=%\":#0123456789-.\n \t<>?*/\\ab";
  size_t n = 1 + rng.Below(8);
  for (size_t i = 0; i < n && !s.empty(); ++i) {
    size_t at = rng.Below(s.size());
    s[at] = rng.Below(2) ? interesting[rng.Below(interesting.size())]
                         : static_cast<char>(rng.Below(256));
  }
  return s;
}

std::string Insert(Rng& rng, std::string s) {
  size_t n = 1 + rng.Below(4);
  for (size_t i = 0; i < n; ++i) {
    const std::string& t = rng.Pick(Tokens());
    // "\0" is a one-character token; std::string(const char*) would drop it.
    std::string tok = t.empty() ? std::string(1, '\0') : t;
    s.insert(rng.Below(s.size() + 1), tok);
  }
  return s;
}

std::string Delete(Rng& rng, std::string s) {
  size_t n = 1 + rng.Below(4);
  for (size_t i = 0; i < n && !s.empty(); ++i) {
    size_t at = rng.Below(s.size());
    s.erase(at, 1 + rng.Below(64));
  }
  return s;
}

std::vector<std::string> SplitLines(const std::string& s) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = s.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(s.substr(start, nl - start));
  }
  lines.push_back(s.substr(start));
  return lines;
}

std::string ShuffleLines(Rng& rng, const std::string& s) {
  std::vector<std::string> lines = SplitLines(s);
  size_t a = rng.Below(lines.size()), b = rng.Below(lines.size());
  switch (rng.Below(3)) {
    case 0: std::swap(lines[a], lines[b]); break;             // reorder (use before def)
    case 1: lines.insert(lines.begin() + a, lines[b]); break;  // duplicate (duplicate names)
    default: lines.erase(lines.begin() + a); break;            // drop (undefined operands)
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) absl::StrAppend(&out, i ? "\n" : "", lines[i]);
  return out;
}

// Replaces one run of digits (a dimension, index, constant, id) with an extreme number.
std::string MutateNumber(Rng& rng, std::string s) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] >= '0' && s[i] <= '9' && (i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9'))) starts.push_back(i);
  }
  if (starts.empty()) return s;
  size_t at = rng.Pick(starts), end = at;
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
  s.replace(at, end - at, rng.Pick(Numbers()));
  return s;
}

// Replaces one run of digits with a small number: likely to still parse, and then to give
// the verifier out-of-range dimensions, indices, parameter numbers and mismatched shapes.
std::string MutateSmallNumber(Rng& rng, std::string s) {
  size_t tries = 0, at = 0;
  do {
    at = rng.Below(s.size());
  } while (++tries < 64 && at < s.size() && !(s[at] >= '0' && s[at] <= '9'));
  if (at >= s.size() || !(s[at] >= '0' && s[at] <= '9')) return s;
  size_t begin = at, end = at;
  while (begin > 0 && s[begin - 1] >= '0' && s[begin - 1] <= '9') --begin;
  while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
  s.replace(begin, end - begin, absl::StrCat(rng.Below(10)));
  return s;
}

// Swaps one opcode for another: "add(" -> "dot(", "reduce(" -> "transpose(", ... so that
// well-formed text reaches the verifier's shape inference with the wrong attributes/operands.
std::string SwapOpcode(Rng& rng, std::string s) {
  static const std::vector<std::string> opcodes = {
      "add(", "multiply(", "dot(", "reduce(", "transpose(", "broadcast(", "reshape(", "convert(",
      "tuple(", "get-tuple-element(", "slice(", "concatenate(", "select(", "compare(", "negate(",
      "parameter(", "constant(", "while(", "call(", "fusion(", "sort(", "gather(", "scatter(",
      "pad(", "iota(", "bitcast(", "copy(", "all-reduce(", "custom-call(", "conditional("};
  std::vector<std::pair<size_t, size_t>> found;  // (position, length)
  for (const std::string& op : opcodes) {
    for (size_t at = s.find(" " + op); at != std::string::npos; at = s.find(" " + op, at + 1)) {
      found.push_back({at + 1, op.size()});
    }
  }
  if (found.empty()) return s;
  auto [at, len] = rng.Pick(found);
  s.replace(at, len, rng.Pick(opcodes));
  return s;
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

// Structured deep nestings, each `depth` levels deep.
std::string DeepNesting(Rng& rng, size_t depth, std::string* what) {
  switch (rng.Below(8)) {
    case 0:
      *what = "tuple shape";
      return "HloModule m\nENTRY e (p: " + Repeat("(", depth) + "f32[]" + Repeat(")", depth) +
             ") -> f32[] {\n  p = " + Repeat("(", depth) + "f32[]" + Repeat(")", depth) +
             " parameter(0)\n  ROOT c = f32[] constant(0)\n}\n";
    case 1:
      *what = "operands";
      return "f32[] " + Repeat("add(f32[] constant(1), f32[] ", depth) + "constant(0)" +
             Repeat(")", depth);
    case 2: {
      *what = "literal braces";
      std::string dims;
      for (size_t i = 0; i < depth; ++i) absl::StrAppend(&dims, i ? "," : "", "1");
      return "HloModule m\nENTRY e {\n  ROOT c = f32[" + dims + "] constant(" + Repeat("{", depth) +
             "1" + Repeat("}", depth) + ")\n}\n";
    }
    case 3:
      *what = "tuple literal";
      return "HloModule m\nENTRY e {\n  ROOT c = " + Repeat("(", depth) + "f32[]" +
             Repeat(")", depth) + " constant(" + Repeat("(", depth) + "1" + Repeat(")", depth) +
             ")\n}\n";
    case 4: {
      *what = "inline computations";
      std::string body;
      for (size_t i = 0; i < depth; ++i) {
        absl::StrAppend(&body, "p", i, " = f32[] parameter(0)\nROOT r", i, " = f32[] call(p", i,
                        "), to_apply={\n");
      }
      return "HloModule m\nENTRY e {\n" + body + "q = f32[] parameter(0)\nROOT n = f32[] negate(q)\n" +
             Repeat("}\n", depth) + "}\n";
    }
    case 5:
      *what = "backend_config braces";
      return "HloModule m\nENTRY e {\n  ROOT c = f32[] constant(0), backend_config={\"a\":" +
             Repeat("{\"b\":", depth) + "1" + Repeat("}", depth) + "}\n}\n";
    case 6:
      *what = "sharding braces";
      return "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), sharding=" + Repeat("{", depth) +
             "replicated" + Repeat("}", depth) + "\n}\n";
    default:
      *what = "frontend_attributes / replica_groups braces";
      return "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] all-reduce(p), "
             "replica_groups=" + Repeat("{", depth) + "0" + Repeat("}", depth) +
             ", to_apply={\n x = f32[] parameter(0)\n y = f32[] parameter(1)\n ROOT s = f32[] add(x, y)\n}, "
             "frontend_attributes={a=" + Repeat("{", depth) + "\"b\"" + Repeat("}", depth) + "}\n}\n";
  }
}

// Unbalanced brackets of one kind dropped into a real module.
std::string InsertBrackets(Rng& rng, const std::string& s, size_t depth) {
  static const std::vector<std::string> kinds = {"(", "{", "[", ")", "}", "(f32[], ", "{ {"};
  std::string out = s;
  out.insert(rng.Below(s.size() + 1), Repeat(rng.Pick(kinds), depth));
  return out;
}

struct FuzzStats {
  int inputs = 0, parsed = 0, verified = 0, printed_ok = 0, rejected = 0, unlocated = 0,
      print_failures = 0, reported = 0;
};

void Report(FuzzStats& stats, const std::string& what, const std::string& problem) {
  // Keep the output readable if something fails often: details for the first 25.
  if (++stats.reported <= 25) FAIL_CHECK(what << ": " << problem);
}

void CheckInput(const std::string& text, const std::string& what, FuzzStats& stats,
                testutil::Watchdog& watchdog) {
  ++stats.inputs;
  watchdog.Kick(what);
  auto module = ParseHloModule(text, "fuzz.hlo");
  if (!module.ok()) {
    ++stats.rejected;
    std::string message(module.status().message());
    if (!testutil::HasLocation(message)) {
      ++stats.unlocated;
      Report(stats, what, "parse error without FILE:LINE:COL: " + testutil::Shorten(message));
    }
    return;
  }
  ++stats.parsed;
  watchdog.Kick(what + " (verifier)");
  absl::Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    if (verified.message().empty()) Report(stats, what, "verifier error with an empty message");
    return;
  }
  ++stats.verified;
  watchdog.Kick(what + " (printer)");
  testutil::FixedPointResult fp = testutil::CheckPrintFixedPoint(**module, HloPrintOptions());
  if (fp.ok) {
    ++stats.printed_ok;
  } else {
    ++stats.print_failures;
    Report(stats, what, "verified module does not round-trip: " + testutil::Shorten(fp.error, 1500));
  }
}

TEST_CASE("fuzz: mutated and deeply nested inputs give a module or a located error", "[fuzz]") {
  const uint64_t seed = EnvOr("HLOC_FUZZ_SEED", kDefaultSeed);
  const int count = static_cast<int>(EnvOr("HLOC_FUZZ_COUNT", kDefaultCount));
  std::vector<Source> sources = LoadSources();
  REQUIRE(sources.size() >= 50);

  Rng rng(seed);
  FuzzStats stats;
  testutil::Watchdog watchdog(std::chrono::seconds(20));
  auto start = std::chrono::steady_clock::now();

  // The unmutated sources first: they are all valid, so they must parse (a sanity check that
  // the mutations below start from something the parser accepts).
  int sources_parsed = 0;
  for (const Source& src : sources) {
    watchdog.Kick("source " + src.name);
    sources_parsed += ParseHloModule(src.text, src.name).ok();
  }
  CHECK(sources_parsed == static_cast<int>(sources.size()));

  static const std::vector<size_t> kDepths = {50, 199, 200, 201, 1000, 20000, 100000};
  for (int i = 0; i < count; ++i) {
    const Source& src = rng.Pick(sources);
    std::string what = absl::StrCat("#", i, " seed=", seed, " ", src.name, " ");
    std::string text;
    switch (rng.Below(11)) {
      case 0: text = Truncate(rng, src.text); absl::StrAppend(&what, "truncated to ", text.size()); break;
      case 1: text = FlipBytes(rng, src.text); absl::StrAppend(&what, "byte flips"); break;
      case 2: text = Insert(rng, src.text); absl::StrAppend(&what, "insertions"); break;
      case 3: text = Delete(rng, src.text); absl::StrAppend(&what, "deletions"); break;
      case 4: text = ShuffleLines(rng, src.text); absl::StrAppend(&what, "line shuffle"); break;
      case 5: text = MutateNumber(rng, src.text); absl::StrAppend(&what, "extreme number"); break;
      case 6: {
        size_t depth = rng.Pick(kDepths);
        text = InsertBrackets(rng, src.text, depth);
        absl::StrAppend(&what, "brackets x", depth);
        break;
      }
      case 7: {
        size_t depth = rng.Pick(kDepths);
        std::string kind;
        text = DeepNesting(rng, depth, &kind);
        what = absl::StrCat("#", i, " seed=", seed, " deep ", kind, " x", depth);
        break;
      }
      case 8: text = MutateSmallNumber(rng, src.text); absl::StrAppend(&what, "small number"); break;
      case 9: text = SwapOpcode(rng, src.text); absl::StrAppend(&what, "opcode swap"); break;
      default:  // two mutations stacked, then a truncation
        text = Truncate(rng, FlipBytes(rng, Insert(rng, src.text)));
        absl::StrAppend(&what, "insert+flip+truncate");
        break;
    }
    CheckInput(text, what, stats, watchdog);
    // The shape parser on a random slice of the same text.
    if (!text.empty()) {
      size_t at = rng.Below(text.size());
      watchdog.Kick(what + " (ParseShape)");
      (void)ParseShape(std::string_view(text).substr(at, 1 + rng.Below(80)));
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("\nfuzz (seed %llu): %d inputs in %.2f s; %d rejected by the parser (%d without a "
              "location), %d parsed, %d verified, %d printed to a fixed point, %d print failures\n",
              static_cast<unsigned long long>(seed), stats.inputs, seconds, stats.rejected,
              stats.unlocated, stats.parsed, stats.verified, stats.printed_ok, stats.print_failures);
  CHECK(stats.unlocated == 0);
  CHECK(stats.print_failures == 0);
  CHECK(seconds < kBudgetSeconds);
}

}  // namespace
}  // namespace hloc
