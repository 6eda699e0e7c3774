// Minimal zip archive reading and writing, enough for numpy's .npz files: stored and deflated
// members, zip64 sizes and offsets (numpy's savez always writes zip64 local headers), CRC-32
// checked. Multi-disk archives and encryption are refused.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

struct z_stream_s;

namespace hloc {

// One member as the central directory describes it.
struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 stored, 8 deflated
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t size = 0;         // uncompressed bytes, as declared (a reader checks the data against it)
  uint64_t data_offset = 0;  // where the member's (compressed) bytes start in the archive
};

// The members of the archive held in `bytes`, in central-directory order. `where` (usually the
// file name) starts every error message. Offsets and sizes are checked against the archive (a
// deflated member may not claim more than deflate can expand its bytes to); nothing is
// inflated or allocated by the members' sizes here.
absl::StatusOr<std::vector<ZipEntry>> ListZip(std::string_view bytes, const std::string& where);

// Reads one member's uncompressed bytes in order, inflating only as much as is asked for, so a
// caller that knows how many bytes it needs (a .npy header says) can refuse a member whose
// declared size disagrees before inflating it. `archive` must outlive the reader.
class ZipMemberReader {
 public:
  // `what` names the member in errors ("FILE: member 'arg0.npy'").
  ZipMemberReader(std::string_view archive, const ZipEntry& entry, std::string what);
  ~ZipMemberReader();
  ZipMemberReader(const ZipMemberReader&) = delete;
  ZipMemberReader& operator=(const ZipMemberReader&) = delete;

  uint64_t size() const { return entry_.size; }
  uint64_t remaining() const { return entry_.size - read_; }
  // The next `n` bytes (at most remaining()); an error if the data ends early or is corrupt.
  absl::Status Read(char* out, uint64_t n);
  // After every declared byte was read: the data ends exactly there and its CRC-32 matches.
  absl::Status Finish();

 private:
  absl::Status Inflate(char* out, uint64_t n);
  void FeedInput();
  absl::Status CheckStoredCrc();  // once, before a stored member's first byte is used
  absl::Status CrcMismatch() const;

  std::string_view in_;  // the member's stored or deflated bytes
  ZipEntry entry_;
  std::string what_;
  std::unique_ptr<z_stream_s> zs_;  // deflated members
  uint64_t in_given_ = 0;           // compressed bytes handed to zlib
  uint64_t read_ = 0;               // uncompressed bytes returned
  uint32_t crc_ = 0;                // of the bytes inflated so far (deflated members)
  bool ended_ = false;              // the deflate stream has ended
  bool stored_crc_checked_ = false;
};

// A whole member (its declared size, checked as the reader checks it).
absl::StatusOr<std::string> ReadZipMember(std::string_view archive, const ZipEntry& entry, const std::string& what);

// An archive of stored (uncompressed) members, with zip64 records only where a size, an offset
// or the member count needs them. Readable by Python's zipfile and numpy.load.
absl::StatusOr<std::string> WriteZip(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace hloc
