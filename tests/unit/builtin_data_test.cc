// The profiles and pipelines built into hloc (src/engine/builtin_data.h) are the source tree's
// configs/*.yaml and pipelines/*.yaml, byte for byte, and load through the ordinary file paths.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>
#include "engine/builtin_data.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

std::string ReadSource(const std::string& rel) {
  std::ifstream in(fs::path(HLOC_SOURCE_DIR) / rel, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("built-in files are configs/*.yaml and pipelines/*.yaml as they are", "[builtin]") {
  std::set<std::string> source;
  for (const char* folder : {"configs", "pipelines"}) {
    for (const auto& e : fs::directory_iterator(fs::path(HLOC_SOURCE_DIR) / folder))
      if (e.path().extension() == ".yaml") source.insert(std::string(folder) + "/" + e.path().filename().string());
  }
  std::set<std::string> built_in;
  for (const BuiltinFile& f : BuiltinFiles()) {
    built_in.insert(std::string(f.path));
    INFO(f.path);
    CHECK(std::string(f.text) == ReadSource(std::string(f.path)));
  }
  CHECK(built_in == source);
}

TEST_CASE("built-in paths", "[builtin]") {
  CHECK(IsBuiltinPath("<built-in>/configs"));
  CHECK(IsBuiltinPath("<built-in>/configs/../pipelines/gpu.yaml"));
  CHECK_FALSE(IsBuiltinPath("configs/h200.yaml"));
  CHECK_FALSE(IsBuiltinPath("<built-in>x/configs"));
  CHECK(FindBuiltinFile("<built-in>/configs/../pipelines/gpu.yaml").has_value());
  CHECK_FALSE(FindBuiltinFile("<built-in>/configs/h201.yaml").has_value());
  CHECK(IsBuiltinDir("<built-in>/configs"));
  CHECK_FALSE(IsBuiltinDir("<built-in>/rules"));
  std::vector<std::string> names = BuiltinYamlNamesIn("<built-in>/pipelines/");
  CHECK(std::set<std::string>(names.begin(), names.end()) == std::set<std::string>{"cpu", "gpu"});
}

TEST_CASE("profiles and pipelines load from <built-in>", "[builtin]") {
  absl::StatusOr<std::string> path = FindProfileFile("h200", {"/nonexistent/configs", "<built-in>/configs"});
  REQUIRE(path.ok());
  CHECK(*path == "<built-in>/configs/h200.yaml");
  absl::StatusOr<Profile> profile = LoadProfileFile(*path);
  REQUIRE(profile.ok());
  absl::StatusOr<std::string> pipeline =
      FindPipelineFile(profile->hardware.pipeline, {"<built-in>/pipelines"}, profile->source);
  REQUIRE(pipeline.ok());
  CHECK(*pipeline == "<built-in>/pipelines/gpu.yaml");
  absl::StatusOr<Pipeline> p = LoadPipelineFile(*pipeline);
  REQUIRE(p.ok());
  CHECK(ApplyPatches(*profile, *p).ok());
  // Errors in a built-in file are located in it.
  absl::StatusOr<Pipeline> wrong = LoadPipelineFile("<built-in>/configs/h200.yaml");
  REQUIRE_FALSE(wrong.ok());
  CHECK(std::string(wrong.status().message()).rfind("<built-in>/configs/h200.yaml:", 0) == 0);
  CHECK(FindProfileFile("h20", {"<built-in>/configs"}).status().message().find("did you mean 'h200'?") !=
        std::string_view::npos);
}

}  // namespace
}  // namespace hloc
