// The autotuning cache file (see autotune_cache.h).
#include "runtime/gpu/autotune_cache.h"

#include <zlib.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "support/file_io.h"

namespace hloc::runtime::gpu {
namespace {
constexpr char kMagic[] = "hloc-autotune-v1";
// The last line: "hloc-autotune-end <TAB> ENTRIES <TAB> CRC-32 (hex) of every byte before it".
// Readers before it was added skip it as a malformed line.
constexpr char kEndPrefix[] = "hloc-autotune-end\t";

bool Clean(const std::string& s) { return s.find_first_of("\t\n\r") == std::string::npos; }
}  // namespace

void AutotuneCache::AddFromText(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#' || absl::StartsWith(line, kEndPrefix)) continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    double us = 0;
    if (f.size() != 4 || f[0] != kMagic || f[1].empty() || f[2].empty() || !absl::SimpleAtod(f[3], &us)) {
      ++skipped_;
      continue;
    }
    entries_[f[1]] = AutotuneEntry{f[2], us};
  }
}

// The whole file is checked before any of it is used: a cache written by Save is
// newline-terminated, every line before the end line is a comment or a well-formed entry of this
// format version, and the end line's entry count and CRC-32 match what precedes it. Anything
// else (an empty file, one cut short by a crash or a full disk, another version, garbage, a
// flipped byte) returns the problem: the file is then not used at all (a damaged algorithm
// description could make cuBLASLt fault) and is rebuilt by the next Save.
std::string AutotuneCache::CheckFile(const std::string& text, std::map<std::string, AutotuneEntry>& entries) {
  if (text.empty()) return "the file is empty";
  if (text.back() != '\n') return "truncated: the last line is incomplete";
  const size_t end_pos = text.rfind(kEndPrefix);
  if (end_pos == std::string::npos || (end_pos != 0 && text[end_pos - 1] != '\n')) {
    return "truncated or not an hloc autotune cache: no end line";
  }
  const std::string body = text.substr(0, end_pos);
  const std::string end_line = text.substr(end_pos, text.size() - 1 - end_pos);
  std::vector<std::string> f = absl::StrSplit(end_line, '\t');
  int64_t count = -1;
  uint32_t crc = 0;
  if (f.size() != 3 || !absl::SimpleAtoi(f[1], &count) || !absl::SimpleHexAtoi(f[2], &crc)) {
    return absl::StrCat("the end line is malformed: '", absl::CHexEscape(end_line.substr(0, 80)), "'");
  }
  int64_t line_number = 0;
  for (absl::string_view line : absl::StrSplit(absl::string_view(body), '\n')) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, '\t');
    double us = 0;
    if (!fields.empty() && fields[0] != kMagic && absl::StartsWith(fields[0], "hloc-autotune-")) {
      return absl::StrCat("line ", line_number, ": format version '", absl::CHexEscape(fields[0].substr(0, 40)),
                          "', this hloc reads '", kMagic, "'");
    }
    if (fields.size() != 4 || fields[0] != kMagic || fields[1].empty() || fields[2].empty() ||
        !absl::SimpleAtod(fields[3], &us)) {
      return absl::StrCat("line ", line_number, " is not an entry: '", absl::CHexEscape(line.substr(0, 80)), "'");
    }
    entries[fields[1]] = AutotuneEntry{fields[2], us};
  }
  if (count != static_cast<int64_t>(entries.size())) {
    return absl::StrCat("the end line counts ", count, " entries, the file holds ", entries.size());
  }
  const uint32_t computed =
      static_cast<uint32_t>(crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(body.data()), body.size()));
  if (computed != crc) return absl::StrFormat("checksum mismatch (stored %08x, computed %08x)", crc, computed);
  return "";
}

absl::Status AutotuneCache::Load(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) && !ec) return absl::OkStatus();  // no cache yet
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  std::string problem;
  std::map<std::string, AutotuneEntry> entries;
  if (!text.ok()) {
    problem = std::string(text.status().message());
  } else {
    problem = CheckFile(*text, entries);
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (problem.empty()) {
    for (auto& [k, e] : entries) entries_[k] = std::move(e);
    return absl::OkStatus();
  }
  // Nothing of the file is used; the next Save replaces it with a whole one.
  dirty_ = true;
  return absl::DataLossError(
      absl::StrCat("autotune cache '", path, "': ", problem, "; ignoring it (it is rebuilt when this run saves)"));
}

std::string AutotuneCache::ToText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "# hloc autotune cache: format TAB key (profile|library|problem) TAB algorithm TAB us\n";
  for (const auto& [key, e] : entries_) absl::StrAppend(&out, kMagic, "\t", key, "\t", e.algorithm, "\t",
                                                        absl::StrFormat("%.3f", e.microseconds), "\n");
  const uint32_t crc =
      static_cast<uint32_t>(crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(out.data()), out.size()));
  absl::StrAppend(&out, kEndPrefix, entries_.size(), "\t", absl::StrFormat("%08x", crc), "\n");
  return out;
}

absl::Status AutotuneCache::Save(const std::string& path) const {
  // A temporary file in the same folder, fsync'ed and renamed over `path` (support/file_io.h):
  // a crash, a full disk or Ctrl-C leaves the previous cache whole, never a partial one.
  if (absl::Status s = WriteFileAtomically(path, ToText()); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("cannot save the autotune cache: ", s.message()));
  }
  std::lock_guard<std::mutex> lock(mu_);
  dirty_ = false;
  return absl::OkStatus();
}

std::optional<AutotuneEntry> AutotuneCache::Lookup(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void AutotuneCache::Insert(const std::string& key, AutotuneEntry entry) {
  if (!Clean(key) || !Clean(entry.algorithm) || key.empty() || entry.algorithm.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  entries_[key] = std::move(entry);
  dirty_ = true;
}

size_t AutotuneCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

AutotuneCache& SharedAutotuneCache(const std::string& path) {
  static std::mutex mu;
  static auto* caches = new std::map<std::string, std::unique_ptr<AutotuneCache>>();
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<AutotuneCache>& c = (*caches)[path];
  if (c == nullptr) {
    c = std::make_unique<AutotuneCache>();
    // Damaged or unreadable: a warning naming the file and the problem, and an empty cache that
    // autotuning fills and the next Save writes whole.
    if (!path.empty())
      if (absl::Status s = c->Load(path); !s.ok()) std::cerr << "hloc: warning: " << s.message() << "\n";
  }
  return *c;
}

}  // namespace hloc::runtime::gpu
