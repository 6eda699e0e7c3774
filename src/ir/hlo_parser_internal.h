// The HLO text parser's state and sub-parsers, shared by its files:
//   hlo_parser.cc             entry points, module header, stack frames, computations, finalize
//   hlo_parser_instruction.cc instructions, operands (nested, %t#i), names, async ops
//   hlo_parser_opcodes.cc     the per-opcode attributes and checks
//   hlo_parser_attributes.cc  attribute lists and the value parsers (window, metadata, ...)
//   hlo_parser_shape.cc       shapes, layouts, shardings, replica groups
//   hlo_parser_literal.cc     constants
// Every sub-parser returns false after recording an error; only the first error is kept (the
// innermost, most specific one), as "FILE:LINE:COL: message".
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "ir/hlo_lexer.h"
#include "ir/hlo_parser.h"
#include "ir/module.h"

namespace hloc::parser_internal {

using RawAttributes = std::vector<std::pair<std::string, std::string>>;

// One attribute a context accepts: its name, whether it must appear, and how to parse the
// value after "name=". keep_raw also records the value's text verbatim (for attributes hloc
// knows by name but gives no meaning to).
struct AttrSpec {
  std::string name;
  bool required = false;
  std::function<bool()> parse;
  bool keep_raw = false;
};

struct AttrList {
  std::vector<AttrSpec> specs;
  absl::flat_hash_set<std::string> seen;
  void Add(std::string name, bool required, std::function<bool()> parse, bool keep_raw = false) {
    specs.push_back({std::move(name), required, std::move(parse), keep_raw});
  }
  bool Seen(const std::string& name) const { return seen.contains(name); }
};

// A computation while its instructions are parsed.
struct CompBuilder {
  std::string name;
  // Definition order; nested (anonymous) operands come before their user.
  std::vector<std::unique_ptr<HloInstruction>> instructions;
  HloInstruction* last_top_level = nullptr;  // the root when none is marked ROOT
  absl::flat_hash_map<std::string, std::pair<HloInstruction*, size_t>> names;  // -> (inst, loc)
  absl::flat_hash_map<int64_t, std::pair<HloInstruction*, size_t>> parameters;  // number -> (inst, loc)
  // Inline get-tuple-elements (%t#i): one per (operand, index); placed right after the operand.
  absl::flat_hash_map<std::pair<const HloInstruction*, int64_t>, HloInstruction*> inline_gtes;
  absl::flat_hash_map<const HloInstruction*, std::vector<std::unique_ptr<HloInstruction>>> gtes_after;
};

// One instruction while its right-hand side is parsed. Lives on the heap so that deep operand
// nesting does not grow the stack by the size of all these fields per level.
struct InstrCtx {
  CompBuilder* builder = nullptr;
  std::string name;
  size_t name_loc = 0, opcode_loc = 0, operands_loc = 0;
  HloOpcode opcode = HloOpcode::kAdd;
  std::optional<HloOpcode> wrapped_opcode;  // the X of X-start / X-update / X-done
  std::optional<Shape> shape;               // as written; inferred when absent
  std::vector<HloInstruction*> operands;
  InstructionAttributes attrs;
  std::vector<HloComputation*> called;
  std::optional<std::vector<HloInstruction*>> predecessors;
  bool allow_attributes = true;
  size_t replication_loc = 0;  // where parameter_replication= was written
  // async-update / async-done: what the text says, checked against the async-start.
  std::optional<std::string> async_thread;
  size_t async_thread_loc = 0;
  HloComputation* async_calls = nullptr;
  size_t async_calls_loc = 0;
};

// absl::StrCat takes absl::string_view, which is not std::string_view in this Abseil.
inline absl::string_view AsPiece(std::string_view s) { return absl::string_view(s.data(), s.size()); }
inline const std::string& AsPiece(const std::string& s) { return s; }
inline const char* AsPiece(const char* s) { return s; }
template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
T AsPiece(T v) {
  return v;
}

// XLA's list of opcodes whose result shape may be left out of the text.
bool CanInferShape(HloOpcode opcode);
// Same element type and dimensions, layouts and dynamic-ness ignored (XLA's Compatible).
bool CompatibleShapes(const Shape& a, const Shape& b);

class Parser {
 public:
  Parser(std::string_view text, std::string_view filename, const HloParserOptions& options);

