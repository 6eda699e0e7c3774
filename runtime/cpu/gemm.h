// The CPU runtime's matrix product (kGemm thunks): D = alpha * op(A) x op(B) + beta * C, with
// an optional epilogue, batched, as runtime/executable/executable.h's GemmConfig describes it.
// Blocked (the operands are packed into cache-sized panels, converted to the accumulation
// type), vectorizable inner loops, tiles spread over the thread pool.
// Types: f32, f64, bf16 and f16 (accumulated in f32; f64 in f64), s8 and s32 (accumulated in
// 32-bit integers, wrapping as XLA's integer dot does); operands and output may differ in type.
#pragma once
#include <cstdint>

#include "absl/status/status.h"
#include "runtime/executable/executable.h"
#include "runtime/cpu/thread_pool.h"

namespace hloc::runtime {

// The config with defaults filled in (leading dims and batch strides <= 0 mean compact), or an
// error for unsupported types, negative sizes or an unknown epilogue.
absl::StatusOr<GemmConfig> NormalizeGemmConfig(const GemmConfig& config);

// Checks that every element the (normalized) config touches lies inside buffers of the given
// byte sizes; c_bytes < 0 when there is no C/bias operand.
absl::Status CheckGemmBounds(const GemmConfig& config, int64_t a_bytes, int64_t b_bytes, int64_t c_bytes,
                             int64_t d_bytes);

// Runs a normalized, bounds-checked config. `c` is the bias vector (n elements of the output
// type) for BIAS epilogues, else the C matrix (output type and strides) or nullptr; with beta
// != 0 and no C, D's previous contents are C (XLA's in-place accumulation). pool may be null.
void RunGemm(const GemmConfig& config, const void* a, const void* b, const void* c, void* d, ThreadPool* pool);

// The straightforward triple loop (accumulating in double), for tests.
void NaiveGemm(const GemmConfig& config, const void* a, const void* b, const void* c, void* d);

// Element conversions the runtime also uses elsewhere (round to nearest even; NaN stays NaN).
uint16_t FloatToBf16(float f);
float Bf16ToFloat(uint16_t h);
uint16_t FloatToF16(float f);
float F16ToFloat(uint16_t h);

}  // namespace hloc::runtime
