// elementwise-while-to-map: a while loop whose body only maps its array state element by
// element (elementwise ops, broadcasts of scalars, the state read whole) runs as one elementwise
// map whose scalar computation holds the loop:
//
//   while((i, x)), x: f32[N], body (i + 1, 0.5 x + 0.25 sin(x)), condition i < 100
//   -> map(broadcast(i0), x) { (i, v) -> while((i, v)) scalar body ... }   (the x result)
//
// Every element runs the same trip count: the condition can only read the scalar state (a
// scalar made from arrays needs a reduce, a slice or a reshape, none of which the body or the
// condition may hold), and the scalars evolve alike in every element. The map then fuses as
// any elementwise op; the GPU and CPU emit it as one kernel with the loop inside each thread
// (the elemental emitter's scalar while), instead of a kernel per op and iteration plus the
// host's trip through the condition (issue 14: while_loop ran 100 iterations of two kernels).
//
// Taken only when exactly one array state element is read after the loop (a map returns one
// array; more would each repeat the loop) and no scalar result is read; the state holds
// scalars and arrays of one shape; the body and condition hold only elementwise ops,
// constants, broadcasts of scalars, tuples and their elements; no control dependencies.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ElementwiseWhileToMap : public HloPass {
 public:
  static constexpr const char* kName = "elementwise-while-to-map";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
