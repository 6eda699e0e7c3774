// Encoding and decoding of XLA's narrow floating-point types (f16, bf16, the f8 and f4 types)
// to and from double, rounding to nearest even as ml_dtypes / XLA do.
#pragma once
#include <cstdint>

#include "ir/primitive_type.h"

namespace hloc {

// Bits of `t` (right-aligned in the result) for the value x. Narrow types round through
// f32 first, as XLA computes narrow-type arithmetic in f32 and rounds the result.
uint64_t EncodeFloat(PrimitiveType t, double x);
// The value of the bit pattern `bits` of floating-point type `t`.
double DecodeFloat(PrimitiveType t, uint64_t bits);
// x rounded to the nearest value representable in t (through f32 for narrow types).
double RoundToType(PrimitiveType t, double x);

}  // namespace hloc
