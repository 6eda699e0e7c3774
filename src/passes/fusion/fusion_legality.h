// Whether a producer may fuse into a consumer, decided from the generated tables of
// rules/fusion/*.td (src/engine/rule_tables.h): Fusible records say which ops fuse and into
// which kinds; FusionVeto records refuse pairs, each with a reason and its file:line. The
// answer carries that reason, so `hloc opt --explain-fusion` and the passes' traces can show it.
#pragma once
#include <string>
#include <vector>

#include "engine/pass.h"
#include "engine/rule_tables.h"
#include "ir/instruction.h"

namespace hloc::fusion {

// The most operands and outputs a kernel built by merging fusions may have (its parameter space;
// the TooManyOperands veto in rules/fusion/FusionVetoes.td states the same bound for
// producer-consumer fusion): multi-output and horizontal fusion check it in C++.
inline constexpr int64_t kMaxOperandsAndOutputs = 96;

struct FusionDecision {
  bool ok = true;
  std::string reason;  // why not (empty when ok)
  std::string rule;    // the record that decided, when one did ("ExpensiveProducerReused")
  std::string file;    // its .td file and line
  int line = 0;

  static FusionDecision Allow() { return {}; }
  static FusionDecision Refuse(std::string reason, std::string rule = "", std::string file = "", int line = 0) {
    return {false, std::move(reason), std::move(rule), std::move(file), line};
  }
  // "reason (rule at file:line)".
  std::string ToString() const;
};

// The names of the fusion vetoes (the decision records of the fusion passes, PassInfo::records):
// a pipeline entry's `rules: {disable: [NAME]}` switches one off for that pass, and `enable`
// naming some of them keeps only those.
std::vector<std::string> FusionVetoNames();

// How the producer joins the consumer's kernel, which decides the vetoes that apply.
enum class FusionUse {
  kCopy,            // PriorityFusion: the producer is computed inside the consumer (a copy)
  kOutput,          // multi-output fusion: the producer becomes an output of the consumer's
                    // kernel, its other users read it there (no Duplication vetoes)
  kConstantSweep,   // PriorityFusion's last sweep of scalar constants (no QueueOnly vetoes)
};

class FusionLegality {
 public:
  // `target` "cpu" or "gpu" decides the IsCpu / IsGpu requirements of the records whatever
  // the profile says (cpu.yaml runs priority-fusion with target: cpu); "" follows the profile.
  // The context's enabled/disabled rule names select the vetoes (FusionVetoNames).
  explicit FusionLegality(PassContext* context, const std::string& target = "");

  // Legality of fusing `producer` into `consumer` (one of its users), as PriorityFusion fuses
  // (the producer's value is computed inside the consumer's kernel) or as `use` says.
  FusionDecision CanFuse(HloInstruction* producer, HloInstruction* consumer, FusionUse use = FusionUse::kCopy);
  // Whether the node may be (part of) a fusion at all, and the kinds its ops allow.
  FusionDecision IsFusibleNode(const HloInstruction* node, bool as_producer) const;
  // The Fusible record of an opcode, or null.
  const FusibleInfo* FusibleRecord(HloOpcode opcode) const;
  // The vetoes that apply under the current profile (their requirements hold).
  const std::vector<const FusionVetoInfo*>& active_vetoes() const { return vetoes_; }
  PassContext* context() const { return context_; }

 private:
  bool RequirementsHold(const Requirement* requirements, int n) const;

  PassContext* context_;
  std::string target_;
  std::vector<const FusibleInfo*> fusible_;  // by opcode
  std::vector<const FusionVetoInfo*> vetoes_;
};

}  // namespace hloc::fusion
