// The backend_config JSON of XLA:GPU's library calls (see library_calls.h): parsing through
// nlohmann::json (depth-capped, errors located), and the printers/readers of GemmBackendConfig
// and CudnnConvBackendConfig in the text form XLA writes (proto JSON: int64 fields as strings,
// enums by name, fields sorted by name).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/custom_calls/library_calls.h"

namespace hloc {

bool IsCublasGemmTarget(std::string_view t) { return t == kGemmCallTarget || t == kCublasLtMatmulCallTarget; }
bool IsCudnnConvTarget(std::string_view t) {
  return t == kCudnnConvForwardCallTarget || t == kCudnnConvBackwardInputCallTarget ||
         t == kCudnnConvBackwardFilterCallTarget || t == kCudnnConvBiasActivationForwardCallTarget;
}

using nlohmann::json;

bool IsSmallGemmMarked(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kCustomCall) return inst.attrs().custom_call_target == kSmallGemmCallTarget;
  if (inst.opcode() != HloOpcode::kDot) return false;
  const std::string& text = inst.attrs().backend_config;
  if (text.find(kSmallGemmCallTarget) == std::string::npos) return false;  // the common case, unparsed
  absl::StatusOr<json> v = ParseJson(text);  // depth-capped: the config comes from the input
  if (!v.ok() || !v->is_object()) return false;
  auto it = v->find("kind");
  return it != v->end() && it->is_string() && it->get<std::string>() == kSmallGemmCallTarget;
}

std::optional<std::string> DotConfigWithSmallGemmKind(std::string_view backend_config) {
  absl::StatusOr<json> v = backend_config.empty() ? absl::StatusOr<json>(json::object()) : ParseJson(backend_config);
  if (!v.ok() || !v->is_object()) return std::nullopt;
  (*v)["kind"] = std::string(kSmallGemmCallTarget);
  return v->dump();
}

namespace {

// The value under `key` of an object; null when absent or when `v` is not an object.
const json* Find(const json& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  auto it = v.find(std::string(key));
  return it == v.end() ? nullptr : &*it;
}
// A string's text, a number as written; empty for anything else.
std::string Text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return "";
}

constexpr int kMaxDepth = 64;  // levels below the top; XLA's configs are about four deep

// nlohmann builds nested values without recursion, but an absurdly nested config is refused before
// parsing (and located), as the hand-written reader did: the first bracket more than kMaxDepth
// levels below the top.
absl::Status CheckDepth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth + 1)
        return absl::InvalidArgumentError(absl::StrCat("invalid JSON: nesting too deep at offset ", i));
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return absl::OkStatus();
}

// Proto JSON writes int64 as strings and doubles as numbers; accept either for both.
absl::StatusOr<double> AsNumber(const json& v, std::string_view field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& text = v.get_ref<const std::string&>();
    char* end = nullptr;
    double d = std::strtod(text.c_str(), &end);
    if (end != nullptr && *end == '\0' && !text.empty()) return d;
    if (text == "NaN") return std::nan("");
    if (text == "Infinity") return INFINITY;
    if (text == "-Infinity") return -INFINITY;
  }
  return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " is not a number"));
}
absl::StatusOr<int64_t> AsInt(const json& v, std::string_view field) {
  auto out_of_range = [&] {
    return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " out of range"));
  };
  // Integers, written as numbers or as strings, are exact; anything else goes through a double.
  if (v.is_number_unsigned()) {
    if (v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return out_of_range();
    return static_cast<int64_t>(v.get<uint64_t>());
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  int64_t exact = 0;
  if (v.is_string() && absl::SimpleAtoi(v.get_ref<const std::string&>(), &exact)) return exact;
  auto d = AsNumber(v, field);
  if (!d.ok()) return d.status();
  if (!(std::fabs(*d) < 9.2e18)) return out_of_range();
  return static_cast<int64_t>(*d);
}
absl::StatusOr<std::vector<int64_t>> AsIntList(const json* v, std::string_view field) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (!v->is_array())
    return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " is not a list"));
  for (const json& e : *v) {
    auto i = AsInt(e, field);
    if (!i.ok()) return i.status();
    out.push_back(*i);
  }
  return out;
}

