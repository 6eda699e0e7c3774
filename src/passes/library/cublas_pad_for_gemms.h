// cublas-pad-for-gemms (XLA's CublasPadForGemms): tensor cores want the row and column
// dimensions of a GEMM's matrices to be multiples of 8 (f16, bf16) or 4 (s8); a canonical dot
// (batch dimensions leading, one row and one column dimension per operand) of `datatype`
// operands gets its two matrix dimensions zero-padded up to `pad_to_multiple_of`, and a slice
// takes the original result back out. Zero padding adds zero terms, so the value is unchanged.
// Runs only where the profile has tensor cores (and at least `min_compute_capability`, e.g.
// "8.0" for bf16 as XLA gates it on Ampere); a no-op under a CPU profile or without a profile.
#pragma once
#include <string>

#include "engine/pass.h"

namespace hloc {

class CublasPadForGemms : public HloPass {
 public:
  static constexpr const char* kName = "cublas-pad-for-gemms";
  CublasPadForGemms(PrimitiveType datatype, int64_t pad_to_multiple_of, int min_major, int min_minor,
                    int64_t size_threshold)
      : datatype_(datatype), multiple_(pad_to_multiple_of), min_major_(min_major), min_minor_(min_minor),
        size_threshold_(size_threshold) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  PrimitiveType datatype_;
  int64_t multiple_;
  int min_major_, min_minor_;
  int64_t size_threshold_;
};

}  // namespace hloc
