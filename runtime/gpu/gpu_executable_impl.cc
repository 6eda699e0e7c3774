// The GPU executable itself (see gpu_executable.h): Load checks and prepares everything once,
// so Run only enqueues work; every error names the module, the thunk and what was being done.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/graph_lanes.h"
#include "runtime/gpu/graph_timer.h"
#include "runtime/gpu/cublaslt.h"
#include "runtime/gpu/cuda_driver.h"
#include "runtime/gpu/cudnn.h"
#include "runtime/gpu/cufft.h"
#include "runtime/gpu/device_loops.h"
#include "runtime/gpu/gpu_executable_internal.h"
#include "runtime/gpu/gpu_linalg.h"
#include "runtime/gpu/nccl_collectives.h"
#include "runtime/executable/linalg_config.h"

#if HLOC_HAVE_CUDA
namespace hloc::runtime::gpu {
namespace {

#define GPU_RETURN_IF_ERROR(expr) \
  do {                            \
    absl::Status _st = (expr);    \
    if (!_st.ok()) return _st;    \
  } while (0)

std::string ShapeString(const ArrayShape& s) {
  return absl::StrCat(s.element_type, "[", absl::StrJoin(s.dimensions, ","), "]");
}

std::vector<int64_t> DefaultLayout(size_t rank) {
  std::vector<int64_t> m2m(rank);
  for (size_t i = 0; i < rank; ++i) m2m[i] = static_cast<int64_t>(rank - 1 - i);
  return m2m;
}

// Kinds a CUDA graph can hold: work that is enqueued on the stream without the host waiting.
// NCCL collectives only where the compiler put them in a command buffer (its COLLECTIVES kind,
// `nccl`), never in a device loop's body, whose conditional graph nodes NCCL does not promise.
bool Capturable(const Thunk& t, bool nccl) {
  switch (t.kind) {
    case ThunkKind::kKernel:
    case ThunkKind::kGemm:
    case ThunkKind::kConvolution:
    case ThunkKind::kCopy:
    case ThunkKind::kMemset:
      return true;
    case ThunkKind::kCollective:
      return nccl || t.collective.op.empty() || t.collective.op == "partition-id" || t.collective.op == "replica-id";
    case ThunkKind::kSequential:
    case ThunkKind::kCommandBuffer:
      return std::all_of(t.body.begin(), t.body.end(), [nccl](const Thunk& b) { return Capturable(b, nccl); });
    default:
      return false;
  }
}

// The alignment the compiler assumed of every buffer (buffer assignment's GPU alignment: vector
// loads and cuBLAS/cuDNN rely on it): caller memory less aligned is copied, not used in place.
constexpr uint64_t kCallerAlignment = 256;
// CUDA graph sets kept, one per binding of caller memory (Rebind).
constexpr size_t kGraphBindings = 4;

class GpuExecutableImpl : public GpuExecutable {
 public:
  GpuExecutableImpl(Executable exe, const GpuRunOptions& options) : exe_(std::move(exe)), options_(options) {
    const char* env = std::getenv("HLOC_GPU_SYNC");
    if (env != nullptr && std::string(env) == "1") options_.sync_each_thunk = true;
  }

  ~GpuExecutableImpl() override { Release(); }

