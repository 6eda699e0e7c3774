// ElementalIrEmitter: LLVM IR computing one element of an instruction's result from element
// generators of its operands (XLA's ElementalIrEmitter). Loop, input and other fusion kernels of
// both backends are built from it: the kernel emitter walks the fused computation, asks for a
// generator per instruction, and loops over the output calling the root's generator.
//
// Semantics are XLA's (DESIGN.md §4): bf16/f16 arithmetic through f32 where XLA does it, guarded
// integer division and remainder (x/0 = -1, INT_MIN/-1 = INT_MIN, x%0 = x), shifts past the bit
// width, NaN-propagating minimum/maximum, round-half-to-even conversions, float -> int saturating
// conversions, accurate transcendentals (LLVM intrinsics where they exist; erf, tanh, atan2,
// cbrt, expm1, log1p, tan as math-library calls by name, see math_functions.h), the f8/f4 formats
// (and f16/bf16 conversions) in software with integer operations, complex c64/c128 arithmetic.
//
// Values: an element value has the type PrimitiveTypeToIrType gives (pred is an i8 holding 0 or
// 1, f8/f4 values are i8 bit patterns, c64 a {float,float}); a tuple-shaped instruction
// (variadic reduce / reduce-window, a tuple in a multi-output fusion) yields an LLVM struct of
// its elements' values, which get-tuple-element takes apart. Indices are i64.
// Transcendentals without an LLVM intrinsic are calls to libm names chosen in
// math_functions.h, made through EmitMathCall (the GPU emitter maps them to libdevice).
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codegen/elemental/ir_array.h"
#include "codegen/elemental/math_functions.h"
#include "ir/computation.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen {

// Produces the value of one element (in its arithmetic type) at a logical index.
using ElementGenerator = std::function<absl::StatusOr<llvm::Value*>(const IrArray::Index&)>;
using GeneratorMap = absl::flat_hash_map<const HloInstruction*, ElementGenerator>;

class ElementalIrEmitter {
 public:
  ElementalIrEmitter(llvm::Module* module, llvm::IRBuilderBase* builder) : module_(module), b_(builder) {}
  virtual ~ElementalIrEmitter() = default;

  // The generator for `hlo` given generators for its operands (looked up in `operands` by
  // operand instruction). Handles every elementwise opcode and element type, and the ops with an
  // elemental form: broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
  // dynamic-update-slice, concatenate, pad, iota, reverse, gather, select, clamp, convert,
  // bitcast-convert, reduce-precision, map, reduce, reduce-window, dot and convolution (as loops
  // inside the element). Unsupported opcodes: an Unimplemented error naming the opcode.
  // The generator refers to `operands` (the map, looked up when called, as XLA's does) and to
  // this emitter: both must outlive it; the map may still grow in between.
  absl::StatusOr<ElementGenerator> MakeElementGenerator(const HloInstruction* hlo, const GeneratorMap& operands);

  // Emits `callee` (a scalar computation: a reducer, comparator or map function) applied to
  // `args` and returns its results (one per leaf of its root). The default inlines the
  // computation's instructions through this emitter; backends may instead call a function.
  virtual absl::StatusOr<std::vector<llvm::Value*>> EmitThreadLocalCall(const HloComputation& callee,
                                                                        const std::vector<llvm::Value*>& args,
                                                                        const std::string& name);

  // A while over scalars (its state a scalar or a tuple of scalars) as an LLVM loop in the
  // current thread: what elementwise-while-to-map's map computations hold.
  absl::StatusOr<llvm::Value*> EmitScalarWhile(const HloInstruction& loop, const GeneratorMap* operands,
                                               const IrArray::Index& index);

  // One elementwise operation (any opcode IsElementwise accepts, plus convert, bitcast-convert
  // of equal widths, reduce-precision, compare, select, clamp) on operand values; what the kernel
  // emitters use for scalar work outside element generators.
  absl::StatusOr<llvm::Value*> EmitElementwiseOp(const HloInstruction* hlo, const std::vector<llvm::Value*>& operands);
  // XLA's convert from one element type's value to another's: RNE between floats (the narrow
  // formats in software, through f32 as XLA's f32 arithmetic does), float -> integer saturating
  // with NaN -> 0, integer -> integer wrapping, complex -> real taking the real part.
  absl::StatusOr<llvm::Value*> EmitConvert(llvm::Value* value, PrimitiveType from, PrimitiveType to);

