// cublas-gemm-rewriter: what an existing GEMM call absorbs (XLA's GemmRewriterVisitor
// HandleMultiply / HandleAdd / HandleMaximum): alpha scaling, vector bias (BIAS epilogue),
// matrix addend (beta = 1 and a C operand), ReLU and tanh-GELU epilogues, and (hloc) a narrowing
// convert of the result. Each is a LibraryPattern record in rules/library/GemmEpilogues.td (its
// summary, root op, constraints, epilogues and XLA reference; a pipeline switches it by name);
// the record's constraints are the LibraryConstraint functions below, its Fn one Absorb*
// function. Each fusion keeps the value the HLO computed; where XLA would change it (alpha after
// a bias epilogue, a vector bias shorter than a padded GEMM, a matrix C beside a bias epilogue)
// hloc refuses or pads.
#include <algorithm>
#include <cmath>
#include <complex>

#include "absl/strings/str_cat.h"
#include "passes/library/gemm_rewriter_internal.h"

namespace hloc::library::gemm {
namespace {

using expanders::ExpanderBuilder;

bool Is(const HloInstruction* i, HloOpcode op) { return i != nullptr && i->opcode() == op; }
bool OneUser(const HloInstruction* i) { return i != nullptr && UniqueUserCount(i) == 1; }

// A rank-0 constant (XLA's m::ConstantScalar) under a broadcast; its value.
const HloInstruction* BroadcastScalarConstant(const HloInstruction* i) {
  if (!Is(i, HloOpcode::kBroadcast) || i->operand_count() != 1) return nullptr;
  const HloInstruction* c = i->operand(0);
  if (!Is(c, HloOpcode::kConstant) || !c->attrs().literal || c->shape().rank() != 0) return nullptr;
  return c;
}

// XLA's BcastConstScalarNear: within 128 epsilons of the type.
bool BroadcastNear(const HloInstruction* i, double expected) {
  const HloInstruction* c = BroadcastScalarConstant(i);
  if (c == nullptr) return false;
  double eps;
  switch (c->shape().element_type()) {
    case PrimitiveType::F16: eps = 128 * 0.0009765625; break;
    case PrimitiveType::BF16: eps = 128 * 0.0078125; break;
    case PrimitiveType::F32: eps = 128 * 1.1920928955078125e-07; break;
    case PrimitiveType::F64: eps = 128 * 2.220446049250313e-16; break;
    default: return false;
  }
  const double actual = c->attrs().literal->GetDouble(0);
  return std::fabs(actual - expected) < std::fabs(actual + expected) * eps;
}
bool BroadcastExactly(const HloInstruction* i, double v) {
  const HloInstruction* c = BroadcastScalarConstant(i);
  return c != nullptr && !IsComplex(c->shape().element_type()) && c->attrs().literal->GetDouble(0) == v;
}

// op(a, b) in either order with the predicates; calls `bind` with the matched pair.
template <typename PA, typename PB>
bool AnyOrder(const HloInstruction* i, HloOpcode op, PA&& pa, PB&& pb) {
  if (!Is(i, op) || i->operand_count() != 2) return false;
  return (pa(i->operand(0)) && pb(i->operand(1))) || (pa(i->operand(1)) && pb(i->operand(0)));
}

// x, slice(gemm) or bitcast(gemm) around a cuBLASLt call: the call and the wrapper.
struct Wrapped {
  HloInstruction* gemm = nullptr;
  HloInstruction* wrapper = nullptr;  // the slice or bitcast, if any
};
Wrapped PeelSliceOrBitcast(HloInstruction* x, bool lt_only) {
  Wrapped w;
  auto ok = [&](const HloInstruction* g) { return lt_only ? IsLtMatmul(g) : IsGemm(g); };
  if ((Is(x, HloOpcode::kSlice) || Is(x, HloOpcode::kBitcast)) && ok(x->operand(0))) {
    w.wrapper = x;
    w.gemm = x->operand(0);
  } else if (ok(x)) {
    w.gemm = x;
  }
  return w;
}

// The wrapper (slice / bitcast) re-applied to a new GEMM whose element type may differ.
HloInstruction* Rewrap(Rewrite& rw, const HloInstruction* wrapper, HloInstruction* gemm, const HloInstruction* before) {
  if (wrapper == nullptr || gemm == nullptr) return gemm;
  HloInstruction* ops[] = {gemm};
  std::unique_ptr<HloInstruction> clone = CloneInstruction(*wrapper, ops);
  clone->mutable_shape().set_element_type(gemm->shape().element_type());
  ExpanderBuilder b(rw.comp, rw.names, before);
  return b.Add(std::move(clone));
}

absl::Status FuseGelu(Rewrite& rw, HloInstruction* multiply, HloInstruction* gemm, HloInstruction* wrapper) {
  if (!SupportsEpilogueFusion(gemm->shape().element_type())) return absl::OkStatus();
  // The GELU pattern itself uses the value four times; more users want the pre-activation too.
  const bool has_aux = UniqueUserCount(gemm) > 4;
  if (has_aux && wrapper != nullptr) return absl::OkStatus();  // an aux output through a slice is not modelled
  auto config = Config(gemm);
  if (!config.ok()) return config.status();
  if (config->epilogue == GemmEpilogue::kDefault) config->epilogue = has_aux ? GemmEpilogue::kGeluAux : GemmEpilogue::kGelu;
  else if (config->epilogue == GemmEpilogue::kBias) config->epilogue = has_aux ? GemmEpilogue::kBiasGeluAux : GemmEpilogue::kBiasGelu;
  else return absl::OkStatus();
  const Shape shape = has_aux ? Shape::Tuple({gemm->shape(), gemm->shape()}) : gemm->shape();
  HloInstruction* fused = CloneGemm(rw, gemm, gemm->operands(), shape, *config, gemm, GemmName(gemm, *config));
  if (!has_aux) return Replace(rw, multiply, Rewrap(rw, wrapper, fused, multiply));
  if (fused == nullptr) return absl::InternalError("cublas-gemm-rewriter: GELU_AUX call does not check");
  ExpanderBuilder b(rw.comp, rw.names, gemm);
  HloInstruction* out = b.GetTupleElement(fused, 0);
  HloInstruction* aux = b.GetTupleElement(fused, 1);
  if (!b.ok()) return b.status();
  // Users outside the GELU pattern read the pre-activation value: the aux output.
  std::vector<const HloInstruction*> pattern = {multiply};
  for (size_t i = 0; i < pattern.size(); ++i)
    for (const HloInstruction* op : pattern[i]->operands())
      if (op != gemm && std::find(pattern.begin(), pattern.end(), op) == pattern.end()) pattern.push_back(op);
  std::vector<HloInstruction*> users = gemm->users();
  for (HloInstruction* user : users) {
    if (std::find(pattern.begin(), pattern.end(), user) != pattern.end()) continue;
    for (int64_t k = 0; k < user->operand_count(); ++k)
      if (user->operand(k) == gemm) user->ReplaceOperandWith(k, aux);
  }
  if (gemm->IsRoot()) rw.comp->set_root_instruction(aux);
  return Replace(rw, multiply, out);
}

// x * (0.5 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * (x * (x * x)))))), operands in any order
// (XLA's approximate-GELU pattern), with x a cuBLASLt call or a slice/bitcast of one.
absl::Status TryGelu(Rewrite& rw, HloInstruction* multiply) {
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = multiply->operand(i);
    HloInstruction* cdf = multiply->operand(1 - i);
    Wrapped w = PeelSliceOrBitcast(x, /*lt_only=*/true);
    if (w.gemm == nullptr || !OneUser(cdf)) continue;
    auto is_x = [x](const HloInstruction* v) { return v == x; };
    auto x_squared = [&](const HloInstruction* v) { return OneUser(v) && AnyOrder(v, HloOpcode::kMultiply, is_x, is_x); };
    auto x_cubed = [&](const HloInstruction* v) { return OneUser(v) && AnyOrder(v, HloOpcode::kMultiply, is_x, x_squared); };
    auto scaled_cube = [&](const HloInstruction* v) {
      return OneUser(v) && AnyOrder(v, HloOpcode::kMultiply, [](const HloInstruction* c) { return BroadcastNear(c, 0.044715); }, x_cubed);
    };
    auto inner = [&](const HloInstruction* v) { return OneUser(v) && AnyOrder(v, HloOpcode::kAdd, is_x, scaled_cube); };
    auto scaled = [&](const HloInstruction* v) {
      return OneUser(v) && AnyOrder(v, HloOpcode::kMultiply,
                                    [](const HloInstruction* c) { return BroadcastNear(c, std::sqrt(M_2_PI)); }, inner);
    };
    auto tanh = [&](const HloInstruction* v) { return OneUser(v) && Is(v, HloOpcode::kTanh) && scaled(v->operand(0)); };
    auto one_plus = [&](const HloInstruction* v) {
      return OneUser(v) && AnyOrder(v, HloOpcode::kAdd, [](const HloInstruction* c) { return BroadcastExactly(c, 1.0); }, tanh);
    };
    const bool match = AnyOrder(cdf, HloOpcode::kMultiply, [](const HloInstruction* c) { return BroadcastExactly(c, 0.5); },
                                one_plus);
    if (match) return FuseGelu(rw, multiply, w.gemm, w.wrapper);
  }
  return absl::OkStatus();
}

bool CanOverwriteBias(const HloInstruction* bias) {
  if (UniqueUserCount(bias) > 1) return false;
  if (bias->opcode() != HloOpcode::kParameter) return true;
  const HloComputation* comp = bias->parent();
  if (comp == nullptr || comp->parent() == nullptr || comp->parent()->entry_computation() != comp) return false;
  for (const InputOutputAlias& a : comp->parent()->config().input_output_alias)
    if (a.parameter_number == bias->attrs().parameter_number && a.parameter_index.empty()) return true;
  return false;
}

// add(OptionalBitcast(OptionalSlice(gemm)), bias) -> gemm(a, b, bias) with beta = 1.
absl::Status FuseMatrixBiasAdd(Rewrite& rw, HloInstruction* add, HloInstruction* bias, HloInstruction* gemm,
                               HloInstruction* bitcast = nullptr, HloInstruction* slice = nullptr) {
  const HloInstruction* top = bitcast ? bitcast : slice ? slice : gemm;
  if (!bias->shape().IsArray() || !bias->shape().SameDimensions(top->shape())) return absl::OkStatus();
  if (gemm->shape().element_type() == PrimitiveType::S32) return absl::OkStatus();
  if (slice != nullptr) {
    for (const SliceDimension& d : slice->attrs().slice)
      if (d.start != 0 || d.stride != 1) return absl::OkStatus();
  }
  const bool can_overwrite = CanOverwriteBias(bias);
  auto config = Config(gemm);
  if (!config.ok()) return config.status();
  // XLA also adds a matrix C to a GEMM with a BIAS epilogue (operands a, b, c, bias); hloc's GPU
  // runtime takes one addend operand, C or the bias, so it keeps such an add out of the GEMM.
  const bool supported_epilogue = config->epilogue == GemmEpilogue::kDefault;
  if (config->beta != 0 || !(IsLtMatmul(gemm) || can_overwrite) || !OneUser(gemm) || !supported_epilogue)
    return absl::OkStatus();
  config->beta = 1;
  ExpanderBuilder b(rw.comp, rw.names, add);
  HloInstruction* c = bias;
  if (bitcast != nullptr) {
    Shape s = (slice ? slice : gemm)->shape();
    s.set_element_type(bias->shape().element_type());
    auto bc = std::make_unique<HloInstruction>(HloOpcode::kBitcast, s, "bitcast");
    bc->AppendOperand(c);
    c = b.Add(std::move(bc));
  }
  if (c != nullptr && !c->shape().SameDimensions(gemm->shape())) {
    // Padded GEMM (cublas-pad-for-gemms): pad C with zeros to the GEMM's shape.
    HloInstruction* zero = b.ScalarConstant(c->shape().element_type(), 0);
    Shape s = gemm->shape();
    s.set_element_type(c->shape().element_type());
    auto pad = std::make_unique<HloInstruction>(HloOpcode::kPad, s, "pad");
    PaddingConfig pc;
    for (int64_t d = 0; d < s.rank(); ++d) pc.dimensions.push_back({0, s.dimensions(d) - c->shape().dimensions(d), 0});
    pad->mutable_attrs().padding_config = pc;
    pad->AppendOperand(c);
    pad->AppendOperand(zero);
    c = zero == nullptr ? nullptr : b.Add(std::move(pad));
  }
  if (!b.ok() || c == nullptr) {
    b.Discard();
    return absl::OkStatus();
  }
  std::vector<HloInstruction*> operands = gemm->operands();
  operands.insert(operands.begin() + 2, c);
  Shape shape = gemm->shape();
  shape.set_element_type(bias->shape().element_type());
  HloInstruction* fused = CloneGemm(rw, gemm, operands, shape, *config, add, GemmName(gemm, *config));
  if (fused != nullptr && (IsLegacyGemm(gemm) || can_overwrite))
    fused->mutable_attrs().output_to_operand_aliasing = {OutputOperandAlias{{}, 2, {}}};
  HloInstruction* result = Rewrap(rw, slice, fused, add);
  result = Rewrap(rw, bitcast, result, add);
  return Replace(rw, add, result);
}

// add(OptionalBitcast(OptionalSlice(gemm)), broadcast(vector)) -> gemm with epilogue BIAS.
absl::StatusOr<bool> FuseVectorBiasAdd(Rewrite& rw, HloInstruction* add, HloInstruction* broadcast, HloInstruction* gemm,
                                       HloInstruction* slice, HloInstruction* bitcast) {
  if (bitcast == nullptr && !broadcast->shape().SameDimensions((slice ? slice : gemm)->shape())) return false;
  if (!SupportsEpilogueFusion(gemm->shape().element_type())) return false;
  HloInstruction* bias = broadcast->operand(0);
  auto config = Config(gemm);
  if (!config.ok()) return config.status();
  const DotDimensionNumbers& dn = config->dot_dimension_numbers;
  const int64_t num_col_dims = gemm->operand(1)->shape().rank() - static_cast<int64_t>(dn.rhs_batch_dimensions.size()) -
                               static_cast<int64_t>(dn.rhs_contracting_dimensions.size());
  // beta != 0: the GEMM already has a C operand; with a bias as well hloc's runtime would read the
  // bias from C (see FuseMatrixBiasAdd), so the vector add stays outside (a fusion takes it).
  if (!OneUser(gemm) || config->epilogue != GemmEpilogue::kDefault || config->beta != 0 ||
      bias->shape().rank() != num_col_dims ||
      bias->shape().element_type() != gemm->shape().element_type())
    return false;
  // The bias must run along the most minor physical dimensions of the (bitcast) output.
  const DimVec top_m2m = MinorToMajor((bitcast ? bitcast : gemm)->shape());
  const DimVec bias_m2m = MinorToMajor(bias->shape());
  const DimVec gemm_m2m = MinorToMajor(gemm->shape());
  const std::vector<int64_t>& bdims = broadcast->attrs().dimensions;
  bool needs_pad = false;
  for (int64_t i = 0; i < num_col_dims; ++i) {
    auto it = std::find(bdims.begin(), bdims.end(), top_m2m[i]);
    if (it == bdims.end() || bias_m2m[i] != it - bdims.begin()) return false;
    // hloc: the vector must cover the GEMM's columns; a slice of a padded GEMM gets it padded.
    const int64_t want = gemm->shape().dimensions(gemm_m2m[i]), have = bias->shape().dimensions(bias_m2m[i]);
    if (want != have) {
      if (slice == nullptr || bitcast != nullptr || have > want) return false;
      needs_pad = true;
    }
  }
  HloInstruction* b_op = bias;
  if (needs_pad) {
    ExpanderBuilder b(rw.comp, rw.names, add);
    HloInstruction* zero = b.ScalarConstant(bias->shape().element_type(), 0);
    Shape s = bias->shape();
    PaddingConfig pc;
    for (int64_t i = 0; i < num_col_dims; ++i) s.mutable_dimensions()[bias_m2m[i]] = gemm->shape().dimensions(gemm_m2m[i]);
    for (int64_t d = 0; d < s.rank(); ++d) pc.dimensions.push_back({0, s.dimensions(d) - bias->shape().dimensions(d), 0});
    auto pad = std::make_unique<HloInstruction>(HloOpcode::kPad, s, "pad");
    pad->mutable_attrs().padding_config = pc;
    pad->AppendOperand(bias);
    pad->AppendOperand(zero);
    b_op = zero == nullptr ? nullptr : b.Add(std::move(pad));
    if (!b.ok() || b_op == nullptr) {
      b.Discard();
      return false;
    }
  }
  std::vector<HloInstruction*> operands = gemm->operands();
  operands.push_back(b_op);
  config->epilogue = GemmEpilogue::kBias;
  HloInstruction* fused = CloneGemm(rw, gemm, operands, gemm->shape(), *config, add, GemmName(gemm, *config));
  HloInstruction* result = Rewrap(rw, slice, fused, add);
  result = Rewrap(rw, bitcast, result, add);
  if (auto st = Replace(rw, add, result); !st.ok()) return st;
  return true;
}

// bitcast(new_add(gemm, bitcast(addend))) for add(bitcast(gemm), addend): moves the add to the
// GEMM's shape so the matrix-bias fusion below can take it. Returns the new add.
absl::StatusOr<HloInstruction*> SinkAddBelowBitcast(Rewrite& rw, HloInstruction* add, HloInstruction* gemm,
                                                    HloInstruction* addend) {
  ExpanderBuilder b(rw.comp, rw.names, add);
  Shape s = gemm->shape();
  s.set_element_type(addend->shape().element_type());
  auto bc = std::make_unique<HloInstruction>(HloOpcode::kBitcast, s, "bitcast");
  bc->AppendOperand(addend);
  HloInstruction* cast_addend = b.Add(std::move(bc));
  HloInstruction* new_add = b.Add(gemm, cast_addend);
  HloInstruction* back = nullptr;
  if (new_add != nullptr) {
    auto bc2 = std::make_unique<HloInstruction>(HloOpcode::kBitcast, add->shape(), "bitcast");
    bc2->AppendOperand(new_add);
    back = b.Add(std::move(bc2));
  }
  if (!b.ok()) {
    b.Discard();
    return nullptr;
  }
  if (auto st = Replace(rw, add, back); !st.ok()) return st;
  return new_add;
}

}  // namespace

