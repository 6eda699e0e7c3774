// The C API of hloc_c.h over the C++ compiler (codegen::cpu/gpu) and runtimes (runtime::Cpu/Gpu
// Executable). Every entry point catches what it can and reports through hloc_last_error().
#include "capi/hloc_c.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/cpu/cpu_compiler.h"
#include "codegen/gpu/gpu_compiler.h"
#include "engine/profile_loader.h"
#include "ir/hlo_parser.h"
#include "ir/verifier.h"
#include "runtime/cpu/cpu_executable.h"
#include "runtime/executable/executable.h"
#include "runtime/gpu/gpu_executable.h"

#ifndef HLOC_VERSION_STRING
#define HLOC_VERSION_STRING "0.1.0"
#endif
#ifndef HLOC_SOURCE_DIR
#define HLOC_SOURCE_DIR ""
#endif

struct hloc_executable {
  hloc::runtime::Executable executable;  // kept for hloc_serialize (Load consumes a copy)
  std::vector<std::vector<int64_t>> param_dims, result_dims;
  mutable std::mutex mu;  // runs take turns; the first one loads
  std::unique_ptr<hloc::runtime::CpuExecutable> cpu;
  std::unique_ptr<hloc::runtime::GpuExecutable> gpu;
};

namespace {

thread_local std::string last_error;

void SetError(std::string message) { last_error = std::move(message); }

// The folders holding `folder` (configs, pipelines): $ENV, then beside the library
// (LIB/../FOLDER, LIB/../share/hloc/FOLDER, and up to three levels above LIB for a library
// copied into python/hloc/ of a checkout), then the source tree the library was built from.
std::vector<std::string> SearchDirs(const char* env_var, const char* folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') dirs.push_back(env);
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&SearchDirs), &info) != 0 && info.dli_fname != nullptr) {
    std::error_code ec;
    fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec);
    if (!ec) {
      fs::path dir = lib.parent_path();
      for (int up = 0; up < 4 && !dir.empty(); ++up) {
        dirs.push_back((dir / folder).lexically_normal().string());
        dirs.push_back((dir / "share" / "hloc" / folder).lexically_normal().string());
        dir = dir.parent_path();
      }
    }
  }
  if (std::strlen(HLOC_SOURCE_DIR) > 0) dirs.push_back(absl::StrCat(HLOC_SOURCE_DIR, "/", folder));
  return dirs;
}

std::vector<int64_t> Dims(const hloc::runtime::ArrayShape& s) { return s.dimensions; }

hloc_executable* Wrap(hloc::runtime::Executable exe) {
  auto* out = new hloc_executable;
  out->executable = std::move(exe);
  for (const auto& s : out->executable.parameter_shapes) out->param_dims.push_back(Dims(s));
  for (const auto& s : out->executable.result_shapes) out->result_dims.push_back(Dims(s));
  return out;
}

absl::StatusOr<hloc::runtime::Executable> Compile(const std::string& text, const std::string& name,
                                                  const std::string& profile_name) {
  using namespace hloc;
  const std::vector<std::string> config_dirs = SearchDirs("HLOC_CONFIG_DIR", "configs");
  const std::vector<std::string> pipeline_dirs = SearchDirs("HLOC_PIPELINE_DIR", "pipelines");
  absl::StatusOr<std::string> path = FindProfileFile(profile_name, config_dirs);
  if (!path.ok()) return path.status();
  absl::StatusOr<Profile> profile = LoadProfileFile(*path);
  if (!profile.ok()) return profile.status();

  absl::StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, name);
  if (!module.ok()) return module.status();
  if (absl::Status s = VerifyModule(**module); !s.ok())
    return absl::InvalidArgumentError(absl::StrCat(name, ": verification failed: ", s.message()));
  if ((*module)->config().num_partitions * (*module)->config().replica_count > 1)
    return absl::UnimplementedError(absl::StrCat(
        name, ": the module spans several devices (num_partitions x replica_count > 1); the Python API runs "
              "one-device modules (use `hloc run` for several)"));

  if (profile->hardware.kind == "gpu") {
    codegen::gpu::GpuCompileOptions options;
    if (absl::Status s = codegen::gpu::LoadGpuProfileAndPipeline(profile_name, config_dirs, pipeline_dirs, options,
                                                                 &*profile);
        !s.ok())
      return s;
    absl::StatusOr<runtime::Executable> exe = codegen::gpu::GpuCompiler::Compile(**module, options);
    if (!exe.ok()) return absl::Status(exe.status().code(), absl::StrCat(name, ": ", exe.status().message()));
    return exe;
  }
  codegen::cpu::CpuCompileOptions options;
  if (absl::Status s =
          codegen::cpu::LoadCpuProfileAndPipeline(profile_name, config_dirs, pipeline_dirs, options, &*profile);
      !s.ok())
    return s;
  absl::StatusOr<runtime::Executable> exe = codegen::cpu::CpuCompiler::Compile(**module, options);
  if (!exe.ok()) return absl::Status(exe.status().code(), absl::StrCat(name, ": ", exe.status().message()));
  return exe;
}

