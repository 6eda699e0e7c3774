// Instructions: "name = shape opcode(operands), attributes". Operands may be names (with an
// optional shape, checked against the named instruction), nested instructions ("add(f32[]
// add(...), ...)", iterative depth guarded), or inline tuple elements "%t#1". Async ops and
// their "X-start/X-update/X-done" shorthand are built here too.
#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/hlo_parser_internal.h"
#include "ir/shape_inference.h"

namespace hloc::parser_internal {
namespace {

// Gives every array subshape without a layout the default one (inferred shapes carry none).
void FillMissingLayouts(Shape* s) {
  if (s->IsTuple()) {
    for (Shape& t : s->mutable_tuple_shapes()) FillMissingLayouts(&t);
  } else if (s->IsArray() && !s->has_layout()) {
    Layout l;
    for (int64_t i = s->rank() - 1; i >= 0; --i) l.minor_to_major.push_back(i);
    s->set_layout(std::move(l));
  }
}

int64_t LeafCount(const Shape& s) {
  if (!s.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& t : s.tuple_shapes()) n += LeafCount(t);
  return n;
}

// Pops the innermost instruction name for error messages when the instruction is done.
struct ContextGuard {
  std::vector<std::string>* ctx;
  bool pushed;
  ContextGuard(std::vector<std::string>* c, const std::string& name) : ctx(c), pushed(!name.empty()) {
    if (pushed) ctx->push_back(name);
  }
  ~ContextGuard() {
    if (pushed) ctx->pop_back();
  }
};

}  // namespace

bool CanInferShape(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kAbs: case O::kAdd: case O::kAddDependency: case O::kAfterAll: case O::kAtan2:
    case O::kBatchNormGrad: case O::kBatchNormInference: case O::kBatchNormTraining:
    case O::kBroadcast: case O::kCall: case O::kCeil: case O::kCholesky: case O::kClamp:
    case O::kClz: case O::kCompare: case O::kComplex: case O::kConcatenate: case O::kConditional:
    case O::kConvolution: case O::kCopy: case O::kCos: case O::kOptimizationBarrier:
    case O::kDivide: case O::kDomain: case O::kDot: case O::kErf: case O::kExp: case O::kExpm1:
    case O::kFft: case O::kFloor: case O::kGather: case O::kGetDimensionSize:
    case O::kSetDimensionSize: case O::kGetTupleElement: case O::kImag: case O::kIsFinite:
    case O::kLog: case O::kLog1p: case O::kLogistic: case O::kAnd: case O::kNot: case O::kOr:
    case O::kXor: case O::kMap: case O::kMaximum: case O::kMinimum: case O::kMultiply:
    case O::kNegate: case O::kPad: case O::kPartitionId: case O::kPopulationCount:
    case O::kPower: case O::kRaggedDot: case O::kReal: case O::kReduce: case O::kRemainder:
    case O::kReplicaId: case O::kReverse: case O::kRoundNearestAfz: case O::kRoundNearestEven:
    case O::kRsqrt: case O::kScan: case O::kScatter: case O::kSelect: case O::kShiftLeft:
    case O::kShiftRightArithmetic: case O::kShiftRightLogical: case O::kSign: case O::kSin:
    case O::kSqrt: case O::kCbrt: case O::kReduceWindow: case O::kSelectAndScatter: case O::kSort:
    case O::kSubtract: case O::kTan: case O::kTanh: case O::kTranspose: case O::kTriangularSolve:
    case O::kTuple: case O::kWhile: case O::kTopK:
      return true;
    default:
      return false;
  }
}

// instruction ::= ('ROOT')? name '=' shape? opcode operands (',' attribute)*
bool Parser::ParseInstruction(CompBuilder& b, std::string* root_name, size_t* root_loc) {
  size_t rl = loc();
  bool is_root = EatIf(TokKind::kw_ROOT);
  size_t name_loc = loc();
  std::string name;
  if (!ParseName(&name, "instruction name") || !Expect(TokKind::kEqual, "expects '=' in instruction"))
    return false;
  if (is_root) {
    if (!root_name->empty()) return Error(rl, "one computation should have only one ROOT");
    *root_name = name;
    *root_loc = rl;
  }
  HloInstruction* inst = ParseInstructionRhs(b, name, name_loc, true);
  if (!inst) return false;
  b.last_top_level = inst;
  return true;
}

