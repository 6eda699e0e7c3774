// HloInstruction: one node of a computation. Attributes that only some opcodes use live in
// one plain struct (InstructionAttributes) rather than in a subclass per opcode: every pass
// reads them the same way, and the printer and parser walk one list.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/opcode.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace hloc {

class HloComputation;

struct InstructionAttributes {
  // broadcast/reduce/transpose/reverse/sort/all-gather/scan ... : dimensions={...}.
  // concatenate: dimensions={d}; get-tuple-element uses tuple_index instead.
  std::vector<int64_t> dimensions;
  std::vector<SliceDimension> slice;          // slice={[0:4:1], ...}
  std::vector<int64_t> dynamic_slice_sizes;   // dynamic-slice, gather slice_sizes
  std::optional<Window> window;
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::optional<DotDimensionNumbers> dot_dimension_numbers;
  std::optional<RaggedDotDimensionNumbers> ragged_dot_dimension_numbers;
  std::optional<GatherDimensionNumbers> gather_dimension_numbers;
  std::optional<ScatterDimensionNumbers> scatter_dimension_numbers;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::optional<PaddingConfig> padding_config;
  std::optional<ComparisonDirection> comparison_direction;
  ComparisonType comparison_type = ComparisonType::kDefault;
  PrecisionConfig precision_config;

  int64_t tuple_index = 0;        // get-tuple-element index=
  int64_t parameter_number = 0;   // parameter(N)
  std::vector<bool> parameter_replication;  // parameter_replication={true,false}
  std::optional<Literal> literal; // constant
  int64_t iota_dimension = 0;
  int exponent_bits = 0, mantissa_bits = 0;  // reduce-precision
  float epsilon = 0;               // batch-norm-*
  int64_t feature_index = 0;       // batch-norm-*
  RandomDistribution distribution = RandomDistribution::kUniform;  // rng
  RandomAlgorithm rng_algorithm = RandomAlgorithm::kDefault;       // rng-bit-generator
  FftType fft_type = FftType::kFft;
  std::vector<int64_t> fft_length;
  // triangular-solve
  bool left_side = false, lower = false, unit_diagonal = false;
  TriangularTranspose transpose_a = TriangularTranspose::kNoTranspose;
  // topk
  int64_t k = 0;
  bool largest = true;
  bool is_stable = false;  // sort, topk
  // scan
  int64_t num_carries = 0;
  std::optional<bool> is_associative;
  bool is_reverse = false;

  FusionKind fusion_kind = FusionKind::kLoop;

  // custom-call
  std::string custom_call_target;
  CustomCallApiVersion api_version = CustomCallApiVersion::kUnspecified;
  bool custom_call_has_side_effect = false;
  CustomCallSchedule custom_call_schedule = CustomCallSchedule::kNone;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  std::vector<OutputOperandAlias> output_to_operand_aliasing;
  std::string opaque;  // custom-call opaque="..."

  // collectives and host transfer
  CollectiveDeviceList replica_groups;
  std::optional<int64_t> channel_id;
  bool use_global_device_ids = false;
  bool constrain_layout = false;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  bool is_host_transfer = false;
  std::string infeed_config, outfeed_config;
  std::optional<Shape> outfeed_shape;
  std::string async_execution_thread;  // async-start ... ; empty = "main"

  // Common to all opcodes.
  std::string backend_config;  // raw JSON ({...}) or string; empty = none
  std::optional<HloSharding> sharding;
  OpMetadata metadata;
  FrontendAttributes frontend_attributes;
  std::string statistics_viz;  // kept verbatim
  // Attributes hloc knows by name but gives no meaning to, kept verbatim in text order
  // (e.g. domain=, result_accuracy=, origin=): name -> value text.
  std::vector<std::pair<std::string, std::string>> raw_attributes;
};

// Where an instruction was written in the HLO text it was parsed from (1-based; line 0: not
// parsed, e.g. made by a pass). The file name is the module's (HloModule::source_file).
struct TextLocation {
  int32_t line = 0, column = 0;
  bool known() const { return line > 0; }
};

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, Shape shape, std::string name = "");

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  const Shape& shape() const { return shape_; }
  Shape& mutable_shape() { return shape_; }
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }

  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* c) { parent_ = c; }

  // Operands and users (uses are kept in step by AppendOperand/ReplaceOperandWith).
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  int64_t operand_count() const { return static_cast<int64_t>(operands_.size()); }
  void AppendOperand(HloInstruction* op);
  void ReplaceOperandWith(int64_t i, HloInstruction* new_op);
  // Points every user of this instruction (and the computation root) at `other`.
  void ReplaceAllUsesWith(HloInstruction* other);
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return static_cast<int64_t>(users_.size()); }

  const std::vector<HloInstruction*>& control_predecessors() const { return control_predecessors_; }
  const std::vector<HloInstruction*>& control_successors() const { return control_successors_; }
  void AddControlDependencyTo(HloInstruction* successor);
  void DetachFromOperandsAndUsers();  // drops operand/user/control edges; for removal

  // Called computations in XLA's order: to_apply / calls / condition, body /
  // branch_computations / true, false / select, scatter (select-and-scatter).
  const std::vector<HloComputation*>& called_computations() const { return called_; }
  std::vector<HloComputation*>& mutable_called_computations() { return called_; }
  HloComputation* to_apply() const { return called_.empty() ? nullptr : called_[0]; }
  // while: condition = called_[0], body = called_[1].
  HloComputation* while_condition() const { return called_[0]; }
  HloComputation* while_body() const { return called_[1]; }
  // fusion: the fused computation.
  HloComputation* fused_instructions_computation() const { return called_[0]; }
  // select-and-scatter: select = called_[0], scatter = called_[1].

  const InstructionAttributes& attrs() const { return attrs_; }
  InstructionAttributes& mutable_attrs() { return attrs_; }

  // A get-tuple-element written inline at its use as %tuple#i (newer XLA text); it has no
  // line of its own in the printed computation.
  bool is_inline_gte() const { return inline_gte_; }
  void set_inline_gte(bool v) { inline_gte_ = v; }

  const TextLocation& text_location() const { return location_; }
  void set_text_location(TextLocation loc) { location_ = loc; }
  // "FILE:LINE:COL: " for messages about this instruction, or "" when its location is unknown.
  std::string LocationPrefix() const;

  bool IsRoot() const;
  bool IsElementwise() const { return hloc::IsElementwise(opcode_); }

 private:
  friend class HloComputation;
  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  HloComputation* parent_ = nullptr;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  std::vector<HloComputation*> called_;
  InstructionAttributes attrs_;
  bool inline_gte_ = false;
  TextLocation location_;
  // This instruction's slot in its computation's storage (HloComputation keeps it), so removing
  // it or inserting next to it needs no search: fusion passes do both once per merge.
  int64_t slot_ = -1;
};

}  // namespace hloc
