// Attribute values in XLA's text format: metadata, windows, convolution dim labels, padding,
// dot/gather/scatter dimension numbers, replica groups, shardings, frontend attributes and
// the enum spellings; and the opcode-specific attribute lists of every instruction class.
// Each function mirrors the XLA function named in its comment.
#include <algorithm>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/hlo_printer_internal.h"

namespace hloc {
namespace printer_internal {

std::string Escape(std::string_view s) { return absl::CEscape(std::string(s)); }

std::string Quoted(std::string_view s) { return absl::StrCat("\"", Escape(s), "\""); }

std::string BracedList(const std::vector<int64_t>& v) {
  return absl::StrCat("{", absl::StrJoin(v, ","), "}");
}

bool LexesAsJsonDict(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  if (i >= s.size() || s[i] != '{') return false;
  int64_t depth = 0;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      // Skip a "string" with backslash escapes; an unterminated one is not a dict.
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\') ++i;
        ++i;
      }
      if (i >= s.size()) return false;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) {
      ++i;
      break;
    }
  }
  if (depth != 0) return false;
  for (; i < s.size(); ++i)
    if (!is_space(s[i])) return false;
  return true;
}

// XLA's OpMetadataToString: fields in proto order, space separated.
std::string OpMetadataText(const OpMetadata& m) {
  std::vector<std::string> parts;
  if (!m.op_type.empty()) parts.push_back(absl::StrCat("op_type=", Quoted(m.op_type)));
  if (!m.op_name.empty()) parts.push_back(absl::StrCat("op_name=", Quoted(m.op_name)));
  if (!m.source_file.empty()) parts.push_back(absl::StrCat("source_file=", Quoted(m.source_file)));
  if (m.source_line != 0) parts.push_back(absl::StrCat("source_line=", m.source_line));
  if (m.source_end_line != 0) parts.push_back(absl::StrCat("source_end_line=", m.source_end_line));
  if (m.source_column != 0) parts.push_back(absl::StrCat("source_column=", m.source_column));
  if (m.source_end_column != 0)
    parts.push_back(absl::StrCat("source_end_column=", m.source_end_column));
  if (!m.profile_type.empty())
    parts.push_back(absl::StrCat("profile_type={", absl::StrJoin(m.profile_type, ","), "}"));
  if (!m.deduplicated_name.empty())
    parts.push_back(absl::StrCat("deduplicated_name=", Quoted(m.deduplicated_name)));
  if (m.preserve_layout) parts.push_back("preserve_layout=true");
  if (!m.scheduling_name.empty())
    parts.push_back(absl::StrCat("scheduling_name=", Quoted(m.scheduling_name)));
  if (m.stack_frame_id != 0) parts.push_back(absl::StrCat("stack_frame_id=", m.stack_frame_id));
  return absl::StrJoin(parts, " ");
}

// window_util::ToString: only the fields that differ from the default are written.
std::string WindowText(const Window& w) {
  std::string s;
  auto field = [&](const char* heading, auto&& format) {
    absl::StrAppend(&s, heading, "=");
    const char* sep = "";
    for (const WindowDimension& d : w.dimensions) {
      absl::StrAppend(&s, sep, format(d));
      sep = "x";
    }
  };
  auto any = [&](auto&& pred) { return std::any_of(w.dimensions.begin(), w.dimensions.end(), pred); };
  if (!w.dimensions.empty()) field("size", [](const WindowDimension& d) { return absl::StrCat(d.size); });
  if (any([](const WindowDimension& d) { return d.stride != 1; }))
    field(" stride", [](const WindowDimension& d) { return absl::StrCat(d.stride); });
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; }))
    field(" pad", [](const WindowDimension& d) {
      return absl::StrCat(d.padding_low, "_", d.padding_high);
    });
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; }))
    field(" lhs_dilate", [](const WindowDimension& d) { return absl::StrCat(d.base_dilation); });
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; }))
    field(" rhs_dilate", [](const WindowDimension& d) { return absl::StrCat(d.window_dilation); });
  if (any([](const WindowDimension& d) { return d.window_reversal; }))
    field(" rhs_reversal", [](const WindowDimension& d) { return absl::StrCat(d.window_reversal ? 1 : 0); });
  return s;
}

