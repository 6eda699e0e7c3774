// Loading the CUDA driver at run time (see cuda_driver.h).
#include "runtime/gpu/cuda_driver.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hloc::runtime::gpu {

absl::StatusOr<void*> OpenLibrary(const std::initializer_list<const char*>& names, const std::string& purpose) {
  std::vector<std::string> reasons;
  for (const char* name : names) {
    // RTLD_LOCAL: the libraries' symbols must not interpose on anything in the binary.
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) return handle;
    const char* err = dlerror();
    // dlerror's text starts with the name already ("libcuda.so.1: cannot open shared object ...").
    reasons.push_back(err != nullptr ? std::string(err) : absl::StrCat(name, ": unknown dlopen error"));
  }
  return absl::UnavailableError(absl::StrCat("cannot load ", purpose, " (", absl::StrJoin(reasons, "; "), ")"));
}

absl::StatusOr<GpuMemoryLimit> ParseGpuMemoryLimit(const std::string& text) {
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "HLOC_GPU_MEMORY_LIMIT='", text,
        "': expected bytes with an optional suffix (512M, 2G, 1.5GiB, 1048576) or a fraction of the device memory "
        "between 0 and 1 (0.25)"));
  };
  std::string t(absl::StripAsciiWhitespace(text));
  size_t digits = 0;
  while (digits < t.size() && (absl::ascii_isdigit(t[digits]) || t[digits] == '.')) ++digits;
  double number = 0;
  if (digits == 0 || !absl::SimpleAtod(t.substr(0, digits), &number) || !(number > 0)) return bad();
  std::string suffix = absl::AsciiStrToUpper(t.substr(digits));
  if (absl::EndsWith(suffix, "IB")) suffix.resize(suffix.size() - 2);
  else if (suffix.size() > 1 && suffix.back() == 'B') suffix.pop_back();
  GpuMemoryLimit limit;
  if (suffix.empty() && number < 1) {
    limit.fraction = number;
    return limit;
  }
  const std::string units = "BKMGT";
  if (suffix.size() > 1) return bad();
  const size_t power = suffix.empty() ? 0 : units.find(suffix[0]);
  if (power == std::string::npos) return bad();
  const double bytes = number * static_cast<double>(uint64_t{1} << (10 * power));
  if (bytes < 1 || bytes > 1e18) return bad();
  limit.bytes = static_cast<uint64_t>(bytes);
  return limit;
}

std::string GpuMemoryLimitNote() {
  const char* env = std::getenv("HLOC_GPU_MEMORY_LIMIT");
  if (env == nullptr || *env == '\0') return "";
  return absl::StrCat("; HLOC_GPU_MEMORY_LIMIT=", env, " caps hloc's device memory");
}

#if HLOC_HAVE_CUDA