// ---- LibraryConstraint functions (rules/library/GemmEpilogues.td) ----------------------------

bool ReadsGemmCall(const Rewrite&, const HloInstruction* x) {
  for (const HloInstruction* op : x->operands()) {
    const HloInstruction* g = op;
    if (Is(g, HloOpcode::kBitcast) || Is(g, HloOpcode::kConvert)) g = g->operand(0);
    if (Is(g, HloOpcode::kSlice)) g = g->operand(0);
    if (IsGemm(op) || IsGemm(g)) return true;
  }
  return false;
}

bool ReadsLtMatmul(const Rewrite&, const HloInstruction* x) {
  for (const HloInstruction* op : x->operands()) {
    const HloInstruction* g = op;
    if (Is(g, HloOpcode::kBitcast)) g = g->operand(0);
    if (Is(g, HloOpcode::kSlice)) g = g->operand(0);
    if (IsLtMatmul(op) || IsLtMatmul(g)) return true;
  }
  return false;
}

bool HasBroadcastOperand(const Rewrite&, const HloInstruction* x) {
  for (const HloInstruction* op : x->operands())
    if (Is(op, HloOpcode::kBroadcast)) return true;
  return false;
}

bool HasScalarConstantBroadcastOperand(const Rewrite&, const HloInstruction* x) {
  for (const HloInstruction* op : x->operands())
    if (BroadcastScalarConstant(op) != nullptr) return true;
  return false;
}