std::string IntList(const std::vector<int64_t>& v) {
  return absl::StrCat("[", absl::StrJoin(v, ",", [](std::string* out, int64_t x) { absl::StrAppend(out, "\"", x, "\""); }), "]");
}
std::string Bool(bool b) { return b ? "true" : "false"; }

// The GpuBackendConfig wrapper around one inner config, fields in XLA's order.
std::string WrapGpuBackendConfig(std::string_view inner_key, const std::string& inner) {
  std::string head = inner_key < std::string_view("device_type")
                         ? absl::StrCat("\"", std::string(inner_key), "\":", inner, ",")
                         : std::string();
  std::string mid = inner_key >= std::string_view("device_type") ? absl::StrCat("\"", std::string(inner_key), "\":", inner, ",")
                                                                 : std::string();
  return absl::StrCat("{", head, "\"device_type\":\"DEVICE_TYPE_INVALID\",\"force_earliest_schedule\":false,", mid,
                      "\"operation_queue_id\":\"0\",\"reification_cost\":[]}");
}

// The inner object `key` of a GpuBackendConfig, or the document itself when it is the bare
// inner config (a test may write only that).
absl::StatusOr<json> InnerConfig(std::string_view text, std::string_view key) {
  auto doc = ParseJson(text);
  if (!doc.ok()) return absl::InvalidArgumentError(absl::StrCat("backend_config: ", doc.status().message()));
  if (!doc->is_object()) return absl::InvalidArgumentError("backend_config is not a JSON object");
  if (const json* inner = Find(*doc, key)) {
    if (!inner->is_object())
      return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(key), " is not an object"));
    return *inner;
  }
  return *doc;
}

constexpr std::pair<GemmEpilogue, std::string_view> kEpilogueNames[] = {
    {GemmEpilogue::kDefault, "DEFAULT"},   {GemmEpilogue::kBias, "BIAS"},
    {GemmEpilogue::kRelu, "RELU"},         {GemmEpilogue::kBiasRelu, "BIAS_RELU"},
    {GemmEpilogue::kGelu, "GELU"},         {GemmEpilogue::kGeluAux, "GELU_AUX"},
    {GemmEpilogue::kBiasGelu, "BIAS_GELU"}, {GemmEpilogue::kBiasGeluAux, "BIAS_GELU_AUX"},
    {GemmEpilogue::kSilu, "SILU"},         {GemmEpilogue::kBiasSilu, "BIAS_SILU"},
};
constexpr std::pair<ConvActivation, std::string_view> kActivationNames[] = {
    {ConvActivation::kNone, "kNone"},         {ConvActivation::kSigmoid, "kSigmoid"},
    {ConvActivation::kRelu, "kRelu"},         {ConvActivation::kRelu6, "kRelu6"},
    {ConvActivation::kReluX, "kReluX"},       {ConvActivation::kTanh, "kTanh"},
    {ConvActivation::kBandPass, "kBandPass"}, {ConvActivation::kElu, "kElu"},
    {ConvActivation::kLeakyRelu, "kLeakyRelu"}, {ConvActivation::kGeluExact, "kGeluExact"},
};

}  // namespace

absl::StatusOr<nlohmann::json> ParseJson(std::string_view text) {
  if (absl::Status depth = CheckDepth(text); !depth.ok()) return depth;
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line 1, column 40: <what>";
    // e.byte counts from 1.
    std::string_view what = e.what();
    if (size_t p = what.find("parse error at "); p != std::string_view::npos) what.remove_prefix(p + 15);
    const size_t offset = e.byte > 0 ? e.byte - 1 : 0;
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", std::string(what), " at offset ", offset));
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", e.what()));
  }
}

