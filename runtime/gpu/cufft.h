// kFft thunks on cuFFT, loaded at run time (dlopen libcufft.so.12, then .11), as XLA's FftThunk
// (xla/backends/gpu/runtime/fft_thunk.cc) and stream_executor's cuda_fft.cc run them.
//
// One CufftPlan per thunk, made once when the executable loads: cufftMakePlanMany64 (64-bit
// sizes and batch) over the row-major geometry of runtime/executable/fft_config.h, with
// automatic work-area allocation off, so cuFFT works in the executable's library workspace
// (never allocating while running, as the GEMMs do). Run enqueues on the executable's stream:
//   - an IRFFT (cuFFT's C2R overwrites its input, as stream_executor notes) or a transform
//     whose input and output overlap other than in place first copies its input into the
//     front of the workspace;
//   - the transform (unnormalized, as cuFFT computes it);
//   - the 1/N scaling of IFFT and IRFFT is the compiler's kernel the thunk names (XLA uses
//     cuBLAS scal; the runtime launches the kernel right after).
// cuFFT plans must not be shared between host threads: each executable's Run holds its lock.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"
#include "runtime/executable/fft_config.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

// Why cuFFT cannot be loaded, or OK (tests skip on it).
absl::Status CufftAvailable();
// "cufft-12000" (the loaded library's version), or an error.
absl::StatusOr<std::string> CufftVersionString();

#if HLOC_HAVE_CUDA

struct CufftPlanState;

class CufftPlan {
 public:
  // Checks the config against the slices (`input_bytes`, `output_bytes`, their device
  // addresses' alignment) and makes the plan; `context` must be current.
  static absl::StatusOr<std::unique_ptr<CufftPlan>> Create(const CudaContext& context, const FftConfig& config,
                                                          CUdeviceptr input, int64_t input_bytes, CUdeviceptr output,
                                                          int64_t output_bytes, const std::string& name);
  ~CufftPlan();
  // Workspace bytes Run needs (the input copy, then cuFFT's work area); 0 for none.
  int64_t workspace_bytes() const;
  // Binds the stream and the work area (inside `workspace`, at least workspace_bytes() long).
  absl::Status Prepare(CUstream stream, CUdeviceptr workspace, int64_t workspace_bytes);
  // Enqueues the unnormalized transform of `input` into `output` on the prepared stream.
  absl::Status Run(CUdeviceptr input, CUdeviceptr output) const;
  const FftGeometry& geometry() const;
  const std::string& description() const;  // "IRFFT c64[64,33280] -> f32[64,66559] ..." for messages

 private:
  CufftPlan() = default;
  std::unique_ptr<CufftPlanState> state_;
};

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
