// The backend_config JSON of XLA:GPU's library calls (see library_calls.h): a small JSON
// reader, and the printers/readers of GemmBackendConfig and CudnnConvBackendConfig in the text
// form XLA writes (proto JSON: int64 fields as strings, enums by name, fields sorted by name).
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/custom_calls/library_calls.h"

namespace hloc {

bool IsCublasGemmTarget(std::string_view t) { return t == kGemmCallTarget || t == kCublasLtMatmulCallTarget; }
bool IsCudnnConvTarget(std::string_view t) {
  return t == kCudnnConvForwardCallTarget || t == kCudnnConvBackwardInputCallTarget ||
         t == kCudnnConvBackwardFilterCallTarget || t == kCudnnConvBiasActivationForwardCallTarget;
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  for (const auto& [k, v] : object)
    if (k == key) return &v;
  return nullptr;
}

namespace {

// Recursive descent over the text; nesting deeper than kMaxDepth is an error, not a stack
// overflow (the input is user-supplied HLO).
class JsonReader {
 public:
  explicit JsonReader(std::string_view s) : s_(s) {}

  absl::StatusOr<JsonValue> ReadDocument() {
    auto v = Read(0);
    if (!v.ok()) return v;
    SkipSpace();
    if (pos_ != s_.size()) return Error("trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 64;

  absl::Status Error(std::string_view what) const {
    // The reader serves backend_config and input spec files alike: callers say which it was.
    return absl::InvalidArgumentError(absl::StrCat("invalid JSON: ", std::string(what), " at offset ", pos_));
  }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) == w) {
      pos_ += w.size();
      return true;
    }
    return false;
  }

  absl::StatusOr<std::string> ReadString() {
    if (!Consume('"')) return Error("expected '\"'");
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      char c = s_[pos_++];
      if (c == '\\') {
        if (pos_ >= s_.size()) return Error("unterminated escape");
        char e = s_[pos_++];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'u': {
            if (pos_ + 4 > s_.size()) return Error("bad \\u escape");
            unsigned code = static_cast<unsigned>(std::strtoul(std::string(s_.substr(pos_, 4)).c_str(), nullptr, 16));
            pos_ += 4;
            if (code < 0x80) out += static_cast<char>(code);
            else out += '?';  // configs are ASCII; a non-ASCII escape only needs to survive
            break;
          }
          default: out += e;
        }
      } else {
        out += c;
      }
    }
    if (pos_ >= s_.size()) return Error("unterminated string");
    ++pos_;
    return out;
  }

  absl::StatusOr<JsonValue> Read(int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= s_.size()) return Error("unexpected end");
    JsonValue v;
    const char c = s_[pos_];
    if (c == '{') {
      ++pos_;
      v.kind = JsonValue::Kind::kObject;
      if (Consume('}')) return v;
      do {
        SkipSpace();
        auto key = ReadString();
        if (!key.ok()) return key.status();
        if (!Consume(':')) return Error("expected ':'");
        auto item = Read(depth + 1);
        if (!item.ok()) return item;
        v.object.emplace_back(std::move(*key), std::move(*item));
      } while (Consume(','));
      if (!Consume('}')) return Error("expected '}'");
      return v;
    }
    if (c == '[') {
      ++pos_;
      v.kind = JsonValue::Kind::kArray;
      if (Consume(']')) return v;
      do {
        auto item = Read(depth + 1);
        if (!item.ok()) return item;
        v.array.push_back(std::move(*item));
      } while (Consume(','));
      if (!Consume(']')) return Error("expected ']'");
      return v;
    }
    if (c == '"') {
      auto str = ReadString();
      if (!str.ok()) return str.status();
      v.kind = JsonValue::Kind::kString;
      v.text = std::move(*str);
      return v;
    }
    if (ConsumeWord("true")) { v.kind = JsonValue::Kind::kBool; v.boolean = true; return v; }
    if (ConsumeWord("false")) { v.kind = JsonValue::Kind::kBool; return v; }
    if (ConsumeWord("null")) return v;
    const size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '-' ||
                                s_[pos_] == '+' || s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E'))
      ++pos_;
    if (pos_ == start) return Error("unexpected character");
    v.kind = JsonValue::Kind::kNumber;
    v.text = std::string(s_.substr(start, pos_ - start));
    char* end = nullptr;
    v.number = std::strtod(v.text.c_str(), &end);
    if (end == nullptr || *end != '\0') return Error("bad number");
    return v;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

