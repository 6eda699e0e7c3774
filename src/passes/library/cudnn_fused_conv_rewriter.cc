#include "passes/library/cudnn_fused_conv_rewriter.h"

#include <functional>

#include "absl/container/flat_hash_set.h"

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/library_calls.h"
#include "passes/library/library_util.h"

namespace hloc {
namespace {

using expanders::ExpanderBuilder;

bool IsConvCall(const HloInstruction* i) {
  return library::IsCustomCall(i, kCudnnConvForwardCallTarget) ||
         library::IsCustomCall(i, kCudnnConvBiasActivationForwardCallTarget);
}

// Depthwise: as many feature groups as input features.
bool IsNonDepthwiseConvCall(const HloInstruction* i) {
  if (!IsConvCall(i) || !i->shape().IsTuple() || i->operand_count() < 2 || !i->attrs().convolution_dimension_numbers)
    return false;
  const int64_t groups = i->attrs().feature_group_count;
  if (groups == 1) return true;
  const int64_t features = i->operand(0)->shape().dimensions(i->attrs().convolution_dimension_numbers->input_feature_dimension);
  return features != groups;
}

// gte(conv, 0) of a non-depthwise conv call that is the conv's only user, and only used once.
HloInstruction* ConvOfResult(const HloInstruction* gte) {
  if (gte == nullptr || gte->opcode() != HloOpcode::kGetTupleElement || gte->attrs().tuple_index != 0 ||
      library::UniqueUserCount(gte) != 1)
    return nullptr;
  HloInstruction* conv = gte->operand(0);
  if (!IsNonDepthwiseConvCall(conv) || library::UniqueUserCount(conv) != 1) return nullptr;
  return conv;
}

// XLA's IsLosslesslyConvertibleTo.
bool LosslesslyConvertible(const HloInstruction* i, PrimitiveType to) {
  const PrimitiveType from = i->shape().element_type();
  if (from == to) return true;
  if (i->opcode() == HloOpcode::kConvert && i->operand(0)->shape().element_type() == to)
    return expanders::FloatCastPreservesValues(to, from) || (IsIntegral(to) && IsFloatingPoint(from) && BitWidth(to) < BitWidth(from));
  if (i->opcode() == HloOpcode::kConstant && i->attrs().literal && i->shape().IsArray()) {
    const Literal& l = *i->attrs().literal;
    Literal back(l.shape());
    Literal mid(Shape(to, l.shape().dimensions()));
    for (int64_t e = 0; e < l.element_count(); ++e) {
      mid.SetDouble(e, l.GetDouble(e));
      back.SetDouble(e, mid.GetDouble(e));
      if (back.GetRawBits(e) != l.GetRawBits(e)) return false;
    }
    return true;
  }
  if (i->opcode() == HloOpcode::kBroadcast || i->opcode() == HloOpcode::kReshape || i->opcode() == HloOpcode::kTranspose)
    return LosslesslyConvertible(i->operand(0), to);
  return false;
}

CudnnConvBackendConfig ConfigOf(const HloInstruction* conv) {
  auto c = ParseCudnnConvBackendConfig(conv->attrs().backend_config);
  return c.ok() ? *c : CudnnConvBackendConfig{};
}

struct Fuser {
  HloComputation* comp;
  NameUniquer* names;
  bool changed = false;

  absl::Status Replace(HloInstruction* old_inst, HloInstruction* replacement) {
    if (replacement == nullptr) return absl::InternalError("cudnn-fused-convolution-rewriter: could not build a call");
    ReplaceOptions options;
    options.relay_control_dependency = true;
    absl::StatusOr<bool> ok = ReplaceInstruction(old_inst, replacement, options);
    if (!ok.ok()) return ok.status();
    if (!*ok) return absl::InternalError(absl::StrCat("cudnn-fused-convolution-rewriter: could not replace ", old_inst->name()));
    changed = true;
    return absl::OkStatus();
  }

