// Helpers shared by the library-call passes (src/passes/library/): which hardware the passes
// target, small pattern-matching predicates after XLA's pattern_matcher (m::Broadcast,
// m::ConstantScalar, ...), and instruction construction checked by shape inference.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/pass.h"
#include "engine/profile.h"
#include "ir/module.h"
#include "passes/expanders/expander_util.h"
#include "passes/pass_util.h"

namespace hloc::library {

using DimVec = std::vector<int64_t>;

// Library rewrites are XLA:GPU's: they run for a GPU profile and are no-ops under the CPU
// profile, whose backend runs dots and convolutions itself. Without a profile (hloc opt
// --passes ...) they run as for a generic GPU without tensor cores.
bool TargetsGpu(const PassContext& context);
// Compute capability of the profile (0.0 without one).
bool ComputeCapabilityAtLeast(const PassContext& context, int major, int minor);
bool HasTensorCores(const PassContext& context);

// ---- Matching (XLA's m:: patterns) ---------------------------------------------------------------
// A constant whose every dimension is 1 (XLA's ConstantEffectiveScalar), its value as a double.
std::optional<double> EffectiveScalarConstant(const HloInstruction* inst);
// broadcast(constant effective scalar) (XLA: m::Broadcast(m::ConstantEffectiveScalar())); the
// value, when it is one.
std::optional<double> BroadcastOfScalarConstant(const HloInstruction* inst);
// The same with an exact value (XLA's ConstantScalar(v) compares exactly).
bool IsBroadcastOfScalar(const HloInstruction* inst, double value);
// Distinct users (XLA's user_count; hloc's users() lists one entry per use).
int64_t UniqueUserCount(const HloInstruction* inst);
// Custom-call with this target.
bool IsCustomCall(const HloInstruction* inst, std::string_view target);

// ---- Layout facts ----------------------------------------------------------------------------
// minor_to_major of an array shape (the default, descending one when it has no layout).
DimVec MinorToMajor(const Shape& shape);
bool HasDefaultLayout(const Shape& shape);
// XLA's MatrixLayout::For(shape, batch, rows, cols) succeeds: batch, row and column dimension
// groups each physically contiguous in the listed order, and the batch group not the most minor
// (cuBLAS has one leading-dimension stride and one batch stride). Empty groups count as size 1.
bool IsMatrixLayoutRepresentable(const Shape& shape, const DimVec& batch, const DimVec& rows, const DimVec& cols);
// Dimensions of `rank` not in a or b, ascending.
DimVec OtherDims(int64_t rank, const DimVec& a, const DimVec& b);

// A new instruction of `opcode` and `shape` with `operands`, named from `name`, checked by shape
// inference and placed before `before` (via the builder, whose first error wins).
HloInstruction* AddNew(expanders::ExpanderBuilder& b, HloOpcode opcode, const Shape& shape,
                       const std::vector<HloInstruction*>& operands, const std::string& name);

}  // namespace hloc::library
