// Printer for HLO text, in XLA's format, so that print(parse(x)) parses back to the same
// module and printing is a fixed point.
#pragma once
#include <string>

#include "ir/module.h"

namespace hloc {

struct HloPrintOptions {
  bool print_operand_shape = false;   // "add(f32[] %a, f32[] %b)" (XLA's long form) or "add(%a, %b)"
  bool print_percent = true;          // "%name"
  bool print_large_constants = true;  // hloc prints every constant, so printing round-trips
  bool print_metadata = true;
  bool print_backend_config = true;
  bool print_stack_frames = true;     // JAX's FileNames/.../StackFrames tables
  bool print_program_shape = true;    // "ENTRY %main (a: f32[]) -> f32[]" signatures
  bool print_ids = true;
  // XLA's HloPrintOptions::ShortParsable(): no operand shapes, no metadata.
  static HloPrintOptions ShortParsable();
  // XLA's long form: operand shapes printed (the form of XLA's parser round-trip tests).
  static HloPrintOptions Long();
};

std::string PrintModule(const HloModule& module, const HloPrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const HloPrintOptions& options = {});
std::string PrintInstruction(const HloInstruction& instruction, const HloPrintOptions& options = {});
// Literal text as in constant(...): "{ {1, 2}, {3, 4} }", "(1, 2.5)", "true".
std::string PrintLiteral(const Literal& literal);
std::string PrintSharding(const HloSharding& sharding);

}  // namespace hloc
