// HLO text printer: modules, computations and instructions in XLA's format (HloModule::Print,
// HloComputation::Print, HloInstruction::PrintWithCanonicalNameMap). Attribute order is
// XLA's: opcode-specific attributes, called computations, sharding, frontend attributes,
// control predecessors, statistics, then origin, metadata and backend_config.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/hlo_lexer.h"
#include "ir/hlo_printer_internal.h"

namespace hloc {

HloPrintOptions HloPrintOptions::ShortParsable() {
  HloPrintOptions o;
  o.print_operand_shape = false;
  o.print_percent = false;
  o.print_large_constants = true;
  o.print_metadata = false;
  o.print_backend_config = false;
  o.print_stack_frames = false;
  o.print_program_shape = false;
  o.print_control_dependencies = false;
  o.operand_index_annotation_interval = 0;
  o.syntax_sugar_async_ops = true;
  return o;
}

HloPrintOptions HloPrintOptions::Long() {
  HloPrintOptions o;
  o.print_operand_shape = true;
  o.print_large_constants = true;
  o.syntax_sugar_async_ops = true;
  return o;
}

namespace printer_internal {

// ---- shapes --------------------------------------------------------------------------

void AppendShape(std::string* out, const Shape& shape, bool print_layout) {
  if (!shape.IsTuple()) {
    *out += shape.ToString(print_layout);
    return;
  }
  // Nested tuples are walked with an explicit stack: shapes can come from user input.
  struct Frame {
    const Shape* s;
    size_t next;
  };
  std::vector<Frame> stack = {{&shape, 0}};
  *out += "(";
  while (!stack.empty()) {
    Frame& top = stack.back();
    const auto& elems = top.s->tuple_shapes();
    if (top.next >= elems.size()) {
      *out += ")";
      stack.pop_back();
      continue;
    }
    size_t i = top.next++;
    if (i > 0) *out += (i % 5 == 0) ? absl::StrCat(", /*index=", i, "*/") : ", ";
    const Shape& e = elems[i];
    if (e.IsTuple()) {
      *out += "(";
      stack.push_back({&e, 0});
    } else {
      *out += e.ToString(print_layout);
    }
  }
}

std::string ShapeText(const Shape& shape, bool print_layout) {
  std::string s;
  AppendShape(&s, shape, print_layout);
  return s;
}

std::string ComputationLayoutText(const std::vector<Shape>& params, const Shape& result) {
  std::string s = "(";
  for (size_t i = 0; i < params.size(); ++i) {
    if (i > 0) s += (i % 5 == 0) ? absl::StrCat(", /*index=", i, "*/") : ", ";
    AppendShape(&s, params[i], /*print_layout=*/true);
  }
  s += ")->";
  AppendShape(&s, result, /*print_layout=*/true);
  return s;
}

}  // namespace printer_internal

namespace {

using namespace printer_internal;  // NOLINT: this file is the printer

// Whether `n` written bare reads back as a name: not a keyword ("maximal", "ROOT", "true"), a
// number ("nan", "inf") or dim labels, which the lexer would take it for.
bool LexesAsBareName(std::string_view n) {
  HloLexer lex(n);
  return lex.Lex() == TokKind::kIdent && lex.Lex() == TokKind::kEof;
}

// XLA's PrintName: without print_ids, names lose their ".N" suffix. Without print_percent a name
// that would not read back bare keeps its '%' (XLA's short form prints `maximal = ...`, which its
// own parser refuses; found by fuzz_hlo_roundtrip).
std::string NameText(const std::string& name, const HloPrintOptions& o) {
  std::string_view n = name;
  if (!o.print_ids) n = n.substr(0, n.find('.'));
  return o.print_percent || !LexesAsBareName(n) ? absl::StrCat("%", std::string(n)) : std::string(n);
}

// ---- async syntax sugar --------------------------------------------------------------

bool IsAsyncOpcode(HloOpcode op) {
  return op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
         op == HloOpcode::kAsyncDone;
}

// XLA's HloComputation::CanExpandIntoSingleInstruction: the root plus parameters only.
bool CanExpandIntoSingleInstruction(const HloComputation& c) {
  if (c.root_instruction() == nullptr) return false;
  for (const auto& inst : c.instructions()) {
    if (inst.get() != c.root_instruction() && inst->opcode() != HloOpcode::kParameter) return false;
  }
  return true;
}

// Whether async ops wrapping `c` print sugared (and `c` itself is then not printed).
bool CanSugar(const HloComputation& c) {
  if (!CanExpandIntoSingleInstruction(c)) return false;
  // "all-reduce-start", "copy-done", ... are opcodes of their own: sugar for an async op
  // wrapping all-reduce or copy would read back as those, so such ops print unsugared.
  std::string base(HloOpcodeString(c.root_instruction()->opcode()));
  for (const char* suffix : {"-start", "-update", "-done"})
    if (StringToHloOpcode(base + suffix)) return false;
  return true;
}

// The computation an async op wraps: the async-start's, found by walking update/done
// operands back to the start (bounded, in case of malformed chains).
const HloComputation* AsyncWrappedComputation(const HloInstruction& inst) {
  const HloInstruction* cur = &inst;
  for (int steps = 0; cur && steps < 1 << 20; ++steps) {
    if (cur->opcode() == HloOpcode::kAsyncStart) {
      return cur->called_computations().empty() ? nullptr : cur->called_computations()[0];
    }
    if (!IsAsyncOpcode(cur->opcode()) || cur->operand_count() == 0) return nullptr;
    cur = cur->operand(0);
  }
  return nullptr;
}

// Whether this async op prints in sugared form ("custom-call-start(...)").
const HloInstruction* SugaredWrappedInstruction(const HloInstruction& inst,
                                                const HloPrintOptions& o) {
  if (!o.syntax_sugar_async_ops || !IsAsyncOpcode(inst.opcode())) return nullptr;
  const HloComputation* c = AsyncWrappedComputation(inst);
  if (c == nullptr || !CanSugar(*c)) return nullptr;
  return c->root_instruction();
}

// ---- operands ------------------------------------------------------------------------

// "%name", or "%tuple#1" for a get-tuple-element written inline at its uses (possibly a
// chain of them: "%t#1#0").
std::string OperandName(const HloInstruction& operand, const HloPrintOptions& o) {
  std::vector<int64_t> indices;
  const HloInstruction* base = &operand;
  // Bounded: tuple nesting is shallow, and a malformed (cyclic) chain must not hang.
  while (base->is_inline_gte() && base->opcode() == HloOpcode::kGetTupleElement &&
         base->operand_count() == 1 && base->operand(0) != nullptr && indices.size() < 4096) {
    indices.push_back(base->attrs().tuple_index);
    base = base->operand(0);
  }
  std::string s = NameText(base->name(), o);
  for (auto it = indices.rbegin(); it != indices.rend(); ++it) absl::StrAppend(&s, "#", *it);
  return s;
}

void AppendOperands(std::string* out, const HloInstruction& inst, const HloPrintOptions& o) {
  const auto& ops = inst.operands();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0) {
      int64_t every = o.operand_index_annotation_interval;
      *out += (every > 0 && i % every == 0) ? absl::StrCat(", /*index=", i, "*/") : ", ";
    }
    if (ops[i] == nullptr) {
      *out += "null ";
      continue;
    }
    if (o.print_operand_shape) {
      AppendShape(out, ops[i]->shape(), /*print_layout=*/true);
      *out += " ";
    }
    *out += OperandName(*ops[i], o);
  }
}

