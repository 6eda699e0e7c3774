// hloc run --backend gpu without --profile compiles for the GPU present: GpuProfileForDevice
// (engine/profile_loader.h) picks configs/*.yaml by compute capability, memory size and SMs.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "engine/profile_loader.h"

namespace hloc {
namespace {

GpuDeviceFacts Facts(int major, int minor, int64_t sms, double gib) {
  GpuDeviceFacts f;
  f.compute_capability_major = major;
  f.compute_capability_minor = minor;
  f.sm_count = sms;
  f.memory_size = static_cast<int64_t>(gib * 1073741824.0);
  return f;
}

TEST_CASE("the profile of the GPU present", "[profile][gpu-choice]") {
  const std::vector<std::string> dirs = {std::string(HLOC_SOURCE_DIR) + "/configs"};
  // What the driver reports for each (tests/gpu logs of 2026-12-07: 79.2 GiB on an H100, 139.8 on an H200).
  CHECK(GpuProfileForDevice(Facts(9, 0, 132, 79.2), dirs) == std::optional<std::string>("h100"));
  CHECK(GpuProfileForDevice(Facts(9, 0, 132, 139.8), dirs) == std::optional<std::string>("h200"));
  CHECK(GpuProfileForDevice(Facts(8, 0, 108, 79.2), dirs) == std::optional<std::string>("a100"));
  // An H100 PCIe (114 SMs, 80 GB) is nearest h100 too; a GPU of another compute capability has none.
  CHECK(GpuProfileForDevice(Facts(9, 0, 114, 79.6), dirs) == std::optional<std::string>("h100"));
  CHECK_FALSE(GpuProfileForDevice(Facts(7, 5, 40, 15.0), dirs).has_value());
  CHECK_FALSE(GpuProfileForDevice(Facts(9, 0, 132, 79.2), {"/nonexistent"}).has_value());
}

}  // namespace
}  // namespace hloc
