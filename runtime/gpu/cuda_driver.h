// The CUDA driver API, loaded at run time: dlopen("libcuda.so.1") and dlsym of each entry point
// we use, by the versioned symbol cuda.h maps its name to (cuMemAlloc -> cuMemAlloc_v2, ...), so
// the declared type and the loaded function agree. Nothing links against libcuda: the same binary
// starts on machines without a GPU, where LoadCudaDriver says why the GPU cannot be used.
// (XLA: xla/stream_executor/cuda/cuda_driver.cc; it goes through cudart, we call the driver.)
//
// The CUDA headers are used for their types only; they exist where HLOC_HAVE_CUDA is defined
// (CMake defines it for runtime/gpu when /usr/local/cuda/include/cuda.h is there). Without
// them the loader reports "built without CUDA headers" and nothing else here is declared.
#pragma once
#include <mutex>
#include <memory>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#if HLOC_HAVE_CUDA
#include <cuda.h>
#endif

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA

// One member per driver entry point, named as cuda.h names the function (the preprocessor
// turns `cuMemAlloc` into `cuMemAlloc_v2` both here and at every call, so the member's type is
// the declared one of the versioned function).
struct CudaDriver {
  void* library = nullptr;
  int driver_version = 0;  // cuDriverGetVersion, e.g. 13000
#define HLOC_CUDA_DRIVER_ENTRIES(X)                                                                   \
  X(cuGetErrorName) X(cuGetErrorString) X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount)           \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDeviceTotalMem)                       \
  X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent) X(cuCtxGetCurrent) X(cuCtxSynchronize)               \
  X(cuModuleLoadDataEx) X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute)                \
  X(cuFuncGetAttribute) X(cuLaunchKernel) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)                  \
  X(cuMemAllocHost) X(cuMemFreeHost) X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyHtoDAsync)             \
  X(cuMemcpyDtoHAsync) X(cuMemcpyDtoDAsync) X(cuMemsetD32Async) X(cuMemsetD8Async) X(cuMemsetD32)     \
  X(cuMemsetD2D8Async)                                                                                \
  X(cuStreamCreate) X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamQuery) X(cuEventCreate)       \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime)                      \
  X(cuStreamBeginCapture) X(cuStreamEndCapture) X(cuGraphInstantiate) X(cuGraphLaunch)                \
  X(cuGraphExecDestroy) X(cuGraphDestroy) X(cuGraphGetNodes) X(cuStreamWaitEvent) X(cuMemcpy2DAsync)
#define HLOC_CUDA_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUDA_DRIVER_ENTRIES(HLOC_CUDA_DRIVER_MEMBER)
#undef HLOC_CUDA_DRIVER_MEMBER
  // Optional (CUDA 12.4+; null when the driver lacks it): lets Load check each kernel's
  // parameter list against its thunk's arguments.
  decltype(&::cuFuncGetParamInfo) cuFuncGetParamInfo = nullptr;
  // Optional (CUDA 12.3+): device-side while loops (device_loops.h).
  decltype(&::cuGraphConditionalHandleCreate) cuGraphConditionalHandleCreate = nullptr;
  decltype(&::cuGraphAddNode) cuGraphAddNode = nullptr;
  decltype(&::cuStreamBeginCaptureToGraph) cuStreamBeginCaptureToGraph = nullptr;
  decltype(&::cuStreamGetCaptureInfo) cuStreamGetCaptureInfo = nullptr;
  decltype(&::cuStreamUpdateCaptureDependencies) cuStreamUpdateCaptureDependencies = nullptr;
  decltype(&::cuGraphCreate) cuGraphCreate = nullptr;
};

// The process's driver, loaded and cuInit'ed once; later calls return the same result (an
// error says what is missing: libcuda.so.1, an entry point, or a device).
absl::StatusOr<const CudaDriver*> LoadCudaDriver();

// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)" for a result code.
std::string CuResultString(const CudaDriver& driver, CUresult result);

// OK for CUDA_SUCCESS, else an error "<function> failed with <CUresult name> (<message>) while
// <what>"; out of memory is ResourceExhausted, a missing device Unavailable, bad PTX
// InvalidArgument, the rest Internal.
absl::Status CuCheck(const CudaDriver& driver, CUresult result, const char* function, const std::string& what);

// Calls driver.FN(args...) and returns the CuCheck status naming FN; `what` says what for.
#define HLOC_CU(driver, fn, what, ...) \
  ::hloc::runtime::gpu::CuCheck((driver), (driver).fn(__VA_ARGS__), #fn, (what))

struct CudaDeviceInfo {
  int ordinal = 0;
  CUdevice device = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int64_t total_memory = 0;
  std::string ToString() const;  // "NVIDIA H200 (sm_90, 132 SMs, 139.8 GiB)"
};

// The device and its primary context (retained once per process and ordinal, never released:
// executables share it, as cudart's runtime API does).
struct CudaContext {
  const CudaDriver* driver = nullptr;
  CUcontext context = nullptr;
  CudaDeviceInfo info;
  // Makes the context current on the calling thread (cheap; every entry point calls it).
  absl::Status MakeCurrent() const;
};
absl::StatusOr<const CudaContext*> GetCudaContext(int ordinal);

#endif  // HLOC_HAVE_CUDA

// A cap on the device memory hloc's own allocations may take, per device: the environment
// variable HLOC_GPU_MEMORY_LIMIT, in the spirit of XLA's XLA_PYTHON_CLIENT_MEM_FRACTION. Bytes
// with an optional binary suffix ("512M", "2G", "1.5GiB", "1048576") or a fraction of the
// device's memory ("0.25"). With it set, cuMemAlloc fails with CUDA_ERROR_OUT_OF_MEMORY past the
// cap and cuMemGetInfo reports the capped free and total memory, so running out of memory can be
// tried on any GPU (tests/gpu/faults/run.sh) or a run kept to a share of a shared GPU. Memory
// the libraries allocate themselves (cuBLASLt, cuDNN, cuFFT plans) is not counted.
struct GpuMemoryLimit {
  uint64_t bytes = 0;    // > 0: the cap in bytes
  double fraction = 0;   // > 0: the cap as a share of each device's total memory
  bool set() const { return bytes > 0 || fraction > 0; }
};
// Parses HLOC_GPU_MEMORY_LIMIT's value; an error names the variable, the value and the forms.
absl::StatusOr<GpuMemoryLimit> ParseGpuMemoryLimit(const std::string& text);
// "" without a cap, else "; HLOC_GPU_MEMORY_LIMIT=512M caps hloc's device memory" for messages.
std::string GpuMemoryLimitNote();

// dlopen of the first of `names` that loads; the error lists every name with dlerror's reason.
absl::StatusOr<void*> OpenLibrary(const std::initializer_list<const char*>& names, const std::string& purpose);

// A library's entry points, loaded by `load` on the first call only (thread-safe); the table, or
// why loading failed, is kept for the life of the process. One per table type.
template <typename Lib>
absl::StatusOr<const Lib*> LoadLibraryOnce(absl::StatusOr<std::unique_ptr<Lib>> (*load)()) {
  static absl::StatusOr<std::unique_ptr<Lib>>* loaded = nullptr;
  static std::once_flag once;
  std::call_once(once, [load] { loaded = new absl::StatusOr<std::unique_ptr<Lib>>(load()); });
  if (!loaded->ok()) return loaded->status();
  return loaded->value().get();
}

}  // namespace hloc::runtime::gpu
