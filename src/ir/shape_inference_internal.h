// Helpers shared by the shape_inference_*.cc files (one file per opcode family). Not part of
// the public API: passes use ir/shape_inference.h.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/shape_inference.h"

namespace hloc::shape_inference_internal {

// Errors read like XLA's ("... in slice operation; ..."); the verifier prefixes the computation
// and instruction names.
template <typename... Args>
absl::Status InvalidArgument(const absl::FormatSpec<Args...>& format, const Args&... args) {
  return absl::InvalidArgumentError(absl::StrFormat(format, args...));
}

inline std::string Str(const Shape& s) { return s.ToString(/*print_layout=*/false); }
inline std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }
inline std::string Join(const std::vector<int64_t>& v) { return absl::StrJoin(v, ","); }

inline bool IsUnbounded(int64_t size) { return size == Shape::kUnboundedSize; }
// Two dimension sizes agree, or at least one of them is unbounded ('?').
inline bool CompatibleDims(int64_t a, int64_t b) { return IsUnbounded(a) || IsUnbounded(b) || a == b; }
bool IsScalar(const Shape& s);
bool IsUnboundedDynamic(const Shape& s);
bool IsBoundedDynamicDimension(const Shape& s, int64_t dim);
// Array shape without a layout, with the given dynamic flags (empty = all static).
Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims, std::vector<bool> dynamic = {});
// The same shape with another element type (layout dropped: inference does not pick layouts).
Shape ChangeElementType(const Shape& s, PrimitiveType type);
void SetDynamicDimension(Shape& s, int64_t dim, bool dynamic);
Shape StripLayout(const Shape& s);

absl::Status ExpectArray(const Shape& shape, std::string_view what);
absl::Status CheckOperandCount(const HloInstruction& inst, int64_t expected);
absl::Status CheckMinOperandCount(const HloInstruction& inst, int64_t minimum);
std::vector<const Shape*> OperandShapes(const HloInstruction& inst);
// The program shape of called_computations()[index]; error if there is no such computation.
absl::StatusOr<ProgramShape> CalledProgramShape(const HloInstruction& inst, size_t index,
                                                std::string_view role);
// The instruction's single "dimensions={d}" attribute (concatenate, all-gather, ...).
absl::StatusOr<int64_t> SingleDimension(const HloInstruction& inst, std::string_view what);

// xla/window_util: the output size of a window over a base of `base` elements.
absl::StatusOr<Shape> InferWindowOutputShape(const Shape& base, const Window& window,
                                             PrimitiveType element_type);
// XLA's VerifyReducerShape: a reduction computation over `inputs` operands takes 2*inputs scalar
// parameters (accumulators, then inputs) and returns a scalar or a tuple of `inputs` scalars.
absl::Status VerifyReducerShape(const ProgramShape& reducer,
                                const std::vector<const Shape*>& init_value_shapes,
                                const std::vector<PrimitiveType>& input_element_types,
                                int64_t inputs);

// One function per opcode family; each switches over the opcodes it owns.
absl::StatusOr<Shape> InferElementwiseFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferDataMovementFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferIndexingFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferContractionFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferReductionFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferControlFamily(const HloInstruction& inst);
absl::StatusOr<Shape> InferCollectiveFamily(const HloInstruction& inst);

// Elementwise helpers also used by other families (e.g. map, all-reduce reducers).
absl::StatusOr<Shape> InferBinaryOpShape(HloOpcode op, const Shape& lhs, const Shape& rhs);

}  // namespace hloc::shape_inference_internal
