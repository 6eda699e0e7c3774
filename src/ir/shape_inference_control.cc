// Shape inference for structure and control: parameter, constant, tuple, get-tuple-element,
// while, conditional, call, fusion, custom-call, the async wrappers, copy-start/done,
// tokens, infeed/outfeed, send/recv and the rng state ops.
#include "ir/custom_calls/solver_calls.h"
#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

Shape U32Scalar() { return MakeShape(PrimitiveType::U32, {}); }

absl::Status ExpectToken(const HloInstruction& inst, int64_t operand) {
  const Shape& s = inst.operand(operand)->shape();
  if (!s.IsToken()) {
    return InvalidArgument("Expected operand %d to be token-shaped, actual shape is %s.", operand, Str(s));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferTupleElement(const Shape& arg, int64_t index) {
  if (!arg.IsTuple()) {
    return InvalidArgument("Cannot infer shape: attempting to index into non-tuple: %s.", Str(arg));
  }
  if (index < 0 || index >= static_cast<int64_t>(arg.tuple_shapes().size())) {
    return InvalidArgument("Cannot infer shape: attempt to index out of tuple bounds: %d >= %d in shape %s.", index,
                           arg.tuple_shapes().size(), Str(arg));
  }
  return StripLayout(arg.tuple_shapes(index));
}

absl::StatusOr<Shape> InferWhileShape(const HloInstruction& inst) {
  absl::StatusOr<ProgramShape> cond = CalledProgramShape(inst, 0, "condition");
  if (!cond.ok()) return cond.status();
  absl::StatusOr<ProgramShape> body = CalledProgramShape(inst, 1, "body");
  if (!body.ok()) return body.status();
  if (inst.called_computations().size() != 2) {
    return InvalidArgument("while must call exactly a condition and a body, calls %d computations.",
                           inst.called_computations().size());
  }
  if (cond->parameters.size() != 1) {
    return InvalidArgument("While condition must have exactly 1 parameter; has %d.", cond->parameters.size());
  }
  if (body->parameters.size() != 1) {
    return InvalidArgument("While body must have exactly 1 parameter; has %d.", body->parameters.size());
  }
  const Shape& init = inst.operand(0)->shape();
  if (!ShapesCompatible(init, body->parameters[0])) {
    return InvalidArgument("While operand %s does not match the body parameter %s.", Str(init),
                           Str(body->parameters[0]));
  }
  if (!ShapesCompatible(init, cond->parameters[0])) {
    return InvalidArgument("While operand %s does not match the condition parameter %s.", Str(init),
                           Str(cond->parameters[0]));
  }
  if (!ShapesCompatible(cond->result, MakeShape(PrimitiveType::PRED, {}))) {
    return InvalidArgument("Conditional computation shape does not lead to a scalar predicate shape: %s",
                           Str(cond->result));
  }
  if (!ShapesCompatible(body->result, body->parameters[0])) {
    return InvalidArgument("While body returns %s but takes %s: the loop state must keep its shape.",
                           Str(body->result), Str(body->parameters[0]));
  }
  return StripLayout(body->result);
}

absl::StatusOr<Shape> InferConditionalShape(const HloInstruction& inst) {
  absl::Status s = CheckMinOperandCount(inst, 1);
  if (!s.ok()) return s;
  const Shape& index = inst.operand(0)->shape();
  if (!IsScalar(index)) {
    return InvalidArgument("The first operand of conditional must be a scalar. Got %s", Str(index));
  }
  int64_t branches = inst.called_computations().size();
  if (index.element_type() == PrimitiveType::PRED) {
    if (branches != 2) {
      return InvalidArgument("A conditional with a pred[] selector needs exactly 2 branches (true, false), has %d.",
                             branches);
    }
  } else if (index.element_type() != PrimitiveType::S32) {
    return InvalidArgument("The first operand of indexed conditional must be a scalar of S32. Got type %s.",
                           TypeName(index.element_type()));
  } else if (branches < 1) {
    return InvalidArgument("An indexed conditional needs at least one branch computation.");
  }
  s = CheckOperandCount(inst, branches + 1);
  if (!s.ok()) return s;
  Shape result;
  for (int64_t j = 0; j < branches; ++j) {
    absl::StatusOr<ProgramShape> branch = CalledProgramShape(inst, j, "branch");
    if (!branch.ok()) return branch.status();
    if (branch->parameters.size() != 1) {
      return InvalidArgument("branch computation %d must take 1 argument; got %d.", j, branch->parameters.size());
    }
    if (!ShapesCompatible(branch->parameters[0], inst.operand(j + 1)->shape())) {
      return InvalidArgument("branch operand %d must match the shape of the only parameter of branch computation %d: got operand %s, parameter %s.",
                             j, j, Str(inst.operand(j + 1)->shape()), Str(branch->parameters[0]));
    }
    if (j == 0) {
      result = StripLayout(branch->result);
    } else if (!ShapesCompatible(result, branch->result)) {
      return InvalidArgument("the result of branch 0 computation and branch %d computation must have the same shape: got %s and %s.",
                             j, Str(result), Str(branch->result));
    }
  }
  return result;
}

absl::StatusOr<Shape> InferCallShape(const HloInstruction& inst) {
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  if (static_cast<int64_t>(to_apply->parameters.size()) != inst.operand_count()) {
    return InvalidArgument("Call applied function arity must match number of arguments; got: arity: %d, arguments: %d.",
                           to_apply->parameters.size(), inst.operand_count());
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!ShapesCompatible(inst.operand(i)->shape(), to_apply->parameters[i])) {
      return InvalidArgument("Call parameter must match argument; got parameter %d shape: %s, argument shape: %s.", i,
                             Str(to_apply->parameters[i]), Str(inst.operand(i)->shape()));
    }
  }
  // Composite calls name the op they stand for in frontend attributes.
  bool composite = false;
  for (const auto& [name, value] : inst.attrs().raw_attributes)
    composite |= name == "is_composite" && value == "true";
  if (composite) {
    const FrontendAttributes& fa = inst.attrs().frontend_attributes;
    auto name = fa.find("composite.name");
    if (name == fa.end() || name->second.empty()) {
      return InvalidArgument("A composite call op must have frontend attributes with key composite.name whose value is non-empty");
    }
    auto attrs = fa.find("composite.attributes");
    if (attrs != fa.end() && attrs->second.empty()) {
      return InvalidArgument("A composite call op must have frontend attributes with key composite.attributes whose value is default: {} or non-empty");
    }
    auto version = fa.find("composite.version");
    if (version != fa.end()) {
      const std::string& v = version->second;
      bool digits = !v.empty() && v.size() < 19 && v.find_first_not_of("0123456789") == std::string::npos;
      if (!digits) {
        return InvalidArgument("A composite call op must have frontend attributes with a composite.version whose value is a non-negative integer but got: %s",
                               v);
      }
    }
  }
  return StripLayout(to_apply->result);
}

absl::Status CheckOutputOperandAliasing(const HloInstruction& inst) {
  for (const OutputOperandAlias& alias : inst.attrs().output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= inst.operand_count()) {
      return InvalidArgument("Invalid aliasing operand index %d.", alias.operand_number);
    }
    absl::StatusOr<const Shape*> operand = GetSubshape(inst.operand(alias.operand_number)->shape(), alias.operand_index);
    if (!operand.ok()) return InvalidArgument("Invalid aliasing operand shape index %s.", ShapeIndexToString(alias.operand_index));
    absl::StatusOr<const Shape*> output = GetSubshape(inst.shape(), alias.output_index);
    if (!output.ok()) return InvalidArgument("Invalid aliasing output shape index %s.", ShapeIndexToString(alias.output_index));
    if (!ShapesCompatible(**operand, **output)) {
      return InvalidArgument("Different aliasing shapes: %s vs %s.", Str(**operand), Str(**output));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferFusionShape(const HloInstruction& inst) {
  if (inst.called_computations().size() != 1 || inst.called_computations()[0] == nullptr) {
    return InvalidArgument("Fusion has a non-unary number of called computations (%d).",
                           inst.called_computations().size());
  }
  const HloComputation& fused = *inst.called_computations()[0];
  if (fused.root_instruction() == nullptr) return InvalidArgument("fused computation %s has no root.", fused.name());
  if (fused.num_parameters() > inst.operand_count()) {
    return InvalidArgument("Fused parameter count (%d) is greater than the number of operands (%d) passed to the fusion instruction.",
                           fused.num_parameters(), inst.operand_count());
  }
  for (int64_t i = 0; i < fused.num_parameters(); ++i) {
    const HloInstruction* p = fused.parameter_instruction(i);
    if (p == nullptr) return InvalidArgument("fused computation %s has no parameter number %d.", fused.name(), i);
    if (!ShapesCompatible(p->shape(), inst.operand(i)->shape())) {
      return InvalidArgument("Shape mismatch between parameter number %d (%s) and its operand (%s).", i, Str(p->shape()),
                             Str(inst.operand(i)->shape()));
    }
  }
  absl::Status s = CheckOutputOperandAliasing(inst);
  if (!s.ok()) return s;
  return StripLayout(fused.root_instruction()->shape());
}

absl::StatusOr<Shape> InferCustomCallShape(const HloInstruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  if (a.operand_layout_constraints && a.custom_call_target != "LayoutConstraint") {
    const std::vector<Shape>& constraints = *a.operand_layout_constraints;
    if (static_cast<int64_t>(constraints.size()) != inst.operand_count()) {
      return InvalidArgument("Expected %d operand layout constraints, %d given.", inst.operand_count(),
                             constraints.size());
    }
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      if (!ShapesCompatible(inst.operand(i)->shape(), constraints[i])) {
        return InvalidArgument("Operand %d is not compatible with operand shape %s: the layout constraint is %s.", i,
                               Str(inst.operand(i)->shape()), Str(constraints[i]));
      }
    }
  }
  absl::Status s = CheckOutputOperandAliasing(inst);
  if (!s.ok()) return s;
  // The linear-algebra calls have fixed operand and result shapes and element types: the checks
  // the evaluator and codegen make (ParseSolverCall), so the verifier refuses what they would.
  if (IsSolverCallTarget(a.custom_call_target)) {
    absl::StatusOr<SolverCall> call = ParseSolverCall(inst);
    if (!call.ok()) return call.status();
  }
  // A custom call's result is whatever its target produces.
  return StripLayout(inst.shape());
}

// The computation an async op wraps: its own calls= if it names one, else its async-start's.
const HloComputation* AsyncWrapped(const HloInstruction& inst) {
  const HloInstruction* cur = &inst;
  for (int steps = 0; cur != nullptr && steps < 100000; ++steps) {
    if (!cur->called_computations().empty()) return cur->called_computations()[0];
    if (cur->opcode() == HloOpcode::kAsyncStart || cur->operand_count() == 0) return nullptr;
    cur = cur->operand(0);
  }
  return nullptr;
}

// The async shape is ((wrapped parameters...), wrapped root, context...).
absl::Status CheckAsyncShape(const HloInstruction& inst, const Shape& async_shape) {
  std::string op(HloOpcodeString(inst.opcode()));
  if (!async_shape.IsTuple() || async_shape.tuple_shapes().size() < 2) {
    return InvalidArgument("The %s expects the async shape to be a tuple of at least two elements, found %s.", op,
                           Str(async_shape));
  }
  const HloComputation* wrapped = AsyncWrapped(inst);
  if (wrapped == nullptr) return InvalidArgument("The %s has no wrapped computation (calls=).", op);
  absl::StatusOr<ProgramShape> program = ComputeProgramShape(*wrapped);
  if (!program.ok()) return program.status();
  Shape params = Shape::Tuple(program->parameters);
  if (!ShapesCompatible(async_shape.tuple_shapes(0), params)) {
    return InvalidArgument("The %s expects the async shape at index {0} to match async computation parameter shape (%s vs %s).",
                           op, Str(async_shape.tuple_shapes(0)), Str(params));
  }
  if (!ShapesCompatible(async_shape.tuple_shapes(1), program->result)) {
    return InvalidArgument("The %s expects the async shape at index {1} to match the async computation root shape (%s vs %s).",
                           op, Str(async_shape.tuple_shapes(1)), Str(program->result));
  }
  return absl::OkStatus();
}

absl::Status CheckAsyncOperand(const HloInstruction& inst) {
  const HloInstruction* operand = inst.operand(0);
  std::string op(HloOpcodeString(inst.opcode()));
  if (operand->opcode() != HloOpcode::kAsyncStart && operand->opcode() != HloOpcode::kAsyncUpdate) {
    return InvalidArgument("%s expects operand to be async-start or async-update, found %s.", op,
                           std::string(HloOpcodeString(operand->opcode())));
  }
  if (AsyncWrapped(inst) != AsyncWrapped(*operand)) {
    return InvalidArgument("The %s expects its wrapped async computation to be identical to its operand's.", op);
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferAsyncShape(const HloInstruction& inst) {
  using O = HloOpcode;
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case O::kAsyncStart: {
      absl::Status s = CheckAsyncShape(inst, shape);
      if (!s.ok()) return s;
      const Shape& params = shape.tuple_shapes(0);
      if (static_cast<int64_t>(params.tuple_shapes().size()) != inst.operand_count()) {
        return InvalidArgument("async-start has %d operands but its wrapped computation takes %d.", inst.operand_count(),
                               params.tuple_shapes().size());
      }
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (!ShapesCompatible(params.tuple_shapes(i), inst.operand(i)->shape())) {
          return InvalidArgument("The async-start expects the shape of operand %d to match the async shape at index {0} (%s vs %s).",
                                 i, Str(inst.operand(i)->shape()), Str(params.tuple_shapes(i)));
        }
      }
      return StripLayout(shape);
    }
    case O::kAsyncUpdate: {
      absl::Status s = CheckAsyncOperand(inst);
      if (s.ok()) s = CheckAsyncShape(inst, inst.operand(0)->shape());
      if (!s.ok()) return s;
      return StripLayout(inst.operand(0)->shape());
    }
    case O::kAsyncDone: {
      absl::Status s = CheckAsyncOperand(inst);
      if (s.ok()) s = CheckAsyncShape(inst, inst.operand(0)->shape());
      if (!s.ok()) return s;
      return StripLayout(inst.operand(0)->shape().tuple_shapes(1));
    }
    default:
      return absl::InternalError("not an async opcode");
  }
}

}  // namespace

absl::StatusOr<Shape> InferControlFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  auto operand = [&](int64_t i) -> const Shape& { return inst.operand(i)->shape(); };
  absl::Status s;
  switch (inst.opcode()) {
    case O::kParameter:
      return StripLayout(inst.shape());
    case O::kConstant:
      if (!inst.attrs().literal) return InvalidArgument("Constant is required to have a valid literal.");
      return StripLayout(inst.attrs().literal->shape());
    case O::kTuple: {
      std::vector<Shape> parts;
      for (const HloInstruction* op : inst.operands()) parts.push_back(StripLayout(op->shape()));
      return Shape::Tuple(std::move(parts));
    }
    case O::kGetTupleElement:
      return InferTupleElement(operand(0), inst.attrs().tuple_index);
    case O::kWhile:
      return InferWhileShape(inst);
    case O::kConditional:
      return InferConditionalShape(inst);
    case O::kCall:
      return InferCallShape(inst);
    case O::kFusion:
      return InferFusionShape(inst);
    case O::kCustomCall:
      return InferCustomCallShape(inst);
    case O::kAsyncStart: case O::kAsyncUpdate: case O::kAsyncDone:
      return InferAsyncShape(inst);
    case O::kCopyStart:
      return Shape::Tuple({StripLayout(operand(0)), StripLayout(operand(0)), U32Scalar()});
    case O::kCopyDone: {
      const Shape& op = operand(0);
      if (!op.IsTuple() || op.tuple_shapes().size() < 2) {
        return InvalidArgument("copy-done expects a (destination, source, context) tuple operand, got %s.", Str(op));
      }
      if (!ShapesCompatible(op.tuple_shapes(0), op.tuple_shapes(1))) {
        return InvalidArgument("Source and destination buffers in CopyDone arguments need to be the same shape found %s and %s",
                               Str(op.tuple_shapes(0)), Str(op.tuple_shapes(1)));
      }
      return StripLayout(op.tuple_shapes(0));
    }
    case O::kAfterAll:
      return Shape::Token();
    case O::kAddDependency:
      s = ExpectToken(inst, 1);
      if (!s.ok()) return s;
      return StripLayout(operand(0));
    case O::kOptimizationBarrier: case O::kDomain:
      return StripLayout(operand(0));
    case O::kInfeed: {
      s = ExpectToken(inst, 0);
      if (!s.ok()) return s;
      const Shape& shape = inst.shape();
      if (!shape.IsTuple() || shape.tuple_shapes().size() != 2 || !shape.tuple_shapes(1).IsToken()) {
        return InvalidArgument("infeed must have a (data, token[]) tuple shape, got %s.", Str(shape));
      }
      return Shape::Tuple({StripLayout(shape.tuple_shapes(0)), Shape::Token()});
    }
    case O::kOutfeed: {
      s = ExpectToken(inst, 1);
      if (!s.ok()) return s;
      const std::optional<Shape>& outfeed = inst.attrs().outfeed_shape;
      if (outfeed && !ShapesCompatible(*outfeed, operand(0))) {
        return InvalidArgument("Expected outfeed shape to be equal to operand's shape %s, actual shape is %s.",
                               Str(operand(0)), Str(*outfeed));
      }
      return Shape::Token();
    }
    case O::kSend:
      s = ExpectToken(inst, 1);
      if (!s.ok()) return s;
      return Shape::Tuple({StripLayout(operand(0)), U32Scalar(), Shape::Token()});
    case O::kSendDone:
      return Shape::Token();
    case O::kRecv: {
      s = ExpectToken(inst, 0);
      if (!s.ok()) return s;
      const Shape& shape = inst.shape();
      if (!shape.IsTuple() || shape.tuple_shapes().empty()) {
        return InvalidArgument("recv must have a (data, u32[], token[]) tuple shape, got %s.", Str(shape));
      }
      return Shape::Tuple({StripLayout(shape.tuple_shapes(0)), U32Scalar(), Shape::Token()});
    }
    case O::kRecvDone: {
      const Shape& op = operand(0);
      if (!op.IsTuple() || op.tuple_shapes().empty()) {
        return InvalidArgument("recv-done expects the tuple of a recv as its operand, got %s.", Str(op));
      }
      return Shape::Tuple({StripLayout(op.tuple_shapes(0)), Shape::Token()});
    }
    case O::kRngBitGenerator: {
      const Shape& shape = inst.shape();
      if (shape.IsTuple()) {
        if (shape.tuple_shapes().size() != 2) {
          return InvalidArgument("Expected tuple shape with 2 elements for RngBitGenerator. Got: %s", Str(shape));
        }
        if (!ShapesCompatible(operand(0), shape.tuple_shapes(0))) {
          return InvalidArgument("Expected state shape to match between input and output for RngBitGenerator. Got %s vs. %s",
                                 Str(operand(0)), Str(shape.tuple_shapes(0)));
        }
      }
      // The generated data are raw bits of an integer or float type of at most 64 bits (what
      // the evaluator, the rng-bit-generator-expander and codegen generate); pred and complex
      // have no such bits.
      const Shape& data = shape.IsTuple() ? shape.tuple_shapes(1) : shape;
      if (!data.IsArray() || data.element_type() == PrimitiveType::PRED || IsComplex(data.element_type()) ||
          BitWidth(data.element_type()) > 64) {
        return InvalidArgument("RngBitGenerator cannot generate %s: the data must be an array of an integer or "
                               "floating-point type of at most 64 bits.", Str(data));
      }
      return StripLayout(shape);
    }
    case O::kRngGetAndUpdateState:
      return MakeShape(PrimitiveType::U64, {2});
    default:
      return absl::InternalError(absl::StrCat("not a control opcode: ", std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
