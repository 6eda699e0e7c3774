// Attribute lists ("name=value" after an instruction, a header or inside {...}) and the
// parsers for each kind of value: windows, dim labels, slices, padding, metadata, frontend
// attributes, aliasing, precision, enums, and the values hloc keeps verbatim.
#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "ir/hlo_parser_internal.h"

namespace hloc::parser_internal {
namespace {

// "1x2x3" -> {1, 2, 3} (or "0_1" with '_').
bool SplitInts(std::string_view s, char delim, std::vector<int64_t>* out) {
  for (absl::string_view part : absl::StrSplit(absl::string_view(s.data(), s.size()), delim)) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(part, &v)) return false;
    out->push_back(v);
  }
  return true;
}

// Finds `name` in a table of (text, value) pairs.
template <typename T, size_t N>
bool Lookup(const std::pair<std::string_view, T> (&table)[N], std::string_view name, T* out) {
  for (const auto& [text, value] : table) {
    if (text == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Attribute lists.

// attributes ::= (',' attribute)*
bool Parser::ParseAttributes(AttrList& attrs, bool allow_attributes, size_t required_loc, RawAttributes* raw) {
  if (allow_attributes) {
    while (EatIf(TokKind::kComma)) {
      if (!ParseOneAttribute(attrs, raw, /*sub=*/false)) return false;
    }
  }
  for (const AttrSpec& spec : attrs.specs) {
    if (spec.required && !attrs.Seen(spec.name))
      return Err(required_loc, "attribute ", spec.name, " is expected but not seen");
  }
  return true;
}

// sub_attributes ::= '{' (','? attribute)* '}'
bool Parser::ParseSubAttributes(AttrList& attrs, RawAttributes* raw) {
  size_t at = loc();
  if (!Expect(TokKind::kLbrace, "expects '{' to start sub attributes")) return false;
  if (kind() != TokKind::kRbrace) {
    do {
      EatIf(TokKind::kComma);
      if (!ParseOneAttribute(attrs, raw, /*sub=*/true)) return false;
    } while (kind() != TokKind::kRbrace);
  }
  for (const AttrSpec& spec : attrs.specs) {
    if (spec.required && !attrs.Seen(spec.name))
      return Err(at, "sub-attribute ", spec.name, " is expected but not seen");
  }
  return Expect(TokKind::kRbrace, "expects '}' to end sub attributes");
}

bool Parser::ParseOneAttribute(AttrList& attrs, RawAttributes* raw, bool sub) {
  size_t at = loc();
  if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
  std::string name = tok().str;
  lex_.Lex();
  if (!attrs.seen.insert(name).second) return Err(at, "attribute ", name, " already exists");
  auto it = std::find_if(attrs.specs.begin(), attrs.specs.end(), [&](const AttrSpec& s) { return s.name == name; });
  if (it == attrs.specs.end()) return UnexpectedAttribute(attrs, at, name, sub);
  size_t value_begin = loc();
  if (!it->parse()) return Err(at, "error parsing attribute ", name);
  if (it->keep_raw && raw) raw->emplace_back(name, std::string(Text(value_begin, lex_.prev_end())));
  return true;
}

bool Parser::UnexpectedAttribute(const AttrList& attrs, size_t at, const std::string& name, bool sub) {
  std::vector<std::string> names;
  for (const AttrSpec& s : attrs.specs) names.push_back(s.name);
  std::sort(names.begin(), names.end());
  std::string allowed = names.empty() ? "No attributes are allowed here."
                                      : absl::StrCat("Allowed attributes: ", absl::StrJoin(names, ", "));
  return Err(at, "unexpected ", sub ? "sub-attribute" : "attribute", " \"", name, "\". ", allowed);
}

// ---------------------------------------------------------------------------------------------
// Windows, dim labels, slices, padding.

// window ::= '{' (size= | stride= | pad= | lhs_dilate= | rhs_dilate= | rhs_reversal=)* '}'
bool Parser::ParseWindow(Window* window, bool outer_braces) {
  size_t at = loc();
  if (outer_braces && !Expect(TokKind::kLbrace, "expected '{' to start window attribute")) return false;
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, rhs_reversal;
  std::vector<std::pair<int64_t, int64_t>> pad;
  const TokKind end = outer_braces ? TokKind::kRbrace : TokKind::kEof;
  auto dxd = [&](const std::string& name, std::vector<int64_t>* out) {
    size_t vloc = loc();
    if (!out->empty()) return Err(vloc, "sub-attribute '", name, "=' already exists");
    if (kind() == TokKind::kInt) {
      out->push_back(tok().int_val);
    } else if (kind() == TokKind::kDxD) {
      if (!SplitInts(tok().str, 'x', out)) return Err(vloc, "expects sub-attribute '", name, "=ixj...'");
    } else {
      return Err(loc(), "expects an integer or a pattern like 2x2 for window sub-attribute '", name, "='");
    }
    lex_.Lex();
    return true;
  };
  while (kind() != end) {
    size_t attr_loc = loc();
    if (kind() != TokKind::kAttributeName) return TokenError("expects sub-attributes in window");
    std::string name = tok().str;
    lex_.Lex();
    bool ok;
    if (name == "size") ok = dxd(name, &size);
    else if (name == "stride") ok = dxd(name, &stride);
    else if (name == "lhs_dilate") ok = dxd(name, &lhs_dilate);
    else if (name == "rhs_dilate") ok = dxd(name, &rhs_dilate);
    else if (name == "rhs_reversal") ok = dxd(name, &rhs_reversal);
    else if (name == "pad") {
      size_t vloc = loc();
      if (!pad.empty()) return Error(vloc, "sub-attribute 'pad=' already exists");
      if (kind() != TokKind::kPad) return TokenError("expects window pad pattern, e.g., '0_0x3_3'");
      for (absl::string_view dim : absl::StrSplit(tok().str, 'x')) {
        std::vector<int64_t> low_high;
        if (!SplitInts(std::string_view(dim.data(), dim.size()), '_', &low_high) || low_high.size() != 2)
          return Error(vloc, "expects padding_low and padding_high separated by '_'");
        pad.emplace_back(low_high[0], low_high[1]);
      }
      lex_.Lex();
      ok = true;
    } else {
      return Err(attr_loc, "unexpected attribute name: ", name,
                 " (a window has size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)");
    }
    if (!ok) return false;
  }
  auto same = [&](const std::vector<int64_t>& v, const char* name) {
    if (v.empty() || v.size() == size.size()) return true;
    return Err(at, "expects '", name, "=' has the same size as 'size='");
  };
  if (!same(stride, "stride") || !same(lhs_dilate, "lhs_dilate") || !same(rhs_dilate, "rhs_dilate") ||
      !same(rhs_reversal, "rhs_reversal"))
    return false;
  if (!pad.empty() && pad.size() != size.size()) return Error(at, "expects 'pad=' has the same size as 'size='");
  window->dimensions.clear();
  for (size_t i = 0; i < size.size(); ++i) {
    WindowDimension d;
    d.size = size[i];
    if (!pad.empty()) std::tie(d.padding_low, d.padding_high) = pad[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!lhs_dilate.empty()) d.base_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.window_dilation = rhs_dilate[i];
    if (!rhs_reversal.empty()) d.window_reversal = rhs_reversal[i] == 1;
    window->dimensions.push_back(d);
  }
  return !outer_braces || Expect(TokKind::kRbrace, "expected '}' to end window attribute");
}

// dim_labels=b01f_01io->b01f: which dimension of input, kernel and output is batch, feature
// and each spatial dimension; '?' marks a dimension with no role.
bool Parser::ParseConvDims(ConvolutionDimensionNumbers* dnums) {
  if (kind() != TokKind::kDimLabels) return TokenError("expects dim labels pattern, e.g., 'bf0_0io->0bf'");
  const std::string str = tok().str;
  size_t underscore = str.find('_'), arrow = str.find("->");
  std::string_view lhs = std::string_view(str).substr(0, underscore);
  std::string_view rhs = std::string_view(str).substr(underscore + 1, arrow - underscore - 1);
  std::string_view out = std::string_view(str).substr(arrow + 2);

  // Parses one of the three label strings; `a`/`b` are the two non-spatial letters.
  auto labels = [&](std::string_view s, const char* which, char a, char b, int64_t* a_dim, int64_t* b_dim,
                    std::vector<int64_t>* spatial) -> bool {
    absl::flat_hash_set<char> chars;  // '?' may repeat
    for (char ch : s) {
      if (ch != '?' && !chars.insert(ch).second)
        return Err(loc(), "expects unique ", which, " dimension numbers, but sees ", std::string(s));
    }
    int64_t num_spatial = 0;
    for (char ch : s)
      if (ch != a && ch != b && ch != '?') ++num_spatial;
    spatial->assign(num_spatial, -1);
    for (size_t i = 0; i < s.size(); ++i) {
      char ch = s[i];
      if (ch == '?') continue;
      if (ch == a) {
        *a_dim = i;
      } else if (ch == b) {
        *b_dim = i;
      } else if (ch >= '0' && ch < '0' + static_cast<int>(s.size())) {
        if (ch - '0' >= num_spatial)
          return Err(loc(), "spatial dimension ", std::string(1, ch), " is out of range in ", which,
                     " dimension numbers ", std::string(s), ": there are ", num_spatial,
                     " spatial dimensions");
        (*spatial)[ch - '0'] = i;
      } else {
        return Err(loc(), "expects [0-", s.size() - 1, std::string(1, a), std::string(1, b), "?] in ",
                   which, " dimension numbers");
      }
    }
    return true;
  };
  auto has_roles = [&](std::string_view s, const char* which, char a, char b) -> bool {
    if (s.find(a) != std::string_view::npos && s.find(b) != std::string_view::npos) return true;
    return Err(loc(), which, " dimension numbers ", std::string(s), " must contain '", std::string(1, a),
               "' and '", std::string(1, b), "'");
  };
  ConvolutionDimensionNumbers d;
  if (!labels(lhs, "lhs", 'b', 'f', &d.input_batch_dimension, &d.input_feature_dimension,
              &d.input_spatial_dimensions) ||
      !labels(rhs, "rhs", 'i', 'o', &d.kernel_input_feature_dimension, &d.kernel_output_feature_dimension,
              &d.kernel_spatial_dimensions) ||
      !labels(out, "output", 'b', 'f', &d.output_batch_dimension, &d.output_feature_dimension,
              &d.output_spatial_dimensions))
    return false;
  if (d.input_spatial_dimensions.size() != d.output_spatial_dimensions.size() ||
      d.input_spatial_dimensions.size() != d.kernel_spatial_dimensions.size()) {
    return Err(loc(), "input, kernel, and output must have same number of spatial dimensions, but got ",
               d.input_spatial_dimensions.size(), ", ", d.kernel_spatial_dimensions.size(), ", ",
               d.output_spatial_dimensions.size(), ", respectively.");
  }
  if (!has_roles(lhs, "lhs", 'b', 'f') || !has_roles(rhs, "rhs", 'i', 'o') || !has_roles(out, "output", 'b', 'f'))
    return false;
  *dnums = std::move(d);
  lex_.Lex();
  return true;
}

// slice ::= '{' ('[' start ':' limit (':' stride)? ']') (',' ...)* '}'
bool Parser::ParseSliceRanges(std::vector<SliceDimension>* out) {
  if (!Expect(TokKind::kLbrace, "expects '{' to start ranges")) return false;
  if (kind() != TokKind::kRbrace) {
    do {
      size_t at = loc();
      std::vector<int64_t> range;
      if (!ParseInt64List(TokKind::kLsquare, TokKind::kRsquare, TokKind::kColon, &range)) return false;
      if (range.size() != 2 && range.size() != 3)
        return Err(at, "expects [start:limit:step] or [start:limit], but sees ", range.size(), " elements.");
      out->push_back({range[0], range[1], range.size() == 3 ? range[2] : 1});
    } while (EatIf(TokKind::kComma));
  }
  return Expect(TokKind::kRbrace, "expects '}' to end ranges");
}

// padding=0_0_0x3_3_1: low_high(_interior) per dimension.
bool Parser::ParsePaddingConfig(PaddingConfig* out) {
  if (kind() != TokKind::kPad) return TokenError("expects padding config, e.g., '0_0_0x3_3_1'");
  size_t at = loc();
  PaddingConfig config;
  for (absl::string_view dim : absl::StrSplit(tok().str, 'x')) {
    std::vector<int64_t> v;
    if (!SplitInts(std::string_view(dim.data(), dim.size()), '_', &v) || (v.size() != 2 && v.size() != 3))
      return Error(at, "expects padding config pattern like 'low_high_interior' or 'low_high'");
    config.dimensions.push_back({v[0], v[1], v.size() == 3 ? v[2] : 0});
  }
  *out = std::move(config);
  lex_.Lex();
  return true;
}

// ---------------------------------------------------------------------------------------------
// Metadata, frontend attributes, statistics.

bool Parser::ParseMetadata(OpMetadata* out) {
  OpMetadata m;
  AttrList attrs;
  auto str = [this](std::string* s) { return [this, s] { return ParseString(s); }; };
  auto i32 = [this](int64_t* v) { return [this, v] { return ParseInt32(v); }; };
  attrs.Add("op_type", false, str(&m.op_type));
  attrs.Add("op_name", false, str(&m.op_name));
  attrs.Add("source_file", false, str(&m.source_file));
  attrs.Add("source_line", false, i32(&m.source_line));
  attrs.Add("source_end_line", false, i32(&m.source_end_line));
  attrs.Add("source_column", false, i32(&m.source_column));
  attrs.Add("source_end_column", false, i32(&m.source_end_column));
  attrs.Add("profile_type", false, [&] {
    size_t at = loc();
    std::vector<int64_t> types;
    if (!ParseInt64List(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, &types)) return false;
    for (int64_t t : types) {
      if (t < 0 || t > 3) return Err(at, "invalid profile_type ", t, " (expects 0 to 3)");
      m.profile_type.push_back(absl::StrCat(t));
    }
    return true;
  });
  attrs.Add("deduplicated_name", false, str(&m.deduplicated_name));
  attrs.Add("scheduling_name", false, str(&m.scheduling_name));
  attrs.Add("stack_frame_id", false, i32(&m.stack_frame_id));
  attrs.Add("preserve_layout", false, [&] { return ParseBool(&m.preserve_layout); });
  if (!ParseSubAttributes(attrs)) return false;
  *out = std::move(m);
  return true;
}

// metadata ::= single_metadata | '{' single_metadata (',' single_metadata)* '}'
bool Parser::ParseSingleOrListMetadata(std::vector<OpMetadata>* out) {
  if (kind() == TokKind::kLbrace && lex_.LookAhead() == TokKind::kLbrace) {
    return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
      out->emplace_back();
      return ParseMetadata(&out->back());
    });
  }
  out->emplace_back();
  return ParseMetadata(&out->back());
}

// frontend_attributes ::= '{' (name '=' (string | json_dict)) (',' ...)* '}'
bool Parser::ParseFrontendAttributes(FrontendAttributes* out) {
  if (!Expect(TokKind::kLbrace, "expected '{' to start frontend attributes")) return false;
  if (kind() != TokKind::kRbrace) {
    do {
      if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
      std::string name = tok().str;
      lex_.Lex();
      std::string value;
      if (kind() == TokKind::kString) {
        if (!ParseString(&value)) return false;
      } else if (kind() == TokKind::kLbrace) {
        if (!ParseJsonDict(&value)) return false;
      } else {
        return Err(loc(), "expects a string or a {...} dictionary as the value of frontend attribute ", name);
      }
      (*out)[name] = std::move(value);
    } while (EatIf(TokKind::kComma));
  }
  return Expect(TokKind::kRbrace, "expects '}' at the end of frontend attributes");
}

// statistics ::= '{' (visualizing_index=int (',' name=number)*)? '}'
bool Parser::ParseStatistics() {
  if (!Expect(TokKind::kLbrace, "expected '{' to start statistics")) return false;
  if (kind() != TokKind::kRbrace) {
    if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
    lex_.Lex();
    if (kind() != TokKind::kInt) return TokenError("expects integer (the statistic index to visualize)");
    lex_.Lex();
    while (EatIf(TokKind::kComma)) {
      if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
      lex_.Lex();
      if (kind() != TokKind::kInt && kind() != TokKind::kDecimal) return TokenError("expects a number");
      lex_.Lex();
    }
  }
  return Expect(TokKind::kRbrace, "expects '}' at the end of statistics");
}

// ---------------------------------------------------------------------------------------------
// Precision, aliasing, lists.

bool Parser::ParsePrecisionList(std::vector<Precision>* out) {
  static constexpr std::pair<std::string_view, Precision> kTable[] = {
      {"default", Precision::kDefault}, {"high", Precision::kHigh}, {"highest", Precision::kHighest},
      {"packed_nibble", Precision::kPackedNibble}};
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    if (kind() != TokKind::kIdent) return TokenError("expects precision");
    Precision p;
    if (!Lookup(kTable, absl::AsciiStrToLower(tok().str), &p))
      return Err(loc(), "expects precision (DEFAULT, HIGH, HIGHEST, PACKED_NIBBLE) but sees: ", tok().str);
    out->push_back(p);
    lex_.Lex();
    return true;
  });
}

