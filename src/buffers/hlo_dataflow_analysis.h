// HloDataflowAnalysis (XLA's, in SSA form as BufferAssignment uses it): every array leaf and
// tuple pointer table an instruction defines is one HloValue; every (instruction, index)
// position holds a set of values. Forwarding ops (bitcast, tuple, get-tuple-element, call
// results and call/conditional parameters, opt-barrier, domain) define nothing and carry their
// operands' values; while loops (the loop itself, its body and condition parameters) and
// conditional results define phi values, which HloAliasAnalysis later merges with what flows
// in. Fused computations are not analysed (their values live in registers); computations a
// sequential computation calls through while/conditional/call are "sequential", those reached
// through to_apply and friends (reducers, comparators, scatter combiners) are "embedded"
// (thread-local).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

struct HloPosition {
  const HloInstruction* instruction = nullptr;
  ShapeIndex index;
  bool operator==(const HloPosition&) const = default;
};

struct HloUse {
  const HloInstruction* instruction = nullptr;
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const HloUse&) const = default;
};

class HloValue {
 public:
  HloValue(int64_t id, const HloInstruction* instruction, ShapeIndex index, bool is_phi);
  int64_t id() const { return id_; }
  const HloInstruction* defining_instruction() const { return defining_.instruction; }
  const ShapeIndex& defining_index() const { return defining_.index; }
  const HloPosition& defining_position() const { return defining_; }
  const Shape& shape() const { return *shape_; }
  bool is_phi() const { return is_phi_; }
  // Every position holding this value (the defining one first).
  const std::vector<HloPosition>& positions() const { return positions_; }
  // Instructions that read this value's bytes (forwarding ops that only pass it on are not uses).
  const std::vector<HloUse>& uses() const { return uses_; }
  bool live_out_of_module() const { return live_out_of_module_; }
  // XLA's short form: "<12 while.5{1} (phi) @0>" (the index only for tuple-shaped definers).
  std::string ToShortString() const;

 private:
  friend class HloDataflowAnalysis;
  int64_t id_;
  HloPosition defining_;
  const Shape* shape_;
  bool is_phi_;
  bool live_out_of_module_ = false;
  std::vector<HloPosition> positions_;
  std::vector<HloUse> uses_;
};

// Every index of a shape (interior tuple nodes included), in pre-order: {} first.
std::vector<ShapeIndex> AllShapeIndices(const Shape& shape);

// The bytes one value of this (sub)shape occupies in a buffer: arrays their data, tuples a
// table of 8-byte pointers, tokens nothing.
int64_t BufferSizeOfShape(const Shape& shape);

enum class ComputationKind { kSequential, kEmbedded, kFused };

class HloDataflowAnalysis {
 public:
  // Errors: a computation called both sequentially and from an embedded context, or a call
  // graph the fixed point cannot settle (malformed modules).
  static absl::StatusOr<std::unique_ptr<HloDataflowAnalysis>> Run(const HloModule& module);

  const HloModule& module() const { return module_; }
  const std::vector<std::unique_ptr<HloValue>>& values() const { return values_; }
  const HloValue& GetValue(int64_t id) const { return *values_[id]; }
  // Value ids at (instruction, index); empty for instructions not analysed (fused) or bad indices.
  const std::vector<int64_t>& GetValueSet(const HloInstruction* instruction, const ShapeIndex& index) const;
  // All (index, value ids) of an instruction, in pre-order of its shape.
  const std::vector<std::pair<ShapeIndex, std::vector<int64_t>>>* GetInstructionValueSet(
      const HloInstruction* instruction) const;
  bool ValueIsDefinedAt(const HloInstruction* instruction, const ShapeIndex& index = {}) const;
  // Requires ValueIsDefinedAt.
  const HloValue& GetValueDefinedAt(const HloInstruction* instruction, const ShapeIndex& index = {}) const;

  ComputationKind context(const HloComputation* computation) const;
  // For sequential computations other than the entry: the while/conditional/call that runs it.
  const HloInstruction* caller(const HloComputation* computation) const;

  std::string ToString() const;

 private:
  explicit HloDataflowAnalysis(const HloModule& module) : module_(module) {}
  using ValueSets = std::vector<std::pair<ShapeIndex, std::vector<int64_t>>>;
  absl::Status ComputeContexts();
  void DefineValues(const HloInstruction* instruction);
  bool Propagate(const HloInstruction* instruction);
  void ComputePositionsAndUses();
  int64_t NewValue(const HloInstruction* instruction, const ShapeIndex& index, bool is_phi);
  std::vector<int64_t>* MutableSet(const HloInstruction* instruction, const ShapeIndex& index);

  const HloModule& module_;
  std::vector<std::unique_ptr<HloValue>> values_;
  absl::flat_hash_map<const HloInstruction*, ValueSets> sets_;
  absl::flat_hash_map<const HloComputation*, ComputationKind> contexts_;
  absl::flat_hash_map<const HloComputation*, const HloInstruction*> callers_;
};

// XLA's in-place pairs: (operand number, operand index) whose buffer the instruction's output at
// the given index overwrites in place: dynamic-update-slice operand 0, scatter operands, fusions
// whose root updates a fused parameter in place, and output_to_operand_aliasing of custom calls
// and fusions. Emitters: a kernel may update an operand in place (write only the updated
// elements) exactly when this lists the pair; BufferAssignment then gives the operand and the
// output the same slice (copy-insertion has made that safe).
std::vector<std::pair<std::pair<int64_t, ShapeIndex>, ShapeIndex>> GetInPlaceInputOutputPairs(
    const HloInstruction* instruction);

// May `user` write its output at `user_index` over its operand's buffer at
// (operand, operand_index)? (XLA's CanShareOperandBufferWithUser: elementwise ops and loop
// fusions that read each element once at the position they write it, plus the in-place pairs.)
bool CanShareOperandBufferWithUser(const HloInstruction* operand, const ShapeIndex& operand_index,
                                   const HloInstruction* user, const ShapeIndex& user_index);

}  // namespace hloc