HloInstruction* Parser::ParseInstructionRhs(CompBuilder& b, std::string name, size_t name_loc,
                                            bool allow_attributes, std::unique_ptr<Shape> preparsed_shape) {
  DepthGuard depth(this);
  if (!depth.ok()) return nullptr;
  auto c = std::make_unique<InstrCtx>();
  c->builder = &b;
  c->name = std::move(name);
  c->name_loc = name_loc;
  c->allow_attributes = allow_attributes;
  ContextGuard context(&inst_context_, c->name);
  if (preparsed_shape) {
    c->shape = std::move(*preparsed_shape);
  } else if (CanBeShape()) {
    c->shape.emplace();
    if (!ParseShape(&*c->shape)) return nullptr;
  }
  if (!ParseOpcode(*c)) return nullptr;
  if (!c->shape && (c->wrapped_opcode || !CanInferShape(c->opcode))) {
    Err(c->opcode_loc, "cannot infer shape for opcode: ", std::string(HloOpcodeString(c->opcode)),
        "; write the result shape before the opcode");
    return nullptr;
  }
  return BuildInstruction(*c);
}

bool Parser::ParseOpcode(InstrCtx& c) {
  c.opcode_loc = loc();
  if (kind() != TokKind::kIdent) return TokenError("expects opcode");
  // "g32[2]": a misspelt element type rather than an opcode.
  if (lex_.LookAhead() == TokKind::kLsquare) return Err(loc(), "expected primitive type, saw ", Describe());
  const std::string& val = tok().str;
  if (auto op = StringToHloOpcode(val)) {
    c.opcode = *op;
  } else {
    // "custom-call-start" etc.: an async op wrapping one instruction.
    static constexpr std::pair<std::string_view, HloOpcode> kSuffixes[] = {
        {"-start", HloOpcode::kAsyncStart}, {"-update", HloOpcode::kAsyncUpdate}, {"-done", HloOpcode::kAsyncDone}};
    bool found = false;
    for (const auto& [suffix, async_op] : kSuffixes) {
      if (!absl::EndsWith(val, absl::string_view(suffix.data(), suffix.size()))) continue;
      std::string wrapped = val.substr(0, val.size() - suffix.size());
      auto wop = StringToHloOpcode(wrapped);
      if (!wop) return Err(loc(), "expects async wrapped opcode but sees: ", val, " (unknown opcode ", wrapped, ")");
      c.opcode = async_op;
      c.wrapped_opcode = *wop;
      found = true;
      break;
    }
    if (!found) return Err(loc(), "expects opcode but sees: ", val, " (unknown opcode)");
  }
  lex_.Lex();
  return true;
}

// operands ::= '(' (operand (',' operand)*)? ')'
bool Parser::ParseOperands(InstrCtx& c) {
  DepthGuard depth(this);
  if (!depth.ok()) return false;
  c.operands_loc = loc();
  if (!Expect(TokKind::kLparen, "expects '(' at the beginning of operands")) return false;
  if (kind() != TokKind::kRparen) {
    do {
      if (!ParseOperand(c)) return false;
    } while (EatIf(TokKind::kComma));
  }
  return Expect(TokKind::kRparen, "expects ')' at the end of operands");
}

// operand ::= shape? name ('#' int)? | shape? opcode operands
bool Parser::ParseOperand(InstrCtx& c) {
  size_t op_loc = loc();
  // On the heap: nested operands recurse through here.
  std::unique_ptr<Shape> shape;
  if (CanBeShape()) {
    shape = std::make_unique<Shape>();
    if (!ParseShape(shape.get())) return false;
  }
  // A name followed by '(' can only be a nested instruction's opcode.
  if ((kind() == TokKind::kName || kind() == TokKind::kIdent) && lex_.LookAhead() == TokKind::kLparen) {
    HloInstruction* nested = ParseInstructionRhs(*c.builder, "", op_loc, /*allow_attributes=*/false, std::move(shape));
    if (!nested) return false;
    c.operands.push_back(nested);
    return true;
  }
  return ParseNamedOperand(c, op_loc, shape.get());
}

