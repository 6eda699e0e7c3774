// HLO text parser: entry points, the module header, JAX's stack-frame tables, computations,
// and the final module assembly (entry, name uniquing, aliasing checks). The grammar and the
// messages follow XLA's hlo_parser.cc; see hlo_parser_internal.h for the file layout.
#include "ir/hlo_parser.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/hlo_parser_internal.h"
#include "support/file_io.h"

namespace hloc {
namespace parser_internal {
namespace {

// XLA's NameUniquer: "x", "x.1", "x.2"...; a numeric suffix already present is kept when free.
class NameUniquer {
 public:
  std::string GetUniqueName(std::string_view prefix) {
    std::string root(prefix.empty() ? std::string_view("name") : prefix);
    bool has_suffix = false;
    int64_t suffix = 0;
    size_t sep = root.rfind('.');
    if (sep != std::string::npos && sep > 0 && sep + 1 < root.size()) {
      if (absl::SimpleAtoi(root.substr(sep + 1), &suffix)) {
        has_suffix = true;
        root.resize(sep);
      } else {
        suffix = 0;
      }
    }
    Ids& ids = ids_[root];
    if (!ids.used.insert(suffix).second) {
      while (!ids.used.insert(ids.next).second) ++ids.next;
      suffix = ids.next++;
    }
    if (suffix == 0) return has_suffix ? root + ".0" : root;
    return absl::StrCat(root, ".", suffix);
  }