// The text inside "constant(...)".
std::string ConstantText(const HloInstruction& inst, const HloPrintOptions& o) {
  const auto& lit = inst.attrs().literal;
  if (!lit) return "{...}";
  bool small = lit->shape().IsArray() && lit->element_count() <= 10;
  if (!small && !o.print_large_constants) return "{...}";
  return PrintLiteral(*lit);
}

std::string NameList(const std::vector<HloComputation*>& comps, const HloPrintOptions& o) {
  std::vector<std::string> names;
  for (const HloComputation* c : comps) names.push_back(c ? NameText(c->name(), o) : "null");
  return absl::StrJoin(names, ", ");
}

// Called computations, XLA's kNameOnly subcomputation mode.
void AddCalledComputations(AttrList& a, const HloInstruction& inst, const HloPrintOptions& o,
                           bool sugared) {
  using O = HloOpcode;
  const auto& called = inst.called_computations();
  auto name = [&](size_t i) { return i < called.size() && called[i] ? NameText(called[i]->name(), o) : "null"; };
  switch (inst.opcode()) {
    case O::kWhile:
      a.Cat("condition=", name(0));
      a.Cat("body=", name(1));
      return;
    case O::kSelectAndScatter:
      a.Cat("select=", name(0));
      a.Cat("scatter=", name(1));
      return;
    case O::kConditional:
      if (inst.operand_count() > 0 && inst.operand(0) &&
          inst.operand(0)->shape().element_type() == PrimitiveType::PRED && called.size() == 2) {
        a.Cat("true_computation=", name(0));
        a.Cat("false_computation=", name(1));
      } else {
        a.Cat("branch_computations={", NameList(called, o), "}");
      }
      return;
    case O::kCall:
    case O::kMap:
    case O::kReduceWindow:
    case O::kReduce:
    case O::kAllReduce:
    case O::kReduceScatter:
    case O::kAllReduceStart:
    case O::kScatter:
    case O::kSort:
    case O::kScan:
      if (!called.empty()) a.Cat("to_apply=", name(0));
      if (inst.opcode() == O::kCall) AddRawAttribute(a, inst, "is_composite");
      return;
    case O::kCustomCall:
      if (!called.empty()) a.Cat("called_computations={", NameList(called, o), "}");
      return;
    case O::kAsyncStart:
      if (!sugared && !called.empty()) a.Cat("calls=", name(0));
      return;
    case O::kAsyncUpdate:
    case O::kAsyncDone:
      return;
    default:
      if (!called.empty()) a.Cat("calls=", NameList(called, o));
      return;
  }
}

