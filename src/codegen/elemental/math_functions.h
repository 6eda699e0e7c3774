// The one place where math-library function names are decided. The elemental emitter calls
// transcendentals that LLVM has no intrinsic for (erf, tanh, atan2, ...) by their libm names
// (erff for f32, erf for f64); the CPU JIT resolves them from the process, the GPU emitter maps
// them to libdevice (__nv_erff). Intrinsics (exp, log, sin, cos, pow, ...) lower to libm calls
// on the CPU too, so the runtime must resolve those names as well: LibmSymbols lists them all.
#pragma once
#include <string>
#include <vector>

namespace hloc::codegen {

// The first ones are called by name; kExp .. kPow are emitted as LLVM intrinsics on the CPU
// (ElementalIrEmitter::EmitMathIntrinsic) and named only where a backend maps them (libdevice).
enum class MathFunction { kErf, kTanh, kAtan2, kCbrt, kExpm1, kLog1p, kTan, kHypot, kSinh, kCosh,
                          kExp, kLog, kSin, kCos, kPow };

// "erff" / "erf" for f32 / f64.
std::string LibmName(MathFunction fn, bool is_f64);

// Every libm symbol emitted code may call (the named calls above and what LLVM's intrinsics
// lower to on the CPU: expf, logf, sinf, cosf, powf, fmodf, roundf, roundevenf, ...), f32 and
// f64 forms.
const std::vector<std::string>& LibmSymbols();

// The libdevice name of a libm function ("erff" -> "__nv_erff"), for the GPU backend.
std::string LibdeviceName(const std::string& libm_name);

}  // namespace hloc::codegen