 private:
  struct Ids {
    int64_t next = 0;
    absl::flat_hash_set<int64_t> used;
  };
  absl::flat_hash_map<std::string, Ids> ids_;
};

}  // namespace

bool CompatibleShapes(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i)
      if (!CompatibleShapes(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    return true;
  }
  return a.dimensions() == b.dimensions();
}

Parser::Parser(std::string_view text, std::string_view filename, const HloParserOptions& options)
    : lex_(text), filename_(filename), options_(options) {}

// ---------------------------------------------------------------------------------------------
// Errors and tokens.

bool Parser::Error(size_t loc, std::string_view msg, bool context) {
  if (error_) return false;
  // A lexer error at this spot explains itself better than "expects X".
  std::string message(msg);
  if (loc == tok().start && kind() == TokKind::kError && !tok().error.empty()) message = tok().error;
  HloLexer::LineCol lc = lex_.GetLineCol(loc);
  std::string text = absl::StrCat(filename_, ":", lc.line, ":", lc.column, ": ", message);
  if (context && !inst_context_.empty() && !inst_context_.back().empty())
    absl::StrAppend(&text, " (in instruction %", inst_context_.back(), ")");
  error_ = absl::InvalidArgumentError(text);
  return false;
}

TextLocation Parser::LocationAt(size_t loc) const {
  HloLexer::LineCol lc = lex_.GetLineCol(loc);
  return TextLocation{static_cast<int32_t>(lc.line), static_cast<int32_t>(lc.column)};
}

absl::Status Parser::status() const {
  if (error_) return *error_;
  return absl::InvalidArgumentError(absl::StrCat(filename_, ": parse error"));
}

std::string Parser::Describe() const {
  switch (kind()) {
    case TokKind::kName: case TokKind::kIdent: case TokKind::kAttributeName:
      return absl::StrCat("'", tok().str, "'");
    default:
      if (tok().end > tok().start) return absl::StrCat("'", std::string(Text(tok().start, tok().end)), "'");
      return std::string(TokKindDescription(kind()));
  }
}

bool Parser::Expect(TokKind k, std::string_view msg) {
  if (kind() != k) return TokenError(msg);
  lex_.Lex();
  return true;
}

bool Parser::EatIf(TokKind k) {
  if (kind() != k) return false;
  lex_.Lex();
  return true;
}

bool Parser::ParseInt64(int64_t* out) {
  if (kind() != TokKind::kInt) return TokenError("expects integer");
  *out = tok().int_val;
  lex_.Lex();
  return true;
}

bool Parser::ParseInt32(int64_t* out) {
  size_t at = loc();
  if (!ParseInt64(out)) return false;
  if (*out != static_cast<int32_t>(*out)) return Error(at, "value out of range for int32_t");
  return true;
}

bool Parser::ParseDouble(double* out) {
  switch (kind()) {
    case TokKind::kDecimal:
      if (std::isinf(tok().decimal_val))
        return TokenError("constant is out of range for double (+/-1.79769e+308) and so is unparsable");
      *out = tok().decimal_val;
      break;
    case TokKind::kInt:
      *out = static_cast<double>(tok().int_val);
      // "-0" (how a negative zero prints) lexes as the integer 0: keep its sign, or a printed
      // -0 would parse back as +0.
      if (tok().int_val == 0 && lex_.Slice(tok().start, tok().end).substr(0, 1) == "-") *out = -0.0;
      break;
    case TokKind::kw_inf: *out = INFINITY; break;
    case TokKind::kNegInf: *out = -INFINITY; break;
    default: return TokenError("expects decimal or integer");
  }
  lex_.Lex();
  return true;
}

bool Parser::ParseBool(bool* out) {
  if (kind() != TokKind::kw_true && kind() != TokKind::kw_false) return TokenError("expects true or false");
  *out = kind() == TokKind::kw_true;
  lex_.Lex();
  return true;
}

bool Parser::ParseString(std::string* out) {
  if (kind() != TokKind::kString) return TokenError("expects string");
  *out = tok().str;
  lex_.Lex();
  return true;
}

bool Parser::ParseName(std::string* out, std::string_view what) {
  if (kind() != TokKind::kName && kind() != TokKind::kIdent) return Err(loc(), "expects ", std::string(what));
  *out = tok().str;
  lex_.Lex();
  return true;
}

bool Parser::ParseIdentIn(std::string_view what, std::string* out) {
  if (kind() != TokKind::kIdent) return Err(loc(), "expects ", std::string(what));
  *out = tok().str;
  lex_.Lex();
  return true;
}

bool Parser::ParseList(TokKind start, TokKind end, TokKind delim, absl::FunctionRef<bool()> item) {
  if (kind() != start) return Err(loc(), "expects a list starting with ", TokKindDescription(start));
  lex_.Lex();
  if (kind() != end) {
    do {
      if (!item()) return false;
    } while (EatIf(delim));
  }
  if (kind() != end) return Err(loc(), "expects a list to end with ", TokKindDescription(end));
  lex_.Lex();
  return true;
}

bool Parser::ParseInt64List(TokKind start, TokKind end, TokKind delim, std::vector<int64_t>* out) {
  return ParseList(start, end, delim, [&] {
    int64_t v = 0;
    if (!ParseInt64(&v)) return false;
    out->push_back(v);
    return true;
  });
}

bool Parser::ParseInt64ListList(TokKind start, TokKind end, TokKind delim,
                                std::vector<std::vector<int64_t>>* out) {
  return ParseList(start, end, delim, [&] {
    out->emplace_back();
    return ParseInt64List(start, end, delim, &out->back());
  });
}

// ---------------------------------------------------------------------------------------------
// Module.

absl::StatusOr<std::unique_ptr<HloModule>> Parser::ParseModuleText() {
  lex_.Lex();
  auto module = std::make_unique<HloModule>("_");
  module->set_source_file(filename_);
  module->config().replica_count = options_.default_replica_count;
  bool ok;
  if (kind() == TokKind::kw_HloModule || kind() == TokKind::kw_ENTRY ||
      lex_.LookAhead() == TokKind::kLbrace) {
    ok = ParseHloModule(module.get(), kind() != TokKind::kw_HloModule);
  } else if (kind() == TokKind::kEof) {
    ok = TokenError("expects 'HloModule', a computation or an instruction, but the text is empty");
  } else {
    ok = ParseSingleInstruction();
  }
  if (ok) ok = FinishModule(module.get());
  if (!ok) return status();
  return module;
}

bool Parser::ParseHloModule(HloModule* module, bool without_header) {
  if (!without_header) {
    lex_.Lex();  // HloModule
    std::string name;
    if (!ParseName(&name, "module name after 'HloModule'")) return false;
    module->set_name(name);
    if (!ParseHeaderAttributes(module)) return false;
  }
  if (!ParseStackFrameIndex(module) || !ParseComputations()) return false;
  if (without_header) {
    HloComputation* entry = entry_ ? entry_ : computations_.back().get();
    module->set_name(absl::StrCat("module_", entry->name()));
  }
  return true;
}

bool Parser::ParseHeaderAttributes(HloModule* module) {
  HloModuleConfig& cfg = module->config();
  AttrList attrs;
  attrs.Add("is_scheduled", false, [&] {
    bool b = false;
    if (!ParseBool(&b)) return false;
    is_scheduled_ = b;
    return true;
  });
  auto positive = [&](int64_t* out, const char* what) {
    size_t at = loc();
    if (!ParseInt64(out)) return false;
    if (*out < 1) return Err(at, what, " must be at least 1, but is ", *out);
    return true;
  };
  attrs.Add("replica_count", false, [&] { return positive(&cfg.replica_count, "replica_count"); });
  attrs.Add("num_partitions", false, [&] { return positive(&cfg.num_partitions, "num_partitions"); });
  attrs.Add("input_output_alias", false, [&] {
    alias_loc_ = loc();
    return ParseInputOutputAlias(&cfg.input_output_alias);
  });
  attrs.Add("buffer_donor", false, [&] {
    donor_loc_ = loc();
    return ParseBufferDonor(&cfg.buffer_donor);
  });
  attrs.Add("alias_passthrough_params", false, [&] { return ParseBool(&cfg.alias_passthrough_params); });
  attrs.Add("entry_computation_layout", false, [&] {
    layout_loc_ = loc();
    bool fallback = !options_.keep_module_auto_layouts;
    ComputationLayout layout;
    if (!Expect(TokKind::kLbrace, "expects '{' at the start of entry_computation_layout") ||
        !Expect(TokKind::kLparen, "expects '(' before the parameter shape list"))
      return false;
    while (kind() != TokKind::kRparen) {
      Shape s;
      if (!ParseShape(&s, fallback)) return false;
      layout.parameter_shapes.push_back(std::move(s));
      if (kind() == TokKind::kRparen) break;
      if (!Expect(TokKind::kComma, "expects ',' between parameter shapes")) return false;
    }
    if (!Expect(TokKind::kRparen, "expects ')' at the end of the parameter shape list") ||
        !Expect(TokKind::kArrow, "expects '->' before the result shape") ||
        !ParseShape(&layout.result_shape, fallback) ||
        !Expect(TokKind::kRbrace, "expects '}' at the end of entry_computation_layout"))
      return false;
    cfg.entry_computation_layout = std::move(layout);
    return true;
  });
  attrs.Add("frontend_attributes", false, [&] { return ParseFrontendAttributes(&cfg.frontend_attributes); });
  attrs.Add("allow_spmd_sharding_propagation_to_parameters", false,
            [&] { return ParseBoolListOrBool(&cfg.allow_spmd_sharding_propagation_to_parameters); });
  attrs.Add("allow_spmd_sharding_propagation_to_output", false,
            [&] { return ParseBoolListOrBool(&cfg.allow_spmd_sharding_propagation_to_output); });
  attrs.Add("spmd_output_sharding", false, [&] {
    HloSharding s;
    if (!ParseSharding(&s)) return false;
    cfg.spmd_output_sharding = std::move(s);
    return true;
  });
  attrs.Add("spmd_parameters_shardings", false, [&] {
    return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
      HloSharding s;
      if (!ParseSharding(&s)) return false;
      cfg.spmd_parameters_shardings.push_back(std::move(s));
      return true;
    });
  });
  // Known to XLA, kept verbatim.
  attrs.Add("origin_recovery_table", false, [&] { return ParseBalanced(); }, /*keep_raw=*/true);
  attrs.Add("cross_program_prefetches", false, [&] { return ParseBalanced(); }, true);
  attrs.Add("use_auto_spmd_partitioning", false, [&] {
    bool b = false;
    return ParseBool(&b);
  }, true);
  return ParseAttributes(attrs, true, loc(), &cfg.raw_attributes);
}

