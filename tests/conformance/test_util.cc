#include "test_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "ir/computation.h"

namespace hloc::testutil {

std::string TestsDir() {
#ifdef HLOC_TESTS_DIR
  return HLOC_TESTS_DIR;
#else
  return "tests";
#endif
}

std::string CorpusDir() { return TestsDir() + "/corpus"; }
std::string XlaCasesDir() { return TestsDir() + "/xla-hlo-cases"; }

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return ss.str();
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::string> ListFiles(const std::string& dir, std::string_view suffix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (!entry.is_regular_file(ec)) continue;
    std::string name = entry.path().filename().string();
    if (EndsWith(name, suffix)) out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string_view StripWhitespace(std::string_view s) {
  auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> CorpusHloFiles() {
  std::vector<std::string> files;
  for (const std::string& dir : {CorpusDir(), CorpusDir() + "/spmd", CorpusDir() + "/public2", CorpusDir() + "/layers"}) {
    for (const char* suffix : {".before_optimizations.txt", ".after_optimizations.txt"}) {
      std::vector<std::string> found = ListFiles(dir, suffix);
      files.insert(files.end(), found.begin(), found.end());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool HasLocation(std::string_view message) {
  static const std::regex kLocation("^[^:]+:[0-9]+:[0-9]+: ");
  return std::regex_search(std::string(message.substr(0, 4096)), kLocation,
                           std::regex_constants::match_continuous);
}

std::string Shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return absl::StrCat(std::string(s.substr(0, max)), "... [", s.size() - max, " more chars]");
}

std::string FirstDifference(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  if (i == a.size() && i == b.size()) return "identical";
  size_t line_start = a.rfind('\n', i == 0 ? 0 : i - 1);
  line_start = (line_start == std::string_view::npos || i == 0) ? 0 : line_start + 1;
  int64_t line = 1 + std::count(a.begin(), a.begin() + line_start, '\n');
  auto line_at = [line_start](std::string_view s) {
    if (line_start >= s.size()) return std::string("<end of text>");
    size_t end = s.find('\n', line_start);
    return Shorten(s.substr(line_start, end == std::string_view::npos ? std::string_view::npos
                                                                       : end - line_start),
                   300);
  };
  return absl::StrCat("first difference at line ", line, ", column ", i - line_start + 1,
                      ":\n  first:  ", line_at(a), "\n  second: ", line_at(b),
                      "\n  (lengths ", a.size(), " and ", b.size(), ")");
}

FixedPointResult CheckPrintFixedPoint(const HloModule& module, const HloPrintOptions& options,
                                      const HloParserOptions& parser_options) {
  FixedPointResult r;
  r.printed = PrintModule(module, options);
  auto reparsed = ParseHloModule(r.printed, "<printed>", parser_options);
  if (!reparsed.ok()) {
    r.error = absl::StrCat("printed text does not parse back: ",
                           std::string(reparsed.status().message()), "\nprinted text:\n",
                           Shorten(r.printed, 2000));
    return r;
  }
  std::string second = PrintModule(**reparsed, options);
  if (second != r.printed) {
    r.error = absl::StrCat("print is not a fixed point: ", FirstDifference(r.printed, second));
    return r;
  }
  r.ok = true;
  return r;
}

absl::StatusOr<std::vector<ManifestRow>> ReadManifest(const std::string& path) {
  auto text = ReadFile(path);
  if (!text.ok()) return text.status();
  std::vector<ManifestRow> rows;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n')) {
    ++line_no;
    if (line.empty() || line_no == 1) continue;  // header
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 10) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":", line_no, ": expected 11 tab-separated fields, got ", f.size()));
    }
    f.resize(11);
    ManifestRow row;
    row.set = f[0];
    row.file = f[1];
    row.test = f[2];
    row.kind = f[5];
    row.check = f[6];
    if (!f[7].empty() && !absl::SimpleAtoi(f[7], &row.replica_count)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", line_no, ": bad replica_count"));
    }
    row.options = f[8];
    row.expect = f[9];
    row.notes = f[10];
    rows.push_back(std::move(row));
  }
  return rows;
}

HloParserOptions ParserOptionsFor(const ManifestRow& row) {
  HloParserOptions options;
  options.default_replica_count = row.replica_count;
  for (absl::string_view opt : absl::StrSplit(row.options, ',', absl::SkipEmpty())) {
    if (opt == "fill_missing_layouts=true") options.fill_missing_layouts = true;
    if (opt == "fill_missing_layouts=false") options.fill_missing_layouts = false;
  }
  return options;
}

std::vector<std::string> InstructionAndComputationNames(const HloModule& module) {
  std::vector<std::string> names;
  for (const auto& c : module.computations()) {
    names.push_back(c->name());
    for (const auto& inst : c->instructions()) names.push_back(inst->name());
  }
  return names;
}

Watchdog::Watchdog(std::chrono::seconds limit) : limit_(limit), thread_([this] { Run(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::Kick(std::string what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++generation_;
    what_ = std::move(what);
  }
  cv_.notify_all();
}

void Watchdog::Run() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    uint64_t seen = generation_;
    bool progressed = cv_.wait_for(lock, limit_, [&] { return stop_ || generation_ != seen; });
    if (!progressed) {
      std::fprintf(stderr, "\nWATCHDOG: no progress for %lld s while running: %s\n",
                   static_cast<long long>(limit_.count()), what_.c_str());
      std::fflush(stderr);
      std::_Exit(3);
    }
  }
}

}  // namespace hloc::testutil
