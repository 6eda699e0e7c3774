// while-loop-invariant-code-motion (XLA's WhileLoopInvariantCodeMotion): work in a loop body
// that depends only on loop state the body passes through unchanged (and on constants) is
// computed once before the loop; its value joins the loop state as a new element the body
// passes through. Flax's GRU concatenated its three gate weight matrices (dot-merger's
// operand) in every step of its scan; hoisted, once a call.
//
// As XLA by default: constants alone are not hoisted, nor ops whose result is larger than
// their operands together (a broadcast would grow the loop state), nor side effects or
// control flow. Only loops whose body and condition no other instruction calls.
#pragma once
#include "engine/pass.h"
#include "passes/passes.h"

namespace hloc {

class WhileLoopInvariantCodeMotion : public HloPass {
 public:
  static constexpr const char* kName = "while-loop-invariant-code-motion";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

void RegisterWhileLoopInvariantCodeMotionPass(PassRegistry& registry);

}  // namespace hloc