bool Parser::ParseStackFrameIndex(HloModule* module) {
  if (!EatIf(TokKind::kw_FileNames)) return true;
  StackFrameIndex& index = module->stack_frames();
  auto strings = [&](std::vector<std::string>* out) {
    while (EatIf(TokKind::kInt)) {
      out->emplace_back();
      if (!ParseString(&out->back())) return false;
    }
    return true;
  };
  if (!strings(&index.file_names)) return false;
  if (!Expect(TokKind::kw_FunctionNames, "expects 'FunctionNames'") || !strings(&index.function_names))
    return false;
  if (!Expect(TokKind::kw_FileLocations, "expects 'FileLocations'")) return false;
  while (EatIf(TokKind::kInt)) {
    StackFrameIndex::FileLocation fl;
    AttrList attrs;
    attrs.Add("file_name_id", true, [&] { return ParseInt32(&fl.file_name_id); });
    attrs.Add("function_name_id", true, [&] { return ParseInt32(&fl.function_name_id); });
    attrs.Add("line", true, [&] { return ParseInt32(&fl.line); });
    attrs.Add("end_line", true, [&] { return ParseInt32(&fl.end_line); });
    attrs.Add("column", true, [&] { return ParseInt32(&fl.column); });
    attrs.Add("end_column", true, [&] { return ParseInt32(&fl.end_column); });
    if (!ParseSubAttributes(attrs)) return false;
    index.file_locations.push_back(fl);
  }
  if (!Expect(TokKind::kw_StackFrames, "expects 'StackFrames'")) return false;
  while (EatIf(TokKind::kInt)) {
    StackFrameIndex::StackFrame sf;
    AttrList attrs;
    attrs.Add("file_location_id", true, [&] { return ParseInt32(&sf.file_location_id); });
    attrs.Add("parent_frame_id", true, [&] { return ParseInt32(&sf.parent_frame_id); });
    if (!ParseSubAttributes(attrs)) return false;
    index.stack_frames.push_back(sf);
  }
  return true;
}

