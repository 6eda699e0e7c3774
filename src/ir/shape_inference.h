// Shape inference for every HLO opcode, with XLA's rules (xla/service/shape_inference.cc).
#pragma once
#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace hloc {

// The shape `inst` must have given its operands' shapes, attributes and called computations.
// Layouts are not inferred (the result carries none unless inference fixes it).
absl::StatusOr<Shape> InferShape(const HloInstruction& inst);

}  // namespace hloc
