// kFft thunks on the host through FFTW 3 (Debian's libfftw3: fftw3 for c128/f64, fftw3f for
// c64/f32), XLA:CPU's FftThunk with FFTW in DUCC's place. One CpuFft per thunk, planned once
// when the executable loads, for the executable's own buffers (they never move): FFTW_ESTIMATE
// leaves the arrays untouched while planning, so constants and parameters may already sit
// there. FFTW's planner is not thread-safe, so every plan and destroy takes one process-wide
// lock; executing distinct plans concurrently is safe. An IRFFT (FFTW's c2r destroys its
// input) and a transform whose input and output overlap read a private copy of the input.
// With `parts` > 1 the batch is split into that many contiguous pieces, each its own plan, run
// on the thread pool.
#pragma once
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"
#include "runtime/executable/fft_config.h"

namespace hloc::runtime {

class ThreadPool;

class CpuFft {
 public:
  // `input`/`output` are the thunk's two slices (`input_bytes`/`output_bytes` long).
  static absl::StatusOr<std::unique_ptr<CpuFft>> Create(const FftConfig& config, const void* input,
                                                        int64_t input_bytes, void* output, int64_t output_bytes,
                                                        int64_t parts);
  ~CpuFft();
  CpuFft(const CpuFft&) = delete;
  CpuFft& operator=(const CpuFft&) = delete;

  // Transforms the input into the output (scaled for IFFT/IRFFT). One caller at a time.
  void Run(ThreadPool* pool);

  const FftGeometry& geometry() const { return geometry_; }

 private:
  struct Piece;
  CpuFft() = default;

  FftGeometry geometry_;
  const void* input_ = nullptr;
  void* output_ = nullptr;
  void* scratch_ = nullptr;  // fftw_malloc'ed copy of the input, or null
  std::unique_ptr<Piece[]> pieces_;
  int64_t num_pieces_ = 0;
};

// "fftw-3.3.10" (the linked library's version), for --verbose and tests.
const char* FftwVersion();

}  // namespace hloc::runtime