// Loads the executable's code on its backend the first time (mu held).
absl::Status EnsureLoaded(hloc_executable* exe) {
  using namespace hloc;
  if (exe->cpu || exe->gpu) return absl::OkStatus();
  if (exe->executable.num_devices() > 1)
    return absl::UnimplementedError("the executable spans several devices; the C API runs one-device executables");
  if (exe->executable.platform == "gpu") {
    if (absl::Status s = runtime::GpuRuntimeAvailable(); !s.ok())
      return absl::UnavailableError(absl::StrCat("no usable GPU here: ", s.message()));
    runtime::GpuRunOptions options;
    absl::StatusOr<std::unique_ptr<runtime::GpuExecutable>> loaded = runtime::GpuExecutable::Load(exe->executable, options);
    if (!loaded.ok()) return loaded.status();
    exe->gpu = std::move(*loaded);
    return absl::OkStatus();
  }
  runtime::CpuRunOptions options;
  if (const char* t = std::getenv("HLOC_NUM_THREADS"); t != nullptr) {
    int n = 0;
    if (absl::SimpleAtoi(t, &n) && n > 0) options.num_threads = n;
  }
  absl::StatusOr<std::unique_ptr<runtime::CpuExecutable>> loaded = runtime::CpuExecutable::Load(exe->executable, options);
  if (!loaded.ok()) return loaded.status();
  exe->cpu = std::move(*loaded);
  return absl::OkStatus();
}

int Shape(const std::vector<hloc::runtime::ArrayShape>& shapes, const std::vector<std::vector<int64_t>>& dims,
          int64_t i, const char** element_type, int64_t* rank, const int64_t** out_dims) {
  if (i < 0 || i >= static_cast<int64_t>(shapes.size())) {
    SetError(absl::StrCat("index ", i, " out of range (", shapes.size(), ")"));
    return -1;
  }
  if (element_type) *element_type = shapes[i].element_type.c_str();
  if (rank) *rank = static_cast<int64_t>(dims[i].size());
  if (out_dims) *out_dims = dims[i].empty() ? nullptr : dims[i].data();
  return 0;
}

}  // namespace

