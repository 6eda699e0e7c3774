#include "runtime/gpu/gpu_partitioned.h"

#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime {

#if !HLOC_HAVE_CUDA

absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitionedOnGpus(const Executable&,
                                                                          const std::vector<std::vector<HostBuffer>>&,
                                                                          const GpuRunOptions&,
                                                                          const gpu::NcclBootstrap&) {
  return GpuRuntimeAvailable();
}

#else

namespace {

// The devices this process drives: [first, first + count).
absl::Status LocalDevices(int64_t num_devices, const gpu::NcclBootstrap& b, int64_t* first, int64_t* count) {
  if (num_devices % b.num_processes != 0)
    return absl::InvalidArgumentError(absl::StrCat("the run's ", num_devices, " devices do not divide among ",
                                                   b.num_processes, " processes (HLOC_NUM_PROCESSES)"));
  *count = num_devices / b.num_processes;
  *first = b.process_id * *count;
  absl::StatusOr<const gpu::CudaDriver*> driver = gpu::LoadCudaDriver();
  if (!driver.ok()) return driver.status();
  int gpus = 0;
  if (absl::Status s = HLOC_CU(**driver, cuDeviceGetCount, "counting GPUs", &gpus); !s.ok()) return s;
  if (gpus < *count)
    return absl::FailedPreconditionError(absl::StrCat(
        "the module runs over ", num_devices, " devices", b.num_processes > 1 ? absl::StrCat(" (", *count, " per process)") : "",
        " but this machine has ", gpus, " GPU", gpus == 1 ? "" : "s", "; run it where there are enough, or over ",
        "several processes (HLOC_NUM_PROCESSES, HLOC_PROCESS_ID, HLOC_NCCL_ID_FILE)"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitionedOnGpus(
    const Executable& executable, const std::vector<std::vector<HostBuffer>>& args, const GpuRunOptions& options,
    const gpu::NcclBootstrap& bootstrap) {
  const int64_t n = executable.num_devices();
  if (static_cast<int64_t>(args.size()) != n)
    return absl::InvalidArgumentError(absl::StrCat("arguments for ", args.size(), " devices, the executable has ", n));
  int64_t first = 0, count = 0;
  if (absl::Status s = LocalDevices(n, bootstrap, &first, &count); !s.ok()) return s;
  std::vector<int> ordinals;
  for (int64_t i = 0; i < count; ++i) ordinals.push_back(static_cast<int>(i));
  absl::StatusOr<std::unique_ptr<gpu::NcclClique>> clique = gpu::NcclClique::Create(n, first, ordinals, bootstrap);
  if (!clique.ok()) return clique.status();
  std::vector<std::vector<HostBuffer>> results(static_cast<size_t>(n));
  std::mutex mu;
  absl::Status first_error = absl::OkStatus();
  auto fail = [&](const absl::Status& s) {
    std::lock_guard<std::mutex> lock(mu);
    if (first_error.ok()) {
      first_error = s;
      (*clique)->Abort();  // no device may wait on this one
    }
  };
  std::vector<std::thread> threads;
  for (int64_t i = 0; i < count; ++i) {
    threads.emplace_back([&, i] {
      GpuRunOptions o = options;
      o.device_ordinal = ordinals[i];
      o.collectives = (*clique)->device(i);
      absl::StatusOr<std::unique_ptr<GpuExecutable>> exe = GpuExecutable::Load(executable, o);
      if (!exe.ok()) return fail(exe.status());
      absl::StatusOr<std::vector<HostBuffer>> r = (*exe)->Run(args[first + i]);
      if (!r.ok()) return fail(absl::Status(r.status().code(), absl::StrCat("device ", first + i, ": ", r.status().message())));
      results[first + i] = std::move(*r);
    });
  }
  for (std::thread& t : threads) t.join();
  if (!first_error.ok()) return first_error;
  return results;
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime
