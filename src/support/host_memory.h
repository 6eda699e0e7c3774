// How much memory this process may use, so that inputs larger than that are refused with a
// message before any work instead of aborting in std::bad_alloc (or being killed) halfway.
#pragma once
#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace hloc {

// Bytes this process can ever hold: physical memory plus swap, or the address-space / data
// limit (ulimit -v, ulimit -d) when that is smaller. Read once and cached.
uint64_t HostMemoryBytes();

// Bytes this process may still allocate now: HostMemoryBytes() less what the process already
// has mapped where a limit counts that (the address-space and data limits).
uint64_t AvailableHostMemoryBytes();

// OK when `bytes` more can be allocated (AvailableHostMemoryBytes()); otherwise
// ResourceExhausted "cannot allocate N bytes for WHAT: ...", saying how much there is.
absl::Status CheckCanAllocate(uint64_t bytes, const std::string& what);

}  // namespace hloc
