//===- rules/base/Common.td - matchers, constraints, attribute fns, builders ---===//
//
// The shared vocabulary of rule files. Each record names a C++ function in namespace
// hloc::rules, declared in src/engine/rule_helpers.h and defined in rule_helpers.cc; the
// signature of each is written above it. Instruction arguments arrive as HloInstruction*;
// int literals as int64_t, string literals as const char*. (See rules/base/Dsl.td for how
// each kind of record is used in a rule.)
//
// "Constant" below means XLA's effective constant (IsAll/IsAllFloat in algebraic_simplifier):
// a `constant`, or a `broadcast` of a `constant`, every element of which has the value.
//
// A rule file adds its own records the same way, in its own .td, with a CppHeader record
// naming the header that declares them:
//   def : CppHeader<"passes/simplify/algsimp_helpers.h">;
//   def IsNonNegative : Constraint<"$x is known to be >= 0", "IsNonNegative">;
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_COMMON_TD
#define HLOC_BASE_COMMON_TD

include "base/Dsl.td"
include "base/Ops.td"

//===- Matchers: bool Fn(const HloInstruction* inst, <literal args>) ------===//
// Used in patterns: (Add $a, (Zero)), (Multiply $x, (ScalarConstant 2)), (Zero:$z) binds it.

// bool IsZero(const HloInstruction*): a constant whose elements are all 0 (false for pred;
// -0.0 counts as 0, as in XLA).
def Zero : Matcher<"a constant whose elements are all zero", "rules::IsZero">;
// bool IsOne(const HloInstruction*): every element is 1 (true for pred).
def One : Matcher<"a constant whose elements are all one", "rules::IsOne">;
// bool IsMinusOne(const HloInstruction*): every element is -1 (signed ints and floats).
def MinusOne : Matcher<"a constant whose elements are all minus one", "rules::IsMinusOne">;
// bool IsConstant(const HloInstruction*): opcode constant (an array; not a tuple constant).
def AnyConstant : Matcher<"a constant instruction", "rules::IsConstant">;
// bool IsSplatConstant(const HloInstruction*): a constant (or broadcast of one) whose
// elements are all equal.
def SplatConstant : Matcher<"a constant whose elements are all equal", "rules::IsSplatConstant">;
// bool IsScalarConstant(const HloInstruction*, int64_t v): every element equals v exactly
// (for floats: the value v as a double; pred: v != 0). Example: (ScalarConstant 2).
def ScalarConstant : Matcher<"a constant whose elements all equal the given integer",
                             "rules::IsScalarConstant">;
// bool IsScalarConstantF(const HloInstruction*, const char* v): every element equals the
// float v ("0.5", "-2", "inf", "-inf"; "nan" matches NaN elements). Floats only.
def ScalarConstantF : Matcher<"a float constant whose elements all equal the given value",
                              "rules::IsScalarConstantF">;

//===- Constraints: bool Fn(RewriteContext& ctx, <args>) --------------------===//
// Used in a rule's third argument: [(IsIntegral $x), (Unless (HasOneUse $y))].

// bool IsIntegral(RewriteContext&, const HloInstruction* x): signed or unsigned integer elements.
def IsIntegral : Constraint<"$x has integer elements", "rules::IsIntegral">;
// bool IsSignedIntegral(RewriteContext&, const HloInstruction* x)
def IsSignedIntegral : Constraint<"$x has signed integer elements", "rules::IsSignedIntegral">;
// bool IsUnsignedIntegral(RewriteContext&, const HloInstruction* x)
def IsUnsignedIntegral : Constraint<"$x has unsigned integer elements", "rules::IsUnsignedIntegral">;
// bool IsFloat(RewriteContext&, const HloInstruction* x): f16, bf16, f32, f64, f8/f4 types.
def IsFloat : Constraint<"$x has floating-point elements", "rules::IsFloat">;
// bool IsComplex(RewriteContext&, const HloInstruction* x): c64 or c128.
def IsComplex : Constraint<"$x has complex elements", "rules::IsComplex">;
// bool IsPred(RewriteContext&, const HloInstruction* x)
def IsPred : Constraint<"$x has pred (boolean) elements", "rules::IsPred">;
// bool IsIntegralOrPred(RewriteContext&, const HloInstruction* x): where bitwise ops are exact.
def IsIntegralOrPred : Constraint<"$x has integer or pred elements", "rules::IsIntegralOrPred">;
// bool HasElementType(RewriteContext&, const HloInstruction* x, const char* type): e.g. "f32".
def HasElementType : Constraint<"$x has the named element type", "rules::HasElementType">;
// bool IsArray(RewriteContext&, const HloInstruction* x): not a tuple or token.
def IsArray : Constraint<"$x is an array (not a tuple or token)", "rules::IsArray">;
// bool HasOneUse(RewriteContext&, const HloInstruction* x): exactly one use (and not the root).
def HasOneUse : Constraint<"$x has exactly one use", "rules::HasOneUse">;
// bool SameShape(RewriteContext&, const HloInstruction* x, const HloInstruction* y):
// same element type and dimensions (layouts ignored).
def SameShape : Constraint<"$x and $y have the same shape (ignoring layout)", "rules::SameShape">;
// bool SameDims(RewriteContext&, const HloInstruction* x, const HloInstruction* y):
// same dimensions, element types may differ.
def SameDims : Constraint<"$x and $y have the same dimensions", "rules::SameDims">;
// bool SameElementType(RewriteContext&, const HloInstruction* x, const HloInstruction* y)
def SameElementType : Constraint<"$x and $y have the same element type", "rules::SameElementType">;
// bool SameLayout(RewriteContext&, const HloInstruction* x, const HloInstruction* y): same
// shape including layout (both without a layout also counts).
def SameLayout : Constraint<"$x and $y have the same shape and layout", "rules::SameLayout">;
// bool IsEffectiveScalar(RewriteContext&, const HloInstruction* x): an array of one element.
def IsEffectiveScalar : Constraint<"$x has exactly one element", "rules::IsEffectiveScalar">;
// bool IsScalar(RewriteContext&, const HloInstruction* x): rank 0.
def IsScalar : Constraint<"$x is a rank-0 array", "rules::IsScalar">;
// bool HasRank(RewriteContext&, const HloInstruction* x, int64_t rank)
def HasRank : Constraint<"$x has the given rank", "rules::HasRank">;
// bool IsStaticShape(RewriteContext&, const HloInstruction* x): no dynamic dimensions.
def IsStaticShape : Constraint<"$x has no dynamic dimensions", "rules::IsStaticShape">;
// bool ElementCountAtMost(RewriteContext&, const HloInstruction* x, int64_t n)
def ElementCountAtMost : Constraint<"$x has at most n elements", "rules::ElementCountAtMost">;
// bool IsIdentityPermutation(RewriteContext&, const HloInstruction* t): dimensions={0,1,...}
// (a transpose that moves nothing).
def IsIdentityPermutation : Constraint<"$t's dimensions attribute is 0, 1, ..., rank-1",
                                       "rules::IsIdentityPermutation">;
// bool ComparisonIs(RewriteContext&, const HloInstruction* c, const char* direction):
// a compare with direction "EQ", "NE", "LT", "LE", "GT" or "GE".
def ComparisonIs : Constraint<"$c compares with the given direction", "rules::ComparisonIs">;
// bool SameAttrs(RewriteContext&, const HloInstruction* x, const HloInstruction* y): the same
// opcode-specific attributes (dimensions, slice, direction, ...) and called computations;
// metadata, names and sharding are ignored.
def SameAttrs : Constraint<"$x and $y have the same attributes", "rules::SameAttrs">;

//===- Attribute functions: bool Fn(RewriteContext&, NewInstruction& out, <args>) ---===//
// Used inside a result node: (Broadcast $x, (ShapeOf $root), (DimensionsOf $b)).