  // Calls the math-library function `libm_name` (a name from LibmName: "erff", "atan2", ...) on
  // float or double arguments. The default declares the function by that name in the module
  // (the CPU JIT resolves it from the process); the GPU emitter maps it to libdevice.
  virtual llvm::Value* EmitMathCall(const std::string& libm_name, const std::vector<llvm::Value*>& args);
  // The transcendental intrinsics (exp, log, sin, cos, pow) that the CPU lowers to libm calls
  // but NVPTX cannot select: the default emits the intrinsic, the GPU emitter calls libdevice.
  // (sqrt, fabs, floor, ceil, round, roundeven, copysign are emitted directly: every target
  // has them.)
  virtual llvm::Value* EmitMathIntrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args);

  llvm::IRBuilderBase* builder() const { return b_; }
  llvm::Module* module() const { return module_; }

 private:
  llvm::Module* module_;
  llvm::IRBuilderBase* b_;
};

// The math function an intrinsic passed to EmitMathIntrinsic computes (exp, log, sin, cos, pow),
// so a backend can call it by LibmName / LibdeviceName; nullopt for any other intrinsic.
std::optional<MathFunction> IntrinsicMathFunction(llvm::Intrinsic::ID id);

// Start index `k` of a dynamic-slice or dynamic-update-slice `hlo` whose start indices begin at
// operand `first` (1 or 2): one scalar operand per dimension, or XLA's old form, a single rank-1
// operand holding them all. As i64, clamped to [0, hi] as XLA clamps. `operand(i)` is the
// element generator of operand i (empty if it has none).
absl::StatusOr<llvm::Value*> EmitClampedStartIndex(llvm::IRBuilderBase& b, const HloInstruction& hlo, int64_t first,
                                                   int64_t k, int64_t hi,
                                                   const std::function<ElementGenerator(int64_t)>& operand);

// A signed i64 key whose order is the total order of values of float type `t` (-NaN < -inf <
// ... < -0 < +0 < ... < +inf < +NaN), taken from the type's own bits: f4e2m1fn's sign is bit 3
// of its byte, and f8e8m0fnu has no sign bit. Compare, sort and top-k all order floats by it.
llvm::Value* EmitFloatTotalOrderKey(llvm::IRBuilderBase& b, llvm::Value* v, PrimitiveType t);

// LLVM's verifier over the function definitions of `module` from the `first`-th on (what one
// kernel added: the kernel and its helpers). An Internal error quoting the verifier, which the
// thunk emitter then places at the instruction the kernel computes; a module that only failed
// to verify as a whole, later, could not say which instruction's code was wrong.
absl::Status VerifyEmittedFunctions(const llvm::Module& module, size_t first);

// for (i = start; i < end; i += step) body(i), i64 (a signed compare; the add is nuw/nsw); the
// builder is left after the loop. The one loop builder of the CPU and GPU kernels.
absl::Status EmitStridedLoop(llvm::IRBuilderBase& b, llvm::Value* start, llvm::Value* end, llvm::Value* step,
                             const std::string& name, const std::function<absl::Status(llvm::Value*)>& body);
// for (i = start; i < end; ++i) body(i): EmitStridedLoop with step 1.
absl::Status EmitForLoop(llvm::IRBuilderBase& b, llvm::Value* start, llvm::Value* end, const std::string& name,
                         const std::function<absl::Status(llvm::Value*)>& body);

// Loops over every element of `shape` (outermost logical dimension of the layout first), calling
// `body` with the index. `part`/`num_parts` (i64 values; may be null for "whole shape") split
// the outermost loop for multi-threaded CPU kernels; the GPU emitters make their own indices.
absl::Status EmitLoopNest(const Shape& shape, llvm::IRBuilderBase& b, llvm::Value* part, llvm::Value* num_parts,
                          const std::function<absl::Status(const IrArray::Index&)>& body);

// Emits the fused computation of a loop fusion (or any elemental computation) into generators:
// parameters read from `parameter_arrays`, every other instruction through `emitter`.
absl::StatusOr<ElementGenerator> MakeFusedGenerator(ElementalIrEmitter& emitter, const HloComputation& fused,
                                                    const std::vector<IrArray>& parameter_arrays,
                                                    const HloInstruction* root);

}  // namespace hloc::codegen
