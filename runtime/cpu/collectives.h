// In-process collectives for CpuExecutable::RunPartitioned: every device runs the same thunks on
// its own thread with its own buffers, and a kCollective thunk (runtime::CollectiveConfig) makes
// the devices of its group meet at a Rendezvous: each copies its operands into its staging
// buffer, deposits it and waits for the group; each then reads the group's deposits and writes
// its own results (reductions in group order, so every device gets the same bits on every run);
// a second wait keeps a staging buffer alive until the whole group has read it.
//
// Errors never hang the others: a device that fails aborts the rendezvous (every waiter returns
// the first error); a device that finishes its program while a group member waits for it in a
// collective aborts the run, and so does every running device waiting at a collective that
// others never reach (the programs took different collective paths). There are no timeouts.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {

// What the thunk needs at run time, checked once at load: each device's group and rank, the
// operand and result bytes per leaf and where each operand lies in a staging buffer.
struct CollectivePlan {
  std::vector<int> group_of;         // per device: index into config.groups, -1 when in none
  std::vector<int> rank_of;          // per device: position in its group
  std::vector<int> source_rank_of;   // collective-permute, per device: its source's rank, -1: none
  int64_t group_size = 0;            // of the first group; every group's for the ops whose pieces
                                     // depend on it (all-gather, reduce-scatter, all-to-all)
  std::vector<int64_t> in_bytes, out_bytes, staging_offset;
  int64_t staging_bytes = 0;
};

// Checks a kCollective thunk whose collective.op is set against its argument slices and the
// executable's device count (groups, sizes, reduction and element types); errors say what differs.
absl::StatusOr<CollectivePlan> PlanCollective(const Thunk& thunk, int64_t num_devices);

// The meeting point of one run's devices.
class Rendezvous {
 public:
  explicit Rendezvous(int64_t num_devices);

  // Device `group[rank]` deposits `data` at the meeting of (`key`, `group_index`), waits until
  // the group has deposited, calls read(deposits in group order), then waits until every member
  // has read. Returns the run's first error if the run was aborted meanwhile, or an Aborted error
  // when a member finished its program without coming.
  absl::Status Meet(const void* key, int group_index, const std::vector<int64_t>& group, int rank,
                    const uint8_t* data, const std::string& what,
                    const std::function<void(const std::vector<const uint8_t*>&)>& read);

  // Records the first error (later ones are dropped) and wakes every waiter.
  void Abort(const absl::Status& error);
  // Device `device` ran its program to the end.
  void Finished(int64_t device);
  // The first error, OK when none.
  absl::Status error();

 private:
  struct Meeting {
    int64_t generation = 0;
    int arrived = 0, departed = 0;
    bool reading = false;
    std::vector<const uint8_t*> slots;
    std::vector<bool> present;
  };
  // A member that has not arrived but finished its program: the meeting can never complete.
  std::string MissingMember(const Meeting& m, const std::vector<int64_t>& group) const;
  // Every device that has not finished waits for members that have not arrived: no meeting can
  // complete (they stand at different collectives). Names where each one waits.
  std::string Stuck() const;

  std::mutex mu_;
  std::condition_variable cv_;
  absl::node_hash_map<std::pair<const void*, int>, Meeting> meetings_;  // stable references
  std::vector<bool> finished_;
  int64_t running_;                     // devices that have not finished
  std::vector<std::string> waiting_at_;  // per device: the collective it waits to meet at, or ""
  int64_t waiting_ = 0;                 // devices waiting for their group to arrive
  bool aborted_ = false;
  absl::Status error_;
};

// Runs collective thunk `t` (planned by PlanCollective) as device `device` of a run over
// `num_partitions` partitions; `args` are the thunk's argument addresses in this device's buffers.
// `rendezvous` may be null when only this device runs (Run rather than RunPartitioned): then a
// collective whose group holds other devices is an error. `staging` is the device's scratch.
absl::Status RunCollective(const Thunk& t, const CollectivePlan& plan, int64_t device, int64_t num_partitions,
                           const std::vector<uint8_t*>& args, Rendezvous* rendezvous, std::vector<uint8_t>& staging);

}  // namespace hloc::runtime
