#include "passes/expanders/batchnorm_expander.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

using Op = HloInstruction*;
using O = HloOpcode;

struct Context {
  HloModule& module;
  NameUniquer& names;
  NameUniquer& computation_names;
};

absl::Status CheckBatchNorm(const HloInstruction& bn, int64_t operands) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("batchnorm_expander: ", bn.name(), ": ", why));
  };
  if (bn.operand_count() != operands) return bad(absl::StrCat("expected ", operands, " operands"));
  for (const HloInstruction* x : bn.operands())
    if (!x->shape().IsArray() || !IsFloatingPoint(x->shape().element_type())) return bad("operands must be float arrays");
  const Shape& operand = bn.operand(0)->shape();
  const int64_t fi = bn.attrs().feature_index;
  if (fi < 0 || fi >= operand.rank()) return bad("feature_index out of range");
  if (bn.operand(1)->shape().rank() != 1) return bad("scale must have rank 1");
  return absl::OkStatus();
}

std::vector<int64_t> DimensionsWithoutFeature(int64_t rank, int64_t feature_index) {
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < rank; ++i)
    if (i != feature_index) dims.push_back(i);
  return dims;
}

// Elements per feature as a scalar of the operand's type, from get-dimension-size so that
// dynamic dimensions count their runtime size (XLA's DynamicElementCountPerFeature).
Op DynamicElementCountPerFeature(ExpanderBuilder& b, Op operand, int64_t feature_index) {
  Op count = b.Constant(Literal::ScalarInt(PrimitiveType::S32, 1));
  for (int64_t i = 0; i < operand->shape().rank(); ++i) {
    if (i == feature_index) continue;
    count = b.Mul(b.GetDimensionSize(operand, i), count);
  }
  return b.Convert(count, operand->shape().element_type());
}

// x / broadcast(element_count) (XLA's Mean).
Op Mean(ExpanderBuilder& b, Op element_count, Op x) {
  return b.Div(x, b.BroadcastScalar(element_count, x->shape()));
}

Op FeatureBroadcast(ExpanderBuilder& b, Op x, const Shape& shape, int64_t feature_index) {
  return b.Broadcast(x, shape, {feature_index});
}

// ---- Shardings, as XLA spreads the batch-norm's sharding over the expansion -----------------

std::optional<int64_t> UniqueDevice(const HloSharding& s) {
  if (s.kind == HloSharding::Kind::kMaximal) return s.device;
  if (s.kind != HloSharding::Kind::kTuple || s.tuple_elements.empty()) return std::nullopt;
  std::optional<int64_t> device;
  for (const HloSharding& e : s.tuple_elements) {
    std::optional<int64_t> d = UniqueDevice(e);
    if (!d || (device && *device != *d)) return std::nullopt;
    device = d;
  }
  return device;
}

HloSharding DefaultSharding(const HloSharding& s) {
  HloSharding out;
  if (std::optional<int64_t> d = UniqueDevice(s)) {
    out.kind = HloSharding::Kind::kMaximal;
    out.device = *d;
  } else {
    out.kind = HloSharding::Kind::kReplicated;
  }
  return out;
}

// Instructions of the operand's shape get `operand_sharding`, the others the default one.
void SpreadSharding(const std::vector<HloInstruction*>& added, const Shape& operand_shape,
                    const HloSharding& operand_sharding, const HloSharding& default_sharding) {
  for (HloInstruction* inst : added)
    inst->mutable_attrs().sharding = inst->shape().EqualIgnoringLayout(operand_shape) ? operand_sharding : default_sharding;
}

HloSharding TupleElementSharding(const HloSharding& s, int64_t i) {
  if (s.kind == HloSharding::Kind::kTuple && i < static_cast<int64_t>(s.tuple_elements.size())) return s.tuple_elements[i];
  return s;
}

absl::Status Replace(ExpanderBuilder& b, HloInstruction* bn, HloInstruction* replacement) {
  if (!b.ok()) {
    absl::Status st = b.status();
    b.Discard();
    return st;
  }
  ReplaceOptions options;
  options.relay_control_dependency = true;
  absl::StatusOr<bool> replaced = ReplaceInstruction(bn, replacement, options);
  if (!replaced.ok()) return replaced.status();
  if (!*replaced) return absl::InternalError(absl::StrCat("batchnorm_expander: could not replace ", bn->name()));
  return absl::OkStatus();
}