bool Parser::ParseComputations() {
  if (kind() == TokKind::kEof) return TokenError("expects a computation; the module has none");
  do {
    if (!ParseComputation()) return false;
  } while (kind() != TokKind::kEof);
  return true;
}

// computation ::= ('ENTRY')? name (param_list '->' shape)? instruction_list
//                 (',' 'execution_thread=' string)?
bool Parser::ParseComputation() {
  size_t entry_loc = loc();
  bool is_entry = EatIf(TokKind::kw_ENTRY);
  size_t name_loc = loc();
  std::string name;
  if (!ParseName(&name, "computation name")) return false;
  std::optional<Shape> signature;
  size_t signature_loc = 0;
  if (kind() == TokKind::kLparen) {
    // The parameter names and shapes are informational; the parameter instructions rule.
    auto param = [&] {
      std::string pname;
      Shape pshape;
      if (!ParseName(&pname, "parameter name")) return false;
      EatIf(TokKind::kColon);
      return ParseShape(&pshape);
    };
    if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, param)) return false;
    if (!Expect(TokKind::kArrow, "expects '->' after the parameter list")) return false;
    signature_loc = loc();
    Shape s;
    if (!ParseShape(&s)) return false;
    signature = std::move(s);
  }
  HloComputation* comp = nullptr;
  if (!ParseInstructionList(&comp, name, name_loc)) return false;
  if (signature && !CompatibleShapes(comp->root_instruction()->shape(), *signature)) {
    return Error(signature_loc,
                 absl::StrCat("Shape of computation ", name, ", ", signature->ToString(false),
                              ", is not compatible with that of its root instruction ",
                              comp->root_instruction()->name(), ", ",
                              comp->root_instruction()->shape().ToString(false)));
  }
  AttrList attrs;
  attrs.Add("execution_thread", false, [&] {
    std::string thread;
    if (!ParseString(&thread)) return false;
    comp->set_execution_thread(thread);
    return true;
  });
  if (!ParseAttributes(attrs, true, loc(), nullptr)) return false;
  if (is_entry) {
    if (entry_) return Error(entry_loc, "expects only one ENTRY");
    entry_ = comp;
    entry_loc_ = entry_loc;
  }
  auto [it, inserted] = computation_pool_.insert({name, {comp, name_loc}});
  if (!inserted) {
    HloLexer::LineCol lc = lex_.GetLineCol(it->second.second);
    return Err(name_loc, "computation already exists: ", name, " (previously defined at ",
               lc.line, ":", lc.column, ")");
  }
  return true;
}