bool HasZeroBroadcastOperand(const Rewrite&, const HloInstruction* x) {
  for (const HloInstruction* op : x->operands())
    if (IsBroadcastOfScalar(op, 0.0)) return true;
  return false;
}

bool NarrowsFloat(const Rewrite&, const HloInstruction* x) {
  if (x->operand_count() != 1) return false;
  const PrimitiveType from = x->operand(0)->shape().element_type(), to = x->shape().element_type();
  return IsFloatingPoint(from) && IsFloatingPoint(to) && BitWidth(to) < BitWidth(from);
}

bool FuseBiasOn(const Rewrite& rw) { return rw.options.fuse_bias; }
bool FuseOutputConvertOn(const Rewrite& rw) { return rw.options.fuse_output_convert; }

// ---- The patterns' Fns -------------------------------------------------------------------------

absl::Status AbsorbAlpha(Rewrite& rw, HloInstruction* multiply) {
  for (int i = 0; i < 2; ++i) {
    HloInstruction* gemm = multiply->operand(i);
    const HloInstruction* bcast = multiply->operand(1 - i);
    const HloInstruction* alpha = BroadcastScalarConstant(bcast);
    if (!IsGemm(gemm) || !OneUser(gemm) || alpha == nullptr || !OneUser(bcast)) continue;
    // cuBLAS's integer GEMMs take fixed alpha/beta.
    if (gemm->shape().element_type() == PrimitiveType::S32) return absl::OkStatus();
    auto config = Config(gemm);
    if (!config.ok()) return config.status();
    // hloc: alpha scales A*B only, so it cannot follow a bias epilogue (XLA checks beta only).
    if (config->beta != 0 || config->epilogue != GemmEpilogue::kDefault) return absl::OkStatus();
    const Literal& l = *alpha->attrs().literal;
    const std::complex<double> a = IsComplex(l.element_type()) ? l.GetComplex(0) : std::complex<double>(l.GetDouble(0), 0);
    const std::complex<double> updated = a * std::complex<double>(config->alpha_real, config->alpha_imag);
    if (updated.imag() != 0 && !IsComplex(gemm->shape().element_type())) return absl::OkStatus();
    config->alpha_real = updated.real();
    config->alpha_imag = updated.imag();
    SetConfig(gemm, *config);
    return Replace(rw, multiply, gemm);
  }
  return absl::OkStatus();
}

