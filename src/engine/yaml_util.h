// Reading YAML (pipelines/*.yaml, configs/*.yaml) with errors a person can act on: every
// message reads `FILE:LINE:COL: message` (1-based, from yaml-cpp's marks), unknown keys suggest
// the closest known one, and scalars are typed strictly (a quoted "25" is a string, not an int),
// so a typo is reported where it is instead of being read as something else.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "yaml-cpp/yaml.h"

namespace hloc::yaml {

// One key of a mapping, in file order.
struct MapEntry {
  std::string key;
  YAML::Node key_node;
  YAML::Node value;
};

// Parses a whole file (exactly one document). Syntax errors come back located; a missing or
// unreadable file says so. Files larger than kMaxFileBytes are refused.
inline constexpr int64_t kMaxFileBytes = 16 << 20;
// Lists longer than this are refused (no manifest needs them; quadratic checks stay cheap).
inline constexpr size_t kMaxListItems = 10000;
absl::StatusOr<YAML::Node> LoadFile(const std::string& path);
// The same for text already in memory; `name` is used in messages.
absl::StatusOr<YAML::Node> LoadString(const std::string& text, const std::string& name);

// Typed, located reads from one file's nodes.
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}
  const std::string& file() const { return file_; }

  // "FILE:LINE:COL: message" (or "FILE: message" where the node has no position).
  absl::Status Error(const YAML::Mark& mark, std::string_view message) const;
  absl::Status Error(const YAML::Node& node, std::string_view message) const { return Error(node.Mark(), message); }
  std::string Where(const YAML::Mark& mark) const;

  // The keys of a mapping in order; `what` names the node in messages ("a pass entry"). Keys
  // must be scalars and appear once.
  absl::StatusOr<std::vector<MapEntry>> Entries(const YAML::Node& node, std::string_view what) const;
  // Every key must be one of `allowed`; otherwise an error at that key, with the closest
  // allowed key suggested when one is near.
  absl::Status CheckKeys(const std::vector<MapEntry>& entries, const std::vector<std::string>& allowed,
                         std::string_view what) const;
  // Sequence elements (a sequence node is required).
  absl::StatusOr<std::vector<YAML::Node>> Sequence(const YAML::Node& node, std::string_view what) const;

  // Scalars. `what` names the value in messages ("option 'max_iterations' of pass 'algsimp'").
  absl::StatusOr<std::string> String(const YAML::Node& node, std::string_view what) const;
  absl::StatusOr<std::string> Name(const YAML::Node& node, std::string_view what) const;  // non-empty
  absl::StatusOr<bool> Bool(const YAML::Node& node, std::string_view what) const;
  absl::StatusOr<int64_t> Int(const YAML::Node& node, std::string_view what) const;
  absl::StatusOr<double> Float(const YAML::Node& node, std::string_view what) const;
  absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node, std::string_view what) const;

 private:
  // The text of a plain (unquoted) scalar, or an error saying a `what` was expected.
  absl::StatusOr<std::string> PlainScalar(const YAML::Node& node, std::string_view what,
                                          std::string_view expected) const;
  std::string file_;
};

const MapEntry* Find(const std::vector<MapEntry>& entries, std::string_view key);

// Levenshtein distance (case-sensitive), for suggestions.
int EditDistance(std::string_view a, std::string_view b);
// The candidate closest to `name` when it is close enough to be a likely typo, else "".
std::string Closest(std::string_view name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)" for the closest candidate, or "".
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);
// "node kind" words for messages: "a mapping", "a sequence", "a scalar", "nothing".
std::string KindName(const YAML::Node& node);

// Scalar syntax shared with the command line and printing.
bool ParseBool(std::string_view text, bool* out);
bool ParseInt(std::string_view text, int64_t* out);
bool ParseFloat(std::string_view text, double* out);
// A double printed so that ParseFloat reads back the same value ("25.0", "1e-05", ".inf").
std::string FormatFloat(double v);
// A string as YAML: plain when that reads back as the same string, else double-quoted.
std::string QuoteIfNeeded(std::string_view s);

}  // namespace hloc::yaml
