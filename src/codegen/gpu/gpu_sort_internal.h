// Pieces shared by the sort and top-k emitters (gpu_sort_emitter.cc, gpu_sort_registers.cc,
// gpu_topk_warp.cc): the row view of a sorted array and the comparator callback.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/gpu/gpu_kernel_util.h"

namespace hloc::codegen::gpu {

// The row layout of a sorted/top-k array: `dim` is the row, the other dimensions number rows.
struct SortRows {
  std::vector<int64_t> other_dims;
  std::vector<int64_t> others;
  int64_t dim = 0, n = 0, count = 1;
  IrArray::Index At(const IrArray::Index& row, llvm::Value* i) const {
    std::vector<llvm::Value*> idx(others.size() + 1);
    for (size_t j = 0; j < others.size(); ++j) idx[others[j]] = row[j];
    idx[dim] = i;
    return IrArray::Index(idx);
  }
};
SortRows SortRowsOf(const Shape& s, int64_t dim);

inline int64_t NextPow2(int64_t n) {
  int64_t p = 1;
  while (p < n) p *= 2;
  return p;
}

// The comparator: less(values of a..., values of b...), an i1.
using SortLessFn = std::function<absl::StatusOr<llvm::Value*>(const std::vector<llvm::Value*>&,
                                                              const std::vector<llvm::Value*>&)>;

// Sorts each row with a bitonic network held in registers (8 elements a thread, strides below
// 8 inside a thread, below 256 by warp shuffles, the rest and the global loads/stores through
// shared memory). Returns false, emitting nothing, when the row is too long for one block.
absl::StatusOr<bool> TryEmitRegisterSort(GpuKernel& k, const HloInstruction& sort, const SortRows& rows,
                                         const SortLessFn& less);

// Sorts each row in place in the outputs, a block per row, with the steps within a chunk in
// shared memory (gpu_sort_global.cc): rows longer than one block's shared memory. Not stable.
absl::Status EmitGlobalBitonicSort(GpuKernel& k, const SortRows& rows, const SortLessFn& less);

// Top-k with small k: a warp per row, each lane a sorted top-k of its strided share in
// registers, merged across the warp by butterfly shuffles. Returns false (emitting nothing) for
// k > 16 or element types without a total-order key.
absl::StatusOr<bool> TryEmitWarpTopK(GpuKernel& k, const HloInstruction& topk);

}  // namespace hloc::codegen::gpu
