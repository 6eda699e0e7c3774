// HloVerifier: structural checks and shape inference for every opcode, after XLA's HloVerifier
// (xla/service/hlo_verifier.cc). Errors name the computation and instruction and say what is
// wrong, after the instruction's place in the text when it was parsed from one:
// "m.hlo:7:3: computation %main, instruction %add.3 (add): Expected instruction to have shape ...".
#pragma once
#include "absl/status/status.h"
#include "ir/module.h"

namespace hloc {

struct VerifierOptions {
  // Check that each instruction's shape is the one shape inference gives (XLA's ShapeVerifier).
  bool verify_shapes = true;
  // Also compare layouts where an instruction passes data through unchanged (get-tuple-element,
  // tuple, call, while, conditional, opt-barrier, copy-done) and in the entry computation
  // layout. Off by default, like XLA's layout_sensitive=false.
  bool layout_sensitive = false;
  // With layout_sensitive: also the entry computation layout against the entry's parameters and
  // root. Off where something else reconciles them (compiling without passes: the runtime
  // converts between the entry layout and the buffers').
  bool entry_layout_sensitive = true;
  // Allow mixed float precisions (bf16 with f32) where XLA's allow_mixed_precision does: operands
  // of one instruction may differ in float type, and results may differ from the inferred
  // float type for instructions that compute a new value.
  bool allow_mixed_precision = false;
  // Accept '?' (unbounded dynamic) dimensions; XLA rejects them unless asked.
  bool allow_unbounded_dynamism = false;
};

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options = {});

}  // namespace hloc