// HloInstruction::PrintExtraAttributes: everything between the operands and metadata.
// `wrapped` is the instruction a sugared async-start stands for, or null. Its own
// attributes and called computations follow the start's; its sharding, frontend attributes
// and statistics are the start's (the parser gives both the same), so they print once.
void AddExtraAttributes(AttrList& a, const HloInstruction& inst, const HloPrintOptions& o,
                        const HloInstruction* wrapped) {
  AddOpcodeAttributes(a, inst, o);
  if (wrapped && inst.opcode() == HloOpcode::kAsyncStart) {
    AddOpcodeAttributes(a, *wrapped, o);
    AddCalledComputations(a, *wrapped, o, /*sugared=*/false);
  }
  AddCalledComputations(a, inst, o, /*sugared=*/wrapped != nullptr);
  const InstructionAttributes& at = inst.attrs();
  if (at.sharding) a.Cat("sharding=", ShardingText(*at.sharding, o.print_metadata));
  if (!at.frontend_attributes.empty())
    a.Cat("frontend_attributes=", FrontendAttributesText(at.frontend_attributes));
  if (o.print_control_dependencies && !inst.control_predecessors().empty()) {
    std::vector<std::string> names;
    for (const HloInstruction* p : inst.control_predecessors()) names.push_back(NameText(p->name(), o));
    a.Cat("control-predecessors={", absl::StrJoin(names, ", "), "}");
  }
  if (!at.statistics_viz.empty()) {
    // Kept verbatim; accept it with or without its braces.
    a.Cat("statistics=", at.statistics_viz.front() == '{' ? at.statistics_viz
                                                          : absl::StrCat("{", at.statistics_viz, "}"));
  }
  AddRawAttribute(a, inst, "result_accuracy");
}