  absl::StatusOr<std::unique_ptr<HloModule>> ParseModuleText();
  // Stand-alone values (the whole text must be exactly one of them).
  absl::StatusOr<Shape> ParseShapeOnly();
  absl::StatusOr<HloSharding> ParseShardingOnly();
  absl::StatusOr<FrontendAttributes> ParseFrontendAttributesOnly();
  absl::StatusOr<ConvolutionDimensionNumbers> ParseConvDimsOnly();
  absl::StatusOr<CollectiveDeviceList> ParseReplicaGroupsOnly();
  absl::StatusOr<PaddingConfig> ParsePaddingConfigOnly();
  absl::StatusOr<Window> ParseWindowOnly();
  absl::StatusOr<Literal> ParseLiteralOnly(const Shape& shape);

  // ---- errors and tokens (hlo_parser.cc)
  // `context` appends " (in instruction %x)" while an instruction is being parsed.
  bool Error(size_t loc, std::string_view msg, bool context = true);
  bool TokenError(std::string_view msg) { return Error(loc(), msg); }
  // The line and column of buffer offset `loc`, for HloInstruction::text_location.
  TextLocation LocationAt(size_t loc) const;
  // Error(loc, StrCat(args...)), built out of line: the parsers on the recursive paths then
  // keep no message temporaries in their stack frames.
  template <typename... Args>
  [[gnu::noinline, gnu::cold]] bool Err(size_t loc, const Args&... args) {
    return Error(loc, absl::StrCat(AsPiece(args)...));
  }
  bool has_error() const { return error_.has_value(); }
  absl::Status status() const;
  const Token& tok() const { return lex_.tok(); }
  TokKind kind() const { return lex_.kind(); }
  size_t loc() const { return lex_.tok().start; }
  std::string_view Text(size_t begin, size_t end) const { return lex_.Slice(begin, end); }
  // A description of the current token for messages: "'}'", "identifier 'foo'", ...
  std::string Describe() const;
  bool Expect(TokKind kind, std::string_view msg);
  bool EatIf(TokKind kind);
  bool ParseInt64(int64_t* out);
  bool ParseInt32(int64_t* out);  // an integer that must fit int32
  bool ParseDouble(double* out);
  bool ParseBool(bool* out);
  bool ParseString(std::string* out);
  bool ParseName(std::string* out, std::string_view what = "name");
  bool ParseInt64List(TokKind start, TokKind end, TokKind delim, std::vector<int64_t>* out);
  bool ParseInt64ListList(TokKind start, TokKind end, TokKind delim,
                          std::vector<std::vector<int64_t>>* out);
  bool ParseList(TokKind start, TokKind end, TokKind delim, absl::FunctionRef<bool()> item);
  bool ParseIdentIn(std::string_view what, std::string* out);  // an identifier value

  // Nesting depth guard: operands, shapes, tuple literals, inline computations.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) {
      ok_ = ++p_->depth_ <= p_->options_.max_recursion_depth;
      if (!ok_) p_->TokenError("maximum recursion depth exceeded");
    }
    ~DepthGuard() { --p_->depth_; }
    bool ok() const { return ok_; }

