// A small JSON reader for the runtime's configs (Thunk::backend_config of kConvolution). The
// runtime includes nothing from src/, so it cannot use the compiler's parsers. Objects keep
// their keys sorted; numbers are doubles (exact for the integers configs hold).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc::runtime::gpu {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject } kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  const JsonValue* Find(const std::string& key) const;  // objects only; null when absent
};

// Errors name the byte offset and what was expected.
absl::StatusOr<JsonValue> ParseJson(const std::string& text);

// Typed access for configs: errors name the key ("'window'[1].'stride' is not an integer").
absl::StatusOr<int64_t> JsonInt(const JsonValue& object, const std::string& key);
absl::StatusOr<double> JsonNumber(const JsonValue& object, const std::string& key, double fallback);
absl::StatusOr<std::string> JsonString(const JsonValue& object, const std::string& key);
absl::StatusOr<std::vector<int64_t>> JsonIntList(const JsonValue& object, const std::string& key);

}  // namespace hloc::runtime::gpu
