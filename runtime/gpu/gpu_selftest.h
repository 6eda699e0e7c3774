// The GPU runtime's own checks, run on the GPU machine by the one binary that goes there
// (`hloc run --backend gpu --self-test`) and by tests/backend/gpu_runtime_test.cc. Each builds
// a small Executable by hand (hand-written PTX, library thunks), runs it through GpuExecutable
// and compares with a host reference, so it exercises exactly what compiled modules use:
//   kernel       a PTX kernel launched over 1000 elements (8 blocks of 128)
//   memory       kCopy, kMemset with a 32-bit pattern and an odd byte count, uniform-byte memset
//   gemm_f32     cuBLASLt GEMM, f32 (no TF32), each epilogue, batched, transposed operands
//   gemm_bf16    the same in bf16 (f32 accumulation)
//   gemm_tf32    f32 on TF32 tensor cores (XLA's default precision), looser tolerance
//   while        kWhile whose predicate a kernel computes (read back each iteration), and a
//                known trip count; kConditional on a pred and on an s32 index
//   graph        a kCommandBuffer captured into a CUDA graph, replayed on new inputs, and the
//                same with command buffers off
//   conv         cuDNN convolutions NHWC f32 against a host loop: forward (stride 1, 2), bias + relu,
//                backward input and filter (stride 1, 2); the graph-API path must run all but bias + relu
//   oom          an allocation larger than the device: a clear ResourceExhausted error, all
//                memory given back, then a normal executable runs
//   autotune     a GEMM autotuned into a cache file, then loaded from it
#pragma once
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hloc::runtime::gpu {

std::vector<std::string> GpuSelfTestNames();

// Runs one check; Unavailable when there is no GPU (the status says why), NotFound for a bad
// name, else the check's verdict (errors say what differed, with numbers).
absl::Status RunGpuSelfTest(const std::string& name);

}  // namespace hloc::runtime::gpu
