// Collective thunks on NCCL, loaded at run time (dlopen libnccl.so.2) like cuBLAS, so the same
// binary starts where there is no NCCL. XLA: xla/backends/gpu/collectives/nccl_*.cc and the
// Nccl*Thunks of xla/service/gpu/runtime.
//
// One run's devices form a clique: one NCCL communicator per device, world rank = the global
// device id (replica * num_partitions + partition). A collective whose groups are not the whole
// world runs on communicators split from it (ncclCommSplit: color = group, key = position), made
// the first time each device reaches it and kept. runtime::CollectiveConfig says what each op
// does with its operand and result leaves (executable.h); pieces that are not contiguous under
// the layouts (outer > 1) are staged through a scratch buffer with 2-D copies.
//
// One process drives every GPU of its host, one thread per device. Several processes (hosts)
// find each other through a unique id: process 0 makes it and writes it to a file the others
// read (NcclBootstrap; `hloc run` takes it from HLOC_NUM_PROCESSES, HLOC_PROCESS_ID and
// HLOC_NCCL_ID_FILE, as torchrun's environment does for PyTorch). Each process then runs the
// devices [process_id * local, (process_id + 1) * local) on its local GPUs 0..local-1.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

// Why NCCL cannot be loaded, or OK.
absl::Status NcclAvailable();
// "NCCL 2.28.3" for the loaded library, or why there is none.
absl::StatusOr<std::string> NcclVersionString();

struct NcclBootstrap {
  int num_processes = 1;
  int process_id = 0;
  std::string id_file;  // process 0 writes the unique id here; the others wait for it
  int wait_seconds = 300;
  // From HLOC_NUM_PROCESSES / HLOC_PROCESS_ID / HLOC_NCCL_ID_FILE (one process when unset);
  // malformed values are errors naming the variable.
  static absl::StatusOr<NcclBootstrap> FromEnvironment();
};

#if HLOC_HAVE_CUDA

struct NcclLib;
class NcclClique;

// One device's side of the clique: its world communicator and those split from it.
class NcclDevice {
 public:
  int64_t device_id() const { return device_id_; }
  int64_t num_devices() const { return num_devices_; }
  // Runs the kCollective thunk `t` (collective.op set: all-reduce, all-gather, reduce-scatter,
  // all-to-all, collective-permute, collective-broadcast) on `stream`; `args` are the thunk's
  // arguments as device pointers, in order.
  absl::Status Run(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  ~NcclDevice();

 private:
  friend class NcclClique;
  using Comm = void*;  // ncclComm_t
  absl::StatusOr<Comm> CommFor(const CollectiveConfig& c, int* rank, int* size);
  absl::StatusOr<CUdeviceptr> Scratch(const Thunk& t, int64_t bytes, int which);
  absl::Status AllReduce(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  absl::Status AllGather(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  absl::Status ReduceScatter(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  absl::Status AllToAll(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  absl::Status Permute(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);
  absl::Status Broadcast(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream);

  const NcclLib* lib_ = nullptr;
  const CudaContext* context_ = nullptr;
  int64_t device_id_ = 0, num_devices_ = 1;
  Comm world_ = nullptr;
  std::map<std::vector<std::vector<int64_t>>, Comm> split_;        // by groups
  std::map<std::pair<const Thunk*, int>, std::pair<CUdeviceptr, int64_t>> scratch_;  // per thunk
};

// The communicators of one run's devices that live in this process.
class NcclClique {
 public:
  // Devices first_device + i (of num_devices) on local GPUs ordinals[i].
  static absl::StatusOr<std::unique_ptr<NcclClique>> Create(int64_t num_devices, int64_t first_device,
                                                           const std::vector<int>& ordinals,
                                                           const NcclBootstrap& bootstrap);
  ~NcclClique();
  int64_t local_count() const { return static_cast<int64_t>(devices_.size()); }
  NcclDevice* device(int64_t local_index) { return devices_[local_index].get(); }
  // Aborts every communicator, so that no device waits on one that failed.
  void Abort();
  std::string Describe() const;

 private:
  std::vector<std::unique_ptr<NcclDevice>> devices_;
  std::string description_;
};

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
