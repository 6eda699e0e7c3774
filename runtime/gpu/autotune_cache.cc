// The autotuning cache file (see autotune_cache.h).
#include "runtime/gpu/autotune_cache.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"

namespace hloc::runtime::gpu {
namespace {
constexpr char kMagic[] = "hloc-autotune-v1";

bool Clean(const std::string& s) { return s.find_first_of("\t\n\r") == std::string::npos; }
}  // namespace

void AutotuneCache::AddFromText(const std::string& text) {
  std::lock_guard<std::mutex> lock(mu_);
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    double us = 0;
    if (f.size() != 4 || f[0] != kMagic || f[1].empty() || f[2].empty() || !absl::SimpleAtod(f[3], &us)) {
      ++skipped_;
      continue;
    }
    entries_[f[1]] = AutotuneEntry{f[2], us};
  }
}

absl::Status AutotuneCache::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::NotFoundError(absl::StrCat("cannot open the autotune cache '", path, "': ", std::strerror(errno)));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read the autotune cache '", path, "'"));
  AddFromText(text.str());
  return absl::OkStatus();
}

std::string AutotuneCache::ToText() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "# hloc autotune cache: format TAB key (profile|library|problem) TAB algorithm TAB us\n";
  for (const auto& [key, e] : entries_) absl::StrAppend(&out, kMagic, "\t", key, "\t", e.algorithm, "\t",
                                                        absl::StrFormat("%.3f", e.microseconds), "\n");
  return out;
}

absl::Status AutotuneCache::Save(const std::string& path) const {
  const std::string text = ToText();
  const std::string tmp = absl::StrCat(path, ".tmp.", static_cast<long>(::getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("cannot write the autotune cache '", tmp, "': ", std::strerror(errno)));
    }
    out << text;
    if (!out.good()) return absl::DataLossError(absl::StrCat("cannot write the autotune cache '", tmp, "'"));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string err = std::strerror(errno);
    std::remove(tmp.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot rename '", tmp, "' to '", path, "': ", err));
  }
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
    if (!path.empty()) (void)c->Load(path);  // unreadable: start empty; Save reports problems
  }
  return *c;
}

}  // namespace hloc::runtime::gpu