namespace {
// One operand's labels for ConvolutionDimensionNumbersToString; unset positions print '?'.
// Dimension numbers come from user input, so out-of-range ones are printed as plain
// numbers in a fallback rather than indexing out of bounds.
std::string DimLabels(int64_t a, char a_label, int64_t b, char b_label,
                      const std::vector<int64_t>& spatial) {
  constexpr int64_t kMaxRank = 1 << 16;
  int64_t len = std::max(a, b);
  for (int64_t d : spatial) len = std::max(len, d);
  ++len;
  bool sane = a >= 0 && b >= 0 && len <= kMaxRank;
  for (int64_t d : spatial) sane = sane && d >= 0;
  if (!sane) return "?";
  std::vector<std::string> labels(len, "?");
  labels[a] = std::string(1, a_label);
  labels[b] = std::string(1, b_label);
  for (size_t i = 0; i < spatial.size(); ++i) labels[spatial[i]] = absl::StrCat(i);
  return absl::StrJoin(labels, "");
}
}  // namespace

std::string ConvDimLabelsText(const ConvolutionDimensionNumbers& d) {
  return absl::StrCat(
      DimLabels(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
                d.input_spatial_dimensions),
      "_",
      DimLabels(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
                d.kernel_spatial_dimensions),
      "->",
      DimLabels(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
                d.output_spatial_dimensions));
}

// PaddingConfigToString: lo_hi per dimension, with _interior on all if any is non-zero.
std::string PaddingConfigText(const PaddingConfig& p) {
  bool interior = std::any_of(p.dimensions.begin(), p.dimensions.end(),
                              [](const PaddingDimension& d) { return d.interior_padding != 0; });
  std::vector<std::string> parts;
  for (const PaddingDimension& d : p.dimensions) {
    parts.push_back(interior ? absl::StrCat(d.edge_padding_low, "_", d.edge_padding_high, "_",
                                            d.interior_padding)
                             : absl::StrCat(d.edge_padding_low, "_", d.edge_padding_high));
  }
  return absl::StrJoin(parts, "x");
}

// DotDimensionNumbersToString: batch dims only when present, contracting dims always.
std::string DotDimsText(const DotDimensionNumbers& d) {
  std::vector<std::string> parts;
  if (!d.lhs_batch_dimensions.empty())
    parts.push_back(absl::StrCat("lhs_batch_dims=", BracedList(d.lhs_batch_dimensions)));
  parts.push_back(absl::StrCat("lhs_contracting_dims=", BracedList(d.lhs_contracting_dimensions)));
  if (!d.rhs_batch_dimensions.empty())
    parts.push_back(absl::StrCat("rhs_batch_dims=", BracedList(d.rhs_batch_dimensions)));
  parts.push_back(absl::StrCat("rhs_contracting_dims=", BracedList(d.rhs_contracting_dimensions)));
  return absl::StrJoin(parts, ", ");
}

std::string RaggedDotDimsText(const RaggedDotDimensionNumbers& d) {
  std::string s = DotDimsText(d.dot_dimension_numbers);
  absl::StrAppend(&s, ", lhs_ragged_dims=", BracedList(d.lhs_ragged_dimensions));
  if (!d.rhs_group_dimensions.empty())
    absl::StrAppend(&s, ", rhs_group_dims=", BracedList(d.rhs_group_dimensions));
  return s;
}

