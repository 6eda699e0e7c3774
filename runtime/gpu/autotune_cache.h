// The autotuning cache: which library algorithm won for a problem, kept in a text file so a
// later process (or a later run on the GPU machine) skips the timing. XLA keeps the same
// information in its autotune results (xla/service/gpu/autotuning/autotuner_util.cc).
//
// File format (one entry a line, '#' lines are comments, fields separated by one TAB):
//   hloc-autotune-v1 <TAB> KEY <TAB> ALGORITHM <TAB> MICROSECONDS
// KEY is "PROFILE|LIBRARY|PROBLEM" (the profile the executable was compiled for, the library
// and its version, e.g. "cublasLt-130100", and the problem: types, sizes, layouts, epilogue);
// ALGORITHM is library-specific text without TABs or newlines (cuBLASLt: the 64 bytes of
// cublasLtMatmulAlgo_t in hex; cuDNN: the algorithm number); MICROSECONDS the measured time.
// The last line is "hloc-autotune-end <TAB> ENTRIES <TAB> CRC32": Load checks the whole file
// against it. A damaged file (empty, truncated, garbage, another format version, a checksum
// mismatch) is not used at all: Load says what is wrong, the cache starts empty and the next
// Save rewrites the file (issue 17: a damaged or future file never stops a run). AddFromText,
// the lenient parser, skips (and counts) bad lines instead.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace hloc::runtime::gpu {

struct AutotuneEntry {
  std::string algorithm;
  double microseconds = 0;
};

class AutotuneCache {
 public:
  // Reads `path`; a missing file is an empty cache (not an error). An unreadable or damaged one
  // adds nothing, marks the cache dirty (so Save rebuilds the file) and returns DataLoss:
  // "autotune cache 'PATH': PROBLEM; ignoring it ..." (SharedAutotuneCache prints it as a warning).
  absl::Status Load(const std::string& path);
  // Writes every entry (sorted by key) to `path` atomically (WriteFileAtomically: a temporary file
  // in the same folder, fsync, rename), so the file on disk is always a whole cache.
  absl::Status Save(const std::string& path) const;

  std::optional<AutotuneEntry> Lookup(const std::string& key) const;
  void Insert(const std::string& key, AutotuneEntry entry);
  size_t size() const;
  int64_t skipped_lines() const { return skipped_; }
  bool dirty() const { return dirty_; }

  // The text of the file (what Save writes) and its parsing (what Load reads).
  std::string ToText() const;
  void AddFromText(const std::string& text);
  // The strict check Load applies to a whole file: "" when it is a whole, valid cache (its
  // entries added to `entries`), else what is wrong with it.
  static std::string CheckFile(const std::string& text, std::map<std::string, AutotuneEntry>& entries);

 private:
  mutable std::mutex mu_;
  std::map<std::string, AutotuneEntry> entries_;
  int64_t skipped_ = 0;
  mutable bool dirty_ = false;
};

// The cache of one file, shared by every executable of the process that names it.
AutotuneCache& SharedAutotuneCache(const std::string& path);

}  // namespace hloc::runtime::gpu
