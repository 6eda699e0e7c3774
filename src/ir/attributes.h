// Plain attribute structs carried by HLO instructions, named as XLA's protos name them.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/shape.h"

namespace hloc {

struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t window_dilation = 1;  // rhs_dilate
  int64_t base_dilation = 1;    // lhs_dilate
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};
struct Window {
  std::vector<WindowDimension> dimensions;
  bool operator==(const Window&) const = default;
};

struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 0;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 0;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 0;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct RaggedDotDimensionNumbers {
  DotDimensionNumbers dot_dimension_numbers;
  std::vector<int64_t> lhs_ragged_dimensions;
  std::vector<int64_t> rhs_group_dimensions;
  bool operator==(const RaggedDotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

struct PaddingDimension {
  int64_t edge_padding_low = 0;
  int64_t edge_padding_high = 0;
  int64_t interior_padding = 0;
  bool operator==(const PaddingDimension&) const = default;
};
struct PaddingConfig {
  std::vector<PaddingDimension> dimensions;
  bool operator==(const PaddingConfig&) const = default;
};

struct SliceDimension {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

enum class ComparisonDirection { kEq, kNe, kGe, kGt, kLe, kLt };
// XLA's Comparison::Type; kDefault means "not written", inferred from the element type.
enum class ComparisonType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

enum class Precision { kDefault, kHigh, kHighest, kPackedNibble };
struct PrecisionConfig {
  std::vector<Precision> operand_precision;  // empty = all DEFAULT
  std::string algorithm;                     // e.g. "dot_bf16_bf16_f32"; empty = unset
  bool operator==(const PrecisionConfig&) const = default;
};

struct OpMetadata {
  std::string op_type, op_name, source_file;
  int64_t source_line = 0, source_end_line = 0, source_column = 0, source_end_column = 0;
  int64_t stack_frame_id = 0;
  std::vector<std::string> profile_type;
  std::string deduplicated_name, scheduling_name;
  bool preserve_layout = false;
  bool empty() const { return *this == OpMetadata(); }
  bool operator==(const OpMetadata&) const = default;
};

// XLA's iota device list: reshape iota(prod(reshape_dims)) to reshape_dims, transpose by
// transpose_perm, reshape to dims. Text: [2,4]<=[4,2]T(1,0).
struct IotaTileAssignment {
  std::vector<int64_t> dims;
  std::vector<int64_t> reshape_dims;
  std::vector<int64_t> transpose_perm;
  bool operator==(const IotaTileAssignment&) const = default;
};

// Replica groups: an explicit list {{0,1},{2,3}}, an iota form [2,2]<=[4], or a Shardy mesh
// form (mesh['x'=2] {'x'}), kept as text.
struct CollectiveDeviceList {
  std::vector<std::vector<int64_t>> groups;
  std::optional<IotaTileAssignment> iota;
  std::string mesh_text;
  bool empty() const { return groups.empty() && !iota && mesh_text.empty(); }
  bool operator==(const CollectiveDeviceList&) const = default;
};

struct OutputOperandAlias {
  ShapeIndex output_index;
  int64_t operand_number = 0;
  ShapeIndex operand_index;
  bool operator==(const OutputOperandAlias&) const = default;
};

enum class FusionKind { kLoop, kInput, kOutput, kCustom };
enum class RandomDistribution { kUniform, kNormal };
enum class RandomAlgorithm { kDefault, kThreeFry, kPhilox };
enum class FftType { kFft, kIfft, kRfft, kIrfft };
enum class TriangularTranspose { kNoTranspose, kTranspose, kAdjoint };
enum class CustomCallApiVersion { kUnspecified, kOriginal, kStatusReturning, kStatusReturningUnified, kTypedFfi };
enum class CustomCallSchedule { kNone, kLatest, kEarliest };

using FrontendAttributes = std::map<std::string, std::string>;

}  // namespace hloc