// HloGatherInstruction::PrintGatherDimensionNumbers.
std::string GatherDimsText(const GatherDimensionNumbers& d) {
  std::string s = absl::StrCat("offset_dims=", BracedList(d.offset_dims),
                               ", collapsed_slice_dims=", BracedList(d.collapsed_slice_dims),
                               ", start_index_map=", BracedList(d.start_index_map));
  if (!d.operand_batching_dims.empty())
    absl::StrAppend(&s, ", operand_batching_dims=", BracedList(d.operand_batching_dims));
  if (!d.start_indices_batching_dims.empty())
    absl::StrAppend(&s, ", start_indices_batching_dims=",
                    BracedList(d.start_indices_batching_dims));
  absl::StrAppend(&s, ", index_vector_dim=", d.index_vector_dim);
  return s;
}

// HloScatterInstruction::PrintScatterDimensionNumbers.
std::string ScatterDimsText(const ScatterDimensionNumbers& d) {
  std::string s =
      absl::StrCat("update_window_dims=", BracedList(d.update_window_dims),
                   ", inserted_window_dims=", BracedList(d.inserted_window_dims),
                   ", scatter_dims_to_operand_dims=", BracedList(d.scatter_dims_to_operand_dims));
  if (!d.input_batching_dims.empty())
    absl::StrAppend(&s, ", input_batching_dims=", BracedList(d.input_batching_dims));
  if (!d.scatter_indices_batching_dims.empty())
    absl::StrAppend(&s, ", scatter_indices_batching_dims=",
                    BracedList(d.scatter_indices_batching_dims));
  absl::StrAppend(&s, ", index_vector_dim=", d.index_vector_dim);
  return s;
}

// HloSliceInstruction: strides are written only when some stride is not 1.
std::string SliceText(const std::vector<SliceDimension>& s) {
  bool strides = std::any_of(s.begin(), s.end(), [](const SliceDimension& d) { return d.stride != 1; });
  std::vector<std::string> parts;
  for (const SliceDimension& d : s) {
    parts.push_back(strides ? absl::StrCat("[", d.start, ":", d.limit, ":", d.stride, "]")
                            : absl::StrCat("[", d.start, ":", d.limit, "]"));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

namespace {
// "<=[reshape_dims]" plus "T(perm)" when the permutation is not the identity (XLA writes no
// T for an untransposed iota; the parser may store the identity explicitly).
std::string IotaSource(const IotaTileAssignment& iota) {
  std::string s = absl::StrCat("<=[", absl::StrJoin(iota.reshape_dims, ","), "]");
  bool identity = true;
  for (size_t i = 0; i < iota.transpose_perm.size(); ++i)
    identity = identity && iota.transpose_perm[i] == static_cast<int64_t>(i);
  if (!identity) absl::StrAppend(&s, "T(", absl::StrJoin(iota.transpose_perm, ","), ")");
  return s;
}
}  // namespace

// IotaTileAssignment::Print: [dims]<=[reshape_dims] with T(perm) when transposed.
std::string IotaTileText(const IotaTileAssignment& iota) {
  return absl::StrCat("[", absl::StrJoin(iota.dims, ","), "]", IotaSource(iota));
}

// CollectiveDeviceList::ToString (replica_groups=...).
std::string DeviceListText(const CollectiveDeviceList& d) {
  if (!d.mesh_text.empty()) return d.mesh_text;
  if (d.iota) return IotaTileText(*d.iota);
  std::vector<std::string> groups;
  for (const auto& g : d.groups) groups.push_back(BracedList(g));
  return absl::StrCat("{", absl::StrJoin(groups, ","), "}");
}

std::string SourceTargetPairsText(const std::vector<std::pair<int64_t, int64_t>>& p) {
  std::vector<std::string> parts;
  for (const auto& [a, b] : p) parts.push_back(absl::StrCat("{", a, ",", b, "}"));
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

// FrontendAttributesToString: sorted keys (std::map order); JSON-dict values print bare.
std::string FrontendAttributesText(const FrontendAttributes& a) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : a) {
    parts.push_back(LexesAsJsonDict(v) ? absl::StrCat(k, "=", v) : absl::StrCat(k, "=", Quoted(v)));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ","), "}");
}

