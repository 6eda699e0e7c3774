// Instruction-building helpers for the expander passes. XLA writes its expanders either with
// HloInstruction::Create* plus shape inference (batchnorm, comparison, dot decomposition) or
// with the XlaBuilder (the PRNGs of rng-bit-generator); ExpanderBuilder serves both styles: it
// computes each new instruction's shape, checks it against hloc's shape inference, names it
// uniquely in the module, and places it before a given instruction so definitions stay ahead
// of their uses. Like XlaBuilder it keeps the first error and turns every later call into a
// no-op returning nullptr, so long op chains (a 20-round three-fry) need no check per line;
// callers test ok() once and may Discard() what was added.
#pragma once
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/instruction.h"
#include "ir/module.h"
#include "passes/pass_util.h"

namespace hloc::expanders {

// XLA's primitive_util helpers for the types the expanders handle.
// Signed/unsigned integer type of a bit width (2, 4, 8, 16, 32, 64); error otherwise.
absl::StatusOr<PrimitiveType> SignedIntegralTypeForBitWidth(int bits);
absl::StatusOr<PrimitiveType> UnsignedIntegralTypeForBitWidth(int bits);
// Float types without a negative zero (the *fnuz types and f8e8m0fnu).
bool HasNegativeZero(PrimitiveType t);
// Exponent and explicit mantissa bits of a floating-point type (XLA's ExponentWidth - 1 style
// is not needed: these are the field widths of the encoding).
int ExponentBits(PrimitiveType t);
int MantissaBits(PrimitiveType t);
// XLA's CastPreservesValues for two floating-point types: every value of `from` is exactly
// representable in `to` (wider or equal exponent and mantissa fields, infinities and NaN kept).
bool FloatCastPreservesValues(PrimitiveType from, PrimitiveType to);

// A scalar literal of type t holding v (floats round to nearest even, integers wrap, complex
// gets imaginary part 0).
Literal ScalarLiteral(PrimitiveType t, double v);
// A scalar literal of an integer type with exactly these (right-aligned) bits.
Literal ScalarLiteralBits(PrimitiveType t, uint64_t bits);

// Shape helpers (new shapes carry the default layout).
Shape ShapeWithType(const Shape& shape, PrimitiveType t);  // keeps dims and dynamism
Shape MakeShape(PrimitiveType t, std::vector<int64_t> dims, std::vector<bool> dynamic = {});

// Creates an empty computation named after `hint` (made unique in the module) and adds it.
HloComputation* AddEmptyComputation(HloModule& module, NameUniquer& computation_names, const std::string& hint);

class ExpanderBuilder {
 public:
  // Adds to `computation` before `before` (appended when null), naming through `names`.
  ExpanderBuilder(HloComputation* computation, NameUniquer* names, const HloInstruction* before = nullptr);

  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }
  // Every instruction added so far, in order.
  const std::vector<HloInstruction*>& added() const { return added_; }
  // Removes the added instructions that nothing outside them uses (after a failure).
  void Discard();
  // Metadata given to instructions added from now on (null: none).
  void set_metadata(const OpMetadata* metadata) { metadata_ = metadata; }
  HloComputation* computation() const { return computation_; }

  // --- Leaves ------------------------------------------------------------------------------
  HloInstruction* Parameter(int64_t number, const Shape& shape, const std::string& name);
  HloInstruction* Constant(Literal literal);
  HloInstruction* ScalarConstant(PrimitiveType t, double v) { return Constant(ScalarLiteral(t, v)); }
  HloInstruction* ScalarBits(PrimitiveType t, uint64_t bits) { return Constant(ScalarLiteralBits(t, bits)); }
  HloInstruction* Iota(const Shape& shape, int64_t dimension);

  // --- Elementwise ---------------------------------------------------------------------------
  // As XlaBuilder does, a scalar operand next to an array operand is broadcast to its shape.
  HloInstruction* Unary(HloOpcode op, HloInstruction* x);
  HloInstruction* Binary(HloOpcode op, HloInstruction* a, HloInstruction* b);
  HloInstruction* Compare(HloInstruction* a, HloInstruction* b, ComparisonDirection dir,
                          ComparisonType type = ComparisonType::kDefault);
  HloInstruction* Select(HloInstruction* pred, HloInstruction* on_true, HloInstruction* on_false);
  HloInstruction* Convert(HloInstruction* x, PrimitiveType t);
  HloInstruction* BitcastConvert(HloInstruction* x, PrimitiveType t);

