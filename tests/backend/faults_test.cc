// Faults that lose nothing (issue 17, part 4), the parts a CPU machine can check: the autotune
// cache reader refuses a damaged file as a whole (empty, truncated, garbage, another version, a
// flipped byte) with a message naming the file and the problem, and the next save rebuilds it
// through WriteFileAtomically; a failed write leaves the destination as it was and no temporary;
// HLOC_GPU_MEMORY_LIMIT's values. The GPU parts are tests/gpu/faults/run.sh.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"

#include "codegen/gpu/gpu_compiler.h"
#include "ir/hlo_parser.h"
#include "runtime/gpu/autotune_cache.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/gpu_executable.h"
#include "support/file_io.h"

namespace hloc::runtime::gpu {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void Spill(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// A fresh folder for one test case, removed at the end.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() / ("hloc_faults_" + tag + "_" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  // Every name in the folder (to check no temporary is left).
  std::vector<std::string> Names() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

std::string ValidCacheText() {
  AutotuneCache c;
  c.Insert("h200|NVIDIA H200|cublasLt-130100|f32,f32,f32,128x256x64", {std::string(128, 'a'), 12.5});
  c.Insert("h200|NVIDIA H200|cudnn-91000|conv fwd f32", {"7", 40.25});
  c.Insert("h200|NVIDIA H200|cublasLt-130100|bf16,bf16,f32,64x64x64", {std::string(128, 'b'), 3});
  return c.ToText();
}

// Loads `text` written as a cache file: the status, and how many entries the cache then holds.
std::pair<absl::Status, size_t> LoadText(const TempDir& dir, const std::string& text) {
  const fs::path file = dir.path / "autotune.txt";
  Spill(file, text);
  AutotuneCache c;
  absl::Status s = c.Load(file.string());
  if (!s.ok()) CHECK(c.dirty());  // a damaged file is rebuilt by the next save
  return {s, c.size()};
}

void ExpectRefused(const TempDir& dir, const std::string& text, const std::string& problem) {
  auto [s, size] = LoadText(dir, text);
  INFO("status: " << s.ToString());
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(s.message().find((dir.path / "autotune.txt").string()) != std::string::npos);
  CHECK(s.message().find(problem) != std::string::npos);
  CHECK(s.message().find("ignoring it") != std::string::npos);
  CHECK(size == 0);
}

TEST_CASE("faults: a whole autotune cache loads", "[faults]") {
  TempDir dir("cache_ok");
  auto [s, size] = LoadText(dir, ValidCacheText());
  CHECK(s.ok());
  CHECK(size == 3);
  // A cache with no entries is valid too.
  auto [s0, size0] = LoadText(dir, AutotuneCache().ToText());
  CHECK(s0.ok());
  CHECK(size0 == 0);
  // A missing file is an empty cache, not a problem.
  AutotuneCache missing;
  CHECK(missing.Load((dir.path / "none.txt").string()).ok());
  CHECK(!missing.dirty());
}

TEST_CASE("faults: an empty autotune cache is ignored with a warning", "[faults]") {
  TempDir dir("cache_empty");
  ExpectRefused(dir, "", "the file is empty");
}

TEST_CASE("faults: a truncated autotune cache is ignored, at every length", "[faults]") {
  TempDir dir("cache_truncated");
  const std::string text = ValidCacheText();
  for (size_t n = 1; n < text.size(); ++n) {
    INFO("truncated to " << n << " of " << text.size() << " bytes");
    auto [s, size] = LoadText(dir, text.substr(0, n));
    CHECK(!s.ok());
    CHECK(size == 0);
  }
  ExpectRefused(dir, text.substr(0, text.size() - 1), "truncated: the last line is incomplete");
  // Cut at a line boundary: the end line is missing.
  ExpectRefused(dir, text.substr(0, text.rfind("hloc-autotune-end")), "no end line");
}

TEST_CASE("faults: a garbage autotune cache is ignored", "[faults]") {
  TempDir dir("cache_garbage");
  std::string garbage;
  for (int i = 0; i < 4096; ++i) garbage.push_back(static_cast<char>((i * 7919 + 13) % 256));
  auto [s, size] = LoadText(dir, garbage);
  CHECK(s.code() == absl::StatusCode::kDataLoss);
  CHECK(size == 0);
  ExpectRefused(dir, "this is not a cache\n", "no end line");
  // A line that is not an entry, in an otherwise well-formed file.
  std::string text = ValidCacheText();
  text.insert(text.find('\n') + 1, "hloc-autotune-v1\tbroken line\n");
  ExpectRefused(dir, text, "line 2 is not an entry");
  // Every single flipped byte is caught (by the line checks or the checksum).
  const std::string valid = ValidCacheText();
  for (size_t i = 0; i < valid.size(); ++i) {
    std::string flipped = valid;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x04);
    INFO("byte " << i << " flipped");
    auto [fs, fsize] = LoadText(dir, flipped);
    CHECK(!fs.ok());
    CHECK(fsize == 0);
  }
}

TEST_CASE("faults: an autotune cache of another version is ignored", "[faults]") {
  TempDir dir("cache_version");
  std::string text = ValidCacheText();
  for (size_t at = text.find("hloc-autotune-v1"); at != std::string::npos; at = text.find("hloc-autotune-v1", at))
    text.replace(at, 16, "hloc-autotune-v9");
  ExpectRefused(dir, text, "format version 'hloc-autotune-v9', this hloc reads 'hloc-autotune-v1'");
  // A file of the format before the end line was added (no end line): rebuilt once.
  ExpectRefused(dir, "hloc-autotune-v1\tk\t00ff\t1.000\n", "no end line");
}

TEST_CASE("faults: a damaged autotune cache is rebuilt whole by the next save", "[faults]") {
  TempDir dir("cache_rebuild");
  const fs::path file = dir.path / "autotune.txt";
  Spill(file, "garbage\x01\x02");
  AutotuneCache c;
  CHECK(!c.Load(file.string()).ok());
  c.Insert("k", {"00ff", 1.5});
  REQUIRE(c.Save(file.string()).ok());
  CHECK(!c.dirty());
  AutotuneCache d;
  CHECK(d.Load(file.string()).ok());
  CHECK(d.size() == 1);
  // Nothing new was autotuned: the damaged file is still replaced by a whole (empty) cache.
  Spill(file, "garbage");
  AutotuneCache e;
  CHECK(!e.Load(file.string()).ok());
  REQUIRE(e.Save(file.string()).ok());
  AutotuneCache f;
  CHECK(f.Load(file.string()).ok());
  CHECK(dir.Names() == std::vector<std::string>{"autotune.txt"});  // no temporary left
}

TEST_CASE("faults: a cache that cannot be saved leaves the old file and no temporary", "[faults]") {
  TempDir dir("cache_save_fails");
  // The folder is a file: nothing can be created under it (root ignores permissions, not this).
  Spill(dir.path / "file", "x");
  AutotuneCache c;
  c.Insert("k", {"00ff", 1.5});
  absl::Status s = c.Save((dir.path / "file" / "autotune.txt").string());
  CHECK(!s.ok());
  CHECK(s.message().find("cannot save the autotune cache") != std::string::npos);
  CHECK(s.message().find("file/autotune.txt") != std::string::npos);
  CHECK(c.dirty());  // still to be saved
  CHECK(dir.Names() == std::vector<std::string>{"file"});
}

TEST_CASE("faults: WriteFileAtomically fails cleanly and keeps the previous file", "[faults]") {
  TempDir dir("atomic");
  const fs::path out = dir.path / "out.txt";
  REQUIRE(WriteFileAtomically(out.string(), "previous\n").ok());
  // Under a regular file, and in /proc: errors that name the path.
  absl::Status s = WriteFileAtomically((out / "x").string(), "new");
  CHECK(!s.ok());
  CHECK(s.message().find("out.txt/x") != std::string::npos);
  s = WriteFileAtomically("/proc/hloc_no_such_dir/x", "new");
  CHECK(!s.ok());
  CHECK(s.message().find("/proc/hloc_no_such_dir/x") != std::string::npos);
  CHECK(Slurp(out) == "previous\n");
  REQUIRE(WriteFileAtomically(out.string(), "new\n").ok());
  CHECK(Slurp(out) == "new\n");
  CHECK(dir.Names() == std::vector<std::string>{"out.txt"});
}

TEST_CASE("faults: HLOC_GPU_MEMORY_LIMIT values", "[faults]") {
  auto bytes = [](const std::string& t) {
    absl::StatusOr<GpuMemoryLimit> l = ParseGpuMemoryLimit(t);
    return l.ok() ? static_cast<int64_t>(l->bytes) : int64_t{-1};
  };
  CHECK(bytes("1048576") == 1048576);
  CHECK(bytes("512M") == int64_t{512} << 20);
  CHECK(bytes("512MiB") == int64_t{512} << 20);
  CHECK(bytes("2G") == int64_t{2} << 30);
  CHECK(bytes("2gb") == int64_t{2} << 30);
  CHECK(bytes("1.5G") == int64_t{3} << 29);
  CHECK(bytes("64k") == 65536);
  absl::StatusOr<GpuMemoryLimit> f = ParseGpuMemoryLimit("0.25");
  REQUIRE(f.ok());
  CHECK(f->fraction == Approx(0.25));
  CHECK(f->bytes == 0);
  for (const char* bad : {"", "abc", "-1", "0", "12X", "1.5.5G", "G", "2GG"}) {
    INFO("value '" << bad << "'");
    absl::StatusOr<GpuMemoryLimit> l = ParseGpuMemoryLimit(bad);
    REQUIRE(!l.ok());
    CHECK(l.status().message().find("HLOC_GPU_MEMORY_LIMIT") != std::string::npos);
  }
}

// An executable for the h200 profile of `elements` f32 values: out = p + 1 (input and output
// each elements * 4 bytes on the device).
absl::StatusOr<Executable> AddOne(int64_t elements) {
  const std::string text = absl::StrCat("HloModule add_one_", elements, "\n\nENTRY %e (p: f32[", elements, "]) -> f32[",
                                        elements, "] {\n  %p = f32[", elements, "]{0} parameter(0)\n  %one = f32[] constant(1)\n",
                                        "  %b = f32[", elements, "]{0} broadcast(%one), dimensions={}\n  ROOT %a = f32[",
                                        elements, "]{0} add(%p, %b)\n}\n");
  auto module = ParseHloModule(text, "add_one");
  if (!module.ok()) return module.status();
  codegen::gpu::GpuCompileOptions options;
  absl::Status loaded = codegen::gpu::LoadGpuProfileAndPipeline(
      "h200", {std::string(HLOC_SOURCE_DIR) + "/configs"}, {std::string(HLOC_SOURCE_DIR) + "/pipelines"}, options);
  if (!loaded.ok()) return loaded;
  return codegen::gpu::GpuCompiler::Compile(**module, options);
}

// On the GPU machine, under HLOC_GPU_MEMORY_LIMIT (tests/gpu/faults/run.sh sets 64M): loading an
// executable that needs more fails with ResourceExhausted naming the bytes asked and free, gives
// back everything it took, and the same process then loads and runs a smaller one (twice, so a
// leak would show). Skipped without a GPU or without the variable.
TEST_CASE("faults: out of GPU memory, then a smaller run in the same process", "[faults][gpu]") {
  if (absl::Status avail = GpuRuntimeAvailable(); !avail.ok()) {
    WARN("SKIPPED (no GPU): " << avail.message());
    return;
  }
  if (GpuMemoryLimitNote().empty()) {
    WARN("SKIPPED: set HLOC_GPU_MEMORY_LIMIT=64M (tests/gpu/faults/run.sh does) to run this case");
    return;
  }
  absl::StatusOr<Executable> big = AddOne(int64_t{64} << 20);  // 256 MiB in, 256 MiB out
  absl::StatusOr<Executable> small = AddOne(1000);
  REQUIRE(big.ok());
  REQUIRE(small.ok());
  for (int round = 0; round < 2; ++round) {
    INFO("round " << round);
    absl::StatusOr<std::unique_ptr<GpuExecutable>> failed = GpuExecutable::Load(*big, {});
    REQUIRE(!failed.ok());
    INFO("error: " << failed.status().message());
    CHECK(failed.status().code() == absl::StatusCode::kResourceExhausted);
    CHECK(failed.status().message().find("cannot allocate") != std::string::npos);
    CHECK(failed.status().message().find("bytes) asked") != std::string::npos);
    CHECK(failed.status().message().find("free on the device") != std::string::npos);
    CHECK(failed.status().message().find("HLOC_GPU_MEMORY_LIMIT") != std::string::npos);
    absl::StatusOr<std::unique_ptr<GpuExecutable>> ok = GpuExecutable::Load(*small, {});
    REQUIRE(ok.ok());
    HostBuffer in;
    in.shape = small->parameter_shapes[0];
    in.data.resize(static_cast<size_t>(in.shape.byte_size()));
    std::vector<float> values(1000);
    for (int i = 0; i < 1000; ++i) values[i] = static_cast<float>(i);
    std::memcpy(in.data.data(), values.data(), in.data.size());
    absl::StatusOr<std::vector<HostBuffer>> out = (*ok)->Run({in});
    REQUIRE(out.ok());
    REQUIRE(out->size() == 1);
    std::vector<float> result(1000);
    std::memcpy(result.data(), (*out)[0].data.data(), 4000);
    CHECK(result[0] == 1.0f);
    CHECK(result[999] == 1000.0f);
  }
}

}  // namespace
}  // namespace hloc::runtime::gpu