std::string OutputOperandAliasingText(const std::vector<OutputOperandAlias>& a) {
  std::vector<std::string> parts;
  for (const OutputOperandAlias& x : a) {
    parts.push_back(absl::StrCat(ShapeIndexToString(x.output_index), ": (", x.operand_number,
                                 ", ", ShapeIndexToString(x.operand_index), ")"));
  }
  return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
}

namespace {
const char* SubgroupTypeText(HloSharding::SubgroupType t) {
  switch (t) {
    case HloSharding::SubgroupType::kManual: return "manual";
    case HloSharding::SubgroupType::kReplicated: return "replicated";
    case HloSharding::SubgroupType::kUnreduced: return "unreduced";
    // OpSharding's MAXIMAL, the other subgroup type XLA's parser accepts.
    case HloSharding::SubgroupType::kTuple: return "maximal";
  }
  return "replicated";
}

// One non-tuple sharding (HloSharding::Print for a leaf).
void AppendLeafSharding(std::string* out, const HloSharding& s, bool include_metadata) {
  if (s.kind == HloSharding::Kind::kMesh) {
    absl::StrAppend(out, "{", s.mesh_text, "}");
    return;
  }
  auto tail = [&]() {
    if (!s.shard_group.empty()) absl::StrAppend(out, " ", s.shard_group);
    if (include_metadata && !s.metadata.empty()) {
      *out += " metadata={";
      if (s.metadata.size() == 1) {
        *out += OpMetadataText(s.metadata[0]);
      } else {
        std::vector<std::string> parts;
        for (const OpMetadata& m : s.metadata) parts.push_back(absl::StrCat("{", OpMetadataText(m), "}"));
        *out += absl::StrJoin(parts, ", ");
      }
      *out += "}";
    }
    *out += "}";
  };
  switch (s.kind) {
    case HloSharding::Kind::kReplicated: *out += "{replicated"; return tail();
    case HloSharding::Kind::kManual: *out += "{manual"; return tail();
    case HloSharding::Kind::kUnknown: *out += "{unknown"; return tail();
    case HloSharding::Kind::kMaximal:
      absl::StrAppend(out, "{maximal device=", s.device);
      return tail();
    default: break;
  }
  absl::StrAppend(out, "{devices=[", absl::StrJoin(s.tile_dims, ","), "]");
  if (s.iota) {
    *out += IotaSource(*s.iota);
  } else {
    *out += absl::StrJoin(s.devices, ",");
  }
  if (s.last_tile_dim_replicate) *out += " last_tile_dim_replicate";
  if (!s.last_tile_dims.empty()) {
    std::vector<std::string> types;
    for (auto t : s.last_tile_dims) types.push_back(SubgroupTypeText(t));
    absl::StrAppend(out, " last_tile_dims={", absl::StrJoin(types, ", "), "}");
  }
  tail();
}
}  // namespace

// HloSharding::Print; tuples get /*index=N*/ before every fifth element. Nested tuples are
// walked with an explicit stack.
std::string ShardingText(const HloSharding& s, bool include_metadata) {
  std::string out;
  struct Frame {
    const HloSharding* s;
    size_t next;
  };
  if (s.kind != HloSharding::Kind::kTuple) {
    AppendLeafSharding(&out, s, include_metadata);
    return out;
  }
  std::vector<Frame> stack = {{&s, 0}};
  out += "{";
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next >= top.s->tuple_elements.size()) {
      out += "}";
      stack.pop_back();
      continue;
    }
    size_t i = top.next++;
    if (i > 0) out += (i % 5 == 0) ? absl::StrCat(", /*index=", i, "*/") : ", ";
    const HloSharding& e = top.s->tuple_elements[i];
    if (e.kind == HloSharding::Kind::kTuple) {
      out += "{";
      stack.push_back({&e, 0});
    } else {
      AppendLeafSharding(&out, e, include_metadata);
    }
  }
  return out;
}

std::string ComparisonDirectionText(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return "EQ";
    case ComparisonDirection::kNe: return "NE";
    case ComparisonDirection::kGe: return "GE";
    case ComparisonDirection::kGt: return "GT";
    case ComparisonDirection::kLe: return "LE";
    case ComparisonDirection::kLt: return "LT";
  }
  return "EQ";
}

