#include "engine/yaml_util.h"

// GCC 12 reports yaml-cpp 0.7's map iterators (a proxy holding a temporary pair) as dangling
// pointers; the pattern is the documented way to iterate and is safe.
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
#pragma GCC diagnostic ignored "-Wdangling-pointer"
#endif

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "engine/builtin_data.h"
#include "yaml-cpp/depthguard.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/parser.h"

namespace hloc::yaml {
namespace {

// yaml-cpp gives plain scalars the non-specific tag "?" and quoted ones "!".
constexpr char kPlainTag[] = "?";
constexpr char kQuotedTag[] = "!";

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// XLA's pass names mix '-' and '_' ("tuple-simplifier", "zero_sized_hlo_elimination"): treat
// them (and case) as the same when looking for what was meant.
std::string Normalized(std::string_view s) {
  std::string out = Lower(s);
  for (char& c : out)
    if (c == '_') c = '-';
  return out;
}

// Counts the documents of a stream (at most two) and keeps where the second one's root starts.
class DocumentCounter : public YAML::EventHandler {
 public:
  int documents = 0;
  YAML::Mark second_root = YAML::Mark::null_mark();

  void OnDocumentStart(const YAML::Mark&) override { ++documents; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Node(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string&) override { Node(mark); }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    Node(mark);
  }
  void OnMapEnd() override {}

 private:
  void Node(const YAML::Mark& mark) {
    if (documents == 2 && second_root.is_null()) second_root = mark;
  }
};

// The one document of `text`. Not YAML::LoadAll: yaml-cpp 0.7's LoadAll never returns on some
// malformed input (",[" : its parser keeps reporting another empty document; yaml-cpp issue
// 1040, fixed upstream in PR 1319), which fuzz_yaml_config found as a hang of `hloc opt
// --pipeline F`. The first document is loaded alone, and a second pass counts documents up to two.
absl::StatusOr<YAML::Node> LoadDocuments(const std::string& text, const std::string& name) {
  Reader reader(name);
  YAML::Node doc;
  DocumentCounter counter;
  try {
    std::istringstream in(text);
    doc = YAML::Load(in);
    std::istringstream again(text);
    YAML::Parser parser(again);
    while (counter.documents < 2 && parser.HandleNextDocument(counter)) {
    }
  } catch (const YAML::DeepRecursion& e) {
    return reader.Error(e.mark, absl::StrCat("YAML nested more than ", e.depth(), " levels deep"));
  } catch (const YAML::Exception& e) {
    return reader.Error(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": cannot read YAML: ", e.what()));
  }
  if (counter.documents > 1) {
    return reader.Error(counter.second_root, "a file holds one YAML document; found a second one (remove the '---')");
  }
  return doc;  // null for an empty file: the caller says what was expected
}

}  // namespace

absl::StatusOr<YAML::Node> LoadFile(const std::string& path) {
  // The profiles and pipelines built into hloc: "<built-in>/configs/h200.yaml".
  if (IsBuiltinPath(path)) {
    std::optional<std::string_view> text = FindBuiltinFile(path);
    if (!text) return absl::NotFoundError(absl::StrCat(path, ": no such built-in file"));
    return LoadString(std::string(*text), path);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  in.seekg(0, std::ios::end);
  std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read file (is it a directory?)"));
  if (size > kMaxFileBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": file too large for a YAML manifest (", size, " bytes)"));
  }
  std::string text(static_cast<size_t>(size), '\0');
  in.read(text.data(), size);
  if (!in) return absl::InvalidArgumentError(absl::StrCat(path, ": cannot read file"));
  return LoadString(text, path);
}

absl::StatusOr<YAML::Node> LoadString(const std::string& text, const std::string& name) {
  // yaml-cpp stops at a NUL byte without saying so; refuse it rather than read half a file.
  if (size_t nul = text.find('\0'); nul != std::string::npos) {
    int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + nul, '\n'));
    return absl::InvalidArgumentError(absl::StrCat(name, ":", line, ": NUL byte in a YAML file"));
  }
  return LoadDocuments(text, name);
}

// --- Reader ---------------------------------------------------------------------------------------

std::string Reader::Where(const YAML::Mark& mark) const {
  if (mark.is_null() || mark.line < 0) return file_;
  return absl::StrCat(file_, ":", mark.line + 1, ":", mark.column + 1);
}

absl::Status Reader::Error(const YAML::Mark& mark, std::string_view message) const {
  return absl::InvalidArgumentError(absl::StrCat(Where(mark), ": ", std::string(message)));
}