namespace {

// ---- HLOC_GPU_MEMORY_LIMIT: cuMemAlloc / cuMemFree / cuMemGetInfo through a per-device count ----
namespace memory_limit {
GpuMemoryLimit g_limit;
decltype(&::cuMemAlloc) g_alloc = nullptr;
decltype(&::cuMemFree) g_free = nullptr;
decltype(&::cuMemGetInfo) g_info = nullptr;
decltype(&::cuCtxGetCurrent) g_current = nullptr;
std::mutex g_mu;
std::map<CUdeviceptr, std::pair<CUcontext, size_t>>* g_sizes = new std::map<CUdeviceptr, std::pair<CUcontext, size_t>>();
std::map<CUcontext, uint64_t>* g_used = new std::map<CUcontext, uint64_t>();

// The cap for the current context's device (g_mu held).
uint64_t Cap() {
  if (g_limit.bytes > 0) return g_limit.bytes;
  size_t free_bytes = 0, total = 0;
  if (g_info(&free_bytes, &total) != CUDA_SUCCESS) return 0;
  return static_cast<uint64_t>(g_limit.fraction * static_cast<double>(total));
}

CUresult CUDAAPI Alloc(CUdeviceptr* ptr, size_t bytes) {
  CUcontext ctx = nullptr;
  if (CUresult r = g_current(&ctx); r != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(g_mu);
  uint64_t& used = (*g_used)[ctx];
  if (used + bytes > Cap()) return CUDA_ERROR_OUT_OF_MEMORY;
  const CUresult r = g_alloc(ptr, bytes);
  if (r != CUDA_SUCCESS) return r;
  (*g_sizes)[*ptr] = {ctx, bytes};
  used += bytes;
  return r;
}

CUresult CUDAAPI Free(CUdeviceptr ptr) {
  {
    std::lock_guard<std::mutex> lock(g_mu);
    auto it = g_sizes->find(ptr);
    if (it != g_sizes->end()) {
      (*g_used)[it->second.first] -= it->second.second;
      g_sizes->erase(it);
    }
  }
  return g_free(ptr);
}

CUresult CUDAAPI Info(size_t* free_bytes, size_t* total) {
  const CUresult r = g_info(free_bytes, total);
  if (r != CUDA_SUCCESS) return r;
  CUcontext ctx = nullptr;
  if (g_current(&ctx) != CUDA_SUCCESS) return r;
  std::lock_guard<std::mutex> lock(g_mu);
  const uint64_t cap = Cap();
  const uint64_t used = (*g_used)[ctx];
  *total = static_cast<size_t>(std::min<uint64_t>(*total, cap));
  *free_bytes = static_cast<size_t>(std::min<uint64_t>(*free_bytes, cap > used ? cap - used : 0));
  return r;
}

// Routes the driver table's three memory entry points through the count.
absl::Status Install(CudaDriver& driver) {
  const char* env = std::getenv("HLOC_GPU_MEMORY_LIMIT");
  if (env == nullptr || *env == '\0') return absl::OkStatus();
  absl::StatusOr<GpuMemoryLimit> limit = ParseGpuMemoryLimit(env);
  if (!limit.ok()) return limit.status();
  g_limit = *limit;
  g_alloc = driver.cuMemAlloc;
  g_free = driver.cuMemFree;
  g_info = driver.cuMemGetInfo;
  g_current = driver.cuCtxGetCurrent;
  driver.cuMemAlloc = &Alloc;
  driver.cuMemFree = &Free;
  driver.cuMemGetInfo = &Info;
  return absl::OkStatus();
}
}  // namespace memory_limit

#define HLOC_STRINGIFY2(x) #x
#define HLOC_STRINGIFY(x) HLOC_STRINGIFY2(x)

absl::StatusOr<std::unique_ptr<CudaDriver>> LoadOnce() {
  absl::StatusOr<void*> lib = OpenLibrary({"libcuda.so.1", "libcuda.so"}, "the CUDA driver (no NVIDIA driver here?)");
  if (!lib.ok()) return lib.status();
  auto driver = std::make_unique<CudaDriver>();
  driver->library = *lib;
  std::vector<std::string> missing;
  // HLOC_STRINGIFY expands the macro first: "cuMemAlloc_v2", the symbol the declared type is of.
#define HLOC_CUDA_DRIVER_LOAD(name)                                                   \
  driver->name = reinterpret_cast<decltype(driver->name)>(dlsym(*lib, HLOC_STRINGIFY(name))); \
  if (driver->name == nullptr) missing.push_back(HLOC_STRINGIFY(name));
  HLOC_CUDA_DRIVER_ENTRIES(HLOC_CUDA_DRIVER_LOAD)
#undef HLOC_CUDA_DRIVER_LOAD
  driver->cuFuncGetParamInfo = reinterpret_cast<decltype(driver->cuFuncGetParamInfo)>(dlsym(*lib, "cuFuncGetParamInfo"));
#define HLOC_CUDA_DRIVER_OPTIONAL(name) \
  driver->name = reinterpret_cast<decltype(driver->name)>(dlsym(*lib, HLOC_STRINGIFY(name)));
  HLOC_CUDA_DRIVER_OPTIONAL(cuGraphConditionalHandleCreate)
  HLOC_CUDA_DRIVER_OPTIONAL(cuGraphAddNode)
  HLOC_CUDA_DRIVER_OPTIONAL(cuStreamBeginCaptureToGraph)
  HLOC_CUDA_DRIVER_OPTIONAL(cuStreamGetCaptureInfo)
  HLOC_CUDA_DRIVER_OPTIONAL(cuStreamUpdateCaptureDependencies)
  HLOC_CUDA_DRIVER_OPTIONAL(cuGraphCreate)
#undef HLOC_CUDA_DRIVER_OPTIONAL
  if (!missing.empty()) {
    return absl::UnavailableError(absl::StrCat("libcuda.so.1 lacks entry points (driver too old for CUDA ",
                                               CUDA_VERSION / 1000, "?): ", absl::StrJoin(missing, ", ")));
  }
  if (absl::Status s = memory_limit::Install(*driver); !s.ok()) return s;
  if (absl::Status s = HLOC_CU(*driver, cuInit, "initializing the CUDA driver", 0); !s.ok()) return s;
  if (absl::Status s = HLOC_CU(*driver, cuDriverGetVersion, "asking the driver version", &driver->driver_version);
      !s.ok()) {
    return s;
  }
  int count = 0;
  if (absl::Status s = HLOC_CU(*driver, cuDeviceGetCount, "counting CUDA devices", &count); !s.ok()) return s;
  if (count <= 0) return absl::UnavailableError("the CUDA driver loaded but reports no CUDA device");
  return driver;
}

}  // namespace

absl::StatusOr<const CudaDriver*> LoadCudaDriver() { return LoadLibraryOnce(LoadOnce); }

std::string CuResultString(const CudaDriver& driver, CUresult result) {
  const char* name = nullptr;
  const char* message = nullptr;
  if (driver.cuGetErrorName == nullptr || driver.cuGetErrorName(result, &name) != CUDA_SUCCESS) name = nullptr;
  if (driver.cuGetErrorString == nullptr || driver.cuGetErrorString(result, &message) != CUDA_SUCCESS) {
    message = nullptr;
  }
  return absl::StrCat(name != nullptr ? name : absl::StrCat("CUresult ", static_cast<int>(result)), " (",
                      message != nullptr ? message : "no description", ")");
}

absl::Status CuCheck(const CudaDriver& driver, CUresult result, const char* function, const std::string& what) {
  if (result == CUDA_SUCCESS) return absl::OkStatus();
  std::string text = absl::StrCat(function, " failed with ", CuResultString(driver, result), " while ", what);
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY: {
      // What the device (or HLOC_GPU_MEMORY_LIMIT) has left, for every allocation that fails.
      size_t free_bytes = 0, total = 0;
      if (driver.cuMemGetInfo != nullptr && driver.cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS) {
        absl::StrAppend(&text, absl::StrFormat(" (%d bytes free of %d on the device%s)", static_cast<int64_t>(free_bytes),
                                               static_cast<int64_t>(total), GpuMemoryLimitNote()));
      }
      return absl::ResourceExhaustedError(text);
    }
    case CUDA_ERROR_NO_DEVICE:
    case CUDA_ERROR_INVALID_DEVICE:
    case CUDA_ERROR_NOT_INITIALIZED:
    case CUDA_ERROR_DEINITIALIZED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
      return absl::UnavailableError(text);
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_INVALID_VALUE:
      return absl::InvalidArgumentError(text);
    case CUDA_ERROR_NOT_FOUND:
      return absl::NotFoundError(text);
    default:
      return absl::InternalError(text);
  }
}

