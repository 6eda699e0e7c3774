// cuDNN convolutions (see cudnn.h for the config and what is supported).
#include "runtime/gpu/cudnn.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

#if HLOC_HAVE_CUDA
// The legacy convolution API is deprecated in cuDNN 9 but complete and simple; XLA's
// cuda_dnn.cc still uses it beside the graph API.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cudnn.h>
#endif

namespace hloc::runtime::gpu {

namespace {

using nlohmann::json;

// The config is read with nlohmann::json; these typed accessors name the key in their errors
// ("'stride' is not an integer"). Numbers are read as doubles: integers are those exact in one.
constexpr int kMaxJsonDepth = 64;  // levels below the top; a config is three deep

// "JSON: <what> at byte N" for malformed text or nesting deeper than kMaxJsonDepth.
absl::StatusOr<json> ParseJson(const std::string& text) {
  bool too_deep = false;
  auto limit_depth = [&](int depth, json::parse_event_t event, json&) {
    if (depth > kMaxJsonDepth && (event == json::parse_event_t::object_start || event == json::parse_event_t::array_start))
      too_deep = true;
    return !too_deep;
  };
  try {
    json doc = json::parse(text, limit_depth);
    if (too_deep) return absl::InvalidArgumentError(absl::StrCat("JSON: nested too deeply (over ", kMaxJsonDepth, " levels)"));
    return doc;
  } catch (const json::parse_error& e) {
    std::string_view what = e.what();
    if (size_t p = what.find("parse error at "); p != std::string_view::npos) what.remove_prefix(p + 15);
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", std::string(what), " at byte ", e.byte > 0 ? e.byte - 1 : 0));
  } catch (const json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", e.what()));
  }
}

// The value under `key` of an object; null when absent or when `o` is not an object.
const json* Find(const json& o, const std::string& key) {
  if (!o.is_object()) return nullptr;
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}

absl::StatusOr<const json*> Member(const json& o, const std::string& key) {
  const json* v = Find(o, key);
  if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat("missing key '", key, "'"));
  return v;
}

bool IsInt(const json& v) {
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15;
}

absl::StatusOr<int64_t> JsonInt(const json& o, const std::string& key) {
  absl::StatusOr<const json*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if (!IsInt(**v)) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not an integer"));
  return static_cast<int64_t>((*v)->get<double>());
}

absl::StatusOr<double> JsonNumber(const json& o, const std::string& key, double fallback) {
  const json* v = Find(o, key);
  if (v == nullptr) return fallback;
  if (!v->is_number()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a number"));
  return v->get<double>();
}

absl::StatusOr<std::string> JsonString(const json& o, const std::string& key) {
  absl::StatusOr<const json*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_string()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a string"));
  return (*v)->get<std::string>();
}

absl::StatusOr<std::vector<int64_t>> JsonIntList(const json& o, const std::string& key) {
  absl::StatusOr<const json*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if (!(*v)->is_array()) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a list"));
  std::vector<int64_t> out;
  for (const json& e : **v) {
    if (!IsInt(e)) return absl::InvalidArgumentError(absl::StrCat("'", key, "' holds a non-integer"));
    out.push_back(static_cast<int64_t>(e.get<double>()));
  }
  return out;
}

absl::StatusOr<ConvTensorSpec> ParseTensor(const json& root, const std::string& key) {
  const json* t = Find(root, key);
  if (t == nullptr || !t->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("'", key, "' is missing or not an object"));
  }
  ConvTensorSpec spec;
  absl::StatusOr<std::string> type = JsonString(*t, "type");
  absl::StatusOr<std::vector<int64_t>> dims = JsonIntList(*t, "dims");
  absl::StatusOr<std::vector<int64_t>> m2m = JsonIntList(*t, "minor_to_major");
  for (const absl::Status& s : {type.status(), dims.status(), m2m.status()})
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat("'", key, "': ", s.message()));
  spec.type = *type;
  spec.dims = *dims;
  spec.minor_to_major = *m2m;
  if (spec.minor_to_major.empty())
    for (int64_t i = static_cast<int64_t>(spec.dims.size()) - 1; i >= 0; --i) spec.minor_to_major.push_back(i);
  std::vector<int64_t> sorted = spec.minor_to_major;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != spec.dims.size())
      return absl::InvalidArgumentError(absl::StrCat("'", key, "': minor_to_major is not a permutation of its dims"));
  for (int64_t d : spec.dims)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("'", key, "': a negative dimension"));
  return spec;
}

}  // namespace