absl::StatusOr<std::vector<MapEntry>> Reader::Entries(const YAML::Node& node, std::string_view what) const {
  std::vector<MapEntry> out;
  if (node.IsNull()) return out;  // `options:` with nothing after it: no entries
  if (!node.IsMap()) {
    return Error(node,
                 absl::StrCat("expected a mapping (key: value) for ", std::string(what), ", got ", KindName(node)));
  }
  absl::flat_hash_map<std::string, size_t> index;  // key -> position in `out`
  for (auto it = node.begin(); it != node.end(); ++it) {
    // A copy: yaml-cpp's it->first is a member of a temporary proxy that `->` returns, so a
    // reference to it dangles after this statement (ASan: stack-use-after-scope; fuzz_yaml_config).
    const YAML::Node key = it->first;
    if (!key.IsScalar()) {
      return Error(key, absl::StrCat("keys of ", std::string(what), " must be names, got ", KindName(key)));
    }
    if (auto seen = index.find(key.Scalar()); seen != index.end()) {
      return Error(key, absl::StrCat("duplicate key '", key.Scalar(), "' in ", std::string(what), " (first at line ",
                                     out[seen->second].key_node.Mark().line + 1, ")"));
    }
    index[key.Scalar()] = out.size();
    out.push_back({key.Scalar(), key, it->second});
  }
  return out;
}

