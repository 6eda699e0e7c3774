// GpuExecutable: loads the PTX, lays out device memory from the allocations, prepares the
// library calls (cuBLASLt, cuDNN, autotuned at load), and walks the thunks on one stream.
// XLA: xla/service/gpu/gpu_executable.cc and the thunks of xla/service/gpu/runtime/ (kernel,
// gemm, convolution, copy, memset, while, conditional, sequential, command_buffer).
#include "runtime/gpu/gpu_executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cublaslt.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/cudnn.h"
#include "runtime/gpu/gpu_executable_internal.h"

namespace hloc::runtime {

#if !HLOC_HAVE_CUDA

absl::Status GpuRuntimeAvailable() {
  return absl::UnavailableError("hloc was built without the CUDA headers (no /usr/local/cuda/include/cuda.h at build time)");
}
absl::StatusOr<std::string> GpuDeviceDescription(int) { return GpuRuntimeAvailable(); }
absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Load(Executable, const GpuRunOptions&) {
  return GpuRuntimeAvailable();
}
absl::StatusOr<uint64_t> AllocateDeviceMemory(int64_t, int) { return GpuRuntimeAvailable(); }
absl::Status FreeDeviceMemory(uint64_t, int) { return GpuRuntimeAvailable(); }
absl::Status CopyDeviceToHost(uint64_t, int64_t, void*, int) { return GpuRuntimeAvailable(); }

#else

using gpu::CudaContext;
using gpu::CudaDriver;

absl::Status GpuRuntimeAvailable() {
  absl::StatusOr<const CudaDriver*> d = gpu::LoadCudaDriver();
  return d.ok() ? absl::OkStatus() : d.status();
}

absl::StatusOr<uint64_t> AllocateDeviceMemory(int64_t bytes, int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  CUdeviceptr p = 0;
  const CudaDriver& d = *(*ctx)->driver;
  if (absl::Status s = HLOC_CU(d, cuMemAlloc, absl::StrCat("allocating ", bytes, " bytes for a result"), &p,
                               static_cast<size_t>(std::max<int64_t>(bytes, 1)));
      !s.ok())
    return s;
  return static_cast<uint64_t>(p);
}

absl::Status FreeDeviceMemory(uint64_t address, int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  return HLOC_CU(*(*ctx)->driver, cuMemFree, "freeing a result's device memory", static_cast<CUdeviceptr>(address));
}

absl::Status CopyDeviceToHost(uint64_t address, int64_t bytes, void* host, int ordinal) {
  if (bytes <= 0) return absl::OkStatus();
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  return HLOC_CU(*(*ctx)->driver, cuMemcpyDtoH, "copying a result to the host", host, static_cast<CUdeviceptr>(address),
                 static_cast<size_t>(bytes));
}

absl::StatusOr<std::string> GpuDeviceDescription(int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  return absl::StrCat((*ctx)->info.ToString(), ", driver ", (*ctx)->driver->driver_version);
}

namespace gpu {

std::string AllocationKind(const BufferAllocation& a) {
  if (a.is_entry_parameter) return absl::StrCat("parameter ", a.parameter_number);
  if (a.is_constant) return "constant";
  if (a.maybe_live_out) return "output";
  return "temp";
}

std::string MemorySummary(const Executable& exe, int64_t workspace_bytes) {
  int64_t by_kind[4] = {0, 0, 0, 0};  // parameters, constants, outputs, temps
  for (const BufferAllocation& a : exe.allocations) {
    const int k = a.is_entry_parameter ? 0 : a.is_constant ? 1 : a.maybe_live_out ? 2 : 3;
    by_kind[k] += a.size;
  }
  std::vector<const BufferAllocation*> sorted;
  for (const BufferAllocation& a : exe.allocations) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(), [](auto* x, auto* y) { return x->size > y->size; });
  auto mib = [](int64_t b) { return absl::StrFormat("%.1f MiB", static_cast<double>(b) / (1 << 20)); };
  std::string out = absl::StrCat(exe.allocations.size(), " allocations, ",
                                 mib(by_kind[0] + by_kind[1] + by_kind[2] + by_kind[3]), " (parameters ",
                                 mib(by_kind[0]), ", constants ", mib(by_kind[1]), ", outputs ", mib(by_kind[2]),
                                 ", temps ", mib(by_kind[3]), "), library workspace ", mib(workspace_bytes),
                                 "; largest:");
  for (size_t i = 0; i < sorted.size() && i < 8; ++i)
    absl::StrAppend(&out, i ? "," : "", " #", sorted[i]->index, " ", mib(sorted[i]->size), " ", AllocationKind(*sorted[i]));
  return out;
}

}  // namespace gpu

absl::StatusOr<std::unique_ptr<GpuExecutable>> GpuExecutable::Load(Executable executable, const GpuRunOptions& options) {
  return gpu::LoadGpuExecutable(std::move(executable), options);
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime
