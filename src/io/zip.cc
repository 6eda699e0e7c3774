#include "io/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralHeaderSig = 0x02014b50;
constexpr uint32_t kEndOfCentralDirSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndSize = 22;
constexpr size_t kZip64EndSize = 56;
constexpr size_t kZip64LocatorSize = 20;
constexpr uint32_t k32Saturated = 0xFFFFFFFFu;
constexpr uint16_t k16Saturated = 0xFFFFu;
// Deflate cannot expand data by more than about 1032:1; a larger claimed ratio is a corrupt
// or hostile size field, and refusing it bounds what we allocate by the file's own size.
constexpr uint64_t kMaxDeflateRatio = 1032;

// Little-endian field readers over a byte string; callers check bounds first.
uint16_t Get16(std::string_view b, size_t at) {
  return static_cast<uint16_t>(static_cast<uint8_t>(b[at]) | static_cast<uint8_t>(b[at + 1]) << 8);
}
uint32_t Get32(std::string_view b, size_t at) {
  return static_cast<uint32_t>(Get16(b, at)) | static_cast<uint32_t>(Get16(b, at + 2)) << 16;
}
uint64_t Get64(std::string_view b, size_t at) {
  return static_cast<uint64_t>(Get32(b, at)) | static_cast<uint64_t>(Get32(b, at + 4)) << 32;
}

void Put16(std::string& b, uint16_t v) {
  b.push_back(static_cast<char>(v & 0xFF));
  b.push_back(static_cast<char>(v >> 8));
}
void Put32(std::string& b, uint32_t v) {
  Put16(b, static_cast<uint16_t>(v & 0xFFFF));
  Put16(b, static_cast<uint16_t>(v >> 16));
}
void Put64(std::string& b, uint64_t v) {
  Put32(b, static_cast<uint32_t>(v & k32Saturated));
  Put32(b, static_cast<uint32_t>(v >> 32));
}

// True when [offset, offset + length) lies within a buffer of `size` bytes (overflow-safe).
bool InRange(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

uint32_t Crc32(const char* data, size_t size) {
  return static_cast<uint32_t>(
      crc32_z(crc32_z(0L, Z_NULL, 0), reinterpret_cast<const Bytef*>(data), size));
}

// Where the central directory is, from the end-of-central-directory record (zip64 if used).
struct Directory {
  uint64_t entries = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t end = 0;  // where the records after the central directory start
};

absl::StatusOr<Directory> FindDirectory(std::string_view b, const std::string& where) {
  if (b.size() < kEndSize) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a zip archive (", b.size(), " bytes, too short)"));
  }
  // The end record sits at the very end, followed only by an archive comment of <= 65535 bytes.
  size_t lowest = b.size() - kEndSize >= 65535 ? b.size() - kEndSize - 65535 : 0;
  size_t pos = b.size() - kEndSize;
  bool found = false;
  for (;; --pos) {
    if (Get32(b, pos) == kEndOfCentralDirSig && pos + kEndSize + Get16(b, pos + 20) == b.size()) {
      found = true;
      break;
    }
    if (pos == lowest) break;
  }
  if (!found) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": not a zip archive (no end-of-central-directory record)"));
  }
  Directory d;
  uint16_t disk = Get16(b, pos + 4), cd_disk = Get16(b, pos + 6);
  uint16_t disk_entries = Get16(b, pos + 8);
  d.entries = Get16(b, pos + 10);
  d.size = Get32(b, pos + 12);
  d.offset = Get32(b, pos + 16);
  d.end = pos;
  bool multi_disk = false;
  bool zip64 = d.entries == k16Saturated || d.size == k32Saturated || d.offset == k32Saturated;
  if (zip64 || (pos >= kZip64LocatorSize && Get32(b, pos - kZip64LocatorSize) == kZip64LocatorSig)) {
    if (pos < kZip64LocatorSize || Get32(b, pos - kZip64LocatorSize) != kZip64LocatorSig) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": zip64 archive without its zip64 end-of-directory locator"));
    }
    size_t loc = pos - kZip64LocatorSize;
    uint64_t rec = Get64(b, loc + 8);
    if (Get32(b, loc + 16) > 1) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": multi-disk zip archives are not supported"));
    }
    if (!InRange(rec, kZip64EndSize, loc) || Get32(b, rec) != kZip64EndSig) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": bad zip64 end-of-central-directory record offset ", rec));
    }
    uint64_t disk_entries64 = Get64(b, rec + 24);
    d.entries = Get64(b, rec + 32);
    d.size = Get64(b, rec + 40);
    d.offset = Get64(b, rec + 48);
    d.end = rec;
    multi_disk = Get32(b, rec + 16) != 0 || Get32(b, rec + 20) != 0 || disk_entries64 != d.entries;
  } else {
    multi_disk = disk != 0 || cd_disk != 0 || disk_entries != d.entries;
  }
  if (multi_disk) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": multi-disk zip archives are not supported"));
  }
  if (!InRange(d.offset, d.size, d.end)) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": central directory (offset ", d.offset, ", ", d.size,
                                                   " bytes) lies outside the archive"));
  }
  if (d.entries > d.size / kCentralHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": central directory claims ", d.entries,
                                                   " entries in only ", d.size, " bytes"));
  }
  return d;
}

}  // namespace

