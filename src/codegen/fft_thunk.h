// The kFft thunk of an fft instruction (XLA's FftThunk, made by its IrEmitterUnnested /
// ThunkEmitter): runtime::FftConfig from the fft's type, fft_length and shapes, arguments
// {operand, result}. The library (FFTW, cuFFT) reads row-major arrays, so the operand and result
// must have the default layout (layout assignment's FftOperandDefault / FftResultDefault rows).
#pragma once
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/thunk_emitter.h"

namespace hloc::codegen {

// `arguments`: the fft's KernelArgument list (operand leaf, then result). Errors for a layout
// or shape the runtime cannot take name the fft and what is wrong.
absl::StatusOr<runtime::Thunk> FftThunk(const HloInstruction& fft, const std::vector<KernelArgument>& arguments);

}  // namespace hloc::codegen
