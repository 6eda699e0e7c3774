// Helpers shared by the control-flow simplifiers and the movers (simplify-while-loops,
// simplify-conditional, simplify-sorts, reshape-mover, convert-mover): building and
// replacing instructions with module-unique names, inlining and cloning computations,
// side-effect queries, dead-code cleanup, and evaluating small constant expressions with
// the reference evaluator. They play the part of XLA's hlo_creation_utils, CallInliner and
// HloComputation::ReplaceInstruction for these passes.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/module.h"
#include "passes/pass_util.h"

#define HLOC_CF_CONCAT_INNER(a, b) a##b
#define HLOC_CF_CONCAT(a, b) HLOC_CF_CONCAT_INNER(a, b)
#define HLOC_CF_RETURN_IF_ERROR(expr)          \
  do {                                         \
    if (absl::Status _st = (expr); !_st.ok()) \
      return _st;                              \
  } while (0)
#define HLOC_CF_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return tmp.status();                 \
  lhs = std::move(*tmp)
#define HLOC_CF_ASSIGN_OR_RETURN(lhs, expr) \
  HLOC_CF_ASSIGN_OR_RETURN_IMPL(HLOC_CF_CONCAT(_cf_statusor_, __LINE__), lhs, expr)

namespace hloc::cf {

// The instructions calling each computation, recomputed (lazily) after the call graph
// gained edges. Edges a pass removes may linger until the next recomputation, which only
// over-counts callers: a pass then clones a computation it could have edited in place.
class CallerMap {
 public:
  explicit CallerMap(const HloModule& module) : module_(module) {}
  const std::vector<HloInstruction*>& Of(const HloComputation* comp);
  void Invalidate() { stale_ = true; }

 private:
  const HloModule& module_;
  bool stale_ = true;
  absl::flat_hash_map<const HloComputation*, std::vector<HloInstruction*>> map_;
  std::vector<HloInstruction*> none_;
};

// What the passes here need to build new instructions: the module, its name uniquers
// (pass_util's, seeded with every name the module holds) and its callers, which every
// instruction or computation added through the builder keeps up to date.
struct Builder {
  explicit Builder(HloModule& m) : module(m), names(CloneNames::ForModule(m)), callers(m) {}
  HloModule& module;
  CloneNames names;
  CallerMap callers;

  // Adds `inst` to `comp` just before `before` (appended when null), named after `base`
  // (the opcode's name when empty), and returns it.
  HloInstruction* Add(HloComputation* comp, std::unique_ptr<HloInstruction> inst, const HloInstruction* before,
                      std::string_view base = "");
  HloInstruction* Gte(HloComputation* comp, HloInstruction* tuple, int64_t index, const HloInstruction* before);
  HloInstruction* Tuple(HloComputation* comp, absl::Span<HloInstruction* const> elements,
                        const HloInstruction* before, std::string_view base = "");
  HloInstruction* Reshape(HloComputation* comp, const Shape& shape, HloInstruction* operand,
                          const HloInstruction* before);
  HloInstruction* Transpose(HloComputation* comp, HloInstruction* operand, absl::Span<const int64_t> permutation,
                            const HloInstruction* before);
  HloInstruction* Convert(HloComputation* comp, HloInstruction* operand, PrimitiveType type,
                          const HloInstruction* before);
  HloInstruction* Broadcast(HloComputation* comp, const Shape& shape, HloInstruction* operand,
                            absl::Span<const int64_t> dimensions, const HloInstruction* before);
  HloInstruction* Constant(HloComputation* comp, Literal literal, const HloInstruction* before);
  // A copy of `inst` (attributes, called computations, metadata) with a new shape and
  // operands, placed before `before` (in inst's computation when `before` is null). A fused
  // or async-wrapped computation is cloned, since it belongs to one caller; `cloned` lets
  // several copies (an async start and its done) share the clones.
  absl::StatusOr<HloInstruction*> CloneWithNewOperands(
      const HloInstruction& inst, const Shape& shape, absl::Span<HloInstruction* const> operands,
      const HloInstruction* before, absl::flat_hash_map<const HloComputation*, HloComputation*>* cloned = nullptr);

  // Inlines `callee` into `target` just before `before`, its parameter i replaced by args[i];
  // returns the instruction the callee's root became. Called computations are shared, except
  // fused and async-wrapped ones, which are cloned.
  absl::StatusOr<HloInstruction*> Inline(HloComputation* target, const HloComputation& callee,
                                         absl::Span<HloInstruction* const> args, const HloInstruction* before);
  // A deep copy of `comp` added to the module (pass_util's CloneComputation, names suffixed
  // "clone"). With `kept_parameters`, parameter kept_parameters[j] becomes parameter j and the
  // others are dropped (they must be unused; the computation may not own fused or async
  // computations).
  absl::StatusOr<HloComputation*> CloneComputation(const HloComputation& comp,
                                                   const std::vector<int64_t>* kept_parameters = nullptr);
};

// Instructions to delete once a pass no longer holds pointers into the graph (XLA defers
// deletion the same way): Run removes those still dead, and operands they leave dead.
class DeferredCleanup {
 public:
  void Add(HloInstruction* inst);
  absl::Status Run();

