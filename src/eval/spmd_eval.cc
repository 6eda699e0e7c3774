#include "eval/spmd_eval.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/sharding_util.h"

namespace hloc {
namespace {

std::string Where(const HloInstruction& inst) {
  return absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " %", inst.name());
}

}  // namespace

// ---- Rendezvous ---------------------------------------------------------------------------

SpmdRendezvous::SpmdRendezvous(int64_t replica_count, int64_t num_partitions)
    : replica_count_(replica_count),
      num_partitions_(num_partitions),
      waiting_(replica_count * num_partitions, false),
      finished_(replica_count * num_partitions, false),
      at_(replica_count * num_partitions, nullptr),
      slots_(replica_count * num_partitions) {}

absl::Status SpmdRendezvous::Arrive(int64_t device, const HloInstruction& inst, Operands operands) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    slots_[device] = operands;
  }
  return Barrier(device, inst, /*check_same_instruction=*/true);
}

absl::Status SpmdRendezvous::Leave(int64_t device, const HloInstruction& inst) {
  return Barrier(device, inst, /*check_same_instruction=*/false);
}

absl::Status SpmdRendezvous::Barrier(int64_t device, const HloInstruction& inst, bool check_same_instruction) {
  std::unique_lock<std::mutex> lock(mu_);
  if (!error_.ok()) return error_;
  waiting_[device] = true;
  at_[device] = &inst;
  ++arrived_;
  for (int64_t d = 0; d < num_devices(); ++d)
    if (finished_[d]) {
      error_ = absl::FailedPreconditionError(FinishedWhileWaiting(d));
      cv_.notify_all();
      return error_;
    }
  if (arrived_ == num_devices()) {
    if (check_same_instruction) {
      if (absl::Status st = CheckSameInstruction(); !st.ok()) {
        error_ = st;
        cv_.notify_all();
        return error_;
      }
    }
    arrived_ = 0;
    std::fill(waiting_.begin(), waiting_.end(), false);
    ++generation_;
    cv_.notify_all();
    return absl::OkStatus();
  }
  const uint64_t generation = generation_;
  cv_.wait(lock, [&] { return generation_ != generation || !error_.ok(); });
  // A completed barrier counts even when an error came in after it: the error reaches this
  // device at its next barrier or through EvaluatePartitioned.
  return generation_ != generation ? absl::OkStatus() : error_;
}

std::string SpmdRendezvous::FinishedWhileWaiting(int64_t finished) const {
  std::vector<int64_t> waiting;
  const HloInstruction* at = nullptr;
  for (int64_t d = 0; d < num_devices(); ++d)
    if (waiting_[d]) {
      waiting.push_back(d);
      at = at_[d];
    }
  return absl::StrCat("device ", finished, " finished while device", waiting.size() == 1 ? " " : "s ",
                      absl::StrJoin(waiting, ","), waiting.size() == 1 ? " waits" : " wait",
                      at ? absl::StrCat(" at ", Where(*at)) : "");
}

absl::Status SpmdRendezvous::CheckSameInstruction() const {
  for (int64_t d = 1; d < num_devices(); ++d)
    if (at_[d] != at_[0])
      return absl::FailedPreconditionError(absl::StrCat("devices disagree on the next collective: device 0 is at ",
                                                        Where(*at_[0]), ", device ", d, " at ", Where(*at_[d])));
  return absl::OkStatus();
}

void SpmdRendezvous::Abort(absl::Status error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (error_.ok()) error_ = std::move(error);
  cv_.notify_all();
}

void SpmdRendezvous::Finish(int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  finished_[device] = true;
  if (arrived_ > 0 && error_.ok()) {
    error_ = absl::FailedPreconditionError(FinishedWhileWaiting(device));
    cv_.notify_all();
  }
}

absl::Status SpmdRendezvous::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// ---- Groups ---------------------------------------------------------------------------------

