// Compiling and running modules on the CPU backend in tests: the cpu pipeline (or none), the
// executable run on literals (one per entry parameter, tuples flattened as the executable
// flattens them), and random literals to feed it. Shared by the tests that compare the CPU
// backend with the reference evaluator (cpu_compiler_test, xla_cases_cpu_test).
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"

namespace hloc::cputest {

// Compiles `module` (changed in place by the pipeline) for the CPU: with the cpu profile's
// pipeline (configs/cpu.yaml, pipelines/cpu.yaml) when `passes`, else as it is.
absl::StatusOr<runtime::Executable> Compile(HloModule& module, bool passes);

// Runs `exe` on `args` (one literal per entry parameter) and returns the result leaves.
absl::StatusOr<std::vector<Literal>> Run(runtime::Executable exe, const std::vector<Literal>& args);

// Uniform random values of `shape`: floats (and complex parts) in [-2, 2), integers in
// [0, int_range), pred a random bit; tuples element by element.
Literal RandomLiteral(const Shape& shape, std::mt19937& rng, int64_t int_range = 8);

}  // namespace hloc::cputest
