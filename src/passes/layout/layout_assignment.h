// layout-assignment: XLA's LayoutAssignment with the GpuLayoutAssignment / CpuLayoutAssignment
// constraints, which here are data (rules/layout/*.td rows chosen by the profile's capabilities).
//
// Per computation (callees first; the entry's interface is the module's entry computation
// layout, every other computation's parameters and root take the default layouts):
//   1. seeds: parameters, bitcasts and every result a constraint row fixes (dot and
//      convolution results, layout-constrained custom calls);
//   2. backward (users to operands): an instruction free to take any layout takes the layout
//      its first constraining user asks of it: a row's operand layout, the layout of an
//      elementwise-like user, the layout that makes a transposing user a bitcast, or the
//      root's layout in the computation layout;
//   3. forward (operands to users): everything still open follows its operands (elementwise
//      ops keep the operand's layout, a transpose becomes a bitcast, a reduce keeps the
//      order of the kept dimensions) or takes the default layout;
//   4. every operand whose layout differs from what its user needs (a row, the result's
//      layout for layout-preserving ops, a callee's parameter, the default for ops the layout
//      passes do not rewrite) gets a `copy`, as does a root that differs from the result layout.
// Afterwards every shape in the module carries a layout.
#pragma once
#include <string>
#include <vector>

#include "engine/pass.h"

namespace hloc {

class LayoutAssignment : public HloPass {
 public:
  static constexpr const char* kName = "layout-assignment";
  // The constraint rows are switched by the context's rule lists (a pipeline entry's
  // `rules: {disable: [ROW]}`), like every decision record.
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
