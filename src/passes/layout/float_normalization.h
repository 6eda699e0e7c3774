// float-normalization: XLA's FloatNormalization with the target's FloatSupport
// (GpuFloatSupport / the CPU's). An instruction that reads or writes the low-precision type
// (bf16 by default; f16 or an f8 type by option) and that the target cannot run in it gets
// its low-precision operands converted to the high-precision type (f32), runs there, and its
// result is converted back; the computations it applies (a reduce's reducer, a sort's
// comparator) are cloned in the high-precision type.
//
// What the target runs in low precision: data movement everywhere (XLA's list: broadcast,
// concatenate, copy, dynamic-(update-)slice, gather, pad, reshape, reverse, scatter, select,
// select-and-scatter, slice, transpose, bitcast, collectives); under a GPU profile with the
// capability (HasBf16 for bf16/f16, HasFp8 for f8) dot and convolution; on Hopper and later
// (compute capability >= 9) bf16 add, subtract and multiply. The option supported_ops
// replaces the arithmetic part of that list with the opcodes it names.
#pragma once
#include <string>
#include <vector>

#include "engine/pass.h"

namespace hloc {

class FloatNormalization : public HloPass {
 public:
  static constexpr const char* kName = "float-normalization";
  FloatNormalization(std::string low_precision_type, std::string high_precision_type,
                     std::vector<std::string> supported_ops)
      : low_(std::move(low_precision_type)), high_(std::move(high_precision_type)),
        supported_ops_(std::move(supported_ops)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  std::string low_, high_;
  std::vector<std::string> supported_ops_;
};

}  // namespace hloc
