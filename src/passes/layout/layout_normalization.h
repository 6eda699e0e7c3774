// layout_normalization: XLA's LayoutNormalization (xla/hlo/transforms/layout_normalization.cc).
// Every instruction it knows how to rewrite is replaced by the same computation on
// "normalized" shapes (the dimensions listed major-to-minor, default layout) between bitcasts,
// so afterwards those instructions carry the default layout and a layout change is an explicit
// transpose: copy -> transpose, transpose -> transpose or bitcast, dot / convolution -> new
// dimension numbers, reduce / broadcast / slice / pad / ... -> permuted attributes, constants
// and iotas -> re-laid-out data. Chains of bitcasts are folded at the end. Ops it does not know
// (gather, scatter, custom calls, control flow, variadic ops...) are left as they are;
// layout-assignment gives those the default layout.
// Reshapes must be bitcasts (run reshape-decomposer first); others are left alone.
#pragma once
#include "engine/pass.h"

namespace hloc {

class LayoutNormalization : public HloPass {
 public:
  static constexpr const char* kName = "layout_normalization";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

// reshape-decomposer: XLA's ReshapeDecomposer. A reshape that is not a bitcast under its
// layouts becomes copy (to the default layout) -> reshape (a bitcast) -> copy (to its layout).
class ReshapeDecomposer : public HloPass {
 public:
  static constexpr const char* kName = "reshape-decomposer";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

// move_copy_to_users: XLA's MoveCopyToUsers. op(copy(a)) -> copy(op(a)) for layout-preserving
// ops (elementwise with every array operand such a copy from one layout, convert, slice,
// dynamic-slice, pad, reverse, reduce-window, concatenate), so the copy meets its consumers and
// can fuse there; reduce(copy(a)) -> reduce(a), a reduce reading any layout.
class MoveCopyToUsers : public HloPass {
 public:
  static constexpr const char* kName = "move_copy_to_users";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

// transpose-folding: XLA's TransposeFolding. dot(transpose(a), b) -> dot(a, b) with the
// dimension numbers renamed, when the transpose keeps the batch dimensions in place and the
// operand's other non-contracting dimensions in order (the dot's result stays the same); convolution(transpose(x), w)
// -> convolution(x, w) with renamed dimension numbers (always legal) unless fold_convolutions=false.
class TransposeFolding : public HloPass {
 public:
  static constexpr const char* kName = "transpose-folding";
  explicit TransposeFolding(bool fold_convolutions = true) : fold_convolutions_(fold_convolutions) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  bool fold_convolutions_;
};

}  // namespace hloc