  // A copy of `conv` with `operands`, `target`, `config`, placed before `before`; its gte(0).
  HloInstruction* Clone(HloInstruction* conv, std::vector<HloInstruction*> operands, std::string_view target,
                        const CudnnConvBackendConfig& config, const HloInstruction* before) {
    std::unique_ptr<HloInstruction> c = CloneInstruction(*conv, operands);
    c->mutable_attrs().custom_call_target = std::string(target);
    c->mutable_attrs().backend_config = CudnnConvBackendConfigToJson(config);
    if (target == kCudnnConvBiasActivationForwardCallTarget && IsCustomCall(conv, kCudnnConvForwardCallTarget))
      c->set_name("cudnn-conv-bias-activation");
    if (target == kCudnnConvForwardCallTarget) c->set_name("cudnn-conv");
    ExpanderBuilder b(comp, names, before);
    HloInstruction* call = b.Add(std::move(c));
    return call == nullptr ? nullptr : b.GetTupleElement(call, 0);
  }
  static bool IsCustomCall(const HloInstruction* i, std::string_view t) { return library::IsCustomCall(i, t); }

  // The operands of `conv` as a conv-bias-activation: a zero bias added to a plain forward conv
  // (XLA's EnsureIsConvBiasActivation).
  std::vector<HloInstruction*> BiasActivationOperands(HloInstruction* conv, const HloInstruction* before) {
    std::vector<HloInstruction*> ops = conv->operands();
    if (ops.size() >= 3) return ops;
    const Shape& out = conv->shape().tuple_shapes(0);
    const int64_t nf = out.dimensions(conv->attrs().convolution_dimension_numbers->output_feature_dimension);
    // cuDNN's bias is f32 for integer convolutions.
    const PrimitiveType bias_t = IsIntegral(out.element_type()) ? PrimitiveType::F32 : out.element_type();
    ExpanderBuilder b(comp, names, before);
    HloInstruction* zero = b.ScalarConstant(bias_t, 0);
    ops.push_back(b.BroadcastScalar(zero, Shape(bias_t, {nf})));
    return ops;
  }

  // Applies `edit` to the config of conv-bias-activation(conv) and replaces `instr` by its result.
  absl::Status Fuse(HloInstruction* instr, HloInstruction* conv, std::vector<HloInstruction*> operands,
                    const CudnnConvBackendConfig& config) {
    return Replace(instr, Clone(conv, std::move(operands), kCudnnConvBiasActivationForwardCallTarget, config, instr));
  }

  // hloc: gte(conv-bias-activation(x, w, bias)) with no activation or side input, whose users
  // are all elementwise -> add(gte(conv(x, w)), broadcast(bias)). The add fuses into those users
  // for free, while a fused identity activation leaves cuDNN few fast engines: its legacy entry
  // point runs only IMPLICIT_PRECOMP_GEMM, its graph API lacks the engines of a plain forward
  // convolution (eqx_dilated_conv1d: 254 and ~240 us against 172 us a convolution).
  absl::Status UnfuseIdentityBias(HloInstruction* gte) {
    // The gte may have many users (a GELU reads it four times); the call has only it.
    if (gte->opcode() != HloOpcode::kGetTupleElement || gte->attrs().tuple_index != 0) return absl::OkStatus();
    HloInstruction* conv = gte->operand(0);
    if (!IsCustomCall(conv, kCudnnConvBiasActivationForwardCallTarget) || conv->operand_count() != 3 ||
        library::UniqueUserCount(conv) != 1)
      return absl::OkStatus();
    const CudnnConvBackendConfig config = ConfigOf(conv);
    const Shape& out = gte->shape();
    HloInstruction* bias = conv->operand(2);
    if (config.activation_mode != ConvActivation::kNone || !IsFloatingPoint(out.element_type()) ||
        bias->shape().element_type() != out.element_type() || gte->users().empty())
      return absl::OkStatus();
    for (const HloInstruction* u : gte->users())
      if (!u->IsElementwise()) return absl::OkStatus();
    HloInstruction* plain = Clone(conv, std::vector<HloInstruction*>{conv->operand(0), conv->operand(1)}, kCudnnConvForwardCallTarget,
                                  config, gte);
    if (plain == nullptr) return absl::InternalError("cudnn-fused-convolution-rewriter: could not build a call");
    ExpanderBuilder b(comp, names, gte);
    const int64_t fdim = conv->attrs().convolution_dimension_numbers->output_feature_dimension;
    HloInstruction* add = library::IsBroadcastOfScalar(bias, 0.0) ? plain : b.Add(plain, b.Broadcast(bias, out, {fdim}));
    if (!b.ok() || add == nullptr) {
      b.Discard();
      return absl::OkStatus();
    }
    return Replace(gte, add);
  }

