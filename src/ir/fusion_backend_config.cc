#include "ir/fusion_backend_config.h"

#include <nlohmann/json.hpp>

#include "ir/custom_calls/library_calls.h"

namespace hloc {

std::optional<std::string> FusionBackendConfigKind(std::string_view backend_config) {
  if (backend_config.empty() || backend_config.front() != '{') return std::nullopt;
  absl::StatusOr<nlohmann::json> v = ParseJson(backend_config);
  if (!v.ok() || !v->is_object()) return std::nullopt;
  auto f = v->find("fusion_backend_config");
  if (f == v->end() || !f->is_object()) return std::nullopt;
  auto k = f->find("kind");
  if (k == f->end() || !k->is_string()) return std::nullopt;
  return k->get<std::string>();
}

FusionLaunchRecord FusionBackendConfigLaunch(std::string_view backend_config) {
  FusionLaunchRecord r;
  if (backend_config.empty() || backend_config.front() != '{') return r;
  absl::StatusOr<nlohmann::json> v = ParseJson(backend_config);
  if (!v.ok() || !v->is_object()) return r;
  auto f = v->find("fusion_backend_config");
  if (f == v->end() || !f->is_object()) return r;
  auto ints = [&](const char* key, std::vector<int64_t>& out) {
    auto it = f->find(key);
    if (it == f->end() || !it->is_array()) return;
    for (const nlohmann::json& e : *it) {
      if (!e.is_number_integer()) {
        out.clear();
        return;
      }
      out.push_back(e.get<int64_t>());
    }
  };
  ints("block", r.block);
  ints("grid", r.grid);
  return r;
}

std::optional<std::string> WithFusionBackendConfig(std::string_view backend_config, std::string_view kind,
                                                   const std::vector<int64_t>& block, const std::vector<int64_t>& grid) {
  absl::StatusOr<nlohmann::json> v =
      backend_config.empty() ? absl::StatusOr<nlohmann::json>(nlohmann::json::object()) : ParseJson(backend_config);
  if (!v.ok() || !v->is_object()) return std::nullopt;
  nlohmann::json& f = (*v)["fusion_backend_config"];
  if (!f.is_object()) f = nlohmann::json::object();
  f["kind"] = std::string(kind);
  if (!block.empty()) f["block"] = block; else f.erase("block");
  if (!grid.empty()) f["grid"] = grid; else f.erase("grid");
  return v->dump();
}

}  // namespace hloc
