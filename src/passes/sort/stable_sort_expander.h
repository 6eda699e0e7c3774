// stable-sort-expander (XLA's StableSortExpander): a stable sort becomes an unstable one whose
// comparator breaks ties by original position, read from an iota operand along the sort
// dimension (one already among the operands, or a new one whose result nobody reads). Sorting
// networks (the GPU's bitonic sorts) are not stable; with the position in the comparator they
// need not be.
//
// Option min_row_length: only sorts whose sort dimension is at least this long are expanded
// (XLA expands every stable sort: 1). hloc's GPU sorts of rows that fit one block keep the
// original position themselves, so the GPU pipeline expands only the rows that may not fit.
#pragma once
#include <cstdint>

#include "engine/pass.h"

namespace hloc {

// Whether `op` is an iota along `dim` of an integer type wide enough that its values (each
// element's position along `dim`) do not wrap: an operand that breaks ties by position.
bool IsPositionIota(const HloInstruction& op, int64_t dim);

class StableSortExpander : public HloPass {
 public:
  static constexpr const char* kName = "stable-sort-expander";
  explicit StableSortExpander(int64_t min_row_length = 1) : min_row_length_(min_row_length) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t min_row_length_;
};

}  // namespace hloc