  // alpha * gte(conv) -> conv_result_scale = alpha.
  absl::Status FuseConvAlpha(HloInstruction* instr) {
    if (instr->opcode() != HloOpcode::kMultiply) return absl::OkStatus();
    for (int i = 0; i < 2; ++i) {
      HloInstruction* conv = ConvOfResult(instr->operand(i));
      const HloInstruction* bcast = instr->operand(1 - i);
      std::optional<double> alpha = library::BroadcastOfScalarConstant(bcast);
      if (conv == nullptr || !alpha) continue;
      const PrimitiveType alpha_t = instr->shape().element_type() == PrimitiveType::F64 ? PrimitiveType::F64 : PrimitiveType::F32;
      if (!LosslesslyConvertible(bcast->operand(0), alpha_t)) continue;
      CudnnConvBackendConfig config = ConfigOf(conv);
      if (config.conv_result_scale != 1) continue;
      // hloc: the scale multiplies the convolution only, so nothing may be added or applied yet
      // (XLA relies on running this step first).
      if (config.activation_mode != ConvActivation::kNone || conv->operand_count() > 3 ||
          (conv->operand_count() == 3 && !library::IsBroadcastOfScalar(conv->operand(2), 0.0)))
        continue;
      config.conv_result_scale = *alpha;
      return Fuse(instr, conv, BiasActivationOperands(conv, instr), config);
    }
    return absl::OkStatus();
  }

  // gte(conv) + addend -> bias (a broadcast along the output features, or of a scalar) or
  // side input.
  absl::Status FuseBiasOrSideInput(HloInstruction* instr) {
    if (instr->opcode() != HloOpcode::kAdd) return absl::OkStatus();
    for (int i = 0; i < 2; ++i) {
      HloInstruction* conv = ConvOfResult(instr->operand(i));
      HloInstruction* addend = instr->operand(1 - i);
      if (conv == nullptr) continue;
      CudnnConvBackendConfig config = ConfigOf(conv);
      // Bias and side input come before the activation.
      if (config.activation_mode != ConvActivation::kNone) continue;
      const bool fresh = conv->operand_count() < 3;  // a plain forward conv: zero bias to come
      const bool can_accept_bias = fresh || library::IsBroadcastOfScalar(conv->operand(2), 0.0);
      const bool can_accept_side_input = conv->operand_count() < 4;
      const Shape& out = conv->shape().tuple_shapes(0);
      const PrimitiveType conv_t = out.element_type();
      const PrimitiveType bias_t = IsFloatingPoint(conv_t) ? conv_t : PrimitiveType::F32;
      const int64_t fdim = conv->attrs().convolution_dimension_numbers->output_feature_dimension;
      const bool is_bcast = addend->opcode() == HloOpcode::kBroadcast;
      const bool rank1_bias = is_bcast && addend->attrs().dimensions.size() == 1 && addend->attrs().dimensions[0] == fdim &&
                              LosslesslyConvertible(addend, bias_t);
      const bool rank0_bias = is_bcast && addend->attrs().dimensions.empty() && LosslesslyConvertible(addend, bias_t);
      const bool side_ok = can_accept_side_input && addend->shape().element_type() == conv_t;
      if (!(can_accept_bias && (rank1_bias || rank0_bias)) && !side_ok) continue;
      const bool takes_bias = can_accept_bias && (rank1_bias || rank0_bias);
      // A fresh conv taking a bias needs no zero bias first.
      std::vector<HloInstruction*> ops = conv->operands();
      if (fresh && takes_bias) ops.push_back(nullptr);
      else ops = BiasActivationOperands(conv, instr);
      ExpanderBuilder b(comp, names, instr);
      if (can_accept_bias && rank1_bias) {
        HloInstruction* v = addend->operand(0);
        ops[2] = v->shape().element_type() == bias_t ? v : b.Convert(v, bias_t);
      } else if (can_accept_bias && rank0_bias) {
        HloInstruction* v = addend->operand(0);
        if (v->shape().rank() != 0) v = b.Reshape(v, {});
        if (v != nullptr && v->shape().element_type() != bias_t) v = b.Convert(v, bias_t);
        ops[2] = v == nullptr ? nullptr : b.BroadcastScalar(v, Shape(bias_t, {out.dimensions(fdim)}));
      } else {
        ops.push_back(addend);
        config.side_input_scale = 1;
      }
      if (!b.ok() || ops[2] == nullptr) {
        b.Discard();
        continue;
      }
      return Fuse(instr, conv, ops, config);
    }
    return absl::OkStatus();
  }

