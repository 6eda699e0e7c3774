// libFuzzer target: `.hlox` loading (runtime/executable/serialize.cc; issue 17).
//
// Each section of a `.hlox` ends with a CRC-32, which random mutations almost never keep
// right. The input is deserialized as it is (the checksums must catch corruption), and again
// with every section's checksum recomputed, so that the decoding behind the checksums is
// fuzzed too. What deserializes must validate, print (thunk_sequence.txt) and serialize back to
// bytes that deserialize and serialize to the same bytes. Errors are fine; a crash, a sanitizer
// report or a round-trip difference is a finding.
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz_util.h"
#include "runtime/executable/executable.h"

namespace {

using hloc::runtime::Executable;

// "HLOX" | u32 version | (u32 tag | u64 length | payload | u32 CRC-32 of tag, length, payload)...
std::string WithChecksumsFixed(std::string bytes) {
  size_t at = 8;
  while (at + 12 <= bytes.size()) {
    uint64_t length;
    std::memcpy(&length, bytes.data() + at + 4, 8);
    if (length > bytes.size() || at + 12 + length + 4 > bytes.size()) break;
    const uint32_t crc = static_cast<uint32_t>(
        crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(bytes.data() + at), 12 + length));
    std::memcpy(bytes.data() + at + 12 + length, &crc, 4);
    at += 16 + length;
  }
  return bytes;
}

void Check(const std::string& bytes) {
  auto exe = Executable::Deserialize(bytes, "<fuzz>.hlox");
  if (!exe.ok()) return;
  if (absl::Status s = hloc::runtime::ValidateExecutable(*exe, "<fuzz>.hlox"); !s.ok()) {
    hloc_fuzz::Fail("Deserialize accepted an executable that ValidateExecutable refuses: " + std::string(s.message()));
  }
  (void)hloc::runtime::ExecutableThunksToString(*exe);
  const std::string once = exe->Serialize();
  auto again = Executable::Deserialize(once, "<reserialized>.hlox");
  if (!again.ok()) {
    hloc_fuzz::Fail("a deserialized executable serializes to bytes that do not deserialize: " +
                    std::string(again.status().message()));
  }
  const std::string twice = again->Serialize();
  if (twice != once) hloc_fuzz::Fail("serialize(deserialize(serialize(x))) != serialize(x)");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  Check(bytes);
  const std::string fixed = WithChecksumsFixed(bytes);
  if (fixed != bytes) Check(fixed);
  return 0;
}
