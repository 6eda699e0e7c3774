//===- rules/base/Dsl.td - the rewrite-rule language of hloc ------------------===//
//
// A rule reads as a one-line math comment and a pattern:
//
//   // A + 0 => A
//   def AddZero : Rule<(Add $a, (Zero)), (replaceWith $a)>;
//   // transpose(transpose(A)) => transpose(A) with the composed permutation
//   def TransposeTranspose : Rule<(Transpose:$t2 (Transpose:$t1 $a)),
//                                 (Transpose $a, (ComposePerm $t1, $t2))>;
//
// Patterns (the first DAG):
//   (Op args...)        an instruction with that opcode and exactly that many operands, each
//                       matching its arg; `(Op:$x ...)` binds it to $x. An OpSet in place of
//                       the Op makes the rule one rule per member op (see OpSet below).
//   $x                  any instruction, bound to $x; a repeated $x must be the same instruction.
//   (Matcher extra...)  an instruction for which the matcher's C++ predicate holds; extra int or
//                       string args are passed after it: (ScalarConstant 2); `(Zero:$z)` binds it.
// Constraints (the third argument, a list of DAGs): (Constraint $x, $y, 3, "s") calls its C++
//   predicate on bound instructions and literal args; all must hold.
// Results (the second DAG):
//   (replaceWith $x)    the root is replaced by the bound instruction $x.
//   (Op args...)        a new instruction: $-args are operands, nested (Op ...) are new
//                       operands built first, (AttrFn ...) args set its shape/attributes, and
//                       (Builder ...) args are operands built by C++. `(Op:$n ...)` names it so a
//                       later part of the result can reuse it. Shapes are inferred unless an
//                       AttrFn sets one. The root's replacement must have the root's shape
//                       (ignoring layout) or the rule refuses.
//   (Builder args...)   the replacement is built by C++ (e.g. a constant).
// A rule refuses (does nothing) whenever a predicate fails, an AttrFn/Builder returns
// false/nullptr, or shape inference fails; instructions it created are then discarded.
//
// Each record below names a C++ function (its Fn) in the hloc namespace; the generator
// emits calls to it, so the rule files hold no C++. Signatures:
//   Matcher:    bool Fn(const HloInstruction* inst, <extra args as int64_t / const char*>)
//   Constraint: bool Fn(RewriteContext& ctx, <args: const HloInstruction* or int64_t / const char*>)
//   AttrFn:     bool Fn(RewriteContext& ctx, NewInstruction& out, <args as for Constraint>)
//   Builder:    HloInstruction* Fn(RewriteContext& ctx, <args as for Constraint>)
//   NativeRule: bool Fn(RewriteContext& ctx, HloInstruction* root, <bound $-values in order>)
// Instruction arguments are passed as HloInstruction* (so `const HloInstruction*` parameters
// work too), ints as int64_t and strings as const char*.
//
// Also (additions used by hloc-tblgen):
//   ?  or  ?:$x         in a pattern: any instruction, unbound (or bound to $x).
//   Zero                a bare Matcher record in a pattern means (Zero).
//   (Unless (C $x ...)) in Constraints: the constraint must NOT hold.
//   def : CppHeader<"passes/simplify/algsimp_helpers.h">;  the generated code #includes it, so
//                       a rule file's own Matcher/Constraint/... functions are declared.
//
// Other record families built on this file: layout rows (base/Layout.td), fusion rows and vetoes
// (base/Fusion.td), SPMD strategies (base/Spmd.td) and library patterns (base/Library.td: what a
// library call such as a cuBLASLt GEMM absorbs). A library pattern is not a Rule: it names a root
// op, LibraryConstraint preconditions on $root and a C++ Fn that matches the rest and builds the
// call; its pattern is described in text, not compiled from a DAG.
//===----------------------------------------------------------------------===//

#ifndef HLOC_BASE_DSL_TD
#define HLOC_BASE_DSL_TD

// What a rule, a Fusible row or an OpCost row names as its op: one Op, or an OpSet.
class OpOrSet;

// A property an opcode has whatever its operands (MLIR's op traits). rules/base/Ops.td defines
// the traits and tags each Op with its own; an OpSet can select ops by trait.
class OpTrait<string summary> {
  string Summary = summary;
}

// An HLO opcode, by XLA's text name (rules/base/Ops.td defines one per opcode), and its traits.
class Op<string name, list<OpTrait> traits = []> : OpOrSet {
  string Name = name;
  list<OpTrait> Traits = traits;
}

