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

// An autotuner's time for one candidate, microseconds per call: inside a CUDA graph while
// *in_graph (set false, for this and every later candidate, when the stream cannot be captured),
// else back to back from the host between the events `start` and `stop`. `short_reps` calls in a
// graph (`reps` when a call takes `short_us` or more); from the host `reps` calls, then
// `short_reps` when a call took less (a few are within the events' resolution). -1 when a call
// fails or the host timing cannot be read; an error when waiting for the calls fails (the
// context may be broken: the caller should stop).
absl::StatusOr<double> TimeAutotuneCandidate(const CudaDriver& d, CUstream stream, CUevent start, CUevent stop,
                                             int reps, int short_reps, double short_us, bool* in_graph,
                                             const std::function<absl::Status()>& call);

// While one lives on this thread, TimeAutotuneCandidate reports each candidate's time (-1: it
// did not run) to `report`, numbered from 1: `hloc run --verbose` prints a line per candidate,
// so an autotuning that takes seconds shows its progress. Both autotuners time through
// TimeAutotuneCandidate, so this is the one place that sees every candidate.
class AutotuneCandidateReporter {
 public:
  explicit AutotuneCandidateReporter(std::function<void(int candidate, double us)> report);
  ~AutotuneCandidateReporter();
  AutotuneCandidateReporter(const AutotuneCandidateReporter&) = delete;
  AutotuneCandidateReporter& operator=(const AutotuneCandidateReporter&) = delete;
};
#endif

}  // namespace hloc::runtime::gpu
