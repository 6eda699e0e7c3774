// The small JSON reader (see json_lite.h): recursive descent, depth-limited.
#include "runtime/gpu/json_lite.h"

#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace hloc::runtime::gpu {
namespace {

class Parser {
 public:
  explicit Parser(const std::string& s) : s_(s) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    if (absl::Status st = Value(v, 0); !st.ok()) return st;
    Skip();
    if (p_ != s_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat("JSON: ", what, " at byte ", p_));
  }
  void Skip() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\t' || s_[p_] == '\r')) ++p_;
  }
  bool Eat(char c) {
    Skip();
    if (p_ < s_.size() && s_[p_] == c) {
      ++p_;
      return true;
    }
    return false;
  }
  bool Word(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(p_, n, w) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  absl::Status String(std::string& out) {
    if (!Eat('"')) return Error("expected a string");
    while (p_ < s_.size() && s_[p_] != '"') {
      char c = s_[p_++];
      if (c == '\\') {
        if (p_ >= s_.size()) break;
        char e = s_[p_++];
        switch (e) {
          case 'n': out.push_back('\n'); break;
          case 't': out.push_back('\t'); break;
          case 'r': out.push_back('\r'); break;
          case 'b': out.push_back('\b'); break;
          case 'f': out.push_back('\f'); break;
          case 'u': {
            if (p_ + 4 > s_.size()) return Error("short \\u escape");
            unsigned v = std::strtoul(s_.substr(p_, 4).c_str(), nullptr, 16);
            p_ += 4;
            if (v < 0x80) {
              out.push_back(static_cast<char>(v));
            } else if (v < 0x800) {
              out.push_back(static_cast<char>(0xc0 | (v >> 6)));
              out.push_back(static_cast<char>(0x80 | (v & 0x3f)));
            } else {
              out.push_back(static_cast<char>(0xe0 | (v >> 12)));
              out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3f)));
              out.push_back(static_cast<char>(0x80 | (v & 0x3f)));
            }
            break;
          }
          default: out.push_back(e);
        }
      } else {
        out.push_back(c);
      }
    }
    if (p_ >= s_.size()) return Error("unterminated string");
    ++p_;
    return absl::OkStatus();
  }
  absl::Status Value(JsonValue& v, int depth) {
    if (depth > 64) return Error("nested too deeply");
    Skip();
    if (p_ >= s_.size()) return Error("unexpected end");
    const char c = s_[p_];
    if (c == '{') {
      ++p_;
      v.kind = JsonValue::Kind::kObject;
      if (Eat('}')) return absl::OkStatus();
      do {
        std::string key;
        if (absl::Status st = String(key); !st.ok()) return st;
        if (!Eat(':')) return Error("expected ':'");
        JsonValue item;
        if (absl::Status st = Value(item, depth + 1); !st.ok()) return st;
        v.object[key] = std::move(item);
      } while (Eat(','));
      if (!Eat('}')) return Error("expected ',' or '}'");
      return absl::OkStatus();
    }
    if (c == '[') {
      ++p_;
      v.kind = JsonValue::Kind::kArray;
      if (Eat(']')) return absl::OkStatus();
      do {
        v.array.emplace_back();
        if (absl::Status st = Value(v.array.back(), depth + 1); !st.ok()) return st;
      } while (Eat(','));
      if (!Eat(']')) return Error("expected ',' or ']'");
      return absl::OkStatus();
    }
    if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      return String(v.string);
    }
    if (Word("true")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = true;
      return absl::OkStatus();
    }
    if (Word("false")) {
      v.kind = JsonValue::Kind::kBool;
      return absl::OkStatus();
    }
    if (Word("null")) return absl::OkStatus();
    const char* begin = s_.c_str() + p_;
    char* end = nullptr;
    const double d = std::strtod(begin, &end);
    if (end == begin) return Error("expected a value");
    p_ += static_cast<size_t>(end - begin);
    v.kind = JsonValue::Kind::kNumber;
    v.number = d;
    return absl::OkStatus();
  }

  const std::string& s_;
  size_t p_ = 0;
};

absl::StatusOr<const JsonValue*> Member(const JsonValue& o, const std::string& key) {
  const JsonValue* v = o.Find(key);
  if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat("missing key '", key, "'"));
  return v;
}

bool IsInt(const JsonValue& v) {
  return v.kind == JsonValue::Kind::kNumber && std::isfinite(v.number) && v.number == std::floor(v.number) &&
         std::fabs(v.number) < 9.0e15;
}

}  // namespace

const JsonValue* JsonValue::Find(const std::string& key) const {
  if (kind != Kind::kObject) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &it->second;
}

absl::StatusOr<JsonValue> ParseJson(const std::string& text) { return Parser(text).ParseDocument(); }

absl::StatusOr<int64_t> JsonInt(const JsonValue& o, const std::string& key) {
  absl::StatusOr<const JsonValue*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if (!IsInt(**v)) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not an integer"));
  return static_cast<int64_t>((*v)->number);
}

absl::StatusOr<double> JsonNumber(const JsonValue& o, const std::string& key, double fallback) {
  const JsonValue* v = o.Find(key);
  if (v == nullptr) return fallback;
  if (v->kind != JsonValue::Kind::kNumber) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a number"));
  return v->number;
}

absl::StatusOr<std::string> JsonString(const JsonValue& o, const std::string& key) {
  absl::StatusOr<const JsonValue*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if ((*v)->kind != JsonValue::Kind::kString) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a string"));
  return (*v)->string;
}

absl::StatusOr<std::vector<int64_t>> JsonIntList(const JsonValue& o, const std::string& key) {
  absl::StatusOr<const JsonValue*> v = Member(o, key);
  if (!v.ok()) return v.status();
  if ((*v)->kind != JsonValue::Kind::kArray) return absl::InvalidArgumentError(absl::StrCat("'", key, "' is not a list"));
  std::vector<int64_t> out;
  for (const JsonValue& e : (*v)->array) {
    if (!IsInt(e)) return absl::InvalidArgumentError(absl::StrCat("'", key, "' holds a non-integer"));
    out.push_back(static_cast<int64_t>(e.number));
  }
  return out;
}

}  // namespace hloc::runtime::gpu
