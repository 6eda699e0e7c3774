// The launch check: a kernel that touches much memory with few threads cannot reach the memory
// bandwidth (each thread streams its share serially), the cliff that makes a program 100-1000x
// slower than XLA. After thunk emission every kernel thunk (in while and conditional bodies too)
// is checked: one that touches more than `min_bytes` and leaves each launched thread more than
// `max_bytes_per_thread` of it is reported, naming the instruction, the emitter and the launch,
// unless its emitter recorded why the op is inherently serial (Thunk::serial_reason). Both
// limits come from the profile (`launch_check:`; runtime::LaunchCheckLimits).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/executable/executable.h"

namespace hloc::codegen::gpu {

struct LaunchCheckLimits {
  int64_t min_bytes = int64_t{1} << 20;             // kernels touching less are never reported
  int64_t max_bytes_per_thread = int64_t{64} << 10;  // bytes touched / threads launched above this
};

struct LaunchWarning {
  std::string instruction;  // the HLO instruction the kernel came from
  std::string emitter;      // which emitter made it ("loop", "scatter", ...)
  std::string kernel;
  runtime::LaunchDimensions launch;
  int64_t bytes = 0;        // argument bytes the kernel touches (each distinct slice once)
  int64_t threads = 0;      // threads launched
  std::string ToString() const;
};

// The kernels of `thunks` (recursively) that fail the check.
std::vector<LaunchWarning> CheckLaunches(const runtime::ThunkSequence& thunks, const LaunchCheckLimits& limits);

}  // namespace hloc::codegen::gpu
