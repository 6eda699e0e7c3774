// The default profiles (configs/*.yaml) and pipelines (pipelines/*.yaml), built into hloc at build
// time (cmake/builtin_data.cmake generates the table), so a binary copied alone anywhere still
// runs `--profile h200`. They are addressed as files under the pseudo-folder `<built-in>`
// (`<built-in>/configs/h200.yaml`), which yaml::LoadFile reads and which the last entry of every
// search path names (cli::DataSearchDirs); errors in them read `<built-in>/configs/h200.yaml:3:5`.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hloc {

inline constexpr std::string_view kBuiltinDir = "<built-in>";

struct BuiltinFile {
  std::string_view path;  // relative to the source tree: "configs/h200.yaml"
  std::string_view text;
};

// Every built-in file (defined in the generated builtin_data.cc).
std::span<const BuiltinFile> BuiltinFiles();

// "<built-in>/configs" -> true (also with a trailing '/' or "./" and ".." parts).
bool IsBuiltinPath(std::string_view path);
// The text of "<built-in>/configs/h200.yaml", or nullopt when there is no such built-in file.
std::optional<std::string_view> FindBuiltinFile(std::string_view path);
// Whether "<built-in>/configs" holds any built-in file.
bool IsBuiltinDir(std::string_view path);
// The stems of the .yaml files directly in a built-in folder ("<built-in>/configs" -> a100, cpu, ...).
std::vector<std::string> BuiltinYamlNamesIn(std::string_view dir);

}  // namespace hloc
