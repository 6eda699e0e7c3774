// The partitioner's state and handlers, shared by spmd_partitioner.cc (structure, generic ops,
// control flow) and spmd_dot_conv.cc (dots, convolutions, reductions). Not a public header.
#pragma once
#include <map>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "ir/computation.h"
#include "passes/spmd/spmd_builder.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {

// The per-device value of an original instruction and the sharding it is in (normalized;
// tuples spelled leaf by leaf).
struct PValue {
  HloInstruction* hlo = nullptr;
  HloSharding sharding;
};

// The per-device shape of a value of `shape` (tuples leaf by leaf).
Shape LocalShape(const Shape& shape, const HloSharding& s);
// The sharding of leaf range [begin, begin + LeafCount(element)) of a tuple sharding.
HloSharding SubSharding(const HloSharding& s, const Shape& tuple_shape, int64_t index);

class Partitioner {
 public:
  // `whole`: every device runs every op on whole arrays (the fallback when partitioning failed);
  // only shard_map bodies stay per device.
  Partitioner(HloModule& module, SpmdContext& ctx, const SpmdOptions& options, bool whole = false)
      : module_(module), ctx_(ctx), options_(options), whole_(whole) {}

  // A new per-device computation for `c`, its parameters in `params`, its root in `root`.
  absl::StatusOr<HloComputation*> PartitionComputation(const HloComputation& c, const std::vector<HloSharding>& params,
                                                       const HloSharding& root);

  // --- used by the handlers ------------------------------------------------------------------
  // The value of `orig` in sharding `want` (resharded and remembered).
  absl::StatusOr<HloInstruction*> Get(SpmdBuilder& b, const HloInstruction* orig, const HloSharding& want);
  absl::StatusOr<HloInstruction*> Reshard(SpmdBuilder& b, HloInstruction* x, const Shape& shape,
                                          const HloSharding& from, const HloSharding& to, const HloInstruction& op);
  const PValue& ValueOf(const HloInstruction* orig) const { return values_.at(orig); }
  void Set(const HloInstruction* orig, HloInstruction* hlo, HloSharding s);
  HloSharding ShardingOf(const HloInstruction* orig) const;  // its propagated sharding
  int64_t n() const { return ctx_.num_devices; }
  const SpmdOptions& options() const { return options_; }
  SpmdContext& ctx() { return ctx_; }
  void Warn(const std::string& message);

  // Adds `inst` (operands set) with shape `shape`; shape inference checks it.
  absl::StatusOr<HloInstruction*> AddLocal(SpmdBuilder& b, std::unique_ptr<HloInstruction> inst, const Shape& shape);
  // A copy of `inst` over local `operands` with shape `shape`, its called computations shared.
  absl::StatusOr<HloInstruction*> CloneLocal(SpmdBuilder& b, const HloInstruction& inst,
                                             std::vector<HloInstruction*> operands, const Shape& shape);

  // --- handlers (each sets the value of `inst`) -----------------------------------------------
  absl::Status Handle(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleByOperands(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleReplicated(SpmdBuilder& b, const HloInstruction& inst, bool warn);
  absl::Status HandleManual(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleCustomCall(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleWhile(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleCalls(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleDot(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleConvolution(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleReduce(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleGather(SpmdBuilder& b, const HloInstruction& inst);   // spmd_gather_scatter.cc
  absl::Status HandleScatter(SpmdBuilder& b, const HloInstruction& inst);
  absl::Status HandleTopK(SpmdBuilder& b, const HloInstruction& inst);  // spmd_topk.cc

 private:
  HloModule& module_;
  SpmdContext& ctx_;
  const SpmdOptions& options_;
  bool whole_ = false;
  absl::flat_hash_map<const HloInstruction*, PValue> values_;
  std::map<std::pair<const HloInstruction*, std::string>, HloInstruction*> reshard_cache_;
};

}  // namespace hloc::spmd
