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
absl::StatusOr<GpuDeviceSummary> GpuDeviceSummaryOf(int) { return GpuRuntimeAvailable(); }
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

namespace {

// Result memory handed to callers (the C API's DLPack path) is kept when freed and handed out
// again for the same size, as the caching allocators of JAX and PyTorch do: cuMemAlloc and
// cuMemFree cost tens of microseconds each and synchronize the device, and a result address seen
// before finds the CUDA graphs captured for it (GpuExecutable::RunOnDevice). A block is only ever
// written again by an executable's run, which first waits for all work on the context (so a
// consumer still reading the block when it freed it is done by then). At most kPoolBytes are
// kept; an allocation that fails returns them to the device and tries again.
constexpr size_t kPoolBytes = size_t{1} << 30;

struct ResultPool {
  struct Block {
    size_t size = 0;
    bool kept = false;  // freed by the caller and in `free`
  };
  std::mutex mu;
  std::multimap<size_t, CUdeviceptr> free;  // size -> kept block
  std::map<CUdeviceptr, Block> blocks;      // every block handed out or kept
  size_t kept = 0;                           // bytes in `free`
};

ResultPool& Pool(int ordinal) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<ResultPool>> pools;
  std::lock_guard<std::mutex> lock(mu);
  std::unique_ptr<ResultPool>& p = pools[ordinal];
  if (p == nullptr) p = std::make_unique<ResultPool>();
  return *p;
}

size_t PoolSize(int64_t bytes) { return (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + 255) / 256 * 256; }

void ReturnKept(ResultPool& pool, const CudaDriver& d) {
  for (auto& [size, p] : pool.free) d.cuMemFree(p), pool.blocks.erase(p);
  pool.free.clear();
  pool.kept = 0;
}

}  // namespace

absl::StatusOr<uint64_t> AllocateDeviceMemory(int64_t bytes, int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  const CudaDriver& d = *(*ctx)->driver;
  const size_t size = PoolSize(bytes);
  ResultPool& pool = Pool(ordinal);
  std::lock_guard<std::mutex> lock(pool.mu);
  if (auto it = pool.free.find(size); it != pool.free.end()) {
    const CUdeviceptr p = it->second;
    pool.free.erase(it);
    pool.kept -= size;
    pool.blocks[p].kept = false;
    return static_cast<uint64_t>(p);
  }
  CUdeviceptr p = 0;
  const std::string what = absl::StrCat("allocating ", bytes, " bytes for a result");
  absl::Status s = HLOC_CU(d, cuMemAlloc, what, &p, size);
  if (!s.ok() && pool.kept > 0) {
    ReturnKept(pool, d);
    s = HLOC_CU(d, cuMemAlloc, what, &p, size);
  }
  if (!s.ok()) return s;
  pool.blocks[p] = ResultPool::Block{size, false};
  return static_cast<uint64_t>(p);
}

absl::Status FreeDeviceMemory(uint64_t address, int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  const CUdeviceptr p = static_cast<CUdeviceptr>(address);
  ResultPool& pool = Pool(ordinal);
  std::lock_guard<std::mutex> lock(pool.mu);
  auto it = pool.blocks.find(p);
  if (it == pool.blocks.end())
    return absl::InvalidArgumentError(absl::StrCat("freeing device memory at 0x", absl::Hex(address),
                                                   ", which AllocateDeviceMemory did not hand out (or freed twice)"));
  if (it->second.kept)
    return absl::InvalidArgumentError(absl::StrCat("device memory at 0x", absl::Hex(address), " freed twice"));
  if (pool.kept + it->second.size <= kPoolBytes) {
    it->second.kept = true;
    pool.free.emplace(it->second.size, p);
    pool.kept += it->second.size;
    return absl::OkStatus();
  }
  pool.blocks.erase(it);
  return HLOC_CU(*(*ctx)->driver, cuMemFree, "freeing a result's device memory", p);
}

absl::Status CopyDeviceToHost(uint64_t address, int64_t bytes, void* host, int ordinal) {
  if (bytes <= 0) return absl::OkStatus();
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  if (absl::Status s = (*ctx)->MakeCurrent(); !s.ok()) return s;
  return HLOC_CU(*(*ctx)->driver, cuMemcpyDtoH, "copying a result to the host", host, static_cast<CUdeviceptr>(address),
                 static_cast<size_t>(bytes));
}

absl::StatusOr<GpuDeviceSummary> GpuDeviceSummaryOf(int ordinal) {
  absl::StatusOr<const CudaContext*> ctx = gpu::GetCudaContext(ordinal);
  if (!ctx.ok()) return ctx.status();
  const gpu::CudaDeviceInfo& i = (*ctx)->info;
  return GpuDeviceSummary{i.cc_major, i.cc_minor, i.sm_count, i.total_memory};
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