// A set of ops, usable wherever one op is (GlobalISel's wip_match_opcode): as the operator of
// a rule's pattern and result, or as the op of a Fusible or OpCost row. Its members are `ops`,
// then every Op (in rules/base/Ops.td order) having any trait of `anyOf`, less `except`.
// hloc-tblgen expands a record that names a set into one entry per member, as if it were written
// once per op: a Fusible or OpCost row becomes one table row per op (all carrying the row's
// name and line), and a rule becomes one matcher function per op, every occurrence of the set in
// its pattern, constraints and result standing for that op (a rule may range over one set). An
// empty set, a member that names no HLO opcode, a member listed twice and an `except` op that is
// not a member are errors at the record that uses the set.
//   def BroadcastSinkUnaryOps : OpSet<[Negate, Abs, Exp, Not]>;
//   def UnaryOfBroadcastScalar : Rule<(BroadcastSinkUnaryOps:$u (Broadcast $s)),
//       (Broadcast (BroadcastSinkUnaryOps $s), (ShapeOf $u), (Dimensions "")), [(IsScalar $s)]>;
//   def ElementwiseIsFusible : Fusible<OpSet<[], [Elementwise], [StochasticConvert]>, [LoopFusion]>;
class OpSet<list<Op> ops, list<OpTrait> anyOf = [], list<Op> except = []> : OpOrSet {
  list<Op> Ops = ops;
  list<OpTrait> AnyOf = anyOf;
  list<Op> Except = except;
}

class Matcher<string summary, string fn> {
  string Summary = summary;
  string Fn = fn;
}

class Constraint<string summary, string fn> {
  string Summary = summary;
  string Fn = fn;
}

class AttrFn<string summary, string fn> {
  string Summary = summary;
  string Fn = fn;
}

class Builder<string summary, string fn> {
  string Summary = summary;
  string Fn = fn;
}

// A hardware capability or compilation mode a rule needs (`let Requires = [IsGpu]`). The
// records are all in rules/base/Requirements.td, included at the end of this file.
class Requirement<string summary> {
  string Summary = summary;
}

// Result operator: replace the root by a bound value.
def replaceWith;

// Constraint operator: (Unless (IsFloat $x)) holds when the inner constraint does not.
def Unless;

// A C++ header the generated code includes (declares a rule file's own C++ functions).
class CppHeader<string path> {
  string Path = path;
}

// The rewrite passes a rule's `Pass` may name. Each runs its rules by this name where a pipeline
// (pipelines/*.yaml) lists it; hloc-tblgen rejects a rule whose Pass is not declared here, so a
// misspelt Pass cannot make a pass that no pipeline runs. A new rule-driven pass is declared
// with `def : RewritePass<"name">;` and added to a pipeline.
class RewritePass<string name> {
  string Name = name;
}
def : RewritePass<"algsimp">;

// A property of a rule that YAML selects rules by (a rule's `Tags`): a pipeline's
// `rules: {disable: [tag:NAME]}` switches off every rule of the pass carrying it, and
// `enable: [tag:NAME]` keeps only those. A tag is declared once, here, with its name in YAML
// and what it means; a rule names the record, so an undeclared tag is an error at the rule
// (TableGen's "Variable not defined"), and hloc-tblgen rejects a name that is not lower_snake
// case, two tags with one name, and a rule that lists a tag twice.
//   def AddZero : Rule<(Add $a, Zero), (replaceWith $a)> { let Tags = [InexactLikeXla]; }
class Tag<string name, string summary> {
  string Name = name;
  string Summary = summary;
}
// XLA applies the rule although it is not exact for every float input (the rule's comment says
// where it differs: a signed zero, an overflow, a rounding). Off: `disable: [tag:inexact_like_xla]`.
def InexactLikeXla : Tag<"inexact_like_xla", "XLA applies this although it is inexact for some floats">;

class Rule<dag pattern, dag result, list<dag> constraints = []> {
  dag Pattern = pattern;
  dag Result = result;
  list<dag> Constraints = constraints;
  string Pass = "";           // the rewrite pass that runs it, e.g. "algsimp" (required; a RewritePass)
  string Group = "";          // YAML enables/disables rules by name or by group
  int Priority = 0;           // higher tries first; declaration order breaks ties
  list<Requirement> Requires = [];
  list<Tag> Tags = [];        // YAML selects rules by tag: `rules: {disable: [tag:inexact_like_xla]}`
  bit Commutative = 0;        // also match with the root's two operands swapped
  string Summary = "";        // defaults to the comment above the def, else the pattern text
  string Native = "";         // set by NativeRule
}

// The escape hatch: match `pattern` (and constraints) declaratively, then let C++ build and
// apply the replacement. If a rule file needs this for more than a few rules, the DSL is
// missing a matcher or builder: add one instead.
class NativeRule<dag pattern, string fn, list<dag> constraints = []>
    : Rule<pattern, (replaceWith), constraints> {
  let Native = fn;
}

// Every Requirement record (one C++ enum is generated from them).
include "base/Requirements.td"

#endif  // HLOC_BASE_DSL_TD
