// The evaluator over many devices: one per-device (SPMD) program run on num_partitions x
// replica_count devices, each on its own thread, with exact collectives. It is the oracle the
// SPMD partitioner and the multi-device backends are checked against.
//
// Device d is replica d / num_partitions, partition d % num_partitions (XLA's flattened id).
// Every device of an SPMD program executes the same collectives in the same order, so the
// devices meet at one rendezvous per collective: each deposits its operands in its slot, all
// wait (barrier 1), each computes its own result from the slots of its group, all wait again
// (barrier 2) before the slots are reused. There are no timeouts: a device that fails aborts
// the run, and a device that returns while others wait (or before they arrive) fails it, so
// every device returns instead of waiting forever.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "eval/evaluator.h"
#include "eval/ops.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace hloc {

class SpmdRendezvous {
 public:
  SpmdRendezvous(int64_t replica_count, int64_t num_partitions);
  SpmdRendezvous(const SpmdRendezvous&) = delete;
  SpmdRendezvous& operator=(const SpmdRendezvous&) = delete;

  int64_t replica_count() const { return replica_count_; }
  int64_t num_partitions() const { return num_partitions_; }
  int64_t num_devices() const { return replica_count_ * num_partitions_; }

  // Deposits `operands` of `inst` as `device`'s contribution and waits until every device has
  // deposited (barrier 1). Fails when the run was aborted, when a device already returned, or
  // when the devices stand at different instructions.
  absl::Status Arrive(int64_t device, const HloInstruction& inst, Operands operands);
  // What `device` deposited; valid from a successful Arrive until Leave.
  Operands operands(int64_t device) const { return slots_[device]; }
  // Waits until every device has computed its result from the slots (barrier 2).
  absl::Status Leave(int64_t device, const HloInstruction& inst);

  // Ends the run with `error` (the first one wins): waiting devices and later arrivals fail.
  void Abort(absl::Status error);
  // `device` returned from its program. A device still waiting, or arriving later, can never
  // be met by it, so that fails the run.
  void Finish(int64_t device);
  // The first error (OK when none).
  absl::Status error() const;

 private:
  absl::Status Barrier(int64_t device, const HloInstruction& inst, bool check_same_instruction);
  // Message for "device F finished while devices ... wait at <op> %x"; mu_ held.
  std::string FinishedWhileWaiting(int64_t finished) const;
  // Error unless every device stands at the same instruction; mu_ held.
  absl::Status CheckSameInstruction() const;

  const int64_t replica_count_, num_partitions_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t arrived_ = 0;        // devices waiting at the current barrier
  uint64_t generation_ = 0;    // barriers completed
  std::vector<bool> waiting_;  // per device: at the current barrier
  std::vector<bool> finished_;
  std::vector<const HloInstruction*> at_;  // per device: the collective it waits at
  std::vector<Operands> slots_;
  absl::Status error_;
};

// Runs the entry computation of `module` on every device (module.config(): num_partitions x
// replica_count), device d on args_per_device[d] (its shard of each entry parameter), and
// returns each device's result in device order. `options` applies to every device; its
// replica_id / partition_id / replica_count / rendezvous are set per device. The first error
// of any device is returned, prefixed with the device.
absl::StatusOr<std::vector<Literal>> EvaluatePartitioned(const HloModule& module,
                                                         const std::vector<std::vector<Literal>>& args_per_device,
                                                         const EvaluatorOptions& options = {});

// The devices (flattened ids, in the order the group lists them) that take part with `device`
// in collective `inst`, following XLA's CollectiveOpGroupMode: no channel_id -> replica ids,
// channel_id -> partition ids (all-reduce, all-gather and reduce-scatter: replica ids over all
// partitions, or flattened ids with use_global_device_ids). Empty replica_groups mean every id
// of the mode.
absl::StatusOr<std::vector<int64_t>> CollectiveParticipants(const HloInstruction& inst, int64_t device,
                                                            int64_t replica_count, int64_t num_partitions);

// collective-permute / collective-permute-start: the device whose operand `device` receives
// (nullopt: none, the result is zeros), with source_target_pairs read in the group mode's id
// space (partition ids with a channel_id, replica ids without).
absl::StatusOr<std::optional<int64_t>> PermuteSource(const HloInstruction& inst, int64_t device,
                                                     int64_t replica_count, int64_t num_partitions);

}  // namespace hloc
