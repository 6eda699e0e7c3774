#include "support/host_memory.h"

#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <limits>

#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

constexpr uint64_t kUnlimited = std::numeric_limits<uint64_t>::max();

uint64_t Limit(int resource) {
  rlimit r;
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return kUnlimited;
  return static_cast<uint64_t>(r.rlim_cur);
}

uint64_t PhysicalPlusSwap() {
  struct sysinfo info;
  if (sysinfo(&info) != 0) return kUnlimited;
  const uint64_t unit = info.mem_unit == 0 ? 1 : info.mem_unit;
  return (static_cast<uint64_t>(info.totalram) + info.totalswap) * unit;
}

// The process's mapped size and data segment now, in bytes (/proc/self/statm); zeros when
// unreadable, which errs towards allowing an allocation that the kernel may still refuse.
struct Mapped {
  uint64_t virtual_bytes = 0;
  uint64_t data_bytes = 0;
};
Mapped MappedNow() {
  Mapped m;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return m;
  unsigned long long size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  if (std::fscanf(f, "%llu %llu %llu %llu %llu %llu", &size, &resident, &shared, &text, &lib, &data) == 6) {
    const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    m.virtual_bytes = size * page;
    m.data_bytes = data * page;
  }
  std::fclose(f);
  return m;
}

uint64_t Less(uint64_t limit, uint64_t used) {
  if (limit == kUnlimited) return kUnlimited;
  return limit > used ? limit - used : 0;
}

}  // namespace

uint64_t HostMemoryBytes() {
  static const uint64_t bytes = std::min({PhysicalPlusSwap(), Limit(RLIMIT_AS), Limit(RLIMIT_DATA)});
  return bytes;
}

uint64_t AvailableHostMemoryBytes() {
  const Mapped m = MappedNow();
  return std::min({PhysicalPlusSwap(), Less(Limit(RLIMIT_AS), m.virtual_bytes), Less(Limit(RLIMIT_DATA), m.data_bytes)});
}

absl::Status CheckCanAllocate(uint64_t bytes, const std::string& what) {
  const uint64_t available = AvailableHostMemoryBytes();
  if (bytes <= available) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat("cannot allocate ", bytes, " bytes for ", what, ": this process may ",
                                                   "allocate at most ", available,
                                                   " more bytes (physical memory and swap, ulimit -v / -d)"));
}

}  // namespace hloc
