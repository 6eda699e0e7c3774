#include "engine/builtin_data.h"

#include <filesystem>

namespace hloc {
namespace {

// "<built-in>/configs/../pipelines/gpu.yaml" -> "pipelines/gpu.yaml"; nullopt when not built-in.
std::optional<std::string> Relative(std::string_view path) {
  if (path.substr(0, kBuiltinDir.size()) != kBuiltinDir) return std::nullopt;
  std::string_view rest = path.substr(kBuiltinDir.size());
  if (!rest.empty() && rest.front() != '/') return std::nullopt;
  std::string normal = std::filesystem::path(std::string(kBuiltinDir) + std::string(rest)).lexically_normal().string();
  // lexically_normal keeps the first component; what follows it is the relative path.
  if (normal.substr(0, kBuiltinDir.size()) != kBuiltinDir) return std::nullopt;
  std::string relative = normal.substr(kBuiltinDir.size());
  while (!relative.empty() && relative.front() == '/') relative.erase(0, 1);
  while (!relative.empty() && relative.back() == '/') relative.pop_back();
  return relative;
}

}  // namespace

bool IsBuiltinPath(std::string_view path) { return Relative(path).has_value(); }

std::optional<std::string_view> FindBuiltinFile(std::string_view path) {
  std::optional<std::string> rel = Relative(path);
  if (!rel) return std::nullopt;
  for (const BuiltinFile& f : BuiltinFiles())
    if (f.path == *rel) return f.text;
  return std::nullopt;
}

bool IsBuiltinDir(std::string_view path) { return !BuiltinYamlNamesIn(path).empty(); }

std::vector<std::string> BuiltinYamlNamesIn(std::string_view dir) {
  std::vector<std::string> names;
  std::optional<std::string> rel = Relative(dir);
  if (!rel) return names;
  const std::string prefix = rel->empty() ? std::string() : *rel + "/";
  for (const BuiltinFile& f : BuiltinFiles()) {
    std::string_view p = f.path;
    if (p.substr(0, prefix.size()) != prefix) continue;
    std::string_view name = p.substr(prefix.size());
    if (name.find('/') != std::string_view::npos) continue;
    if (name.size() <= 5 || name.substr(name.size() - 5) != ".yaml") continue;
    names.emplace_back(name.substr(0, name.size() - 5));
  }
  return names;
}

}  // namespace hloc
