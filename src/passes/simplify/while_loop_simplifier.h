// simplify-while-loops (XLA's WhileLoopSimplifier). For each while loop whose body and
// condition it alone calls:
//   - loop-state elements that the init passes in twice and the body passes through (or
//     updates identically with dynamic-update-slice) are merged;
//   - dead loop state is removed: elements that neither the condition, a side effect, nor
//     another kept element depends on and that nobody reads after the loop (or that pass
//     through unchanged, so readers get the init);
//   - elements that are the same constant in the init and the body are removed, and scalar
//     constants passed through unchanged are propagated into the body and condition;
//   - a loop that runs 0 times becomes its init, one that runs once becomes its inlined body
//     (trip counts from XLA's induction-variable analysis, else by evaluating the condition
//     on a constant init with the reference evaluator);
//   - several induction variables stepping by constants are rewritten off one trip counter.
// Loops with side effects in the condition (or, for inlining, anywhere) are not removed;
// loops with send/recv keep their shape; frontend attribute _xla_disable_while_loop_dce
// (or xla.disable_while_loop_dce) turns the pass off for a loop. Unlike XLA, the body and
// condition are edited in place (they belong to the loop alone), and nested loop-state
// tuples are not flattened (XLA's TryFlattenNestedTuples is not implemented).
#pragma once
#include "engine/pass.h"

namespace hloc {

struct WhileLoopSimplifierOptions {
  // XLA's simplify_compare_instrs: fold compares of the induction variable against a
  // constant outside its range inside the body.
  bool simplify_compare_instrs = false;
};

class WhileLoopSimplifier : public HloPass {
 public:
  static constexpr const char* kName = "simplify-while-loops";
  explicit WhileLoopSimplifier(WhileLoopSimplifierOptions options = {}) : options_(options) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  WhileLoopSimplifierOptions options_;
};

}  // namespace hloc
