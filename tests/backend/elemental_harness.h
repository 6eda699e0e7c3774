// Test harness of the elemental emitter: HLO text per case, evaluated by the reference evaluator
// and emitted as one LLVM function per case (MakeFusedGenerator over the entry computation +
// EmitLoopNest), JIT-compiled together with ORC LLJIT after LLVM's O2 pipeline (so undefined
// behaviour in the emitted IR would show), run, and compared element by element.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "codegen/elemental/elemental_ir_emitter.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace hloc::elemental_test {

struct Case {
  std::string name;
  std::string hlo;
  std::vector<Literal> args;
  // Extra relative tolerance for floats on top of ~1 ulp of the result type (dot, reduce, and
  // complex transcendentals whose formulas differ from std::complex's).
  double tolerance = 0;
  // Hand-written cases must verify; generated op x type cases are skipped when HLO rejects them.
  bool must_verify = true;
  // Complex atan2 on its branch cut: which side a result lands on follows the sign of a rounding
  // residue (std::complex's csqrt/clog differ from ours there), so real parts 2*pi apart match.
  bool branch_cut = false;
  // > 0: the function takes (buffers, part, num_parts) and is called once per part, so
  // EmitLoopNest's split of the outermost loop must cover the output exactly once.
  int parts = 0;
  // An Unimplemented error from the emitter (an op without an elemental form) skips the case.
  bool allow_unimplemented = false;
};

struct Outcome {
  int run = 0, passed = 0, rejected_by_verifier = 0, rejected_by_evaluator = 0;
  std::vector<std::string> failures;
  std::vector<std::string> rejected;  // names, for the log
  std::vector<std::string> unimplemented;  // allow_unimplemented cases the emitter declined
};

// Runs every case; failures say which element differs and how.
Outcome RunBatch(std::vector<Case>& cases);

// Emits `void name(ptr* buffers)` (buffers = parameters..., outputs...) computing the entry
// computation of `module` into `m`, with `make_emitter` (default: ElementalIrEmitter) building
// the emitter for the function's builder. On error the function is removed again.
using EmitterFactory =
    std::function<std::unique_ptr<codegen::ElementalIrEmitter>(llvm::Module*, llvm::IRBuilderBase*)>;
// With `partitioned`, the function is `void name(ptr* buffers, i64 part, i64 num_parts)`.
absl::Status EmitCaseFunction(llvm::Module& m, const HloModule& module, const std::string& name,
                              const EmitterFactory& make_emitter = nullptr, bool partitioned = false);

// Deterministic inputs of `n` elements that cycle through the type's edge values (zeros of both
// signs, +-1, infinities, NaN, denormals, the extremes, values beyond the range, random ones);
// `stride` spreads a second operand so pairs cover the cross product.
Literal EdgeInput(PrimitiveType t, const std::vector<int64_t>& dims, int64_t stride = 1, uint64_t seed = 1);
// Number of edge values EdgeInput cycles through for `t`.
int64_t EdgeCount(PrimitiveType t);
// Random values in [lo, hi] (integers: wrapped into the type).
Literal RandomInput(PrimitiveType t, const std::vector<int64_t>& dims, double lo, double hi, uint64_t seed);

}  // namespace hloc::elemental_test