bool Parser::ParseNamedOperand(InstrCtx& c, size_t op_loc, const Shape* shape) {
  CompBuilder& b = *c.builder;
  bool top_scope = single_instruction_ && scopes_.size() == 1;
  if (kind() != TokKind::kName && kind() != TokKind::kIdent) {
    if (shape && top_scope && (kind() == TokKind::kComma || kind() == TokKind::kRparen)) {
      c.operands.push_back(MakeSingleInstructionParameter(b, "", *shape, op_loc));
      return true;
    }
    return TokenError("expects an operand: a name or a nested instruction");
  }
  std::string name = tok().str;
  size_t name_loc = loc(), name_end = tok().end;
  lex_.Lex();
  HloInstruction* inst = nullptr;
  if (auto it = b.names.find(name); it != b.names.end()) {
    inst = it->second.first;
  } else if (top_scope) {
    if (!shape)
      return Error(name_loc,
                   "Operand had no shape in HLO text; cannot create parameter for single-instruction module.");
    inst = MakeSingleInstructionParameter(b, name, *shape, op_loc);
  } else {
    return Err(name_loc, "instruction does not exist: ", name);
  }
  if (kind() == TokKind::kOctothorp && tok().start == name_end) {
    lex_.Lex();
    if (kind() != TokKind::kInt || tok().start != lex_.prev_end())
      return TokenError("expects a tuple index right after '#', as in %tuple#1");
    int64_t index = tok().int_val;
    size_t index_loc = loc();
    lex_.Lex();
    inst = InlineGte(b, inst, index, index_loc);
    if (!inst) return false;
  }
  if (shape && !CompatibleShapes(*shape, inst->shape())) {
    return Err(op_loc, "The declared operand shape ", shape->ToString(),
               " is not compatible with the shape of the operand instruction ", inst->shape().ToString(), ".");
  }
  c.operands.push_back(inst);
  return true;
}

// Single-instruction text: an operand that names nothing becomes the next parameter.
HloInstruction* Parser::MakeSingleInstructionParameter(CompBuilder& b, std::string name, const Shape& shape,
                                                       size_t at) {
  while (b.parameters.contains(single_param_count_)) ++single_param_count_;  // next free number
  if (name.empty()) name = absl::StrCat("_", single_param_count_);
  auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, shape, name);
  param->mutable_attrs().parameter_number = single_param_count_;
  param->set_text_location(LocationAt(at));
  HloInstruction* raw = param.get();
  b.parameters[single_param_count_++] = {raw, at};
  b.names[name] = {raw, at};
  b.instructions.push_back(std::move(param));
  return raw;
}

HloInstruction* Parser::InlineGte(CompBuilder& b, HloInstruction* operand, int64_t index, size_t at) {
  auto key = std::make_pair(static_cast<const HloInstruction*>(operand), index);
  if (auto it = b.inline_gtes.find(key); it != b.inline_gtes.end()) return it->second;
  const Shape& s = operand->shape();
  if (!s.IsTuple()) {
    Err(at, "%", operand->name(), "#", index, ": %", operand->name(),
        " is not a tuple; it has shape ", s.ToString());
    return nullptr;
  }
  if (index < 0 || index >= static_cast<int64_t>(s.tuple_shapes().size())) {
    Err(at, "tuple index ", index, " is out of range for %", operand->name(), " of shape ",
        s.ToString());
    return nullptr;
  }
  auto gte = std::make_unique<HloInstruction>(HloOpcode::kGetTupleElement, s.tuple_shapes(index),
                                              absl::StrCat(operand->name(), "#", index));
  gte->mutable_attrs().tuple_index = index;
  gte->AppendOperand(operand);
  gte->set_inline_gte(true);
  gte->set_text_location(LocationAt(at));
  HloInstruction* raw = gte.get();
  b.gtes_after[operand].push_back(std::move(gte));
  b.inline_gtes[key] = raw;
  return raw;
}

bool Parser::AddCommonAttrs(InstrCtx& c, AttrList& attrs) {
  // The lambdas outlive this function: capture only the parser and the heap context.
  InstrCtx* ctx = &c;
  attrs.Add("sharding", false, [this, ctx] {
    HloSharding s;
    if (!ParseSharding(&s)) return false;
    ctx->attrs.sharding = std::move(s);
    return true;
  });
  attrs.Add("frontend_attributes", false,
            [this, ctx] { return ParseFrontendAttributes(&ctx->attrs.frontend_attributes); });
  attrs.Add("statistics", false, [this, ctx] {
    size_t begin = loc();
    if (!ParseStatistics()) return false;
    ctx->attrs.statistics_viz = std::string(Text(begin, lex_.prev_end()));
    return true;
  });
  attrs.Add("parameter_replication", false, [this, ctx] {
    ctx->replication_loc = loc();
    return ParseParameterReplication(&ctx->attrs.parameter_replication);
  });
  attrs.Add("control-predecessors", false, [this, ctx] {
    std::vector<HloInstruction*> preds;
    if (!ParseInstructionNames(&preds)) return false;
    ctx->predecessors = std::move(preds);
    return true;
  });
  attrs.Add("origin", false, [this] { return ParseOriginalValue(); }, /*keep_raw=*/true);
  attrs.Add("metadata", false, [this, ctx] { return ParseMetadata(&ctx->attrs.metadata); });
  attrs.Add("backend_config", false, [this, ctx] { return ParseStringOrJsonDict(&ctx->attrs.backend_config); });
  return true;
}