// ---- batch-norm-training -------------------------------------------------------------------

absl::Status ExpandTraining(Context& ctx, HloInstruction* bn) {
  if (absl::Status st = CheckBatchNorm(*bn, 3); !st.ok()) return st;
  const OpMetadata metadata = bn->attrs().metadata;
  ExpanderBuilder b(bn->parent(), &ctx.names, bn);
  b.set_metadata(&metadata);
  Op operand = bn->operand(0);
  const Shape operand_shape = operand->shape();
  const PrimitiveType ptype = operand_shape.element_type();
  const int64_t fi = bn->attrs().feature_index;
  Op scale = bn->operand(1);
  Op offset = bn->operand(2);

  Op zero = b.ScalarConstant(ptype, 0.0);
  Op epsilon = b.BroadcastScalar(b.ScalarConstant(ptype, static_cast<double>(bn->attrs().epsilon)), operand_shape);
  const std::vector<int64_t> reduce_dims = DimensionsWithoutFeature(operand_shape.rank(), fi);
  Op elements_per_feature = DynamicElementCountPerFeature(b, operand, fi);
  Op scale_broadcasted = FeatureBroadcast(b, scale, operand_shape, fi);
  Op offset_broadcasted = FeatureBroadcast(b, offset, operand_shape, fi);
  HloComputation* add_computation = expanders::MakeScalarAddComputation(ctx.module, ctx.computation_names, ctx.names, ptype);

  // X^2, Sum[X], Sum[X^2].
  Op operand_squared = b.Mul(operand, operand);
  Op sum = b.Reduce(operand, zero, reduce_dims, add_computation);
  Op squared_sum = b.Reduce(operand_squared, zero, reduce_dims, add_computation);
  // E[X], E[X^2], E^2[X], Var[X] = E[X^2] - E^2[X].
  Op mean = Mean(b, elements_per_feature, sum);
  Op mean_broadcasted = FeatureBroadcast(b, mean, operand_shape, fi);
  Op square_mean = Mean(b, elements_per_feature, squared_sum);
  Op mean_square = b.Mul(mean, mean);
  Op var = b.Sub(square_mean, mean_square);
  Op var_broadcasted = FeatureBroadcast(b, var, operand_shape, fi);
  // (X - E[X]) * rsqrt(Var[X] + epsilon) * scale + offset.
  Op var_add_epsilon = b.Add(var_broadcasted, epsilon);
  Op rsqrt_var_add_epsilon = b.Unary(O::kRsqrt, var_add_epsilon);
  Op operand_minus_mean = b.Sub(operand, mean_broadcasted);
  Op normalized = b.Mul(operand_minus_mean, rsqrt_var_add_epsilon);
  Op scaled_normalized = b.Mul(normalized, scale_broadcasted);
  Op shifted_normalized = b.Add(scaled_normalized, offset_broadcasted);

  std::vector<HloInstruction*> added = b.added();
  b.set_metadata(nullptr);  // XLA gives the tuple no metadata of its own
  Op tuple = b.Tuple({shifted_normalized, mean, var});
  if (b.ok() && bn->attrs().sharding) {
    const HloSharding& sharding = *bn->attrs().sharding;
    SpreadSharding(added, operand_shape, TupleElementSharding(sharding, 0), DefaultSharding(sharding));
    tuple->mutable_attrs().sharding = sharding;
  }
  return Replace(b, bn, tuple);
}

// ---- batch-norm-inference ------------------------------------------------------------------

