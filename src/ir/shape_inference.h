// Shape inference for every HLO opcode, with XLA's rules (xla/service/shape_inference.cc and the
// per-opcode checks of xla/service/hlo_verifier.cc's ShapeVerifier).
#pragma once
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace hloc {

class HloComputation;

// The shape `inst` must have given its operands' shapes, attributes and called computations.
// Layouts are not inferred (the result carries none unless inference fixes it).
//
// For opcodes whose result is chosen by the instruction itself (convert's element type,
// broadcast / reshape / iota / constant / parameter / custom-call / rng / infeed shapes, dot's
// preferred element type) the instruction's own shape supplies the choice, and inference checks
// that the choice is legal. When the instruction's shape is not an array (e.g. a default Shape()
// while a parser is still working out the shape), dot and convolution fall back to the operands'
// higher-precision element type, as XLA does without a preferred element type.
absl::StatusOr<Shape> InferShape(const HloInstruction& inst);

// A called computation's signature: parameter shapes by parameter number, and the root shape.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};
// Error if the computation has no root or its parameter numbers have gaps.
absl::StatusOr<ProgramShape> ComputeProgramShape(const HloComputation& computation);

// XLA's ShapeUtil comparisons. All ignore layouts; "Compatible" also ignores which dimensions
// are dynamic (bounded '<=N' and static N compare equal), as XLA's ShapeUtil::Compatible does.
bool ShapesCompatible(const Shape& a, const Shape& b);
// ... and treats any two floating-point element types as the same (bf16 vs f32).
bool ShapesCompatibleIgnoringFpPrecision(const Shape& a, const Shape& b);
// ... and ignores element types entirely (dimensions and tuple structure only).
bool ShapesCompatibleIgnoringElementType(const Shape& a, const Shape& b);
// Same element type, or both floating point.
bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b);
// XLA's primitive_util::HigherPrecisionType: complex over real, then more exponent range, then
// more significand, then more bits, then signed over unsigned.
PrimitiveType HigherPrecisionElementType(PrimitiveType a, PrimitiveType b);

}  // namespace hloc