HloInstruction* Parser::CreateInstruction(InstrCtx& c) {
  CompBuilder& b = *c.builder;
  auto inst = std::make_unique<HloInstruction>(c.opcode, c.shape ? *c.shape : Shape(), c.name);
  for (HloInstruction* op : c.operands) inst->AppendOperand(op);
  inst->mutable_attrs() = std::move(c.attrs);
  inst->mutable_called_computations() = c.called;
  if (!c.shape) {
    absl::StatusOr<Shape> inferred = InferShape(*inst);
    if (!inferred.ok()) {
      Err(c.opcode_loc, "failed to infer shape for opcode: ", std::string(HloOpcodeString(c.opcode)),
          ", error: ", std::string(inferred.status().message()));
      return nullptr;
    }
    Shape s = *std::move(inferred);
    if (options_.fill_missing_layouts) FillMissingLayouts(&s);
    inst->mutable_shape() = std::move(s);
  }
  const auto& replication = inst->attrs().parameter_replication;
  if (!replication.empty() && LeafCount(inst->shape()) != static_cast<int64_t>(replication.size())) {
    Err(c.replication_loc, "parameter has ", LeafCount(inst->shape()),
        " leaf buffers, but parameter_replication has ", replication.size(),
        " elements.");
    return nullptr;
  }
  std::string name =
      c.name.empty() ? UniqueAnonName(b, absl::StrCat(std::string(HloOpcodeString(c.opcode)), ".anon")) : c.name;
  if (auto it = b.names.find(name); it != b.names.end()) {
    HloLexer::LineCol lc = lex_.GetLineCol(it->second.second);
    Error(c.name_loc,
          absl::StrCat("instruction already exists: ", name, " (previously defined at ", lc.line, ":", lc.column, ")"),
          /*context=*/false);
    return nullptr;
  }
  inst->set_name(name);
  inst->set_text_location(LocationAt(c.name_loc));
  if (c.predecessors)
    for (HloInstruction* pred : *c.predecessors) pred->AddControlDependencyTo(inst.get());
  if (c.opcode == HloOpcode::kFusion && !c.called.empty() && !c.called[0]->FusionInstruction())
    c.called[0]->SetFusionInstruction(inst.get());
  HloInstruction* raw = inst.get();
  b.names[name] = {raw, c.name_loc};
  b.instructions.push_back(std::move(inst));
  return raw;
}

std::string Parser::UniqueAnonName(CompBuilder& b, std::string_view base) {
  std::string name(base);
  for (int64_t i = 1; b.names.contains(name) || anon_names_.contains(name); ++i)
    name = absl::StrCat(std::string(base), ".", i);
  anon_names_.insert(name);
  return name;
}

HloInstruction* Parser::BuildInstruction(InstrCtx& c) {
  using O = HloOpcode;
  if (c.opcode == O::kParameter) return BuildParameter(c);
  if (c.opcode == O::kConstant) return BuildConstant(c);
  AttrList attrs;
  if (c.opcode == O::kAsyncStart || c.opcode == O::kAsyncUpdate || c.opcode == O::kAsyncDone)
    return BuildAsync(c, attrs);
  if (!ParseOperands(c)) return nullptr;
  AddCommonAttrs(c, attrs);
  if (!ParseOpcodeAttributes(c, attrs)) return nullptr;
  return CreateInstruction(c);
}