absl::Status AbsorbGelu(Rewrite& rw, HloInstruction* multiply) { return TryGelu(rw, multiply); }

// HandleAdd's first step (the record's FuseBiasOn constraint is XLA's BiasMode).
absl::Status AbsorbVectorBias(Rewrite& rw, HloInstruction* add) {
  if (add->operand_count() != 2) return absl::OkStatus();
  // 1. Vector bias: add(OptionalBitcast(OptionalSlice(lt_gemm)), broadcast(vector)).
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = add->operand(i);
    HloInstruction* bcast = add->operand(1 - i);
    if (!Is(bcast, HloOpcode::kBroadcast) || !OneUser(x)) continue;
    HloInstruction* bitcast = nullptr;
    HloInstruction* slice = nullptr;
    HloInstruction* g = x;
    if (Is(g, HloOpcode::kBitcast) && OneUser(g)) { bitcast = g; g = g->operand(0); }
    if (Is(g, HloOpcode::kSlice) && OneUser(g)) { slice = g; g = g->operand(0); }
    if (!IsLtMatmul(g) || !OneUser(g)) continue;
    auto fused = FuseVectorBiasAdd(rw, add, bcast, g, slice, bitcast);
    if (!fused.ok()) return fused.status();
    if (*fused) return absl::OkStatus();
  }
  return absl::OkStatus();
}