absl::StatusOr<std::vector<ZipEntry>> ListZip(std::string_view b, const std::string& where) {
  auto dir_or = FindDirectory(b, where);
  if (!dir_or.ok()) return dir_or.status();
  const Directory& dir = *dir_or;
  std::vector<ZipEntry> entries;
  absl::flat_hash_set<std::string> seen;
  uint64_t at = dir.offset;
  const uint64_t cd_end = dir.offset + dir.size;
  for (uint64_t i = 0; i < dir.entries; ++i) {
    if (!InRange(at, kCentralHeaderSize, cd_end) || Get32(b, at) != kCentralHeaderSig) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": bad central directory entry ", i, " at offset ", at));
    }
    uint16_t flags = Get16(b, at + 8), method = Get16(b, at + 10);
    uint32_t crc = Get32(b, at + 16);
    uint64_t csize = Get32(b, at + 20), usize = Get32(b, at + 24);
    uint16_t name_len = Get16(b, at + 28), extra_len = Get16(b, at + 30), comment_len = Get16(b, at + 32);
    uint64_t disk_start = Get16(b, at + 34);
    uint64_t local = Get32(b, at + 42);
    uint64_t var_len = uint64_t{name_len} + extra_len + comment_len;
    if (!InRange(at + kCentralHeaderSize, var_len, cd_end)) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": central directory entry ", i, " runs past the directory"));
    }
    std::string name(b.substr(at + kCentralHeaderSize, name_len));
    std::string what = absl::StrCat(where, ": member '", name, "'");
    // Zip64 extra field: the 64-bit values of saturated fields, in this fixed order.
    uint64_t e = at + kCentralHeaderSize + name_len, e_end = e + extra_len;
    while (e + 4 <= e_end) {
      uint16_t id = Get16(b, e), len = Get16(b, e + 2);
      if (e + 4 + len > e_end) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": extra field runs past its entry"));
      }
      if (id == kZip64ExtraId) {
        uint64_t f = e + 4, f_end = f + len;
        auto take = [&](uint64_t& field) -> bool {
          if (f + 8 > f_end) return false;
          field = Get64(b, f);
          f += 8;
          return true;
        };
        bool ok = (usize != k32Saturated || take(usize)) && (csize != k32Saturated || take(csize)) &&
                  (local != k32Saturated || take(local));
        if (ok && disk_start == k16Saturated) {
          if (f + 4 > f_end) ok = false; else disk_start = Get32(b, f);
        }
        if (!ok) return absl::InvalidArgumentError(absl::StrCat(what, ": zip64 extra field is too short"));
      }
      e += 4 + len;
    }
    if (usize == k32Saturated || csize == k32Saturated || local == k32Saturated) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": saturated size without a zip64 extra field"));
    }
    if (disk_start != 0) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": multi-disk zip archives are not supported"));
    }
    if (flags & 1) return absl::InvalidArgumentError(absl::StrCat(what, ": encrypted members are not supported"));
    if (!seen.insert(name).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": member '", name, "' appears twice"));
    }
    // The local header repeats the name and has its own extra field; the data follows it.
    if (!InRange(local, kLocalHeaderSize, dir.offset) || Get32(b, local) != kLocalHeaderSig) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": bad local header offset ", local));
    }
    uint64_t data = local + kLocalHeaderSize + Get16(b, local + 26) + Get16(b, local + 28);
    if (!InRange(data, csize, dir.offset)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": data (", csize, " bytes at offset ", data,
                                                     ") lies outside the archive"));
    }
    if (method == 0 && csize != usize) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": stored member with compressed size ", csize,
                                                     " != uncompressed size ", usize));
    }
    if (method == 8 && usize > csize * kMaxDeflateRatio + 1024) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": declared size ", usize,
                                                     " is impossible for ", csize, " deflated bytes"));
    }
    if (method != 0 && method != 8) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": compression method ", method, " is not supported (only stored and deflate)"));
    }
    entries.push_back({std::move(name), method, crc, csize, usize, data});
    at += kCentralHeaderSize + var_len;
  }
  return entries;
}

