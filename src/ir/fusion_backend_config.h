// The emitter a fusion gets, as recorded in its backend_config (issue 15 item 1): XLA's field
// style, {"fusion_backend_config":{"kind":"...", ...}}. XLA writes `kind` there for its custom
// fusions ("__triton_gemm", "__cudnn$fusion"); hloc writes "__hloc_<emitter>" for every fusion
// (fusion-emitter-assignment, passes/fusion/fusion_emitter_assignment.h) and codegen reads it
// (codegen/gpu/fusion_emitter_kind.h). Only the JSON here; which kinds exist is codegen's.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hloc {

// hloc's kinds start with this; other kinds (XLA's) are not hloc's to read or replace.
inline constexpr std::string_view kHlocFusionKindPrefix = "__hloc_";

// fusion_backend_config.kind of `backend_config`; nullopt when absent or not JSON.
std::optional<std::string> FusionBackendConfigKind(std::string_view backend_config);

// fusion_backend_config's block and grid (x, y, z), each empty when absent or not a list of
// integers.
struct FusionLaunchRecord {
  std::vector<int64_t> block, grid;
};
FusionLaunchRecord FusionBackendConfigLaunch(std::string_view backend_config);

// `backend_config` with fusion_backend_config's kind, block and grid set (block and grid left
// out when empty; the other keys, at both levels, kept); nullopt when `backend_config` is
// neither empty nor a JSON object.
std::optional<std::string> WithFusionBackendConfig(std::string_view backend_config, std::string_view kind,
                                                   const std::vector<int64_t>& block, const std::vector<int64_t>& grid);

}  // namespace hloc
