// A main for the fuzz targets in the regular build (no libFuzzer runtime): runs
// LLVMFuzzerTestOneInput once on every file named on the command line, and on every file under
// each folder named there (the kept corpus and regressions: tests/fuzz/{corpus,regressions}/T/).
// A crash or a finding aborts like under libFuzzer; otherwise it prints how many inputs ran.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::string> files;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-v") {
      verbose = true;
      continue;
    }
    if (!arg.empty() && arg[0] == '-') continue;  // libFuzzer flags (-runs=N, ...) are ignored
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::recursive_directory_iterator(arg)) {
        const std::string name = e.path().filename().string();
        if (!e.is_regular_file() || name[0] == '.' || name == "README.md") continue;  // notes, not inputs
        in_dir.push_back(e.path().string());
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      files.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder: %s\n", argv[0], arg.c_str());
      return 2;
    }
  }
  for (const std::string& path : files) {
    if (verbose) std::fprintf(stderr, "running %s\n", path.c_str());
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::printf("%s: %zu inputs ran\n", argv[0], files.size());
  return 0;
}