bool Parser::ParseInstructionList(HloComputation** out, const std::string& name, size_t name_loc) {
  // On the heap: inline computations nest, and this frame is on that recursive path.
  auto builder = std::make_unique<CompBuilder>();
  CompBuilder& b = *builder;
  b.name = name;
  scopes_.push_back(&b);
  struct PopScope {
    std::vector<CompBuilder*>* s;
    ~PopScope() { s->pop_back(); }
  } pop{&scopes_};
  if (!Expect(TokKind::kLbrace, "expects '{' at the beginning of instruction list")) return false;
  if (kind() == TokKind::kRbrace) return Err(loc(), "computation ", name, " has no instructions");
  std::string root_name;
  size_t root_loc = 0;
  do {
    if (kind() == TokKind::kEof)
      return Err(loc(), "expects '}' at the end of computation ", name, "; the text ends inside it");
    if (!ParseInstruction(b, &root_name, &root_loc)) return false;
  } while (kind() != TokKind::kRbrace);
  lex_.Lex();  // '}'
  HloInstruction* root = root_name.empty() ? b.last_top_level : b.names.at(root_name).first;
  std::unique_ptr<HloComputation> comp = BuildComputation(b, root);
  if (!comp) return false;
  *out = comp.get();
  computations_.push_back(std::move(comp));
  return true;
}

std::unique_ptr<HloComputation> Parser::BuildComputation(CompBuilder& b, HloInstruction* root) {
  // Parameter numbers must be 0..n-1: report the first (in text order) that is out of range.
  int64_t n = static_cast<int64_t>(b.parameters.size());
  const std::pair<const int64_t, std::pair<HloInstruction*, size_t>>* bad = nullptr;
  for (const auto& p : b.parameters)
    if (p.first >= n && (!bad || p.second.second < bad->second.second)) bad = &p;
  if (bad) {
    Error(bad->second.second,
          absl::StrCat("parameter number ", bad->first, " is out of range: computation ", b.name,
                       " has ", n, " parameter", n == 1 ? "" : "s", ", numbered 0 to ", n - 1));
    return nullptr;
  }
  auto comp = std::make_unique<HloComputation>(b.name);
  for (auto& inst : b.instructions) {
    HloInstruction* raw = comp->AddInstruction(std::move(inst));
    auto it = b.gtes_after.find(raw);
    if (it == b.gtes_after.end()) continue;
    for (auto& gte : it->second) comp->AddInstruction(std::move(gte));
  }
  comp->set_root_instruction(root);
  return comp;
}

bool Parser::ParseSingleInstruction() {
  single_instruction_ = true;
  CompBuilder b;
  b.name = "_";
  scopes_.push_back(&b);
  struct PopScope {
    std::vector<CompBuilder*>* s;
    ~PopScope() { s->pop_back(); }
  } pop{&scopes_};
  std::string root_name;
  size_t root_loc = 0;
  if (CanBeShape()) {
    // "f32[2] add(...)": the left-hand side is left out.
    HloInstruction* inst = ParseInstructionRhs(b, "_", loc(), true);
    if (!inst) return false;
    b.last_top_level = inst;
  } else if (!ParseInstruction(b, &root_name, &root_loc)) {
    return false;
  }
  if (kind() != TokKind::kEof) {
    return TokenError(
        "expects the end of the text after a single instruction; did you mean to write an HLO "
        "module and forget the \"HloModule\" header?");
  }
  std::unique_ptr<HloComputation> comp = BuildComputation(b, b.last_top_level);
  if (!comp) return false;
  entry_ = comp.get();
  // XLA adds the entry first and the nested computations after it.
  computations_.insert(computations_.begin(), std::move(comp));
  return true;
}

