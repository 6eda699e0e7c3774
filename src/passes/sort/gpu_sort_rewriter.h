// gpu-sort-rewriter (XLA's SortRewriter, xla/service/gpu/transforms/sort_rewriter.cc): a long
// sort whose comparator only orders by one key, compare(g(a), g(b)) LT or GT with g the same
// elementwise expression of one operand (floats under order=TOTAL, integers of any kind; a
// tie-break on a position iota, stable-sort-expander's form, is implied since the radix sort is
// stable), becomes
//   - the key in HLO: g on the whole operand, bitcast to an unsigned integer, the total-order
//     transform (floats: negative -> ~bits, else bits | sign; signed: bits ^ sign), ~key for
//     GT, 8/16-bit keys widened to u32;
//   - a "__hloc$radix_sort" custom call over (keys, payload) (eval/sort_calls.h), our own LSD
//     radix kernel on the GPU (codegen/gpu/gpu_radix_sort.cc), as XLA calls CUB's;
//   - the payload is the sort's only used operand itself, or else an s32 iota (the
//     permutation) and each used output a gather of its operand by it.
// It runs after layout assignment and asks for the default layout with the sort dimension
// minor-most (the kernel reads rows contiguously; sorts along other dimensions are left to the
// sort emitters rather than transposed), so every new instruction carries the default layout.
//
// Option min_row_length: sorts with shorter rows stay sorts (the block-local sorting networks
// win there). XLA's threshold is 16385 (SortRewriter's sort_size_threshold).
#pragma once
#include <cstdint>

#include "engine/pass.h"

namespace hloc {

class GpuSortRewriter : public HloPass {
 public:
  static constexpr const char* kName = "gpu-sort-rewriter";
  explicit GpuSortRewriter(int64_t min_row_length = 16385) : min_row_length_(min_row_length) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t min_row_length_;
};

}  // namespace hloc