std::string JsonDouble(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.15g", v);
  if (std::strtod(buf, nullptr) != v) std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

std::string_view GemmEpilogueName(GemmEpilogue e) {
  for (const auto& [k, n] : kEpilogueNames)
    if (k == e) return n;
  return "DEFAULT";
}
std::optional<GemmEpilogue> ParseGemmEpilogue(std::string_view name) {
  for (const auto& [k, n] : kEpilogueNames)
    if (n == name) return k;
  return std::nullopt;
}
bool EpilogueAddsBias(GemmEpilogue e) {
  return e == GemmEpilogue::kBias || e == GemmEpilogue::kBiasRelu || e == GemmEpilogue::kBiasGelu ||
         e == GemmEpilogue::kBiasGeluAux || e == GemmEpilogue::kBiasSilu;
}
bool EpilogueHasAux(GemmEpilogue e) { return e == GemmEpilogue::kGeluAux || e == GemmEpilogue::kBiasGeluAux; }

std::string_view ConvActivationName(ConvActivation a) {
  for (const auto& [k, n] : kActivationNames)
    if (k == a) return n;
  return "kNone";
}
std::optional<ConvActivation> ParseConvActivation(std::string_view name) {
  for (const auto& [k, n] : kActivationNames)
    if (n == name) return k;
  return std::nullopt;
}

std::string GemmBackendConfigToJson(const GemmBackendConfig& c) {
  const DotDimensionNumbers& d = c.dot_dimension_numbers;
  std::string precisions = absl::StrJoin(c.operand_precision, ",", [](std::string* out, const std::string& p) {
    absl::StrAppend(out, "\"", p, "\"");
  });
  std::string inner = absl::StrCat(
      "{\"alpha_imag\":", JsonDouble(c.alpha_imag), ",\"alpha_real\":", JsonDouble(c.alpha_real));
  if (c.autotune_workspace_size) absl::StrAppend(&inner, ",\"autotune_workspace_size\":\"", *c.autotune_workspace_size, "\"");
  absl::StrAppend(&inner, ",\"beta\":", JsonDouble(c.beta), ",\"damax_output\":", Bool(c.damax_output),
                  ",\"dot_dimension_numbers\":{\"lhs_batch_dimensions\":", IntList(d.lhs_batch_dimensions),
                  ",\"lhs_contracting_dimensions\":", IntList(d.lhs_contracting_dimensions),
                  ",\"rhs_batch_dimensions\":", IntList(d.rhs_batch_dimensions),
                  ",\"rhs_contracting_dimensions\":", IntList(d.rhs_contracting_dimensions), "}",
                  ",\"epilogue\":\"", std::string(GemmEpilogueName(c.epilogue)), "\",\"grad_x\":", Bool(c.grad_x),
                  ",\"grad_y\":", Bool(c.grad_y), ",\"lhs_stride\":\"", c.lhs_stride, "\"",
                  ",\"precision_config\":{\"algorithm\":\"", c.algorithm, "\",\"operand_precision\":[", precisions, "]}",
                  ",\"rhs_stride\":\"", c.rhs_stride, "\",\"scale_mode\":", c.scale_mode);
  if (c.selected_algorithm) absl::StrAppend(&inner, ",\"selected_algorithm\":\"", *c.selected_algorithm, "\"");
  absl::StrAppend(&inner, "}");
  return WrapGpuBackendConfig("gemm_backend_config", inner);
}

std::string CudnnConvBackendConfigToJson(const CudnnConvBackendConfig& c) {
  std::string inner = absl::StrCat("{\"activation_mode\":\"", std::string(ConvActivationName(c.activation_mode)), "\"");
  if (!c.algorithm_json.empty()) absl::StrAppend(&inner, ",\"algorithm\":", c.algorithm_json);
  absl::StrAppend(&inner, ",\"conv_result_scale\":", JsonDouble(c.conv_result_scale),
                  ",\"leakyrelu_alpha\":", JsonDouble(c.leakyrelu_alpha),
                  ",\"side_input_scale\":", JsonDouble(c.side_input_scale), "}");
  return WrapGpuBackendConfig("cudnn_conv_backend_config", inner);
}

absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(std::string_view text) {
  GemmBackendConfig c;
  if (text.empty()) return c;
  auto inner = InnerConfig(text, "gemm_backend_config");
  if (!inner.ok()) return inner.status();
  // Proto defaults for absent fields (alpha_real's default is 0 in the proto).
  c.alpha_real = 0;
  c.operand_precision.clear();
  auto num = [&](std::string_view key, double* out) -> absl::Status {
    if (const json* v = Find(*inner, key)) {
      auto d = AsNumber(*v, key);
      if (!d.ok()) return d.status();
      *out = *d;
    }
    return absl::OkStatus();
  };
  auto integer = [&](std::string_view key, int64_t* out) -> absl::Status {
    if (const json* v = Find(*inner, key)) {
      auto i = AsInt(*v, key);
      if (!i.ok()) return i.status();
      *out = *i;
    }
    return absl::OkStatus();
  };
  auto flag = [&](std::string_view key, bool* out) {
    if (const json* v = Find(*inner, key)) *out = v->is_boolean() && v->get<bool>();
  };
  for (auto s : {num("alpha_real", &c.alpha_real), num("alpha_imag", &c.alpha_imag), num("beta", &c.beta),
                 integer("lhs_stride", &c.lhs_stride), integer("rhs_stride", &c.rhs_stride),
                 integer("scale_mode", &c.scale_mode)})
    if (!s.ok()) return s;
  flag("grad_x", &c.grad_x);
  flag("grad_y", &c.grad_y);
  flag("damax_output", &c.damax_output);
  if (const json* v = Find(*inner, "selected_algorithm")) {
    auto i = AsInt(*v, "selected_algorithm");
    if (!i.ok()) return i.status();
    c.selected_algorithm = *i;
  }
  if (const json* v = Find(*inner, "autotune_workspace_size")) {
    auto i = AsInt(*v, "autotune_workspace_size");
    if (!i.ok()) return i.status();
    c.autotune_workspace_size = *i;
  }
  if (const json* v = Find(*inner, "epilogue")) {
    auto e = ParseGemmEpilogue(Text(*v));
    if (!v->is_string() || !e)
      return absl::InvalidArgumentError(absl::StrCat("backend_config: unknown epilogue \"", Text(*v), "\""));
    c.epilogue = *e;
  }
  if (const json* d = Find(*inner, "dot_dimension_numbers")) {
    DotDimensionNumbers& dn = c.dot_dimension_numbers;
    struct Field { const char* key; std::vector<int64_t>* out; };
    for (Field f : {Field{"lhs_batch_dimensions", &dn.lhs_batch_dimensions},
                    Field{"rhs_batch_dimensions", &dn.rhs_batch_dimensions},
                    Field{"lhs_contracting_dimensions", &dn.lhs_contracting_dimensions},
                    Field{"rhs_contracting_dimensions", &dn.rhs_contracting_dimensions}}) {
      auto list = AsIntList(Find(*d, f.key), f.key);
      if (!list.ok()) return list.status();
      *f.out = std::move(*list);
    }
  }
  if (const json* p = Find(*inner, "precision_config")) {
    if (const json* a = Find(*p, "algorithm")) c.algorithm = Text(*a);
    if (const json* ops = Find(*p, "operand_precision"); ops != nullptr && ops->is_array())
      for (const json& e : *ops) c.operand_precision.push_back(Text(e));
  }
  return c;
}

absl::StatusOr<CudnnConvBackendConfig> ParseCudnnConvBackendConfig(std::string_view text) {
  CudnnConvBackendConfig c;
  if (text.empty()) return c;
  auto inner = InnerConfig(text, "cudnn_conv_backend_config");
  if (!inner.ok()) return inner.status();
  c.conv_result_scale = 0;  // the proto default; XLA always writes it
  for (auto [key, out] : {std::pair<const char*, double*>{"conv_result_scale", &c.conv_result_scale},
                          {"side_input_scale", &c.side_input_scale},
                          {"leakyrelu_alpha", &c.leakyrelu_alpha}}) {
    if (const json* v = Find(*inner, key)) {
      auto d = AsNumber(*v, key);
      if (!d.ok()) return d.status();
      *out = *d;
    }
  }
  if (const json* v = Find(*inner, "activation_mode")) {
    auto a = ParseConvActivation(Text(*v));
    if (!a) return absl::InvalidArgumentError(absl::StrCat("backend_config: unknown activation_mode \"", Text(*v), "\""));
    c.activation_mode = *a;
  }
  // "algorithm" (written by autotuning) does not change the result and is not read.
  return c;
}

}  // namespace hloc