bool Parser::FinishModule(HloModule* module) {
  if (!entry_) entry_ = computations_.back().get();

  // Each async wrapped computation belongs to exactly one async-start.
  absl::flat_hash_map<const HloComputation*, int> async_callers;
  for (const auto& comp : computations_) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != HloOpcode::kAsyncStart || inst->called_computations().empty()) continue;
      const HloComputation* callee = inst->called_computations()[0];
      if (++async_callers[callee] > 1) {
        auto it = async_start_locs_.find(inst.get());
        return Error(it == async_start_locs_.end() ? 0 : it->second,
                     absl::StrCat("Computation ", callee->name(), " is called by more than one async op."));
      }
    }
  }

  // XLA gives every computation and instruction a module-unique name as it adds them.
  NameUniquer comp_names, inst_names;
  for (auto& comp : computations_) {
    comp->set_name(comp_names.GetUniqueName(comp->name()));
    for (const auto& inst : comp->instructions())
      if (!inst->is_inline_gte()) inst->set_name(inst_names.GetUniqueName(inst->name()));
  }
  for (auto& comp : computations_) {
    for (const auto& inst : comp->instructions())
      if (inst->is_inline_gte())
        inst->set_name(absl::StrCat(inst->operand(0)->name(), "#", inst->attrs().tuple_index));
  }

  HloComputation* entry = entry_;
  for (auto& comp : computations_) {
    bool is_entry = comp.get() == entry;
    module->AddComputation(std::move(comp), is_entry);
  }
  computations_.clear();
  module->set_is_scheduled(is_scheduled_.value_or(false));
  module->set_elided_constants(elided_count_);

  // input_output_alias / buffer_donor must name real parameters and outputs.
  HloModuleConfig& cfg = module->config();
  // The entry computation layout must list one shape per entry parameter (the verifier's other
  // entry layout checks point at the parameter or root that disagrees).
  if (cfg.entry_computation_layout &&
      static_cast<int64_t>(cfg.entry_computation_layout->parameter_shapes.size()) != entry->num_parameters())
    return Err(layout_loc_, "entry_computation_layout: has ", cfg.entry_computation_layout->parameter_shapes.size(),
               " parameter shapes; the entry computation has ", entry->num_parameters(), " parameters");
  const Shape& result = entry->root_instruction()->shape();
  auto param_index_ok = [&](int64_t number, const ShapeIndex& index, size_t at, const char* what) {
    if (number < 0 || number >= entry->num_parameters())
      return Err(at, what, ": parameter ", number, " does not exist; the entry computation has ",
                 entry->num_parameters(), " parameters");
    if (!GetSubshape(entry->parameter_instruction(number)->shape(), index).ok())
      return Err(at, what, ": shape index ", ShapeIndexToString(index),
                 " does not exist in parameter ", number, " of shape ",
                 entry->parameter_instruction(number)->shape().ToString());
    return true;
  };
  absl::flat_hash_set<std::string> outputs;
  for (const InputOutputAlias& a : cfg.input_output_alias) {
    if (!GetSubshape(result, a.output_index).ok())
      return Err(alias_loc_, "input_output_alias: output shape index ",
                 ShapeIndexToString(a.output_index),
                 " does not exist in the entry result shape ", result.ToString());
    if (!outputs.insert(ShapeIndexToString(a.output_index)).second)
      return Err(alias_loc_, "input_output_alias: output shape index ",
                 ShapeIndexToString(a.output_index), " is aliased twice");
    if (!param_index_ok(a.parameter_number, a.parameter_index, alias_loc_, "input_output_alias")) return false;
  }
  for (const BufferDonor& d : cfg.buffer_donor)
    if (!param_index_ok(d.parameter_number, d.parameter_index, donor_loc_, "buffer_donor")) return false;
  return true;
}

}  // namespace parser_internal

// ---------------------------------------------------------------------------------------------
// Public API.

using parser_internal::Parser;

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModule(std::string_view text, std::string_view filename,
                                                          const HloParserOptions& options) {
  Parser parser(text, filename, options);
  return parser.ParseModuleText();
}

absl::StatusOr<std::unique_ptr<HloModule>> ParseHloModuleFile(const std::string& path,
                                                              const HloParserOptions& options) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) return text.status();
  return ParseHloModule(*text, path, options);
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  return Parser(text, "<shape>", {}).ParseShapeOnly();
}
absl::StatusOr<HloSharding> ParseSharding(std::string_view text) {
  return Parser(text, "<sharding>", {}).ParseShardingOnly();
}
absl::StatusOr<FrontendAttributes> ParseFrontendAttributes(std::string_view text) {
  return Parser(text, "<frontend_attributes>", {}).ParseFrontendAttributesOnly();
}
absl::StatusOr<ConvolutionDimensionNumbers> ParseConvolutionDimensionNumbers(std::string_view text) {
  return Parser(text, "<dim_labels>", {}).ParseConvDimsOnly();
}
absl::StatusOr<CollectiveDeviceList> ParseReplicaGroups(std::string_view text) {
  return Parser(text, "<replica_groups>", {}).ParseReplicaGroupsOnly();
}
absl::StatusOr<PaddingConfig> ParsePaddingConfig(std::string_view text) {
  return Parser(text, "<padding>", {}).ParsePaddingConfigOnly();
}
absl::StatusOr<Window> ParseWindow(std::string_view text) {
  return Parser(text, "<window>", {}).ParseWindowOnly();
}
absl::StatusOr<Literal> ParseLiteral(const Shape& shape, std::string_view text) {
  return Parser(text, "<literal>", {}).ParseLiteralOnly(shape);
}

}  // namespace hloc