// ---- reading one member ------------------------------------------------------------------------

ZipMemberReader::ZipMemberReader(std::string_view archive, const ZipEntry& entry, std::string what)
    : in_(archive.substr(entry.data_offset, entry.compressed_size)), entry_(entry), what_(std::move(what)) {
  if (entry_.method == 8) {
    zs_ = std::make_unique<z_stream>();
    std::memset(zs_.get(), 0, sizeof(z_stream));
    if (inflateInit2(zs_.get(), -MAX_WBITS) != Z_OK) zs_.reset();
  }
}

ZipMemberReader::~ZipMemberReader() {
  if (zs_) inflateEnd(zs_.get());
}

absl::Status ZipMemberReader::Read(char* out, uint64_t n) {
  if (n > remaining()) {
    return absl::InternalError(absl::StrCat(what_, ": read of ", n, " bytes past the member's declared size"));
  }
  if (entry_.method == 0) {
    // A stored member's bytes are all here: check them before any is used, so that damage is
    // reported as such rather than as whatever the damaged bytes parse as.
    if (absl::Status s = CheckStoredCrc(); !s.ok()) return s;
    if (n > 0) std::memcpy(out, in_.data() + read_, n);  // `out` may be null when n is 0
  } else {
    if (absl::Status s = Inflate(out, n); !s.ok()) return s;
    crc_ = static_cast<uint32_t>(crc32_z(crc_, reinterpret_cast<const Bytef*>(out), n));
  }
  read_ += n;
  return absl::OkStatus();
}

