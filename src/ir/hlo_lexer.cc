#include "ir/hlo_lexer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

bool IsAlpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsIdentifierChar(int c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_'; }

constexpr uint64_t kDoubleQuietNan = uint64_t{1} << 51;
constexpr uint64_t kDoublePayloadMask = (uint64_t{1} << 52) - 1;

double NanWithSignAndPayload(bool negative, uint64_t payload) {
  uint64_t bits = (negative ? uint64_t{1} << 63 : 0) | (uint64_t{0x7ff} << 52) | payload;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

}  // namespace

std::string_view TokKindDescription(TokKind kind) {
  switch (kind) {
    case TokKind::kEof: return "end of file";
    case TokKind::kError: return "an invalid token";
    case TokKind::kEqual: return "'='";
    case TokKind::kComma: return "','";
    case TokKind::kColon: return "':'";
    case TokKind::kAsterisk: return "'*'";
    case TokKind::kQuestionMark: return "'?'";
    case TokKind::kOctothorp: return "'#'";
    case TokKind::kPlus: return "'+'";
    case TokKind::kTilde: return "'~'";
    case TokKind::kLsquare: return "'['";
    case TokKind::kRsquare: return "']'";
    case TokKind::kLbrace: return "'{'";
    case TokKind::kRbrace: return "'}'";
    case TokKind::kLparen: return "'('";
    case TokKind::kRparen: return "')'";
    case TokKind::kArrow: return "'->'";
    case TokKind::kLeq: return "'<='";
    case TokKind::kDots: return "'...'";
    case TokKind::kNegInf: return "'-inf'";
    case TokKind::kPrimitiveType: return "a primitive type";
    case TokKind::kName: return "a name";
    case TokKind::kAttributeName: return "an attribute name";
    case TokKind::kDimLabels: return "a dim labels pattern";
    case TokKind::kDxD: return "a NxM pattern";
    case TokKind::kPad: return "a padding pattern";
    case TokKind::kIdent: return "an identifier";
    case TokKind::kString: return "a string";
    case TokKind::kInt: return "an integer";
    case TokKind::kDecimal: return "a number";
    default: return "a keyword";
  }
}

TokKind HloLexer::Lex() {
  prev_end_ = tok_.end;
  tok_.str.clear();
  tok_.error.clear();
  tok_.kind = LexToken();
  tok_.end = pos_;
  return tok_.kind;
}

TokKind HloLexer::LookAhead() {
  if (tok_.kind == TokKind::kEof || tok_.kind == TokKind::kError) return tok_.kind;
  State saved = Save();
  TokKind next = Lex();
  Restore(std::move(saved));
  return next;
}

TokKind HloLexer::Fail(std::string msg) {
  tok_.error = std::move(msg);
  return TokKind::kError;
}

TokKind HloLexer::LexToken() {
  while (true) {
    tok_.start = pos_;
    int c = Peek();
    if (c < 0) return TokKind::kEof;
    ++pos_;
    switch (c) {
      case ' ': case '\t': case '\n': case '\r':
        continue;
      case '\0':
        --pos_;
        return Fail("unexpected NUL character");
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8':
      case '9': case '-': case '?': {
        if (c == '-' && Peek() == '>') {
          ++pos_;
          return TokKind::kArrow;
        }
        TokKind k = LexNumberOrPattern();
        if (k == TokKind::kError && c == '?' && tok_.error.empty()) {
          pos_ = tok_.start + 1;
          return TokKind::kQuestionMark;
        }
        return k;
      }
      case '=': return TokKind::kEqual;
      case '<':
        if (Peek() == '=') {
          ++pos_;
          return TokKind::kLeq;
        }
        return Fail("unexpected character '<' (expected '<=')");
      case ',': return TokKind::kComma;
      case '%': return LexPercent();
      case ':': return TokKind::kColon;
      case '*': return TokKind::kAsterisk;
      case '#': return TokKind::kOctothorp;
      case '+': return TokKind::kPlus;
      case '~': return TokKind::kTilde;
      case '[': return TokKind::kLsquare;
      case ']': return TokKind::kRsquare;
      case '{': return TokKind::kLbrace;
      case '}': return TokKind::kRbrace;
      case '(': return TokKind::kLparen;
      case ')': return TokKind::kRparen;
      case '/':
        if (Peek() == '*') {
          ++pos_;
          // Unterminated: report at the comment's start, as XLA does.
          size_t close = buf_.find("*/", pos_);
          if (close == std::string_view::npos) {
            pos_ = tok_.start;
            return Fail("unterminated /* comment");
          }
          pos_ = close + 2;
          continue;
        }
        if (Peek() == '/') {
          while (Peek() >= 0 && Peek() != '\n' && Peek() != '\r') ++pos_;
          continue;
        }
        return Fail("unexpected character '/' (comments start with // or /*)");
      case '.':
        if (Peek() == '.' && Peek(1) == '.') {
          pos_ += 2;
          return TokKind::kDots;
        }
        return Fail("unexpected character '.'");
      case '"': case '\'':
        return LexString(static_cast<char>(c));
      default:
        if (IsAlpha(c) || c == '_') return LexIdentifier();
        --pos_;
        if (c >= 0x20 && c < 0x7f)
          return Fail(absl::StrCat("unexpected character '", std::string(1, static_cast<char>(c)), "'"));
        return Fail(absl::StrCat("unexpected byte 0x", absl::Hex(c, absl::kZeroPad2)));
    }
  }
}

TokKind HloLexer::LexIdentifier() {
  while (IsIdentifierChar(Peek())) ++pos_;
  std::string_view ident = buf_.substr(tok_.start, pos_ - tok_.start);
  if (Peek() == ':') {
    tok_.str.assign(ident);
    ++pos_;
    return TokKind::kName;
  }
  if (Peek() == '=') {
    tok_.str.assign(ident);
    ++pos_;
    return TokKind::kAttributeName;
  }
  // 'tuple' is spelled with parentheses in shapes, so it stays an identifier.
  if (auto t = ParsePrimitiveType(ident); t && *t != PrimitiveType::TUPLE) {
    tok_.primitive_type = *t;
    tok_.str.assign(ident);
    return TokKind::kPrimitiveType;
  }
  if (ident == "nan") {
    uint64_t payload = kDoubleQuietNan;
    if (Peek() == '(' && !LexNanPayload(&payload)) return TokKind::kError;
    tok_.decimal_val = NanWithSignAndPayload(false, payload);
    return TokKind::kDecimal;
  }
  static constexpr std::pair<std::string_view, TokKind> kKeywords[] = {
      {"true", TokKind::kw_true},
      {"false", TokKind::kw_false},
      {"inf", TokKind::kw_inf},
      {"HloModule", TokKind::kw_HloModule},
      {"ENTRY", TokKind::kw_ENTRY},
      {"ROOT", TokKind::kw_ROOT},
      {"FileNames", TokKind::kw_FileNames},
      {"FunctionNames", TokKind::kw_FunctionNames},
      {"FileLocations", TokKind::kw_FileLocations},
      {"StackFrames", TokKind::kw_StackFrames},
      {"maximal", TokKind::kw_maximal},
      {"replicated", TokKind::kw_replicated},
      {"manual", TokKind::kw_manual},
      {"last_tile_dim_replicate", TokKind::kw_last_tile_dim_replicate},
      {"shard_as", TokKind::kw_shard_as},
      {"shard_like", TokKind::kw_shard_like},
      {"unknown", TokKind::kw_unknown},
      {"unreduced", TokKind::kw_unreduced},
  };
  for (const auto& [word, kind] : kKeywords) {
    if (ident == word) {
      tok_.str.assign(ident);
      return kind;
    }
  }
  // Dim labels may start with a letter ("bf01_oi01->bf01"); identifier characters include
  // '_' and '-', so re-match the pattern from the token's start.
  if (size_t n = MatchDimLabels(tok_.start)) {
    pos_ = tok_.start + n;
    tok_.str.assign(buf_.substr(tok_.start, n));
    return TokKind::kDimLabels;
  }
  tok_.str.assign(ident);
  return TokKind::kIdent;
}

TokKind HloLexer::LexPercent() {
  size_t name_start = pos_;
  if (!(IsAlpha(Peek()) || Peek() == '_')) {
    return Fail("expected a name after '%'");
  }
  while (IsIdentifierChar(Peek())) ++pos_;
  tok_.str.assign(buf_.substr(name_start, pos_ - name_start));
  return TokKind::kName;
}

bool HloLexer::LexNanPayload(uint64_t* payload) {
  // "(0x" hex+ ")"
  size_t p = pos_;
  if (Peek() != '(' || Peek(1) != '0' || (Peek(2) != 'x' && Peek(2) != 'X')) {
    Fail("expected a NaN payload like nan(0x7f)");
    return false;
  }
  p += 3;
  uint64_t v = 0;
  size_t digits = 0;
  while (p < buf_.size() && std::isxdigit(static_cast<unsigned char>(buf_[p]))) {
    if (digits >= 16) {
      Fail("NaN payload out of range");
      return false;
    }
    char ch = buf_[p];
    int d = IsDigit(ch) ? ch - '0' : (std::tolower(static_cast<unsigned char>(ch)) - 'a' + 10);
    v = v * 16 + d;
    ++digits;
    ++p;
  }
  if (digits == 0 || p >= buf_.size() || buf_[p] != ')') {
    Fail("expected a NaN payload like nan(0x7f)");
    return false;
  }
  if (v == 0 || v > kDoublePayloadMask) {
    Fail("NaN payload out of range (1 to 0xfffffffffffff)");
    return false;
  }
  pos_ = p + 1;
  *payload = v;
  return true;
}

// [-]?((\d+|\d+[.]\d*|\d*[.]\d+)([eE][+-]?\d+))|[-]?(\d+[.]\d*|\d*[.]\d+)
size_t HloLexer::MatchFloat(size_t p) const {
  size_t i = p, n = buf_.size();
  if (i < n && buf_[i] == '-') ++i;
  size_t int_digits = 0, frac_digits = 0;
  while (i < n && IsDigit(buf_[i])) ++i, ++int_digits;
  bool dot = false;
  if (i < n && buf_[i] == '.') {
    dot = true;
    ++i;
    while (i < n && IsDigit(buf_[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return 0;
  if (i < n && (buf_[i] == 'e' || buf_[i] == 'E')) {
    size_t j = i + 1;
    if (j < n && (buf_[j] == '+' || buf_[j] == '-')) ++j;
    size_t exp_digits = 0;
    while (j < n && IsDigit(buf_[j])) ++j, ++exp_digits;
    if (exp_digits > 0) return j - p;
  }
  return dot ? i - p : 0;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t HloLexer::MatchDimLabels(size_t p) const {
  auto run = [&](size_t i, std::string_view letters) {
    size_t j = i;
    while (j < buf_.size() && (IsDigit(buf_[j]) || buf_[j] == '?' ||
                               letters.find(buf_[j]) != std::string_view::npos))
      ++j;
    return j - i;
  };
  size_t i = p;
  size_t a = run(i, "bf");
  if (a < 2) return 0;
  i += a;
  if (i >= buf_.size() || buf_[i] != '_') return 0;
  ++i;
  size_t b = run(i, "io");
  if (b < 2) return 0;
  i += b;
  if (i + 1 >= buf_.size() || buf_[i] != '-' || buf_[i + 1] != '>') return 0;
  i += 2;
  size_t c = run(i, "bf");
  if (c < 2) return 0;
  return i + c - p;
}

// [0-9]+(x[0-9]+)+
size_t HloLexer::MatchDxD(size_t p) const {
  size_t i = p, n = buf_.size();
  size_t d = 0;
  while (i < n && IsDigit(buf_[i])) ++i, ++d;
  if (d == 0) return 0;
  int groups = 0;
  while (i + 1 < n && buf_[i] == 'x' && IsDigit(buf_[i + 1])) {
    ++i;
    while (i < n && IsDigit(buf_[i])) ++i;
    ++groups;
  }
  return groups > 0 ? i - p : 0;
}

// [-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?(x[-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?)*
size_t HloLexer::MatchPad(size_t p) const {
  size_t n = buf_.size();
  auto number = [&](size_t i, bool allow_minus) -> size_t {  // end of number at i, or 0
    if (allow_minus && i < n && buf_[i] == '-') ++i;
    size_t d = 0;
    while (i < n && IsDigit(buf_[i])) ++i, ++d;
    return d ? i : 0;
  };
  auto group = [&](size_t i) -> size_t {  // low_high(_interior)? ; end or 0
    size_t j = number(i, true);
    if (!j || j >= n || buf_[j] != '_') return 0;
    j = number(j + 1, true);
    if (!j) return 0;
    if (j < n && buf_[j] == '_') {
      if (size_t k = number(j + 1, false)) j = k;
    }
    return j;
  };
  size_t end = group(p);
  if (!end) return 0;
  while (end < n && buf_[end] == 'x') {
    size_t next = group(end + 1);
    if (!next) break;
    end = next;
  }
  return end - p;
}

TokKind HloLexer::LexNumberOrPattern() {
  size_t start = tok_.start;
  if (size_t n = MatchFloat(start)) {
    pos_ = start + n;
    std::string text(buf_.substr(start, n));
    tok_.decimal_val = std::strtod(text.c_str(), nullptr);  // +-HUGE_VAL on overflow
    return TokKind::kDecimal;
  }
  if (size_t n = MatchDimLabels(start)) {
    pos_ = start + n;
    tok_.str.assign(buf_.substr(start, n));
    return TokKind::kDimLabels;
  }
  if (size_t n = MatchDxD(start)) {
    pos_ = start + n;
    tok_.str.assign(buf_.substr(start, n));
    return TokKind::kDxD;
  }
  if (size_t n = MatchPad(start)) {
    pos_ = start + n;
    tok_.str.assign(buf_.substr(start, n));
    return TokKind::kPad;
  }
  // Integer: negative values must fit int64; non-negative ones fit uint64 and are kept as
  // their bit pattern (u64 constants above INT64_MAX).
  {
    size_t i = start, n = buf_.size();
    bool neg = i < n && buf_[i] == '-';
    if (neg) ++i;
    size_t digits_start = i;
    uint64_t mag = 0;
    bool overflow = false;
    while (i < n && IsDigit(buf_[i])) {
      uint64_t d = buf_[i] - '0';
      if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
      else mag = mag * 10 + d;
      ++i;
    }
    if (i > digits_start) {
      pos_ = i;
      if (neg && mag > uint64_t{1} << 63) overflow = true;
      if (overflow) return Fail("integer literal out of range");
      tok_.int_val = neg ? static_cast<int64_t>(0 - mag) : static_cast<int64_t>(mag);
      return TokKind::kInt;
    }
  }
  if (buf_.substr(start, 4) == "-inf" && !IsIdentifierChar(start + 4 < buf_.size() ? buf_[start + 4] : ' ')) {
    pos_ = start + 4;
    return TokKind::kNegInf;
  }
  if (buf_.substr(start, 4) == "-nan") {
    pos_ = start + 4;
    uint64_t payload = kDoubleQuietNan;
    if (Peek() == '(' && !LexNanPayload(&payload)) return TokKind::kError;
    tok_.decimal_val = NanWithSignAndPayload(true, payload);
    return TokKind::kDecimal;
  }
  // Leave the message empty for '?', which the caller turns into kQuestionMark.
  if (buf_[start] == '-') return Fail("unexpected character '-'");
  return TokKind::kError;
}

TokKind HloLexer::LexString(char quote) {
  size_t i = pos_, n = buf_.size();
  while (i < n && buf_[i] != quote) {
    if (buf_[i] == '\\') ++i;
    ++i;
  }
  if (i >= n) {
    pos_ = tok_.start;
    return Fail("unterminated string");
  }
  std::string_view raw = buf_.substr(pos_, i - pos_);
  std::string error;
  if (!absl::CUnescape(absl::string_view(raw.data(), raw.size()), &tok_.str, &error)) {
    pos_ = tok_.start;
    return Fail(absl::StrCat("invalid escape in string: ", error));
  }
  pos_ = i + 1;
  return TokKind::kString;
}

TokKind HloLexer::LexJsonDict() {
  if (tok_.kind != TokKind::kLbrace) return TokKind::kError;
  size_t i = tok_.start, n = buf_.size();
  int64_t depth = 0;
  do {
    char c = buf_[i];
    if (c == '"') {
      ++i;
      while (i < n && buf_[i] != '"') {
        if (buf_[i] == '\\') ++i;
        ++i;
      }
      if (i >= n) break;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      --depth;
    }
    ++i;
  } while (depth > 0 && i < n);
  if (depth != 0) {
    pos_ = tok_.start;
    tok_.kind = Fail("unterminated JSON dictionary");
    tok_.end = tok_.start;
    return tok_.kind;
  }
  pos_ = i;
  tok_.kind = TokKind::kString;
  tok_.str.assign(buf_.substr(tok_.start, i - tok_.start));
  tok_.end = i;
  return tok_.kind;
}

HloLexer::LineCol HloLexer::GetLineCol(size_t offset) const {
  if (offset > buf_.size()) offset = buf_.size();
  if (line_starts_.empty()) {
    // A line ends at \n, \r\n or a lone \r.
    line_starts_.push_back(0);
    for (size_t i = 0; i < buf_.size(); ++i) {
      const char c = buf_[i];
      if (c == '\n' || (c == '\r' && (i + 1 >= buf_.size() || buf_[i + 1] != '\n'))) line_starts_.push_back(i + 1);
    }
  }
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
  LineCol lc;
  lc.line = static_cast<int64_t>(it - line_starts_.begin()) + 1;
  lc.column = static_cast<int64_t>(offset - *it) + 1;
  return lc;
}

bool LexesAsJsonDict(std::string_view text) {
  HloLexer lexer(text);
  return lexer.Lex() == TokKind::kLbrace && lexer.LexJsonDict() == TokKind::kString &&
         lexer.Lex() == TokKind::kEof;
}

}  // namespace hloc