// HandleAdd's later steps, tried when the vector bias did not fire.
absl::Status AbsorbMatrixAddend(Rewrite& rw, HloInstruction* add) {
  if (add->operand_count() != 2) return absl::OkStatus();
  HloInstruction* instr = add;
  // 2./3. add(bitcast(gemm), addend) -> bitcast(add(gemm, bitcast(addend))), then fuse below.
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = instr->operand(i);
    HloInstruction* addend = instr->operand(1 - i);
    if (!Is(x, HloOpcode::kBitcast) || !OneUser(x) || !IsGemm(x->operand(0)) || !OneUser(x->operand(0))) continue;
    const bool is_bcast = Is(addend, HloOpcode::kBroadcast);
    if (is_bcast && (!IsLtMatmul(x->operand(0)) || !OneUser(addend))) continue;
    auto new_add = SinkAddBelowBitcast(rw, instr, x->operand(0), addend);
    if (!new_add.ok()) return new_add.status();
    if (*new_add != nullptr) instr = *new_add;
    break;
  }
  // 4. Matrix bias, also through a convert of the result: add(OptionalConvert(gemm), c).
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = instr->operand(i);
    HloInstruction* bias = instr->operand(1 - i);
    if (Is(bias, HloOpcode::kBroadcast)) continue;
    HloInstruction* g = x;
    if (Is(g, HloOpcode::kConvert) && OneUser(g)) g = g->operand(0);
    if (!IsGemm(g) || !OneUser(g)) continue;
    const PrimitiveType a = g->operand(0)->shape().element_type(), b = g->operand(1)->shape().element_type();
    const PrimitiveType out = bias->shape().element_type();
    const bool types_ok = IsLegacyGemm(g) ? TypesSupportedByLegacyCublas(a, b, out) : TypesSupportedByCublasLt(a, b, out);
    // A mixed-type GEMM's output is only taken when nothing else reads it at the GEMM's type.
    const bool no_consumer = instr->shape().element_type() == g->shape().element_type() || instr->user_count() == 0 ||
                             (UniqueUserCount(instr) == 1 && instr->users()[0]->opcode() == HloOpcode::kTuple &&
                              instr->users()[0]->user_count() == 0);
    if (types_ok && no_consumer) return FuseMatrixBiasAdd(rw, instr, bias, g);
  }
  // 5. Matrix bias through a slice and/or bitcast.
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = instr->operand(i);
    HloInstruction* bias = instr->operand(1 - i);
    if (Is(bias, HloOpcode::kBroadcast) || !OneUser(x)) continue;
    HloInstruction* bitcast = nullptr;
    HloInstruction* slice = nullptr;
    HloInstruction* g = x;
    if (Is(g, HloOpcode::kBitcast)) { bitcast = g; g = g->operand(0); }
    if (Is(g, HloOpcode::kSlice)) { slice = g; g = g->operand(0); }
    if ((bitcast == nullptr && slice == nullptr) || !IsGemm(g) || !OneUser(g) || IsF8OrF4(bias->shape().element_type()))
      continue;
    if (bitcast != nullptr && slice != nullptr && !OneUser(slice)) continue;
    return FuseMatrixBiasAdd(rw, instr, bias, g, bitcast, slice);
  }
  return absl::OkStatus();
}