void AppendInstruction(std::string* out, const HloInstruction& inst, const HloPrintOptions& o) {
  absl::StrAppend(out, NameText(inst.name(), o), " = ");
  AppendShape(out, inst.shape(), /*print_layout=*/true);
  *out += " ";
  const HloInstruction* wrapped = SugaredWrappedInstruction(inst, o);
  if (wrapped) {
    const char* suffix = inst.opcode() == HloOpcode::kAsyncStart    ? "-start"
                         : inst.opcode() == HloOpcode::kAsyncUpdate ? "-update"
                                                                    : "-done";
    absl::StrAppend(out, std::string(HloOpcodeString(wrapped->opcode())), suffix);
  } else {
    *out += std::string(HloOpcodeString(inst.opcode()));
  }
  *out += "(";
  if (inst.opcode() == HloOpcode::kParameter) {
    absl::StrAppend(out, inst.attrs().parameter_number);
  } else if (inst.opcode() == HloOpcode::kConstant) {
    *out += ConstantText(inst, o);
  } else {
    AppendOperands(out, inst, o);
  }
  *out += ")";

  AttrList a;
  AddExtraAttributes(a, inst, o, wrapped);
  const InstructionAttributes& at = inst.attrs();
  AddRawAttribute(a, inst, "origin");
  if (o.print_metadata && !at.metadata.empty()) {
    std::string m = OpMetadataText(at.metadata);
    if (!m.empty()) a.Cat("metadata={", m, "}");
  }
  if (o.print_backend_config) {
    // A custom-call's opaque="..." is XLA's raw backend config string.
    const std::string& config = !at.backend_config.empty() ? at.backend_config : at.opaque;
    if (!config.empty()) {
      a.Cat("backend_config=", printer_internal::LexesAsJsonDict(config) ? config : Quoted(config));
    }
  }
  for (const std::string& p : a.parts()) absl::StrAppend(out, ", ", p);
}

// ---- computations --------------------------------------------------------------------

// "(a: f32[2], b: s32[]) -> f32[2]": XLA's ProgramShape human string (no layouts).
std::string ProgramShapeText(const HloComputation& c, const HloPrintOptions& o) {
  std::vector<std::string> params;
  for (const HloInstruction* p : c.parameters()) {
    if (p == nullptr) {
      params.push_back("(unknown): ()");
      continue;
    }
    HloPrintOptions no_percent = o;
    no_percent.print_percent = false;
    params.push_back(absl::StrCat(NameText(p->name(), no_percent), ": ",
                                  ShapeText(p->shape(), /*print_layout=*/false)));
  }
  const HloInstruction* root = c.root_instruction();
  return absl::StrCat("(", absl::StrJoin(params, ", "), ") -> ",
                      root ? ShapeText(root->shape(), false) : std::string("()"));
}

void AppendComputation(std::string* out, const HloComputation& c, const HloPrintOptions& o,
                       bool is_entry) {
  if (is_entry) *out += "ENTRY ";
  *out += NameText(c.name(), o);
  *out += " ";
  if (o.print_program_shape) absl::StrAppend(out, ProgramShapeText(c, o), " ");
  *out += "{\n";
  for (const auto& inst : c.instructions()) {
    const bool is_root = inst.get() == c.root_instruction();
    // Inline get-tuple-elements live at their uses (%t#1); only a root needs a line.
    if (inst->is_inline_gte() && !is_root) continue;
    *out += is_root ? "  ROOT " : "  ";
    AppendInstruction(out, *inst, o);
    *out += "\n";
  }
  *out += "}";
  if (!c.execution_thread().empty() && c.execution_thread() != "main")
    absl::StrAppend(out, ", execution_thread=", Quoted(c.execution_thread()));
}

// ---- modules -------------------------------------------------------------------------

