// Internals of GpuExecutable shared by its source files (not for users of the runtime).
#pragma once
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/gpu/gpu_executable.h"

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA
absl::StatusOr<std::unique_ptr<GpuExecutable>> LoadGpuExecutable(Executable executable, const GpuRunOptions& options);
#endif

// "parameter 2", "constant", "output", "temp".
std::string AllocationKind(const BufferAllocation& allocation);
// Totals by kind and the largest allocations, for out-of-memory errors and --verbose.
std::string MemorySummary(const Executable& executable, int64_t workspace_bytes);

}  // namespace hloc::runtime::gpu
