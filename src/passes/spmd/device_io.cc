#include "passes/spmd/device_io.h"

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/sharding_util.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"

namespace hloc::spmd {
namespace {

HloSharding Leaf(const HloSharding& s, int64_t i) {
  return s.kind == HloSharding::Kind::kTuple ? s.tuple_elements.at(i) : s;
}

std::vector<Shape> Leaves(const Shape& s) {
  if (!s.IsTuple()) return {s};
  std::vector<Shape> out;
  for (const Shape& e : s.tuple_shapes())
    for (Shape& l : Leaves(e)) out.push_back(std::move(l));
  return out;
}

// Global dims of a per-device shape under a sharding (exact for even splits, which is what a
// per-device module written elsewhere can tell).
Shape GlobalOf(const Shape& local, const HloSharding& s) {
  if (local.IsTuple()) {
    std::vector<Shape> parts;
    int64_t leaf = 0;
    for (const Shape& e : local.tuple_shapes()) {
      HloSharding sub = s;
      if (s.kind == HloSharding::Kind::kTuple && !e.IsTuple()) sub = Leaf(s, leaf);
      parts.push_back(GlobalOf(e, sub));
      leaf += static_cast<int64_t>(Leaves(e).size());
    }
    return Shape::Tuple(std::move(parts));
  }
  Shape g = local;
  for (int64_t d = 0; d < g.rank(); ++d) g.mutable_dimensions()[d] *= TilesAlong(s, d);
  return g;
}

absl::StatusOr<HloSharding> Normalized(const std::optional<HloSharding>& s, const Shape& shape) {
  if (!s) return ReplicatedSharding();
  return NormalizeSharding(*s, shape);
}

}  // namespace

bool IsMultiDevice(const HloModule& module) {
  return module.config().num_partitions > 1 || module.config().replica_count > 1;
}

SpmdLayout BeginSpmd(const HloModule& module) {
  SpmdLayout layout;
  layout.num_partitions = std::max<int64_t>(1, module.config().num_partitions);
  layout.replica_count = std::max<int64_t>(1, module.config().replica_count);
  if (!IsPartitioned(module)) {
    const HloComputation* entry = module.entry_computation();
    for (const HloInstruction* p : entry->parameters()) layout.global_params.push_back(p->shape());
    layout.global_result = entry->root_instruction()->shape();
    layout.global_known = true;
  }
  return layout;
}

absl::Status FinishSpmd(SpmdLayout& layout, const HloModule& partitioned) {
  const HloModuleConfig& c = partitioned.config();
  const HloComputation* entry = partitioned.entry_computation();
  const bool global = layout.global_known;
  layout.params.clear();
  for (const HloInstruction* p : entry->parameters()) {
    int64_t i = p->attrs().parameter_number;
    std::optional<HloSharding> s = p->attrs().sharding;
    if (i < (int64_t)c.spmd_parameters_shardings.size()) s = c.spmd_parameters_shardings[i];
    if (layout.num_partitions == 1) s.reset();  // one partition: every replica holds it all
    if (global && i >= (int64_t)layout.global_params.size())
      return absl::InvalidArgumentError(absl::StrCat("parameter ", i, " was not in the module before partitioning"));
    auto n = Normalized(s, global ? layout.global_params[i] : p->shape());
    if (!n.ok()) return absl::InvalidArgumentError(absl::StrCat("parameter ", i, ": ", n.status().message()));
    layout.params.push_back(*n);
  }
  const HloInstruction* root = entry->root_instruction();
  std::optional<HloSharding> rs = c.spmd_output_sharding ? c.spmd_output_sharding : root->attrs().sharding;
  if (layout.num_partitions == 1) rs.reset();
  auto r = Normalized(rs, global ? layout.global_result : root->shape());
  if (!r.ok()) return absl::InvalidArgumentError(absl::StrCat("result: ", r.status().message()));
  layout.result = *r;
  if (!global) {
    layout.global_params.clear();
    for (const HloInstruction* p : entry->parameters())
      layout.global_params.push_back(GlobalOf(p->shape(), layout.params[p->attrs().parameter_number]));
    layout.global_result = GlobalOf(root->shape(), layout.result);
  }
  return absl::OkStatus();
}

absl::StatusOr<SpmdLayout> PrepareSpmd(HloModule& module, bool partition) {
  SpmdLayout layout = BeginSpmd(module);
  if (partition && layout.global_known && layout.num_partitions > 1) {
    if (auto st = PropagateShardings(module); !st.ok()) return st.status();
    if (auto st = PartitionModule(module, SpmdOptions{}); !st.ok()) return st.status();
  }
  if (absl::Status st = FinishSpmd(layout, module); !st.ok()) return st;
  return layout;
}

absl::StatusOr<std::vector<std::vector<Literal>>> SplitInputs(const SpmdLayout& layout,
                                                              const std::vector<Literal>& global) {
  std::vector<std::vector<Literal>> args(layout.num_devices());
  for (int64_t d = 0; d < layout.num_devices(); ++d) {
    int64_t partition = d % layout.num_partitions;
    for (size_t i = 0; i < global.size(); ++i) {
      auto shard = ExtractShard(global[i], layout.params.at(i), partition);
      if (!shard.ok())
        return absl::InvalidArgumentError(absl::StrCat("parameter ", i, ", device ", d, ": ", shard.status().message()));
      args[d].push_back(std::move(*shard));
    }
  }
  return args;
}

absl::StatusOr<Literal> JoinOutputs(const SpmdLayout& layout, const std::vector<Literal>& per_device) {
  std::vector<Shape> leaves = Leaves(layout.global_result);
  std::vector<Literal> joined;
  for (size_t leaf = 0; leaf < leaves.size(); ++leaf) {
    std::vector<Literal> shards;
    for (int64_t p = 0; p < layout.num_partitions; ++p) {
      const Literal& out = per_device.at(p);
      shards.push_back(layout.global_result.IsTuple() ? out.tuple_element(leaf) : out);
    }
    auto g = AssembleShards(shards, Leaf(layout.result, leaf), leaves[leaf]);
    if (!g.ok()) return absl::InvalidArgumentError(absl::StrCat("output ", leaf, ": ", g.status().message()));
    joined.push_back(std::move(*g));
  }
  if (!layout.global_result.IsTuple()) return std::move(joined[0]);
  return Literal::MakeTuple(std::move(joined));
}

}  // namespace hloc::spmd
