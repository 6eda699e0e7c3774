// priority-fusion (XLA's PriorityFusion, xla/service/gpu/transforms/priority_fusion.cc):
// producers are fused into all of their consumers, best first by the cost model's benefit
// (time unfused - time fused), while the benefit is not negative and every consumer may
// take it (rules/fusion/*.td). A producer with several consumers is duplicated into each.
// After each fusion the priorities of the new fusions and of their operands are recomputed.
#pragma once
#include <ostream>
#include <string>

#include "engine/pass.h"

namespace hloc {

class PriorityFusion : public HloPass {
 public:
  static constexpr char kName[] = "priority-fusion";
  // target: "cpu" / "gpu" force the IsCpu / IsGpu rule requirements; "" follows the profile.
  explicit PriorityFusion(std::string target = "") : target_(std::move(target)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  std::string target_;
};

// Computations where fusion runs: the entry and control-flow bodies (while, conditional,
// call), not fused or embedded (to_apply) computations.
std::vector<HloComputation*> FusibleComputations(const HloModule& module);

// An instruction the user names for --explain-fusion, looked up in the input module before
// the pipeline runs: passes rename instructions (a producer copied into several fusions, a
// rule's replacement), but clones and replacements keep the place in the text they stand for.
struct InputInstruction {
  std::string name;           // as the user wrote it
  bool in_input = false;      // the input module has an instruction of that name
  std::string opcode;         // its opcode (in_input)
  TextLocation location;      // its place in the input text (line 0: unknown)
};
InputInstruction FindInputInstruction(const HloModule& input, const std::string& name);

struct FusionExplanation {
  std::string text;
  bool found = true;  // false: a name is in neither module, or its instruction is gone (exit 1)
};

// `hloc opt --explain-fusion A,B`: why producer A would or would not fuse into consumer B in
// `module` as it is (legality with the veto's rule file:line, then the cost numbers; for a
// pair that is no producer and consumer, multi-output sibling and horizontal fusion). Names
// are the input module's, found through renames by their place in the input text, or the
// optimized module's.
FusionExplanation ExplainFusion(HloModule& module, const InputInstruction& producer, const InputInstruction& consumer,
                                PassContext& context);

}  // namespace hloc