// Inflates exactly `n` more bytes into `out`, feeding the compressed bytes in chunks (z_stream
// counts are 32-bit). The stream ending early or failing is an error naming the member.
absl::Status ZipMemberReader::Inflate(char* out, uint64_t n) {
  if (!zs_) return absl::InternalError(absl::StrCat(what_, ": zlib inflateInit2 failed"));
  constexpr uint64_t kChunk = uint64_t{1} << 30;
  uint64_t produced = 0;
  while (produced < n) {
    if (ended_) {
      return absl::InvalidArgumentError(absl::StrCat(what_, ": deflate stream gives ", zs_->total_out,
                                                     " bytes but the directory declares ", entry_.size));
    }
    FeedInput();
    const uint64_t want = std::min(kChunk, n - produced);
    zs_->next_out = reinterpret_cast<Bytef*>(out + produced);
    zs_->avail_out = static_cast<uInt>(want);
    // Z_BLOCK: stop at block boundaries, so nothing past the bytes asked for is decoded (not
    // even the next block's header).
    const int rc = inflate(zs_.get(), Z_BLOCK);
    produced += want - zs_->avail_out;
    if (rc == Z_STREAM_END) {
      ended_ = true;
    } else if (rc == Z_BUF_ERROR && zs_->avail_in == 0 && in_given_ == in_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(what_, ": deflate stream is truncated"));
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = zs_->msg ? zs_->msg : absl::StrCat("zlib error ", rc);
      return absl::InvalidArgumentError(absl::StrCat(what_, ": bad deflate stream (", msg, ")"));
    }
  }
  return absl::OkStatus();
}

void ZipMemberReader::FeedInput() {
  constexpr uint64_t kChunk = uint64_t{1} << 30;
  if (zs_->avail_in != 0 || in_given_ == in_.size()) return;
  const uint64_t n = std::min(kChunk, in_.size() - in_given_);
  zs_->next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data() + in_given_));
  zs_->avail_in = static_cast<uInt>(n);
  in_given_ += n;
}

absl::Status ZipMemberReader::Finish() {
  if (remaining() != 0) {
    return absl::InternalError(absl::StrCat(what_, ": ", remaining(), " declared bytes were not read"));
  }
  // A deflate stream must end exactly at the declared size: one more byte is refused unread.
  while (entry_.method == 8 && !ended_) {
    if (!zs_) return absl::InternalError(absl::StrCat(what_, ": zlib inflateInit2 failed"));
    char extra;
    FeedInput();
    zs_->next_out = reinterpret_cast<Bytef*>(&extra);
    zs_->avail_out = 1;
    const int rc = inflate(zs_.get(), Z_NO_FLUSH);
    if (zs_->avail_out == 0) {
      return absl::InvalidArgumentError(absl::StrCat(what_, ": deflate stream holds more than the ", entry_.size,
                                                     " bytes the directory declares"));
    }
    if (rc == Z_STREAM_END) {
      ended_ = true;
    } else if (rc == Z_BUF_ERROR && zs_->avail_in == 0 && in_given_ == in_.size()) {
      return absl::InvalidArgumentError(absl::StrCat(what_, ": deflate stream is truncated"));
    } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string msg = zs_->msg ? zs_->msg : absl::StrCat("zlib error ", rc);
      return absl::InvalidArgumentError(absl::StrCat(what_, ": bad deflate stream (", msg, ")"));
    }
  }
  if (entry_.method == 0) return CheckStoredCrc();
  if (crc_ != entry_.crc32) return CrcMismatch();
  return absl::OkStatus();
}

absl::Status ZipMemberReader::CheckStoredCrc() {
  if (!stored_crc_checked_ && Crc32(in_.data(), in_.size()) != entry_.crc32) return CrcMismatch();
  stored_crc_checked_ = true;
  return absl::OkStatus();
}

absl::Status ZipMemberReader::CrcMismatch() const {
  return absl::InvalidArgumentError(absl::StrCat(what_, ": CRC-32 mismatch (data is corrupt)"));
}

absl::StatusOr<std::string> ReadZipMember(std::string_view archive, const ZipEntry& entry, const std::string& what) {
  ZipMemberReader reader(archive, entry, what);
  std::string data(entry.size, '\0');
  if (absl::Status s = reader.Read(data.data(), data.size()); !s.ok()) return s;
  if (absl::Status s = reader.Finish(); !s.ok()) return s;
  return data;
}