// parameter ::= 'parameter' '(' int ')' attributes
HloInstruction* Parser::BuildParameter(InstrCtx& c) {
  CompBuilder& b = *c.builder;
  if (!Expect(TokKind::kLparen, "expects '(' before parameter number")) return nullptr;
  size_t number_loc = loc();
  int64_t number = 0;
  if (!ParseInt64(&number)) return nullptr;
  if (number < 0) {
    Error(number_loc, "parameter number must be >= 0");
    return nullptr;
  }
  if (!Expect(TokKind::kRparen, "expects ')' after parameter number")) return nullptr;
  AttrList attrs;
  AddCommonAttrs(c, attrs);
  if (!ParseAttributes(attrs, c.allow_attributes, c.opcode_loc, &c.attrs.raw_attributes)) return nullptr;
  if (auto it = b.parameters.find(number); it != b.parameters.end()) {
    Err(number_loc, "Duplicate parameter number ", number, ": also used by %", it->second.first->name());
    return nullptr;
  }
  c.attrs.parameter_number = number;
  HloInstruction* inst = CreateInstruction(c);
  if (inst) b.parameters[number] = {inst, number_loc};
  return inst;
}

// constant ::= 'constant' '(' literal ')' attributes
HloInstruction* Parser::BuildConstant(InstrCtx& c) {
  if (!Expect(TokKind::kLparen, "expects '(' before constant literal") ||
      !ParseLiteral(&c.attrs.literal.emplace(), *c.shape) ||
      !Expect(TokKind::kRparen, "expects ')' after constant literal"))
    return nullptr;
  AttrList attrs;
  AddCommonAttrs(c, attrs);
  if (!ParseAttributes(attrs, c.allow_attributes, c.opcode_loc, &c.attrs.raw_attributes)) return nullptr;
  return CreateInstruction(c);
}