absl::Status Reader::CheckKeys(const std::vector<MapEntry>& entries, const std::vector<std::string>& allowed,
                               std::string_view what) const {
  for (const MapEntry& e : entries) {
    if (std::find(allowed.begin(), allowed.end(), e.key) != allowed.end()) continue;
    std::string expected;
    for (const std::string& a : allowed) absl::StrAppend(&expected, expected.empty() ? "" : ", ", a);
    std::string hint = DidYouMean(e.key, allowed);
    if (hint.empty()) hint = absl::StrCat(" (expected one of: ", expected, ")");
    return Error(e.key_node, absl::StrCat("unknown key '", e.key, "' in ", std::string(what), hint));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<YAML::Node>> Reader::Sequence(const YAML::Node& node, std::string_view what) const {
  if (!node.IsSequence()) {
    return Error(node, absl::StrCat("expected a list for ", std::string(what), ", got ", KindName(node)));
  }
  if (node.size() > kMaxListItems) {
    return Error(node, absl::StrCat("too many elements (", node.size(), ") in ", std::string(what)));
  }
  std::vector<YAML::Node> out;
  for (const YAML::Node& n : node) out.push_back(n);
  return out;
}

absl::StatusOr<std::string> Reader::PlainScalar(const YAML::Node& node, std::string_view what,
                                                std::string_view expected) const {
  if (!node.IsScalar()) {
    return Error(
        node, absl::StrCat("expected ", std::string(expected), " for ", std::string(what), ", got ", KindName(node)));
  }
  if (node.Tag() == kQuotedTag) {
    return Error(node, absl::StrCat("expected ", std::string(expected), " for ", std::string(what),
                                    ", got the quoted string \"", node.Scalar(), "\""));
  }
  if (node.Tag() != kPlainTag) {
    return Error(node, absl::StrCat("explicit YAML tags ('", node.Tag(), "') are not supported"));
  }
  return node.Scalar();
}

absl::StatusOr<std::string> Reader::String(const YAML::Node& node, std::string_view what) const {
  if (!node.IsScalar()) {
    return Error(node, absl::StrCat("expected a string for ", std::string(what), ", got ", KindName(node)));
  }
  if (node.Tag() != kPlainTag && node.Tag() != kQuotedTag) {
    return Error(node, absl::StrCat("explicit YAML tags ('", node.Tag(), "') are not supported"));
  }
  return node.Scalar();
}

absl::StatusOr<std::string> Reader::Name(const YAML::Node& node, std::string_view what) const {
  absl::StatusOr<std::string> s = String(node, what);
  if (!s.ok()) return s;
  if (s->empty()) return Error(node, absl::StrCat("empty name for ", std::string(what)));
  return s;
}

absl::StatusOr<bool> Reader::Bool(const YAML::Node& node, std::string_view what) const {
  absl::StatusOr<std::string> text = PlainScalar(node, what, "true or false");
  if (!text.ok()) return text.status();
  bool v = false;
  if (!ParseBool(*text, &v)) {
    return Error(node, absl::StrCat("expected true or false for ", std::string(what), ", got '", *text, "'"));
  }
  return v;
}

absl::StatusOr<int64_t> Reader::Int(const YAML::Node& node, std::string_view what) const {
  absl::StatusOr<std::string> text = PlainScalar(node, what, "an integer");
  if (!text.ok()) return text.status();
  int64_t v = 0;
  if (!ParseInt(*text, &v)) {
    return Error(node, absl::StrCat("expected an integer for ", std::string(what), ", got '", *text, "'"));
  }
  return v;
}

absl::StatusOr<double> Reader::Float(const YAML::Node& node, std::string_view what) const {
  absl::StatusOr<std::string> text = PlainScalar(node, what, "a number");
  if (!text.ok()) return text.status();
  double v = 0;
  if (!ParseFloat(*text, &v)) {
    return Error(node, absl::StrCat("expected a number for ", std::string(what), ", got '", *text, "'"));
  }
  return v;
}

absl::StatusOr<std::vector<std::string>> Reader::StringList(const YAML::Node& node, std::string_view what) const {
  if (!node.IsSequence()) {
    return Error(node, absl::StrCat("expected a list of strings for ", std::string(what), ", got ", KindName(node)));
  }
  if (node.size() > kMaxListItems) {
    return Error(node, absl::StrCat("too many elements (", node.size(), ") in ", std::string(what)));
  }
  std::vector<std::string> out;
  for (const YAML::Node& n : node) {
    absl::StatusOr<std::string> s = String(n, absl::StrCat("an element of ", std::string(what)));
    if (!s.ok()) return s.status();
    out.push_back(*s);
  }
  return out;
}

const MapEntry* Find(const std::vector<MapEntry>& entries, std::string_view key) {
  for (const MapEntry& e : entries)
    if (e.key == key) return &e;
  return nullptr;
}

// --- suggestions ------------------------------------------------------------------------------------

int EditDistance(std::string_view a, std::string_view b) {
  // Long strings are never typos of a name; keep the quadratic table small.
  if (a.size() > 128 || b.size() > 128) return std::numeric_limits<int>::max() / 2;
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  for (size_t i = 0; i <= n; ++i) d[i][0] = static_cast<int>(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    for (size_t j = 1; j <= m; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      // A swap of two neighbours ("dec" for "dce") counts as one edit.
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[n][m];
}

std::string Closest(std::string_view name, const std::vector<std::string>& candidates) {
  const std::string norm = Normalized(name);
  for (const std::string& c : candidates)
    if (Normalized(c) == norm) return c;
  // A unique candidate that starts with the name ("TB" for "TB/s").
  if (norm.size() >= 2) {
    std::string prefixed;
    int count = 0;
    for (const std::string& c : candidates) {
      if (Normalized(c).rfind(norm, 0) == 0) {
        prefixed = c;
        ++count;
      }
    }
    if (count == 1) return prefixed;
  }
  std::string best;
  int best_d = std::numeric_limits<int>::max();
  for (const std::string& c : candidates) {
    int d = EditDistance(norm, Normalized(c));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  const int limit = std::max<int>(1, static_cast<int>(std::min(name.size(), best.size()) + 2) / 4);
  return best_d <= limit ? best : "";
}

std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates) {
  std::string c = Closest(name, candidates);
  return c.empty() ? "" : absl::StrCat(" (did you mean '", c, "'?)");
}

std::string KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return absl::StrCat("'", node.Scalar(), "'");
    case YAML::NodeType::Null: return "nothing";
    default: return "an undefined value";
  }
}

// --- scalar syntax (YAML 1.2 core schema, strict) ------------------------------------------------

bool ParseBool(std::string_view t, bool* out) {
  if (t == "true" || t == "True" || t == "TRUE") {
    *out = true;
    return true;
  }
  if (t == "false" || t == "False" || t == "FALSE") {
    *out = false;
    return true;
  }
  return false;
}

bool ParseInt(std::string_view t, int64_t* out) {
  if (t.empty()) return false;
  bool neg = false;
  std::string_view digits = t;
  if (digits[0] == '+' || digits[0] == '-') {
    neg = digits[0] == '-';
    digits.remove_prefix(1);
  }
  int base = 10;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
    base = digits[1] == 'x' ? 16 : 8;
    digits.remove_prefix(2);
  }
  if (digits.empty()) return false;
  // Accumulate as unsigned with overflow checks: "9223372036854775808" must fail, not wrap.
  uint64_t v = 0;
  const uint64_t limit = neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  for (char c : digits) {
    int d;
    if (c >= '0' && c <= '9')
      d = c - '0';
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = c - 'a' + 10;
    else if (base == 16 && c >= 'A' && c <= 'F')
      d = c - 'A' + 10;
    else
      return false;
    if (d >= base) return false;
    if (v > (limit - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  *out = neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

bool ParseFloat(std::string_view t, double* out) {
  std::string_view s = t;
  bool neg = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == ".inf" || s == ".Inf" || s == ".INF") {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (t == ".nan" || t == ".NaN" || t == ".NAN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  // [0-9]* ( . [0-9]* )? ( [eE] [-+]? [0-9]+ )? with at least one mantissa digit.
  size_t i = 0, mantissa_digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++mantissa_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++mantissa_digits;
  }
  if (mantissa_digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  if (i != s.size()) return false;
  double v = 0;
  if (!absl::SimpleAtod(std::string(t), &v)) return false;
  if (!std::isfinite(v)) return false;  // 1e999: say so rather than read infinity
  *out = v;
  return true;
}

std::string FormatFloat(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v < 0 ? "-.inf" : ".inf";
  for (int precision = 1; precision <= 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    double back = 0;
    if (ParseFloat(s, &back) && back == v) {
      // Keep it visibly a float: "25" -> "25.0".
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
  }
  return absl::StrFormat("%.17g", v);
}

std::string QuoteIfNeeded(std::string_view s) {
  bool plain = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.' || c == '/')) plain = false;
  }
  bool b;
  // Words other YAML readers take for booleans or null stay quoted.
  const std::string lower = Lower(s);
  if (ParseBool(s, &b) || lower == "null" || lower == "yes" || lower == "no" || lower == "on" || lower == "off" ||
      lower == "y" || lower == "n") {
    plain = false;
  }
  if (plain) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

}  // namespace hloc::yaml
