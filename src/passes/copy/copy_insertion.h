// copy-insertion: XLA's CopyInsertion. Buffer assignment gives one buffer to values that must
// share storage (a while loop's state across init, body and result; a conditional's result and
// its branches' roots; an in-place op's operand and result: dynamic-update-slice, scatter,
// in-place fusions). That is only correct when the value being overwritten is dead by then;
// this pass adds a `copy` wherever it might not be:
//   - in-place ops whose operand is still read later, escapes through the root, is read-only
//     (an entry parameter or a constant) or belongs to a caller (a conditional/call parameter);
//   - while loops: init elements that are read-only, still read after the loop starts, or
//     repeated; body-root elements written while the old state is still read, constants,
//     swapped or repeated state elements;
//   - conditional branch roots that are not defined in the branch (parameters, constants) or
//     repeated;
//   - the entry root: constants, parameters (unless input_output_alias donates them to that
//     output) and repeated elements; a donated parameter's output written before the parameter
//     is last read gets a copy ordered after those reads by control dependencies.
// Ordering is by dependency (the pass runs before scheduling, as in XLA): a read is "before" a
// write when the writer transitively depends on the reader. Before adding, existing plain copies
// that this analysis finds unnecessary are removed (XLA's RemoveUnnecessaryCopies, by
// re-checking the module with each copy bypassed).
#pragma once
#include "engine/pass.h"

namespace hloc {

class CopyInsertionPass : public HloPass {
 public:
  explicit CopyInsertionPass(bool remove_redundant_copies = true) : remove_redundant_copies_(remove_redundant_copies) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool remove_redundant_copies_;
};

void RegisterCopyInsertionPass(PassRegistry& registry);

}  // namespace hloc
