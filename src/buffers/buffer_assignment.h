// BufferAssignment: every array value the scheduled module produces gets a slice of an
// allocation (XLA's BufferAssignment). Built on HloDataflowAnalysis (values; in-place reuse:
// dynamic-update-slice, while state, fusion outputs that may share an operand's buffer) and
// HloAliasAnalysis (values that must share one buffer: while carries, conditional results,
// tuples and get-tuple-element, bitcasts, input/output aliasing). Allocations:
//   - one per entry parameter leaf (is_entry_computation_parameter),
//   - one per constant (is_constant),
//   - outputs (maybe_live_out) and temps; temps whose live ranges do not overlap share bytes
//     (heap-simulated offsets in one "preallocated temp" allocation, or separate allocations
//     reused by lifetime), as XLA's buffer assignment does.
// Only sequential computations get buffers (entry, while condition/body, conditional branches,
// call); fused computations and reducers/comparators (to_apply) are thread-local: their values
// live in registers or the kernel's stack.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace hloc {

class BufferAllocation {
 public:
  struct Slice {
    int64_t index = -1;   // allocation index
    int64_t offset = 0;   // bytes
    int64_t size = 0;     // bytes
    bool operator==(const Slice&) const = default;
  };
  // A value placed in this allocation.
  struct Assigned {
    const HloInstruction* instruction;  // defining instruction of the value
    ShapeIndex index;                   // which leaf of its shape
    int64_t offset, size;
    int64_t value_id = -1;              // HloDataflowAnalysis value id (dump order)
    bool is_phi = false;
    // The value's live range on the flattened schedule (callees at their caller's place), as the
    // assignment used it: [live_start, live_end]; live_end == timeline_length() when it is live
    // out of the module; -1 for values with no place on the timeline (thread-local).
    int64_t live_start = -1, live_end = -1;
  };

  int64_t index() const { return index_; }
  int64_t size() const { return size_; }
  bool is_entry_computation_parameter() const { return parameter_number_ >= 0; }
  int64_t parameter_number() const { return parameter_number_; }
  const ShapeIndex& param_shape_index() const { return param_shape_index_; }
  bool is_constant() const { return constant_ != nullptr; }
  const HloInstruction* constant() const { return constant_; }  // the constant instruction
  // Which leaf of the constant's literal the allocation holds ({} unless the constant is a tuple).
  const ShapeIndex& constant_shape_index() const { return constant_shape_index_; }
  bool maybe_live_out() const { return maybe_live_out_; }
  bool is_tuple() const { return is_tuple_; }  // holds a tuple's pointer table
  // Values of reducers/comparators (to_apply computations): per-thread, never in device memory.
  bool is_thread_local() const { return is_thread_local_; }
  // The one allocation all temps share (offsets packed by the heap simulator).
  bool is_preallocated_temp() const { return is_preallocated_temp_; }
  const std::vector<Assigned>& assigned() const { return assigned_; }

 private:
  friend class BufferAssigner;
  int64_t index_ = 0, size_ = 0;
  int64_t parameter_number_ = -1;
  ShapeIndex param_shape_index_;
  const HloInstruction* constant_ = nullptr;
  ShapeIndex constant_shape_index_;
  bool maybe_live_out_ = false, is_tuple_ = false;
  bool is_thread_local_ = false, is_preallocated_temp_ = false;
  std::vector<Assigned> assigned_;
};

struct BufferAssignmentStats {
  int64_t parameter_bytes = 0, constant_bytes = 0, output_bytes = 0;
  int64_t temp_bytes = 0;             // bytes of temp allocations after sharing
  int64_t total_allocation_bytes = 0;
};

struct BufferAssignmentOptions {
  int64_t alignment = 64;   // CPU 64, GPU 256 (cuBLAS/cuDNN want 256-byte-aligned slices)
  // An op that may overwrite its operand in place (elementwise, elementwise loop fusions) takes
  // the operand's buffer when the operand dies there (XLA's operand-buffer sharing).
  bool share_operand_buffers = true;
  // A temp whose live range ends before an output's begins lives in that output's allocation
  // (XLA reuses allocations the same way) instead of the preallocated temp.
  bool reuse_output_allocations = true;
};

class BufferAssignment {
 public:
  const std::vector<BufferAllocation>& allocations() const { return allocations_; }
  // The one slice holding leaf `index` of `instruction`'s value (for a tuple-shaped value with
  // index {} : its pointer table). Error if the value has no buffer (fused, thread-local) or
  // is ambiguous (a value that may be one of several buffers, e.g. a select of tuples).
  absl::StatusOr<BufferAllocation::Slice> GetUniqueSlice(const HloInstruction* instruction,
                                                         const ShapeIndex& index) const;
  bool HasAllocationAt(const HloInstruction* instruction, const ShapeIndex& index) const;
  const BufferAssignmentStats& stats() const { return stats_; }
  // Instructions on the flattened schedule the live ranges are measured on.
  int64_t timeline_length() const { return timeline_length_; }
  // The `...after_optimizations-buffer-assignment.txt` dump, in XLA's format
  // ("allocation N: size S, parameter P, shape |...| at ShapeIndex {}:" + " value: <...>" lines).
  std::string ToString() const;

 private:
  friend class BufferAssigner;
  const HloModule* module_ = nullptr;
  int64_t output_allocation_ = -1;  // holds the entry root's top-level value ("output shape is")
  std::vector<BufferAllocation> allocations_;
  // Per instruction, its unambiguous slices by shape index (a hash map: a root tuple of 20,000
  // leaves made a list's lookups quadratic, issue 17's T3).
  absl::flat_hash_map<const HloInstruction*, absl::flat_hash_map<ShapeIndex, BufferAllocation::Slice>> slices_;
  BufferAssignmentStats stats_;
  int64_t timeline_length_ = 0;
};

// Assigns buffers for a scheduled module (is_scheduled: each computation's instruction order is
// its schedule). Errors: module not scheduled, values the analyses cannot place.
absl::StatusOr<std::unique_ptr<BufferAssignment>> AssignBuffers(const HloModule& module,
                                                                const BufferAssignmentOptions& options);

// AssignBuffers(module, default options)->ToString(): the `-buffer-assignment.txt` dump.
absl::StatusOr<std::string> BufferAssignmentDump(const HloModule& module);

}  // namespace hloc
