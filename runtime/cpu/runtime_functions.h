// Functions the CPU runtime exports to JIT-compiled kernels (XLA:CPU's __xla_cpu_runtime_*).
// Kernels emitted by src/codegen/cpu call them by these exact names; the runtime defines them
// as absolute symbols when it links the executable's object code (runtime/cpu/jit_loader.cc).
// The ABI is plain C so the emitter can declare them in LLVM IR.
#pragma once
#include <cstdint>

extern "C" {

// Every CPU kernel has this signature:
//   void kernel(void** arguments, int64_t part, int64_t num_parts)
// `arguments[i]` is the base address of the thunk's i-th BufferSlice. The kernel does the share
// `part` of `num_parts` of its work (the runtime runs parts on its thread pool;
// Thunk::launch.partitions says how many parts a kernel accepts).
typedef void (*HlocCpuKernel)(void** arguments, int64_t part, int64_t num_parts);

// Comparator for sort/top-k: `operands[2*i]` and `operands[2*i+1]` point at the two elements of
// the i-th sorted array being compared; writes 1 to *result when the first sorts before.
typedef void (*HlocCpuComparator)(char* result, char** operands);

// Sorts `num_arrays` arrays of shape [outer, sort_size, inner] (row-major view of the sorted
// dimension) together, in place, by `less_than`; element_sizes[i] is array i's element size.
void __hloc_cpu_sort(int64_t outer, int64_t sort_size, int64_t inner, int32_t num_arrays, char** arrays,
                     const int32_t* element_sizes, int8_t is_stable, HlocCpuComparator less_than);

// Top-k of `batch` rows of `n` f32/bf16/... values (element_size bytes, compared by `less_than`
// on a pair of single elements): writes the k values (in order) and their s32 indices.
void __hloc_cpu_topk(int64_t batch, int64_t n, int64_t k, int32_t element_size, const char* values,
                     char* out_values, int32_t* out_indices, HlocCpuComparator greater_than);

}  // extern "C"