std::string ComparisonTypeText(ComparisonType t) {
  switch (t) {
    case ComparisonType::kFloat: return "FLOAT";
    case ComparisonType::kTotalOrder: return "TOTALORDER";
    case ComparisonType::kSigned: return "SIGNED";
    case ComparisonType::kUnsigned: return "UNSIGNED";
    case ComparisonType::kDefault: break;
  }
  return "";
}

std::string PrecisionText(Precision p) {
  switch (p) {
    case Precision::kDefault: return "default";
    case Precision::kHigh: return "high";
    case Precision::kHighest: return "highest";
    case Precision::kPackedNibble: return "packed_nibble";
  }
  return "default";
}

std::string FusionKindText(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop: return "kLoop";
    case FusionKind::kInput: return "kInput";
    case FusionKind::kOutput: return "kOutput";
    case FusionKind::kCustom: return "kCustom";
  }
  return "kLoop";
}

std::string RandomDistributionText(RandomDistribution d) {
  return d == RandomDistribution::kNormal ? "rng_normal" : "rng_uniform";
}

std::string RandomAlgorithmText(RandomAlgorithm a) {
  switch (a) {
    case RandomAlgorithm::kDefault: return "rng_default";
    case RandomAlgorithm::kThreeFry: return "rng_three_fry";
    case RandomAlgorithm::kPhilox: return "rng_philox";
  }
  return "rng_default";
}

std::string FftTypeText(FftType t) {
  switch (t) {
    case FftType::kFft: return "FFT";
    case FftType::kIfft: return "IFFT";
    case FftType::kRfft: return "RFFT";
    case FftType::kIrfft: return "IRFFT";
  }
  return "FFT";
}

std::string TriangularTransposeText(TriangularTranspose t) {
  switch (t) {
    case TriangularTranspose::kNoTranspose: return "NO_TRANSPOSE";
    case TriangularTranspose::kTranspose: return "TRANSPOSE";
    case TriangularTranspose::kAdjoint: return "ADJOINT";
  }
  return "NO_TRANSPOSE";
}

std::string CustomCallApiVersionText(CustomCallApiVersion v) {
  switch (v) {
    case CustomCallApiVersion::kUnspecified: return "API_VERSION_UNSPECIFIED";
    case CustomCallApiVersion::kOriginal: return "API_VERSION_ORIGINAL";
    case CustomCallApiVersion::kStatusReturning: return "API_VERSION_STATUS_RETURNING";
    case CustomCallApiVersion::kStatusReturningUnified: return "API_VERSION_STATUS_RETURNING_UNIFIED";
    case CustomCallApiVersion::kTypedFfi: return "API_VERSION_TYPED_FFI";
  }
  return "API_VERSION_ORIGINAL";
}

std::string CustomCallScheduleText(CustomCallSchedule s) {
  switch (s) {
    case CustomCallSchedule::kNone: return "SCHEDULE_NONE";
    case CustomCallSchedule::kLatest: return "SCHEDULE_LATEST";
    case CustomCallSchedule::kEarliest: return "SCHEDULE_EARLIEST";
  }
  return "SCHEDULE_NONE";
}

// ---- opcode-specific attributes (XLA's PrintExtraAttributesImpl) ---------------------

bool IsPlacedRawAttribute(const HloInstruction& inst, const std::string& name) {
  if (name == "origin" || name == "result_accuracy" || name == "is_composite") return true;
  if (inst.opcode() == HloOpcode::kCustomCall && (name == "padding_type" || name == "literal"))
    return true;
  return false;
}

void AddRawAttribute(AttrList& a, const HloInstruction& inst, const std::string& name) {
  for (const auto& [n, v] : inst.attrs().raw_attributes)
    if (n == name) a.Cat(n, "=", v);
}

