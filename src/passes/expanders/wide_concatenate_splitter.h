// wide-concatenate-splitter: a concatenate reading more than K distinct operands becomes a tree
// of concatenates, each reading at most K (consecutive operands grouped, the groups'
// concatenates concatenated). One kernel reads each distinct operand through a kernel argument
// and a block of code, so a concatenate of thousands of distinct operands made kernels whose
// compile time grew superlinearly (4000 operands: 11 s on the CPU, 160 s for the GPU) and whose
// arguments passed the GPU's kernel parameter space. The tree costs one more pass over the data
// per level, only for such concatenates. An operand repeated many times counts once (it is one
// argument and one block), so a concatenate of one array 20000 times stays whole.
// K: the option max_distinct_operands, else the profile's tuning
// concatenate_max_distinct_operands (at most fusion's 96 operands, so the pieces stay apart).
#pragma once
#include <cstdint>

#include "engine/pass.h"

namespace hloc {

class WideConcatenateSplitter : public HloPass {
 public:
  static constexpr const char* kName = "wide-concatenate-splitter";
  explicit WideConcatenateSplitter(int64_t max_distinct_operands = -1) : max_distinct_(max_distinct_operands) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override;

 private:
  int64_t max_distinct_;  // < 0: the profile's tuning value
};

}  // namespace hloc