absl::Status ExpandInference(Context& ctx, HloInstruction* bn) {
  if (absl::Status st = CheckBatchNorm(*bn, 5); !st.ok()) return st;
  const OpMetadata metadata = bn->attrs().metadata;
  ExpanderBuilder b(bn->parent(), &ctx.names, bn);
  Op operand = bn->operand(0);
  const Shape operand_shape = operand->shape();
  const PrimitiveType ptype = operand_shape.element_type();
  const int64_t fi = bn->attrs().feature_index;
  Op scale = bn->operand(1);
  Op offset = bn->operand(2);
  Op mean = bn->operand(3);
  Op var = bn->operand(4);
  const Shape feature_shape = scale->shape();

  // XLA adds epsilon before it starts tagging instructions with metadata and sharding.
  Op epsilon = b.BroadcastScalar(b.ScalarConstant(ptype, static_cast<double>(bn->attrs().epsilon)), feature_shape);
  const size_t first_tagged = b.added().size();
  b.set_metadata(&metadata);
  // scale * rsqrt(var + epsilon), offset - mean * true_scale.
  Op rsqrt = b.Unary(O::kRsqrt, b.Add(var, epsilon));
  Op true_scale = b.Mul(scale, rsqrt);
  Op true_shift = b.Sub(offset, b.Mul(mean, true_scale));
  Op scaled = b.Mul(operand, FeatureBroadcast(b, true_scale, operand_shape, fi));
  Op shifted_normalized = b.Add(scaled, FeatureBroadcast(b, true_shift, operand_shape, fi));
  if (b.ok() && bn->attrs().sharding) {
    const HloSharding& sharding = *bn->attrs().sharding;
    std::vector<HloInstruction*> tagged(b.added().begin() + first_tagged, b.added().end());
    SpreadSharding(tagged, operand_shape, sharding, DefaultSharding(sharding));
    shifted_normalized->mutable_attrs().sharding = sharding;
  }
  return Replace(b, bn, shifted_normalized);
}

// ---- batch-norm-grad -----------------------------------------------------------------------
// scale_grad = sum(output_grad * (activation - mean)) * rsqrt(var + epsilon)
// offset_grad = sum(output_grad)
// activation_grad = 1/N * scale * rsqrt(var + epsilon) *
//   (N * output_grad - sum(output_grad) - (activation - mean) *
//    sum(output_grad * (activation - mean)) / (var + epsilon))