bool Parser::ParseAlgorithm(std::string* out) {
  if (kind() != TokKind::kIdent) return TokenError("expects algorithm");
  const std::string& v = tok().str;
  if (!absl::StartsWith(v, "dot_") && v != "alg_unset" && v != "unset")
    return Err(loc(), "expects algorithm (e.g. dot_bf16_bf16_f32) but sees: ", v);
  *out = v;
  lex_.Lex();
  return true;
}

bool Parser::ParseShapeIndex(ShapeIndex* out) {
  if (!Expect(TokKind::kLbrace, "Expects '{' at the start of ShapeIndex")) return false;
  out->clear();
  while (kind() != TokKind::kRbrace) {
    int64_t v = 0;
    if (!ParseInt64(&v)) return false;
    out->push_back(v);
    if (!EatIf(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "Expects '}' at the end of ShapeIndex");
}

// output_to_operand_aliasing={ {out_index}: (operand, {operand_index}), ... }
bool Parser::ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* out) {
  if (!Expect(TokKind::kLbrace, "Expects '{' at the start of instruction aliasing description")) return false;
  const char* format = "Expected format: <output_shape_index>: (<operand_index>, <operand_shape_index>)";
  while (kind() != TokKind::kRbrace) {
    OutputOperandAlias a;
    if (!ParseShapeIndex(&a.output_index) || !Expect(TokKind::kColon, format) || !Expect(TokKind::kLparen, format) ||
        !ParseInt64(&a.operand_number) || !Expect(TokKind::kComma, format) || !ParseShapeIndex(&a.operand_index) ||
        !Expect(TokKind::kRparen, format))
      return false;
    out->push_back(std::move(a));
    if (!EatIf(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "Expects '}' at the end of instruction aliasing description");
}

// input_output_alias={ {out_index}: (param, {param_index}(, may-alias|must-alias)?), ... }
bool Parser::ParseInputOutputAlias(std::vector<InputOutputAlias>* out) {
  if (!Expect(TokKind::kLbrace, "Expects '{' at the start of aliasing description")) return false;
  const char* format =
      "Expected format: <output_shape_index>: (<input_param>, <input_param_shape_index>) OR <output_shape_index>: "
      "<input_param>";
  while (kind() != TokKind::kRbrace) {
    InputOutputAlias a;
    if (!ParseShapeIndex(&a.output_index) || !Expect(TokKind::kColon, format) || !Expect(TokKind::kLparen, format) ||
        !ParseInt64(&a.parameter_number) || !Expect(TokKind::kComma, format) || !ParseShapeIndex(&a.parameter_index))
      return false;
    if (EatIf(TokKind::kComma)) {
      if (kind() == TokKind::kIdent && tok().str == "must-alias") a.must_alias = true;
      else if (!(kind() == TokKind::kIdent && tok().str == "may-alias"))
        return TokenError("Unexpected aliasing kind; expected may-alias or must-alias");
      lex_.Lex();
    }
    if (!Expect(TokKind::kRparen, format)) return false;
    out->push_back(std::move(a));
    if (!EatIf(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "Expects '}' at the end of aliasing description");
}

// buffer_donor={ (param, {param_index}), ... }
bool Parser::ParseBufferDonor(std::vector<BufferDonor>* out) {
  if (!Expect(TokKind::kLbrace, "Expects '{' at the start of buffer donor description")) return false;
  const char* format = "Expected format: (<input_param>, <input_param_shape_index>)";
  while (kind() != TokKind::kRbrace) {
    BufferDonor d;
    if (!Expect(TokKind::kLparen, format) || !ParseInt64(&d.parameter_number) || !Expect(TokKind::kComma, format) ||
        !ParseShapeIndex(&d.parameter_index) || !Expect(TokKind::kRparen, format))
      return false;
    out->push_back(std::move(d));
    if (!EatIf(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "Expects '}' at the end of buffer donor description");
}

bool Parser::ParseJsonDict(std::string* out) {
  if (kind() != TokKind::kLbrace || lex_.LexJsonDict() != TokKind::kString) return TokenError("expects JSON dict");
  *out = tok().str;
  lex_.Lex();
  return true;
}

bool Parser::ParseStringOrJsonDict(std::string* out) {
  if (kind() == TokKind::kString) return ParseString(out);
  if (kind() == TokKind::kLbrace) return ParseJsonDict(out);
  return TokenError("expects a string or a {...} dictionary");
}

// control-predecessors={%a, %b}: instructions already defined in this computation.
bool Parser::ParseInstructionNames(std::vector<HloInstruction*>* out) {
  if (!Expect(TokKind::kLbrace, "expects '{' at the beginning of instruction name list")) return false;
  do {
    size_t at = loc();
    std::string name;
    if (!ParseName(&name, "instruction name")) return false;
    const auto& names = scopes_.back()->names;
    auto it = names.find(name);
    if (it == names.end()) return Err(at, "instruction '", name, "' is not defined");
    out->push_back(it->second.first);
  } while (EatIf(TokKind::kComma));
  return Expect(TokKind::kRbrace, "expects '}' at the end of instruction name list");
}

bool Parser::ParseParameterReplication(std::vector<bool>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    bool b = false;
    if (!ParseBool(&b)) return false;
    out->push_back(b);
    return true;
  });
}

bool Parser::ParseBoolListOrBool(std::vector<bool>* out) {
  if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
    out->push_back(kind() == TokKind::kw_true);
    lex_.Lex();
    return true;
  }
  if (kind() != TokKind::kLbrace) return TokenError("Expected list of booleans or true/false value");
  return ParseParameterReplication(out);
}

// ---------------------------------------------------------------------------------------------
// Values kept verbatim: checked here, stored by the attribute list.

// result_accuracy={mode=highest} | {tolerance={rtol=0.5, atol=1.0, ulps=2}}
bool Parser::ParseResultAccuracy() {
  if (!Expect(TokKind::kLbrace, "expected '{' to start result_accuracy")) return false;
  size_t at = loc();
  if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
  std::string name = tok().str;
  lex_.Lex();
  if (name == "mode") {
    if (kind() != TokKind::kIdent) return TokenError("expects ResultAccuracy type");
    std::string mode = absl::AsciiStrToLower(tok().str);
    if (mode != "default" && mode != "highest" && mode != "tolerance")
      return Err(loc(), "expects ResultAccuracy type but sees: ", tok().str);
    lex_.Lex();
  } else if (name == "tolerance") {
    if (!Expect(TokKind::kLbrace, "expected '{' to start result accuracy tolerance")) return false;
    if (kind() != TokKind::kRbrace) {
      do {
        size_t tloc = loc();
        if (kind() != TokKind::kAttributeName) return TokenError("expects attribute name");
        std::string t = tok().str;
        lex_.Lex();
        if (t != "ulps" && t != "rtol" && t != "atol")
          return Err(tloc, "invalid attribute name: ", t, " (a tolerance has rtol, atol, ulps)");
        double v = 0;
        if (!ParseDouble(&v)) return false;
      } while (EatIf(TokKind::kComma));
    }
    if (!Expect(TokKind::kRbrace, "expects '}' at the end of result accuracy tolerance")) return false;
  } else {
    return Err(at, "invalid attribute name: ", name, " (result_accuracy has mode or tolerance)");
  }
  return Expect(TokKind::kRbrace, "expected '}' to end result_accuracy");
}

// origin={{"name" {index}}} | {({"a"}, {"b"})} | {[synthetic_call]}
bool Parser::ParseOriginalValue() {
  if (!Expect(TokKind::kLbrace, "Expects '{' to start original value")) return false;
  if (EatIf(TokKind::kLsquare)) {
    if (kind() != TokKind::kIdent || tok().str != "synthetic_call")
      return TokenError("Expects 'synthetic_call' after '[' for a synthetic_call value.");
    lex_.Lex();
    return Expect(TokKind::kRsquare, "Expects ']' to end '[synthetic_call]'") &&
           Expect(TokKind::kRbrace, "Expects '}' to end original value");
  }
  int64_t depth = 0;
  while (kind() != TokKind::kRbrace) {
    switch (kind()) {
      case TokKind::kLparen: ++depth; lex_.Lex(); break;
      case TokKind::kRparen:
        if (--depth < 0) return TokenError("unbalanced ')' in original value");
        lex_.Lex();
        break;
      case TokKind::kComma: lex_.Lex(); break;
      case TokKind::kLbrace: {
        lex_.Lex();
        if (kind() == TokKind::kString) {
          lex_.Lex();
          if (kind() == TokKind::kLbrace) {
            ShapeIndex index;
            if (!ParseShapeIndex(&index)) return false;
          }
        }
        if (!Expect(TokKind::kRbrace, "Expects '}' at end of OriginalArray")) return false;
        break;
      }
      default:
        return TokenError("Expects '[synthetic]' or a tuple tree of original arrays in original_value field.");
    }
  }
  if (depth != 0) return TokenError("unbalanced '(' in original value");
  lex_.Lex();
  return true;
}

// domain={kind="sharding", entry={...}, exit={...}}
bool Parser::ParseDomain() {
  std::string kind_name;
  HloSharding entry, exit;
  size_t kind_loc = 0;
  AttrList attrs;
  attrs.Add("kind", true, [&] {
    kind_loc = loc();
    return ParseString(&kind_name);
  });
  attrs.Add("entry", true, [&] { return ParseSharding(&entry); });
  attrs.Add("exit", true, [&] { return ParseSharding(&exit); });
  if (!ParseSubAttributes(attrs)) return false;
  if (kind_name != "sharding") return Err(kind_loc, "unsupported domain kind: ", kind_name);
  return true;
}

// One balanced group of tokens, e.g. a raw attribute value; iterative, so any depth is safe.
bool Parser::ParseBalanced() {
  std::vector<TokKind> closers;
  auto closer = [](TokKind k) {
    return k == TokKind::kLbrace ? TokKind::kRbrace : k == TokKind::kLsquare ? TokKind::kRsquare : TokKind::kRparen;
  };
  if (kind() != TokKind::kLbrace && kind() != TokKind::kLsquare && kind() != TokKind::kLparen)
    return TokenError("expects '{', '[' or '('");
  do {
    switch (kind()) {
      case TokKind::kLbrace: case TokKind::kLsquare: case TokKind::kLparen:
        closers.push_back(closer(kind()));
        break;
      case TokKind::kRbrace: case TokKind::kRsquare: case TokKind::kRparen:
        if (kind() != closers.back())
          return Err(loc(), "expects ", std::string(TokKindDescription(closers.back())), " to close the group");
        closers.pop_back();
        break;
      case TokKind::kEof: return TokenError("unterminated group: the text ends before it is closed");
      case TokKind::kError: return TokenError("invalid token");
      default: break;
    }
    lex_.Lex();
  } while (!closers.empty());
  return true;
}

// ---------------------------------------------------------------------------------------------
// Enumerations.

#define HLOC_ENUM_PARSER(Func, Type, what, ...)                                        \
  bool Parser::Func(Type* out) {                                                       \
    static constexpr std::pair<std::string_view, Type> kTable[] = {__VA_ARGS__};       \
    if (kind() != TokKind::kIdent) return TokenError("expects " what);                 \
    if (!Lookup(kTable, tok().str, out))                                               \
      return Err(loc(), "expects " what " but sees: ", tok().str);       \
    lex_.Lex();                                                                        \
    return true;                                                                       \
  }

HLOC_ENUM_PARSER(ParseComparisonDirection, ComparisonDirection, "comparison direction",
                 {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
                 {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
                 {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt})
HLOC_ENUM_PARSER(ParseComparisonType, ComparisonType, "comparison type", {"FLOAT", ComparisonType::kFloat},
                 {"TOTALORDER", ComparisonType::kTotalOrder}, {"SIGNED", ComparisonType::kSigned},
                 {"UNSIGNED", ComparisonType::kUnsigned})
HLOC_ENUM_PARSER(ParseFusionKind, FusionKind, "fusion kind", {"kLoop", FusionKind::kLoop},
                 {"kInput", FusionKind::kInput}, {"kOutput", FusionKind::kOutput}, {"kCustom", FusionKind::kCustom})
HLOC_ENUM_PARSER(ParseDistribution, RandomDistribution, "random distribution",
                 {"rng_uniform", RandomDistribution::kUniform}, {"rng_normal", RandomDistribution::kNormal})
HLOC_ENUM_PARSER(ParseRandomAlgorithm, RandomAlgorithm, "random algorithm",
                 {"rng_default", RandomAlgorithm::kDefault}, {"rng_three_fry", RandomAlgorithm::kThreeFry},
                 {"rng_philox", RandomAlgorithm::kPhilox})
HLOC_ENUM_PARSER(ParseFftType, FftType, "fft type", {"FFT", FftType::kFft}, {"IFFT", FftType::kIfft},
                 {"RFFT", FftType::kRfft}, {"IRFFT", FftType::kIrfft})
HLOC_ENUM_PARSER(ParseTriangularTranspose, TriangularTranspose, "transpose_a value",
                 {"NO_TRANSPOSE", TriangularTranspose::kNoTranspose}, {"TRANSPOSE", TriangularTranspose::kTranspose},
                 {"ADJOINT", TriangularTranspose::kAdjoint})
HLOC_ENUM_PARSER(ParseApiVersion, CustomCallApiVersion, "custom-call API version (Unknown API version)",
                 {"API_VERSION_UNSPECIFIED", CustomCallApiVersion::kUnspecified},
                 {"API_VERSION_ORIGINAL", CustomCallApiVersion::kOriginal},
                 {"API_VERSION_STATUS_RETURNING", CustomCallApiVersion::kStatusReturning},
                 {"API_VERSION_STATUS_RETURNING_UNIFIED", CustomCallApiVersion::kStatusReturningUnified},
                 {"API_VERSION_TYPED_FFI", CustomCallApiVersion::kTypedFfi})
HLOC_ENUM_PARSER(ParseCustomCallSchedule, CustomCallSchedule, "custom-call schedule",
                 {"SCHEDULE_NONE", CustomCallSchedule::kNone}, {"SCHEDULE_LATEST", CustomCallSchedule::kLatest},
                 {"SCHEDULE_EARLIEST", CustomCallSchedule::kEarliest})

#undef HLOC_ENUM_PARSER

// ---------------------------------------------------------------------------------------------
// Stand-alone values.

namespace {
template <typename T, typename F>
absl::StatusOr<T> ParseWhole(Parser* p, const char* what, F parse) {
  T value{};
  if (!parse(&value)) return p->status();
  if (p->kind() != TokKind::kEof) {
    p->Err(p->loc(), "extra content after ", what);
    return p->status();
  }
  return value;
}
}  // namespace

absl::StatusOr<FrontendAttributes> Parser::ParseFrontendAttributesOnly() {
  lex_.Lex();
  return ParseWhole<FrontendAttributes>(this, "frontend attributes",
                                        [&](FrontendAttributes* v) { return ParseFrontendAttributes(v); });
}
absl::StatusOr<ConvolutionDimensionNumbers> Parser::ParseConvDimsOnly() {
  lex_.Lex();
  return ParseWhole<ConvolutionDimensionNumbers>(this, "dim labels",
                                                 [&](ConvolutionDimensionNumbers* v) { return ParseConvDims(v); });
}
absl::StatusOr<PaddingConfig> Parser::ParsePaddingConfigOnly() {
  lex_.Lex();
  return ParseWhole<PaddingConfig>(this, "padding config", [&](PaddingConfig* v) { return ParsePaddingConfig(v); });
}
absl::StatusOr<Window> Parser::ParseWindowOnly() {
  lex_.Lex();
  return ParseWhole<Window>(this, "window", [&](Window* v) { return ParseWindow(v, /*outer_braces=*/false); });
}

}  // namespace hloc::parser_internal
