// rng-bit-generator-expander (XLA's RngBitGeneratorExpander): rng-bit-generator becomes a call
// of a computation that runs the algorithm in plain HLO (shifts, xors, adds, multiplies on
// u32/u64), bit for bit as xla/hlo/builder/lib/prng.cc builds it: three-fry 2x32-20 with
// state = (key, counter), philox 4x32-10 with state = (key, counter low[, counter high]).
// RNG_DEFAULT maps to default_algorithm ("philox", as XLA:GPU and XLA:CPU configure it, or
// "three_fry"). One computation per (data shape, state shape, algorithm) is shared by the
// call sites. Beyond XLA, data types that are not unsigned (s32, f16, ...) get the unsigned
// bits bitcast to them, and state words past the ones the algorithm uses pass through, which
// is what the reference evaluator's rng-bit-generator computes.
#pragma once
#include <string>

#include "engine/pass.h"

namespace hloc {

class RngBitGeneratorExpander : public HloPass {
 public:
  static constexpr const char* kName = "rng-bit-generator-expander";
  explicit RngBitGeneratorExpander(std::string default_algorithm = "philox")
      : default_algorithm_(std::move(default_algorithm)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  std::string default_algorithm_;
};

}  // namespace hloc