void AppendStackFrames(std::string* out, const StackFrameIndex& f) {
  *out += "\n\nFileNames\n";
  for (size_t i = 0; i < f.file_names.size(); ++i)
    absl::StrAppend(out, i + 1, " ", Quoted(f.file_names[i]), "\n");
  *out += "\nFunctionNames\n";
  for (size_t i = 0; i < f.function_names.size(); ++i)
    absl::StrAppend(out, i + 1, " ", Quoted(f.function_names[i]), "\n");
  *out += "\nFileLocations\n";
  for (size_t i = 0; i < f.file_locations.size(); ++i) {
    const auto& l = f.file_locations[i];
    absl::StrAppend(out, i + 1, " {file_name_id=", l.file_name_id,
                    " function_name_id=", l.function_name_id, " line=", l.line,
                    " end_line=", l.end_line, " column=", l.column,
                    " end_column=", l.end_column, "}\n");
  }
  *out += "\nStackFrames\n";
  for (size_t i = 0; i < f.stack_frames.size(); ++i) {
    const auto& s = f.stack_frames[i];
    absl::StrAppend(out, i + 1, " {file_location_id=", s.file_location_id,
                    " parent_frame_id=", s.parent_frame_id, "}\n");
  }
}

std::string BoolList(const std::vector<bool>& v) {
  std::vector<std::string> parts;
  for (bool b : v) parts.push_back(b ? "true" : "false");
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// The header line, HloModule::Print and PrintConfig.
void AppendHeader(std::string* out, const HloModule& m, const HloPrintOptions& o) {
  const HloModuleConfig& cfg = m.config();
  absl::StrAppend(out, "HloModule ", m.name());
  if (m.is_scheduled()) *out += ", is_scheduled=true";
  if (!cfg.input_output_alias.empty()) {
    std::vector<std::string> parts;
    for (const InputOutputAlias& a : cfg.input_output_alias) {
      parts.push_back(absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.parameter_number,
                                   ", ", ShapeIndexToString(a.parameter_index),
                                   a.must_alias ? ", must-alias" : "", ")"));
    }
    absl::StrAppend(out, ", input_output_alias={ ", absl::StrJoin(parts, ", "), " }");
  }
  if (!cfg.buffer_donor.empty()) {
    std::vector<std::string> parts;
    for (const BufferDonor& d : cfg.buffer_donor)
      parts.push_back(absl::StrCat("(", d.parameter_number, ", ", ShapeIndexToString(d.parameter_index), ")"));
    absl::StrAppend(out, ", buffer_donor={ ", absl::StrJoin(parts, ", "), " }");
  }
  if (cfg.alias_passthrough_params) *out += ", alias_passthrough_params=true";
  if (cfg.entry_computation_layout) {
    absl::StrAppend(out, ", entry_computation_layout={",
                    ComputationLayoutText(cfg.entry_computation_layout->parameter_shapes,
                                          cfg.entry_computation_layout->result_shape),
                    "}");
  } else if (const HloComputation* e = m.entry_computation()) {
    // XLA always has an entry layout: without one in the text it is the entry's shapes.
    std::vector<Shape> params;
    for (const HloInstruction* p : e->parameters()) params.push_back(p ? p->shape() : Shape::Tuple({}));
    Shape result = e->root_instruction() ? e->root_instruction()->shape() : Shape::Tuple({});
    absl::StrAppend(out, ", entry_computation_layout={", ComputationLayoutText(params, result), "}");
  }
  auto spmd_flags = [](const std::vector<bool>& v) { return !v.empty() && (v.size() != 1 || v[0]); };
  if (spmd_flags(cfg.allow_spmd_sharding_propagation_to_parameters))
    absl::StrAppend(out, ", allow_spmd_sharding_propagation_to_parameters=",
                    BoolList(cfg.allow_spmd_sharding_propagation_to_parameters));
  if (spmd_flags(cfg.allow_spmd_sharding_propagation_to_output))
    absl::StrAppend(out, ", allow_spmd_sharding_propagation_to_output=",
                    BoolList(cfg.allow_spmd_sharding_propagation_to_output));
  if (cfg.replica_count != 1) absl::StrAppend(out, ", replica_count=", cfg.replica_count);
  if (cfg.num_partitions != 1) absl::StrAppend(out, ", num_partitions=", cfg.num_partitions);
  // XLA does not print these two; hloc keeps them so that they survive a round trip.
  if (cfg.spmd_output_sharding)
    absl::StrAppend(out, ", spmd_output_sharding=", ShardingText(*cfg.spmd_output_sharding, true));
  if (!cfg.spmd_parameters_shardings.empty()) {
    std::vector<std::string> parts;
    for (const HloSharding& s : cfg.spmd_parameters_shardings) parts.push_back(ShardingText(s, true));
    absl::StrAppend(out, ", spmd_parameters_shardings={", absl::StrJoin(parts, ","), "}");
  }
  if (!cfg.frontend_attributes.empty())
    absl::StrAppend(out, ", frontend_attributes=", FrontendAttributesText(cfg.frontend_attributes));
  for (const auto& [name, value] : cfg.raw_attributes) {
    absl::StrAppend(out, ", ", name, "=", value);
    // XLA ends the multi-line recovery table with its own newline.
    if (name == "origin_recovery_table") *out += "\n";
  }
}

