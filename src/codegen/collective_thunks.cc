// Collectives over several devices as runtime::CollectiveConfig (see collective_thunks.h).
#include "codegen/collective_thunks.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/opcode.h"
#include "ir/sharding_util.h"

namespace hloc::codegen {
namespace {

// Position of logical dimension `d` in `shape`'s layout: the elements more minor and the count
// of rows more major (the array viewed as [outer, dims[d], inner]).
struct DimView {
  int64_t outer = 1;
  int64_t inner = 1;
};
DimView ViewAround(const Shape& shape, int64_t d) {
  std::vector<int64_t> m2m;
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == shape.rank()) {
    m2m = shape.layout().minor_to_major;
  } else {
    for (int64_t i = shape.rank() - 1; i >= 0; --i) m2m.push_back(i);
  }
  DimView v;
  bool more_major = false;
  for (int64_t dim : m2m) {
    if (dim == d) {
      more_major = true;
      continue;
    }
    (more_major ? v.outer : v.inner) *= shape.dimensions(dim);
  }
  return v;
}

std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m2m;
  for (int64_t i = s.rank() - 1; i >= 0; --i) m2m.push_back(i);
  return m2m;
}

int64_t ElementBytes(const Shape& s) { return std::max(1, ByteWidth(s.element_type())); }

// Operand and result leaf i must agree in type and layout (the runtime moves bytes between them)
// and in every dimension but `scaled` (-1: none), where in * in_factor == out * out_factor.
absl::Status CheckPair(const Shape& in, const Shape& out, int64_t scaled, int64_t in_factor, int64_t out_factor,
                       size_t i) {
  bool ok = in.element_type() == out.element_type() && in.rank() == out.rank() &&
            MinorToMajor(in) == MinorToMajor(out);
  for (int64_t d = 0; ok && d < in.rank(); ++d) {
    ok = d == scaled ? in.dimensions(d) * in_factor == out.dimensions(d) * out_factor
                     : in.dimensions(d) == out.dimensions(d);
  }
  if (ok) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat("operand leaf ", i, " (", in.ToString(), ") and result leaf ", i, " (",
                                               out.ToString(), ") differ in type, layout or shape in a way "
                                               "this backend's collectives do not move"));
}

std::string BaseOpName(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduceStart: return "all-reduce";
    case HloOpcode::kAllGatherStart: return "all-gather";
    case HloOpcode::kCollectivePermuteStart: return "collective-permute";
    default: return std::string(HloOpcodeString(op));
  }
}

int64_t UniformGroupSize(const std::vector<std::vector<int64_t>>& groups) {
  int64_t size = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  for (const auto& g : groups)
    if (static_cast<int64_t>(g.size()) != size) return -1;
  return size;
}

// Fills outer / chunk_bytes for every leaf pair according to the op.
absl::Status FillGeometry(const std::string& op, const HloInstruction& inst, const std::vector<Shape>& ins,
                          const std::vector<Shape>& outs, int64_t group_size, runtime::CollectiveConfig& c) {
  const bool has_dim = !inst.attrs().dimensions.empty();
  const int64_t d = has_dim ? inst.attrs().dimensions[0] : -1;
  c.dimension = (op == "all-gather" || op == "reduce-scatter" || op == "all-to-all") ? d : -1;
  for (size_t i = 0; i < ins.size(); ++i) {
    const Shape& in = ins[i];
    const Shape& out = outs[i];
    if (d >= in.rank() && c.dimension >= 0)
      return absl::InvalidArgumentError(absl::StrCat("dimension ", d, " is outside ", in.ToString()));
    int64_t outer = 1, chunk = in.byte_size();
    if (op == "all-gather" || op == "reduce-scatter" || (op == "all-to-all" && has_dim)) {
      if (!has_dim) return absl::InvalidArgumentError(absl::StrCat(op, " needs dimensions={d}"));
      const bool gather = op == "all-gather", scatter = op == "reduce-scatter";
      absl::Status s = CheckPair(in, out, d, gather ? group_size : 1, scatter ? group_size : 1, i);
      if (!s.ok()) return s;
      const Shape& piece_of = gather ? in : out;  // the shape one participant's piece has along d
      int64_t piece = piece_of.dimensions(d);
      if (op == "all-to-all") {
        if (in.dimensions(d) % group_size != 0)
          return absl::InvalidArgumentError(absl::StrCat("all-to-all dimension ", d, " of ", in.ToString(),
                                                         " does not split into ", group_size, " pieces"));
        piece = in.dimensions(d) / group_size;
      }
      const DimView v = ViewAround(gather ? out : in, d);
      outer = v.outer;
      chunk = piece * v.inner * ElementBytes(in);
    } else {
      absl::Status s = CheckPair(in, out, -1, 1, 1, i);
      if (!s.ok()) return s;
    }
    c.outer.push_back(outer);
    c.chunk_bytes.push_back(chunk);
    c.element_types.push_back(std::string(PrimitiveTypeName(in.element_type())));
  }
  return absl::OkStatus();
}

}  // namespace

