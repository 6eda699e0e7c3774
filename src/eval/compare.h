// Comparison of computed outputs with reference outputs: the relative-norm error
// ||out - ref|| / ||ref|| per output, with the thresholds of corpus/README.md.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/literal.h"
#include "ir/module.h"

namespace hloc {

struct CompareResult {
  bool ok = false;
  double error = 0;       // relative-norm error (0 for exact integer/pred matches)
  double threshold = 0;   // what it was held to
  double rms_diff = 0;    // root-mean-square of out - ref over the finite elements (floats)
  double abs_floor = 0;   // the absolute floor it was held to (0: none)
  bool by_floor = false;  // matched by the absolute floor although the relative error is above threshold
  std::string message;    // why it failed (shape/type mismatch, N of M elements differ, ...)
  // Elements that differ: for integers and pred any difference; for floats a NaN/inf
  // mismatch or a difference above threshold * rms(ref). first_difference is the
  // multi-dimensional index of the first one (empty when none, or for a scalar).
  int64_t differing_elements = 0;
  int64_t element_count = 0;
  std::vector<int64_t> first_difference;
};

// Default threshold for an output element type compared with a GPU-produced reference:
// f32/f64/c64/c128 1e-4 (2e-3 if `fed_by_dot_or_conv`), f16 1e-2, bf16 and f8 3e-2,
// integers and pred 0 (exact).
double DefaultTolerance(PrimitiveType type, bool fed_by_dot_or_conv);

// The absolute floor of corpus/README.md for an output element type: an output also matches
// when rms(out - ref) is at most this (f32/f64/c64/c128 1e-7, or 1e-6 if `fed_by_dot_or_conv`;
// f16/bf16/f8 1e-3; integers and pred 0, i.e. none). A mathematically zero output (the gradient
// of a bias that a batch norm removes) is rounding noise on both sides, where a relative error
// means nothing.
double DefaultAbsoluteFloor(PrimitiveType type, bool fed_by_dot_or_conv);

// Compares two array literals of the same shape (ignoring layout). NaN equals NaN; an inf
// must match an inf of the same sign; integers and pred compare exactly (tolerance ignored).
// When ||ref|| is 0 the error is ||out - ref|| itself. A float output whose relative error is
// above `tolerance` still matches when rms(out - ref) <= `abs_floor` (0: no floor) and no
// NaN/inf differs. Complex numbers compare by the
// magnitude of the difference. Tuples compare element by element (ok when all are; the
// error is the largest, the message names the first failing element's index).
CompareResult CompareLiterals(const Literal& out, const Literal& ref, double tolerance, double abs_floor = 0);

// The array leaves of a literal in order (a tuple's elements, nested tuples flattened; an
// array is its own single leaf): how outputs.npz names outputs out0..outM.
std::vector<const Literal*> FlattenLeaves(const Literal& literal);

// One flag per array leaf of the entry root's shape (in FlattenLeaves order): whether a dot,
// convolution, ragged-dot or a cuBLAS/cuDNN custom-call can feed that output, looking
// through the root tuple's operands and into called computations. It is conservative (a
// while loop's every output counts as fed when its body has a dot), which only loosens the
// threshold from 1e-4 to 2e-3. Empty when the module has no entry.
std::vector<bool> OutputsFedByDotOrConvolution(const HloModule& module);

}  // namespace hloc
