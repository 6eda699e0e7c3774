// The functions of runtime_functions.h that JIT-compiled kernels call.
// Both sorts use std::stable_sort: it is a valid unstable sort too, and unlike std::sort it
// never reads outside the range when a comparator is not a strict weak order (a comparator
// built from an HLO computation need not be one, e.g. with NaNs).
#include "runtime/cpu/runtime_functions.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

extern "C" {

void __hloc_cpu_sort(int64_t outer, int64_t sort_size, int64_t inner, int32_t num_arrays, char** arrays,
                     const int32_t* element_sizes, int8_t is_stable, HlocCpuComparator less_than) {
  (void)is_stable;
  if (outer <= 0 || sort_size <= 1 || inner <= 0 || num_arrays <= 0) return;
  std::vector<int64_t> perm(sort_size);
  std::vector<char*> operands(2 * static_cast<size_t>(num_arrays));
  int64_t max_size = 0;
  for (int32_t a = 0; a < num_arrays; ++a) max_size = std::max<int64_t>(max_size, element_sizes[a]);
  std::vector<char> scratch(static_cast<size_t>(sort_size * max_size));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      // Element e of array a in this row: arrays[a] + ((o * sort_size + e) * inner + in) * size.
      auto element = [&](int32_t a, int64_t e) {
        return arrays[a] + ((o * sort_size + e) * inner + in) * static_cast<int64_t>(element_sizes[a]);
      };
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        for (int32_t a = 0; a < num_arrays; ++a) {
          operands[2 * a] = element(a, x);
          operands[2 * a + 1] = element(a, y);
        }
        char result = 0;
        less_than(&result, operands.data());
        return result != 0;
      });
      // Apply the permutation to every array through the scratch row.
      for (int32_t a = 0; a < num_arrays; ++a) {
        const int64_t size = element_sizes[a];
        for (int64_t e = 0; e < sort_size; ++e) std::memcpy(&scratch[e * size], element(a, perm[e]), size);
        for (int64_t e = 0; e < sort_size; ++e) std::memcpy(element(a, e), &scratch[e * size], size);
      }
    }
  }
}

void __hloc_cpu_topk(int64_t batch, int64_t n, int64_t k, int32_t element_size, const char* values,
                     char* out_values, int32_t* out_indices, HlocCpuComparator greater_than) {
  if (batch <= 0 || k <= 0 || element_size <= 0) return;
  const int64_t kk = std::min(k, n);  // rows keep their stride k even if n < k
  std::vector<int32_t> perm(std::max<int64_t>(n, 0));
  for (int64_t b = 0; b < batch; ++b) {
    const char* row = values + b * n * element_size;
    std::iota(perm.begin(), perm.end(), 0);
    // Stable: equal values keep the lower index first, as XLA's TopK does.
    std::stable_sort(perm.begin(), perm.end(), [&](int32_t x, int32_t y) {
      char* operands[2] = {const_cast<char*>(row + int64_t{x} * element_size),
                           const_cast<char*>(row + int64_t{y} * element_size)};
      char result = 0;
      greater_than(&result, operands);
      return result != 0;
    });
    for (int64_t i = 0; i < kk; ++i) {
      std::memcpy(out_values + (b * k + i) * element_size, row + int64_t{perm[i]} * element_size, element_size);
      out_indices[b * k + i] = perm[i];
    }
  }
}

}  // extern "C"
