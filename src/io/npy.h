// .npy and .npz files as numpy writes them (npz: zip, stored or deflated members).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"

namespace hloc {

// A named array as read from a file: its numpy dtype string ("<f4", "|b1", "<u2", ...) and a
// literal of the matching hloc type (u16 for bf16 bit patterns; see ReinterpretAs).
struct NpyArray {
  std::string name;   // member name without ".npy" (npz) or the file name (npy)
  std::string dtype;  // numpy descr
  Literal literal;
};

absl::StatusOr<NpyArray> ReadNpy(const std::string& path);
absl::StatusOr<NpyArray> ParseNpy(const std::string& bytes, const std::string& where);
absl::StatusOr<std::vector<NpyArray>> ReadNpz(const std::string& path);
// The arrays of an .npz held in `bytes`; `where` (the file name) starts every error message.
absl::StatusOr<std::vector<NpyArray>> ParseNpz(const std::string& bytes, const std::string& where);

// Bytes of a .npy file holding `literal` (arrays only).
absl::StatusOr<std::string> SerializeNpy(const Literal& literal);
// Writes a .npz (stored members) with the given arrays in order.
absl::Status WriteNpz(const std::string& path, const std::vector<std::pair<std::string, const Literal*>>& arrays);

// Reinterprets `array` as type `shape` expects: same element count and dims; bf16 from uint16
// bit patterns, same-width bit patterns otherwise; numeric widening (e.g. numpy bool -> pred)
// where the types agree in meaning. Errors say what did not fit.
absl::StatusOr<Literal> ReinterpretAs(const NpyArray& array, const Shape& shape);

}  // namespace hloc
