#include "codegen/elemental/math_functions.h"

namespace hloc::codegen {

std::string LibmName(MathFunction fn, bool is_f64) {
  const char* base = "";
  switch (fn) {
    case MathFunction::kErf: base = "erf"; break;
    case MathFunction::kTanh: base = "tanh"; break;
    case MathFunction::kAtan2: base = "atan2"; break;
    case MathFunction::kCbrt: base = "cbrt"; break;
    case MathFunction::kExpm1: base = "expm1"; break;
    case MathFunction::kLog1p: base = "log1p"; break;
    case MathFunction::kTan: base = "tan"; break;
    case MathFunction::kHypot: base = "hypot"; break;
    case MathFunction::kSinh: base = "sinh"; break;
    case MathFunction::kCosh: base = "cosh"; break;
    case MathFunction::kExp: base = "exp"; break;
    case MathFunction::kLog: base = "log"; break;
    case MathFunction::kSin: base = "sin"; break;
    case MathFunction::kCos: base = "cos"; break;
    case MathFunction::kPow: base = "pow"; break;
  }
  return is_f64 ? std::string(base) : std::string(base) + "f";
}

const std::vector<std::string>& LibmSymbols() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    const char* bases[] = {"erf",  "tanh",  "atan2", "cbrt", "expm1", "log1p", "tan",  "hypot", "sinh",
                           "cosh", "exp",   "exp2",  "log",  "log2",  "log10", "sin",  "cos",   "pow",
                           "fmod", "round", "roundeven", "floor", "ceil", "trunc", "rint", "nearbyint",
                           "sqrt", "fabs"};
    for (const char* b : bases) {
      v.push_back(b);
      v.push_back(std::string(b) + "f");
    }
    return v;
  }();
  return names;
}

std::string LibdeviceName(const std::string& libm_name) { return "__nv_" + libm_name; }

}  // namespace hloc::codegen