absl::StatusOr<ConvSpec> ParseConvSpec(const std::string& text) {
  absl::StatusOr<json> root = ParseJson(text);
  if (!root.ok()) return absl::InvalidArgumentError(absl::StrCat("convolution config: ", root.status().message()));
  auto fail = [](const absl::Status& s) {
    return absl::InvalidArgumentError(absl::StrCat("convolution config: ", s.message()));
  };
  ConvSpec c;
  absl::StatusOr<std::string> kind = JsonString(*root, "kind");
  if (!kind.ok()) return fail(kind.status());
  c.kind = *kind;
  for (auto [key, out] : {std::pair<const char*, ConvTensorSpec*>{"input", &c.input}, {"filter", &c.filter},
                          {"output", &c.output}}) {
    absl::StatusOr<ConvTensorSpec> t = ParseTensor(*root, key);
    if (!t.ok()) return fail(t.status());
    *out = *t;
  }
  struct IntField { const char* key; int64_t* out; };
  for (IntField f : {IntField{"input_batch_dim", &c.input_batch_dim}, {"input_feature_dim", &c.input_feature_dim},
                     {"kernel_input_feature_dim", &c.kernel_input_feature_dim},
                     {"kernel_output_feature_dim", &c.kernel_output_feature_dim},
                     {"output_batch_dim", &c.output_batch_dim}, {"output_feature_dim", &c.output_feature_dim},
                     {"feature_group_count", &c.feature_group_count}, {"batch_group_count", &c.batch_group_count}}) {
    absl::StatusOr<int64_t> v = JsonInt(*root, f.key);
    if (!v.ok()) return fail(v.status());
    *f.out = *v;
  }
  struct ListField { const char* key; std::vector<int64_t>* out; };
  for (ListField f : {ListField{"input_spatial_dims", &c.input_spatial_dims},
                      {"kernel_spatial_dims", &c.kernel_spatial_dims}, {"output_spatial_dims", &c.output_spatial_dims}}) {
    absl::StatusOr<std::vector<int64_t>> v = JsonIntList(*root, f.key);
    if (!v.ok()) return fail(v.status());
    *f.out = *v;
  }
  struct NumField { const char* key; double* out; double fallback; };
  for (NumField f : {NumField{"conv_result_scale", &c.conv_result_scale, 1.0},
                     {"side_input_scale", &c.side_input_scale, 0.0}, {"leakyrelu_alpha", &c.leakyrelu_alpha, 0.0}}) {
    absl::StatusOr<double> v = JsonNumber(*root, f.key, f.fallback);
    if (!v.ok()) return fail(v.status());
    *f.out = *v;
  }
  if (Find(*root, "activation") != nullptr) {
    absl::StatusOr<std::string> a = JsonString(*root, "activation");
    if (!a.ok()) return fail(a.status());
    c.activation = *a;
  }
  const json* window = Find(*root, "window");
  if (window == nullptr || !window->is_array()) return fail(absl::InvalidArgumentError("'window' is not a list"));
  for (size_t i = 0; i < window->size(); ++i) {
    const json& w = (*window)[i];
    ConvWindowDim d;
    struct WField { const char* key; int64_t* out; };
    for (WField f : {WField{"size", &d.size}, {"stride", &d.stride}, {"pad_low", &d.pad_low}, {"pad_high", &d.pad_high},
                     {"lhs_dilation", &d.lhs_dilation}, {"rhs_dilation", &d.rhs_dilation}}) {
      absl::StatusOr<int64_t> v = JsonInt(w, f.key);
      if (!v.ok()) return fail(absl::InvalidArgumentError(absl::StrCat("'window'[", i, "]: ", v.status().message())));
      *f.out = *v;
    }
    const json* r = Find(w, "reversal");
    d.reversal = r != nullptr && r->is_boolean() && r->get<bool>();
    c.window.push_back(d);
  }
  const json* args = Find(*root, "arguments");
  if (args == nullptr || !args->is_array()) return fail(absl::InvalidArgumentError("'arguments' is not a list"));
  for (const json& a : *args) {
    if (!a.is_string()) return fail(absl::InvalidArgumentError("'arguments' holds a non-string"));
    c.arguments.push_back(a.get<std::string>());
  }
  // Consistency.
  const size_t ns = c.input_spatial_dims.size();
  if (c.kernel_spatial_dims.size() != ns || c.output_spatial_dims.size() != ns || c.window.size() != ns) {
    return fail(absl::InvalidArgumentError(absl::StrCat("spatial dims disagree: input ", ns, ", kernel ",
                                                        c.kernel_spatial_dims.size(), ", output ",
                                                        c.output_spatial_dims.size(), ", window ", c.window.size())));
  }
  auto in_range = [](const ConvTensorSpec& t, int64_t d) { return d >= 0 && d < static_cast<int64_t>(t.dims.size()); };
  std::vector<std::pair<const ConvTensorSpec*, std::vector<int64_t>>> checks = {
      {&c.input, {c.input_batch_dim, c.input_feature_dim}},
      {&c.filter, {c.kernel_input_feature_dim, c.kernel_output_feature_dim}},
      {&c.output, {c.output_batch_dim, c.output_feature_dim}}};
  checks[0].second.insert(checks[0].second.end(), c.input_spatial_dims.begin(), c.input_spatial_dims.end());
  checks[1].second.insert(checks[1].second.end(), c.kernel_spatial_dims.begin(), c.kernel_spatial_dims.end());
  checks[2].second.insert(checks[2].second.end(), c.output_spatial_dims.begin(), c.output_spatial_dims.end());
  for (const auto& [t, dims] : checks) {
    std::set<int64_t> seen(dims.begin(), dims.end());
    if (seen.size() != dims.size() || dims.size() != t->dims.size())
      return fail(absl::InvalidArgumentError("dimension numbers do not name each tensor dimension once"));
    for (int64_t d : dims)
      if (!in_range(*t, d)) return fail(absl::InvalidArgumentError(absl::StrCat("dimension number ", d, " out of range")));
  }
  std::vector<std::string> roles;
  if (c.kind == "forward") {
    roles = {"input", "filter", "output"};
  } else if (c.kind == "backward_input") {
    roles = {"output", "filter", "input"};
  } else if (c.kind == "backward_filter") {
    roles = {"input", "output", "filter"};
  } else if (c.kind == "bias_activation_forward") {
    roles = c.arguments.size() == 5 ? std::vector<std::string>{"input", "filter", "bias", "side_input", "output"}
                                    : std::vector<std::string>{"input", "filter", "bias", "output"};
  } else {
    return fail(absl::InvalidArgumentError(absl::StrCat("unknown kind '", c.kind, "'")));
  }
  if (c.arguments != roles) {
    return fail(absl::InvalidArgumentError(absl::StrCat("a ", c.kind, " convolution takes arguments [",
                                                        absl::StrJoin(roles, ", "), "], the config says [",
                                                        absl::StrJoin(c.arguments, ", "), "]")));
  }
  return c;
}

#if !HLOC_HAVE_CUDA
absl::Status CudnnAvailable() { return absl::UnavailableError("hloc was built without the CUDA headers"); }
#endif

}  // namespace hloc::runtime::gpu
