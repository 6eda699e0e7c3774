// select-and-scatter-expander (XLA's SelectAndScatterExpander, which XLA:GPU runs on every
// select-and-scatter): select-and-scatter(operand, source, init) becomes
//   reduce-window over (operand, linear index of each operand element), whose reducer keeps
//     what `select` keeps, so each window yields the position of its selected element;
//   scatter of source into broadcast(init) at those positions, combined with `scatter`.
// The maxpool gradient of flax_resnet_stage_train (64x56x56x64, 3x3 windows, stride 2) took
// 572 us in hloc's own select-and-scatter kernel, a serial walk over every window per thread.
//
// Differences from XLA's expansion, same results:
// - One linear index (row-major over the operand) instead of one iota per dimension: the
//   reduce-window carries two values, not rank + 1, and the scatter writes a flat buffer that
//   is reshaped (a bitcast) to the operand's shape. Row-major window order is the order of
//   linear indices (windows are never reversed here; see Matches).
// - Ties are settled by the index, so the result does not depend on the order in which the
//   reduce-window combines elements (XLA relies on its emitters walking the window in order).
//   select-and-scatter keeps the current pick p against a later candidate c iff select(p, c);
//   for two elements a, b: if select(a, b) != select(b, a) the one `select` prefers wins;
//   otherwise (a tie: GE on equal values, or GT on equal values) the earlier wins when
//   select(earlier, later) is true and the later wins when it is false. For the total
//   preorders max/min pools use (GE, GT, LE, LT) this is associative and commutative and picks
//   exactly what the serial walk picks.
// - Padding (and base-dilation holes) gets index -1 through the reduce-window's init value and
//   is never picked over a real element; a window with no real element keeps -1, which the
//   scatter drops as out of bounds, as select-and-scatter drops its source value.
#pragma once
#include "engine/pass.h"

namespace hloc {

class SelectAndScatterExpander : public HloPass {
 public:
  static constexpr const char* kName = "select-and-scatter-expander";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
