// Lexer for HLO text, token for token as XLA's hlo_lexer: names (%foo, foo:), attribute
// names (foo=), primitive types, numbers, the window/padding/dim-label patterns (2x2, 0_1x2_3,
// b01f_01io->b01f), strings and keywords. Comments /* */ and // are skipped; \n, \r\n and \r
// all end a line. A bad character, an unterminated comment or string, or an integer that
// does not fit 64 bits gives a kError token whose error() says what is wrong.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/primitive_type.h"

namespace hloc {

enum class TokKind {
  kEof,
  kError,
  // Punctuation.
  kEqual,         // =
  kComma,         // ,
  kColon,         // :
  kAsterisk,      // *
  kQuestionMark,  // ?
  kOctothorp,     // #
  kPlus,          // +
  kTilde,         // ~
  kLsquare,
  kRsquare,  // [ ]
  kLbrace,
  kRbrace,  // { }
  kLparen,
  kRparen,  // ( )
  kArrow,   // ->
  kLeq,     // <=
  kDots,    // ...
  // Keywords.
  kw_HloModule,
  kw_ENTRY,
  kw_ROOT,
  kw_true,
  kw_false,
  kw_inf,
  kw_FileNames,
  kw_FunctionNames,
  kw_FileLocations,
  kw_StackFrames,
  kw_maximal,
  kw_replicated,
  kw_manual,
  kw_last_tile_dim_replicate,
  kw_shard_as,
  kw_shard_like,
  kw_unknown,
  kw_unreduced,
  // Typed tokens.
  kNegInf,         // -inf
  kPrimitiveType,  // f32, s32, pred, token, ...
  kName,           // %foo or foo: (the ':' is consumed)
  kAttributeName,  // foo= (the '=' is consumed)
  kDimLabels,      // b01f_01io->b01f
  kDxD,            // 1x2x3
  kPad,            // 0_1x2_3_1
  kIdent,          // other identifiers: opcodes, enum values, bare names
  kString,         // "..." or '...', unescaped; also a JSON dict from LexJsonDict
  kInt,            // [-]?[0-9]+, u64 values above INT64_MAX kept as their bit pattern
  kDecimal,        // floats, nan, nan(0x..), -nan
};

// A readable name for messages: "'{'", "an integer", "end of file", ...
std::string_view TokKindDescription(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  size_t start = 0;  // byte offsets of the token's text in the buffer
  size_t end = 0;
  std::string str;  // name / ident / attribute name / pattern text / unescaped string
  int64_t int_val = 0;
  double decimal_val = 0;
  PrimitiveType primitive_type = PrimitiveType::F32;
  std::string error;  // kError only
};

class HloLexer {
 public:
  explicit HloLexer(std::string_view buf) : buf_(buf) {}

  // Advances to the next token and returns its kind.
  TokKind Lex();
  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  // The kind of the token after the current one, without consuming anything.
  TokKind LookAhead();

  // The current token must be '{': re-lexes from it as a JSON-like dictionary (balanced
  // braces, "strings" skipped) and makes the whole text, braces included, a kString token.
  TokKind LexJsonDict();

  // End offset of the token consumed before the current one (for verbatim text spans).
  size_t prev_end() const { return prev_end_; }
  std::string_view buffer() const { return buf_; }
  std::string_view Slice(size_t begin, size_t end) const { return buf_.substr(begin, end - begin); }

  struct LineCol {
    int64_t line = 1, column = 1;  // 1-based; column counts bytes
  };
  // O(log lines) after a first O(n) call: the parser records a location for every instruction.
  LineCol GetLineCol(size_t offset) const;

  // Whole-lexer snapshot, for bounded look-ahead.
  struct State {
    size_t pos, prev_end;
    Token tok;
  };
  State Save() const { return {pos_, prev_end_, tok_}; }
  void Restore(State s) {
    pos_ = s.pos;
    prev_end_ = s.prev_end;
    tok_ = std::move(s.tok);
  }

 private:
  TokKind LexToken();
  TokKind LexIdentifier();
  TokKind LexPercent();
  TokKind LexNumberOrPattern();
  TokKind LexString(char quote);
  TokKind Fail(std::string msg);
  // Pattern matchers: length of the match at offset p, or 0.
  size_t MatchFloat(size_t p) const;
  size_t MatchDimLabels(size_t p) const;
  size_t MatchDxD(size_t p) const;
  size_t MatchPad(size_t p) const;
  // Parses "(0x<hex>)" at pos_ after "nan"; false if malformed or out of range.
  bool LexNanPayload(uint64_t* payload);
  int Peek(size_t off = 0) const {
    return pos_ + off < buf_.size() ? static_cast<unsigned char>(buf_[pos_ + off]) : -1;
  }

  std::string_view buf_;
  mutable std::vector<size_t> line_starts_;  // offsets where lines begin; built on first use
  size_t pos_ = 0;
  size_t prev_end_ = 0;
  Token tok_;
};

// True when `text` is exactly one JSON-like dictionary (XLA's LexesAsJsonDict).
bool LexesAsJsonDict(std::string_view text);

}  // namespace hloc