   private:
    Parser* p_;
    bool ok_;
  };

  // ---- module level (hlo_parser.cc)
  bool ParseHloModule(HloModule* module, bool without_header);
  bool ParseHeaderAttributes(HloModule* module);
  bool ParseStackFrameIndex(HloModule* module);
  bool ParseComputations();
  bool ParseComputation();
  bool ParseSingleInstruction();
  bool ParseInstructionList(HloComputation** out, const std::string& name, size_t name_loc);
  std::unique_ptr<HloComputation> BuildComputation(CompBuilder& b, HloInstruction* root);
  bool FinishModule(HloModule* module);

  // ---- instructions (hlo_parser_instruction.cc)
  bool ParseInstruction(CompBuilder& b, std::string* root_name, size_t* root_loc);
  HloInstruction* ParseInstructionRhs(CompBuilder& b, std::string name, size_t name_loc,
                                      bool allow_attributes, std::unique_ptr<Shape> preparsed_shape = nullptr);
  bool ParseOpcode(InstrCtx& c);
  bool ParseOperands(InstrCtx& c);
  bool ParseOperand(InstrCtx& c);
  [[gnu::noinline]] bool ParseNamedOperand(InstrCtx& c, size_t op_loc, const Shape* shape);
  HloInstruction* MakeSingleInstructionParameter(CompBuilder& b, std::string name, const Shape& shape, size_t at);
  HloInstruction* InlineGte(CompBuilder& b, HloInstruction* operand, int64_t index, size_t loc);
  bool AddCommonAttrs(InstrCtx& c, AttrList& attrs);
  // Makes the instruction from a fully parsed context, infers a missing shape, adds it to
  // the computation and applies control predecessors.
  HloInstruction* CreateInstruction(InstrCtx& c);
  HloInstruction* BuildInstruction(InstrCtx& c);
  [[gnu::noinline]] HloInstruction* BuildParameter(InstrCtx& c);
  [[gnu::noinline]] HloInstruction* BuildConstant(InstrCtx& c);
  HloInstruction* BuildAsync(InstrCtx& c, AttrList& attrs);
  bool ParseComputationRef(HloComputation** out);
  bool ParseComputationList(std::vector<HloComputation*>* out);
  std::string UniqueAnonName(CompBuilder& b, std::string_view base);

  // ---- per-opcode attributes (hlo_parser_opcodes.cc)
  bool CheckOperandCount(InstrCtx& c, int64_t expected);
  // Registers the opcode's own attributes, parses all attributes and checks the result.
  bool ParseOpcodeAttributes(InstrCtx& c, AttrList& attrs);

  // ---- attributes (hlo_parser_attributes.cc)
  bool ParseAttributes(AttrList& attrs, bool allow_attributes, size_t required_loc,
                       RawAttributes* raw);
  bool ParseSubAttributes(AttrList& attrs, RawAttributes* raw = nullptr);
  bool ParseOneAttribute(AttrList& attrs, RawAttributes* raw, bool sub);
  [[gnu::noinline, gnu::cold]] bool UnexpectedAttribute(const AttrList& attrs, size_t at, const std::string& name,
                                                         bool sub);
  bool ParseWindow(Window* window, bool outer_braces);
  bool ParseConvDims(ConvolutionDimensionNumbers* dnums);
  bool ParseSliceRanges(std::vector<SliceDimension>* out);
  bool ParsePaddingConfig(PaddingConfig* out);
  bool ParseMetadata(OpMetadata* out);
  bool ParseSingleOrListMetadata(std::vector<OpMetadata>* out);
  bool ParseFrontendAttributes(FrontendAttributes* out);
  bool ParseStatistics();
  bool ParsePrecisionList(std::vector<Precision>* out);
  bool ParseAlgorithm(std::string* out);
  bool ParseShapeIndex(ShapeIndex* out);
  bool ParseOutputOperandAliasing(std::vector<OutputOperandAlias>* out);
  bool ParseInputOutputAlias(std::vector<InputOutputAlias>* out);
  bool ParseBufferDonor(std::vector<BufferDonor>* out);
  bool ParseJsonDict(std::string* out);
  bool ParseStringOrJsonDict(std::string* out);
  bool ParseInstructionNames(std::vector<HloInstruction*>* out);
  bool ParseParameterReplication(std::vector<bool>* out);
  bool ParseBoolListOrBool(std::vector<bool>* out);
  bool ParseResultAccuracy();
  bool ParseOriginalValue();
  bool ParseDomain();
  bool ParseBalanced();  // one balanced {...} / [...] / (...) group, contents unchecked
  bool ParseComparisonDirection(ComparisonDirection* out);
  bool ParseComparisonType(ComparisonType* out);
  bool ParseFusionKind(FusionKind* out);
  bool ParseDistribution(RandomDistribution* out);
  bool ParseRandomAlgorithm(RandomAlgorithm* out);
  bool ParseFftType(FftType* out);
  bool ParseTriangularTranspose(TriangularTranspose* out);
  bool ParseApiVersion(CustomCallApiVersion* out);
  bool ParseCustomCallSchedule(CustomCallSchedule* out);

  // ---- shapes and shardings (hlo_parser_shape.cc)
  bool CanBeShape();
  bool ParseShape(Shape* out, bool allow_fallback_to_default_layout = true);
  [[gnu::noinline]] bool ParseArrayShape(Shape* out, bool allow_fallback_to_default_layout);
  bool ParseShapeList(std::vector<Shape>* out);
  bool ParseLayout(Layout* out);
  bool ParseSharding(HloSharding* out);
  bool ParseSingleSharding(HloSharding* out, bool lbrace_eaten);
  bool ParseMeshText(std::string* out);  // Shardy mesh sharding body, kept verbatim
  bool ParseTileAssignment(std::vector<int64_t>* dims, std::optional<IotaTileAssignment>* iota,
                           std::vector<int64_t>* devices, bool allow_devices);
  bool ParseIotaReshape(IotaTileAssignment* iota);
  bool ParseReplicaGroups(CollectiveDeviceList* out);

  // ---- literals (hlo_parser_literal.cc)
  bool ParseLiteral(Literal* out, const Shape& shape);
  bool ParseLiteralWithShape(Literal* out);  // "f32[2] {1, 2}" or "(lit, lit)"
  bool ParseTupleLiteral(Literal* out, const Shape& shape);
  bool ParseDenseLiteral(Literal* out, const Shape& shape);
  bool ParseComplex(double* re, double* im);

  const HloParserOptions& options() const { return options_; }

 private:
  friend class DepthGuard;

  HloLexer lex_;
  std::string filename_;
  HloParserOptions options_;
  std::optional<absl::Status> error_;
  int depth_ = 0;

 public:
  // Instruction names for error messages ("... (in instruction %x)"); innermost last.
  std::vector<std::string> inst_context_;
  // Name scopes: the computation being parsed is last.
  std::vector<CompBuilder*> scopes_;
  // Named computations (not inline ones) -> (computation, location of the name).
  absl::flat_hash_map<std::string, std::pair<HloComputation*, size_t>> computation_pool_;
  // Every computation, in the order it was completed (callees before callers).
  std::vector<std::unique_ptr<HloComputation>> computations_;
  HloComputation* entry_ = nullptr;
  size_t entry_loc_ = 0;
  // Single-instruction mode: operands that name nothing become parameters.
  bool single_instruction_ = false;
  int64_t single_param_count_ = 0;
  absl::flat_hash_set<std::string> anon_names_;
  int64_t elided_bytes_ = 0;  // bytes allocated for "{...}" constants so far
  int64_t elided_count_ = 0;  // how many "{...}" constants
  // Module header values applied after the computations are known.
  std::optional<bool> is_scheduled_;
  size_t alias_loc_ = 0, donor_loc_ = 0, layout_loc_ = 0;
  // Where each async-start was written (for the "called by more than one async op" check).
  absl::flat_hash_map<const HloInstruction*, size_t> async_start_locs_;
};

}  // namespace hloc::parser_internal
