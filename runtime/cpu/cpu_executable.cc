// CpuExecutable: links the object code, checks every thunk against its buffers once at load
// time (so running trusts them), keeps one set of buffers per executable, and walks the thunks.
// Modelled on XLA:CPU's thunk executor (xla/backends/cpu/runtime/thunk_executor.cc), run in
// program order: kernels parallelize internally over their parts instead of across thunks.
#include "runtime/cpu/cpu_executable.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/collectives.h"
#include "runtime/cpu/fft.h"
#include "runtime/cpu/gemm.h"
#include "runtime/cpu/jit_loader.h"
#include "runtime/cpu/linalg.h"
#include "runtime/cpu/onednn_conv.h"
#include "runtime/executable/linalg_config.h"
#include "runtime/cpu/runtime_functions.h"
#include "runtime/cpu/thread_pool.h"

namespace hloc::runtime {
namespace {

#define RT_RETURN_IF_ERROR(expr) \
  do {                           \
    absl::Status _st = (expr);   \
    if (!_st.ok()) return _st;   \
  } while (0)

std::mutex& CustomCallMutex() {
  static std::mutex mu;
  return mu;
}
absl::flat_hash_map<std::string, CpuCustomCall>& CustomCalls() {
  static auto* calls = [] {
    auto* m = new absl::flat_hash_map<std::string, CpuCustomCall>();
    for (auto& [target, call] : LinalgCustomCalls()) (*m)[target] = std::move(call);  // built in
    return m;
  }();
  return *calls;
}

// Buffers are 64-byte aligned (a cache line, and enough for any vector load the emitter uses)
// and framed by two 64-byte red zones holding a known pattern. After each thunk the red zones of
// the allocations it touched are checked, so a kernel that writes out of bounds (a compiler
// bug) is reported by name instead of corrupting the heap.
constexpr int64_t kRedZone = 64;
constexpr uint8_t kRedZoneByte = 0xa5;

struct AlignedBuffer {
  uint8_t* block = nullptr;
  uint8_t* data = nullptr;
  int64_t size = 0;
  int64_t rounded = 0;
  AlignedBuffer() = default;
  explicit AlignedBuffer(int64_t bytes) : size(bytes) {
    rounded = (std::max<int64_t>(bytes, 1) + 63) / 64 * 64;
    block = static_cast<uint8_t*>(std::aligned_alloc(64, static_cast<size_t>(rounded + 2 * kRedZone)));
    if (block == nullptr) return;
    data = block + kRedZone;
    std::memset(block, kRedZoneByte, kRedZone);
    std::memset(data, 0, rounded);
    std::memset(data + rounded, kRedZoneByte, kRedZone);
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept : block(o.block), data(o.data), size(o.size), rounded(o.rounded) {
    o.block = o.data = nullptr;
  }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(block, o.block);
    std::swap(data, o.data);
    std::swap(size, o.size);
    std::swap(rounded, o.rounded);
    return *this;
  }
  ~AlignedBuffer() { std::free(block); }
  bool RedZonesIntact() const {
    for (int64_t i = 0; i < kRedZone; ++i) {
      if (block[i] != kRedZoneByte || data[rounded + i] != kRedZoneByte) return false;
    }
    return true;
  }
};

// One pool per thread count for the whole process: loading many executables (a test over the
// corpus, a server) must not start a pool of threads for each.
std::shared_ptr<ThreadPool> SharedPool(int num_threads) {
  if (num_threads <= 0) num_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  static std::mutex mu;
  static auto* pools = new absl::flat_hash_map<int, std::shared_ptr<ThreadPool>>();
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<ThreadPool>& pool = (*pools)[num_threads];
  if (pool == nullptr) pool = std::make_shared<ThreadPool>(num_threads);
  return pool;
}

bool SameDims(const ArrayShape& a, const ArrayShape& b) { return a.dimensions == b.dimensions; }

std::string ShapeString(const ArrayShape& s) {
  return absl::StrCat(s.element_type, "[", absl::StrJoin(s.dimensions, ","), "]");
}

std::vector<int64_t> DefaultLayout(size_t rank) {
  std::vector<int64_t> m2m(rank);
  for (size_t i = 0; i < rank; ++i) m2m[i] = static_cast<int64_t>(rank - 1 - i);
  return m2m;
}

// One device's state: its buffers (allocations of the executable, constants filled in), each
// kernel's argument array and each FFT's plan bound to those buffers, and its collective scratch.
struct DeviceState {
  int64_t id = 0;
  std::vector<AlignedBuffer> buffers;
  struct Bound {
    HlocCpuKernel kernel = nullptr;
    std::vector<void*> args;
  };
  absl::flat_hash_map<const Thunk*, Bound> bound;
  absl::flat_hash_map<const Thunk*, std::unique_ptr<CpuFft>> ffts;
  absl::flat_hash_map<const Thunk*, std::unique_ptr<CpuOneDnnConv>> convs;  // __onednn$convolution
  std::vector<uint8_t> staging;
  Rendezvous* rendezvous = nullptr;  // null when this device runs alone (Run)
  uint8_t* Address(const BufferSlice& s) { return buffers[s.allocation].data + s.offset; }
};

class CpuExecutableImpl : public CpuExecutable {
 public:
  explicit CpuExecutableImpl(Executable exe, const CpuRunOptions& options)
      : exe_(std::move(exe)), pool_(SharedPool(options.num_threads)) {}