std::string CudaDeviceInfo::ToString() const {
  return absl::StrFormat("%s (device %d, sm_%d%d, %d SMs, %.1f GiB)", name, ordinal, cc_major, cc_minor, sm_count,
                         static_cast<double>(total_memory) / (1024.0 * 1024.0 * 1024.0));
}

absl::Status CudaContext::MakeCurrent() const {
  return HLOC_CU(*driver, cuCtxSetCurrent, absl::StrCat("making device ", info.ordinal, "'s context current"), context);
}

absl::StatusOr<const CudaContext*> GetCudaContext(int ordinal) {
  absl::StatusOr<const CudaDriver*> driver = LoadCudaDriver();
  if (!driver.ok()) return driver.status();
  const CudaDriver& d = **driver;
  static std::mutex mu;
  static auto* contexts = new std::map<int, std::unique_ptr<CudaContext>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = contexts->find(ordinal);
  if (it != contexts->end()) return it->second.get();
  int count = 0;
  if (absl::Status s = HLOC_CU(d, cuDeviceGetCount, "counting CUDA devices", &count); !s.ok()) return s;
  if (ordinal < 0 || ordinal >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUDA device ", ordinal, " does not exist (", count, " device", count == 1 ? "" : "s", ")"));
  }
  auto ctx = std::make_unique<CudaContext>();
  ctx->driver = &d;
  ctx->info.ordinal = ordinal;
  const std::string dev = absl::StrCat("device ", ordinal);
  if (absl::Status s = HLOC_CU(d, cuDeviceGet, "getting " + dev, &ctx->info.device, ordinal); !s.ok()) return s;
  char name[256] = {0};
  if (absl::Status s = HLOC_CU(d, cuDeviceGetName, "naming " + dev, name, sizeof(name) - 1, ctx->info.device);
      !s.ok()) {
    return s;
  }
  ctx->info.name = name;
  auto attr = [&](CUdevice_attribute a, int* out, const char* what) {
    return HLOC_CU(d, cuDeviceGetAttribute, absl::StrCat("reading ", what, " of ", dev), out, a, ctx->info.device);
  };
  if (absl::Status s = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &ctx->info.cc_major, "compute capability");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &ctx->info.cc_minor, "compute capability");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &ctx->info.sm_count, "the SM count"); !s.ok()) {
    return s;
  }
  size_t total = 0;
  if (absl::Status s = HLOC_CU(d, cuDeviceTotalMem, "reading the memory size of " + dev, &total, ctx->info.device);
      !s.ok()) {
    return s;
  }
  ctx->info.total_memory = static_cast<int64_t>(total);
  if (absl::Status s = HLOC_CU(d, cuDevicePrimaryCtxRetain, "retaining the primary context of " + dev, &ctx->context,
                               ctx->info.device);
      !s.ok()) {
    return s;
  }
  const CudaContext* result = ctx.get();
  (*contexts)[ordinal] = std::move(ctx);
  return result;
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
