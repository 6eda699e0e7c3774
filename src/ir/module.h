// HloModule: computations, the entry, and the module-level configuration that HLO text
// carries in its header line (entry layout, aliasing, replicas/partitions, ...), plus the
// stack-frame tables JAX dumps carry.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/computation.h"

namespace hloc {

struct ComputationLayout {
  std::vector<Shape> parameter_shapes;
  Shape result_shape;
};

// input_output_alias={ {0}: (0, {}, may-alias) }
struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};
// buffer_donor={ (0, {}) }
struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

// The FileNames / FunctionNames / FileLocations / StackFrames tables of JAX dumps.
struct StackFrameIndex {
  struct FileLocation {
    int64_t file_name_id = 0, function_name_id = 0;
    int64_t line = 0, end_line = 0, column = 0, end_column = 0;
    bool operator==(const FileLocation&) const = default;
  };
  struct StackFrame {
    int64_t file_location_id = 0, parent_frame_id = 0;
    bool operator==(const StackFrame&) const = default;
  };
  std::vector<std::string> file_names;       // id i+1 at index i
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<StackFrame> stack_frames;
  bool empty() const {
    return file_names.empty() && function_names.empty() && file_locations.empty() &&
           stack_frames.empty();
  }
  bool operator==(const StackFrameIndex&) const = default;
};

struct HloModuleConfig {
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  std::optional<ComputationLayout> entry_computation_layout;  // as written in the header
  std::vector<InputOutputAlias> input_output_alias;
  std::vector<BufferDonor> buffer_donor;
  bool alias_passthrough_params = false;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters;
  std::vector<bool> allow_spmd_sharding_propagation_to_output;
  std::optional<HloSharding> spmd_output_sharding;
  std::vector<HloSharding> spmd_parameters_shardings;
  FrontendAttributes frontend_attributes;
  // Header attributes hloc keeps verbatim (cross_program_prefetches=, ...).
  std::vector<std::pair<std::string, std::string>> raw_attributes;
};

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  HloComputation* AddComputation(std::unique_ptr<HloComputation> c, bool is_entry = false);
  // Removes a computation that nothing calls (checked: a walk over the whole module).
  absl::Status RemoveComputation(HloComputation* c);
  // Removes the fused computation of a fusion instruction already removed. A fused computation
  // has exactly one caller, its fusion (the verifier checks it), so no walk over the module is
  // needed: fusion passes remove one per merge, and the walk made them quadratic.
  absl::Status RemoveFusedComputation(HloComputation* c);
  // Removes every computation of `dead` (none may be the entry or be called from outside the
  // set) with one walk over the module.
  absl::Status RemoveComputations(const absl::flat_hash_set<const HloComputation*>& dead);
  // Moves a computation to the end of the order, as removing it and adding it again would
  // (O(1)): a fusion grown in place keeps the place a rebuilt fusion's body would get.
  absl::Status MoveComputationToEnd(HloComputation* c);
  // In the order they were added. A removal nulls its slot (O(1): fusion passes remove one
  // fused computation per merge); the next read drops the null slots.
  const std::vector<std::unique_ptr<HloComputation>>& computations() const {
    Compact();
    return computations_;
  }
  // Callees before callers, the entry last (the order XLA prints).
  std::vector<HloComputation*> MakeComputationPostOrder() const;
  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* c) { entry_ = c; }
  HloComputation* GetComputationWithName(const std::string& name) const;

  HloModuleConfig& config() { return config_; }
  const HloModuleConfig& config() const { return config_; }
  // is_scheduled=true: every computation's instruction order is its schedule.
  bool is_scheduled() const { return is_scheduled_; }
  void set_is_scheduled(bool v) { is_scheduled_ = v; }

  // How many constants the text elided as "{...}" (XLA's dumps do so for large constants unless
  // --xla_dump_large_constants): they parse as zeros, so results computed from them are not
  // the program's. The commands that run a module warn when this is not 0.
  int64_t elided_constants() const { return elided_constants_; }
  void set_elided_constants(int64_t n) { elided_constants_ = n; }

  // The file the module was parsed from ("<text>" for text without a file): with each
  // instruction's TextLocation, what verifier and code generation errors point at.
  const std::string& source_file() const { return source_file_; }
  void set_source_file(std::string f) { source_file_ = std::move(f); }

  StackFrameIndex& stack_frames() { return stack_frames_; }
  const StackFrameIndex& stack_frames() const { return stack_frames_; }

  // Unique ids for new instructions.
  int64_t NextUniqueId() { return next_unique_id_++; }

 private:
  std::string name_;
  mutable std::vector<std::unique_ptr<HloComputation>> computations_;  // slots (see computations())
  mutable bool dirty_ = false;
  void Compact() const;
  HloComputation* entry_ = nullptr;
  HloModuleConfig config_;
  bool is_scheduled_ = false;
  int64_t elided_constants_ = 0;
  StackFrameIndex stack_frames_;
  std::string source_file_;
  int64_t next_unique_id_ = 0;
  absl::Status EraseComputation(HloComputation* c);  // the entry check and the erase
};

}  // namespace hloc
