// Helpers shared by the elemental emitter's source files (not a public contract).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "codegen/elemental/math_functions.h"
#include "llvm/IR/IRBuilder.h"

namespace hloc::codegen::elemental_internal {

using B = llvm::IRBuilderBase;

// ---- types -------------------------------------------------------------------------------
// f16, bf16 and the f8/f4 formats: XLA computes them in f32 and rounds each result.
bool IsNarrowFloat(PrimitiveType t);
// The type float arithmetic of `t` happens in (f32 for f32 and the narrow formats, f64 for f64;
// the component type for complex).
llvm::Type* ComputeFloatType(PrimitiveType t, B& b);
llvm::Value* I64(B& b, int64_t v);

// ---- narrow floats (float_codec.cc) -----------------------------------------------------------
// The value of element type `t` (f16/bf16/f8/f4 value, f32, f64) as f32/f64 (exact).
llvm::Value* UpcastFloat(B& b, llvm::Value* v, PrimitiveType t);
// An f32 (or f64 for t = f64) value rounded to nearest even into `t`'s value type. An f64 value
// bound for a narrow type is first rounded to f32, as XLA's f32 arithmetic does.
llvm::Value* DowncastFloat(B& b, llvm::Value* v, PrimitiveType t);
// reduce-precision on an f32/f64 value (XLA's semantics).
llvm::Value* EmitReducePrecision(B& b, llvm::Value* v, int exponent_bits, int mantissa_bits);
// The raw bits of a value of type t as an integer of BitWidth(t) bits (pred: 8 bits), and back.
llvm::Value* ValueToBits(B& b, llvm::Value* v, PrimitiveType t);
llvm::Value* BitsToValue(B& b, llvm::Value* bits, PrimitiveType t);
// Conversion (convert.cc).
absl::StatusOr<llvm::Value*> EmitConvertValue(ElementalIrEmitter& e, llvm::Value* v, PrimitiveType from,
                                              PrimitiveType to);

// ---- control flow --------------------------------------------------------------------------
using ValueFn = std::function<absl::StatusOr<llvm::Value*>()>;
// if (cond) then_fn() else else_fn(), both yielding values of one type; a phi joins them.
absl::StatusOr<llvm::Value*> EmitIfThenElse(B& b, llvm::Value* cond, const ValueFn& then_fn, const ValueFn& else_fn,
                                            const std::string& name);
// if (cond) body()
absl::Status EmitIf(B& b, llvm::Value* cond, const std::function<absl::Status()>& body, const std::string& name);
// for (iv = start; iv < end; ++iv) body(iv), with i64 bounds (elemental_ir_emitter.h).
using ::hloc::codegen::EmitForLoop;
// Nested loops over `bounds` (outermost first), body gets one i64 per bound.
absl::Status EmitLoops(B& b, const std::vector<int64_t>& bounds, const std::string& name,
                       const std::function<absl::Status(const std::vector<llvm::Value*>&)>& body);
// An alloca in the function's entry block, so loops do not grow the stack.
llvm::AllocaInst* EmitEntryAlloca(B& b, llvm::Type* type, const std::string& name);

// ---- math (math.cc) --------------------------------------------------------------------------
llvm::Value* CallIntrinsic(B& b, llvm::Intrinsic::ID id, std::vector<llvm::Value*> args);
llvm::Value* MathCall(ElementalIrEmitter& e, MathFunction fn, std::vector<llvm::Value*> args);
// Elementwise ops on values of `t`; `result_type` is the instruction's element type.
absl::StatusOr<llvm::Value*> EmitUnaryOp(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x);
absl::StatusOr<llvm::Value*> EmitBinaryOp(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x,
                                          llvm::Value* y);
absl::StatusOr<llvm::Value*> EmitCompare(ElementalIrEmitter& e, const HloInstruction* hlo, llvm::Value* x,
                                         llvm::Value* y);
absl::StatusOr<llvm::Value*> EmitClamp(ElementalIrEmitter& e, PrimitiveType t, llvm::Value* lo, llvm::Value* x,
                                       llvm::Value* hi);
// Complex (complex.cc); values are {re, im} structs of f32/f64.
absl::StatusOr<llvm::Value*> EmitComplexUnary(ElementalIrEmitter& e, HloOpcode op, PrimitiveType t, llvm::Value* x);
absl::StatusOr<llvm::Value*> EmitComplexBinary(ElementalIrEmitter& e, HloOpcode op, PrimitiveType t, llvm::Value* x,
                                               llvm::Value* y);
llvm::Value* MakeComplex(B& b, llvm::Value* re, llvm::Value* im);

// ---- generators of the non-elementwise ops (shape_ops.cc, loop_ops.cc) ------------------------
using Index = IrArray::Index;
const ElementGenerator& OperandGenerator(const GeneratorMap& ops, const HloInstruction* hlo, int64_t i);
absl::StatusOr<ElementGenerator> MakeShapeOpGenerator(ElementalIrEmitter& e, const HloInstruction* hlo,
                                                      const GeneratorMap& ops);
absl::StatusOr<ElementGenerator> MakeLoopOpGenerator(ElementalIrEmitter& e, const HloInstruction* hlo,
                                                     const GeneratorMap& ops);
// Index values (any integer type of `t`) as i64, unsigned ones zero-extended (u64 above INT64_MAX
// saturating), then clamped to [0, hi].
llvm::Value* ClampIndex(B& b, llvm::Value* v, PrimitiveType t, int64_t hi);

}  // namespace hloc::codegen::elemental_internal
