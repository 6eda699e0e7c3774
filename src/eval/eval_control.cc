// Control flow and the ops that only route values: call, fusion, while, conditional, the
// async wrappers, copy-start/done, custom-call identities, tokens and device ids.
#include <array>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "eval/eval_internal.h"
#include "eval/library_calls.h"
#include "eval/solver_calls.h"
#include "eval/sort_calls.h"

namespace hloc {
namespace eval_internal {
namespace {

std::string Op(const HloInstruction& inst) { return std::string(HloOpcodeString(inst.opcode())); }

absl::Status Invalid(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(Op(inst), ": ", why));
}

// Custom-call targets that carry no computation on a single device: sharding annotations,
// the SPMD partitioner's shard/full shape markers, Shardy's manual-computation boundaries
// (identities when the local shape equals the global one, i.e. on one device), and memory
// placement annotations. Anything that changes the shape is not an identity: a shard_map
// body would have to run once per partition, which this evaluator does not model.
constexpr std::array<std::string_view, 9> kIdentityTargets = {
    "Sharding",
    "SPMDFullToShardShape",
    "SPMDShardToFullShape",
    "xla.sdy.GlobalToLocalShape",
    "xla.sdy.LocalToGlobalShape",
    "xla.sdy.FuncResultSharding",
    "MoveToHost",
    "MoveToDevice",
    "annotate_device_placement",
};

bool IsIdentityTarget(const std::string& target) {
  for (std::string_view t : kIdentityTargets)
    if (t == target) return true;
  return false;
}

// The operands' shapes as the result shape of an identity: operand 0 itself, or the tuple
// of all operands.
bool IdentityShapeFits(const HloInstruction& inst) {
  const Shape& s = inst.shape();
  if (inst.operand_count() == 1 && inst.operand(0)->shape().EqualIgnoringLayout(s)) return true;
  if (!s.IsTuple() || static_cast<int64_t>(s.tuple_shapes().size()) != inst.operand_count()) return false;
  for (int64_t i = 0; i < inst.operand_count(); ++i)
    if (!inst.operand(i)->shape().EqualIgnoringLayout(s.tuple_shapes(i))) return false;
  return true;
}

Literal CopyAs(const Literal& l, const Shape& shape) {
  Literal out = l;
  if (out.shape().EqualIgnoringLayout(shape)) out.mutable_shape() = shape;
  return out;
}

absl::StatusOr<Literal> CallComputation(const HloInstruction& inst, const HloComputation* comp, Operands ops,
                                        InternalContext& ctx) {
  if (comp == nullptr) return Invalid(inst, "has no called computation");
  if (comp->num_parameters() != static_cast<int64_t>(ops.size()))
    return Invalid(inst, absl::StrCat("passes ", ops.size(), " operands to ", comp->name(), " which takes ",
                                      comp->num_parameters()));
  return ctx.call(*comp, ops);
}

absl::StatusOr<Literal> Conditional(const HloInstruction& inst, Operands ops, InternalContext& ctx) {
  const auto& branches = inst.called_computations();
  if (branches.empty() || ops.size() != branches.size() + 1)
    return Invalid(inst, absl::StrCat("has ", branches.size(), " branches and ", ops.size(), " operands"));
  const Literal& sel = *ops[0];
  int64_t index;
  if (sel.shape().IsArray() && sel.element_type() == PrimitiveType::PRED && sel.element_count() == 1) {
    if (branches.size() != 2) return Invalid(inst, "a pred selector needs exactly two branches");
    index = sel.GetPred(0) ? 0 : 1;  // true_computation first
  } else {
    auto v = ReadScalarIndex(sel);
    if (!v.ok()) return v.status();
    index = *v;
    // An out-of-range branch index runs the last branch (XLA's semantics).
    if (index < 0 || index >= static_cast<int64_t>(branches.size())) index = static_cast<int64_t>(branches.size()) - 1;
  }
  return CallComputation(inst, branches[index], ops.subspan(index + 1, 1), ctx);
}

// async-start's value: ((operands...), result, contexts...). The contexts are opaque
// handles; zeros stand in for them.
absl::StatusOr<Literal> AsyncStart(const HloInstruction& inst, Operands ops, InternalContext& ctx) {
  const Shape& s = inst.shape();
  if (!s.IsTuple() || s.tuple_shapes().size() < 2) return Invalid(inst, "result must be a tuple (operands, result, ...)");
  auto result = CallComputation(inst, inst.to_apply(), ops, ctx);
  if (!result.ok()) return result.status();
  auto out = NewLiteral(s);
  if (!out.ok()) return out.status();
  const Shape& args_shape = s.tuple_shapes(0);
  if (args_shape.IsTuple() && args_shape.tuple_shapes().size() == ops.size()) {
    std::vector<Literal> args;
    for (const Literal* l : ops) args.push_back(*l);
    out->tuple_element(0) = Literal::MakeTuple(std::move(args));
    out->tuple_element(0).mutable_shape() = args_shape;
  } else if (ops.size() == 1 && ops[0]->shape().EqualIgnoringLayout(args_shape)) {
    out->tuple_element(0) = CopyAs(*ops[0], args_shape);
  } else {
    return Invalid(inst, "element {0} of the result does not hold the operands");
  }
  if (!result->shape().EqualIgnoringLayout(s.tuple_shapes(1)))
    return Invalid(inst, absl::StrCat("wrapped computation returns ", result->shape().ToString(false), ", expected ",
                                      s.tuple_shapes(1).ToString(false)));
  out->tuple_element(1) = std::move(*result);
  return out;
}

absl::StatusOr<Literal> TupleElement(const HloInstruction& inst, const Literal& l, int64_t i) {
  if (!l.shape().IsTuple() || i >= l.tuple_size()) return Invalid(inst, absl::StrCat("operand has no element ", i));
  return CopyAs(l.tuple_element(i), inst.shape());
}

}  // namespace

bool IsIdentityCustomCall(const HloInstruction& inst) {
  return inst.opcode() == HloOpcode::kCustomCall && IsIdentityTarget(inst.attrs().custom_call_target) &&
         IdentityShapeFits(inst);
}

absl::StatusOr<Literal> EvalWhile(const HloInstruction& inst, Literal state, InternalContext& ctx) {
  if (inst.called_computations().size() != 2) return Invalid(inst, "needs a condition and a body");
  const HloComputation& cond = *inst.while_condition();
  const HloComputation& body = *inst.while_body();
  if (cond.num_parameters() != 1 || body.num_parameters() != 1)
    return Invalid(inst, "condition and body must take one parameter");
  const int64_t max_trips = ctx.options ? ctx.options->max_loop_iterations : (int64_t{1} << 31);
  for (int64_t trips = 0;; ++trips) {
    const Literal* arg = &state;
    auto c = ctx.call(cond, absl::Span<const Literal* const>(&arg, 1));
    if (!c.ok()) return c.status();
    if (!c->shape().IsArray() || c->element_type() != PrimitiveType::PRED || c->element_count() != 1)
      return Invalid(inst, "condition must return pred[]");
    if (!c->GetPred(0)) break;
    if (trips >= max_trips)
      return absl::ResourceExhaustedError(absl::StrCat("while loop ran past max_loop_iterations (", max_trips, ")"));
    std::vector<Literal> args;
    args.push_back(std::move(state));
    auto next = ctx.call_owned(body, std::move(args));
    if (!next.ok()) return next.status();
    state = std::move(*next);
  }
  if (!state.shape().EqualIgnoringLayout(inst.shape()))
    return Invalid(inst, absl::StrCat("loop state ", state.shape().ToString(false), " does not match ", inst.shape().ToString(false)));
  state.mutable_shape() = inst.shape();
  return state;
}

bool IsHandledControl(HloOpcode op) {
  using O = HloOpcode;
  switch (op) {
    case O::kCall: case O::kFusion: case O::kWhile: case O::kConditional: case O::kAsyncStart:
    case O::kAsyncUpdate: case O::kAsyncDone: case O::kCopyStart: case O::kCopyDone:
    case O::kCustomCall: case O::kOptimizationBarrier: case O::kDomain: case O::kAddDependency:
    case O::kAfterAll: case O::kPartitionId: case O::kReplicaId: case O::kInfeed: case O::kOutfeed:
    case O::kSend: case O::kSendDone: case O::kRecv: case O::kRecvDone:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Literal> EvalControl(const HloInstruction& inst, Operands ops, InternalContext& ctx) {
  using O = HloOpcode;
  switch (inst.opcode()) {
    case O::kCall:
      return CallComputation(inst, inst.to_apply(), ops, ctx);
    case O::kFusion:
      return CallComputation(inst, inst.called_computations().empty() ? nullptr : inst.fused_instructions_computation(),
                             ops, ctx);
    case O::kWhile:
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      return EvalWhile(inst, *ops[0], ctx);
    case O::kConditional:
      return Conditional(inst, ops, ctx);
    case O::kAsyncStart:
      return AsyncStart(inst, ops, ctx);
    case O::kAsyncUpdate:
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      return CopyAs(*ops[0], inst.shape());
    case O::kAsyncDone:
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      return TupleElement(inst, *ops[0], 1);
    case O::kCopyStart: {
      // (destination, source, context): both buffers hold the operand's value.
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      const Shape& s = inst.shape();
      if (!s.IsTuple() || s.tuple_shapes().size() < 2) return Invalid(inst, "result must be (dest, src, context)");
      auto out = NewLiteral(s);
      if (!out.ok()) return out.status();
      out->tuple_element(0) = CopyAs(*ops[0], s.tuple_shapes(0));
      out->tuple_element(1) = CopyAs(*ops[0], s.tuple_shapes(1));
      return out;
    }
    case O::kCopyDone:
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      return TupleElement(inst, *ops[0], 0);
    case O::kOptimizationBarrier:
    case O::kDomain:
      if (ops.size() != 1) return Invalid(inst, "takes one operand");
      return CopyAs(*ops[0], inst.shape());
    case O::kAddDependency:
      if (ops.empty()) return Invalid(inst, "missing operand");
      return CopyAs(*ops[0], inst.shape());
    case O::kAfterAll:
      return Literal(Shape::Token());
    case O::kPartitionId:
    case O::kReplicaId: {
      auto out = NewLiteral(inst.shape());
      if (!out.ok()) return out.status();
      if (!out->shape().IsArray() || out->element_count() != 1) return Invalid(inst, "result must be a scalar");
      const int64_t id = ctx.options == nullptr ? 0
                         : inst.opcode() == O::kReplicaId ? ctx.options->replica_id
                                                          : ctx.options->partition_id;
      out->SetInt(0, id);
      return out;
    }
    case O::kCustomCall: {
      const std::string& target = inst.attrs().custom_call_target;
      // cuBLAS/cuDNN library calls (XLA's and hloc's): eval_library_calls.cc.
      if (IsLibraryCallTarget(target)) return EvalLibraryCall(inst, ops);
      // cuSOLVER / LAPACK factorizations and triangular solves: eval_solver_calls.cc.
      if (IsSolverCallTarget(target)) return EvalSolverCall(inst, ops);
      // hloc's radix sort (gpu-sort-rewriter's output): eval_sort_calls.cc.
      if (IsRadixSortCallTarget(target)) return EvalRadixSortCall(inst, ops);
      // XLA:CPU's TopK call (its optimized modules have it): eval_sort.cc.
      if (target == "TopK") return EvalXlaTopKCall(inst, ops, ctx);
      // XLA:CPU's oneDNN convolution (hloc's onednn-convolution-rewriter, issue 16 part 4): the
      // convolution it was, with the same window, dim_labels and feature groups.
      if (target == "__onednn$convolution") {
        if (ops.size() != 2 || !inst.attrs().convolution_dimension_numbers)
          return Invalid(inst, "expects (input, kernel) and dim_labels");
        HloInstruction conv(HloOpcode::kConvolution, inst.shape(), inst.name());
        InstructionAttributes& a = conv.mutable_attrs();
        a.window = inst.attrs().window;
        a.convolution_dimension_numbers = inst.attrs().convolution_dimension_numbers;
        a.feature_group_count = inst.attrs().feature_group_count;
        a.batch_group_count = inst.attrs().batch_group_count;
        a.precision_config = inst.attrs().precision_config;
        return EvalConvolution(conv, ops, ctx);
      }
      if (!IsIdentityTarget(target))
        return absl::UnimplementedError(absl::StrCat("unsupported custom-call target \"", target, "\""));
      if (static_cast<int64_t>(ops.size()) != inst.operand_count() || !IdentityShapeFits(inst))
        return absl::UnimplementedError(absl::StrCat(
            "custom-call \"", target, "\" changes the shape to ", inst.shape().ToString(false),
            ": a per-partition (shard_map) computation, which the host evaluator does not model"));
      if (ops.size() == 1 && ops[0]->shape().EqualIgnoringLayout(inst.shape())) return CopyAs(*ops[0], inst.shape());
      std::vector<Literal> elems;
      for (const Literal* l : ops) elems.push_back(*l);
      Literal out = Literal::MakeTuple(std::move(elems));
      out.mutable_shape() = inst.shape();
      return out;
    }
    case O::kInfeed: case O::kOutfeed: case O::kSend: case O::kSendDone: case O::kRecv: case O::kRecvDone:
      return absl::UnimplementedError(absl::StrCat(Op(inst), " is unsupported on the host evaluator"));
    default:
      return Invalid(inst, "not a control-flow op");
  }
}

}  // namespace eval_internal
}  // namespace hloc
