// cublas-gemm-rewriter: the dot -> GEMM call step, the type tables, the workspace step and the
// pass driver. The epilogue fusions live in gemm_epilogues.cc; the driver tries them as the
// LibraryPattern records of rules/library/GemmEpilogues.td say (generated table, file order).
#include "passes/library/gemm_rewriter.h"

#include <algorithm>

#include <iostream>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/compile_recorder.h"
#include "engine/rewrite.h"
#include "engine/rule_tables.h"
#include "passes/library/gemm_rewriter_internal.h"

namespace hloc {
namespace library::gemm {

using expanders::ExpanderBuilder;
using PT = PrimitiveType;

bool IsLegacyGemm(const HloInstruction* inst) { return IsCustomCall(inst, kGemmCallTarget); }
bool IsLtMatmul(const HloInstruction* inst) { return IsCustomCall(inst, kCublasLtMatmulCallTarget); }

absl::StatusOr<GemmBackendConfig> Config(const HloInstruction* gemm) {
  return ParseGemmBackendConfig(gemm->attrs().backend_config);
}
void SetConfig(HloInstruction* gemm, const GemmBackendConfig& config) {
  gemm->mutable_attrs().backend_config = GemmBackendConfigToJson(config);
}

bool SupportsEpilogueFusion(PrimitiveType t) {
  return t == PT::F8E4M3FN || t == PT::F8E5M2 || t == PT::F16 || t == PT::BF16 || t == PT::F32 || t == PT::F64;
}

namespace {

struct TypeCombo {
  PT a, b, out;
};
// The rows of cuBLASLt's (CUDA) and legacy cuBLAS's type tables that XLA's non-FP8 GEMMs reach,
// each with the compute/scale type XLA's GetBlasComputationType picks for it (f32 accumulation
// for f16/bf16, TF32-as-f32 for f32/c64, f64 for f64/c128, i32 for s8).
constexpr TypeCombo kCublasLtTypes[] = {
    {PT::F16, PT::F16, PT::F16},  {PT::F16, PT::F16, PT::F32},   {PT::BF16, PT::BF16, PT::BF16},
    {PT::BF16, PT::BF16, PT::F32}, {PT::F32, PT::F32, PT::F32},  {PT::S8, PT::S8, PT::S32},
    {PT::S8, PT::S8, PT::F32},    {PT::F64, PT::F64, PT::F64},   {PT::C64, PT::C64, PT::C64},
    {PT::C128, PT::C128, PT::C128},
};
constexpr TypeCombo kLegacyCublasTypes[] = {
    {PT::F16, PT::F16, PT::F16},  {PT::F16, PT::F16, PT::F32},   {PT::BF16, PT::BF16, PT::BF16},
    {PT::BF16, PT::BF16, PT::F32}, {PT::F32, PT::F32, PT::F32},  {PT::S8, PT::S8, PT::S32},
    {PT::S8, PT::S8, PT::F32},    {PT::F64, PT::F64, PT::F64},   {PT::C64, PT::C64, PT::C64},
    {PT::C128, PT::C128, PT::C128},
};

template <size_t N>
bool InTable(const TypeCombo (&table)[N], PT a, PT b, PT out) {
  for (const TypeCombo& c : table)
    if (c.a == a && c.b == b && c.out == out) return true;
  return false;
}

std::string PrecisionName(Precision p) {
  switch (p) {
    case Precision::kHigh: return "HIGH";
    case Precision::kHighest: return "HIGHEST";
    case Precision::kPackedNibble: return "PACKED_NIBBLE";
    default: return "DEFAULT";
  }
}

// hloc keeps algorithm= as written in HLO text ("dot_bf16_bf16_f32"); the proto enum is
// ALG_DOT_BF16_BF16_F32.
std::string AlgorithmName(const std::string& algorithm) {
  if (algorithm.empty()) return "ALG_UNSET";
  std::string up = "ALG_";
  for (char c : algorithm) up += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return up;
}

// algorithm_util::IsSupportedByCublasOrCublasLt for the algorithms HLO text can name.
bool AlgorithmSupportedByCublas(const std::string& algorithm) {
  static const char* const kSupported[] = {"",
                                           "dot_f16_f16_f16",
                                           "dot_f16_f16_f32",
                                           "dot_bf16_bf16_bf16",
                                           "dot_bf16_bf16_f32",
                                           "dot_tf32_tf32_f32",
                                           "dot_f32_f32_f32",
                                           "dot_f64_f64_f64"};
  for (const char* s : kSupported)
    if (algorithm == s) return true;
  return false;
}

// XLA's IsMatrixMultiplication || IsMatrixVectorMultiplication, for the non-FP8 types.
bool IsGemmCandidate(const HloInstruction* dot) {
  if (dot->operand_count() != 2 || !dot->attrs().dot_dimension_numbers) return false;
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  const Shape& os = dot->shape();
  if (!ls.IsArray() || !rs.IsArray() || !os.IsArray()) return false;
  if (!ls.is_static() || !rs.is_static() || !os.is_static()) return false;
  const PT out = os.element_type();
  const bool type_allowed = out == PT::F16 || out == PT::BF16 || out == PT::F32 || out == PT::F64 || out == PT::C64 ||
                            out == PT::C128 ||
                            (out == PT::S32 && ls.element_type() == PT::S8 && rs.element_type() == PT::S8);
  if (!type_allowed) return false;
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  if (static_cast<int64_t>(dn.rhs_batch_dimensions.size()) != nb) return false;
  if (dn.lhs_contracting_dimensions.size() != 1 || dn.rhs_contracting_dimensions.size() != 1) return false;
  const bool matmul = ls.rank() == nb + 2 && rs.rank() == nb + 2 && os.rank() == nb + 2;
  const bool matvec = os.rank() == nb + 1 && ((ls.rank() == nb + 2 && rs.rank() == nb + 1) ||
                                              (ls.rank() == nb + 1 && rs.rank() == nb + 2));
  if (!matmul && !matvec) return false;
  return ls.num_elements() > 0 && rs.num_elements() > 0 && os.num_elements() > 0;
}

// IsMatrixMultiplicationTooSmallForRewriting && IsDotSupportedByClassicalEmitters.
bool StaysForClassicalEmitters(const HloInstruction* dot, int64_t threshold) {
  const PT out = dot->shape().element_type();
  if (out != PT::F16 && out != PT::F32 && out != PT::BF16) return false;
  const DotDimensionNumbers& dn = *dot->attrs().dot_dimension_numbers;
  const Shape& ls = dot->operand(0)->shape();
  const Shape& rs = dot->operand(1)->shape();
  int64_t k = 1, m = 1, n = 1;
  for (int64_t d : dn.lhs_contracting_dimensions) k *= ls.dimensions(d);
  for (int64_t d : OtherDims(ls.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions)) m *= ls.dimensions(d);
  for (int64_t d : OtherDims(rs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions)) n *= rs.dimensions(d);
  return static_cast<double>(m + n) * static_cast<double>(k) < static_cast<double>(threshold);
}

// An operand as cuBLAS can address it: when its batch/row/column groups are not laid out as
// MatrixLayout needs, a transpose to [batch..., rows..., cols...] (default layout) first.
// Updates the operand's batch and contracting dimension numbers.
HloInstruction* CanonicalOperand(ExpanderBuilder& b, HloInstruction* x, std::vector<int64_t>& batch,
                                 std::vector<int64_t>& contracting, bool contracting_is_col) {
  const DimVec free = OtherDims(x->shape().rank(), batch, contracting);
  const DimVec& rows = contracting_is_col ? free : contracting;
  const DimVec& cols = contracting_is_col ? contracting : free;
  if (IsMatrixLayoutRepresentable(x->shape(), batch, rows, cols)) return x;
  DimVec perm = batch;
  perm.insert(perm.end(), rows.begin(), rows.end());
  perm.insert(perm.end(), cols.begin(), cols.end());
  HloInstruction* t = b.Transpose(x, perm);
  const int64_t nb = static_cast<int64_t>(batch.size());
  std::vector<int64_t> new_batch, new_contracting;
  for (int64_t i = 0; i < nb; ++i) new_batch.push_back(i);
  for (int64_t d : contracting)
    new_contracting.push_back(std::find(perm.begin(), perm.end(), d) - perm.begin());
  batch = new_batch;
  contracting = new_contracting;
  return t;
}

}  // namespace

bool TypesSupportedByCublasLt(PT a, PT b, PT out) { return InTable(kCublasLtTypes, a, b, out); }
bool TypesSupportedByLegacyCublas(PT a, PT b, PT out) { return InTable(kLegacyCublasTypes, a, b, out); }

HloInstruction* CloneGemm(Rewrite& rw, const HloInstruction* gemm, std::vector<HloInstruction*> operands,
                          const Shape& shape, const GemmBackendConfig& config, const HloInstruction* before,
                          const std::string& name) {
  std::unique_ptr<HloInstruction> clone = CloneInstruction(*gemm, operands);
  clone->mutable_shape() = shape;
  clone->set_name(name);
  clone->mutable_attrs().backend_config = GemmBackendConfigToJson(config);
  ExpanderBuilder b(rw.comp, rw.names, before);
  return b.Add(std::move(clone));
}

HloInstruction* CloneUnary(Rewrite& rw, const HloInstruction* like, HloInstruction* operand,
                           const HloInstruction* before) {
  HloInstruction* ops[] = {operand};
  std::unique_ptr<HloInstruction> clone = CloneInstruction(*like, ops);
  ExpanderBuilder b(rw.comp, rw.names, before);
  return b.Add(std::move(clone));
}

std::string GemmName(const HloInstruction* gemm, const GemmBackendConfig& config) {
  if (IsLtMatmul(gemm)) return "cublas-lt-matmul";
  return config.dot_dimension_numbers.lhs_batch_dimensions.empty() ? "cublas-gemm" : "cublas-batch-gemm";
}

absl::Status Replace(Rewrite& rw, HloInstruction* old_inst, HloInstruction* replacement) {
  if (replacement == nullptr) return absl::InternalError(absl::StrCat("cublas-gemm-rewriter: could not rewrite ", old_inst->name()));
  if (rw.trace_after != nullptr) rw.trace_after->push_back(PrintInstruction(*replacement, RuleTraceOptions()));
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> ok = ReplaceInstruction(old_inst, replacement, options);
  if (!ok.ok()) return ok.status();
  if (!*ok) return absl::InternalError(absl::StrCat("cublas-gemm-rewriter: could not replace ", old_inst->name()));
  rw.changed = true;
  return absl::OkStatus();
}

absl::Status HandleDot(Rewrite& rw, HloInstruction* dot) {
  if (!IsGemmCandidate(dot)) return absl::OkStatus();
  if (StaysForClassicalEmitters(dot, rw.options.size_threshold)) return absl::OkStatus();
  const PrecisionConfig& precision = dot->attrs().precision_config;
  if (!AlgorithmSupportedByCublas(precision.algorithm)) return absl::OkStatus();
  DotDimensionNumbers dn = *dot->attrs().dot_dimension_numbers;
  HloInstruction* lhs = dot->operand(0);
  HloInstruction* rhs = dot->operand(1);
  const Shape& out_shape = dot->shape();
  ExpanderBuilder b(rw.comp, rw.names, dot);
  b.set_metadata(&dot->attrs().metadata);
  std::string algorithm = precision.algorithm;
  // ALG_DOT_BF16_BF16_F32: bf16 operands, f32 accumulation (TurnDotIntoConvertAndDotForBF16BF16F32).
  if (algorithm == "dot_bf16_bf16_f32") {
    if (lhs->shape().element_type() != PT::BF16) lhs = b.Convert(lhs, PT::BF16);
    if (rhs->shape().element_type() != PT::BF16) rhs = b.Convert(rhs, PT::BF16);
    algorithm.clear();
    if (!b.ok()) return b.status();
  }
  const PT a_t = lhs->shape().element_type(), b_t = rhs->shape().element_type(), out_t = out_shape.element_type();
  int64_t batch_count = 1;
  for (int64_t d : dn.lhs_batch_dimensions) batch_count *= lhs->shape().dimensions(d);
  // GetNonFp8GemmCustomCallTarget: cuBLASLt where its type table and limits allow.
  std::string_view target;
  if (rw.options.enable_cublaslt && TypesSupportedByCublasLt(a_t, b_t, out_t) && batch_count <= 65535) {
    target = kCublasLtMatmulCallTarget;
  } else if (TypesSupportedByLegacyCublas(a_t, b_t, out_t)) {
    target = kGemmCallTarget;
  } else {
    b.Discard();
    return absl::OkStatus();
  }

  // Operands cuBLAS can address with its strides.
  const bool lhs_vector = lhs->shape().rank() == static_cast<int64_t>(dn.lhs_batch_dimensions.size()) + 1;
  const bool rhs_vector = rhs->shape().rank() == static_cast<int64_t>(dn.rhs_batch_dimensions.size()) + 1;
  lhs = CanonicalOperand(b, lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions, /*contracting_is_col=*/true);
  rhs = CanonicalOperand(b, rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions, /*contracting_is_col=*/false);
  if (!b.ok()) return b.status();

  GemmBackendConfig config;
  config.dot_dimension_numbers = dn;
  config.operand_precision.clear();
  for (int i = 0; i < 2; ++i)
    config.operand_precision.push_back(
        PrecisionName(i < static_cast<int>(precision.operand_precision.size()) ? precision.operand_precision[i]
                                                                               : Precision::kDefault));
  config.algorithm = AlgorithmName(algorithm);
  const FrontendAttributes& fa = dot->attrs().frontend_attributes;
  config.grad_x = fa.count("grad_x") && fa.at("grad_x") == "true";
  config.grad_y = fa.count("grad_y") && fa.at("grad_y") == "true";
  const int64_t nb = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
  auto stride = [nb](const Shape& s, bool vector) {
    return vector ? s.dimensions(nb) : s.dimensions(nb) * s.dimensions(nb + 1);
  };
  config.lhs_stride = stride(lhs->shape(), lhs_vector);
  config.rhs_stride = stride(rhs->shape(), rhs_vector);

  // The output: [batch..., rows..., cols...] must be addressable too; otherwise the GEMM writes
  // the default layout and a copy gives the dot's.
  DimVec ob, orows, ocols;
  const int64_t lrows = lhs_vector ? 0 : 1;
  for (int64_t i = 0; i < out_shape.rank(); ++i) (i < nb ? ob : i < nb + lrows ? orows : ocols).push_back(i);
  Shape gemm_shape = out_shape;
  const bool out_ok = IsMatrixLayoutRepresentable(out_shape, ob, orows, ocols);
  if (!out_ok) gemm_shape.SetDefaultLayout();

  auto call = std::make_unique<HloInstruction>(HloOpcode::kCustomCall, gemm_shape, "custom-call");
  call->AppendOperand(lhs);
  call->AppendOperand(rhs);
  call->mutable_attrs().custom_call_target = std::string(target);
  call->mutable_attrs().backend_config = GemmBackendConfigToJson(config);
  call->mutable_attrs().frontend_attributes = fa;
  HloInstruction* gemm = b.Add(std::move(call));
  HloInstruction* result = gemm;
  if (!out_ok && gemm != nullptr) {
    auto copy = std::make_unique<HloInstruction>(HloOpcode::kCopy, out_shape, "copy");
    copy->AppendOperand(gemm);
    result = b.Add(std::move(copy));
  }
  if (!b.ok()) {
    absl::Status st = b.status();
    b.Discard();
    return st;
  }
  return Replace(rw, dot, result);
}

absl::Status AddWorkspace(Rewrite& rw, HloInstruction* gemm) {
  const bool lt = IsLtMatmul(gemm);
  if (!lt && !IsLegacyGemm(gemm)) return absl::OkStatus();
  absl::StatusOr<GemmBackendConfig> config = Config(gemm);
  if (!config.ok()) return config.status();
  const Shape& shape = gemm->shape();
  if (lt) {
    const size_t outputs = 1 + (EpilogueHasAux(config->epilogue) ? 1 : 0) + (config->damax_output ? 1 : 0);
    if (!shape.IsArray() && !(shape.IsTuple() && shape.tuple_shapes().size() == outputs)) return absl::OkStatus();
  } else if (!shape.IsArray()) {
    return absl::OkStatus();
  }
  // The profile's cublas_workspace_bytes (XLA's GemmConfig::kDefaultWorkspace, kHopperWorkspace).
  int64_t workspace = (rw.pass->profile != nullptr ? rw.pass->profile->tuning : Tuning()).Get(TuningKnob::kCublasWorkspaceBytes);
  if (!lt) {
    // Legacy cuBLAS at worst transposes its operands into the workspace.
    int64_t bytes = 0;
    for (const HloInstruction* op : gemm->operands()) bytes += op->shape().IsArray() ? op->shape().byte_size() : 0;
    workspace = std::min(workspace, bytes);
  }
  if (shape.IsTuple()) {
    if (gemm->IsRoot() || gemm->user_count() == 0) return absl::OkStatus();
    for (const HloInstruction* user : gemm->users())
      if (user->opcode() != HloOpcode::kGetTupleElement) return absl::OkStatus();
  }
  std::vector<Shape> outputs = shape.IsArray() ? std::vector<Shape>{shape} : shape.tuple_shapes();
  outputs.push_back(Shape(PT::S8, {workspace}));
  std::unique_ptr<HloInstruction> clone = CloneInstruction(*gemm, gemm->operands());
  clone->mutable_shape() = Shape::Tuple(outputs);
  if (!clone->attrs().output_to_operand_aliasing.empty())
    clone->mutable_attrs().output_to_operand_aliasing = {OutputOperandAlias{{0}, 2, {}}};
  const std::string name = gemm->name();
  ExpanderBuilder b(rw.comp, rw.names, gemm);
  b.set_metadata(&gemm->attrs().metadata);
  HloInstruction* call = b.Add(std::move(clone));
  if (!b.ok()) return b.status();
  if (shape.IsTuple()) {
    // Every user is a get-tuple-element (checked above); the last replacement removes `gemm`.
    std::vector<HloInstruction*> users = gemm->users();
    for (HloInstruction* user : users) {
      ExpanderBuilder ub(rw.comp, rw.names, user);
      HloInstruction* gte = ub.GetTupleElement(call, user->attrs().tuple_index);
      if (!ub.ok()) return ub.status();
      if (auto st = Replace(rw, user, gte); !st.ok()) return st;
    }
  } else {
    ExpanderBuilder gb(rw.comp, rw.names, gemm);
    HloInstruction* gte = gb.GetTupleElement(call, 0);
    if (!gb.ok()) return gb.status();
    if (auto st = Replace(rw, gemm, gte); !st.ok()) return st;
  }
  // The call keeps the GEMM's name (XLA clones it in place).
  const bool taken = rw.name_counts != nullptr ? (*rw.name_counts)[name] > 0
                                               : rw.comp->GetInstructionWithName(name) != nullptr;
  if (!taken) {
    call->set_name(name);
    if (rw.name_counts != nullptr) ++(*rw.name_counts)[name];
  }
  rw.changed = true;
  return absl::OkStatus();
}

// The epilogue patterns (rules/library/GemmEpilogues.td) this run tries, by root opcode, in
// file order: those the pipeline entry's `rules: {enable, disable}` leave on.
std::vector<std::vector<const LibraryPatternInfo*>> PatternsByOpcode(const PassContext& context) {
  std::vector<std::vector<const LibraryPatternInfo*>> by_opcode(kNumOpcodes);
  std::vector<const char*> family;
  for (const LibraryPatternInfo* p : GeneratedTables::Global().library_patterns) {
    if (std::string_view(p->pass) != GemmRewriter::kName) continue;
    family.push_back(p->name);
    if (p->group[0] != '\0') family.push_back(p->group);
  }
  const RecordSwitch on(context.enabled_rules, context.disabled_rules, family);
  for (const LibraryPatternInfo* p : GeneratedTables::Global().library_patterns)
    if (std::string_view(p->pass) == GemmRewriter::kName && p->opcode >= 0 && p->opcode < kNumOpcodes &&
        on.On(p->name, p->group))
      by_opcode[p->opcode].push_back(p);
  return by_opcode;
}

// Tries `patterns` (the root opcode's) on `inst`; the first that changes the module wins.
// --trace-rules and --dump-html see each firing as they see a rewrite rule's.
absl::Status RunPatterns(Rewrite& rw, HloInstruction* inst, const std::vector<const LibraryPatternInfo*>& patterns,
                         PassContext& context) {
  if (patterns.empty()) return absl::OkStatus();
  const bool record = context.trace_rules || context.recorder != nullptr;
  const std::string before = record ? PrintInstruction(*inst, RuleTraceOptions()) : std::string();
  for (const LibraryPatternInfo* p : patterns) {
    std::vector<std::string> after;
    rw.trace_after = record ? &after : nullptr;
    absl::Status st = p->fn(rw, inst);
    rw.trace_after = nullptr;
    if (!st.ok()) return st;
    if (!rw.changed) continue;
    if (context.trace_rules) {
      std::ostream& trace = context.trace_out != nullptr ? *context.trace_out : std::cerr;
      trace << "[" << GemmRewriter::kName << "] " << p->name << " (" << p->file << ":" << p->line << ")\n";
      trace << "  before: " << before << "\n";
      for (const std::string& a : after) trace << "  after:  " << a << "\n";
    }
    if (context.recorder != nullptr)
      context.recorder->firings.push_back(
          {context.recorder->current_pass(), p->name, p->file, p->line, before, absl::StrJoin(after, "\n")});
    return absl::OkStatus();
  }
  return absl::OkStatus();
}

}  // namespace library::gemm

absl::StatusOr<bool> GemmRewriter::Run(HloModule& module, PassContext& context) {
  if (!library::TargetsGpu(context)) return false;
  using namespace library::gemm;  // NOLINT: this pass's own helpers
  NameUniquer names = InstructionNameUniquer(module);
  const std::vector<std::vector<const LibraryPatternInfo*>> patterns = PatternsByOpcode(context);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    Rewrite rw;
    rw.comp = comp;
    rw.names = &names;
    rw.pass = &context;
    rw.options = options_;
    // XLA's DfsHloRewriteVisitor: operands before users; a handler may replace the instruction
    // it visits (and remove operands that die), so each visit first checks it is still here.
    // Removals are reported as they happen: rescanning the computation after each rewrite
    // made the pass quadratic (a transformer has a few dots per layer).
    absl::flat_hash_set<const HloInstruction*> live;
    for (const auto& i : comp->instructions()) live.insert(i.get());
    comp->set_removal_observer([&live](const HloInstruction* gone) { live.erase(gone); });
    struct StopObserving {
      HloComputation* comp;
      ~StopObserving() { comp->set_removal_observer(nullptr); }
    } stop{comp};
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      if (!live.contains(inst)) continue;
      const bool before = rw.changed;
      rw.changed = false;
      if (inst->opcode() == HloOpcode::kDot) {
        if (absl::Status st = HandleDot(rw, inst); !st.ok()) return st;
      } else if (absl::Status st = RunPatterns(rw, inst, patterns[static_cast<int>(inst->opcode())], context); !st.ok()) {
        return st;
      }
      rw.changed |= before;
    }
    std::vector<HloInstruction*> gemms;
    for (const auto& i : comp->instructions())
      if (IsGemm(i.get())) gemms.push_back(i.get());
    // Every instruction added below is named by `names` (never a name already here) or takes
    // the name of the GEMM it replaces, so counting removals and those renames keeps the
    // counts exact.
    absl::flat_hash_map<std::string, int64_t> name_counts;
    for (const auto& i : comp->instructions()) ++name_counts[i->name()];
    comp->set_removal_observer([&name_counts](const HloInstruction* gone) { --name_counts[gone->name()]; });
    rw.name_counts = &name_counts;
    for (HloInstruction* g : gemms)
      if (auto st = AddWorkspace(rw, g); !st.ok()) return st;
    rw.name_counts = nullptr;
    changed |= rw.changed;
  }
  return changed;
}

}  // namespace hloc
