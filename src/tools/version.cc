// `hloc --version`: the version, the commit and the LLVM and CUDA versions hloc was built with
// (cmake/build_info.cmake), and the GPU libraries this machine has: hloc loads them at run time
// (runtime/gpu), so whether `--backend gpu` can work depends on what is found here, not on the
// build. Each is probed as the runtime loads it (the same names, in the same order) and its
// version read where the library says it without a GPU.
#include <dlfcn.h>
#include <link.h>

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/cpu/onednn_conv.h"
#include "absl/strings/str_cat.h"
#include "hloc_build_info.h"
#include "tools/cli.h"

namespace hloc::cli {
namespace {

struct Probe {
  const char* what;
  std::vector<const char*> names;  // as runtime/gpu's OpenLibrary is given them
  const char* version_symbol;                // "" for none
  enum { kIntOut, kSizeReturn, kNone } version_kind;
};

// "major.minor[.patch]" from the encodings the libraries use.
std::string FormatVersion(const std::string& what, long v) {
  if (what == "CUDA driver") return absl::StrCat(v / 1000, ".", (v % 1000) / 10);
  if (what == "cuBLASLt") return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
  if (what == "cuDNN") return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
  if (what == "NCCL") return absl::StrCat(v / 10000, ".", (v / 100) % 100, ".", v % 100);
  if (what == "cuFFT") return absl::StrCat(v / 1000, ".", (v / 100) % 10, ".", v % 100);
  return absl::StrCat(v);
}

std::string ProbeLibrary(const Probe& p) {
  for (const char* name : p.names) {
    void* handle = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
    if (handle == nullptr) continue;
    std::string where = name;
    struct link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr && *map->l_name)
      where = map->l_name;
    std::string version;
    if (void* sym = *p.version_symbol ? dlsym(handle, p.version_symbol) : nullptr) {
      long v = -1;
      if (p.version_kind == Probe::kIntOut) {
        int out = 0;
        if (reinterpret_cast<int (*)(int*)>(sym)(&out) == 0) v = out;
      } else if (p.version_kind == Probe::kSizeReturn) {
        v = static_cast<long>(reinterpret_cast<size_t (*)()>(sym)());
      }
      if (v > 0) version = absl::StrCat(" (version ", FormatVersion(p.what, v), ")");
    }
    // Left loaded: unloading CUDA libraries at exit is what their own teardown does badly.
    return where + version;
  }
  return "not found";
}

}  // namespace

void PrintVersion(std::ostream& out) {
  out << "hloc " << kVersion << "\n";
  out << "commit: " << HLOC_GIT_COMMIT << "\n";
  const std::string cuda = HLOC_CUDA_VERSION;
  out << "built with: LLVM " << HLOC_LLVM_VERSION << ", "
      << (cuda.empty() ? std::string("no CUDA headers (the GPU runtime is left out)")
                       : "CUDA " + cuda + " headers (the libraries are loaded at run time)")
      << "; " << HLOC_BUILD_KIND << " build\n";
  out << "CPU convolutions: "
      << (runtime::OneDnnAvailable() ? runtime::OneDnnVersion() + " (__onednn$convolution)"
                                     : std::string("elemental kernels (built without oneDNN)"))
      << "\n";
  out << "run-time libraries (--backend gpu):\n";
  static const Probe kProbes[] = {
      {"CUDA driver", {"libcuda.so.1", "libcuda.so"}, "cuDriverGetVersion", Probe::kIntOut},
      {"cuBLASLt",
       {"libcublasLt.so.13", "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13",
        "/usr/local/cuda/lib64/libcublasLt.so.12", "libcublasLt.so"},
       "cublasLtGetVersion",
       Probe::kSizeReturn},
      {"cuDNN", {"libcudnn.so.9", "libcudnn.so"}, "cudnnGetVersion", Probe::kSizeReturn},
      {"cuFFT",
       {"libcufft.so.12", "libcufft.so.11", "/usr/local/cuda/lib64/libcufft.so.12", "/usr/local/cuda/lib64/libcufft.so.11",
        "libcufft.so"},
       "cufftGetVersion",
       Probe::kIntOut},
      {"NCCL",
       {"libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", "libnccl.so"},
       "ncclGetVersion",
       Probe::kIntOut},
  };
  for (const Probe& p : kProbes) {
    std::string line = absl::StrCat("  ", p.what, ":");
    line.resize(16, ' ');
    out << line << ProbeLibrary(p) << "\n";
  }
}

}  // namespace hloc::cli
