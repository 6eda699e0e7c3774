#include "tools/input_spec.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/custom_calls/library_calls.h"  // ParseJson
#include "support/file_io.h"

namespace hloc {

absl::StatusOr<std::vector<InputRange>> ReadInputSpec(const std::string& path,
                                                      const std::vector<runtime::ArrayShape>& params) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  absl::StatusOr<JsonValue> json = ParseJson(*text);
  if (!json.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", json.status().message()));
  if (json->kind != JsonValue::Kind::kArray)
    return absl::InvalidArgumentError(absl::StrCat(path, ": expected a list with one entry per parameter"));
  if (json->array.size() != params.size())
    return absl::InvalidArgumentError(absl::StrCat(path, ": has ", json->array.size(), " entries but the module has ",
                                                   params.size(), " parameters"));
  std::vector<InputRange> ranges;
  for (size_t i = 0; i < params.size(); ++i) {
    const JsonValue& e = json->array[i];
    const std::string where = absl::StrCat(path, ": parameter ", i);
    if (e.kind != JsonValue::Kind::kObject) return absl::InvalidArgumentError(absl::StrCat(where, ": expected an object"));
    const JsonValue* shape = e.Find("shape");
    const JsonValue* lo = e.Find("min");
    const JsonValue* hi = e.Find("max");
    if (shape == nullptr || shape->kind != JsonValue::Kind::kArray || lo == nullptr ||
        lo->kind != JsonValue::Kind::kNumber || hi == nullptr || hi->kind != JsonValue::Kind::kNumber)
      return absl::InvalidArgumentError(absl::StrCat(where, ": needs \"shape\" (a list), \"min\" and \"max\" (numbers)"));
    std::vector<int64_t> dims;
    for (const JsonValue& d : shape->array) {
      if (d.kind != JsonValue::Kind::kNumber || d.number < 0 || d.number != std::floor(d.number))
        return absl::InvalidArgumentError(absl::StrCat(where, ": shape entries must be non-negative integers"));
      dims.push_back(static_cast<int64_t>(d.number));
    }
    if (dims != params[i].dimensions)
      return absl::InvalidArgumentError(absl::StrCat(where, ": shape [", absl::StrJoin(dims, ","),
                                                     "] does not match the parameter's [",
                                                     absl::StrJoin(params[i].dimensions, ","), "]"));
    if (!std::isfinite(lo->number) || !std::isfinite(hi->number) || lo->number > hi->number)
      return absl::InvalidArgumentError(absl::StrCat(where, ": min and max must be finite with min <= max"));
    ranges.push_back({lo->number, hi->number});
  }
  return ranges;
}

}  // namespace hloc