namespace {

// XLA's CollectiveOpGroupMode: which ids replica_groups (and source_target_pairs) hold.
enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// all-reduce, all-gather and reduce-scatter carry use_global_device_ids (absent reads as
// false: replica ids over all partitions); the others have no such attribute (XLA passes
// nullopt), so a channel_id makes them cross-partition.
bool HasGlobalDeviceIdsAttr(HloOpcode op) {
  switch (op) {
    case HloOpcode::kAllReduce: case HloOpcode::kAllReduceStart:
    case HloOpcode::kAllGather: case HloOpcode::kAllGatherStart:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<GroupMode> ModeOf(const HloInstruction& inst) {
  const InstructionAttributes& a = inst.attrs();
  if (!a.channel_id) {
    if (a.use_global_device_ids)
      return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": use_global_device_ids=true needs a channel_id"));
    return GroupMode::kCrossReplica;
  }
  if (!HasGlobalDeviceIdsAttr(inst.opcode())) return GroupMode::kCrossPartition;
  return a.use_global_device_ids ? GroupMode::kFlattenedId : GroupMode::kCrossReplicaAndPartition;
}

// The ids (in the mode's id space) of the group holding `id`; every id of `count` when the
// groups are empty.
absl::StatusOr<std::vector<int64_t>> GroupOf(const HloInstruction& inst, int64_t id, int64_t count,
                                             bool groups_required) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ExpandDeviceList(inst.attrs().replica_groups);
  if (!groups.ok())
    return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": replica_groups: ", groups.status().message()));
  if (groups->empty()) {
    if (groups_required)
      return absl::InvalidArgumentError(
          absl::StrCat(Where(inst), ": use_global_device_ids=true needs explicit replica_groups"));
    std::vector<int64_t> all(count);
    for (int64_t i = 0; i < count; ++i) all[i] = i;
    return all;
  }
  std::vector<bool> seen(count, false);
  const std::vector<int64_t>* mine = nullptr;
  for (const std::vector<int64_t>& g : *groups)
    for (int64_t x : g) {
      if (x < 0 || x >= count)
        return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": replica group id ", x, " is outside [0, ", count, ")"));
      if (seen[x]) return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": id ", x, " is in two replica groups"));
      seen[x] = true;
      if (x == id) mine = &g;
    }
  if (mine == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": id ", id, " is in no replica group"));
  return *mine;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> CollectiveParticipants(const HloInstruction& inst, int64_t device,
                                                            int64_t replica_count, int64_t num_partitions) {
  absl::StatusOr<GroupMode> mode = ModeOf(inst);
  if (!mode.ok()) return mode.status();
  const int64_t replica = device / num_partitions, partition = device % num_partitions;
  std::vector<int64_t> out;
  switch (*mode) {
    case GroupMode::kCrossReplica: {
      auto g = GroupOf(inst, replica, replica_count, false);
      if (!g.ok()) return g.status();
      for (int64_t r : *g) out.push_back(r * num_partitions + partition);
      return out;
    }
    case GroupMode::kCrossPartition: {
      auto g = GroupOf(inst, partition, num_partitions, false);
      if (!g.ok()) return g.status();
      for (int64_t p : *g) out.push_back(replica * num_partitions + p);
      return out;
    }
    case GroupMode::kCrossReplicaAndPartition: {
      auto g = GroupOf(inst, replica, replica_count, false);
      if (!g.ok()) return g.status();
      for (int64_t r : *g)
        for (int64_t p = 0; p < num_partitions; ++p) out.push_back(r * num_partitions + p);
      return out;
    }
    case GroupMode::kFlattenedId:
      return GroupOf(inst, device, replica_count * num_partitions, true);
  }
  return out;
}

absl::StatusOr<std::optional<int64_t>> PermuteSource(const HloInstruction& inst, int64_t device,
                                                     int64_t replica_count, int64_t num_partitions) {
  const bool cross_partition = inst.attrs().channel_id.has_value();
  const int64_t replica = device / num_partitions, partition = device % num_partitions;
  const int64_t my_id = cross_partition ? partition : replica;
  const int64_t count = cross_partition ? num_partitions : replica_count;
  std::optional<int64_t> source;
  std::vector<bool> targeted(count, false);
  for (const auto& [src, dst] : inst.attrs().source_target_pairs) {
    if (src < 0 || src >= count || dst < 0 || dst >= count)
      return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": source_target_pairs {", src, ",", dst,
                                                     "} is outside [0, ", count, ")"));
    if (targeted[dst])
      return absl::InvalidArgumentError(absl::StrCat(Where(inst), ": ", dst, " is the target of two pairs"));
    targeted[dst] = true;
    if (dst == my_id) source = src;
  }
  if (!source) return source;
  return cross_partition ? replica * num_partitions + *source : *source * num_partitions + partition;
}

// ---- Running the devices -------------------------------------------------------------------

absl::StatusOr<std::vector<Literal>> EvaluatePartitioned(const HloModule& module,
                                                         const std::vector<std::vector<Literal>>& args_per_device,
                                                         const EvaluatorOptions& options) {
  const int64_t replicas = module.config().replica_count, partitions = module.config().num_partitions;
  if (replicas < 1 || partitions < 1)
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " has replica_count=", replicas,
                                                   " num_partitions=", partitions));
  const int64_t n = replicas * partitions;
  if (static_cast<int64_t>(args_per_device.size()) != n)
    return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), " runs on ", n, " devices (",
                                                   replicas, " replicas x ", partitions, " partitions), got arguments for ",
                                                   args_per_device.size()));
  SpmdRendezvous rendezvous(replicas, partitions);
  std::vector<absl::StatusOr<Literal>> results(n, absl::UnknownError("not run"));
  auto run = [&](int64_t d) {
    EvaluatorOptions opts = options;
    opts.replica_count = replicas;
    opts.replica_id = d / partitions;
    opts.partition_id = d % partitions;
    opts.rendezvous = &rendezvous;
    results[d] = EvaluateModule(module, args_per_device[d], opts);
    if (results[d].ok()) {
      rendezvous.Finish(d);
    } else {
      const absl::Status& st = results[d].status();
      rendezvous.Abort(absl::Status(st.code(), absl::StrCat("device ", d, ": ", st.message())));
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (int64_t d = 0; d < n; ++d) threads.emplace_back(run, d);
  for (std::thread& t : threads) t.join();
  if (absl::Status st = rendezvous.error(); !st.ok()) return st;
  std::vector<Literal> out;
  out.reserve(n);
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

}  // namespace hloc
