// What the fusion passes' per-pair judgements (legality vetoes, kinds, shape and hero checks,
// cost model) read of a (producer, consumer) or sibling pair: each instruction's unique id, its
// operands' ids, and whether it is a root or has a single distinct user. A merge gives its
// fusion a new unique id (also when it grows a fusion in place) and ids are never reused, so equal
// signatures mean an unchanged judgement: PriorityFusion and MultiOutputFusion keep their
// verdicts per pair and re-judge only pairs next to a merge, instead of the whole graph.
#pragma once
#include <cstdint>
#include <vector>

#include "ir/instruction.h"

namespace hloc::fusion {

inline bool HasOneDistinctUser(const HloInstruction* inst) {
  if (inst->IsRoot() || inst->users().empty()) return false;
  for (const HloInstruction* u : inst->users())
    if (u != inst->users().front()) return false;
  return true;
}

inline void AppendPairSignature(const HloInstruction* inst, std::vector<int64_t>& out) {
  out.push_back(inst->unique_id());
  for (const HloInstruction* op : inst->operands()) out.push_back(op->unique_id());
  out.push_back(inst->IsRoot() ? -2 : -1);
  out.push_back(HasOneDistinctUser(inst) ? -2 : -1);
}

}  // namespace hloc::fusion
