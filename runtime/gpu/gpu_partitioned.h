// Running an executable for several devices (num_partitions x replica_count) on this host's
// GPUs: one NCCL clique (runtime/gpu/nccl_collectives.h), one GpuExecutable per device on its
// own GPU, one host thread per device. XLA: PjRt's StreamExecutor client running an SPMD
// executable on its local devices.
//
// A run needs as many GPUs as its devices (per process, with HLOC_NUM_PROCESSES > 1: the
// devices / processes this process drives); fewer is a clear error before any work. When one
// device fails, the clique is aborted so that no other waits forever in a collective, and the
// first error is returned.
#pragma once
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cpu/cpu_executable.h"  // HostBuffer
#include "runtime/executable/executable.h"
#include "runtime/gpu/gpu_executable.h"
#include "runtime/gpu/nccl_collectives.h"

namespace hloc::runtime {

// args[d] are global device d's parameter leaves (d over every device of the run). The result
// holds every device's result leaves; with several processes, only this process's devices'
// (the others' are empty).
absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitionedOnGpus(
    const Executable& executable, const std::vector<std::vector<HostBuffer>>& args, const GpuRunOptions& options,
    const gpu::NcclBootstrap& bootstrap);

}  // namespace hloc::runtime
