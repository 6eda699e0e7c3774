#include "passes/expanders/expander_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/shape_inference.h"

namespace hloc::expanders {

using O = HloOpcode;
using P = PrimitiveType;

absl::StatusOr<PrimitiveType> SignedIntegralTypeForBitWidth(int bits) {
  switch (bits) {
    case 2: return P::S2;
    case 4: return P::S4;
    case 8: return P::S8;
    case 16: return P::S16;
    case 32: return P::S32;
    case 64: return P::S64;
    default: return absl::InvalidArgumentError(absl::StrCat("no signed integer type of ", bits, " bits"));
  }
}

absl::StatusOr<PrimitiveType> UnsignedIntegralTypeForBitWidth(int bits) {
  switch (bits) {
    case 2: return P::U2;
    case 4: return P::U4;
    case 8: return P::U8;
    case 16: return P::U16;
    case 32: return P::U32;
    case 64: return P::U64;
    default: return absl::InvalidArgumentError(absl::StrCat("no unsigned integer type of ", bits, " bits"));
  }
}

bool HasNegativeZero(PrimitiveType t) {
  if (!IsFloatingPoint(t)) return false;
  switch (t) {
    case P::F8E4M3FNUZ: case P::F8E5M2FNUZ: case P::F8E4M3B11FNUZ: case P::F8E8M0FNU: return false;
    default: return true;
  }
}

int ExponentBits(PrimitiveType t) {
  switch (t) {
    case P::F16: return 5;
    case P::BF16: return 8;
    case P::F32: return 8;
    case P::F64: return 11;
    case P::F4E2M1FN: return 2;
    case P::F8E3M4: return 3;
    case P::F8E4M3: case P::F8E4M3FN: case P::F8E4M3B11FNUZ: case P::F8E4M3FNUZ: return 4;
    case P::F8E5M2: case P::F8E5M2FNUZ: return 5;
    case P::F8E8M0FNU: return 8;
    default: return 0;
  }
}

int MantissaBits(PrimitiveType t) {
  switch (t) {
    case P::F16: return 10;
    case P::BF16: return 7;
    case P::F32: return 23;
    case P::F64: return 52;
    case P::F4E2M1FN: return 1;
    case P::F8E3M4: return 4;
    case P::F8E4M3: case P::F8E4M3FN: case P::F8E4M3B11FNUZ: case P::F8E4M3FNUZ: return 3;
    case P::F8E5M2: case P::F8E5M2FNUZ: return 2;
    case P::F8E8M0FNU: return 0;
    default: return 0;
  }
}

bool FloatCastPreservesValues(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (!IsFloatingPoint(from) || !IsFloatingPoint(to)) return false;
  // Only IEEE types (infinities, NaN and -0) can hold every special value of another float type.
  if (to != P::F16 && to != P::BF16 && to != P::F32 && to != P::F64) return false;
  if (MantissaBits(to) < MantissaBits(from)) return false;
  if (ExponentBits(to) > ExponentBits(from)) return true;
  // Equal exponent fields cover the same range only when the source uses the IEEE bias too.
  const bool ieee_from = from == P::F16 || from == P::BF16 || from == P::F32 || from == P::F64 ||
                         from == P::F8E5M2 || from == P::F8E4M3 || from == P::F8E3M4;
  return ExponentBits(to) == ExponentBits(from) && ieee_from;
}

Literal ScalarLiteral(PrimitiveType t, double v) { return Literal::ScalarDouble(t, v); }

Literal ScalarLiteralBits(PrimitiveType t, uint64_t bits) {
  Literal l(Shape(t, {}));
  l.SetRawBits(0, bits);
  return l;
}

Shape ShapeWithType(const Shape& shape, PrimitiveType t) {
  Shape s = shape;
  s.set_element_type(t);
  return s;
}

Shape MakeShape(PrimitiveType t, std::vector<int64_t> dims, std::vector<bool> dynamic) {
  Shape s(t, std::move(dims));
  if (std::find(dynamic.begin(), dynamic.end(), true) != dynamic.end()) s.mutable_dynamic_dimensions() = std::move(dynamic);
  return s;
}

HloComputation* AddEmptyComputation(HloModule& module, NameUniquer& computation_names, const std::string& hint) {
  return module.AddComputation(std::make_unique<HloComputation>(computation_names.GetUniqueName(hint)));
}

// ---- ExpanderBuilder ---------------------------------------------------------------------

ExpanderBuilder::ExpanderBuilder(HloComputation* computation, NameUniquer* names, const HloInstruction* before)
    : computation_(computation), names_(names), before_(before) {}

void ExpanderBuilder::Discard() {
  // Latest first: users were added after their operands.
  for (auto it = added_.rbegin(); it != added_.rend(); ++it) {
    HloInstruction* inst = *it;
    if (inst->user_count() == 0 && !inst->IsRoot()) (void)computation_->RemoveInstruction(inst);
  }
  added_.clear();
}

HloInstruction* ExpanderBuilder::Fail(absl::Status status) {
  if (status_.ok()) status_ = std::move(status);
  return nullptr;
}

bool ExpanderBuilder::AnyNull(std::initializer_list<const HloInstruction*> xs) const {
  if (!status_.ok()) return true;
  for (const HloInstruction* x : xs)
    if (x == nullptr) return true;
  return false;
}

std::unique_ptr<HloInstruction> ExpanderBuilder::New(HloOpcode op, const Shape& shape,
                                                     std::vector<HloInstruction*> operands) {
  auto inst = std::make_unique<HloInstruction>(op, shape, std::string(HloOpcodeString(op)));
  for (HloInstruction* x : operands) inst->AppendOperand(x);
  return inst;
}

HloInstruction* ExpanderBuilder::Add(std::unique_ptr<HloInstruction> inst) {
  if (!status_.ok()) {
    inst->DetachFromOperandsAndUsers();
    return nullptr;
  }
  // Shape inference is the verifier's rule, so a mistake here surfaces as an error naming the
  // instruction rather than as a module that fails verification later.
  absl::StatusOr<Shape> inferred = InferShape(*inst);
  if (!inferred.ok() || !ShapesCompatible(*inferred, inst->shape())) {
    std::string operands;
    for (const HloInstruction* x : inst->operands()) absl::StrAppend(&operands, operands.empty() ? "" : ", ", x->shape().ToString());
    absl::Status st = absl::InternalError(absl::StrCat(
        "expander built an ill-shaped ", std::string(HloOpcodeString(inst->opcode())), " ",
        inst->shape().ToString(), " of (", operands, "): ",
        inferred.ok() ? absl::StrCat("inferred ", inferred->ToString()) : std::string(inferred.status().message())));
    inst->DetachFromOperandsAndUsers();
    return Fail(st);
  }
  if (metadata_ != nullptr) inst->mutable_attrs().metadata = *metadata_;
  HloInstruction* raw = AddInstructionWithUniqueName(*computation_, std::move(inst), *names_, before_);
  added_.push_back(raw);
  return raw;
}

HloInstruction* ExpanderBuilder::Parameter(int64_t number, const Shape& shape, const std::string& name) {
  if (!status_.ok()) return nullptr;
  auto inst = New(O::kParameter, shape, {});
  inst->set_name(name);
  inst->mutable_attrs().parameter_number = number;
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Constant(Literal literal) {
  if (!status_.ok()) return nullptr;
  Shape shape = literal.shape();
  if (shape.IsArray() && !shape.has_layout()) shape.SetDefaultLayout();
  auto inst = New(O::kConstant, shape, {});
  inst->mutable_attrs().literal = std::move(literal);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Iota(const Shape& shape, int64_t dimension) {
  if (!status_.ok()) return nullptr;
  auto inst = New(O::kIota, shape, {});
  inst->mutable_attrs().iota_dimension = dimension;
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::ImplicitBroadcast(HloInstruction* x, const HloInstruction* like) {
  if (x->shape().rank() == 0 && like->shape().rank() > 0) return BroadcastScalar(x, like->shape());
  return x;
}

HloInstruction* ExpanderBuilder::Unary(HloOpcode op, HloInstruction* x) {
  if (AnyNull({x})) return nullptr;
  Shape shape = x->shape();
  if (op == O::kAbs && IsComplex(shape.element_type())) shape.set_element_type(ComplexComponentType(shape.element_type()));
  return Add(New(op, shape, {x}));
}

HloInstruction* ExpanderBuilder::Binary(HloOpcode op, HloInstruction* a, HloInstruction* b) {
  if (AnyNull({a, b})) return nullptr;
  a = ImplicitBroadcast(a, b);
  b = ImplicitBroadcast(b, a);
  if (AnyNull({a, b})) return nullptr;
  return Add(New(op, a->shape(), {a, b}));
}

HloInstruction* ExpanderBuilder::Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection dir,
                                         ComparisonType type) {
  if (AnyNull({a, b})) return nullptr;
  a = ImplicitBroadcast(a, b);
  b = ImplicitBroadcast(b, a);
  if (AnyNull({a, b})) return nullptr;
  auto inst = New(O::kCompare, ShapeWithType(a->shape(), P::PRED), {a, b});
  inst->mutable_attrs().comparison_direction = dir;
  inst->mutable_attrs().comparison_type = type;
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Select(HloInstruction* pred, HloInstruction* on_true, HloInstruction* on_false) {
  if (AnyNull({pred, on_true, on_false})) return nullptr;
  return Add(New(O::kSelect, on_true->shape(), {pred, on_true, on_false}));
}

HloInstruction* ExpanderBuilder::Convert(HloInstruction* x, PrimitiveType t) {
  if (AnyNull({x})) return nullptr;
  return Add(New(O::kConvert, ShapeWithType(x->shape(), t), {x}));
}

HloInstruction* ExpanderBuilder::BitcastConvert(HloInstruction* x, PrimitiveType t) {
  if (AnyNull({x})) return nullptr;
  return Add(New(O::kBitcastConvert, ShapeWithType(x->shape(), t), {x}));
}

HloInstruction* ExpanderBuilder::Broadcast(HloInstruction* x, const Shape& shape, std::vector<int64_t> dims) {
  if (AnyNull({x})) return nullptr;
  auto inst = New(O::kBroadcast, ShapeWithType(shape, x->shape().element_type()), {x});
  inst->mutable_attrs().dimensions = std::move(dims);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Reshape(HloInstruction* x, std::vector<int64_t> dims, std::vector<bool> dynamic) {
  if (AnyNull({x})) return nullptr;
  return Add(New(O::kReshape, MakeShape(x->shape().element_type(), std::move(dims), std::move(dynamic)), {x}));
}

HloInstruction* ExpanderBuilder::ReshapeTo(HloInstruction* x, const Shape& shape) {
  if (AnyNull({x})) return nullptr;
  return Add(New(O::kReshape, shape, {x}));
}

HloInstruction* ExpanderBuilder::Transpose(HloInstruction* x, std::vector<int64_t> permutation) {
  if (AnyNull({x})) return nullptr;
  const Shape& in = x->shape();
  if (static_cast<int64_t>(permutation.size()) != in.rank())
    return Fail(absl::InternalError("transpose permutation does not match the operand's rank"));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t p : permutation) {
    if (p < 0 || p >= in.rank()) return Fail(absl::InternalError("transpose permutation out of range"));
    dims.push_back(in.dimensions(p));
    dynamic.push_back(in.is_dynamic_dimension(p));
  }
  auto inst = New(O::kTranspose, MakeShape(in.element_type(), std::move(dims), std::move(dynamic)), {x});
  inst->mutable_attrs().dimensions = std::move(permutation);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits,
                                       std::vector<int64_t> strides) {
  if (AnyNull({x})) return nullptr;
  if (strides.empty()) strides.assign(starts.size(), 1);
  if (starts.size() != limits.size() || starts.size() != strides.size() ||
      static_cast<int64_t>(starts.size()) != x->shape().rank())
    return Fail(absl::InternalError("slice bounds do not match the operand's rank"));
  std::vector<int64_t> dims;
  std::vector<SliceDimension> slice;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (strides[i] <= 0 || limits[i] < starts[i]) return Fail(absl::InternalError("bad slice bounds"));
    dims.push_back((limits[i] - starts[i] + strides[i] - 1) / strides[i]);
    slice.push_back({starts[i], limits[i], strides[i]});
  }
  auto inst = New(O::kSlice, MakeShape(x->shape().element_type(), std::move(dims)), {x});
  inst->mutable_attrs().slice = std::move(slice);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Concatenate(std::vector<HloInstruction*> xs, int64_t dimension) {
  if (!status_.ok()) return nullptr;
  if (xs.empty()) return Fail(absl::InternalError("concatenate of nothing"));
  for (HloInstruction* x : xs)
    if (x == nullptr) return nullptr;
  Shape shape = xs[0]->shape();
  if (dimension < 0 || dimension >= shape.rank()) return Fail(absl::InternalError("concatenate dimension out of range"));
  int64_t total = 0;
  for (HloInstruction* x : xs) total += x->shape().dimensions(dimension);
  std::vector<int64_t> dims = shape.dimensions();
  dims[dimension] = total;
  auto inst = New(O::kConcatenate, MakeShape(shape.element_type(), std::move(dims)), xs);
  inst->mutable_attrs().dimensions = {dimension};
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Reverse(HloInstruction* x, std::vector<int64_t> dims) {
  if (AnyNull({x})) return nullptr;
  auto inst = New(O::kReverse, x->shape(), {x});
  inst->mutable_attrs().dimensions = std::move(dims);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::GetDimensionSize(HloInstruction* x, int64_t dimension) {
  if (AnyNull({x})) return nullptr;
  auto inst = New(O::kGetDimensionSize, MakeShape(P::S32, {}), {x});
  inst->mutable_attrs().dimensions = {dimension};
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Tuple(std::vector<HloInstruction*> elements) {
  if (!status_.ok()) return nullptr;
  std::vector<Shape> shapes;
  for (HloInstruction* x : elements) {
    if (x == nullptr) return nullptr;
    shapes.push_back(x->shape());
  }
  return Add(New(O::kTuple, Shape::Tuple(std::move(shapes)), elements));
}

HloInstruction* ExpanderBuilder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  if (AnyNull({tuple})) return nullptr;
  if (!tuple->shape().IsTuple() || index < 0 || index >= static_cast<int64_t>(tuple->shape().tuple_shapes().size()))
    return Fail(absl::InternalError("get-tuple-element index out of range"));
  auto inst = New(O::kGetTupleElement, tuple->shape().tuple_shapes(index), {tuple});
  inst->mutable_attrs().tuple_index = index;
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Reduce(HloInstruction* x, HloInstruction* init, std::vector<int64_t> dims,
                                        HloComputation* to_apply) {
  if (AnyNull({x, init})) return nullptr;
  std::vector<int64_t> kept;
  std::vector<bool> dynamic;
  for (int64_t i = 0; i < x->shape().rank(); ++i) {
    if (std::find(dims.begin(), dims.end(), i) != dims.end()) continue;
    kept.push_back(x->shape().dimensions(i));
    dynamic.push_back(x->shape().is_dynamic_dimension(i));
  }
  auto inst = New(O::kReduce, MakeShape(x->shape().element_type(), std::move(kept), std::move(dynamic)), {x, init});
  inst->mutable_attrs().dimensions = std::move(dims);
  inst->mutable_called_computations().push_back(to_apply);
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Dot(HloInstruction* lhs, HloInstruction* rhs, const DotDimensionNumbers& dnums,
                                     const PrecisionConfig& precision, PrimitiveType result_type) {
  if (AnyNull({lhs, rhs})) return nullptr;
  // XLA's InferDotOpShape: batch dimensions, then lhs and rhs non-contracting dimensions.
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  auto in = [](const std::vector<int64_t>& v, int64_t d) { return std::find(v.begin(), v.end(), d) != v.end(); };
  for (int64_t d : dnums.lhs_batch_dimensions) {
    if (d < 0 || d >= lhs->shape().rank()) return Fail(absl::InternalError("dot batch dimension out of range"));
    dims.push_back(lhs->shape().dimensions(d));
    dynamic.push_back(lhs->shape().is_dynamic_dimension(d));
  }
  for (int64_t i = 0; i < lhs->shape().rank(); ++i) {
    if (in(dnums.lhs_batch_dimensions, i) || in(dnums.lhs_contracting_dimensions, i)) continue;
    dims.push_back(lhs->shape().dimensions(i));
    dynamic.push_back(lhs->shape().is_dynamic_dimension(i));
  }
  for (int64_t i = 0; i < rhs->shape().rank(); ++i) {
    if (in(dnums.rhs_batch_dimensions, i) || in(dnums.rhs_contracting_dimensions, i)) continue;
    dims.push_back(rhs->shape().dimensions(i));
    dynamic.push_back(rhs->shape().is_dynamic_dimension(i));
  }
  auto inst = New(O::kDot, MakeShape(result_type, std::move(dims), std::move(dynamic)), {lhs, rhs});
  inst->mutable_attrs().dot_dimension_numbers = dnums;
  inst->mutable_attrs().precision_config = precision;
  return Add(std::move(inst));
}

HloInstruction* ExpanderBuilder::Call(const Shape& shape, std::vector<HloInstruction*> operands, HloComputation* callee) {
  if (!status_.ok()) return nullptr;
  for (HloInstruction* x : operands)
    if (x == nullptr) return nullptr;
  auto inst = New(O::kCall, shape, operands);
  inst->mutable_called_computations().push_back(callee);
  return Add(std::move(inst));
}

// ---- Computations and the op-expander skeleton -------------------------------------------

HloComputation* MakeScalarAddComputation(HloModule& module, NameUniquer& computation_names,
                                         NameUniquer& instruction_names, PrimitiveType t, const std::string& name) {
  HloComputation* comp = AddEmptyComputation(module, computation_names, name);
  ExpanderBuilder b(comp, &instruction_names);
  const Shape scalar = MakeShape(t, {});
  HloInstruction* lhs = b.Parameter(0, scalar, "scalar_lhs");
  HloInstruction* rhs = b.Parameter(1, scalar, "scalar_rhs");
  HloInstruction* sum = b.Add(lhs, rhs);
  comp->set_root_instruction(sum);
  return comp;
}

absl::StatusOr<bool> RunOpExpander(HloModule& module, const std::function<bool(const HloInstruction&)>& matches,
                                   const std::function<absl::StatusOr<HloInstruction*>(HloInstruction*)>& expand) {
  std::vector<HloInstruction*> matching;
  for (HloComputation* comp : module.MakeComputationPostOrder()) {
    if (comp->IsFusionComputation()) continue;
    for (HloInstruction* inst : comp->MakeInstructionPostOrder())
      if (matches(*inst)) matching.push_back(inst);
  }
  for (HloInstruction* inst : matching) {
    absl::StatusOr<HloInstruction*> expanded = expand(inst);
    if (!expanded.ok()) return expanded.status();
    if (*expanded == nullptr) continue;
    ReplaceOptions options;
    // XLA refuses (and DCHECK-fails) on control edges; moving them keeps the ordering intact.
    options.relay_control_dependency = true;
    absl::StatusOr<bool> replaced = ReplaceInstruction(inst, *expanded, options);
    if (!replaced.ok()) return replaced.status();
    if (!*replaced)
      return absl::InternalError(absl::StrCat("could not replace ", inst->name(), " with its expansion"));
  }
  return !matching.empty();
}

}  // namespace hloc::expanders