absl::StatusOr<std::string> WriteZip(const std::vector<std::pair<std::string, std::string>>& members) {
  std::string out, central;
  // DOS date 1980-01-01 00:00, as numpy's savez writes (a fixed date keeps output reproducible).
  constexpr uint16_t kTime = 0, kDate = (0 << 9) | (1 << 5) | 1;
  for (const auto& [name, data] : members) {
    if (name.size() > 0xFFFF) return absl::InvalidArgumentError(absl::StrCat("zip member name too long: ", name));
    uint64_t offset = out.size(), size = data.size();
    uint32_t crc = Crc32(data.data(), data.size());
    bool big_size = size >= k32Saturated, big_offset = offset >= k32Saturated;
    uint16_t version = (big_size || big_offset) ? 45 : 20;
    // Local header; zip64 sizes go in its extra field when they do not fit.
    Put32(out, kLocalHeaderSig);
    Put16(out, version);
    Put16(out, 0);  // flags
    Put16(out, 0);  // stored
    Put16(out, kTime);
    Put16(out, kDate);
    Put32(out, crc);
    Put32(out, big_size ? k32Saturated : static_cast<uint32_t>(size));
    Put32(out, big_size ? k32Saturated : static_cast<uint32_t>(size));
    Put16(out, static_cast<uint16_t>(name.size()));
    Put16(out, big_size ? 20 : 0);
    out += name;
    if (big_size) {
      Put16(out, kZip64ExtraId);
      Put16(out, 16);
      Put64(out, size);
      Put64(out, size);
    }
    out += data;
    // Central directory entry.
    std::string extra;
    if (big_size || big_offset) {
      std::string fields;
      if (big_size) { Put64(fields, size); Put64(fields, size); }
      if (big_offset) Put64(fields, offset);
      Put16(extra, kZip64ExtraId);
      Put16(extra, static_cast<uint16_t>(fields.size()));
      extra += fields;
    }
    Put32(central, kCentralHeaderSig);
    Put16(central, (3 << 8) | version);  // made by: Unix
    Put16(central, version);
    Put16(central, 0);
    Put16(central, 0);
    Put16(central, kTime);
    Put16(central, kDate);
    Put32(central, crc);
    Put32(central, big_size ? k32Saturated : static_cast<uint32_t>(size));
    Put32(central, big_size ? k32Saturated : static_cast<uint32_t>(size));
    Put16(central, static_cast<uint16_t>(name.size()));
    Put16(central, static_cast<uint16_t>(extra.size()));
    Put16(central, 0);  // comment
    Put16(central, 0);  // disk
    Put16(central, 0);  // internal attributes
    Put32(central, 0600u << 16);  // external attributes: rw------- (as zipfile writes for savez)
    Put32(central, big_offset ? k32Saturated : static_cast<uint32_t>(offset));
    central += name;
    central += extra;
  }
  uint64_t cd_offset = out.size(), cd_size = central.size(), count = members.size();
  out += central;
  bool zip64 = count >= k16Saturated || cd_offset >= k32Saturated || cd_size >= k32Saturated;
  if (zip64) {
    uint64_t rec = out.size();
    Put32(out, kZip64EndSig);
    Put64(out, kZip64EndSize - 12);
    Put16(out, (3 << 8) | 45);
    Put16(out, 45);
    Put32(out, 0);
    Put32(out, 0);
    Put64(out, count);
    Put64(out, count);
    Put64(out, cd_size);
    Put64(out, cd_offset);
    Put32(out, kZip64LocatorSig);
    Put32(out, 0);
    Put64(out, rec);
    Put32(out, 1);
  }
  Put32(out, kEndOfCentralDirSig);
  Put16(out, 0);
  Put16(out, 0);
  Put16(out, zip64 ? k16Saturated : static_cast<uint16_t>(count));
  Put16(out, zip64 ? k16Saturated : static_cast<uint16_t>(count));
  Put32(out, zip64 ? k32Saturated : static_cast<uint32_t>(cd_size));
  Put32(out, zip64 ? k32Saturated : static_cast<uint32_t>(cd_offset));
  Put16(out, 0);
  return out;
}

}  // namespace hloc