extern "C" {

const char* hloc_version(void) { return HLOC_VERSION_STRING; }
int hloc_c_api_version(void) { return HLOC_C_API_VERSION; }
const char* hloc_last_error(void) { return last_error.c_str(); }

int hloc_gpu_available(void) {
  absl::Status s = hloc::runtime::GpuRuntimeAvailable();
  if (s.ok()) return 0;
  SetError(std::string(s.message()));
  return -1;
}

hloc_executable* hloc_compile(const char* text, size_t len, const char* source_name, const char* profile) {
  try {
    if (text == nullptr) {
      SetError("hloc_compile: no text");
      return nullptr;
    }
    absl::StatusOr<hloc::runtime::Executable> exe =
        Compile(std::string(text, len), source_name ? source_name : "<text>", profile && *profile ? profile : "cpu");
    if (!exe.ok()) {
      SetError(std::string(exe.status().message()));
      return nullptr;
    }
    return Wrap(std::move(*exe));
  } catch (const std::exception& e) {
    SetError(absl::StrCat("hloc_compile: ", e.what()));
    return nullptr;
  }
}

hloc_executable* hloc_deserialize(const void* bytes, size_t len, const char* origin) {
  try {
    absl::StatusOr<hloc::runtime::Executable> exe = hloc::runtime::Executable::Deserialize(
        std::string(static_cast<const char*>(bytes), len), origin ? origin : "<bytes>");
    if (!exe.ok()) {
      SetError(std::string(exe.status().message()));
      return nullptr;
    }
    return Wrap(std::move(*exe));
  } catch (const std::exception& e) {
    SetError(absl::StrCat("hloc_deserialize: ", e.what()));
    return nullptr;
  }
}

int hloc_serialize(const hloc_executable* exe, void** bytes, size_t* len) {
  try {
    std::string s = exe->executable.Serialize();
    void* out = std::malloc(s.empty() ? 1 : s.size());
    if (out == nullptr) {
      SetError("hloc_serialize: out of memory");
      return -1;
    }
    std::memcpy(out, s.data(), s.size());
    *bytes = out;
    *len = s.size();
    return 0;
  } catch (const std::exception& e) {
    SetError(absl::StrCat("hloc_serialize: ", e.what()));
    return -1;
  }
}

void hloc_free_buffer(void* bytes) { std::free(bytes); }
void hloc_executable_free(hloc_executable* exe) { delete exe; }

const char* hloc_executable_platform(const hloc_executable* exe) { return exe->executable.platform.c_str(); }
const char* hloc_executable_profile(const hloc_executable* exe) { return exe->executable.profile.c_str(); }
const char* hloc_executable_module_name(const hloc_executable* exe) { return exe->executable.module_name.c_str(); }
const char* hloc_executable_hlo_text(const hloc_executable* exe) { return exe->executable.hlo_text.c_str(); }
int64_t hloc_executable_num_parameters(const hloc_executable* exe) {
  return static_cast<int64_t>(exe->executable.parameter_shapes.size());
}
int64_t hloc_executable_num_results(const hloc_executable* exe) {
  return static_cast<int64_t>(exe->executable.result_shapes.size());
}
int hloc_executable_result_is_tuple(const hloc_executable* exe) { return exe->executable.result_is_tuple ? 1 : 0; }

int hloc_executable_parameter(const hloc_executable* exe, int64_t i, const char** element_type, int64_t* rank,
                              const int64_t** dims) {
  return Shape(exe->executable.parameter_shapes, exe->param_dims, i, element_type, rank, dims);
}
int hloc_executable_result(const hloc_executable* exe, int64_t i, const char** element_type, int64_t* rank,
                           const int64_t** dims) {
  return Shape(exe->executable.result_shapes, exe->result_dims, i, element_type, rank, dims);
}

int hloc_execute(hloc_executable* exe, int64_t num_args, const void* const* args, const int64_t* arg_sizes,
                 int64_t num_results, void* const* results, const int64_t* result_sizes) {
  using namespace hloc;
  try {
    const auto& params = exe->executable.parameter_shapes;
    const auto& outs = exe->executable.result_shapes;
    if (num_args != static_cast<int64_t>(params.size())) {
      SetError(absl::StrCat("the module takes ", params.size(), " arguments, got ", num_args));
      return -1;
    }
    if (num_results != static_cast<int64_t>(outs.size())) {
      SetError(absl::StrCat("the module has ", outs.size(), " results, got room for ", num_results));
      return -1;
    }
    std::vector<runtime::HostBuffer> buffers(params.size());
    for (size_t i = 0; i < params.size(); ++i) {
      buffers[i].shape = params[i];
      buffers[i].shape.minor_to_major.clear();  // row-major; the runtime moves it into its layout
      const int64_t want = buffers[i].shape.byte_size();
      if (arg_sizes[i] != want) {
        SetError(absl::StrCat("argument ", i, ": ", arg_sizes[i], " bytes, the parameter (", params[i].element_type,
                              "[", absl::StrJoin(params[i].dimensions, ","), "]) needs ", want));
        return -1;
      }
      const auto* p = static_cast<const uint8_t*>(args[i]);
      buffers[i].data.assign(p, p + want);
    }
    absl::StatusOr<std::vector<runtime::HostBuffer>> r;
    {
      std::lock_guard<std::mutex> lock(exe->mu);
      if (absl::Status s = EnsureLoaded(exe); !s.ok()) {
        SetError(std::string(s.message()));
        return -1;
      }
      r = exe->gpu ? exe->gpu->Run(buffers) : exe->cpu->Run(buffers);
    }
    if (!r.ok()) {
      SetError(std::string(r.status().message()));
      return -1;
    }
    if (r->size() != outs.size()) {
      SetError(absl::StrCat("the run returned ", r->size(), " results, expected ", outs.size()));
      return -1;
    }
    for (size_t j = 0; j < r->size(); ++j) {
      absl::StatusOr<runtime::HostBuffer> row_major = runtime::ToLayout((*r)[j], {});
      if (!row_major.ok()) {
        SetError(absl::StrCat("result ", j, ": ", row_major.status().message()));
        return -1;
      }
      if (static_cast<int64_t>(row_major->data.size()) != result_sizes[j]) {
        SetError(absl::StrCat("result ", j, ": ", row_major->data.size(), " bytes, the caller gave ", result_sizes[j]));
        return -1;
      }
      if (!row_major->data.empty()) std::memcpy(results[j], row_major->data.data(), row_major->data.size());
    }
    return 0;
  } catch (const std::exception& e) {
    SetError(absl::StrCat("hloc_execute: ", e.what()));
    return -1;
  }
}

int hloc_execute_device(hloc_executable* exe, int64_t num_args, const uint64_t* args, int64_t num_results,
                        const uint64_t* results) {
  using namespace hloc;
  try {
    if (exe->executable.platform != "gpu") {
      SetError("hloc_execute_device: the executable was compiled for the CPU; use hloc_execute");
      return -1;
    }
    std::lock_guard<std::mutex> lock(exe->mu);
    if (absl::Status s = EnsureLoaded(exe); !s.ok()) {
      SetError(std::string(s.message()));
      return -1;
    }
    absl::Status s = exe->gpu->RunOnDevice(std::vector<uint64_t>(args, args + std::max<int64_t>(num_args, 0)),
                                           std::vector<uint64_t>(results, results + std::max<int64_t>(num_results, 0)));
    if (!s.ok()) {
      SetError(std::string(s.message()));
      return -1;
    }
    return 0;
  } catch (const std::exception& e) {
    SetError(absl::StrCat("hloc_execute_device: ", e.what()));
    return -1;
  }
}

int hloc_gpu_alloc(int64_t bytes, uint64_t* address) {
  absl::StatusOr<uint64_t> p = hloc::runtime::AllocateDeviceMemory(bytes);
  if (!p.ok()) {
    SetError(std::string(p.status().message()));
    return -1;
  }
  *address = *p;
  return 0;
}

int64_t hloc_executable_last_in_place(const hloc_executable* exe) {
  if (exe->executable.platform != "gpu") return -1;
  std::lock_guard<std::mutex> lock(exe->mu);
  return exe->gpu ? exe->gpu->last_in_place() : 0;
}

int hloc_executable_row_major_io(const hloc_executable* exe) {
  auto row_major = [](const std::vector<hloc::runtime::ArrayShape>& shapes) {
    for (const hloc::runtime::ArrayShape& s : shapes) {
      const size_t r = s.dimensions.size();
      for (size_t k = 0; k < s.minor_to_major.size(); ++k)
        if (s.minor_to_major[k] != static_cast<int64_t>(r - 1 - k)) return false;
    }
    return true;
  };
  return row_major(exe->executable.parameter_shapes) && row_major(exe->executable.result_shapes) ? 1 : 0;
}

int hloc_gpu_copy_to_host(uint64_t address, int64_t bytes, void* host) {
  absl::Status s = hloc::runtime::CopyDeviceToHost(address, bytes, host);
  if (!s.ok()) {
    SetError(std::string(s.message()));
    return -1;
  }
  return 0;
}

int hloc_gpu_free(uint64_t address) {
  absl::Status s = hloc::runtime::FreeDeviceMemory(address);
  if (!s.ok()) {
    SetError(std::string(s.message()));
    return -1;
  }
  return 0;
}

}  // extern "C"
