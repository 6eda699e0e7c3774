// HloAliasAnalysis (XLA's): groups HloValues that must live in one buffer. Values are merged
// when they meet at a while loop (its init, body parameter, body root, condition parameter and
// result, index by index), at a conditional (its result and each branch's root), at in-place
// operations (dynamic-update-slice, scatter, in-place fusions and custom calls write over an
// operand), and where the module's input_output_alias config says an output reuses a parameter.
// Tuples, get-tuple-element, bitcasts and calls carry values without copying (the dataflow
// already forwards them), so they need no merging here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "buffers/hlo_dataflow_analysis.h"

namespace hloc {

class HloBuffer {
 public:
  int64_t id() const { return id_; }
  // Sorted by value id.
  const std::vector<const HloValue*>& values() const { return values_; }
  // Every position of every value.
  std::vector<HloPosition> ComputePositions() const;

 private:
  friend class HloAliasAnalysis;
  int64_t id_ = 0;
  std::vector<const HloValue*> values_;
};

class HloAliasAnalysis {
 public:
  static absl::StatusOr<std::unique_ptr<HloAliasAnalysis>> Run(const HloModule& module);

  const HloDataflowAnalysis& dataflow() const { return *dataflow_; }
  const std::vector<HloBuffer>& buffers() const { return buffers_; }
  const HloBuffer& GetBufferContainingValue(const HloValue& value) const {
    return buffers_[value_to_buffer_[value.id()]];
  }
  // The distinct buffers that may be at (instruction, index); more than one: ambiguous.
  std::vector<const HloBuffer*> ComputeBuffersAt(const HloInstruction* instruction,
                                                 const ShapeIndex& index = {}) const;
  std::string ToString() const;

 private:
  std::unique_ptr<HloDataflowAnalysis> dataflow_;
  std::vector<HloBuffer> buffers_;
  std::vector<int64_t> value_to_buffer_;
};

}  // namespace hloc