// bool ShapeOf(RewriteContext&, NewInstruction&, const HloInstruction* x): out.shape = x's
// shape (with its layout).
def ShapeOf : AttrFn<"the result has $x's shape", "rules::ShapeOf">;
// bool ShapeOfWithElementType(RewriteContext&, NewInstruction&, const HloInstruction* x,
// const char* type): x's dimensions with the named element type ("f32").
def ShapeOfWithElementType : AttrFn<"$x's dimensions with the named element type",
                                    "rules::ShapeOfWithElementType">;
// bool ShapeOfWithTypeOf(RewriteContext&, NewInstruction&, const HloInstruction* dims,
// const HloInstruction* type): dims' dimensions (and layout) with type's element type.
def ShapeOfWithTypeOf : AttrFn<"$dims's dimensions with $type's element type",
                               "rules::ShapeOfWithTypeOf">;
// bool CopyAttrs(RewriteContext&, NewInstruction&, const HloInstruction* x): every attribute
// of x (dimensions, slice, direction, dot numbers, ...) and its called computations; not its
// metadata (created instructions take the rewritten root's).
def CopyAttrs : AttrFn<"the attributes and called computations of $x", "rules::CopyAttrs">;
// bool DimensionsOf(RewriteContext&, NewInstruction&, const HloInstruction* x): the
// dimensions={...} attribute of x.
def DimensionsOf : AttrFn<"the dimensions attribute of $x", "rules::DimensionsOf">;
// bool Dimensions(RewriteContext&, NewInstruction&, const char* list): dimensions={list},
// e.g. (Dimensions "1,0"), (Dimensions "") for none.
def Dimensions : AttrFn<"the given dimensions attribute", "rules::Dimensions">;
// bool ComposePerm(RewriteContext&, NewInstruction&, const HloInstruction* t1,
// const HloInstruction* t2): the permutation of transpose(transpose(A, t1), t2) as one
// transpose of A: out[i] = t1[t2[i]].
def ComposePerm : AttrFn<"the composition of two transposes' permutations", "rules::ComposePerm">;
// bool Direction(RewriteContext&, NewInstruction&, const char* dir): comparison_direction.
def Direction : AttrFn<"the given comparison direction", "rules::Direction">;
// bool TupleIndex(RewriteContext&, NewInstruction&, int64_t i): get-tuple-element index=i.
def TupleIndex : AttrFn<"the given tuple index", "rules::TupleIndex">;

//===- Builders: HloInstruction* Fn(RewriteContext&, <args>) ---------------===//
// Used as an operand or as the whole result: (Add $x, (ScalarLike $x, 1)), (ZeroLike $x).

// HloInstruction* ScalarLike(RewriteContext&, const HloInstruction* like, int64_t v):
// the constant v of like's element type, broadcast to like's shape.
def ScalarLike : Builder<"the constant v in $like's shape", "rules::ScalarLike">;
// HloInstruction* ScalarLikeF(RewriteContext&, const HloInstruction* like, const char* v):
// as ScalarLike with a float value ("0.5", "inf", "-inf", "nan").
def ScalarLikeF : Builder<"the float constant v in $like's shape", "rules::ScalarLikeF">;
// HloInstruction* ZeroLike(RewriteContext&, const HloInstruction* like)
def ZeroLike : Builder<"zeros in $like's shape", "rules::ZeroLike">;
// HloInstruction* OneLike(RewriteContext&, const HloInstruction* like)
def OneLike : Builder<"ones in $like's shape", "rules::OneLike">;
// HloInstruction* BroadcastTo(RewriteContext&, HloInstruction* x, const HloInstruction* like):
// x itself when it already has like's shape, else a broadcast of the scalar x to like's
// dimensions; refuses (nullptr) when x is not a scalar of like's element type.
def BroadcastTo : Builder<"$x broadcast to $like's shape", "rules::BroadcastTo">;

#endif  // HLOC_BASE_COMMON_TD
