// Comparison of computed outputs with reference outputs: the relative-norm error
// ||out - ref|| / ||ref|| per output, with the thresholds of corpus/README.md.
#pragma once
#include <string>

#include "ir/literal.h"

namespace hloc {

struct CompareResult {
  bool ok = false;
  double error = 0;       // relative-norm error (0 for exact integer/pred matches)
  double threshold = 0;   // what it was held to
  std::string message;    // why it failed (shape/type mismatch, N of M elements differ, ...)
};

// Default threshold for an output element type compared with a GPU-produced reference:
// f32/f64/c64/c128 1e-4 (2e-3 if `fed_by_dot_or_conv`), f16 1e-2, bf16 and f8 3e-2,
// integers and pred 0 (exact).
double DefaultTolerance(PrimitiveType type, bool fed_by_dot_or_conv);

// Compares two array literals of the same shape (ignoring layout). NaN equals NaN; an inf
// must match an inf of the same sign; integers and pred compare exactly (tolerance ignored).
// When ||ref|| is 0 the error is ||out - ref|| itself.
CompareResult CompareLiterals(const Literal& out, const Literal& ref, double tolerance);

}  // namespace hloc
