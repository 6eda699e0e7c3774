// Element generators for every instruction of a computation (a fused computation or a
// scalar/array body), shared by the CPU and GPU kernel emitters. Parameters come from the
// caller; copies are identities (logical indices do not see layouts); get-tuple-element of a
// multi-result value picks the struct member; everything else comes from the elemental emitter,
// unless a backend hook offers its own generator. An instruction with several users is emitted
// once per element and basic block (a cache), not once per use. The map is shared because the
// generators refer to it.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "ir/computation.h"

namespace hloc::codegen {

struct ComputationGeneratorOptions {
  // A generator for an instruction, taken as it is (not cached) before anything else; empty: none.
  std::function<ElementGenerator(const HloInstruction*)> override_gen;
  // A backend's own generator for an instruction (e.g. the GPU's hardware float conversions),
  // cached like the elemental ones and tried before the elemental emitter; empty: none.
  std::function<ElementGenerator(const HloInstruction*, const GeneratorMap&)> special;
  const HloInstruction* stop_at = nullptr;  // skipped (a root the caller emits itself)
  // The array leaf `leaf` (depth-first order, as kernel arguments list a tuple's arrays) of the
  // tuple-shaped parameter `parameter_number`: a get-tuple-element chain over a tuple parameter
  // (a fusion with a tuple operand, XLA's FusionWithAliasing) reads it. Empty: such chains fail.
  std::function<ElementGenerator(int64_t parameter_number, int64_t leaf)> tuple_parameter_leaf;
};

absl::StatusOr<std::shared_ptr<GeneratorMap>> MakeComputationGenerators(
    ElementalIrEmitter& emitter, const HloComputation& computation,
    const std::function<ElementGenerator(int64_t parameter_number)>& parameter,
    const ComputationGeneratorOptions& options = {});

}  // namespace hloc::codegen
