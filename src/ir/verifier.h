// HloVerifier: structural checks and shape inference for every opcode. Errors name the
// instruction and computation and say what is wrong.
#pragma once
#include "absl/status/status.h"
#include "ir/module.h"

namespace hloc {

struct VerifierOptions {
  // Check that each instruction's shape is the one shape inference gives (XLA's ShapeVerifier).
  bool verify_shapes = true;
  // Layouts are compared only where they matter (XLA's layout_sensitive=false default).
  bool layout_sensitive = false;
  // Allow mixed float precisions on elementwise ops (XLA's allow_mixed_precision).
  bool allow_mixed_precision = false;
};

absl::Status VerifyModule(const HloModule& module, const VerifierOptions& options = {});

}  // namespace hloc