// async-start ::= shape 'async-start' operands ', calls=' computation
//              |  shape X'-start' operands attributes-of-X   (X wrapped in a new computation)
// async-update / async-done take the previous op of the chain; X-update / X-done check that
// the chain wraps an X.
HloInstruction* Parser::BuildAsync(InstrCtx& c, AttrList& attrs) {
  using O = HloOpcode;
  if (!ParseOperands(c)) return nullptr;
  AddCommonAttrs(c, attrs);
  InstrCtx* ctx = &c;
  attrs.Add("async_execution_thread", false, [this, ctx] {
    ctx->async_thread_loc = loc();
    std::string thread;
    if (!ParseString(&thread)) return false;
    ctx->async_thread = thread;
    return true;
  });

  if (c.opcode == O::kAsyncStart) {
    const Shape& s = *c.shape;
    if (!s.IsTuple() || s.tuple_shapes().size() < 2 || !s.tuple_shapes(0).IsTuple()) {
      Error(c.opcode_loc,
            "AsyncStart expects the op shape to be in the form of ((async-operands), async-outputs, state).");
      return nullptr;
    }
    attrs.Add("output_to_operand_aliasing", false,
              [this, ctx] { return ParseOutputOperandAliasing(&ctx->attrs.output_to_operand_aliasing); });
    if (c.wrapped_opcode) {
      O wrapped = *c.wrapped_opcode;
      if (wrapped == O::kParameter || wrapped == O::kConstant || wrapped == O::kAsyncStart ||
          wrapped == O::kAsyncUpdate || wrapped == O::kAsyncDone) {
        Err(c.opcode_loc, "async wrapped opcode ", std::string(HloOpcodeString(wrapped)), " is not supported");
        return nullptr;
      }
      // The wrapped op: parameters for the operands, the op as root, with the op's own
      // attributes; the shared ones (metadata, backend_config, ...) go on both, as in XLA.
      CompBuilder wb;
      wb.name = "async_wrapped";
      auto inner = std::make_unique<InstrCtx>();
      inner->builder = &wb;
      inner->opcode = wrapped;
      inner->shape = s.tuple_shapes(1);
      inner->allow_attributes = c.allow_attributes;
      inner->opcode_loc = c.opcode_loc;
      inner->operands_loc = c.operands_loc;
      inner->name = std::string(HloOpcodeString(wrapped));
      inner->name_loc = c.name_loc;
      for (size_t i = 0; i < c.operands.size(); ++i) {
        std::string pname = i == 0 ? "async_param" : absl::StrCat("async_param.", i);
        auto param = std::make_unique<HloInstruction>(O::kParameter, c.operands[i]->shape(), pname);
        param->mutable_attrs().parameter_number = static_cast<int64_t>(i);
        HloInstruction* raw = param.get();
        wb.parameters[static_cast<int64_t>(i)] = {raw, c.operands_loc};
        wb.names[pname] = {raw, c.operands_loc};
        wb.instructions.push_back(std::move(param));
        inner->operands.push_back(raw);
      }
      if (!ParseOpcodeAttributes(*inner, attrs)) return nullptr;
      // Shared attributes were parsed into the outer context; "origin" went to the inner
      // raw attributes with the op's own unmodelled ones.
      for (const auto& [key, value] : inner->attrs.raw_attributes)
        if (key == "origin") c.attrs.raw_attributes.emplace_back(key, value);
      inner->attrs.metadata = c.attrs.metadata;
      inner->attrs.backend_config = c.attrs.backend_config;
      inner->attrs.frontend_attributes = c.attrs.frontend_attributes;
      inner->attrs.statistics_viz = c.attrs.statistics_viz;
      HloInstruction* root = CreateInstruction(*inner);
      if (!root) return nullptr;
      std::unique_ptr<HloComputation> comp = BuildComputation(wb, root);
      if (!comp) return nullptr;
      if (c.async_thread && *c.async_thread != "main") comp->set_execution_thread(*c.async_thread);
      c.called = {comp.get()};
      computations_.push_back(std::move(comp));
    } else {
      attrs.Add("calls", true, [this, ctx] {
        HloComputation* comp = nullptr;
        if (!ParseComputationRef(&comp)) return false;
        ctx->called = {comp};
        return true;
      });
      if (!ParseAttributes(attrs, c.allow_attributes, c.opcode_loc, &c.attrs.raw_attributes)) return nullptr;
    }
    if (c.async_thread) c.attrs.async_execution_thread = *c.async_thread;
    HloInstruction* inst = CreateInstruction(c);
    if (inst) async_start_locs_[inst] = c.name_loc;
    return inst;
  }

  // async-update / async-done.
  if (c.operands.size() != 1 ||
      (c.operands[0]->opcode() != O::kAsyncStart && c.operands[0]->opcode() != O::kAsyncUpdate)) {
    Error(c.operands_loc, "AsyncUpdate and AsyncDone expect a single async op as their operand.");
    return nullptr;
  }
  const HloInstruction* start = c.operands[0];
  while (start->opcode() == O::kAsyncUpdate) start = start->operand(0);
  HloComputation* wrapped_comp = start->called_computations().empty() ? nullptr : start->called_computations()[0];
  if (c.opcode == O::kAsyncUpdate && !(c.operands[0]->shape() == *c.shape)) {
    Error(c.opcode_loc, "AsyncUpdate expects the op shape to be the same as the operand shape.");
    return nullptr;
  }
  if (c.wrapped_opcode) {
    O actual = wrapped_comp->root_instruction()->opcode();
    if (actual != *c.wrapped_opcode) {
      Err(c.opcode_loc, "Expect async wrapped opcode to be ", std::string(HloOpcodeString(actual)), ", but got ",
          std::string(HloOpcodeString(*c.wrapped_opcode)));
      return nullptr;
    }
  } else {
    attrs.Add("calls", false, [this, ctx] {
      ctx->async_calls_loc = loc();
      return ParseComputationRef(&ctx->async_calls);
    });
  }
  if (!ParseAttributes(attrs, c.allow_attributes, c.opcode_loc, &c.attrs.raw_attributes)) return nullptr;
  // Only the start carries the thread and the computation; what is written here must agree.
  std::string start_thread =
      start->attrs().async_execution_thread.empty() ? "main" : start->attrs().async_execution_thread;
  if (c.async_thread && *c.async_thread != start_thread) {
    Err(c.async_thread_loc, "Expect async_execution_thread to be ", start_thread, ", but got ",
        *c.async_thread);
    return nullptr;
  }
  if (c.async_calls && c.async_calls != wrapped_comp) {
    Err(c.async_calls_loc, "Expect async_wrapped_computation to be ", wrapped_comp->name(),
        ", but got ", c.async_calls->name());
    return nullptr;
  }
  return CreateInstruction(c);
}

bool Parser::ParseComputationRef(HloComputation** out) {
  DepthGuard depth(this);
  if (!depth.ok()) return false;
  if (kind() == TokKind::kLbrace) return ParseInstructionList(out, "_", loc());  // inline computation
  size_t name_loc = loc();
  std::string name;
  if (!ParseName(&name, "computation name")) return false;
  auto it = computation_pool_.find(name);
  if (it == computation_pool_.end()) return Err(name_loc, "computation does not exist: ", name);
  *out = it->second.first;
  return true;
}

bool Parser::ParseComputationList(std::vector<HloComputation*>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    HloComputation* comp = nullptr;
    if (!ParseComputationRef(&comp)) return false;
    out->push_back(comp);
    return true;
  });
}

}  // namespace hloc::parser_internal
