// Timing a library call as the GPU runs it, for the autotuners (cuBLASLt, cuDNN).
//
// Why: calls timed back to back from the host measure the host's launch rate when the kernels
// are short. Every cuBLASLt GEMM of flax_gru_train's step (128x512x512 to 128x1536x512, 2 to 4
// us of GPU work) timed 8-9 us that way, so the autotuner chose among ties. Inside a CUDA graph
// (how hloc runs them: command buffers) the calls run back to back on the GPU.
#pragma once
#include <functional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA
// Captures `reps` calls of `call` on `stream` into a CUDA graph, launches it once to warm up and
// once timed between events, and returns microseconds per call. An error when the stream cannot
// be captured (the legacy default stream, a call that cannot be captured): the caller then times
// the calls directly. Nothing is left enqueued or captured on an error.
absl::StatusOr<double> TimeCapturedCalls(const CudaDriver& d, CUstream stream, int reps,
                                         const std::function<absl::Status()>& call);
#endif

}  // namespace hloc::runtime::gpu