 private:
  std::vector<std::pair<HloComputation*, int64_t>> pending_;  // (computation, unique id)
};

// Makes users of `old_inst` (and the root, if it is) use `new_inst`, moves its control edges
// and metadata over, then removes `old_inst` and the operands left dead by that, as XLA's
// HloComputation::ReplaceInstruction does; with `cleanup`, the removal waits for it.
absl::Status ReplaceInstruction(HloInstruction* old_inst, HloInstruction* new_inst,
                                DeferredCleanup* cleanup = nullptr);
// comp->RemoveInstruction(inst), and a removed fusion's fused computation stops naming it
// (it stays, uncalled, until RemoveUncalledComputations).
absl::Status RemoveInstruction(HloComputation* comp, HloInstruction* inst);
// Removes every instruction of `comp` that nothing uses (not the root, parameters, side
// effects or instructions with control edges). Returns whether anything was removed.
absl::StatusOr<bool> RemoveDeadInstructions(HloComputation* comp);
// Removes those of `candidates` (and, transitively, what they call) that nothing calls any
// more; never the entry.
absl::Status RemoveUncalledComputations(HloModule& module, std::vector<HloComputation*> candidates);

// Side effects, control edges and removal follow pass_util (XLA's rules), shared with the
// other passes.
using ::hloc::ComputationHasSideEffect;
using ::hloc::HasControlDependencies;
using ::hloc::HasSideEffect;
using ::hloc::RemoveInstructionAndUnusedOperands;
// An instruction DCE may remove: no users, not the root, not a parameter, no side effect,
// no control edges.
bool IsRemovableDead(const HloInstruction& inst);


bool IsScalar(const Shape& shape);
bool IsEffectiveScalar(const Shape& shape);  // an array of one element
// The value of an integral (or pred) literal with one element, if it fits in int64.
std::optional<int64_t> LiteralAsScalarInt64(const Literal& literal);
bool IsIdentityPermutation(absl::Span<const int64_t> permutation);
std::vector<int64_t> InversePermutation(absl::Span<const int64_t> permutation);

// A crude upper bound on the reference evaluator's work for one instruction (elements
// touched; dots, convolutions and the like count output x operand), and for a computation
// with everything it calls as control flow; nullopt for what may not terminate or must not
// run at compile time (while loops, custom-calls, side effects). Folding at compile time
// stays below kMaxEvaluationCost, so a pass never stalls on a large loop body.
inline constexpr int64_t kMaxEvaluationCost = int64_t{1} << 26;
std::optional<int64_t> EvaluationCost(const HloInstruction& inst);
std::optional<int64_t> EvaluationCost(const HloComputation& comp);

// Evaluates `root` with the reference evaluator when it depends only on constants and on
// the instructions given values in `known`; nullopt when it reads anything else (a
// parameter, a side effect) or is too large to fold.
std::optional<Literal> EvaluateExpression(const HloInstruction* root,
                                          const absl::flat_hash_map<const HloInstruction*, const Literal*>& known = {});
// `literal` converted to `type` as HLO's convert does (through the evaluator).
absl::StatusOr<Literal> ConvertLiteral(const Literal& literal, PrimitiveType type);

// --- While-loop analysis (XLA's while_loop_analysis) -------------------------------------------
// Looks through copies and get-tuple-element(tuple(...)) pairs.
const HloInstruction* TraceThroughCopyAndGteTupleChain(const HloInstruction* inst);
// The only get-tuple-element of `tuple` at `index`, or null when there are none or several.
HloInstruction* GetUniqueGteInstruction(const HloInstruction* tuple, int64_t index);
// The tuple index of the loop's induction variable: the condition is a scalar function of
// that element alone, and the body updates it as a scalar function of itself alone.
std::optional<int64_t> GetLoopInductionVarTupleIdx(const HloInstruction* while_op);
// The trip count of `for (i = init; i < N (or <= N); i += k)` with constant N and k > 0.
std::optional<int64_t> MatchTrivialLoopTripCount(const HloInstruction* while_op, int64_t indvar_index,
                                                 const Literal& indvar_init);
// XLA's ComputeWhileLoopTripCount: the pattern above, or else running the condition and the
// induction variable's update with the evaluator for up to max_brute_force_iters trips.
std::optional<int64_t> ComputeWhileLoopTripCount(const HloInstruction* while_op, int64_t max_brute_force_iters = 128);

// Frontend attributes that switch a pass's rewriting of one instruction off ("true", "1",
// "yes", any case).
bool HasTrueFrontendAttribute(const HloInstruction& inst, absl::Span<const std::string_view> keys);

}  // namespace hloc::cf
