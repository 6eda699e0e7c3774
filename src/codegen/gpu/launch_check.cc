#include "codegen/gpu/launch_check.h"

#include "absl/strings/str_format.h"

namespace hloc::codegen::gpu {
namespace {

int64_t TouchedBytes(const runtime::Thunk& t) {
  return t.bytes_touched >= 0 ? t.bytes_touched : runtime::DistinctArgumentBytes(t);
}

void Check(const runtime::ThunkSequence& thunks, const LaunchCheckLimits& limits, std::vector<LaunchWarning>& out) {
  for (const runtime::Thunk& t : thunks) {
    Check(t.condition, limits, out);
    Check(t.body, limits, out);
    for (const runtime::ThunkSequence& b : t.branches) Check(b, limits, out);
    if (t.kind != runtime::ThunkKind::kKernel || !t.serial_reason.empty()) continue;
    const runtime::LaunchDimensions& l = t.launch;
    const int64_t threads = l.grid_x * l.grid_y * l.grid_z * l.block_x * l.block_y * l.block_z;
    const int64_t bytes = TouchedBytes(t);
    if (bytes <= limits.min_bytes || threads <= 0 || bytes / threads <= limits.max_bytes_per_thread) continue;
    out.push_back({t.name, t.emitter.empty() ? std::string("?") : t.emitter, t.kernel_name, l, bytes, threads});
  }
}

}  // namespace

std::string LaunchWarning::ToString() const {
  return absl::StrFormat(
      "%%%s: the %s kernel %s touches %d bytes with %d threads (grid [%d,%d,%d], block [%d,%d,%d]): %d bytes per "
      "thread cannot reach the memory bandwidth",
      instruction, emitter, kernel, bytes, threads, launch.grid_x, launch.grid_y, launch.grid_z, launch.block_x,
      launch.block_y, launch.block_z, threads > 0 ? bytes / threads : bytes);
}

std::vector<LaunchWarning> CheckLaunches(const runtime::ThunkSequence& thunks, const LaunchCheckLimits& limits) {
  std::vector<LaunchWarning> out;
  Check(thunks, limits, out);
  return out;
}

}  // namespace hloc::codegen::gpu