  absl::Status Init() {
    origin_ = exe_.module_name.empty() ? std::string("executable") : exe_.module_name;
    GPU_RETURN_IF_ERROR(ValidateExecutable(exe_, origin_));
    if (exe_.platform != "gpu") {
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": compiled for platform '", exe_.platform,
                                                     "', not for the GPU (compile with a GPU --profile)"));
    }
    absl::StatusOr<const CudaContext*> ctx = GetCudaContext(options_.device_ordinal);
    if (!ctx.ok()) return ctx.status();
    ctx_ = *ctx;
    d_ = ctx_->driver;
    GPU_RETURN_IF_ERROR(ctx_->MakeCurrent());
    GPU_RETURN_IF_ERROR(CheckTarget());
    bool has_kernels = false, has_library = false;
    GPU_RETURN_IF_ERROR(Check(exe_.thunks, &has_kernels, &has_library));
    GPU_RETURN_IF_ERROR(SetUpCollectives());
    if (has_kernels) GPU_RETURN_IF_ERROR(LoadModule());
    GPU_RETURN_IF_ERROR(Allocate());
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamCreate, Where("creating the stream"), &stream_, CU_STREAM_NON_BLOCKING));
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventCreate, Where("creating events"), &start_, CU_EVENT_DEFAULT));
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventCreate, Where("creating events"), &stop_, CU_EVENT_DEFAULT));
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemAllocHost, Where("allocating pinned host memory for predicates"), &pinned_, 64));
    GPU_RETURN_IF_ERROR(Bind(exe_.thunks));
    if (has_library) GPU_RETURN_IF_ERROR(PrepareLibraryCalls());
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamSynchronize, Where("finishing the load"), stream_));
    if (options_.verbose) std::cerr << Describe();
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<HostBuffer>> Run(const std::vector<HostBuffer>& arguments) override {
    std::lock_guard<std::mutex> lock(mu_);
    GPU_RETURN_IF_ERROR(ctx_->MakeCurrent());
    Rebind(own_);
    GPU_RETURN_IF_ERROR(Upload(arguments));
    GPU_RETURN_IF_ERROR(ExecuteAll("running"));
    std::vector<HostBuffer> results(exe_.result_shapes.size());
    for (size_t i = 0; i < results.size(); ++i) {
      results[i].shape = exe_.result_shapes[i];
      results[i].data.resize(static_cast<size_t>(results[i].shape.byte_size()));
      if (results[i].data.empty()) continue;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoHAsync, Where(absl::StrCat("downloading result ", i)),
                                  results[i].data.data(), Address(exe_.result_slices[i]), results[i].data.size(), stream_));
    }
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamSynchronize, Where("downloading the results"), stream_));
    return results;
  }

  absl::Status RunOnDevice(const std::vector<uint64_t>& arguments, const std::vector<uint64_t>& results) override {
    if (arguments.size() != exe_.parameter_shapes.size() || results.size() != exe_.result_shapes.size())
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": expects ", exe_.parameter_shapes.size(),
                                                     " arguments and ", exe_.result_shapes.size(), " results, got ",
                                                     arguments.size(), " and ", results.size()));
    GPU_RETURN_IF_ERROR(CheckRowMajor(exe_.parameter_shapes, "parameter"));
    GPU_RETURN_IF_ERROR(CheckRowMajor(exe_.result_shapes, "result"));
    std::lock_guard<std::mutex> lock(mu_);
    GPU_RETURN_IF_ERROR(ctx_->MakeCurrent());
    // The producer's kernels may still be running on its own streams (ours does not wait for
    // them: it is a non-blocking stream).
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuCtxSynchronize, Where("waiting for the arguments' producers")));
    // Zero-copy where buffer assignment allows it (CallerBindable) and the caller's address is as
    // aligned as the compiler assumed; the rest is copied in and out on the device.
    std::vector<CUdeviceptr> binding = own_;
    std::vector<bool> arg_in_place(arguments.size()), result_in_place(results.size());
    auto bind = [&](const BufferSlice& slice, bool bindable, uint64_t address) {
      if (!bindable || address % kCallerAlignment != 0) return false;
      binding[static_cast<size_t>(slice.allocation)] = static_cast<CUdeviceptr>(address);
      return true;
    };
    for (size_t i = 0; i < arguments.size(); ++i)
      arg_in_place[i] = bind(exe_.parameter_slices[i], param_bindable_[i], arguments[i]);
    for (size_t j = 0; j < results.size(); ++j)
      result_in_place[j] = bind(exe_.result_slices[j], result_bindable_[j], results[j]);
    Rebind(binding);
    for (size_t i = 0; i < arguments.size(); ++i) {
      const BufferSlice& slice = exe_.parameter_slices[i];
      const int64_t bytes = exe_.parameter_shapes[i].byte_size();
      if (arg_in_place[i] || !slice.valid() || bytes == 0) continue;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoDAsync, Where(absl::StrCat("copying argument ", i, " on the device")),
                                  Address(slice), static_cast<CUdeviceptr>(arguments[i]), bytes, stream_));
    }
    GPU_RETURN_IF_ERROR(ExecuteAll("running"));
    for (size_t j = 0; j < results.size(); ++j) {
      const int64_t bytes = exe_.result_shapes[j].byte_size();
      if (result_in_place[j] || bytes == 0) continue;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoDAsync, Where(absl::StrCat("copying result ", j, " on the device")),
                                  static_cast<CUdeviceptr>(results[j]), Address(exe_.result_slices[j]), bytes, stream_));
    }
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamSynchronize, Where("finishing the device results"), stream_));
    last_in_place_ = static_cast<int64_t>(std::count(arg_in_place.begin(), arg_in_place.end(), true) +
                                          std::count(result_in_place.begin(), result_in_place.end(), true));
    return absl::OkStatus();
  }

  absl::Status CheckRowMajor(const std::vector<ArrayShape>& shapes, const char* what) const {
    for (size_t i = 0; i < shapes.size(); ++i) {
      const std::vector<int64_t> row_major = DefaultLayout(shapes[i].dimensions.size());
      if (!shapes[i].minor_to_major.empty() && shapes[i].minor_to_major != row_major)
        return absl::FailedPreconditionError(absl::StrCat(origin_, ": ", what, " ", i, " (", ShapeString(shapes[i]),
                                                          ") is not row-major; run it from host arrays"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<GpuTiming> Benchmark(const std::vector<HostBuffer>& arguments, int batches,
                                      int calls_per_batch) override {
    if (batches < 1 || calls_per_batch < 1) return absl::InvalidArgumentError("Benchmark needs batches and calls >= 1");
    std::lock_guard<std::mutex> lock(mu_);
    GPU_RETURN_IF_ERROR(ctx_->MakeCurrent());
    Rebind(own_);
    GPU_RETURN_IF_ERROR(Upload(arguments));
    // Warm-up: the first call captures the command buffers; a few more settle clocks and caches.
    for (int i = 0; i < 3; ++i) GPU_RETURN_IF_ERROR(ExecuteAll("warming up"));
    std::vector<double> per_call;
    for (int b = 0; b < batches; ++b) {
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventRecord, Where("timing"), start_, stream_));
      for (int c = 0; c < calls_per_batch; ++c) GPU_RETURN_IF_ERROR(Execute(exe_.thunks));
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventRecord, Where("timing"), stop_, stream_));
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventSynchronize, Where("timing (a fault in the module?)"), stop_));
      float ms = 0;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventElapsedTime, Where("timing"), &ms, start_, stop_));
      per_call.push_back(1000.0 * ms / calls_per_batch);
    }
    GpuTiming t;
    t.batch_us = per_call;
    std::sort(per_call.begin(), per_call.end());
    const size_t n = per_call.size();
    t.median_us = n % 2 ? per_call[n / 2] : (per_call[n / 2 - 1] + per_call[n / 2]) / 2;
    t.min_us = per_call.front();
    t.calls = static_cast<int64_t>(batches) * calls_per_batch;
    return t;
  }

  absl::StatusOr<std::vector<ThunkTime>> ProfileThunks(const std::vector<HostBuffer>& arguments, int calls) override {
    if (calls < 1) return absl::InvalidArgumentError("ProfileThunks needs calls >= 1");
    std::lock_guard<std::mutex> lock(mu_);
    GPU_RETURN_IF_ERROR(ctx_->MakeCurrent());
    Rebind(own_);
    GPU_RETURN_IF_ERROR(Upload(arguments));
    GPU_RETURN_IF_ERROR(ExecuteAll("warming up"));
    std::map<const Thunk*, ThunkTime> times;
    profiling_ = true;
    absl::Status status = absl::OkStatus();
    for (int c = 0; c < calls && status.ok(); ++c) {
      status = ExecuteAll("profiling");
      // Every recorded pair is complete once the stream is synchronized.
      for (const Pending& p : pending_) {
        float ms = 0;
        if (status.ok()) status = HLOC_CU(*d_, cuEventElapsedTime, Where("profiling"), &ms, p.start, p.stop);
        ThunkTime& t = times[p.thunk];
        t.thunk = p.thunk;
        t.total_us += 1000.0 * ms;
        ++t.executions;
      }
      used_events_ = 0;
      pending_.clear();
    }
    profiling_ = false;
    if (!status.ok()) return status;
    std::vector<ThunkTime> out;
    CollectLeaves(exe_.thunks, times, out);
    return out;
  }

  const Executable& executable() const override { return exe_; }
  int64_t device_bytes() const override { return device_bytes_; }

  std::string Describe() const override {
    std::string out = absl::StrCat("gpu: ", origin_, " on ", ctx_->info.ToString(), ", driver ", d_->driver_version, "\n");
    absl::StrAppend(&out, "gpu: memory: ", MemorySummary(exe_, workspace_bytes_), "\n");
    absl::StrAppend(&out, "gpu: ", functions_.size(), " kernels loaded from ", exe_.code.size(), " bytes of PTX (",
                    exe_.target, ")\n");
    for (const auto& [t, g] : gemms_)
      absl::StrAppend(&out, "gpu: gemm '", t->name, "': ", g->description(), "; algorithm by ", g->chosen_by(), "\n");
    for (const auto& [t, c] : convs_)
      absl::StrAppend(&out, "gpu: conv '", t->name, "': ", c->description(), "; algorithm by ", c->chosen_by(), "\n");
    for (const auto& [t, f] : ffts_)
      absl::StrAppend(&out, "gpu: fft '", t->name, "': cuFFT ", f->description(), ", ", f->workspace_bytes(),
                      " workspace bytes", t->kernel_name.empty() ? "" : ", scaled by " + t->kernel_name, "\n");
    if (has_collectives_) absl::StrAppend(&out, "gpu: collectives: ", collectives_note_, "\n");
    return out + DescribeCommandBuffers();
  }

  int64_t last_in_place() const override { return last_in_place_; }

  std::string DescribeCommandBuffers() const override {
    if (!options_.command_buffers.enabled) return "gpu: command buffers: off\n";
    int captured = 0, failed = 0;
    for (const auto& [t, g] : CurrentGraphs()) captured += g.exec != nullptr, failed += g.failed;
    // A command buffer is captured at its first call: before any call, both counts are 0.
    return absl::StrCat("gpu: command buffers: on, ", captured, " captured into CUDA graphs, ", failed,
                        " ran thunk by thunk (capture failed)", calls_ == 0 ? " before the first call" : "", "\n");
  }

 private:
  struct Launch {
    CUfunction function = nullptr;
    std::vector<CUdeviceptr> args;
    std::vector<void*> params;  // &args[i]: what cuLaunchKernel takes
  };
  struct Graph {
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    bool failed = false;
    int64_t plain_runs = 0;
  };
  // The CUDA graphs captured while the allocations had one binding (Rebind).
  struct GraphSet {
    std::vector<CUdeviceptr> binding;
    std::map<const Thunk*, Graph> graphs;
    int64_t last_call = 0;  // Rebind's count when it was last used
  };

  std::string Where(const std::string& what) const { return absl::StrCat(what, " (module ", origin_, ")"); }

  // ---- Collectives (runtime/gpu/nccl_collectives.h) ----------------------------------------
  // Which communicator runs the module's collectives: the run's (several devices), a one-rank
  // clique of its own (one device), or, without NCCL on one device, the copies they are there.
  absl::Status SetUpCollectives() {
    if (options_.collectives != nullptr) {
      nccl_ = options_.collectives;
      device_id_ = nccl_->device_id();
      collectives_note_ = absl::StrCat("NCCL, device ", device_id_, " of ", nccl_->num_devices());
    } else if (exe_.num_devices() > 1) {
      if (has_collectives_ || HasDeviceIds(exe_.thunks))
        return absl::FailedPreconditionError(absl::StrCat(
            origin_, ": this executable runs over ", exe_.num_devices(), " devices (num_partitions=", exe_.num_partitions,
            ", replica_count=", exe_.replica_count, "); run it on that many GPUs (hloc run does)"));
    } else if (has_collectives_) {
      absl::StatusOr<std::unique_ptr<NcclClique>> clique =
          NcclClique::Create(1, 0, {options_.device_ordinal}, NcclBootstrap{});
      if (clique.ok()) {
        own_clique_ = std::move(*clique);
        nccl_ = own_clique_->device(0);
        collectives_note_ = own_clique_->Describe();
      } else {
        collectives_note_ = absl::StrCat("one device, run as copies (", clique.status().message(), ")");
      }
    }
    if (!has_collectives_) return absl::OkStatus();
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamCreate, Where("creating the collective stream"), &collective_stream_,
                                CU_STREAM_NON_BLOCKING));
    return HLOC_CU(*d_, cuEventCreate, Where("creating events"), &collective_ready_, CU_EVENT_DISABLE_TIMING);
  }

  static bool HasDeviceIds(const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kCollective && (t.collective.op == "partition-id" || t.collective.op == "replica-id"))
        return true;
      if (HasDeviceIds(t.body) || HasDeviceIds(t.condition)) return true;
      for (const ThunkSequence& b : t.branches)
        if (HasDeviceIds(b)) return true;
    }
    return false;
  }

  // One device's collective without NCCL: the operands themselves (a permute without a self
  // pair: zeros).
  absl::Status RunCollectiveLocally(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
    const size_t n = args.size() / 2;
    bool self = t.collective.op != "collective-permute";
    for (const auto& [a, b] : t.collective.source_target_pairs) self |= a == 0 && b == 0;
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = static_cast<size_t>(std::min(t.arguments[i].size, t.arguments[n + i].size));
      if (!self) {
        GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemsetD8Async, Where("zeroing a permute's result"), args[n + i], 0,
                                    static_cast<size_t>(t.arguments[n + i].size), stream));
      } else if (args[i] != args[n + i] && bytes > 0) {
        GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoDAsync, Where("copying (one-device collective)"), args[n + i],
                                    args[i], bytes, stream));
      }
    }
    return absl::OkStatus();
  }

  absl::Status RunCollective(const Thunk& t) {
    const CollectiveConfig& c = t.collective;
    if (c.op == "partition-id" || c.op == "replica-id") {
      const int64_t p = std::max<int64_t>(1, exe_.num_partitions);
      const unsigned id = static_cast<unsigned>(c.op == "partition-id" ? device_id_ % p : device_id_ / p);
      return HLOC_CU(*d_, cuMemsetD32Async, Where("writing the device id"), Address(t.arguments[0]), id, 1, stream_);
    }
    if (c.op == "collective-done") {
      auto it = async_done_.find(c.async_id);
      if (it == async_done_.end()) return absl::OkStatus();  // its start ran in order
      return HLOC_CU(*d_, cuStreamWaitEvent, Where("waiting for an async collective"), stream_, it->second, 0);
    }
    std::vector<CUdeviceptr> args;
    for (const BufferSlice& s : t.arguments) args.push_back(Address(s));
    CUstream stream = stream_;
    if (c.async_id >= 0) {  // on its own stream, after what the compute stream did so far
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventRecord, Where("starting an async collective"), collective_ready_, stream_));
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamWaitEvent, Where("starting an async collective"), collective_stream_,
                                  collective_ready_, 0));
      stream = collective_stream_;
    }
    absl::Status s = nccl_ != nullptr ? nccl_->Run(t, args, stream) : RunCollectiveLocally(t, args, stream);
    if (!s.ok()) return ThunkFailed(t, s);
    if (c.async_id < 0) return absl::OkStatus();
    CUevent& done = async_done_[c.async_id];
    if (done == nullptr)
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventCreate, Where("creating events"), &done, CU_EVENT_DISABLE_TIMING));
    return HLOC_CU(*d_, cuEventRecord, Where("finishing an async collective"), done, collective_stream_);
  }
  // A thunk the executable cannot run as described (InvalidArgument).
  absl::Status ThunkError(const Thunk& t, const std::string& what) const {
    return absl::InvalidArgumentError(absl::StrCat(origin_, ": thunk ", ThunkKindName(t.kind), " '", t.name, "': ", what));
  }
  // A thunk that failed while running, `s` kept with its code: "ORIGIN: thunk KIND 'NAME'
  // (kernel K): message".
  absl::Status ThunkFailed(const Thunk& t, const absl::Status& s) const {
    return absl::Status(s.code(), absl::StrCat(origin_, ": thunk ", ThunkKindName(t.kind), " '", t.name, "'",
                                               t.kind == ThunkKind::kKernel ? " (kernel " + t.kernel_name + ")" : "",
                                               ": ", s.message()));
  }
  CUdeviceptr Address(const BufferSlice& s) const { return buffers_[s.allocation] + static_cast<CUdeviceptr>(s.offset); }

  absl::Status CheckTarget() {
    int major = 0, minor = 0;
    if (exe_.target.size() >= 5 && exe_.target.rfind("sm_", 0) == 0) {
      int v = 0;
      if (absl::SimpleAtoi(exe_.target.substr(3, exe_.target.find_first_not_of("0123456789", 3) - 3), &v)) {
        major = v / 10, minor = v % 10;
      }
    }
    if (major == 0) return absl::OkStatus();  // unknown target: the JIT will say
    if (major * 10 + minor > ctx_->info.cc_major * 10 + ctx_->info.cc_minor) {
      return absl::FailedPreconditionError(absl::StrCat(origin_, ": compiled for ", exe_.target, ", but ",
                                                        ctx_->info.ToString(), " is older; compile with its profile"));
    }
    return absl::OkStatus();
  }

  // Load-time checks of what executing relies on.
  absl::Status Check(const ThunkSequence& seq, bool* kernels, bool* library) {
    for (const Thunk& t : seq) {
      for (const BufferSlice& s : t.arguments)
        if (!s.valid()) return ThunkError(t, "an argument has no buffer");
      switch (t.kind) {
        case ThunkKind::kKernel: {
          *kernels = true;
          if (t.kernel_name.empty()) return ThunkError(t, "no kernel name");
          const LaunchDimensions& l = t.launch;
          const int64_t threads = l.block_x * l.block_y * l.block_z;
          if (l.block_x < 1 || l.block_y < 1 || l.block_z < 1 || threads > 1024 || l.grid_x < 1 || l.grid_y < 1 ||
              l.grid_z < 1 || l.grid_x > INT32_MAX || l.grid_y > 65535 || l.grid_z > 65535 ||
              l.shared_memory_bytes < 0 || l.shared_memory_bytes > 227 * 1024) {
            return ThunkError(t, absl::StrFormat("launch dimensions grid (%d,%d,%d) block (%d,%d,%d) shared %d bytes are "
                                                 "outside CUDA's limits",
                                                 l.grid_x, l.grid_y, l.grid_z, l.block_x, l.block_y, l.block_z,
                                                 l.shared_memory_bytes));
          }
          break;
        }
        case ThunkKind::kGemm:
          *library = true;
          if (t.arguments.size() != 3 && t.arguments.size() != 4) {
            return ThunkError(t, absl::StrCat("expects 3 or 4 arguments {A, B, [C or bias], D}, has ", t.arguments.size()));
          }
          break;
        case ThunkKind::kConvolution:
          *library = true;
          break;
        case ThunkKind::kFft:
          *library = true;
          if (t.arguments.size() != 2) return ThunkError(t, "expects {input, output}");
          if (!t.kernel_name.empty()) *kernels = true;  // the compiler's IFFT/IRFFT scaling kernel
          break;
        case ThunkKind::kCopy:
          if (t.arguments.size() != 2) return ThunkError(t, "expects {source, destination}");
          // size 0 means the whole source, as on the CPU runtime.
          if ((t.size > 0 ? t.size : t.arguments[0].size) > std::min(t.arguments[0].size, t.arguments[1].size)) {
            return ThunkError(t, absl::StrCat("copies ", t.size, " bytes between slices of ", t.arguments[0].size,
                                              " and ", t.arguments[1].size));
          }
          break;
        case ThunkKind::kMemset:
          if (t.arguments.size() != 1) return ThunkError(t, "expects one argument");
          break;
        case ThunkKind::kWhile:
          if (!t.predicate.valid() || t.predicate.size < 1) return ThunkError(t, "no predicate buffer");
          GPU_RETURN_IF_ERROR(Check(t.condition, kernels, library));
          GPU_RETURN_IF_ERROR(Check(t.body, kernels, library));
          break;
        case ThunkKind::kConditional:
          if (!t.predicate.valid() || (t.predicate.size != 1 && t.predicate.size < 4)) {
            return ThunkError(t, "no pred or s32 branch index buffer");
          }
          if (t.branches.empty()) return ThunkError(t, "no branches");
          if (t.predicate.size == 1 && t.branches.size() != 2) return ThunkError(t, "a pred selects one of 2 branches");
          for (const ThunkSequence& b : t.branches) GPU_RETURN_IF_ERROR(Check(b, kernels, library));
          break;
        case ThunkKind::kSequential:
        case ThunkKind::kCommandBuffer:
          GPU_RETURN_IF_ERROR(Check(t.body, kernels, library));
          break;
        case ThunkKind::kCollective: {
          const std::string& op = t.collective.op;
          if (op == "partition-id" || op == "replica-id") {
            if (t.arguments.size() != 1 || t.arguments[0].size < 4) return ThunkError(t, "writes one u32");
            break;
          }
          if (op == "collective-done") {
            if (!t.arguments.empty()) return ThunkError(t, "collective-done takes no arguments");
            break;
          }
          size_t reads = 0, writes = 0;
          for (size_t i = 0; i < t.arguments.size(); ++i)
            ((i < t.written.size() ? t.written[i] : i >= t.arguments.size() / 2) ? writes : reads)++;
          if (reads != writes) return ThunkError(t, "a collective needs as many results as operands");
          if (!op.empty()) has_collectives_ = true;
          break;
        }
        case ThunkKind::kCustomCall:
          if (IsLinalgTarget(t.target)) {  // cuSOLVER / cuBLAS (gpu_linalg.h), made in CreateLibraryCalls
            *library = true;
            break;
          }
          return ThunkError(t, absl::StrCat("custom-call target '", t.target, "' has no GPU implementation"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status LoadModule() {
    if (exe_.code.empty()) return absl::InvalidArgumentError(absl::StrCat(origin_, ": kernels but no PTX"));
    std::string ptx(exe_.code.begin(), exe_.code.end());  // NUL-terminated for the JIT
    std::vector<char> error_log(1 << 16, 0), info_log(1 << 12, 0);
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
                           CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size() - 1)),
                      info_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(info_log.size() - 1))};
    CUresult r = d_->cuModuleLoadDataEx(&module_, ptx.c_str(), 4, opts, values);
    if (r != CUDA_SUCCESS) {
      module_ = nullptr;
      std::string log(error_log.data());
      return CuCheck(*d_, r, "cuModuleLoadDataEx",
                     absl::StrCat("JIT-compiling ", ptx.size(), " bytes of PTX for ", exe_.target, " on ",
                                  ctx_->info.ToString(), " (module ", origin_, "); JIT log: ",
                                  log.empty() ? "(empty)" : log));
    }
    return absl::OkStatus();
  }

  absl::Status Allocate() {
    buffers_.assign(exe_.allocations.size(), 0);
    for (size_t i = 0; i < exe_.allocations.size(); ++i) {
      const BufferAllocation& a = exe_.allocations[i];
      const int64_t bytes = std::max<int64_t>((a.size + 255) / 256 * 256, 256);
      absl::Status s = HLOC_CU(*d_, cuMemAlloc, Where("allocating"), &buffers_[i], static_cast<size_t>(bytes));
      if (!s.ok()) return OutOfMemory(s, absl::StrCat("allocation #", a.index, " (", AllocationKind(a), ")"), bytes);
      device_bytes_ += bytes;
      if (a.is_constant && !a.constant_data.empty()) {
        GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyHtoD, Where(absl::StrCat("uploading constant allocation #", a.index)),
                                    buffers_[i], a.constant_data.data(),
                                    std::min<size_t>(a.constant_data.size(), static_cast<size_t>(a.size))));
      }
    }
    own_ = buffers_;
    graph_sets_.assign(1, GraphSet{own_, {}, 0});
    current_set_ = 0;
    FindCallerBindable();
    return absl::OkStatus();
  }

  // ---- Caller memory in place (RunOnDevice) ------------------------------------------------
  // A parameter may be read where the caller holds it when its allocation holds it alone and the
  // program never writes it (not aliased with an output); a result may be written where the caller
  // wants it when it alone is in an output allocation no larger than it (temps that die before it
  // is written may share that allocation: they fit). Constants and parameters passed through to
  // the result are copied.
  void FindCallerBindable() {
    std::vector<int> users(exe_.allocations.size(), 0);
    for (const BufferSlice& s : exe_.parameter_slices)
      if (s.valid()) ++users[static_cast<size_t>(s.allocation)];
    for (const BufferSlice& s : exe_.result_slices)
      if (s.valid()) ++users[static_cast<size_t>(s.allocation)];
    auto alone = [&](const BufferSlice& s, int64_t bytes) -> const BufferAllocation* {
      if (!s.valid() || s.offset != 0 || bytes == 0 || users[static_cast<size_t>(s.allocation)] != 1) return nullptr;
      const BufferAllocation& a = exe_.allocations[static_cast<size_t>(s.allocation)];
      return a.size <= bytes ? &a : nullptr;
    };
    param_bindable_.assign(exe_.parameter_slices.size(), false);
    for (size_t i = 0; i < exe_.parameter_slices.size(); ++i) {
      const BufferAllocation* a = alone(exe_.parameter_slices[i], exe_.parameter_shapes[i].byte_size());
      param_bindable_[i] = a != nullptr && a->is_entry_parameter && a->parameter_number == static_cast<int64_t>(i) &&
                           a->parameter_shape_index.empty() && !a->maybe_live_out;
    }
    result_bindable_.assign(exe_.result_slices.size(), false);
    for (size_t j = 0; j < exe_.result_slices.size(); ++j) {
      const BufferAllocation* a = alone(exe_.result_slices[j], exe_.result_shapes[j].byte_size());
      result_bindable_[j] = a != nullptr && a->maybe_live_out && !a->is_entry_parameter && !a->is_constant;
    }
  }

  // Points the allocations at `binding`: kernels' argument arrays follow, and the CUDA graphs are
  // those captured for this binding (XLA's command buffers are updated when allocations move;
  // here each binding keeps its own, a few at a time, so a caller whose buffers take turns, as
  // x = f(x) does with two, captures each once).
  void Rebind(const std::vector<CUdeviceptr>& binding) {
    ++binds_;
    if (binding == buffers_) {
      graph_sets_[current_set_].last_call = binds_;
      return;
    }
    buffers_ = binding;
    for (auto& [t, l] : launches_)
      for (size_t i = 0; i < l.args.size(); ++i) l.args[i] = Address(t->arguments[i]);
    size_t found = graph_sets_.size(), oldest = 0;
    for (size_t k = 0; k < graph_sets_.size(); ++k) {
      if (graph_sets_[k].binding == binding) found = k;
      if (graph_sets_[k].last_call < graph_sets_[oldest].last_call) oldest = k;
    }
    if (found == graph_sets_.size()) {
      if (graph_sets_.size() < kGraphBindings) {
        graph_sets_.push_back(GraphSet{binding, {}, 0});
      } else {
        found = oldest;
        DestroyGraphs(graph_sets_[found]);  // one still running is freed when it finishes
        graph_sets_[found].binding = binding;
      }
    }
    current_set_ = found;
    graph_sets_[found].last_call = binds_;
  }

  void DestroyGraphs(GraphSet& set) {
    for (auto& [t, g] : set.graphs) {
      if (g.exec != nullptr) d_->cuGraphExecDestroy(g.exec);
      if (g.graph != nullptr) d_->cuGraphDestroy(g.graph);
    }
    set.graphs.clear();
  }

  std::map<const Thunk*, Graph>& CurrentGraphs() { return graph_sets_[current_set_].graphs; }
  const std::map<const Thunk*, Graph>& CurrentGraphs() const {
    static const std::map<const Thunk*, Graph> kNone;
    return graph_sets_.empty() ? kNone : graph_sets_[current_set_].graphs;
  }

  // The caller's error for a failed allocation, with what was asked and what the device holds.
  absl::Status OutOfMemory(const absl::Status& s, const std::string& what, int64_t bytes) {
    size_t free_bytes = 0, total = 0;
    d_->cuMemGetInfo(&free_bytes, &total);
    const std::string text = absl::StrFormat(
        "%s: cannot allocate %s on the GPU: %.1f MiB (%d bytes) asked; %.1f MiB held by this executable already, "
        "%.1f MiB (%d bytes) of %.1f MiB free on the device%s. Buffers: %s. (%s)",
        origin_, what, bytes / 1048576.0, bytes, device_bytes_ / 1048576.0, free_bytes / 1048576.0,
        static_cast<int64_t>(free_bytes), total / 1048576.0, GpuMemoryLimitNote(), MemorySummary(exe_, workspace_bytes_),
        s.message());
    Release();  // everything this executable took goes back now; the process stays usable
    return absl::Status(s.code() == absl::StatusCode::kResourceExhausted ? s.code() : absl::StatusCode::kResourceExhausted,
                        text);
  }

  void Release() {
    if (d_ == nullptr) return;
    if (ctx_ != nullptr) (void)ctx_->MakeCurrent();
    if (stream_ != nullptr) d_->cuStreamSynchronize(stream_);
    for (GraphSet& set : graph_sets_) DestroyGraphs(set);
    graph_sets_.clear();
    if (loops_ != nullptr) loops_->Release();
    loops_.reset();
    loop_counters_.clear();
    for (CUstream a : aux_streams_) d_->cuStreamDestroy(a);
    aux_streams_.clear();
    for (ForkLevel& f : fork_levels_) {
      for (CUstream s : f.streams) d_->cuStreamDestroy(s);
      for (CUevent e : f.events) d_->cuEventDestroy(e);
    }
    fork_levels_.clear();
    lane_plans_.clear();
    gemms_.clear();
    convs_.clear();
    linalg_.clear();
    ffts_.clear();
    // Only the executable's own allocations (buffers_ may point at a caller's memory); before
    // Allocate finished, buffers_ holds what it took so far.
    for (CUdeviceptr& p : own_.empty() ? buffers_ : own_)
      if (p != 0) d_->cuMemFree(p), p = 0;
    own_.clear();
    buffers_.assign(buffers_.size(), 0);
    if (workspace_ != 0) d_->cuMemFree(workspace_), workspace_ = 0;
    if (pinned_ != nullptr) d_->cuMemFreeHost(pinned_), pinned_ = nullptr;
    for (CUevent e : events_) d_->cuEventDestroy(e);
    events_.clear();
    if (start_ != nullptr) d_->cuEventDestroy(start_), start_ = nullptr;
    if (stop_ != nullptr) d_->cuEventDestroy(stop_), stop_ = nullptr;
    if (collective_stream_ != nullptr) d_->cuStreamSynchronize(collective_stream_);
    for (auto& [id, e] : async_done_) d_->cuEventDestroy(e);
    async_done_.clear();
    if (collective_ready_ != nullptr) d_->cuEventDestroy(collective_ready_), collective_ready_ = nullptr;
    if (collective_stream_ != nullptr) d_->cuStreamDestroy(collective_stream_), collective_stream_ = nullptr;
    nccl_ = nullptr;
    own_clique_.reset();
    if (stream_ != nullptr) d_->cuStreamDestroy(stream_), stream_ = nullptr;
    if (module_ != nullptr) d_->cuModuleUnload(module_), module_ = nullptr;
    device_bytes_ = 0;
  }

  // Kernels' argument arrays, built once: buffers live as long as the executable.
  absl::Status Bind(const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kKernel || (t.kind == ThunkKind::kFft && !t.kernel_name.empty())) {
        auto it = functions_.find(t.kernel_name);
        if (it == functions_.end()) {
          CUfunction f = nullptr;
          absl::Status s = HLOC_CU(*d_, cuModuleGetFunction,
                                   absl::StrCat("looking up kernel '", t.kernel_name, "' of thunk '", t.name,
                                                "' in the PTX (module ", origin_, ")"),
                                   &f, module_, t.kernel_name.c_str());
          if (!s.ok()) return s;
          it = functions_.emplace(t.kernel_name, f).first;
        }
        const LaunchDimensions& l = t.launch;
        int max_threads = 0;
        if (d_->cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, it->second) == CUDA_SUCCESS &&
            max_threads < l.block_x * l.block_y * l.block_z) {
          return ThunkError(t, absl::StrCat("kernel '", t.kernel_name, "' runs at most ", max_threads,
                                            " threads per block (registers), its launch asks for ",
                                            l.block_x * l.block_y * l.block_z));
        }
        if (d_->cuFuncGetParamInfo != nullptr) {
          // The compiler's convention: one 8-byte pointer per argument slice. A mismatch would
          // make the kernel read garbage addresses, so it is an error here, not a fault later.
          size_t offset = 0, size = 0;
          const size_t n = t.arguments.size();
          for (size_t i = 0; i < n; ++i) {
            size = 0;
            if (d_->cuFuncGetParamInfo(it->second, i, &offset, &size) != CUDA_SUCCESS || size != 8) {
              return ThunkError(t, absl::StrCat("kernel '", t.kernel_name, "' does not take ", n,
                                                " pointer parameters (parameter ", i, ": ",
                                                size == 0 ? "missing" : absl::StrCat(size, " bytes"), ")"));
            }
          }
          if (d_->cuFuncGetParamInfo(it->second, n, &offset, &size) == CUDA_SUCCESS) {
            return ThunkError(t, absl::StrCat("kernel '", t.kernel_name, "' takes more than the ", n,
                                              " parameters its thunk passes"));
          }
        }
        if (l.shared_memory_bytes > 48 * 1024) {
          GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuFuncSetAttribute, Where("allowing large dynamic shared memory"),
                                      it->second, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                      static_cast<int>(l.shared_memory_bytes)));
        }
        Launch& launch = launches_[&t];
        launch.function = it->second;
        for (const BufferSlice& s : t.arguments) launch.args.push_back(Address(s));
        for (CUdeviceptr& p : launch.args) launch.params.push_back(&p);
      }
      GPU_RETURN_IF_ERROR(Bind(t.condition));
      GPU_RETURN_IF_ERROR(Bind(t.body));
      for (const ThunkSequence& b : t.branches) GPU_RETURN_IF_ERROR(Bind(b));
    }
    return absl::OkStatus();
  }

  absl::Status CreateLibraryCalls(const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kGemm) {
        const bool has_c = t.arguments.size() == 4;
        GemmOptions o;
        o.allow_tf32 = options_.allow_tf32;
        o.autotune = options_.autotune;
        o.profile = exe_.profile;
        o.cache = cache_;
        absl::StatusOr<std::unique_ptr<CublasLtGemm>> g =
            CublasLtGemm::Create(*ctx_, t.gemm, has_c, t.arguments[0].size, t.arguments[1].size,
                                 has_c ? t.arguments[2].size : -1, t.arguments.back().size, o, t.name);
        if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat(origin_, ": ", g.status().message()));
        gemms_[&t] = std::move(*g);
      } else if (t.kind == ThunkKind::kCustomCall && IsLinalgTarget(t.target)) {
        absl::StatusOr<std::unique_ptr<GpuLinalg>> g = GpuLinalg::Create(*ctx_, t);
        if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat(origin_, ": ", g.status().message()));
        linalg_[&t] = std::move(*g);
      } else if (t.kind == ThunkKind::kConvolution) {
        absl::StatusOr<ConvSpec> spec = ParseConvSpec(t.backend_config);
        if (!spec.ok()) return ThunkError(t, std::string(spec.status().message()));
        std::vector<int64_t> sizes;
        for (const BufferSlice& s : t.arguments) sizes.push_back(s.size);
        ConvOptions o;
        o.allow_tf32 = options_.allow_tf32 && options_.conv_tf32;
        o.autotune = options_.autotune;
        o.profile = exe_.profile;
        o.cache = cache_;
        absl::StatusOr<std::unique_ptr<CudnnConvolution>> c = CudnnConvolution::Create(*ctx_, *spec, sizes, o, t.name);
        if (!c.ok()) return absl::Status(c.status().code(), absl::StrCat(origin_, ": ", c.status().message()));
        workspace_bytes_ = std::max(workspace_bytes_, (*c)->workspace_bytes());
        convs_[&t] = std::move(*c);
      } else if (t.kind == ThunkKind::kFft) {
        absl::StatusOr<std::unique_ptr<CufftPlan>> f = CufftPlan::Create(
            *ctx_, t.fft, Address(t.arguments[0]), t.arguments[0].size, Address(t.arguments[1]), t.arguments[1].size,
            t.name);
        if (!f.ok()) return absl::Status(f.status().code(), absl::StrCat(origin_, ": ", f.status().message()));
        workspace_bytes_ = std::max(workspace_bytes_, (*f)->workspace_bytes());
        ffts_[&t] = std::move(*f);
      }
      GPU_RETURN_IF_ERROR(CreateLibraryCalls(t.condition));
      GPU_RETURN_IF_ERROR(CreateLibraryCalls(t.body));
      for (const ThunkSequence& b : t.branches) GPU_RETURN_IF_ERROR(CreateLibraryCalls(b));
    }
    return absl::OkStatus();
  }

  absl::Status PrepareLibraryCalls() {
    if (!options_.autotune_cache.empty()) cache_ = &SharedAutotuneCache(options_.autotune_cache);
    GPU_RETURN_IF_ERROR(CreateLibraryCalls(exe_.thunks));
    if (!gemms_.empty()) workspace_bytes_ = std::max(workspace_bytes_, kCublasLtWorkspaceBytes);
    workspace_bytes_ = (workspace_bytes_ + 255) / 256 * 256;
    if (workspace_bytes_ > 0) {
      absl::Status s = HLOC_CU(*d_, cuMemAlloc, Where("allocating the library workspace"), &workspace_,
                               static_cast<size_t>(workspace_bytes_));
      if (!s.ok()) return OutOfMemory(s, "the cuBLASLt/cuDNN/cuFFT workspace", workspace_bytes_);
      device_bytes_ += workspace_bytes_;
    }
    // Autotuning runs the library calls on the executable's own buffers: nothing in them is
    // meaningful before Run except constants, which no GEMM or convolution writes. Fill the
    // others with a finite non-zero pattern (timing zeros flatters the hardware).
    if (options_.autotune) {
      for (size_t i = 0; i < exe_.allocations.size(); ++i) {
        if (exe_.allocations[i].is_constant) continue;
        const size_t words = static_cast<size_t>(std::max<int64_t>((exe_.allocations[i].size + 255) / 256 * 256, 256) / 4);
        GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemsetD32Async, Where("filling buffers for autotuning"), buffers_[i],
                                    0x3E003E00u, words, stream_));
      }
    }
    // --verbose: a line on stderr as each library call's candidates have been timed (a module with
    // many GEMMs and convolutions autotunes for seconds); cache hits and heuristic picks are quick
    // and only appear in Describe's summary.
    const size_t library_calls = gemms_.size() + convs_.size();
    size_t prepared = 0;
    auto started = std::chrono::steady_clock::now();
    auto progress = [&](const char* kind, const Thunk* t, const std::string& chosen_by) {
      ++prepared;
      const auto now = std::chrono::steady_clock::now();
      const double ms = std::chrono::duration<double, std::milli>(now - started).count();
      started = now;
      if (!options_.verbose || chosen_by.find("autotune") == std::string::npos) return;
      std::cerr << absl::StrFormat("gpu: autotuned %s '%s' (%d of %d library calls) in %.0f ms: %s\n", kind, t->name,
                                   prepared, library_calls, ms, chosen_by);
    };
    // --verbose: a line per candidate timed, too (the autotuners time through graph_timer).
    const Thunk* tuning = nullptr;
    const char* tuning_kind = "";
    std::optional<AutotuneCandidateReporter> per_candidate;
    if (options_.verbose) {
      per_candidate.emplace([&](int candidate, double us) {
        if (tuning == nullptr) return;
        std::cerr << absl::StrFormat("gpu: autotuning %s '%s': candidate %d: %s\n", tuning_kind, tuning->name, candidate,
                                     us < 0 ? std::string("did not run") : absl::StrFormat("%.1f us", us));
      });
    }
    for (auto& [t, g] : gemms_) {
      tuning = t, tuning_kind = "gemm";
      const bool has_c = t->arguments.size() == 4;
      absl::Status s = g->Prepare(stream_, Address(t->arguments[0]), Address(t->arguments[1]),
                                  has_c ? Address(t->arguments[2]) : 0, Address(t->arguments.back()), workspace_,
                                  workspace_bytes_);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(origin_, ": ", s.message()));
      progress("gemm", t, g->chosen_by());
    }
    for (auto& [t, f] : ffts_) {
      absl::Status s = f->Prepare(stream_, workspace_, workspace_bytes_);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(origin_, ": ", s.message()));
    }
    started = std::chrono::steady_clock::now();
    for (auto& [t, c] : convs_) {
      tuning = t, tuning_kind = "conv";
      std::vector<CUdeviceptr> ptrs;
      for (const BufferSlice& s : t->arguments) ptrs.push_back(Address(s));
      absl::Status s = c->Prepare(stream_, ptrs, workspace_, workspace_bytes_);
      if (!s.ok()) return absl::Status(s.code(), absl::StrCat(origin_, ": ", s.message()));
      progress("conv", t, c->chosen_by());
    }
    GPU_RETURN_IF_ERROR(PrepareDeviceLoops());
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamSynchronize, Where("autotuning library calls"), stream_));
    if (cache_ != nullptr && cache_->dirty()) {
      absl::Status s = cache_->Save(options_.autotune_cache);
      if (!s.ok()) std::cerr << "hloc: warning: " << s.message() << "\n";
    }
    return absl::OkStatus();
  }

  absl::Status Upload(const std::vector<HostBuffer>& arguments) {
    if (arguments.size() != exe_.parameter_shapes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": expects ", exe_.parameter_shapes.size(),
                                                     " arguments, got ", arguments.size()));
    }
    for (size_t i = 0; i < arguments.size(); ++i) {
      const ArrayShape& want = exe_.parameter_shapes[i];
      const HostBuffer& arg = arguments[i];
      if (arg.shape.element_type != want.element_type || arg.shape.dimensions != want.dimensions) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": argument ", i, " is ", ShapeString(arg.shape),
                                                       " but parameter ", i, " is ", ShapeString(want)));
      }
      if (static_cast<int64_t>(arg.data.size()) != want.byte_size()) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": argument ", i, " holds ", arg.data.size(),
                                                       " bytes; ", ShapeString(want), " needs ", want.byte_size()));
      }
      const BufferSlice& slice = exe_.parameter_slices[i];
      if (!slice.valid() || arg.data.empty()) continue;
      const std::vector<int64_t> have = arg.shape.minor_to_major.empty() ? DefaultLayout(arg.shape.dimensions.size())
                                                                         : arg.shape.minor_to_major;
      const std::vector<int64_t> need = want.minor_to_major.empty() ? DefaultLayout(want.dimensions.size())
                                                                    : want.minor_to_major;
      const HostBuffer* src = &arg;
      absl::StatusOr<HostBuffer> moved;
      if (have != need) {
        moved = ToLayout(arg, need);
        if (!moved.ok()) return moved.status();
        src = &*moved;
      }
      // Pageable memory: the call returns once the bytes are staged, so `moved` may go.
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyHtoDAsync, Where(absl::StrCat("uploading argument ", i)),
                                  Address(slice), src->data.data(), src->data.size(), stream_));
    }
    return absl::OkStatus();
  }

  // One call, waited for; a failure is attributed as precisely as the errors allow.
  absl::Status ExecuteAll(const char* what) {
    ++calls_;
    GPU_RETURN_IF_ERROR(Execute(exe_.thunks));
    absl::Status s = HLOC_CU(*d_, cuStreamSynchronize, Where(what), stream_);
    if (!s.ok() && !options_.sync_each_thunk) {
      return absl::Status(s.code(), absl::StrCat(s.message(), " (rerun with HLOC_GPU_SYNC=1 to name the failing thunk)"));
    }
    return s;
  }

  // --per-thunk: leaf thunks in thunk order, each once (while bodies included).
  static void CollectLeaves(const ThunkSequence& seq, const std::map<const Thunk*, ThunkTime>& times,
                            std::vector<ThunkTime>& out) {
    for (const Thunk& t : seq) {
      CollectLeaves(t.condition, times, out);
      CollectLeaves(t.body, times, out);
      for (const ThunkSequence& b : t.branches) CollectLeaves(b, times, out);
      auto it = times.find(&t);
      if (it != times.end()) out.push_back(it->second);
    }
  }

  static bool IsLeaf(const Thunk& t) {
    return t.kind != ThunkKind::kSequential && t.kind != ThunkKind::kWhile && t.kind != ThunkKind::kConditional &&
           t.kind != ThunkKind::kCommandBuffer;
  }

  // A pair of events from the pool (made on first use, reused every profiled call).
  absl::StatusOr<std::pair<CUevent, CUevent>> ProfileEvents() {
    while (events_.size() < used_events_ + 2) {
      CUevent e = nullptr;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventCreate, Where("creating profiling events"), &e, CU_EVENT_DEFAULT));
      events_.push_back(e);
    }
    used_events_ += 2;
    return std::make_pair(events_[used_events_ - 2], events_[used_events_ - 1]);
  }

  absl::Status ExecuteProfiled(const Thunk& t) {
    if (t.kind == ThunkKind::kCommandBuffer) return Execute(t.body);  // thunk by thunk
    if (!IsLeaf(t)) return ExecuteThunk(t);
    absl::StatusOr<std::pair<CUevent, CUevent>> ev = ProfileEvents();
    if (!ev.ok()) return ev.status();
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventRecord, Where("profiling"), ev->first, stream_));
    GPU_RETURN_IF_ERROR(ExecuteThunk(t));
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventRecord, Where("profiling"), ev->second, stream_));
    pending_.push_back({&t, ev->first, ev->second});
    return absl::OkStatus();
  }

  absl::Status Execute(const ThunkSequence& seq) {
    if (capturing_ && capture_lanes_ > 1 && seq.size() > 1) return ExecuteForked(seq);
    for (const Thunk& t : seq) {
      absl::Status s = profiling_ && !capturing_ ? ExecuteProfiled(t) : ExecuteThunk(t);
      if (s.ok() && options_.sync_each_thunk && !capturing_ && t.kind != ThunkKind::kSequential &&
          t.kind != ThunkKind::kWhile && t.kind != ThunkKind::kConditional) {
        s = HLOC_CU(*d_, cuStreamSynchronize, "waiting for the thunk", stream_);
      }
      if (!s.ok()) return ThunkFailed(t, s);
    }
    return absl::OkStatus();
  }


  // A captured sequence enqueued on several streams as its lane plan says (graph_lanes.h): the
  // graph's branches are the sequence's independent chains. Each nesting level (a loop body
  // captured inside a capture) has its own streams and events.
  struct ForkLevel {
    std::vector<CUstream> streams;  // lanes 1..
    std::vector<CUevent> events;    // per thunk of the sequence, then the fork point
  };
  absl::Status ExecuteForked(const ThunkSequence& seq) {
    auto cached = lane_plans_.find(&seq);
    if (cached == lane_plans_.end())
      cached = lane_plans_.emplace(&seq, PlanLanes(seq, static_cast<int>(capture_lanes_))).first;
    const LanePlan& plan = cached->second;
    if (fork_levels_.size() <= static_cast<size_t>(fork_depth_)) fork_levels_.emplace_back();
    ForkLevel& level = fork_levels_[fork_depth_];
    while (static_cast<int>(level.streams.size()) + 1 < plan.lanes_used) {
      CUstream s = nullptr;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamCreate, Where("creating a graph-lane stream"), &s, CU_STREAM_NON_BLOCKING));
      level.streams.push_back(s);
    }
    while (level.events.size() < seq.size() + 1) {
      CUevent e = nullptr;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuEventCreate, Where("creating a graph-lane event"), &e, CU_EVENT_DISABLE_TIMING));
      level.events.push_back(e);
    }
    const CUstream origin = stream_;
    const CUevent fork = level.events[seq.size()];
    std::vector<bool> started(plan.lanes_used, false);
    auto on = [&](int lane) { return lane == 0 ? origin : level.streams[lane - 1]; };
    ++fork_depth_;
    absl::Status status = HLOC_CU(*d_, cuEventRecord, Where("forking the capture"), fork, origin);
    for (size_t i = 0; i < seq.size() && status.ok(); ++i) {
      const int lane = plan.lane[i];
      const CUstream s = on(lane);
      if (lane != 0 && !started[lane]) {
        status = HLOC_CU(*d_, cuStreamWaitEvent, Where("forking the capture"), s, fork, 0);
        started[lane] = true;
      }
      for (int w : plan.waits[i])
        if (status.ok()) status = HLOC_CU(*d_, cuStreamWaitEvent, Where("ordering graph lanes"), s, level.events[w], 0);
      if (!status.ok()) break;
      stream_ = s;
      status = ExecuteThunk(seq[i]);
      stream_ = origin;
      if (!status.ok()) {
        status = ThunkFailed(seq[i], status);
      } else if (plan.recorded[i]) {
        status = HLOC_CU(*d_, cuEventRecord, Where("ordering graph lanes"), level.events[i], s);
      }
    }
    for (int l = 1; l < plan.lanes_used && status.ok(); ++l)
      if (plan.join[l] >= 0)
        status = HLOC_CU(*d_, cuStreamWaitEvent, Where("joining graph lanes"), origin, level.events[plan.join[l]], 0);
    --fork_depth_;
    return status;
  }

  absl::StatusOr<std::vector<uint8_t>> ReadPredicate(const BufferSlice& slice) {
    const size_t n = slice.size == 1 ? 1 : 4;
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoHAsync, "reading the predicate", pinned_, Address(slice), n, stream_));
    GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamSynchronize, "reading the predicate", stream_));
    const auto* p = static_cast<const uint8_t*>(pinned_);
    return std::vector<uint8_t>(p, p + n);
  }

  absl::Status Memset(CUdeviceptr dst, int64_t bytes, uint32_t value) {
    if (bytes <= 0) return absl::OkStatus();
    const uint8_t b0 = value & 0xff;
    if (value == b0 * 0x01010101u) {
      return HLOC_CU(*d_, cuMemsetD8Async, "setting memory", dst, b0, static_cast<size_t>(bytes), stream_);
    }
    if (dst % 4 != 0) return absl::UnimplementedError("a 32-bit memset pattern on a slice that is not 4-byte aligned");
    if (bytes >= 4) {
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemsetD32Async, "setting memory", dst, value, static_cast<size_t>(bytes / 4), stream_));
    }
    for (int64_t i = bytes / 4 * 4; i < bytes; ++i) {
      const uint8_t byte = static_cast<uint8_t>(value >> (8 * (i % 4)));
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemsetD8Async, "setting memory", dst + i, byte, 1, stream_));
    }
    return absl::OkStatus();
  }

  absl::Status ExecuteThunk(const Thunk& t) {
    switch (t.kind) {
      case ThunkKind::kKernel: {
        Launch& l = launches_.at(&t);
        const LaunchDimensions& d = t.launch;
        return HLOC_CU(*d_, cuLaunchKernel, "launching the kernel", l.function, static_cast<unsigned>(d.grid_x),
                       static_cast<unsigned>(d.grid_y), static_cast<unsigned>(d.grid_z), static_cast<unsigned>(d.block_x),
                       static_cast<unsigned>(d.block_y), static_cast<unsigned>(d.block_z),
                       static_cast<unsigned>(d.shared_memory_bytes), stream_, l.params.data(), nullptr);
      }
      case ThunkKind::kGemm: {
        const bool has_c = t.arguments.size() == 4;
        return gemms_.at(&t)->Run(stream_, Address(t.arguments[0]), Address(t.arguments[1]),
                                  has_c ? Address(t.arguments[2]) : 0, Address(t.arguments.back()), workspace_,
                                  workspace_bytes_);
      }
      case ThunkKind::kConvolution: {
        std::vector<CUdeviceptr> ptrs;
        for (const BufferSlice& s : t.arguments) ptrs.push_back(Address(s));
        return convs_.at(&t)->Run(stream_, ptrs, workspace_, workspace_bytes_);
      }
      case ThunkKind::kFft: {
        GPU_RETURN_IF_ERROR(ffts_.at(&t)->Run(Address(t.arguments[0]), Address(t.arguments[1])));
        if (t.kernel_name.empty()) return absl::OkStatus();
        Launch& l = launches_.at(&t);  // the IFFT/IRFFT scaling (cufft.h)
        const LaunchDimensions& d = t.launch;
        return HLOC_CU(*d_, cuLaunchKernel, "launching the fft scaling kernel", l.function,
                       static_cast<unsigned>(d.grid_x), static_cast<unsigned>(d.grid_y), static_cast<unsigned>(d.grid_z),
                       static_cast<unsigned>(d.block_x), static_cast<unsigned>(d.block_y),
                       static_cast<unsigned>(d.block_z), 0, stream_, l.params.data(), nullptr);
      }
      case ThunkKind::kCopy: {
        const int64_t bytes = t.size > 0 ? t.size : t.arguments[0].size;
        const CUdeviceptr src = Address(t.arguments[0]), dst = Address(t.arguments[1]);
        if (src == dst || bytes == 0) return absl::OkStatus();
        return HLOC_CU(*d_, cuMemcpyDtoDAsync, "copying", dst, src, static_cast<size_t>(bytes), stream_);
      }
      case ThunkKind::kMemset:
        return Memset(Address(t.arguments[0]), t.arguments[0].size, t.memset_value);
      case ThunkKind::kWhile:
        // A loop with a known trip count gains nothing from the device at the top level (the host
        // enqueues its bodies without waiting; Flax's GRU ran 9.1 ms host-driven, 9.5 ms as WHILE
        // nodes); one that tests data does (diffrax's adaptive steps: 23.0 -> 16.2 ms). Inside a
        // recorded loop body every loop is recorded.
        if (!profiling_ && DeviceLoop(t) && (capturing_ || t.trip_count < 0))
          return capturing_ ? RecordLoop(t) : ExecuteLoopGraph(t);
        return ExecuteHostLoop(t);
      case ThunkKind::kConditional: {
        absl::StatusOr<std::vector<uint8_t>> p = ReadPredicate(t.predicate);
        if (!p.ok()) return p.status();
        size_t branch;
        if (t.predicate.size == 1) {
          branch = (*p)[0] != 0 ? 0 : 1;  // pred: true runs branches[0]
        } else {
          int32_t index;
          std::memcpy(&index, p->data(), 4);
          // Out-of-range indices run the last branch, as XLA's conditional does.
          branch = index < 0 || static_cast<size_t>(index) >= t.branches.size() ? t.branches.size() - 1
                                                                                  : static_cast<size_t>(index);
        }
        return Execute(t.branches[branch]);
      }
      case ThunkKind::kSequential:
        return Execute(t.body);
      case ThunkKind::kCommandBuffer:
        return ExecuteCommandBuffer(t);
      case ThunkKind::kCollective: {
        if (!t.collective.op.empty()) return RunCollective(t);
        std::vector<const BufferSlice*> reads, writes;
        for (size_t i = 0; i < t.arguments.size(); ++i)
          ((i < t.written.size() ? t.written[i] : i >= t.arguments.size() / 2) ? writes : reads).push_back(&t.arguments[i]);
        for (size_t i = 0; i < reads.size(); ++i) {
          const int64_t bytes = std::min(reads[i]->size, writes[i]->size);
          const CUdeviceptr src = Address(*reads[i]), dst = Address(*writes[i]);
          if (src != dst && bytes > 0) {
            GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuMemcpyDtoDAsync, "copying (one-device collective)", dst, src,
                                        static_cast<size_t>(bytes), stream_));
          }
        }
        return absl::OkStatus();
      }
      case ThunkKind::kCustomCall: {
        auto it = linalg_.find(&t);
        if (it == linalg_.end()) break;
        std::vector<CUdeviceptr> ptrs;
        for (const BufferSlice& s : t.arguments) ptrs.push_back(Address(s));
        absl::Status s = it->second->Run(stream_, ptrs);
        if (!s.ok()) return ThunkError(t, std::string(s.message()));
        return absl::OkStatus();
      }
    }
    return absl::InternalError("unexpected thunk kind");
  }

  bool UseGraph(const Thunk& t) const {
    const CommandBufferOptions& o = options_.command_buffers;
    if (!o.enabled || capturing_ || static_cast<int64_t>(t.body.size()) < o.min_graph_size) return false;
    for (const Thunk& b : t.body) {
      if (!Capturable(b, /*nccl=*/true)) return false;
      if (b.kind != ThunkKind::kSequential && b.kind != ThunkKind::kCommandBuffer &&
          std::find(o.kinds.begin(), o.kinds.end(), ThunkKindName(b.kind)) == o.kinds.end()) {
        return false;
      }
    }
    return true;
  }

  // XLA's CommandBufferThunk: the body is recorded into a CUDA graph on first execution (stream
  // capture: every library call and launch enqueued on our stream becomes a node) and the
  // instantiated graph is replayed afterwards; while allocations are bound to a caller's memory
  // (RunOnDevice), the graphs of that binding (Rebind).
  absl::Status ExecuteCommandBuffer(const Thunk& t) {
    // Its body forks onto the lanes it was compiled for (or --graph-lanes) while captured,
    // here or inside an enclosing capture (a loop body's command buffer in a device loop).
    const int64_t outer = capture_lanes_;
    capture_lanes_ = options_.command_buffers.lanes > 0 ? options_.command_buffers.lanes : t.lanes;
    absl::Status s = UseGraph(t) ? ExecuteGraph(t, [&] { return Execute(t.body); }) : Execute(t.body);
    capture_lanes_ = outer;
    return s;
  }

  // Runs `record` as a CUDA graph kept for `key`: plainly for the first runs (library calls
  // finish their lazy set-up outside a capture), captured once, replayed afterwards; a capture
  // that fails runs plainly from then on, with a warning.
  absl::Status ExecuteGraph(const Thunk& key, const std::function<absl::Status()>& record) {
    // (std::map: a nested command buffer, captured while this one is, adds its entry meanwhile)
    Graph& g = CurrentGraphs()[&key];
    if (g.failed) return record();
    if (g.exec == nullptr && g.plain_runs < options_.command_buffers.runs_before_capture) {
      ++g.plain_runs;
      return record();
    }
    if (g.exec == nullptr) {
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamBeginCapture, "starting the stream capture", stream_,
                                  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
      capturing_ = true;
      absl::Status body = record();
      capturing_ = false;
      CUgraph graph = nullptr;
      absl::Status end = HLOC_CU(*d_, cuStreamEndCapture, "ending the stream capture", stream_, &graph);
      absl::Status inst = absl::OkStatus();
      if (body.ok() && end.ok()) inst = HLOC_CU(*d_, cuGraphInstantiate, "instantiating the CUDA graph", &g.exec, graph, 0);
      if (!body.ok() || !end.ok() || !inst.ok()) {
        if (graph != nullptr) d_->cuGraphDestroy(graph);
        g.exec = nullptr;
        g.failed = true;
        const absl::Status& why = !body.ok() ? body : !end.ok() ? end : inst;
        std::cerr << "hloc: warning: " << origin_ << ": command buffer '" << key.name << "' (" << key.body.size()
                  << " thunks) could not be captured into a CUDA graph; running its thunks one by one: "
                  << why.message() << "\n";
        // A failed capture leaves nothing enqueued: run the work now.
        return record();
      }
      g.graph = graph;
    }
    return HLOC_CU(*d_, cuGraphLaunch, "launching the CUDA graph", g.exec, stream_);
  }

  // ---- While loops on the device (device_loops.h) -----------------------------------------
  // A loop runs as a WHILE conditional node when command buffers may hold loops ("kWhile" among
  // the kinds, XLA's WHILE command type), the driver has conditional nodes, and everything in its
  // body (and, without a trip count, its condition) can be captured.
  bool LoopsAllowed() const {
    const CommandBufferOptions& o = options_.command_buffers;
    return o.enabled && std::find(o.kinds.begin(), o.kinds.end(), "kWhile") != o.kinds.end();
  }
  bool Recordable(const ThunkSequence& seq) const {
    for (const Thunk& b : seq) {
      if (b.kind == ThunkKind::kWhile) {
        if (!DeviceLoop(b)) return false;
      } else if (!Capturable(b, /*nccl=*/false)) {
        return false;
      }
    }
    return true;
  }
  bool DeviceLoop(const Thunk& t) const {
    if (loops_ == nullptr || t.kind != ThunkKind::kWhile) return false;
    if (t.trip_count >= 0 && !loop_counters_.contains(&t)) return false;
    return Recordable(t.body) && (t.trip_count >= 0 || Recordable(t.condition));
  }
  static void CountLoops(const ThunkSequence& seq, int64_t depth, std::vector<const Thunk*>& counted, int64_t& max_depth) {
    for (const Thunk& t : seq) {
      int64_t d = depth;
      if (t.kind == ThunkKind::kWhile) {
        d = depth + 1;
        max_depth = std::max(max_depth, d);
        if (t.trip_count >= 0) counted.push_back(&t);
      }
      CountLoops(t.body, d, counted, max_depth);
      CountLoops(t.condition, d, counted, max_depth);
      for (const ThunkSequence& b : t.branches) CountLoops(b, d, counted, max_depth);
    }
  }
  absl::Status PrepareDeviceLoops() {
    if (!LoopsAllowed() || !DeviceLoops::Supported(*d_)) return absl::OkStatus();
    std::vector<const Thunk*> counted;
    int64_t depth = 0;
    CountLoops(exe_.thunks, 0, counted, depth);
    if (depth == 0) return absl::OkStatus();
    auto loops = std::make_unique<DeviceLoops>(d_, ctx_->context);
    if (absl::Status s = loops->Reserve(static_cast<int64_t>(counted.size())); !s.ok()) {
      std::cerr << "hloc: warning: " << origin_ << ": while loops run from the host: " << s.message() << "\n";
      return absl::OkStatus();
    }
    for (size_t i = 0; i < counted.size(); ++i) loop_counters_[counted[i]] = static_cast<int64_t>(i);
    for (int64_t i = 0; i < depth; ++i) {  // a stream per nesting level captures its bodies
      CUstream a = nullptr;
      GPU_RETURN_IF_ERROR(HLOC_CU(*d_, cuStreamCreate, Where("creating a loop-capture stream"), &a, CU_STREAM_NON_BLOCKING));
      aux_streams_.push_back(a);
    }
    loops_ = std::move(loops);
    return absl::OkStatus();
  }
  absl::Status ExecuteLoopGraph(const Thunk& t) {
    return ExecuteGraph(t, [&] { return capturing_ ? RecordLoop(t) : ExecuteHostLoop(t); });
  }
  absl::Status ExecuteHostLoop(const Thunk& t) {
    if (t.trip_count >= 0) {  // XLA's WhileThunk: a known trip count skips the condition
      for (int64_t i = 0; i < t.trip_count; ++i) GPU_RETURN_IF_ERROR(Execute(t.body));
      return absl::OkStatus();
    }
    for (;;) {
      GPU_RETURN_IF_ERROR(Execute(t.condition));
      absl::StatusOr<std::vector<uint8_t>> p = ReadPredicate(t.predicate);
      if (!p.ok()) return p.status();
      if ((*p)[0] == 0) return absl::OkStatus();
      GPU_RETURN_IF_ERROR(Execute(t.body));
    }
  }
  absl::Status RecordLoop(const Thunk& t) {
    if (loop_depth_ >= static_cast<int64_t>(aux_streams_.size())) return absl::InternalError("loops nested deeper than counted");
    CUstream aux = aux_streams_[loop_depth_];
    auto on = [this](const ThunkSequence& seq) {
      return [this, &seq](CUstream s) {
        CUstream saved = stream_;
        stream_ = s;
        absl::Status st = Execute(seq);
        stream_ = saved;
        return st;
      };
    };
    auto it = loop_counters_.find(&t);
    const CUdeviceptr counter = it == loop_counters_.end() ? 0 : loops_->Counter(it->second);
    ++loop_depth_;
    absl::Status s = loops_->RecordWhile(stream_, aux, t.trip_count, counter,
                                         t.trip_count >= 0 ? 0 : Address(t.predicate), on(t.condition), on(t.body));
    --loop_depth_;
    return s;
  }

  Executable exe_;
  GpuRunOptions options_;
  std::string origin_;
  const CudaContext* ctx_ = nullptr;
  const CudaDriver* d_ = nullptr;
  CUmodule module_ = nullptr;
  CUstream stream_ = nullptr;
  CUevent start_ = nullptr, stop_ = nullptr;
  // Collectives: the communicator (options_.collectives or own_clique_'s), the stream async
  // starts run on, and per async id the event its done waits for.
  bool has_collectives_ = false;
  NcclDevice* nccl_ = nullptr;
  std::unique_ptr<NcclClique> own_clique_;
  int64_t device_id_ = 0;
  std::string collectives_note_;
  CUstream collective_stream_ = nullptr;
  CUevent collective_ready_ = nullptr;
  std::map<int64_t, CUevent> async_done_;
  void* pinned_ = nullptr;
  std::vector<CUdeviceptr> buffers_;
  CUdeviceptr workspace_ = 0;
  int64_t workspace_bytes_ = 0;
  int64_t device_bytes_ = 0;
  AutotuneCache* cache_ = nullptr;
  absl::flat_hash_map<std::string, CUfunction> functions_;
  absl::flat_hash_map<const Thunk*, Launch> launches_;
  std::map<const Thunk*, std::unique_ptr<CublasLtGemm>> gemms_;
  std::map<const Thunk*, std::unique_ptr<CudnnConvolution>> convs_;
  std::map<const Thunk*, std::unique_ptr<GpuLinalg>> linalg_;
  std::map<const Thunk*, std::unique_ptr<CufftPlan>> ffts_;
  std::vector<GraphSet> graph_sets_;  // CUDA graphs per binding of the allocations (Rebind)
  size_t current_set_ = 0;
  std::vector<CUdeviceptr> own_;  // the executable's own allocations (buffers_ when nothing is bound)
  std::vector<bool> param_bindable_, result_bindable_;
  int64_t last_in_place_ = 0;  // arguments and results RunOnDevice used in place, last call
  bool capturing_ = false;
  int64_t capture_lanes_ = 1;  // lanes of the command buffer whose body is being executed
  std::unique_ptr<DeviceLoops> loops_;                    // null: loops run from the host
  absl::flat_hash_map<const Thunk*, int64_t> loop_counters_;  // loops with a trip count -> counter
  std::vector<CUstream> aux_streams_;                    // one per loop nesting level
  // Captured sequences' lane plans and each forked nesting level's streams and events (node-based
  // containers: a nested capture adds entries while an outer level holds references).
  std::map<const ThunkSequence*, LanePlan> lane_plans_;
  std::deque<ForkLevel> fork_levels_;
  int fork_depth_ = 0;
  int64_t binds_ = 0;  // Rebind calls so far (graph sets' recency)
  int64_t calls_ = 0;  // ExecuteAll calls so far (Describe's command-buffer counts are from them)
  int64_t loop_depth_ = 0;
  // --per-thunk profiling: events around each leaf thunk of a call (a pool reused per call).
  struct Pending {
    const Thunk* thunk;
    CUevent start, stop;
  };
  bool profiling_ = false;
  std::vector<CUevent> events_;
  size_t used_events_ = 0;
  std::vector<Pending> pending_;
  std::mutex mu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuExecutable>> LoadGpuExecutable(Executable executable, const GpuRunOptions& options) {
  auto exe = std::make_unique<GpuExecutableImpl>(std::move(executable), options);
  if (absl::Status s = exe->Init(); !s.ok()) return s;  // the destructor frees what Init took
  return std::unique_ptr<GpuExecutable>(std::move(exe));
}

}  // namespace hloc::runtime::gpu
#endif  // HLOC_HAVE_CUDA
