// NAME.large.input_spec.json (tools/corpus/jax_corpus.py): per entry parameter its dtype, shape
// and the min and max of the values XLA was timed on, so `hloc run --input-spec` draws random
// inputs from the same ranges (index operands stay in range, positive parameters positive).
#pragma once
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc {

struct InputRange {
  double min = -1.0, max = 1.0;
};

// One range per parameter of `params`, in order; the file's count and each shape must match
// (errors name the file and the parameter).
absl::StatusOr<std::vector<InputRange>> ReadInputSpec(const std::string& path,
                                                      const std::vector<runtime::ArrayShape>& params);

}  // namespace hloc
