// What the partitioner adds to a per-device computation beyond ExpanderBuilder's ops: the
// partition id and per-device tables indexed by it, dynamic-slice / pad, and collectives in
// the form XLA's partitioner emits (channel_id, explicit replica_groups of partition ids,
// use_global_device_ids=true, frontend_attributes={is_spmd_generated="true"}).
#pragma once
#include <cstdint>
#include <map>
#include <vector>

#include "passes/expanders/expander_util.h"

namespace hloc::spmd {

// Module-wide state of one partitioning run.
struct SpmdContext {
  HloModule* module = nullptr;
  int64_t num_devices = 1;
  int64_t next_channel_id = 1;
  NameUniquer* instruction_names = nullptr;
  NameUniquer* computation_names = nullptr;
  // Bytes each device sends through the collectives emitted so far (the bench's measure).
  double bytes_sent = 0;
  std::map<PrimitiveType, HloComputation*> add_computations;
};

class SpmdBuilder {
 public:
  SpmdBuilder(SpmdContext& ctx, HloComputation* computation)
      : ctx_(ctx), b_(computation, ctx.instruction_names) {}

  expanders::ExpanderBuilder& b() { return b_; }
  SpmdContext& ctx() { return ctx_; }
  int64_t num_devices() const { return ctx_.num_devices; }

  // u32[] partition-id, one per computation.
  HloInstruction* PartitionId();
  // s32[] holding table[partition id] (a constant when all entries agree).
  HloInstruction* TableLookup(const std::vector<int64_t>& table);
  HloInstruction* DynamicSlice(HloInstruction* x, std::vector<HloInstruction*> starts, std::vector<int64_t> sizes);
  HloInstruction* DynamicUpdateSlice(HloInstruction* x, HloInstruction* update, std::vector<HloInstruction*> starts);
  // Pads dim `dim` of x at the high end to `size` with zeros (x itself when already that size).
  HloInstruction* PadHigh(HloInstruction* x, int64_t dim, int64_t size);
  // Pads (or, negative, trims) dim `dim` of x by `low` / `high` elements of zero.
  HloInstruction* PadDim(HloInstruction* x, int64_t dim, int64_t low, int64_t high);
  HloInstruction* Zero(PrimitiveType t);

  // Collectives over explicit groups of partition ids.
  HloInstruction* AllGather(HloInstruction* x, int64_t dim, const std::vector<std::vector<int64_t>>& groups);
  HloInstruction* AllReduce(HloInstruction* x, HloComputation* reduction,
                            const std::vector<std::vector<int64_t>>& groups);
  HloInstruction* AllToAll(HloInstruction* x, int64_t dim, const std::vector<std::vector<int64_t>>& groups);
  HloInstruction* CollectivePermute(HloInstruction* x, const std::vector<std::pair<int64_t, int64_t>>& pairs);
  // The scalar (a, b) -> a + b computation for element type t (made once per type).
  HloComputation* AddComputation(PrimitiveType t);

 private:
  HloInstruction* MakeTableLookup(const std::vector<int64_t>& table);
  HloInstruction* Collective(std::unique_ptr<HloInstruction> inst, const std::vector<std::vector<int64_t>>& groups);

  SpmdContext& ctx_;
  expanders::ExpanderBuilder b_;
  HloInstruction* partition_id_ = nullptr;
  std::map<std::vector<int64_t>, HloInstruction*> tables_;  // TableLookup results, made once
};

}  // namespace hloc::spmd
