// libFuzzer target: .npy and .npz reading (src/io/npy.cc, src/io/zip.cc; issue 17).
//
// The input is read as a .npy file and as an .npz archive (hloc reads both from --inputs and
// --expect); each array read is then reinterpreted as its own shape and as f32 / bf16 arrays of
// its dimensions, as `hloc run --inputs` does against the parameters. Errors are fine; a crash,
// a sanitizer report or an allocation beyond libFuzzer's limit is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/npy.h"
#include "ir/shape.h"

namespace {

void Use(const hloc::NpyArray& array) {
  const hloc::Shape& shape = array.literal.shape();
  (void)hloc::ReinterpretAs(array, shape);
  if (!shape.IsArray()) return;
  for (hloc::PrimitiveType type : {hloc::PrimitiveType::F32, hloc::PrimitiveType::BF16, hloc::PrimitiveType::PRED}) {
    hloc::Shape other = shape;
    other.set_element_type(type);
    (void)hloc::ReinterpretAs(array, other);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  if (auto array = hloc::ParseNpy(bytes, "<fuzz>.npy"); array.ok()) Use(*array);
  if (auto arrays = hloc::ParseNpz(bytes, "<fuzz>.npz"); arrays.ok()) {
    for (const hloc::NpyArray& array : *arrays) Use(array);
  }
  return 0;
}