// Async computations hidden by the syntax sugar (their one instruction prints at the
// async-start instead).
absl::flat_hash_set<const HloComputation*> SugarHiddenComputations(const HloModule& m,
                                                                  const HloPrintOptions& o) {
  absl::flat_hash_set<const HloComputation*> hidden;
  if (!o.syntax_sugar_async_ops) return hidden;
  for (const auto& c : m.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() != HloOpcode::kAsyncStart || inst->called_computations().empty()) continue;
      const HloComputation* w = inst->called_computations()[0];
      if (w && CanSugar(*w)) hidden.insert(w);
    }
  }
  return hidden;
}

// The order computations print in: the module's order (the parser keeps text order),
// except that a computation called before it is defined moves up to just before its first
// caller, since the parser (like XLA's) resolves names against computations already read.
std::vector<const HloComputation*> PrintOrder(const HloModule& m) {
  std::vector<const HloComputation*> order;
  absl::flat_hash_set<const HloComputation*> done, on_stack;
  struct Frame {
    const HloComputation* c;
    std::vector<const HloComputation*> callees;
    size_t next = 0;
  };
  auto callees = [](const HloComputation* c) {
    std::vector<const HloComputation*> out;
    for (const auto& inst : c->instructions())
      for (const HloComputation* callee : inst->called_computations())
        if (callee) out.push_back(callee);
    return out;
  };
  for (const auto& root : m.computations()) {
    if (done.contains(root.get())) continue;
    std::vector<Frame> stack;
    stack.push_back({root.get(), callees(root.get())});
    on_stack.insert(root.get());
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next < top.callees.size()) {
        const HloComputation* next = top.callees[top.next++];
        // Cycles are the verifier's to report; print each computation once.
        if (done.contains(next) || on_stack.contains(next)) continue;
        on_stack.insert(next);
        stack.push_back({next, callees(next)});
        continue;
      }
      done.insert(top.c);
      on_stack.erase(top.c);
      order.push_back(top.c);
      stack.pop_back();
    }
  }
  return order;
}

}  // namespace

std::string PrintInstruction(const HloInstruction& instruction, const HloPrintOptions& options) {
  std::string out;
  AppendInstruction(&out, instruction, options);
  return out;
}

std::string PrintComputation(const HloComputation& computation, const HloPrintOptions& options) {
  std::string out;
  const HloModule* m = computation.parent();
  AppendComputation(&out, computation, options, m && m->entry_computation() == &computation);
  return out;
}

std::string PrintModule(const HloModule& module, const HloPrintOptions& options) {
  std::string out;
  AppendHeader(&out, module, options);
  if (options.print_metadata && options.print_stack_frames && !module.stack_frames().empty())
    AppendStackFrames(&out, module.stack_frames());
  out += "\n\n";
  auto hidden = SugarHiddenComputations(module, options);
  for (const HloComputation* c : PrintOrder(module)) {
    if (hidden.contains(c)) continue;
    AppendComputation(&out, *c, options, c == module.entry_computation());
    out += "\n\n";
  }
  return out;
}

}  // namespace hloc
