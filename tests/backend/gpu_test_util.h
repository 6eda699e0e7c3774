// Helpers the GPU compiler tests share: reading a test file, and assembling emitted PTX with the
// CUDA toolkit's ptxas where the machine has it (the development machine does; CI may not).
#pragma once
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"

namespace hloc::testing {

inline constexpr char kPtxas[] = "/usr/local/cuda/bin/ptxas";

inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline bool HavePtxas() {
  std::error_code ec;
  return std::filesystem::is_regular_file(kPtxas, ec);
}

// Assembles `ptx` for `arch` (e.g. "sm_90") into a temporary file named after `tag`: "" on
// success or when there is no ptxas (callers that must know check HavePtxas), else its message.
inline std::string AssemblePtx(const std::string& ptx, const std::string& arch, const std::string& tag) {
  if (!HavePtxas()) return "";
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "hloc_gpu_tests";
  fs::create_directories(dir);
  const std::string path = (dir / (tag + ".ptx")).string();
  {
    std::ofstream out(path);
    out << ptx;
  }
  const std::string cmd = absl::StrCat(kPtxas, " -arch=", arch, " ", path, " -o ", path, ".cubin 2>&1");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "cannot run ptxas";
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) output += buf;
  return pclose(p) == 0 ? "" : (output.empty() ? "ptxas failed" : output);
}

}  // namespace hloc::testing