namespace {

void AddPrecisionConfig(AttrList& a, const PrecisionConfig& p) {
  bool any = std::any_of(p.operand_precision.begin(), p.operand_precision.end(),
                         [](Precision x) { return x != Precision::kDefault; });
  if (any) {
    std::vector<std::string> parts;
    for (Precision x : p.operand_precision) parts.push_back(PrecisionText(x));
    a.Cat("operand_precision={", absl::StrJoin(parts, ","), "}");
  }
  if (!p.algorithm.empty()) a.Cat("algorithm=", p.algorithm);
}

void AddCollectiveCommon(AttrList& a, const InstructionAttributes& at) {
  if (at.channel_id) a.Cat("channel_id=", *at.channel_id);
  a.Cat("replica_groups=", DeviceListText(at.replica_groups));
  if (at.constrain_layout) a.Add("constrain_layout=true");
}

// XLA's Comparison::DefaultComparisonType: type= is written only when it differs.
ComparisonType DefaultComparisonType(PrimitiveType t) {
  if (IsFloatingPoint(t) || IsComplex(t)) return ComparisonType::kFloat;
  if (IsSignedIntegral(t)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

}  // namespace

// PrintExtraAttributesImpl of each XLA instruction class.
void AddOpcodeAttributes(AttrList& a, const HloInstruction& inst, const HloPrintOptions& o) {
  using O = HloOpcode;
  const InstructionAttributes& at = inst.attrs();
  switch (inst.opcode()) {
    case O::kBatchNormTraining:
    case O::kBatchNormInference:
    case O::kBatchNormGrad:
      a.Cat("epsilon=", at.epsilon);
      a.Cat("feature_index=", at.feature_index);
      break;
    case O::kFft:
      a.Cat("fft_type=", FftTypeText(at.fft_type));
      a.Cat("fft_length=", BracedList(at.fft_length));
      break;
    case O::kAsyncStart:
      if (!at.async_execution_thread.empty() && at.async_execution_thread != "main")
        a.Cat("async_execution_thread=", Quoted(at.async_execution_thread));
      if (!at.output_to_operand_aliasing.empty())
        a.Cat("output_to_operand_aliasing=", OutputOperandAliasingText(at.output_to_operand_aliasing));
      break;
    case O::kCompare:
      if (at.comparison_direction) a.Cat("direction=", ComparisonDirectionText(*at.comparison_direction));
      if (at.comparison_type != ComparisonType::kDefault && inst.operand_count() > 0 &&
          inst.operand(0) != nullptr &&
          at.comparison_type != DefaultComparisonType(inst.operand(0)->shape().element_type())) {
        // A parsed order=TOTAL (kept verbatim and printed with the other raw attributes) already
        // says TOTALORDER.
        const bool said_by_order =
            at.comparison_type == ComparisonType::kTotalOrder &&
            std::any_of(at.raw_attributes.begin(), at.raw_attributes.end(),
                        [](const auto& kv) { return kv.first == "order" && kv.second == "TOTAL"; });
        if (!said_by_order) a.Cat("type=", ComparisonTypeText(at.comparison_type));
      }
      break;
    case O::kTriangularSolve:
      if (at.left_side) a.Add("left_side=true");
      if (at.lower) a.Add("lower=true");
      if (at.unit_diagonal) a.Add("unit_diagonal=true");
      a.Cat("transpose_a=", TriangularTransposeText(at.transpose_a));
      break;
    case O::kCholesky:
      if (at.lower) a.Add("lower=true");
      break;
    case O::kSend:
    case O::kSendDone:
    case O::kRecv:
    case O::kRecvDone:
      if (at.channel_id) a.Cat("channel_id=", *at.channel_id);
      if (at.is_host_transfer) a.Add("is_host_transfer=true");
      break;
    case O::kTopK:
      a.Cat("k=", at.k);
      a.Cat("largest=", at.largest ? "true" : "false");
      if (at.is_stable) a.Add("is_stable=true");
      break;
    case O::kAllGather:
    case O::kAllGatherStart:
      AddCollectiveCommon(a, at);
      a.Cat("dimensions=", BracedList(at.dimensions));
      if (at.use_global_device_ids) a.Add("use_global_device_ids=true");
      break;
    case O::kAllReduce:
    case O::kAllReduceStart:
      AddCollectiveCommon(a, at);
      if (at.use_global_device_ids) a.Add("use_global_device_ids=true");
      break;
    case O::kReduceScatter:
      AddCollectiveCommon(a, at);
      if (at.use_global_device_ids) a.Add("use_global_device_ids=true");
      a.Cat("dimensions=", BracedList(at.dimensions));
      break;
    case O::kAllToAll:
      AddCollectiveCommon(a, at);
      if (!at.dimensions.empty()) a.Cat("dimensions=", BracedList(at.dimensions));
      break;
    case O::kCollectiveBroadcast:
    case O::kRaggedAllToAll:
      AddCollectiveCommon(a, at);
      break;
    case O::kCollectivePermute:
    case O::kCollectivePermuteStart:
      if (at.channel_id) a.Cat("channel_id=", *at.channel_id);
      a.Cat("source_target_pairs=", SourceTargetPairsText(at.source_target_pairs));
      break;
    case O::kReverse:
    case O::kConcatenate:
    case O::kReduce:
    case O::kTranspose:
    case O::kBroadcast:
    case O::kMap:
    case O::kGetDimensionSize:
    case O::kSetDimensionSize:
      a.Cat("dimensions=", BracedList(at.dimensions));
      break;
    case O::kSort:
      a.Cat("dimensions=", BracedList(at.dimensions));
      if (at.is_stable) a.Add("is_stable=true");
      break;
    case O::kScan:
      a.Cat("dimensions=", BracedList(at.dimensions));
      a.Cat("num_carries=", at.num_carries);
      if (at.is_reverse) a.Add("is_reverse=true");
      if (at.is_associative) a.Cat("is_associative=", *at.is_associative ? "true" : "false");
      break;
    case O::kSlice:
      a.Cat("slice=", SliceText(at.slice));
      break;
    case O::kFusion:
      a.Cat("kind=", FusionKindText(at.fusion_kind));
      if (!at.output_to_operand_aliasing.empty())
        a.Cat("output_to_operand_aliasing=", OutputOperandAliasingText(at.output_to_operand_aliasing));
      break;
    case O::kRng:
      a.Cat("distribution=", RandomDistributionText(at.distribution));
      break;
    case O::kParameter:
      if (!at.parameter_replication.empty() && o.print_ids) {
        std::vector<std::string> v;
        for (bool b : at.parameter_replication) v.push_back(b ? "true" : "false");
        a.Cat("parameter_replication={", absl::StrJoin(v, ","), "}");
      }
      break;
    case O::kGetTupleElement:
      a.Cat("index=", at.tuple_index);
      break;
    case O::kReducePrecision:
      a.Cat("exponent_bits=", at.exponent_bits);
      a.Cat("mantissa_bits=", at.mantissa_bits);
      break;
    case O::kInfeed:
      if (!at.infeed_config.empty()) a.Cat("infeed_config=", Quoted(at.infeed_config));
      break;
    case O::kOutfeed:
      a.Cat("outfeed_shape=", ShapeText(at.outfeed_shape ? *at.outfeed_shape
                                        : (inst.operand_count() > 0 && inst.operand(0)
                                               ? inst.operand(0)->shape()
                                               : Shape::Tuple({})),
                                        /*print_layout=*/true));
      if (!at.outfeed_config.empty()) a.Cat("outfeed_config=", Quoted(at.outfeed_config));
      break;
    case O::kConvolution:
      if (at.window && !at.window->dimensions.empty()) a.Cat("window={", WindowText(*at.window), "}");
      if (at.convolution_dimension_numbers)
        a.Cat("dim_labels=", ConvDimLabelsText(*at.convolution_dimension_numbers));
      if (at.feature_group_count != 1) a.Cat("feature_group_count=", at.feature_group_count);
      if (at.batch_group_count != 1) a.Cat("batch_group_count=", at.batch_group_count);
      AddPrecisionConfig(a, at.precision_config);
      break;
    case O::kReduceWindow:
    case O::kSelectAndScatter:
      if (at.window && !at.window->dimensions.empty()) a.Cat("window={", WindowText(*at.window), "}");
      break;
    case O::kCustomCall:
      if (at.window) a.Cat("window={", WindowText(*at.window), "}");
      if (at.convolution_dimension_numbers)
        a.Cat("dim_labels=", ConvDimLabelsText(*at.convolution_dimension_numbers));
      if (at.feature_group_count != 1) a.Cat("feature_group_count=", at.feature_group_count);
      if (at.batch_group_count != 1) a.Cat("batch_group_count=", at.batch_group_count);
      AddPrecisionConfig(a, at.precision_config);
      AddRawAttribute(a, inst, "padding_type");
      a.Cat("custom_call_target=", Quoted(at.custom_call_target));
      if (at.operand_layout_constraints) {
        std::vector<std::string> shapes;
        for (const Shape& s : *at.operand_layout_constraints) shapes.push_back(ShapeText(s, true));
        a.Cat("operand_layout_constraints={", absl::StrJoin(shapes, ", "), "}");
      }
      if (at.custom_call_has_side_effect) a.Add("custom_call_has_side_effect=true");
      AddRawAttribute(a, inst, "literal");
      if (!at.output_to_operand_aliasing.empty())
        a.Cat("output_to_operand_aliasing=", OutputOperandAliasingText(at.output_to_operand_aliasing));
      if (at.custom_call_schedule != CustomCallSchedule::kNone)
        a.Cat("schedule=", CustomCallScheduleText(at.custom_call_schedule));
      if (at.api_version != CustomCallApiVersion::kUnspecified &&
          at.api_version != CustomCallApiVersion::kOriginal)
        a.Cat("api_version=", CustomCallApiVersionText(at.api_version));
      break;
    case O::kPad:
      if (at.padding_config) a.Cat("padding=", PaddingConfigText(*at.padding_config));
      break;
    case O::kDynamicSlice:
      a.Cat("dynamic_slice_sizes=", BracedList(at.dynamic_slice_sizes));
      break;
    case O::kGather:
      if (at.gather_dimension_numbers) a.Add(GatherDimsText(*at.gather_dimension_numbers));
      a.Cat("slice_sizes=", BracedList(at.dynamic_slice_sizes));
      if (at.indices_are_sorted) a.Add("indices_are_sorted=true");
      break;
    case O::kScatter:
      if (at.scatter_dimension_numbers) a.Add(ScatterDimsText(*at.scatter_dimension_numbers));
      if (at.indices_are_sorted) a.Add("indices_are_sorted=true");
      if (at.unique_indices) a.Add("unique_indices=true");
      break;
    case O::kIota:
      a.Cat("iota_dimension=", at.iota_dimension);
      break;
    case O::kDot:
      if (at.dot_dimension_numbers) a.Add(DotDimsText(*at.dot_dimension_numbers));
      AddPrecisionConfig(a, at.precision_config);
      break;
    case O::kRaggedDot:
      if (at.ragged_dot_dimension_numbers) a.Add(RaggedDotDimsText(*at.ragged_dot_dimension_numbers));
      AddPrecisionConfig(a, at.precision_config);
      break;
    case O::kRngBitGenerator:
      a.Cat("algorithm=", RandomAlgorithmText(at.rng_algorithm));
      break;
    default:
      break;
  }
  for (const auto& [name, value] : at.raw_attributes)
    if (!IsPlacedRawAttribute(inst, name)) a.Cat(name, "=", value);
}

}  // namespace printer_internal

std::string PrintSharding(const HloSharding& sharding) {
  return printer_internal::ShardingText(sharding, /*include_metadata=*/true);
}

}  // namespace hloc