absl::Status AbsorbRelu(Rewrite& rw, HloInstruction* maximum) {
  for (int i = 0; i < 2; ++i) {
    HloInstruction* x = maximum->operand(i);
    if (!IsBroadcastOfScalar(maximum->operand(1 - i), 0.0) || !OneUser(x)) continue;
    Wrapped w = PeelSliceOrBitcast(x, /*lt_only=*/true);
    if (w.gemm == nullptr || !SupportsEpilogueFusion(w.gemm->shape().element_type()) || !OneUser(w.gemm)) continue;
    auto config = Config(w.gemm);
    if (!config.ok()) return config.status();
    if (config->epilogue == GemmEpilogue::kDefault) config->epilogue = GemmEpilogue::kRelu;
    else if (config->epilogue == GemmEpilogue::kBias) config->epilogue = GemmEpilogue::kBiasRelu;
    else return absl::OkStatus();
    HloInstruction* fused = CloneGemm(rw, w.gemm, w.gemm->operands(), w.gemm->shape(), *config, maximum,
                                      GemmName(w.gemm, *config));
    return Replace(rw, maximum, Rewrap(rw, w.wrapper, fused, maximum));
  }
  return absl::OkStatus();
}

// The record's FuseOutputConvertOn constraint is the pass's option.
absl::Status AbsorbOutputConvert(Rewrite& rw, HloInstruction* convert) {
  HloInstruction* gemm = convert->operand(0);
  if (!IsGemm(gemm) || !OneUser(gemm) || !gemm->shape().IsArray()) return absl::OkStatus();
  const PrimitiveType from = gemm->shape().element_type(), to = convert->shape().element_type();
  // Only a narrowing float convert: the GEMM then rounds once, straight to the narrower type.
  if (!IsFloatingPoint(from) || !IsFloatingPoint(to) || BitWidth(to) >= BitWidth(from)) return absl::OkStatus();
  auto config = Config(gemm);
  if (!config.ok()) return config.status();
  // C and the bias vector would have to change type with D.
  if (config->beta != 0 || EpilogueAddsBias(config->epilogue) || EpilogueHasAux(config->epilogue)) return absl::OkStatus();
  const PrimitiveType a = gemm->operand(0)->shape().element_type(), b = gemm->operand(1)->shape().element_type();
  const bool ok = IsLtMatmul(gemm) ? TypesSupportedByCublasLt(a, b, to) : TypesSupportedByLegacyCublas(a, b, to);
  if (!ok) return absl::OkStatus();
  Shape shape = gemm->shape();
  shape.set_element_type(to);
  HloInstruction* fused = CloneGemm(rw, gemm, gemm->operands(), shape, *config, convert, gemm->name());
  return Replace(rw, convert, fused);
}

}  // namespace hloc::library::gemm