ShapeIndex CollectiveResultIndex(const HloInstruction& inst) {
  if (inst.opcode() == HloOpcode::kAllGatherStart || inst.opcode() == HloOpcode::kCollectivePermuteStart) return {1};
  return {};
}

absl::StatusOr<runtime::CollectiveConfig> CollectiveConfigFor(const HloInstruction& inst,
                                                              const std::vector<Shape>& ins,
                                                              const std::vector<Shape>& outs, DeviceCounts c) {
  runtime::CollectiveConfig config;
  config.op = BaseOpName(inst.opcode());
  if (ins.size() != outs.size())
    return absl::UnimplementedError(absl::StrCat(config.op, " with ", ins.size(), " operand leaves and ",
                                                 outs.size(), " result leaves"));
  const bool permute = config.op == "collective-permute";
  // As the evaluator (eval_collectives.cc): the 4-operand form writes slices of a given output.
  if (permute && inst.operand_count() == 4)
    return absl::UnimplementedError("the in-place (4-operand) collective-permute form is not supported");
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = CollectiveDeviceGroups(inst, c);
  if (!groups.ok()) return groups.status();
  config.groups = std::move(*groups);
  if (permute) {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs = PermuteDevicePairs(inst, c);
    if (!pairs.ok()) return pairs.status();
    config.source_target_pairs = std::move(*pairs);
  }
  if (config.op == "all-reduce" || config.op == "reduce-scatter") {
    absl::StatusOr<std::string> r = CollectiveReduction(inst);
    if (!r.ok()) return r.status();
    config.reduction = *r;
  }
  const int64_t group_size = UniformGroupSize(config.groups);
  if (group_size <= 0 && config.op != "all-reduce" && !permute && config.op != "collective-broadcast")
    return absl::InvalidArgumentError(absl::StrCat(config.op, " needs replica groups of one size"));
  if (config.op == "all-to-all" && inst.attrs().dimensions.empty()) {
    if (static_cast<int64_t>(ins.size()) != group_size)
      return absl::InvalidArgumentError(absl::StrCat("all-to-all without dimensions needs one operand per group member (",
                                                     group_size, "), has ", ins.size()));
    // Operand k goes to member k as its result `rank`: every operand and result one shape.
    for (size_t i = 1; i < ins.size(); ++i) {
      if (ins[i].element_type() != ins[0].element_type() || ins[i].dimensions() != ins[0].dimensions() ||
          MinorToMajor(ins[i]) != MinorToMajor(ins[0]))
        return absl::UnimplementedError(absl::StrCat("all-to-all operands ", ins[0].ToString(), " and ",
                                                     ins[i].ToString(), " differ; the tuple form moves one shape"));
    }
  }
  if (absl::Status s = FillGeometry(config.op, inst, ins, outs, group_size, config); !s.ok()) return s;
  return config;
}

}  // namespace hloc::codegen