  // conv(..., side_input = reshapes(alpha * z)) -> side_input_scale = alpha, side input
  // reshapes(z).
  absl::Status FuseSideInputAlpha(HloInstruction* conv) {
    if (!IsConvCall(conv) || conv->operand_count() != 4) return absl::OkStatus();
    CudnnConvBackendConfig config = ConfigOf(conv);
    if (config.side_input_scale != 1) return absl::OkStatus();
    HloInstruction* side = conv->operand(3);
    HloInstruction* before_reshape = side;
    while (before_reshape->opcode() == HloOpcode::kReshape || before_reshape->opcode() == HloOpcode::kTranspose)
      before_reshape = before_reshape->operand(0);
    if (before_reshape->opcode() != HloOpcode::kMultiply) return absl::OkStatus();
    const PrimitiveType conv_t = conv->shape().tuple_shapes(0).element_type();
    const PrimitiveType alpha_t = conv_t == PrimitiveType::F64 ? PrimitiveType::F64 : PrimitiveType::F32;
    for (int i = 0; i < 2; ++i) {
      HloInstruction* base = before_reshape->operand(i);
      const HloInstruction* bcast = before_reshape->operand(1 - i);
      std::optional<double> alpha = library::BroadcastOfScalarConstant(bcast);
      if (!alpha || !LosslesslyConvertible(bcast->operand(0), alpha_t)) continue;
      // Re-apply the chain of reshapes/transposes to `base` (XLA duplicates it too).
      ExpanderBuilder b(comp, names, conv);
      std::function<HloInstruction*(const HloInstruction*)> clone = [&](const HloInstruction* x) -> HloInstruction* {
        if (x == before_reshape) return base;
        HloInstruction* inner = clone(x->operand(0));
        if (inner == nullptr) return nullptr;
        HloInstruction* ops[] = {inner};
        return b.Add(CloneInstruction(*x, ops));
      };
      HloInstruction* new_side = clone(side);
      if (!b.ok() || new_side == nullptr) {
        b.Discard();
        return absl::OkStatus();
      }
      std::vector<HloInstruction*> ops = conv->operands();
      ops[3] = new_side;
      config.side_input_scale = *alpha;
      std::unique_ptr<HloInstruction> c = CloneInstruction(*conv, ops);
      c->mutable_attrs().backend_config = CudnnConvBackendConfigToJson(config);
      HloInstruction* call = b.Add(std::move(c));
      if (call == nullptr) return b.status();
      return Replace(conv, call);
    }
    return absl::OkStatus();
  }