// Proto JSON writes int64 as strings and doubles as numbers; accept either for both.
absl::StatusOr<double> AsNumber(const JsonValue& v, std::string_view field) {
  if (v.kind == JsonValue::Kind::kNumber) return v.number;
  if (v.kind == JsonValue::Kind::kString) {
    char* end = nullptr;
    double d = std::strtod(v.text.c_str(), &end);
    if (end != nullptr && *end == '\0' && !v.text.empty()) return d;
    if (v.text == "NaN") return std::nan("");
    if (v.text == "Infinity") return INFINITY;
    if (v.text == "-Infinity") return -INFINITY;
  }
  return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " is not a number"));
}
absl::StatusOr<int64_t> AsInt(const JsonValue& v, std::string_view field) {
  auto d = AsNumber(v, field);
  if (!d.ok()) return d.status();
  if (!(std::fabs(*d) < 9.2e18)) return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " out of range"));
  return static_cast<int64_t>(*d);
}
absl::StatusOr<std::vector<int64_t>> AsIntList(const JsonValue* v, std::string_view field) {
  std::vector<int64_t> out;
  if (v == nullptr) return out;
  if (v->kind != JsonValue::Kind::kArray)
    return absl::InvalidArgumentError(absl::StrCat("backend_config: ", std::string(field), " is not a list"));
  for (const JsonValue& e : v->array) {
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
absl::StatusOr<JsonValue> InnerConfig(std::string_view json, std::string_view key) {
  auto doc = ParseJson(json);
  if (!doc.ok()) return absl::InvalidArgumentError(absl::StrCat("backend_config: ", doc.status().message()));
  if (doc->kind != JsonValue::Kind::kObject) return absl::InvalidArgumentError("backend_config is not a JSON object");
  if (const JsonValue* inner = doc->Find(key)) {
    if (inner->kind != JsonValue::Kind::kObject)
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

absl::StatusOr<JsonValue> ParseJson(std::string_view text) { return JsonReader(text).ReadDocument(); }

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

absl::StatusOr<GemmBackendConfig> ParseGemmBackendConfig(std::string_view json) {
  GemmBackendConfig c;
  if (json.empty()) return c;
  auto inner = InnerConfig(json, "gemm_backend_config");
  if (!inner.ok()) return inner.status();
  // Proto defaults for absent fields (alpha_real's default is 0 in the proto).
  c.alpha_real = 0;
  c.operand_precision.clear();
  auto num = [&](std::string_view key, double* out) -> absl::Status {
    if (const JsonValue* v = inner->Find(key)) {
      auto d = AsNumber(*v, key);
      if (!d.ok()) return d.status();
      *out = *d;
    }
    return absl::OkStatus();
  };
  auto integer = [&](std::string_view key, int64_t* out) -> absl::Status {
    if (const JsonValue* v = inner->Find(key)) {
      auto i = AsInt(*v, key);
      if (!i.ok()) return i.status();
      *out = *i;
    }
    return absl::OkStatus();
  };
  auto flag = [&](std::string_view key, bool* out) {
    if (const JsonValue* v = inner->Find(key)) *out = v->kind == JsonValue::Kind::kBool && v->boolean;
  };
  for (auto s : {num("alpha_real", &c.alpha_real), num("alpha_imag", &c.alpha_imag), num("beta", &c.beta),
                 integer("lhs_stride", &c.lhs_stride), integer("rhs_stride", &c.rhs_stride),
                 integer("scale_mode", &c.scale_mode)})
    if (!s.ok()) return s;
  flag("grad_x", &c.grad_x);
  flag("grad_y", &c.grad_y);
  flag("damax_output", &c.damax_output);
  if (const JsonValue* v = inner->Find("selected_algorithm")) {
    auto i = AsInt(*v, "selected_algorithm");
    if (!i.ok()) return i.status();
    c.selected_algorithm = *i;
  }
  if (const JsonValue* v = inner->Find("autotune_workspace_size")) {
    auto i = AsInt(*v, "autotune_workspace_size");
    if (!i.ok()) return i.status();
    c.autotune_workspace_size = *i;
  }
  if (const JsonValue* v = inner->Find("epilogue")) {
    auto e = ParseGemmEpilogue(v->text);
    if (v->kind != JsonValue::Kind::kString || !e)
      return absl::InvalidArgumentError(absl::StrCat("backend_config: unknown epilogue \"", v->text, "\""));
    c.epilogue = *e;
  }
  if (const JsonValue* d = inner->Find("dot_dimension_numbers")) {
    DotDimensionNumbers& dn = c.dot_dimension_numbers;
    struct Field { const char* key; std::vector<int64_t>* out; };
    for (Field f : {Field{"lhs_batch_dimensions", &dn.lhs_batch_dimensions},
                    Field{"rhs_batch_dimensions", &dn.rhs_batch_dimensions},
                    Field{"lhs_contracting_dimensions", &dn.lhs_contracting_dimensions},
                    Field{"rhs_contracting_dimensions", &dn.rhs_contracting_dimensions}}) {
      auto list = AsIntList(d->Find(f.key), f.key);
      if (!list.ok()) return list.status();
      *f.out = std::move(*list);
    }
  }
  if (const JsonValue* p = inner->Find("precision_config")) {
    if (const JsonValue* a = p->Find("algorithm")) c.algorithm = a->text;
    if (const JsonValue* ops = p->Find("operand_precision"))
      for (const JsonValue& e : ops->array) c.operand_precision.push_back(e.text);
  }
  return c;
}

absl::StatusOr<CudnnConvBackendConfig> ParseCudnnConvBackendConfig(std::string_view json) {
  CudnnConvBackendConfig c;
  if (json.empty()) return c;
  auto inner = InnerConfig(json, "cudnn_conv_backend_config");
  if (!inner.ok()) return inner.status();
  c.conv_result_scale = 0;  // the proto default; XLA always writes it
  for (auto [key, out] : {std::pair<const char*, double*>{"conv_result_scale", &c.conv_result_scale},
                          {"side_input_scale", &c.side_input_scale},
                          {"leakyrelu_alpha", &c.leakyrelu_alpha}}) {
    if (const JsonValue* v = inner->Find(key)) {
      auto d = AsNumber(*v, key);
      if (!d.ok()) return d.status();
      *out = *d;
    }
  }
  if (const JsonValue* v = inner->Find("activation_mode")) {
    auto a = ParseConvActivation(v->text);
    if (!a) return absl::InvalidArgumentError(absl::StrCat("backend_config: unknown activation_mode \"", v->text, "\""));
    c.activation_mode = *a;
  }
  // "algorithm" (written by autotuning) does not change the result and is not read.
  return c;
}

}  // namespace hloc
