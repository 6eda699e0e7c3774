#include "tools/input_spec.h"

#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/file_io.h"

namespace hloc {
namespace {

constexpr int kMaxDepth = 64;  // an input spec is two levels deep; refuse absurd nesting

// Parses `text` with nlohmann::json without letting an exception escape: a malformed document is
// "invalid JSON: line L, column C: <what> at offset N" (N counts bytes from 0).
absl::StatusOr<nlohmann::json> ParseJsonDocument(std::string_view text) {
  bool too_deep = false;
  auto limit_depth = [&](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
    if (depth > kMaxDepth && !too_deep &&
        (event == nlohmann::json::parse_event_t::object_start || event == nlohmann::json::parse_event_t::array_start)) {
      too_deep = true;
    }
    return !too_deep;
  };
  try {
    nlohmann::json doc = nlohmann::json::parse(text, limit_depth, /*allow_exceptions=*/true);
    if (too_deep)
      return absl::InvalidArgumentError(absl::StrCat("invalid JSON: nested deeper than ", kMaxDepth, " levels"));
    return doc;
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 40: <what>".
    std::string_view what = e.what();
    if (size_t p = what.find("parse error at "); p != std::string_view::npos) what.remove_prefix(p + 15);
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", std::string(what), " at offset ", offset));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
}

}  // namespace

absl::StatusOr<std::vector<InputRange>> ReadInputSpec(const std::string& path,
                                                      const std::vector<runtime::ArrayShape>& params) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<nlohmann::json> json = ParseJsonDocument(*text);
  if (!json.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", json.status().message()));
  if (!json->is_array())
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a list with one entry per parameter"));
  if (json->size() != params.size())
    return absl::InvalidArgumentError(absl::StrCat(path, ": has ", json->size(), " entries but the module has ",
                                                   params.size(), " parameters"));
  std::vector<InputRange> ranges;
  for (size_t i = 0; i < params.size(); ++i) {
    const nlohmann::json& e = (*json)[i];
    const std::string where = absl::StrCat(path, ": parameter ", i);
    if (!e.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, ": expected an object"));
    auto shape = e.find("shape"), lo = e.find("min"), hi = e.find("max");
    if (shape == e.end() || !shape->is_array() || lo == e.end() || !lo->is_number() || hi == e.end() ||
        !hi->is_number())
      return absl::InvalidArgumentError(absl::StrCat(where, ": needs \"shape\" (a list), \"min\" and \"max\" (numbers)"));
    std::vector<int64_t> dims;
    for (const nlohmann::json& d : *shape) {
      const double v = d.is_number() ? d.get<double>() : -1.0;
      if (!d.is_number() || v < 0 || v != std::floor(v) || v > 9.2e18)
        return absl::InvalidArgumentError(absl::StrCat(where, ": shape entries must be non-negative integers"));
      dims.push_back(d.is_number_unsigned() ? static_cast<int64_t>(d.get<uint64_t>()) : static_cast<int64_t>(v));
    }
    if (dims != params[i].dimensions)
      return absl::InvalidArgumentError(absl::StrCat(where, ": shape [", absl::StrJoin(dims, ","),
                                                     "] does not match the parameter's [",
                                                     absl::StrJoin(params[i].dimensions, ","), "]"));
    const double lo_v = lo->get<double>(), hi_v = hi->get<double>();
    if (!std::isfinite(lo_v) || !std::isfinite(hi_v) || lo_v > hi_v)
      return absl::InvalidArgumentError(absl::StrCat(where, ": min and max must be finite with min <= max"));
    ranges.push_back({lo_v, hi_v});
  }
  return ranges;
}

}  // namespace hloc
