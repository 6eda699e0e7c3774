// Minimal zip archive reading and writing, enough for numpy's .npz files: stored and deflated
// members, zip64 sizes and offsets (numpy's savez always writes zip64 local headers), CRC-32
// checked. Multi-disk archives and encryption are refused.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc {

struct ZipMember {
  std::string name;
  std::string data;  // uncompressed bytes
};

// Reads every member of the archive held in `bytes`, in central-directory order. `where`
// (usually the file name) starts every error message. Sizes and offsets are checked against
// the archive before anything is allocated, so a corrupt archive cannot cause a huge allocation.
absl::StatusOr<std::vector<ZipMember>> ReadZip(const std::string& bytes, const std::string& where);

// An archive of stored (uncompressed) members, with zip64 records only where a size, an offset
// or the member count needs them. Readable by Python's zipfile and numpy.load.
absl::StatusOr<std::string> WriteZip(const std::vector<std::pair<std::string, std::string>>& members);

}  // namespace hloc