absl::Status ExpandGrad(Context& ctx, HloInstruction* bn) {
  if (absl::Status st = CheckBatchNorm(*bn, 5); !st.ok()) return st;
  const OpMetadata metadata = bn->attrs().metadata;
  ExpanderBuilder b(bn->parent(), &ctx.names, bn);
  b.set_metadata(&metadata);
  Op activation = bn->operand(0);
  const Shape activation_shape = activation->shape();
  const PrimitiveType ptype = activation_shape.element_type();
  Op scale = bn->operand(1);
  const Shape feature_shape = scale->shape();
  Op mean = bn->operand(2);
  Op variance = bn->operand(3);
  Op grad_output = bn->operand(4);
  const int64_t fi = bn->attrs().feature_index;

  Op elements_per_feature = DynamicElementCountPerFeature(b, activation, fi);
  Op zero = b.ScalarConstant(ptype, 0.0);
  Op epsilon_scalar = b.ScalarConstant(ptype, static_cast<double>(bn->attrs().epsilon));
  Op epsilon_activation = b.BroadcastScalar(epsilon_scalar, activation_shape);
  Op epsilon_feature = b.BroadcastScalar(epsilon_scalar, feature_shape);
  const std::vector<int64_t> reduce_dims = DimensionsWithoutFeature(activation_shape.rank(), fi);

  Op scale_broadcasted = FeatureBroadcast(b, scale, activation_shape, fi);
  Op variance_broadcasted = FeatureBroadcast(b, variance, activation_shape, fi);
  Op mean_broadcasted = FeatureBroadcast(b, mean, activation_shape, fi);
  // rsqrt(Var[X] + epsilon), at the activation's and at the feature's shape.
  Op rsqrt_var_add_epsilon_broadcasted = b.Unary(O::kRsqrt, b.Add(variance_broadcasted, epsilon_activation));
  Op rsqrt_var_add_epsilon = b.Unary(O::kRsqrt, b.Add(variance, epsilon_feature));
  // X - E[X], Grad[Y] * (X - E[X]).
  Op activation_minus_mean = b.Sub(activation, mean_broadcasted);
  Op grad_output_times_activation_minus_mean = b.Mul(grad_output, activation_minus_mean);
  HloComputation* add_computation = expanders::MakeScalarAddComputation(ctx.module, ctx.computation_names, ctx.names, ptype);
  // sum(Grad[Y] * (X - E[X])), Grad[beta] = sum(Grad[Y]).
  Op sum_grad_output_times_activation_minus_mean =
      b.Reduce(grad_output_times_activation_minus_mean, zero, reduce_dims, add_computation);
  Op grad_beta = b.Reduce(grad_output, zero, reduce_dims, add_computation);
  // Grad[scale] = sum(Grad[Y] * (X - E[X])) * rsqrt(Var[X] + epsilon).
  Op grad_scale = b.Mul(sum_grad_output_times_activation_minus_mean, rsqrt_var_add_epsilon);
  // I2 = sum(Grad[Y]), I3 = sum(Grad[Y] * (X - E[X])), I4 = (X - E[X]) * I3,
  // I5 = I4 / (Var[X] + epsilon).
  Op i2 = FeatureBroadcast(b, grad_beta, activation_shape, fi);
  Op i3 = FeatureBroadcast(b, sum_grad_output_times_activation_minus_mean, activation_shape, fi);
  Op i4 = b.Mul(i3, activation_minus_mean);
  Op i5 = b.Div(i4, b.Add(variance_broadcasted, epsilon_activation));
  // scale * rsqrt(Var[X] + epsilon) / N.
  Op scale_times_rsqrt_var_add_epsilon = b.Mul(scale_broadcasted, rsqrt_var_add_epsilon_broadcasted);
  scale_times_rsqrt_var_add_epsilon = Mean(b, elements_per_feature, scale_times_rsqrt_var_add_epsilon);
  // I1 = N * Grad[Y], I6 = I1 - I2 - I5.
  Op i1 = b.Mul(grad_output, b.BroadcastScalar(elements_per_feature, activation_shape));
  Op i6 = b.Sub(b.Sub(i1, i2), i5);
  // Grad[X] = scale * rsqrt(Var[X] + epsilon) / N * I6.
  Op grad_activation = b.Mul(scale_times_rsqrt_var_add_epsilon, i6);

  std::vector<HloInstruction*> added = b.added();
  b.set_metadata(nullptr);
  Op tuple = b.Tuple({grad_activation, grad_scale, grad_beta});
  if (b.ok() && bn->attrs().sharding) {
    const HloSharding& sharding = *bn->attrs().sharding;
    SpreadSharding(added, activation_shape, TupleElementSharding(sharding, 0), DefaultSharding(sharding));
    tuple->mutable_attrs().sharding = sharding;
  }
  return Replace(b, bn, tuple);
}

}  // namespace

absl::StatusOr<bool> BatchNormExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computation_names = ComputationNameUniquer(module);
  Context ctx{module, names, computation_names};
  std::vector<HloInstruction*> todo;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (HloInstruction* inst : comp->MakeInstructionPostOrder()) {
      const HloOpcode op = inst->opcode();
      if ((op == O::kBatchNormTraining && rewrite_training_op_) ||
          (op == O::kBatchNormInference && rewrite_inference_op_) || (op == O::kBatchNormGrad && rewrite_grad_op_))
        todo.push_back(inst);
    }
  }
  // Check them all before changing anything, so a bad one leaves the module as it was.
  for (const HloInstruction* bn : todo)
    if (absl::Status st = CheckBatchNorm(*bn, bn->opcode() == O::kBatchNormTraining ? 3 : 5); !st.ok()) return st;
  for (HloInstruction* bn : todo) {
    absl::Status st;
    switch (bn->opcode()) {
      case O::kBatchNormTraining: st = ExpandTraining(ctx, bn); break;
      case O::kBatchNormInference: st = ExpandInference(ctx, bn); break;
      default: st = ExpandGrad(ctx, bn); break;
    }
    if (!st.ok()) return st;
  }
  return !todo.empty();
}

}  // namespace hloc
