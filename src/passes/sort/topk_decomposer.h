// topk-decomposer (XLA's TopkDecomposer, xla/service/topk_rewriter.h): topk(x), k=K becomes
// a stable sort of (x, iota) along the last dimension, ordered by x (GT under the total order
// for largest=true, LT otherwise), and slices [0, K) of the sorted values and positions: the
// result topk defines (ties to the lower position, NaNs ordered as the total order puts them).
//
// Options (the GPU pipeline's): max_k and min_row_length. A topk is decomposed when k > max_k
// and its rows have at least min_row_length elements; others stay topk. The GPU's own top-k
// kernel keeps k <= 16 best per lane in registers (gpu_topk_warp.cc), and rows that fit a
// block sort there for larger k; for longer rows with k > 16 it has only a thread per row
// picking the k best one pass at a time (k passes over the row), 99 ms for 256 rows of 32000
// at k = 50 on an H100 (XLA: 309 us through its sort). Decomposed, the sort of long rows becomes
// gpu-sort-rewriter's radix sort, as XLA's does.
#pragma once
#include <cstdint>

#include "engine/pass.h"

namespace hloc {

class TopkDecomposer : public HloPass {
 public:
  static constexpr const char* kName = "topk-decomposer";
  TopkDecomposer(int64_t max_k, int64_t min_row_length) : max_k_(max_k), min_row_length_(min_row_length) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t max_k_;
  int64_t min_row_length_;
};

}  // namespace hloc
