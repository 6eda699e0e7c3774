// dot-merger (XLA's DotMerger, xla/service/dot_merger.cc, as the GPU pipeline runs it in its
// simplification loop): dots that share an operand and do not depend on each other become one
// dot over the other operands concatenated along their single free dimension, and each result
// a slice of it. A recurrent cell's gate GEMMs (Flax's GRU: x_t and h each times three 512x512
// weights an iteration) and attention's q/k/v projections become one wider GEMM each: fewer
// launches, and a grid that fills the GPU where the narrow ones did not.
#pragma once
#include <cstdint>

#include "engine/pass.h"
#include "passes/passes.h"

namespace hloc {

class DotMerger : public HloPass {
 public:
  static constexpr const char* kName = "dot-merger";
  // Dots whose result or non-shared operand is larger than this (bytes) are left alone (XLA's
  // max_size_to_merge; its GPU pipeline passes 32 MiB).
  explicit DotMerger(int64_t max_size_to_merge) : max_size_(max_size_to_merge) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t max_size_;
};

void RegisterDotMergerPass(PassRegistry& registry);

}  // namespace hloc
