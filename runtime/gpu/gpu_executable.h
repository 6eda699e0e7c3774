// Running an Executable on an NVIDIA GPU. Everything CUDA is loaded at run time (dlopen:
// libcuda.so.1, libcublasLt.so.13 / .12, libcudnn.so.9), so the same binary starts on machines
// without a GPU and GPU tests skip cleanly there (GpuRuntimeAvailable says why not).
//   - the PTX in Executable::code is loaded with cuModuleLoadDataEx (JIT to the device's SASS);
//   - device memory is laid out from Executable::allocations: one cuMemAlloc per allocation
//     (constants uploaded once at load), parameters copied in, results copied out;
//   - thunks run in order on one stream: kKernel -> cuLaunchKernel with launch dims, each
//     argument a device pointer (allocation base + slice offset); kGemm -> cuBLASLt matmul with
//     the epilogue and the algorithm (autotuned: runtime/gpu/autotune_cache); kConvolution ->
//     cuDNN; kCopy/kMemset -> cuMemcpyDtoDAsync/cuMemsetD32Async; kWhile/kConditional read the
//     predicate back to the host; kSequential in order;
//   - command buffers: runs of kernel/GEMM thunks are captured once into a CUDA graph and
//     replayed (CommandBufferOptions; XLA's xla_gpu_enable_command_buffer).
// Out of memory gives an error naming the allocation and listing the buffer summary, and frees
// what was allocated, so the process can go on.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/cpu/cpu_executable.h"  // HostBuffer
#include "runtime/executable/executable.h"

