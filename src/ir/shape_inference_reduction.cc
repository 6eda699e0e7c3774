// Shape inference for reductions over a called computation: reduce and reduce-window (both
// variadic), select-and-scatter, and XLA's newer scan.
#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "ir/shape_inference_internal.h"

namespace hloc::shape_inference_internal {
namespace {

absl::StatusOr<Shape> InferReduceShape(const HloInstruction& inst) {
  int64_t count = inst.operand_count();
  if (count == 0 || count % 2 != 0) {
    return InvalidArgument("Reduce must have an even number of arguments (at least 2), has %d", count);
  }
  int64_t n = count / 2;
  const Shape& arg = inst.operand(0)->shape();
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    absl::Status st = ExpectArray(s, "operand of reduce");
    if (st.ok()) st = ExpectArray(inst.operand(n + i)->shape(), "init value of reduce");
    if (!st.ok()) return st;
    if (s.dimensions() != arg.dimensions()) {
      return InvalidArgument(
          "All reduced tensors must have compatible dimension. Tensor at index 0 has shape %s, and "
          "tensor at index %d has shape %s.",
          Str(arg), i, Str(s));
    }
    types.push_back(s.element_type());
    inits.push_back(&inst.operand(n + i)->shape());
  }
  const auto& dims = inst.attrs().dimensions;
  for (int64_t d : dims) {
    if (d < 0 || d >= arg.rank()) {
      return InvalidArgument("Reducing out-of-bounds dimension %d in shape %s.", d, Str(arg));
    }
  }
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  absl::Status st = VerifyReducerShape(*to_apply, inits, types, n);
  if (!st.ok()) return st;
  absl::flat_hash_set<int64_t> reduced;
  for (int64_t d : dims) {
    if (!reduced.insert(d).second) return InvalidArgument("Duplicate reduction dimension: %d", d);
  }
  std::vector<int64_t> kept;
  std::vector<bool> kept_dyn;
  for (int64_t i = 0; i < arg.rank(); ++i) {
    if (reduced.contains(i)) continue;
    kept.push_back(arg.dimensions(i));
    kept_dyn.push_back(arg.is_dynamic_dimension(i));
  }
  if (!to_apply->result.IsTuple()) return MakeShape(to_apply->result.element_type(), kept, kept_dyn);
  std::vector<Shape> parts;
  for (const Shape& s : to_apply->result.tuple_shapes()) parts.push_back(MakeShape(s.element_type(), kept, kept_dyn));
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> InferReduceWindowShape(const HloInstruction& inst) {
  int64_t count = inst.operand_count();
  if (count == 0 || count % 2 != 0) {
    return InvalidArgument("reduce-window must have an even number of arguments (at least 2), has %d", count);
  }
  int64_t n = count / 2;
  if (!inst.attrs().window) return InvalidArgument("reduce-window has no window= attribute.");
  const Shape& first = inst.operand(0)->shape();
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& s = inst.operand(i)->shape();
    absl::Status st = ExpectArray(s, "operand of reduce-window");
    if (!st.ok()) return st;
    if (s.dimensions() != first.dimensions()) {
      return InvalidArgument("All reduced tensors must have the same dimension. Tensor 0 has shape %s, Tensor %d has shape %s",
                             Str(first), i, Str(s));
    }
    types.push_back(s.element_type());
    inits.push_back(&inst.operand(n + i)->shape());
  }
  absl::StatusOr<ProgramShape> to_apply = CalledProgramShape(inst, 0, "to_apply");
  if (!to_apply.ok()) return to_apply.status();
  absl::Status st = VerifyReducerShape(*to_apply, inits, types, n);
  if (!st.ok()) return st;
  std::vector<Shape> parts;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<Shape> out =
        InferWindowOutputShape(inst.operand(i)->shape(), *inst.attrs().window, inits[i]->element_type());
    if (!out.ok()) return out.status();
    parts.push_back(*out);
  }
  if (!to_apply->result.IsTuple()) return parts[0];
  return Shape::Tuple(std::move(parts));
}

absl::StatusOr<Shape> InferSelectAndScatterShape(const HloInstruction& inst) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  absl::Status st = ExpectArray(operand, "operand of select-and-scatter");
  if (!st.ok()) return st;
  if (!inst.attrs().window) return InvalidArgument("select-and-scatter has no window= attribute.");
  absl::StatusOr<ProgramShape> select = CalledProgramShape(inst, 0, "select");
  if (!select.ok()) return select.status();
  absl::StatusOr<ProgramShape> scatter = CalledProgramShape(inst, 1, "scatter");
  if (!scatter.ok()) return scatter.status();
  if (select->parameters.size() != 2) {
    return InvalidArgument("Select function must take 2 parameters, but takes %d parameter(s).",
                           select->parameters.size());
  }
  if (!ShapesCompatible(select->result, MakeShape(PrimitiveType::PRED, {}))) {
    return InvalidArgument("Select function must have rank-0 PRED result.");
  }
  Shape element = MakeShape(operand.element_type(), {});
  for (int i = 0; i < 2; ++i) {
    if (!ShapesCompatibleIgnoringFpPrecision(element, select->parameters[i])) {
      return InvalidArgument(
          "Select function's %s parameter shape currently must match the operand element shape, but got %s vs %s.",
          i == 0 ? "first" : "second", Str(select->parameters[i]), Str(element));
    }
  }
  st = VerifyReducerShape(*scatter, {&init}, {source.element_type()}, 1);
  if (!st.ok()) return st;
  absl::StatusOr<Shape> window_result = InferWindowOutputShape(operand, *inst.attrs().window, operand.element_type());
  if (!window_result.ok()) return window_result.status();
  if (!ShapesCompatibleIgnoringFpPrecision(source, *window_result)) {
    return InvalidArgument(
        "Source shape does not match the shape of window-reduced operand: source(%s), window-reduced operand(%s).",
        Str(source), Str(*window_result));
  }
  return StripLayout(operand);
}

// scan(inputs..., inits...), dimensions={d}, num_carries=C: to_apply takes one slice of every
// input (the input without dimension d) and every carry, and returns (outputs..., new carries...);
// the result is a tuple that stacks each output along d and ends with the final carries.
absl::StatusOr<Shape> InferScanShape(const HloInstruction& inst) {
  int64_t carries = inst.attrs().num_carries;
  int64_t inputs = inst.operand_count() - carries;
  if (carries < 0 || inputs < 1) {
    return InvalidArgument("scan needs at least one input besides its %d carries, has %d operands.", carries,
                           inst.operand_count());
  }
  absl::StatusOr<int64_t> dim_or = SingleDimension(inst, "scan");
  if (!dim_or.ok()) return dim_or.status();
  int64_t dim = *dim_or;
  const Shape& first = inst.operand(0)->shape();
  absl::Status st = ExpectArray(first, "input of scan");
  if (!st.ok()) return st;
  if (dim < 0 || dim >= first.rank()) {
    return InvalidArgument("scan dimension %d is out of range for input %s.", dim, Str(first));
  }
  int64_t length = first.dimensions(dim);
  std::vector<Shape> slices;
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& s = inst.operand(i)->shape();
    st = ExpectArray(s, "input of scan");
    if (!st.ok()) return st;
    if (s.rank() != first.rank() || s.dimensions(dim) != length) {
      return InvalidArgument("scan inputs must agree on rank and scanned dimension: %s vs %s.", Str(first), Str(s));
    }
    std::vector<int64_t> dims = s.dimensions();
    dims.erase(dims.begin() + dim);
    slices.push_back(MakeShape(s.element_type(), dims));
  }
  absl::StatusOr<ProgramShape> body = CalledProgramShape(inst, 0, "to_apply");
  if (!body.ok()) return body.status();
  if (static_cast<int64_t>(body->parameters.size()) != inputs + carries) {
    return InvalidArgument("scan computation must take %d parameters (%d inputs, %d carries), takes %d.",
                           inputs + carries, inputs, carries, body->parameters.size());
  }
  // Parameters are (input slices..., carries...); carries first is accepted too because the
  // order is not pinned down by any module we have seen (both cumsum forms are symmetric).
  auto params_match = [&](bool carries_first) {
    for (int64_t i = 0; i < inputs + carries; ++i) {
      int64_t p = carries_first ? (i < inputs ? carries + i : i - inputs) : i;
      const Shape& expected = i < inputs ? slices[i] : inst.operand(i)->shape();
      if (!ShapesCompatibleIgnoringFpPrecision(expected, body->parameters[p])) return false;
    }
    return true;
  };
  if (!params_match(false) && !params_match(true)) {
    return InvalidArgument("scan computation parameters do not match the input slices and carries of the scan.");
  }
  std::vector<Shape> results;
  if (body->result.IsTuple()) {
    results = body->result.tuple_shapes();
  } else {
    results.push_back(body->result);
  }
  int64_t outputs = static_cast<int64_t>(results.size()) - carries;
  if (outputs < 0) {
    return InvalidArgument("scan computation returns %d values, fewer than its %d carries.", results.size(), carries);
  }
  std::vector<Shape> parts;
  for (int64_t i = 0; i < outputs; ++i) {
    const Shape& r = results[i];
    st = ExpectArray(r, "output of the scan computation");
    if (!st.ok()) return st;
    if (dim > r.rank()) return InvalidArgument("scan output %s has no room for dimension %d.", Str(r), dim);
    std::vector<int64_t> dims = r.dimensions();
    dims.insert(dims.begin() + dim, length);
    parts.push_back(MakeShape(r.element_type(), dims));
  }
  for (int64_t j = 0; j < carries; ++j) {
    const Shape& carry = results[outputs + j];
    if (!ShapesCompatibleIgnoringFpPrecision(carry, inst.operand(inputs + j)->shape())) {
      return InvalidArgument("scan carry %d is returned as %s but initialized as %s.", j, Str(carry),
                             Str(inst.operand(inputs + j)->shape()));
    }
    parts.push_back(StripLayout(carry));
  }
  // The result is always a tuple, even of one element (the evaluator reads it the same way).
  return Shape::Tuple(std::move(parts));
}

}  // namespace

absl::StatusOr<Shape> InferReductionFamily(const HloInstruction& inst) {
  using O = HloOpcode;
  switch (inst.opcode()) {
    case O::kReduce: return InferReduceShape(inst);
    case O::kReduceWindow: return InferReduceWindowShape(inst);
    case O::kSelectAndScatter: return InferSelectAndScatterShape(inst);
    case O::kScan: return InferScanShape(inst);
    default:
      return absl::InternalError(absl::StrCat("not a reduction opcode: ",
                                              std::string(HloOpcodeString(inst.opcode()))));
  }
}

}  // namespace hloc::shape_inference_internal