  absl::Status Init() {
    origin_ = exe_.module_name.empty() ? std::string("executable") : exe_.module_name;
    RT_RETURN_IF_ERROR(ValidateExecutable(exe_, origin_));
    if (!exe_.platform.empty() && exe_.platform != "cpu") {
      return absl::InvalidArgumentError(
          absl::StrCat(origin_, ": compiled for platform '", exe_.platform, "', not for the CPU"));
    }
    bool has_kernels = false;
    RT_RETURN_IF_ERROR(Prepare(exe_.thunks, &has_kernels));
    if (has_kernels || !exe_.code.empty()) {
      auto jit = JitLoader::Load(exe_.code, origin_);
      if (!jit.ok()) return jit.status();
      jit_ = std::move(*jit);
      RT_RETURN_IF_ERROR(ResolveKernels(exe_.thunks));
    }
    for (size_t i = 0; i < exe_.parameter_shapes.size(); ++i) {
      if (exe_.parameter_slices[i].valid() && exe_.parameter_slices[i].size < exe_.parameter_shapes[i].byte_size()) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": parameter ", i, " (",
                                                       ShapeString(exe_.parameter_shapes[i]),
                                                       ") does not fit its slice"));
      }
    }
    for (size_t i = 0; i < exe_.result_shapes.size(); ++i) {
      if (!exe_.result_slices[i].valid() || exe_.result_slices[i].size < exe_.result_shapes[i].byte_size()) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": result ", i, " (",
                                                       ShapeString(exe_.result_shapes[i]),
                                                       ") has no slice that holds it"));
      }
    }
    return EnsureDevices(1);  // device 0 is made at load time, as before RunPartitioned existed
  }

  absl::StatusOr<std::vector<HostBuffer>> Run(const std::vector<HostBuffer>& arguments) override {
    std::lock_guard<std::mutex> lock(run_mu_);  // one set of buffers: runs take turns
    DeviceState& device = *devices_[0];
    RT_RETURN_IF_ERROR(CopyArguments(device, arguments, ""));
    device.rendezvous = nullptr;
    RT_RETURN_IF_ERROR(Execute(device, exe_.thunks));
    return Results(device);
  }

  absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitioned(
      const std::vector<std::vector<HostBuffer>>& arguments_per_device) override {
    std::lock_guard<std::mutex> lock(run_mu_);
    const int64_t n = exe_.num_devices();
    if (static_cast<int64_t>(arguments_per_device.size()) != n) {
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": runs on ", n, " devices (", exe_.num_partitions,
                                                     " partitions x ", exe_.replica_count, " replicas) but ",
                                                     arguments_per_device.size(), " argument lists were given"));
    }
    RT_RETURN_IF_ERROR(EnsureDevices(n));
    for (int64_t d = 0; d < n; ++d)
      RT_RETURN_IF_ERROR(CopyArguments(*devices_[d], arguments_per_device[d], absl::StrCat("device ", d, ": ")));
    Rendezvous rendezvous(n);
    std::vector<std::thread> threads;
    threads.reserve(n);
    // One thread per device: a device blocks in collectives until its group arrives, so devices
    // cannot share threads (nor run on the kernel pool, whose workers must never block).
    for (int64_t d = 0; d < n; ++d) {
      threads.emplace_back([this, d, &rendezvous] {
        DeviceState& device = *devices_[d];
        device.rendezvous = &rendezvous;
        absl::Status s = Execute(device, exe_.thunks);
        device.rendezvous = nullptr;
        if (s.ok()) {
          rendezvous.Finished(d);
        } else {
          rendezvous.Abort(absl::Status(s.code(), absl::StrCat(DeviceName(d), ": ", s.message())));
        }
      });
    }
    for (std::thread& t : threads) t.join();
    RT_RETURN_IF_ERROR(rendezvous.error());
    std::vector<std::vector<HostBuffer>> results;
    for (int64_t d = 0; d < n; ++d) {
      absl::StatusOr<std::vector<HostBuffer>> r = Results(*devices_[d]);
      if (!r.ok()) return r.status();
      results.push_back(std::move(*r));
    }
    return results;
  }

  const Executable& executable() const override { return exe_; }

 private:
  std::string DeviceName(int64_t d) const {
    return absl::StrCat(origin_, ": device ", d, " (replica ", d / exe_.num_partitions, ", partition ",
                        d % exe_.num_partitions, ")");
  }

  // Devices 0..n-1 with their buffers and bindings (kept for later runs).
  absl::Status EnsureDevices(int64_t n) {
    while (static_cast<int64_t>(devices_.size()) < n) {
      auto device = std::make_unique<DeviceState>();
      device->id = static_cast<int64_t>(devices_.size());
      for (const BufferAllocation& a : exe_.allocations) {
        device->buffers.emplace_back(a.size);
        if (device->buffers.back().data == nullptr) {
          return absl::ResourceExhaustedError(absl::StrCat(origin_, ": cannot allocate ", a.size,
                                                           " bytes for allocation ", a.index, " of device ",
                                                           device->id));
        }
        if (a.is_constant && !a.constant_data.empty()) {
          std::memcpy(device->buffers.back().data, a.constant_data.data(), a.constant_data.size());
        }
      }
      BindArguments(*device, exe_.thunks);
      RT_RETURN_IF_ERROR(PlanFfts(*device, exe_.thunks));
      RT_RETURN_IF_ERROR(PlanConvs(*device, exe_.thunks));
      devices_.push_back(std::move(device));
    }
    return absl::OkStatus();
  }

  // The entry parameters into `device`'s buffers (checked against parameter_shapes).
  absl::Status CopyArguments(DeviceState& device, const std::vector<HostBuffer>& arguments,
                             const std::string& who) {
    if (arguments.size() != exe_.parameter_shapes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", who, "expects ", exe_.parameter_shapes.size(),
                                                     " arguments, got ", arguments.size()));
    }
    for (size_t i = 0; i < arguments.size(); ++i) {
      const ArrayShape& want = exe_.parameter_shapes[i];
      const HostBuffer& arg = arguments[i];
      if (arg.shape.element_type != want.element_type || !SameDims(arg.shape, want)) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", who, "argument ", i, " is ",
                                                       ShapeString(arg.shape), " but parameter ", i, " is ",
                                                       ShapeString(want)));
      }
      if (static_cast<int64_t>(arg.data.size()) != want.byte_size()) {
        return absl::InvalidArgumentError(absl::StrCat(origin_, ": ", who, "argument ", i, " holds ", arg.data.size(),
                                                       " bytes; ", ShapeString(want), " needs ", want.byte_size()));
      }
      const BufferSlice& slice = exe_.parameter_slices[i];
      if (!slice.valid()) continue;  // an unused parameter
      const std::vector<int64_t> have_layout =
          arg.shape.minor_to_major.empty() ? DefaultLayout(arg.shape.dimensions.size()) : arg.shape.minor_to_major;
      const std::vector<int64_t> want_layout =
          want.minor_to_major.empty() ? DefaultLayout(want.dimensions.size()) : want.minor_to_major;
      uint8_t* dst = device.Address(slice);
      if (have_layout == want_layout) {
        if (!arg.data.empty()) std::memcpy(dst, arg.data.data(), arg.data.size());
      } else {
        auto moved = ToLayout(arg, want_layout);
        if (!moved.ok()) return moved.status();
        if (!moved->data.empty()) std::memcpy(dst, moved->data.data(), moved->data.size());
      }
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<HostBuffer>> Results(DeviceState& device) {
    std::vector<HostBuffer> results(exe_.result_shapes.size());
    for (size_t i = 0; i < results.size(); ++i) {
      results[i].shape = exe_.result_shapes[i];
      const int64_t bytes = results[i].shape.byte_size();
      const uint8_t* src = device.Address(exe_.result_slices[i]);
      results[i].data.assign(src, src + bytes);
    }
    return results;
  }

  absl::Status ThunkError(const Thunk& t, const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(origin_, ": thunk ", ThunkKindName(t.kind), " '", t.name, "': ", what));
  }

  // Load-time checks of what each thunk's execution relies on; GEMM configs are normalized.
  absl::Status Prepare(ThunkSequence& seq, bool* has_kernels) {
    for (Thunk& t : seq) {
      for (const BufferSlice& s : t.arguments) {
        if (!s.valid()) return ThunkError(t, "an argument has no buffer");
      }
      switch (t.kind) {
        case ThunkKind::kKernel:
          *has_kernels = true;
          if (t.kernel_name.empty()) return ThunkError(t, "no kernel name");
          break;
        case ThunkKind::kGemm: {
          if (t.arguments.size() != 3 && t.arguments.size() != 4) {
            return ThunkError(t, absl::StrCat("expects 3 or 4 arguments {A, B, [C or bias], D}, has ",
                                              t.arguments.size()));
          }
          auto g = NormalizeGemmConfig(t.gemm);
          if (!g.ok()) return ThunkError(t, std::string(g.status().message()));
          t.gemm = *g;
          const bool has_c = t.arguments.size() == 4;
          absl::Status s = CheckGemmBounds(t.gemm, t.arguments[0].size, t.arguments[1].size,
                                           has_c ? t.arguments[2].size : -1, t.arguments.back().size);
          if (!s.ok()) return ThunkError(t, std::string(s.message()));
          break;
        }
        case ThunkKind::kCopy: {
          if (t.arguments.size() != 2) return ThunkError(t, "expects {source, destination}");
          if (t.size <= 0) t.size = t.arguments[0].size;
          if (t.size > t.arguments[0].size || t.size > t.arguments[1].size) {
            return ThunkError(t, absl::StrCat("copies ", t.size, " bytes between slices of ", t.arguments[0].size,
                                              " and ", t.arguments[1].size));
          }
          break;
        }
        case ThunkKind::kMemset:
          if (t.arguments.size() != 1) return ThunkError(t, "expects one argument");
          break;
        case ThunkKind::kWhile:
          if (!t.predicate.valid() || t.predicate.size < 1) return ThunkError(t, "no predicate buffer");
          RT_RETURN_IF_ERROR(Prepare(t.condition, has_kernels));
          RT_RETURN_IF_ERROR(Prepare(t.body, has_kernels));
          break;
        case ThunkKind::kConditional:
          if (!t.predicate.valid() || (t.predicate.size != 1 && t.predicate.size < 4)) {
            return ThunkError(t, "no pred or s32 branch index buffer");
          }
          if (t.branches.empty()) return ThunkError(t, "no branches");
          if (t.predicate.size == 1 && t.branches.size() != 2) return ThunkError(t, "a pred selects one of 2 branches");
          for (ThunkSequence& b : t.branches) RT_RETURN_IF_ERROR(Prepare(b, has_kernels));
          break;
        case ThunkKind::kSequential:
        case ThunkKind::kCommandBuffer:  // a GPU graph; on the host simply its body in order
          RT_RETURN_IF_ERROR(Prepare(t.body, has_kernels));
          break;
        case ThunkKind::kCustomCall: {
          std::lock_guard<std::mutex> lock(CustomCallMutex());
          auto it = CustomCalls().find(t.target);
          if (it == CustomCalls().end()) {
            return ThunkError(t, absl::StrCat("custom-call target '", t.target,
                                              "' has no CPU implementation registered"));
          }
          custom_calls_[t.target] = it->second;
          if (IsLinalgTarget(t.target)) {  // checked once here; the call trusts its slices
            absl::StatusOr<LinalgConfig> c = LinalgConfig::Parse(t.backend_config);
            if (!c.ok()) return ThunkError(t, std::string(c.status().message()));
            if (absl::Status s = ValidateLinalgThunk(t, *c); !s.ok()) return ThunkError(t, std::string(s.message()));
          }
          break;
        }
        case ThunkKind::kCollective: {
          if (!t.collective.op.empty()) {  // over devices (collectives.h)
            absl::StatusOr<CollectivePlan> plan = PlanCollective(t, exe_.num_devices());
            if (!plan.ok()) return ThunkError(t, std::string(plan.status().message()));
            plans_[&t] = std::move(*plan);
            break;
          }
          // One device: each operand is copied to the result at the same position.
          size_t reads = 0, writes = 0;
          for (size_t i = 0; i < t.arguments.size(); ++i) {
            bool w = i < t.written.size() ? t.written[i] : i >= t.arguments.size() / 2;
            (w ? writes : reads)++;
          }
          if (reads != writes) {
            return ThunkError(t, absl::StrCat("a one-device collective needs as many results as operands (",
                                              reads, " operands, ", writes, " results)"));
          }
          break;
        }
        case ThunkKind::kFft: {
          if (t.arguments.size() != 2) return ThunkError(t, "expects {input, output}");
          absl::StatusOr<FftGeometry> g = AnalyzeFft(t.fft, t.arguments[0].size, t.arguments[1].size);
          if (!g.ok()) return ThunkError(t, std::string(g.status().message()));
          break;
        }
        case ThunkKind::kConvolution:
          if (t.target != kOneDnnConvolutionTarget) {
            return ThunkError(t, absl::StrCat("convolution target '", t.target, "' is not available on the CPU "
                                              "runtime (only ", kOneDnnConvolutionTarget, ")"));
          }
          if (t.arguments.size() != 3) return ThunkError(t, "expects {lhs, rhs, result}");
          break;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ResolveKernels(const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kKernel && !kernels_.contains(t.kernel_name)) {
        auto address = jit_->Lookup(t.kernel_name);
        if (!address.ok()) {
          return absl::NotFoundError(absl::StrCat(origin_, ": kernel '", t.kernel_name, "' of thunk '", t.name,
                                                  "' is missing from the object code: ", address.status().message()));
        }
        kernels_[t.kernel_name] = reinterpret_cast<HlocCpuKernel>(*address);
      }
      RT_RETURN_IF_ERROR(ResolveKernels(t.condition));
      RT_RETURN_IF_ERROR(ResolveKernels(t.body));
      for (const ThunkSequence& b : t.branches) RT_RETURN_IF_ERROR(ResolveKernels(b));
    }
    return absl::OkStatus();
  }

  // Buffers live as long as the executable, so each kernel's argument array (and its function)
  // is built once here rather than on every call.
  void BindArguments(DeviceState& device, const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kKernel) {
        DeviceState::Bound& b = device.bound[&t];
        b.kernel = kernels_.at(t.kernel_name);
        for (const BufferSlice& s : t.arguments) b.args.push_back(device.Address(s));
      }
      BindArguments(device, t.condition);
      BindArguments(device, t.body);
      for (const ThunkSequence& br : t.branches) BindArguments(device, br);
    }
  }

  // FFTW plans for the executable's buffers, made once (fft.h).
  absl::Status PlanFfts(DeviceState& device, const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kFft) {
        absl::StatusOr<std::unique_ptr<CpuFft>> fft =
            CpuFft::Create(t.fft, device.Address(t.arguments[0]), t.arguments[0].size,
                           device.Address(t.arguments[1]), t.arguments[1].size,
                           std::min<int64_t>(t.launch.partitions, pool_->num_threads()));
        if (!fft.ok()) return ThunkError(t, std::string(fft.status().message()));
        device.ffts[&t] = std::move(*fft);
      }
      RT_RETURN_IF_ERROR(PlanFfts(device, t.condition));
      RT_RETURN_IF_ERROR(PlanFfts(device, t.body));
      for (const ThunkSequence& b : t.branches) RT_RETURN_IF_ERROR(PlanFfts(device, b));
    }
    return absl::OkStatus();
  }

  // oneDNN convolution primitives (and their reorders) for the executable's buffers, made once
  // per thunk and device (onednn_conv.h).
  absl::Status PlanConvs(DeviceState& device, const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      if (t.kind == ThunkKind::kConvolution) {
        absl::StatusOr<std::unique_ptr<CpuOneDnnConv>> conv = CpuOneDnnConv::Create(
            t.backend_config, device.Address(t.arguments[0]), t.arguments[0].size, device.Address(t.arguments[1]),
            t.arguments[1].size, device.Address(t.arguments[2]), t.arguments[2].size, pool_->num_threads());
        if (!conv.ok()) return ThunkError(t, std::string(conv.status().message()));
        device.convs[&t] = std::move(*conv);
      }
      RT_RETURN_IF_ERROR(PlanConvs(device, t.condition));
      RT_RETURN_IF_ERROR(PlanConvs(device, t.body));
      for (const ThunkSequence& b : t.branches) RT_RETURN_IF_ERROR(PlanConvs(device, b));
    }
    return absl::OkStatus();
  }

  absl::Status Execute(DeviceState& device, const ThunkSequence& seq) {
    for (const Thunk& t : seq) {
      RT_RETURN_IF_ERROR(ExecuteThunk(device, t));
      RT_RETURN_IF_ERROR(CheckRedZones(device, t));
    }
    return absl::OkStatus();
  }

  absl::Status CheckRedZones(const DeviceState& device, const Thunk& t) const {
    for (const BufferSlice& s : t.arguments) {
      if (!device.buffers[s.allocation].RedZonesIntact()) {
        return absl::InternalError(absl::StrCat(origin_, ": thunk ", ThunkKindName(t.kind), " '", t.name, "'",
                                                t.kind == ThunkKind::kKernel ? " (kernel " + t.kernel_name + ")" : "",
                                                " wrote outside allocation ", s.allocation, " of ",
                                                device.buffers[s.allocation].size, " bytes (a compiler bug)"));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ExecuteThunk(DeviceState& device, const Thunk& t) {
    switch (t.kind) {
      case ThunkKind::kKernel: {
        DeviceState::Bound& b = device.bound.at(&t);
        HlocCpuKernel kernel = b.kernel;
        void** args = b.args.data();
        const int64_t parts = t.launch.partitions;
        if (parts <= 1) {
          kernel(args, 0, 1);
        } else {
          pool_->ParallelFor(parts, [&](int64_t part) { kernel(args, part, parts); });
        }
        return absl::OkStatus();
      }
      case ThunkKind::kGemm: {
        const bool has_c = t.arguments.size() == 4;
        RunGemm(t.gemm, device.Address(t.arguments[0]), device.Address(t.arguments[1]),
                has_c ? device.Address(t.arguments[2]) : nullptr, device.Address(t.arguments.back()), pool_.get());
        return absl::OkStatus();
      }
      case ThunkKind::kCopy:
        std::memmove(device.Address(t.arguments[1]), device.Address(t.arguments[0]), t.size);
        return absl::OkStatus();
      case ThunkKind::kMemset: {
        uint8_t* dst = device.Address(t.arguments[0]);
        uint8_t pattern[4];
        std::memcpy(pattern, &t.memset_value, 4);
        for (int64_t i = 0; i < t.arguments[0].size; ++i) dst[i] = pattern[i % 4];
        return absl::OkStatus();
      }
      case ThunkKind::kWhile:
        if (t.trip_count >= 0) {  // as XLA's WhileThunk: a known trip count skips the condition
          for (int64_t i = 0; i < t.trip_count; ++i) RT_RETURN_IF_ERROR(Execute(device, t.body));
          return absl::OkStatus();
        }
        for (;;) {
          RT_RETURN_IF_ERROR(Execute(device, t.condition));
          if (*device.Address(t.predicate) == 0) break;
          RT_RETURN_IF_ERROR(Execute(device, t.body));
        }
        return absl::OkStatus();
      case ThunkKind::kConditional: {
        size_t branch;
        if (t.predicate.size == 1) {
          branch = *device.Address(t.predicate) != 0 ? 0 : 1;  // pred: true runs branches[0]
        } else {
          int32_t index;
          std::memcpy(&index, device.Address(t.predicate), 4);
          // Out-of-range indices run the last branch, as XLA's conditional does.
          branch = index < 0 || static_cast<size_t>(index) >= t.branches.size() ? t.branches.size() - 1
                                                                                  : static_cast<size_t>(index);
        }
        return Execute(device, t.branches[branch]);
      }
      case ThunkKind::kSequential:
      case ThunkKind::kCommandBuffer:
        return Execute(device, t.body);
      case ThunkKind::kCollective: {
        if (!t.collective.op.empty()) {
          std::vector<uint8_t*> args;
          for (const BufferSlice& s : t.arguments) args.push_back(device.Address(s));
          absl::Status s = RunCollective(t, plans_.at(&t), device.id, exe_.num_partitions, args, device.rendezvous,
                                         device.staging);
          // RunPartitioned reports the run's first error (Rendezvous::error): a device woken by
          // another's failure returns it too, but that copy is dropped. Aborted errors are the
          // rendezvous' own (they name the devices and the collective already).
          if (!s.ok() && s.code() != absl::StatusCode::kAborted) return ThunkError(t, std::string(s.message()));
          return s;
        }
        std::vector<const BufferSlice*> reads, writes;
        for (size_t i = 0; i < t.arguments.size(); ++i) {
          bool w = i < t.written.size() ? t.written[i] : i >= t.arguments.size() / 2;
          (w ? writes : reads).push_back(&t.arguments[i]);
        }
        for (size_t i = 0; i < reads.size(); ++i) {
          const int64_t bytes = std::min(reads[i]->size, writes[i]->size);
          uint8_t* src = device.Address(*reads[i]);
          uint8_t* dst = device.Address(*writes[i]);
          if (src != dst) std::memmove(dst, src, bytes);
        }
        return absl::OkStatus();
      }
      case ThunkKind::kCustomCall: {
        std::vector<void*> args(t.arguments.size());
        std::vector<int64_t> sizes(t.arguments.size());
        for (size_t i = 0; i < args.size(); ++i) {
          args[i] = device.Address(t.arguments[i]);
          sizes[i] = t.arguments[i].size;
        }
        absl::Status s = custom_calls_.at(t.target)(args.data(), sizes, t.backend_config);
        if (!s.ok()) return ThunkError(t, std::string(s.message()));
        return absl::OkStatus();
      }
      case ThunkKind::kFft:
        device.ffts.at(&t)->Run(pool_.get());
        return absl::OkStatus();
      case ThunkKind::kConvolution: {
        absl::Status s = device.convs.at(&t)->Run(pool_.get());
        if (!s.ok()) return ThunkError(t, std::string(s.message()));
        return absl::OkStatus();
      }
    }
    return ThunkError(t, "cannot run on the CPU");
  }

  Executable exe_;
  std::string origin_;
  std::shared_ptr<ThreadPool> pool_;
  std::unique_ptr<JitLoader> jit_;
  absl::flat_hash_map<std::string, HlocCpuKernel> kernels_;
  absl::flat_hash_map<std::string, CpuCustomCall> custom_calls_;
  absl::flat_hash_map<const Thunk*, CollectivePlan> plans_;
  std::vector<std::unique_ptr<DeviceState>> devices_;  // device 0 from Load; more from RunPartitioned
  std::mutex run_mu_;
};

}  // namespace

void RegisterCpuCustomCall(const std::string& target, CpuCustomCall call) {
  std::lock_guard<std::mutex> lock(CustomCallMutex());
  CustomCalls()[target] = std::move(call);
}

absl::StatusOr<HostBuffer> ToLayout(const HostBuffer& buffer, const std::vector<int64_t>& minor_to_major) {
  const ArrayShape& s = buffer.shape;
  const size_t rank = s.dimensions.size();
  const std::vector<int64_t> from = s.minor_to_major.empty() ? DefaultLayout(rank) : s.minor_to_major;
  const std::vector<int64_t> to = minor_to_major.empty() ? DefaultLayout(rank) : minor_to_major;
  auto is_perm = [rank](const std::vector<int64_t>& p) {
    if (p.size() != rank) return false;
    std::vector<bool> seen(rank, false);
    for (int64_t d : p) {
      if (d < 0 || d >= static_cast<int64_t>(rank) || seen[d]) return false;
      seen[d] = true;
    }
    return true;
  };
  if (!is_perm(from) || !is_perm(to)) {
    return absl::InvalidArgumentError(absl::StrCat("layout {", absl::StrJoin(to, ","), "} does not fit ",
                                                   ShapeString(s)));
  }
  if (s.element_size_in_bytes <= 0 || static_cast<int64_t>(buffer.data.size()) != s.byte_size()) {
    return absl::InvalidArgumentError(absl::StrCat(ShapeString(s), " holds ", buffer.data.size(), " bytes"));
  }
  HostBuffer out;
  out.shape = s;
  out.shape.minor_to_major = to;
  out.data.resize(buffer.data.size());
  if (from == to || buffer.data.empty()) {
    out.data = buffer.data;
    return out;
  }
  // Element strides of each logical dimension in both layouts.
  auto strides = [&](const std::vector<int64_t>& m2m) {
    std::vector<int64_t> st(rank);
    int64_t n = 1;
    for (int64_t d : m2m) {
      st[d] = n;
      n *= s.dimensions[d];
    }
    return st;
  };
  const std::vector<int64_t> sf = strides(from), stt = strides(to);
  const int64_t es = s.element_size_in_bytes;
  std::vector<int64_t> index(rank, 0);
  const int64_t count = s.byte_size() / es;
  for (int64_t e = 0; e < count; ++e) {
    int64_t a = 0, b = 0;
    for (size_t d = 0; d < rank; ++d) {
      a += index[d] * sf[d];
      b += index[d] * stt[d];
    }
    std::memcpy(&out.data[b * es], &buffer.data[a * es], es);
    for (size_t d = rank; d-- > 0;) {  // odometer over logical indices
      if (++index[d] < s.dimensions[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

absl::StatusOr<std::unique_ptr<CpuExecutable>> CpuExecutable::Load(Executable executable,
                                                                   const CpuRunOptions& options) {
  auto impl = std::make_unique<CpuExecutableImpl>(std::move(executable), options);
  absl::Status s = impl->Init();
  if (!s.ok()) return s;
  return std::unique_ptr<CpuExecutable>(std::move(impl));
}

absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitioned(
    Executable executable, const std::vector<std::vector<HostBuffer>>& arguments_per_device,
    const CpuRunOptions& options) {
  absl::StatusOr<std::unique_ptr<CpuExecutable>> loaded = CpuExecutable::Load(std::move(executable), options);
  if (!loaded.ok()) return loaded.status();
  return (*loaded)->RunPartitioned(arguments_per_device);
}

}  // namespace hloc::runtime
