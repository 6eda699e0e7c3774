// Printer for HLO text, in XLA's format, so that print(parse(x)) parses back to the same
// module and printing is a fixed point.
#pragma once
#include <string>

#include "ir/module.h"

namespace hloc {

struct HloPrintOptions {
  bool print_operand_shape = false;   // "add(f32[] %a, f32[] %b)" (XLA's long form) or "add(%a, %b)"
  bool print_percent = true;          // "%name"
  // Constants with more than 10 elements (and tuple constants) print as {...} when false;
  // hloc prints every constant by default, so printing round-trips.
  bool print_large_constants = true;
  bool print_metadata = true;
  bool print_backend_config = true;
  bool print_stack_frames = true;     // JAX's FileNames/.../StackFrames tables
  bool print_program_shape = true;    // "ENTRY %main (a: f32[]) -> f32[]" signatures
  bool print_ids = true;
  bool print_control_dependencies = true;  // control-predecessors={...}
  // ", /*index=5*/" before every Nth operand in operand lists; 0 = never.
  int64_t operand_index_annotation_interval = 5;
  // XLA's syntax sugar for async ops: "custom-call-start(...)" instead of
  // "async-start(...), calls=%wrapped", with the one-instruction wrapped computation not
  // printed. XLA's dumps (the corpus) have it off; its HloPrintOptions() has it on.
  bool syntax_sugar_async_ops = false;

  // The default options print like XLA's dumps (what JAX's --xla_dump_to writes): % names,
  // no operand shapes, metadata, backend_config, stack-frame tables, no async sugar.
  // XLA's HloPrintOptions::ShortParsable(): no operand shapes, no metadata, no % names, no
  // backend_config, no program shapes, no control dependencies, no /*index=*/ comments.
  static HloPrintOptions ShortParsable();
  // XLA's long form (HloPrintOptions() with print_operand_shape and print_large_constants):
  // operand shapes printed, async sugar on; the form of XLA's parser round-trip tests.
  static HloPrintOptions Long();
};

// The header line (XLA's attribute order; an entry_computation_layout derived from the entry
// when the config has none), the stack-frame tables, then every computation in the module's
// order (the parser keeps text order), a callee moved ahead of its first caller when needed.
// Inline get-tuple-elements print at their uses as %tuple#i.
std::string PrintModule(const HloModule& module, const HloPrintOptions& options = {});
std::string PrintComputation(const HloComputation& computation, const HloPrintOptions& options = {});
// One instruction as it appears in its computation, without indentation or "ROOT ".
std::string PrintInstruction(const HloInstruction& instruction, const HloPrintOptions& options = {});
// Literal text as in constant(...): "{ {1, 2}, {3, 4} }", "(1, 2.5)", "true".
std::string PrintLiteral(const Literal& literal);
std::string PrintSharding(const HloSharding& sharding);

}  // namespace hloc