namespace hloc::runtime {
namespace gpu {
class NcclDevice;
}

// Why the GPU cannot be used here (no libcuda.so.1, no device, ...), or OK.
absl::Status GpuRuntimeAvailable();

struct CommandBufferOptions {
  bool enabled = true;
  // Thunk kinds a graph may hold; the compiler's CommandBufferConversionPass chose what went into
  // each kCommandBuffer, so by default everything it can put there is replayed as a graph.
  // "kWhile": while loops whose bodies can be captured run as WHILE conditional nodes, the
  // whole loop one graph (XLA's WHILE command type; device_loops.h).
  // "kCollective": NCCL collectives the compiler put in a command buffer (its COLLECTIVES kind)
  // are captured too, async ones with their collective stream forked into the graph.
  std::vector<std::string> kinds = {"kKernel", "kGemm", "kConvolution", "kCopy", "kMemset", "kWhile", "kCollective"};
  int64_t min_graph_size = 2;                               // shorter runs stay plain thunks
  // Plain executions of a command buffer before it is captured (XLA's
  // xla_gpu_graph_num_runs_to_instantiate): the first run loads kernels lazily and lets the
  // libraries initialize outside a capture.
  int64_t runs_before_capture = 1;
  // Streams a capture may fork onto (graph_lanes.h): independent thunks become parallel graph
  // branches. 0: each command buffer's own choice, made by the compiler (Thunk::lanes, the
  // profile's command_buffer_lanes); 1-16 overrides it (hloc run --graph-lanes N).
  int64_t lanes = 0;
};

struct GpuRunOptions {
  int device_ordinal = 0;
  // The device of a run over several (RunPartitionedOnGpus makes one per device): its NCCL
  // communicators. Null: an executable for one device makes its own one-rank communicator when
  // it has collectives (or, without NCCL, runs them as the copies they are on one device).
  gpu::NcclDevice* collectives = nullptr;
  CommandBufferOptions command_buffers;
  std::string autotune_cache;   // file of chosen GEMM algorithms keyed by profile + problem; empty: none
  bool autotune = true;         // time cuBLASLt's candidate algorithms (and cuDNN's) at Load
  bool allow_tf32 = true;       // f32 GEMMs on TF32 tensor cores (XLA's DEFAULT precision)
  // f32 convolutions on TF32 tensor cores too (XLA's DEFAULT_MATH algorithms may use them). Off
  // (hloc run --no-conv-tf32), flax_resnet_stage_train.small's BatchNorm scale gradient matched
  // XLA's to 3e-7 where with TF32 it missed by 7e-3 (threshold 2e-3); but cuDNN's non-tensor-core
  // engines ran the corpus's large f32 convolutions 2.5-18x slower (conv_bn_relu_pool 96 -> 444 us,
  // eqx_dilated_conv1d 2.0 -> 28 ms), far slower than XLA, so XLA's large-module algorithms must
  // use tensor cores. Which engine XLA picked for the small module is the open question.
  bool conv_tf32 = true;
  bool verbose = false;         // Load describes the device, memory and library choices on stderr
  // Synchronize after every thunk and name the one that failed (slow; for diagnosing a fault).
  // The environment variable HLOC_GPU_SYNC=1 turns it on too.
  bool sync_each_thunk = false;
};

struct GpuTiming {
  double median_us = 0, min_us = 0;  // per call
  int64_t calls = 0;
  std::vector<double> batch_us;       // each batch's time per call, in batch order
};

// One thunk's time in ProfileThunks: every execution of it (a while body's thunks run once per
// iteration) summed over the profiled calls.
struct ThunkTime {
  const Thunk* thunk = nullptr;
  double total_us = 0;      // CUDA events around each execution, summed
  int64_t executions = 0;   // over all profiled calls
};

class GpuExecutable {
 public:
  static absl::StatusOr<std::unique_ptr<GpuExecutable>> Load(Executable executable, const GpuRunOptions& options);
  virtual ~GpuExecutable() = default;
  // One call: upload arguments, run, download results.
  virtual absl::StatusOr<std::vector<HostBuffer>> Run(const std::vector<HostBuffer>& arguments) = 0;
  // One call on device memory (the C API's DLPack path): arguments[i] is the device address of
  // parameter i's bytes, results[j] of room for result j, both row-major and on this
  // executable's device (its primary context). No host round trip, and no copy where buffer
  // assignment allows: a parameter alone in its allocation and never written is read where the
  // caller holds it, a result alone in its output allocation is written where the caller wants
  // it (each when 256-byte aligned); the others are copied device to device. CUDA graphs are
  // captured per binding of caller memory (a few kept). Work queued on the context before the
  // call (the producer's streams) is waited for first; the call returns when the results are
  // written. A parameter or result whose layout is not row-major is an error (the host path,
  // Run, moves layouts).
  virtual absl::Status RunOnDevice(const std::vector<uint64_t>& arguments, const std::vector<uint64_t>& results) = 0;
  // How many arguments and results the last RunOnDevice used in place (the rest it copied).
  virtual int64_t last_in_place() const = 0;
  // Timing the way DEVICE.md says XLA is timed: arguments uploaded once, back-to-back calls with
  // results ready, median over `batches` batches of `calls_per_batch` calls (after a warm-up).
  virtual absl::StatusOr<GpuTiming> Benchmark(const std::vector<HostBuffer>& arguments, int batches,
                                              int calls_per_batch) = 0;
  // Per-thunk times (`hloc run --per-thunk`): `calls` calls after a warm-up, every leaf thunk
  // (command buffers run thunk by thunk) between two CUDA events. In thunk order.
  virtual absl::StatusOr<std::vector<ThunkTime>> ProfileThunks(const std::vector<HostBuffer>& arguments, int calls) = 0;
  virtual const Executable& executable() const = 0;
  // What Load decided, one line each: device, allocations, workspace, kernels, each GEMM's and
  // convolution's algorithm and how it was chosen, command buffers.
  virtual std::string Describe() const = 0;
  // Describe's last line alone: command buffers on or off, and how many were captured into CUDA
  // graphs (each at its first call) or ran thunk by thunk.
  virtual std::string DescribeCommandBuffers() const = 0;
  // Device memory this executable holds (allocations + workspace), in bytes.
  virtual int64_t device_bytes() const = 0;
};

// Device memory on device `ordinal`'s primary context, for results handed to a caller (the C
// API's DLPack path): it outlives any executable and is freed by FreeDeviceMemory.
absl::StatusOr<uint64_t> AllocateDeviceMemory(int64_t bytes, int ordinal = 0);
absl::Status FreeDeviceMemory(uint64_t address, int ordinal = 0);
absl::Status CopyDeviceToHost(uint64_t address, int64_t bytes, void* host, int ordinal = 0);

// "NVIDIA H200 (device 0, sm_90, 132 SMs, 139.8 GiB), driver 13000" or why there is none.
absl::StatusOr<std::string> GpuDeviceDescription(int device_ordinal = 0);
// The same device's compute capability, SM count and memory (for choosing its profile).
struct GpuDeviceSummary {
  int cc_major = 0, cc_minor = 0;
  int64_t sm_count = 0;
  int64_t total_memory = 0;  // bytes
};
absl::StatusOr<GpuDeviceSummary> GpuDeviceSummaryOf(int device_ordinal = 0);

}  // namespace hloc::runtime
