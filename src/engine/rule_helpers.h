// The C++ side of rules/base/Common.td: matchers, constraints, attribute functions and
// builders that generated rule code calls by name (namespace hloc::rules). Each record's
// summary and signature is documented in Common.td; keep the two in step.
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/rewrite.h"
#include "ir/instruction.h"

namespace hloc {

// Generated code: a rule that refuses after creating instructions drops them first.
inline bool RefuseRule(RewriteContext& ctx, size_t mark) {
  ctx.DiscardCreatedSince(mark);
  return false;
}

namespace rules {

// --- Matchers -----------------------------------------------------------------------------
// "Constant" = a constant, or a broadcast of a constant (XLA's IsAll), with every element v.
bool IsZero(const HloInstruction* inst);
bool IsOne(const HloInstruction* inst);
bool IsMinusOne(const HloInstruction* inst);
bool IsConstant(const HloInstruction* inst);
bool IsSplatConstant(const HloInstruction* inst);
bool IsScalarConstant(const HloInstruction* inst, int64_t v);
bool IsScalarConstantF(const HloInstruction* inst, const char* v);

// --- Constraints --------------------------------------------------------------------------
bool IsIntegral(RewriteContext& ctx, const HloInstruction* x);
bool IsSignedIntegral(RewriteContext& ctx, const HloInstruction* x);
bool IsUnsignedIntegral(RewriteContext& ctx, const HloInstruction* x);
bool IsFloat(RewriteContext& ctx, const HloInstruction* x);
bool IsComplex(RewriteContext& ctx, const HloInstruction* x);
bool IsPred(RewriteContext& ctx, const HloInstruction* x);
bool IsIntegralOrPred(RewriteContext& ctx, const HloInstruction* x);
bool HasElementType(RewriteContext& ctx, const HloInstruction* x, const char* type);
bool IsArray(RewriteContext& ctx, const HloInstruction* x);
bool HasOneUse(RewriteContext& ctx, const HloInstruction* x);
bool SameShape(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);
bool SameDims(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);
bool SameElementType(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);
bool SameLayout(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);
bool IsEffectiveScalar(RewriteContext& ctx, const HloInstruction* x);
bool IsScalar(RewriteContext& ctx, const HloInstruction* x);
bool HasRank(RewriteContext& ctx, const HloInstruction* x, int64_t rank);
bool IsStaticShape(RewriteContext& ctx, const HloInstruction* x);
bool ElementCountAtMost(RewriteContext& ctx, const HloInstruction* x, int64_t n);
bool IsIdentityPermutation(RewriteContext& ctx, const HloInstruction* t);
bool ComparisonIs(RewriteContext& ctx, const HloInstruction* c, const char* direction);
bool SameAttrs(RewriteContext& ctx, const HloInstruction* x, const HloInstruction* y);

// --- Attribute functions ------------------------------------------------------------------
bool ShapeOf(RewriteContext& ctx, NewInstruction& out, const HloInstruction* x);
bool ShapeOfWithElementType(RewriteContext& ctx, NewInstruction& out, const HloInstruction* x,
                            const char* type);
bool ShapeOfWithTypeOf(RewriteContext& ctx, NewInstruction& out, const HloInstruction* dims,
                       const HloInstruction* type);
bool CopyAttrs(RewriteContext& ctx, NewInstruction& out, const HloInstruction* x);
bool DimensionsOf(RewriteContext& ctx, NewInstruction& out, const HloInstruction* x);
bool Dimensions(RewriteContext& ctx, NewInstruction& out, const char* list);
bool ComposePerm(RewriteContext& ctx, NewInstruction& out, const HloInstruction* t1,
                 const HloInstruction* t2);
bool Direction(RewriteContext& ctx, NewInstruction& out, const char* dir);
bool TupleIndex(RewriteContext& ctx, NewInstruction& out, int64_t i);

// --- Builders -----------------------------------------------------------------------------
HloInstruction* ScalarLike(RewriteContext& ctx, const HloInstruction* like, int64_t v);
HloInstruction* ScalarLikeF(RewriteContext& ctx, const HloInstruction* like, const char* v);
HloInstruction* ZeroLike(RewriteContext& ctx, const HloInstruction* like);
HloInstruction* OneLike(RewriteContext& ctx, const HloInstruction* like);
HloInstruction* BroadcastTo(RewriteContext& ctx, HloInstruction* x, const HloInstruction* like);

// --- Shared by helper code of rule files --------------------------------------------------
// The constant behind an effective constant: `inst` if it is a constant, its operand if it is
// a broadcast of a constant; nullptr otherwise.
const HloInstruction* EffectiveConstant(const HloInstruction* inst);
// Parses "0.5", "-2", "inf", "-inf", "nan"; false if the text is not a number.
bool ParseDoubleArg(const char* text, double* out);

}  // namespace rules
}  // namespace hloc
