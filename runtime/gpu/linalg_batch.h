// How the GPU runtime's linear-algebra thunks (gpu_linalg.h) run a batch of matrices: one
// library call per matrix, or one batched call (cuBLAS getrfBatched / trsmBatched, cuSOLVER
// potrfBatched) over an array of device pointers, one per matrix. The batched routines are built
// for many small matrices (one launch instead of `batch`, each a few microseconds of host
// overhead); for a few large ones the per-matrix blocked algorithms win. This part is free of
// CUDA so the CPU tests check it: the choice, the pointer arrays' layout in the thunk's scratch,
// and the kernel that fills them on the device (PTX, assembled by the tests with ptxas).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace hloc::runtime::gpu {

enum class LinalgPath { kPerMatrix, kBatched };
const char* LinalgPathName(LinalgPath p);  // "per-matrix", "batched"

// A forced choice for tests and experiments: HLOC_GPU_LINALG=batched|per-matrix (anything else,
// or unset: the size rule). Forcing "batched" still falls back where no batched routine exists
// (non-square getrf, sizes over int).
enum class LinalgPathOverride { kAuto, kBatched, kPerMatrix };
LinalgPathOverride LinalgPathOverrideFromEnv();

// The path for `op` ("potrf", "getrf", "trsm") over `batch` matrices of rows x cols (trsm: the
// size of the solved-for x). The rules follow jaxlib's and XLA's:
//   getrf  batched when batch > 1, square, and n / batch <= 128 (jaxlib's GetrfDispatch:
//          getrfBatched for many small systems, cusolverDn getrf for few big ones)
//   potrf  the same rule (XLA's CholeskyThunk takes potrfBatched for every batch; we keep the
//          blocked per-matrix potrf for a few large matrices, as jaxlib does for getrf)
//   trsm   batched when batch > 1 (XLA's TriangularSolveThunk)
LinalgPath ChooseLinalgPath(const std::string& op, int64_t batch, int64_t rows, int64_t cols,
                            LinalgPathOverride force = LinalgPathOverride::kAuto);

// One pointer array in the thunk's scratch: `count` device pointers, entry i = the address of
// thunk argument `argument` plus i * stride_bytes, at byte `offset` of the scratch.
struct PointerArray {
  size_t argument = 0;
  int64_t stride_bytes = 0;
  int64_t offset = 0;
};
struct LinalgBatchPlan {
  LinalgPath path = LinalgPath::kPerMatrix;
  int64_t count = 0;                // matrices in the batch
  std::vector<PointerArray> arrays;  // potrf/getrf: the factor; trsm: a, then x
  int64_t scratch_bytes = 0;        // 8 bytes per pointer, arrays back to back
};

// The plan for a thunk whose matrices are dense and batch-major (each matrix_bytes apart):
// potrf/getrf factor in place on argument out_index; trsm reads a (argument 0) and solves in
// place on x (out_index).
LinalgBatchPlan PlanLinalgBatch(const std::string& op, LinalgPath path, int64_t batch, int64_t a_matrix_bytes,
                                int64_t out_matrix_bytes, size_t out_index);

// What the kernel writes for one array: base + i * stride_bytes, i < count (the reference the
// tests hold the device to).
std::vector<uint64_t> BatchPointers(uint64_t base, int64_t stride_bytes, int64_t count);

// PTX of `hloc_make_batch_pointers(u64 base, u64 stride_bytes, u64 out, u32 count)`: one thread
// per pointer, out[i] = base + i * stride_bytes. sm_80 PTX, JIT-compiled for newer GPUs.
const char* BatchPointersPtx();
inline constexpr const char* kBatchPointersKernel = "hloc_make_batch_pointers";
inline constexpr int kBatchPointersBlock = 256;

}  // namespace hloc::runtime::gpu
