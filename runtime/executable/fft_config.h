// The checks and derived geometry of a kFft thunk's FftConfig (executable.h), shared by the CPU
// (FFTW) and GPU (cuFFT) runtimes so both refuse the same bad configs with the same words.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {

// A batch of `batch` transforms of rank `n.size()`: transform b reads its input at element
// b * input_distance and writes its output at b * output_distance; inside a transform the
// arrays are row-major with the extents input_embed / output_embed (XLA's FftThunk hands cuFFT
// exactly these). Counts are in elements of the input and output types.
struct FftGeometry {
  enum class Kind { kC2C, kR2C, kC2R };
  Kind kind = Kind::kC2C;
  bool inverse = false;           // IFFT / IRFFT: exp(+i...) and the 1/N scale
  bool double_precision = false;  // c128 / f64
  std::vector<int64_t> n;         // fft_length
  std::vector<int64_t> input_embed, output_embed;
  int64_t batch = 0;
  int64_t input_distance = 0, output_distance = 0;
  int64_t input_elements = 0, output_elements = 0;
  int64_t input_element_bytes = 0, output_element_bytes = 0;
  // A transformed length is 0: nothing to transform (the output is empty too; the runtimes
  // still write zeros over whatever output bytes there are).
  bool zero_length = false;
  // The output is divided by this: prod(fft_length) for IFFT and IRFFT (XLA's scale factor,
  // the output's transformed extent), else 1. Scaled in the output's precision, as XLA does
  // (1.0f / N for c64 and f32).
  int64_t scale_divisor = 1;
  int64_t input_bytes() const { return input_elements * input_element_bytes; }
  int64_t output_bytes() const { return output_elements * output_element_bytes; }
  // Real numbers in the output: what the scaling multiplies.
  int64_t output_reals() const { return output_elements * (kind == Kind::kC2R ? 1 : 2); }
  // "IRFFT c64[8,33] -> f32[8,64] fft_length={64}" for messages.
  std::string description;
};

// Checks `config` (types, ranks, extents, checked sizes) and that the input and output fit
// slices of `input_bytes` and `output_bytes`. Errors say what is wrong in the config's terms.
absl::StatusOr<FftGeometry> AnalyzeFft(const FftConfig& config, int64_t input_bytes, int64_t output_bytes);

}  // namespace hloc::runtime