  // Shorthands of Binary.
  HloInstruction* Add(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kAdd, a, b); }
  HloInstruction* Sub(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kSubtract, a, b); }
  HloInstruction* Mul(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kMultiply, a, b); }
  HloInstruction* Div(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kDivide, a, b); }
  HloInstruction* Xor(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kXor, a, b); }
  HloInstruction* Or(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kOr, a, b); }
  HloInstruction* Shl(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kShiftLeft, a, b); }
  HloInstruction* Shrl(HloInstruction* a, HloInstruction* b) { return Binary(HloOpcode::kShiftRightLogical, a, b); }

  // --- Shapes --------------------------------------------------------------------------------
  // broadcast(x), dimensions=dims, to `shape` (its element type is replaced by x's).
  HloInstruction* Broadcast(HloInstruction* x, const Shape& shape, std::vector<int64_t> dims);
  HloInstruction* BroadcastScalar(HloInstruction* x, const Shape& shape) { return Broadcast(x, shape, {}); }
  HloInstruction* Reshape(HloInstruction* x, std::vector<int64_t> dims, std::vector<bool> dynamic = {});
  HloInstruction* ReshapeTo(HloInstruction* x, const Shape& shape);  // exactly this shape
  HloInstruction* Transpose(HloInstruction* x, std::vector<int64_t> permutation);
  HloInstruction* Slice(HloInstruction* x, std::vector<int64_t> starts, std::vector<int64_t> limits,
                        std::vector<int64_t> strides = {});
  HloInstruction* Concatenate(std::vector<HloInstruction*> xs, int64_t dimension);
  HloInstruction* Reverse(HloInstruction* x, std::vector<int64_t> dims);
  HloInstruction* GetDimensionSize(HloInstruction* x, int64_t dimension);

  // --- Structure -----------------------------------------------------------------------------
  HloInstruction* Tuple(std::vector<HloInstruction*> elements);
  HloInstruction* GetTupleElement(HloInstruction* tuple, int64_t index);
  HloInstruction* Reduce(HloInstruction* x, HloInstruction* init, std::vector<int64_t> dims, HloComputation* to_apply);
  HloInstruction* Dot(HloInstruction* lhs, HloInstruction* rhs, const DotDimensionNumbers& dnums,
                      const PrecisionConfig& precision, PrimitiveType result_type);
  HloInstruction* Call(const Shape& shape, std::vector<HloInstruction*> operands, HloComputation* callee);

  // Adds a fully formed instruction (operands appended, shape set), after checking its shape
  // with shape inference. Null (and the error kept) when it does not check.
  HloInstruction* Add(std::unique_ptr<HloInstruction> inst);
  // Records an error (the first one wins) and returns nullptr.
  HloInstruction* Fail(absl::Status status);

 private:
  bool AnyNull(std::initializer_list<const HloInstruction*> xs) const;
  std::unique_ptr<HloInstruction> New(HloOpcode op, const Shape& shape, std::vector<HloInstruction*> operands);
  // Broadcasts a scalar x to `like`'s dimensions (x itself when it already has them).
  HloInstruction* ImplicitBroadcast(HloInstruction* x, const HloInstruction* like);

  HloComputation* computation_;
  NameUniquer* names_;
  const HloInstruction* before_;
  const OpMetadata* metadata_ = nullptr;
  std::vector<HloInstruction*> added_;
  absl::Status status_;
};

// A computation (a, b) -> a + b on scalars of type t, as XLA's expanders build for reduce.
HloComputation* MakeScalarAddComputation(HloModule& module, NameUniquer& computation_names,
                                         NameUniquer& instruction_names, PrimitiveType t,
                                         const std::string& name = "scalar_add_computation");

// XLA's OpExpanderPass::Run skeleton: collects the instructions `matches` selects in every
// non-fusion computation (post order), then replaces each with what `expand` returns
// (nullptr: leave it). Control dependencies move to the replacement. Returns whether any
// instruction matched.
absl::StatusOr<bool> RunOpExpander(HloModule& module, const std::function<bool(const HloInstruction&)>& matches,
                                   const std::function<absl::StatusOr<HloInstruction*>(HloInstruction*)>& expand);

}  // namespace hloc::expanders
