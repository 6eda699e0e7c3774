// convert-mover (XLA's ConvertMover): moves converts across ops that only move data
// (concatenate, pad, reshape, slice, transpose), where convert(op(x)) == op(convert(x)):
//
//   op(convert_wide(x))  =>  convert_wide(op(x))      widening converts sink
//   convert_narrow(op(x))  =>  op(convert_narrow(x))  narrowing converts rise
//
// so the data-movement op works on the narrower type and converts can meet and cancel.
// Constant operands are converted along, but only when the narrower type holds them exactly.
#pragma once
#include "engine/pass.h"

namespace hloc {

class ConvertMover : public HloPass {
 public:
  static constexpr const char* kName = "convert-mover";
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;
};

}  // namespace hloc