  // max(gte(conv), 0) -> kRelu; clamp(0, gte(conv), 6) -> kRelu6 (runtime fusion, f16).
  absl::Status FuseActivation(HloInstruction* instr, bool use_runtime_fusion) {
    HloInstruction* conv = nullptr;
    ConvActivation mode = ConvActivation::kNone;
    if (instr->opcode() == HloOpcode::kMaximum) {
      for (int i = 0; i < 2 && conv == nullptr; ++i)
        if (library::IsBroadcastOfScalar(instr->operand(1 - i), 0.0)) conv = ConvOfResult(instr->operand(i));
      mode = ConvActivation::kRelu;
    } else if (instr->opcode() == HloOpcode::kClamp && use_runtime_fusion &&
               instr->shape().element_type() == PrimitiveType::F16 &&
               library::IsBroadcastOfScalar(instr->operand(0), 0.0) && library::IsBroadcastOfScalar(instr->operand(2), 6.0)) {
      conv = ConvOfResult(instr->operand(1));
      mode = ConvActivation::kRelu6;
      // cuDNN's runtime fusion: no side input, f16 with even channel counts.
      if (conv != nullptr) {
        const auto& d = *conv->attrs().convolution_dimension_numbers;
        const Shape& k = conv->operand(1)->shape();
        if (conv->operand_count() > 3 || conv->operand(0)->shape().element_type() != PrimitiveType::F16 ||
            k.dimensions(d.kernel_input_feature_dimension) % 2 != 0 || k.dimensions(d.kernel_output_feature_dimension) % 2 != 0)
          conv = nullptr;
      }
    }
    if (conv == nullptr) return absl::OkStatus();
    CudnnConvBackendConfig config = ConfigOf(conv);
    if (config.activation_mode != ConvActivation::kNone) return absl::OkStatus();
    config.activation_mode = mode;
    return Fuse(instr, conv, BiasActivationOperands(conv, instr), config);
  }
};

}  // namespace

absl::StatusOr<bool> CudnnFusedConvRewriter::Run(HloModule& module, PassContext& context) {
  if (!library::TargetsGpu(context)) return false;
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    Fuser f{comp, &names};
    // Each step walks the computation in post order and may replace the instruction it visits
    // (and remove what died), so every visit first checks the instruction is still here.
    // Removals are reported as they happen (a rescan after each change was quadratic).
    auto step = [&](const std::function<absl::Status(HloInstruction*)>& fn) -> absl::Status {
      absl::flat_hash_set<const HloInstruction*> live;
      for (const auto& i : comp->instructions()) live.insert(i.get());
      comp->set_removal_observer([&live](const HloInstruction* gone) { live.erase(gone); });
      absl::Status status = absl::OkStatus();
      for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
        if (!live.contains(inst)) continue;
        const bool before = f.changed;
        f.changed = false;
        status = fn(inst);
        if (!status.ok()) break;
        f.changed |= before;
      }
      comp->set_removal_observer(nullptr);
      return status;
    };
    // XLA's order: inside out from the convolution, twice for bias and side input.
    const bool rt = use_runtime_fusion_;
    std::vector<std::function<absl::Status(HloInstruction*)>> steps = {
        [&](HloInstruction* i) { return f.FuseConvAlpha(i); },
        [&](HloInstruction* i) { return f.FuseBiasOrSideInput(i); },
        [&](HloInstruction* i) { return f.FuseBiasOrSideInput(i); },
        [&](HloInstruction* i) { return f.FuseSideInputAlpha(i); },
        [&](HloInstruction* i) { return f.FuseActivation(i, rt); },
        [&](HloInstruction* i) { return f.FuseBiasOrSideInput(i); },
        [&](HloInstruction* i) { return f.FuseBiasOrSideInput(i); },
        [&](HloInstruction* i) { return f.FuseSideInputAlpha(i); },
        [&](HloInstruction* i) { return f.FuseActivation(i, rt); },
        [&](HloInstruction* i) { return f.UnfuseIdentityBias(i); },
    };
    for (const auto& s : steps)
      if (auto st = step(s); !st.ok()) return st;
    changed |= f.changed;
  }
  return changed;
}

}  // namespace hloc
