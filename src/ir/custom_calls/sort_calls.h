// hloc's own radix-sort custom call, "__hloc$radix_sort": what gpu-sort-rewriter
// (src/passes/sort/gpu_sort_rewriter.cc) turns a key-comparator sort into, as XLA's
// SortRewriter turns one into "xla.gpu.ext.cub_sort_pairs" (hloc's kernel is not CUB, so the
// target is ours).
//
//   (u32|u64[dims] sorted_keys, T[dims] sorted_values, u8[scratch]) custom-call(keys, values),
//       custom_call_target="__hloc$radix_sort", backend_config={"dimension":D,"key_bits":B}
//
// Each row along `dimension` (the minor-most one; the rewriter asks for the default layout) is
// sorted stably, ascending, by the low `key_bits` bits of its unsigned keys (a multiple of 8;
// higher bits ride along), the values moved with their keys. A descending order and the
// total order of floats / signed integers are already folded into the keys by the HLO that
// computes them. The u8 result is the kernel's ping-pong buffer (buffer assignment allocates it
// as an ordinary temp, as XLA does for CUB's scratch); its contents are unspecified (zeros in
// the evaluator).
//
// The pass, the reference evaluator (eval_sort_calls.cc) and the GPU kernel
// (codegen/gpu/gpu_radix_sort.cc) all read this header.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace hloc {

inline constexpr std::string_view kRadixSortCallTarget = "__hloc$radix_sort";
inline bool IsRadixSortCallTarget(std::string_view target) { return target == kRadixSortCallTarget; }

struct RadixSortConfig {
  int64_t dimension = 0;
  int key_bits = 32;  // 8, 16, ..., the key type's width
};

std::string RadixSortConfigToJson(const RadixSortConfig& config);  // {"dimension":1,"key_bits":32}

// The scratch buffer: a copy of the keys, then (at a 16-byte aligned offset) of the values.
inline int64_t RadixSortScratchValuesOffset(int64_t elements, int64_t key_bytes) {
  return (elements * key_bytes + 15) / 16 * 16;
}
inline int64_t RadixSortScratchBytes(int64_t elements, int64_t key_bytes, int64_t value_bytes) {
  return RadixSortScratchValuesOffset(elements, key_bytes) + elements * value_bytes;
}

// Reads the backend_config and checks the operand and result shapes (errors say what is wrong).
absl::StatusOr<RadixSortConfig> ParseRadixSortCall(const HloInstruction& inst);


}  // namespace hloc
