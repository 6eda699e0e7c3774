// NCCL collectives (see nccl_collectives.h).
#include "runtime/gpu/nccl_collectives.h"

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "support/file_io.h"

#if HLOC_HAVE_CUDA
#include <nccl.h>
#endif

namespace hloc::runtime::gpu {

namespace {

absl::StatusOr<int> EnvInt(const char* name, int def, int lo, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return def;
  int x = 0;
  if (!absl::SimpleAtoi(v, &x) || x < lo || x > hi)
    return absl::InvalidArgumentError(absl::StrCat(name, "='", v, "' is not an integer in [", lo, ", ", hi, "]"));
  return x;
}

}  // namespace

absl::StatusOr<NcclBootstrap> NcclBootstrap::FromEnvironment() {
  NcclBootstrap b;
  absl::StatusOr<int> n = EnvInt("HLOC_NUM_PROCESSES", 1, 1, 1 << 16);
  if (!n.ok()) return n.status();
  absl::StatusOr<int> id = EnvInt("HLOC_PROCESS_ID", 0, 0, *n - 1);
  if (!id.ok()) return id.status();
  b.num_processes = *n;
  b.process_id = *id;
  if (const char* f = std::getenv("HLOC_NCCL_ID_FILE")) b.id_file = f;
  if (b.num_processes > 1 && b.id_file.empty())
    return absl::InvalidArgumentError(
        "HLOC_NUM_PROCESSES > 1 needs HLOC_NCCL_ID_FILE: a path every process can read (a shared folder), where "
        "process 0 writes NCCL's unique id");
  return b;
}

#if !HLOC_HAVE_CUDA

absl::Status NcclAvailable() { return absl::UnavailableError("hloc was built without CUDA headers"); }
absl::StatusOr<std::string> NcclVersionString() { return NcclAvailable(); }

#else

#define HLOC_NCCL_ENTRIES(X)                                                                          \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclCommDestroy) X(ncclCommAbort)        \
  X(ncclGetErrorString) X(ncclAllReduce) X(ncclAllGather) X(ncclReduceScatter) X(ncclBroadcast)       \
  X(ncclSend) X(ncclRecv) X(ncclGroupStart) X(ncclGroupEnd)

struct NcclLib {
  int version = 0;
#define HLOC_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_NCCL_ENTRIES(HLOC_NCCL_MEMBER)
#undef HLOC_NCCL_MEMBER
  decltype(&::ncclCommSplit) ncclCommSplit = nullptr;  // NCCL 2.18+
};

namespace {

absl::StatusOr<std::unique_ptr<NcclLib>> LoadNcclOnce() {
  absl::StatusOr<void*> lib = OpenLibrary({"libnccl.so.2", "/usr/local/cuda/lib/libnccl.so.2",
                                           "/usr/local/cuda/lib64/libnccl.so.2", "libnccl.so"},
                                          "NCCL (the collectives of programs over several devices)");
  if (!lib.ok()) return lib.status();
  auto l = std::make_unique<NcclLib>();
  std::vector<std::string> missing;
#define HLOC_NCCL_LOAD(name)                                             \
  l->name = reinterpret_cast<decltype(l->name)>(dlsym(*lib, #name));     \
  if (l->name == nullptr) missing.push_back(#name);
  HLOC_NCCL_ENTRIES(HLOC_NCCL_LOAD)
#undef HLOC_NCCL_LOAD
  if (!missing.empty()) return absl::UnavailableError(absl::StrCat("NCCL lacks ", absl::StrJoin(missing, ", ")));
  l->ncclCommSplit = reinterpret_cast<decltype(l->ncclCommSplit)>(dlsym(*lib, "ncclCommSplit"));
  if (l->ncclGetVersion(&l->version) != ncclSuccess) return absl::UnavailableError("ncclGetVersion failed");
  return l;
}

absl::StatusOr<const NcclLib*> LoadNccl() { return LoadLibraryOnce(LoadNcclOnce); }

absl::Status NcclCheck(const NcclLib& lib, ncclResult_t r, const char* fn, const std::string& what) {
  if (r == ncclSuccess || r == ncclInProgress) return absl::OkStatus();
  const std::string msg = absl::StrCat(fn, " failed with ", lib.ncclGetErrorString(r), " while ", what);
  if (r == ncclInvalidArgument || r == ncclInvalidUsage) return absl::InvalidArgumentError(msg);
  if (r == ncclSystemError || r == ncclRemoteError) return absl::UnavailableError(msg);
  return absl::InternalError(msg);
}
#define HLOC_NCCL(lib, fn, what, ...) NcclCheck((lib), (lib).fn(__VA_ARGS__), #fn, (what))

std::string VersionText(int v) {
  // NCCL_VERSION(X, Y, Z) = X * 10000 + Y * 100 + Z since 2.9.
  return absl::StrCat("NCCL ", v / 10000, ".", (v / 100) % 100, ".", v % 100);
}

// The NCCL type and width of an element type for a reduction; c64 / c128 reduce as pairs of
// reals (add only).
struct ReduceType {
  ncclDataType_t type;
  int bytes;
};
std::optional<ReduceType> ReduceTypeOf(const std::string& t, const std::string& reduction) {
  if (t == "f32") return ReduceType{ncclFloat32, 4};
  if (t == "f64") return ReduceType{ncclFloat64, 8};
  if (t == "f16") return ReduceType{ncclFloat16, 2};
  if (t == "bf16") return ReduceType{ncclBfloat16, 2};
  if (t == "s8") return ReduceType{ncclInt8, 1};
  if (t == "u8" || t == "pred") return ReduceType{ncclUint8, 1};
  if (t == "s32") return ReduceType{ncclInt32, 4};
  if (t == "u32") return ReduceType{ncclUint32, 4};
  if (t == "s64") return ReduceType{ncclInt64, 8};
  if (t == "u64") return ReduceType{ncclUint64, 8};
  if (reduction == "add" && t == "c64") return ReduceType{ncclFloat32, 4};
  if (reduction == "add" && t == "c128") return ReduceType{ncclFloat64, 8};
  return std::nullopt;
}

// pred's and / or are min / max of 0 and 1.
std::optional<ncclRedOp_t> RedOpOf(const std::string& reduction, const std::string& type) {
  if (reduction == "add") return ncclSum;
  if (reduction == "mul") return ncclProd;
  if (reduction == "min") return ncclMin;
  if (reduction == "max") return ncclMax;
  if (type == "pred" && reduction == "and") return ncclMin;
  if (type == "pred" && reduction == "or") return ncclMax;
  return std::nullopt;
}

absl::Status Unsupported(const Thunk& t, const std::string& what) {
  return absl::UnimplementedError(absl::StrCat("%", t.name, ": NCCL has no ", what));
}

// A unique id shared through a file: process 0 writes it (whole, then renamed into place); the
// others wait for it.
absl::StatusOr<ncclUniqueId> SharedUniqueId(const NcclLib& lib, const NcclBootstrap& b) {
  ncclUniqueId id;
  if (b.num_processes == 1 || b.process_id == 0) {
    if (absl::Status s = HLOC_NCCL(lib, ncclGetUniqueId, "making the clique's unique id", &id); !s.ok()) return s;
    if (b.num_processes == 1) return id;
    // Whole, then renamed into place (support/file_io.h): the others never read a partial id.
    if (absl::Status s = WriteFileAtomically(b.id_file, std::string_view(id.internal, sizeof(id.internal))); !s.ok())
      return absl::UnavailableError(absl::StrCat("cannot write NCCL's unique id: ", s.message()));
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(b.wait_seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(b.id_file, std::ios::binary);
    if (in.read(id.internal, sizeof(id.internal)) && in.gcount() == sizeof(id.internal)) return id;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return absl::DeadlineExceededError(absl::StrCat("process ", b.process_id, " waited ", b.wait_seconds,
                                                  " s for process 0 to write NCCL's unique id to '", b.id_file, "'"));
}

}  // namespace

absl::Status NcclAvailable() { return LoadNccl().status(); }

absl::StatusOr<std::string> NcclVersionString() {
  absl::StatusOr<const NcclLib*> lib = LoadNccl();
  if (!lib.ok()) return lib.status();
  return VersionText((*lib)->version);
}

// ---- The clique ---------------------------------------------------------------------------

absl::StatusOr<std::unique_ptr<NcclClique>> NcclClique::Create(int64_t num_devices, int64_t first_device,
                                                              const std::vector<int>& ordinals,
                                                              const NcclBootstrap& bootstrap) {
  absl::StatusOr<const NcclLib*> lib = LoadNccl();
  if (!lib.ok()) return lib.status();
  const NcclLib& l = **lib;
  if (first_device < 0 || first_device + static_cast<int64_t>(ordinals.size()) > num_devices)
    return absl::InvalidArgumentError(absl::StrCat("devices [", first_device, ", ", first_device + ordinals.size(),
                                                   ") are not all among the run's ", num_devices));
  absl::StatusOr<ncclUniqueId> id = SharedUniqueId(l, bootstrap);
  if (!id.ok()) return id.status();
  auto clique = std::make_unique<NcclClique>();
  for (size_t i = 0; i < ordinals.size(); ++i) {
    absl::StatusOr<const CudaContext*> ctx = GetCudaContext(ordinals[i]);
    if (!ctx.ok()) return ctx.status();
    auto d = std::make_unique<NcclDevice>();
    d->lib_ = &l;
    d->context_ = *ctx;
    d->device_id_ = first_device + static_cast<int64_t>(i);
    d->num_devices_ = num_devices;
    clique->devices_.push_back(std::move(d));
  }
  // One thread initializes every local rank: NCCL needs the calls grouped.
  if (absl::Status s = HLOC_NCCL(l, ncclGroupStart, "starting the communicators' group"); !s.ok()) return s;
  absl::Status init = absl::OkStatus();
  for (auto& d : clique->devices_) {
    if (absl::Status s = d->context_->MakeCurrent(); !s.ok()) init = s;
    if (!init.ok()) break;
    ncclComm_t comm = nullptr;
    init = HLOC_NCCL(l, ncclCommInitRank, absl::StrCat("making device ", d->device_id_, "'s communicator"), &comm,
                     static_cast<int>(num_devices), *id, static_cast<int>(d->device_id_));
    d->world_ = comm;
  }
  absl::Status end = HLOC_NCCL(l, ncclGroupEnd, "making the communicators");
  if (!init.ok()) return init;
  if (!end.ok()) return end;
  clique->description_ = absl::StrCat(VersionText(l.version), ": ", ordinals.size(), " of ", num_devices,
                                      " ranks in this process (devices ", first_device, "..",
                                      first_device + static_cast<int64_t>(ordinals.size()) - 1, ")");
  return clique;
}

NcclClique::~NcclClique() { devices_.clear(); }

void NcclClique::Abort() {
  for (auto& d : devices_) {
    if (d->world_ != nullptr) d->lib_->ncclCommAbort(static_cast<ncclComm_t>(d->world_));
    d->world_ = nullptr;
    for (auto& [groups, comm] : d->split_)
      if (comm != nullptr) d->lib_->ncclCommAbort(static_cast<ncclComm_t>(comm));
    d->split_.clear();
  }
}

std::string NcclClique::Describe() const { return description_; }

// ---- One device ---------------------------------------------------------------------------

NcclDevice::~NcclDevice() {
  if (context_ != nullptr && context_->MakeCurrent().ok()) {
    for (auto& [key, buffer] : scratch_) context_->driver->cuMemFree(buffer.first);
  }
  for (auto& [groups, comm] : split_)
    if (comm != nullptr) lib_->ncclCommDestroy(static_cast<ncclComm_t>(comm));
  if (world_ != nullptr) lib_->ncclCommDestroy(static_cast<ncclComm_t>(world_));
}

absl::StatusOr<NcclDevice::Comm> NcclDevice::CommFor(const CollectiveConfig& c, int* rank, int* size) {
  int64_t group = -1, position = -1;
  for (size_t g = 0; g < c.groups.size(); ++g)
    for (size_t k = 0; k < c.groups[g].size(); ++k)
      if (c.groups[g][k] == device_id_) group = static_cast<int64_t>(g), position = static_cast<int64_t>(k);
  if (world_ == nullptr) return absl::FailedPreconditionError("the communicator was aborted");
  bool whole_world = c.groups.size() == 1 && static_cast<int64_t>(c.groups[0].size()) == num_devices_;
  for (int64_t k = 0; whole_world && k < num_devices_; ++k) whole_world = c.groups[0][k] == k;
  if (whole_world) {
    *rank = static_cast<int>(device_id_);
    *size = static_cast<int>(num_devices_);
    return world_;
  }
  auto it = split_.find(c.groups);
  if (it == split_.end()) {
    if (lib_->ncclCommSplit == nullptr)
      return absl::UnimplementedError(absl::StrCat("collectives over part of the devices need ncclCommSplit (NCCL "
                                                   "2.18 or newer); this is ", VersionText(lib_->version)));
    ncclComm_t comm = nullptr;
    absl::Status s = HLOC_NCCL(*lib_, ncclCommSplit, "splitting a group communicator", static_cast<ncclComm_t>(world_),
                               group < 0 ? NCCL_SPLIT_NOCOLOR : static_cast<int>(group), static_cast<int>(position),
                               &comm, nullptr);
    if (!s.ok()) return s;
    it = split_.emplace(c.groups, comm).first;
  }
  if (group < 0) return absl::InternalError(absl::StrCat("device ", device_id_, " is in none of the groups"));
  *rank = static_cast<int>(position);
  *size = static_cast<int>(c.groups[group].size());
  return it->second;
}

absl::StatusOr<CUdeviceptr> NcclDevice::Scratch(const Thunk& t, int64_t bytes, int which) {
  auto& slot = scratch_[{&t, which}];
  if (slot.second >= bytes) return slot.first;
  const CudaDriver& d = *context_->driver;
  if (slot.first != 0) d.cuMemFree(slot.first);
  slot = {0, 0};
  CUdeviceptr p = 0;
  if (absl::Status s = HLOC_CU(d, cuMemAlloc, absl::StrCat("allocating ", bytes, " bytes of staging for %", t.name),
                               &p, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
      !s.ok())
    return s;
  slot = {p, bytes};
  return p;
}

namespace {

// Copies `rows` rows of `width` bytes between pitched layouts.
absl::Status Copy2D(const CudaDriver& d, CUdeviceptr dst, int64_t dst_pitch, CUdeviceptr src, int64_t src_pitch,
                    int64_t width, int64_t rows, CUstream stream) {
  if (width == 0 || rows == 0) return absl::OkStatus();
  CUDA_MEMCPY2D m = {};
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = src;
  m.srcPitch = static_cast<size_t>(src_pitch);
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstDevice = dst;
  m.dstPitch = static_cast<size_t>(dst_pitch);
  m.WidthInBytes = static_cast<size_t>(width);
  m.Height = static_cast<size_t>(rows);
  return HLOC_CU(d, cuMemcpy2DAsync, "staging a collective's pieces", &m, stream);
}

// [outer, k, chunk] <-> [k, outer, chunk]: piece j of every row to block j (to_blocks) or back.
absl::Status Restage(const CudaDriver& d, CUdeviceptr strided, CUdeviceptr blocks, int64_t outer, int64_t k,
                     int64_t chunk, bool to_blocks, CUstream stream) {
  for (int64_t j = 0; j < k; ++j) {
    const CUdeviceptr s = strided + j * chunk, b = blocks + j * outer * chunk;
    absl::Status st = to_blocks ? Copy2D(d, b, chunk, s, k * chunk, chunk, outer, stream)
                                : Copy2D(d, s, k * chunk, b, chunk, chunk, outer, stream);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NcclDevice::Run(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  if (absl::Status s = context_->MakeCurrent(); !s.ok()) return s;
  const std::string& op = t.collective.op;
  if (op == "all-reduce") return AllReduce(t, args, stream);
  if (op == "all-gather") return AllGather(t, args, stream);
  if (op == "reduce-scatter") return ReduceScatter(t, args, stream);
  if (op == "all-to-all") return AllToAll(t, args, stream);
  if (op == "collective-permute") return Permute(t, args, stream);
  if (op == "collective-broadcast") return Broadcast(t, args, stream);
  return Unsupported(t, absl::StrCat("collective '", op, "'"));
}

absl::Status NcclDevice::AllReduce(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  const CollectiveConfig& c = t.collective;
  int rank = 0, size = 0;
  absl::StatusOr<Comm> comm = CommFor(c, &rank, &size);
  if (!comm.ok()) return comm.status();
  const size_t n = args.size() / 2;
  if (absl::Status s = HLOC_NCCL(*lib_, ncclGroupStart, "grouping an all-reduce"); !s.ok()) return s;
  absl::Status status = absl::OkStatus();
  for (size_t i = 0; i < n && status.ok(); ++i) {
    const std::string& type = c.element_types[i];
    std::optional<ReduceType> rt = ReduceTypeOf(type, c.reduction);
    std::optional<ncclRedOp_t> red = RedOpOf(c.reduction, type);
    if (!rt || !red) {
      status = Unsupported(t, absl::StrCat(c.reduction, " all-reduce of ", type));
      break;
    }
    const size_t count = static_cast<size_t>(std::min(t.arguments[i].size, t.arguments[n + i].size) / rt->bytes);
    status = HLOC_NCCL(*lib_, ncclAllReduce, absl::StrCat("running %", t.name), reinterpret_cast<void*>(args[i]),
                       reinterpret_cast<void*>(args[n + i]), count, rt->type, *red, static_cast<ncclComm_t>(*comm),
                       reinterpret_cast<cudaStream_t>(stream));
  }
  absl::Status end = HLOC_NCCL(*lib_, ncclGroupEnd, absl::StrCat("running %", t.name));
  return status.ok() ? end : status;
}

absl::Status NcclDevice::AllGather(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  const CollectiveConfig& c = t.collective;
  int rank = 0, k = 0;
  absl::StatusOr<Comm> comm = CommFor(c, &rank, &k);
  if (!comm.ok()) return comm.status();
  const size_t n = args.size() / 2;
  const CudaDriver& d = *context_->driver;
  for (size_t i = 0; i < n; ++i) {
    const int64_t outer = c.outer[i], chunk = c.chunk_bytes[i];
    const int64_t piece = outer * chunk;  // one member's operand
    CUdeviceptr target = args[n + i];
    if (outer > 1) {
      absl::StatusOr<CUdeviceptr> s = Scratch(t, piece * k, static_cast<int>(i));
      if (!s.ok()) return s.status();
      target = *s;
    }
    if (absl::Status s = HLOC_NCCL(*lib_, ncclAllGather, absl::StrCat("running %", t.name),
                                   reinterpret_cast<void*>(args[i]), reinterpret_cast<void*>(target),
                                   static_cast<size_t>(piece), ncclUint8, static_cast<ncclComm_t>(*comm),
                                   reinterpret_cast<cudaStream_t>(stream));
        !s.ok())
      return s;
    if (outer > 1)
      if (absl::Status s = Restage(d, args[n + i], target, outer, k, chunk, false, stream); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status NcclDevice::ReduceScatter(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  const CollectiveConfig& c = t.collective;
  int rank = 0, k = 0;
  absl::StatusOr<Comm> comm = CommFor(c, &rank, &k);
  if (!comm.ok()) return comm.status();
  const size_t n = args.size() / 2;
  const CudaDriver& d = *context_->driver;
  for (size_t i = 0; i < n; ++i) {
    const std::string& type = c.element_types[i];
    std::optional<ReduceType> rt = ReduceTypeOf(type, c.reduction);
    std::optional<ncclRedOp_t> red = RedOpOf(c.reduction, type);
    if (!rt || !red) return Unsupported(t, absl::StrCat(c.reduction, " reduce-scatter of ", type));
    const int64_t outer = c.outer[i], chunk = c.chunk_bytes[i];
    CUdeviceptr source = args[i];
    if (outer > 1) {
      absl::StatusOr<CUdeviceptr> s = Scratch(t, outer * k * chunk, static_cast<int>(i));
      if (!s.ok()) return s.status();
      if (absl::Status st = Restage(d, args[i], *s, outer, k, chunk, true, stream); !st.ok()) return st;
      source = *s;
    }
    if (absl::Status s = HLOC_NCCL(*lib_, ncclReduceScatter, absl::StrCat("running %", t.name),
                                   reinterpret_cast<void*>(source), reinterpret_cast<void*>(args[n + i]),
                                   static_cast<size_t>(outer * chunk / rt->bytes), rt->type, *red,
                                   static_cast<ncclComm_t>(*comm), reinterpret_cast<cudaStream_t>(stream));
        !s.ok())
      return s;
  }
  return absl::OkStatus();
}

absl::Status NcclDevice::AllToAll(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  const CollectiveConfig& c = t.collective;
  int rank = 0, k = 0;
  absl::StatusOr<Comm> comm = CommFor(c, &rank, &k);
  if (!comm.ok()) return comm.status();
  const size_t n = args.size() / 2;
  const CudaDriver& d = *context_->driver;
  const ncclComm_t nc = static_cast<ncclComm_t>(*comm);
  const cudaStream_t cs = reinterpret_cast<cudaStream_t>(stream);
  const std::string what = absl::StrCat("running %", t.name);
  if (c.dimension < 0) {  // tuple form: operand j to member j, result j from member j
    if (static_cast<int>(n) != k) return absl::InvalidArgumentError(absl::StrCat("%", t.name, ": ", n, " leaves for ", k, " members"));
    if (absl::Status s = HLOC_NCCL(*lib_, ncclGroupStart, what); !s.ok()) return s;
    absl::Status st = absl::OkStatus();
    for (int j = 0; j < k && st.ok(); ++j) {
      st = HLOC_NCCL(*lib_, ncclSend, what, reinterpret_cast<void*>(args[j]), static_cast<size_t>(t.arguments[j].size),
                     ncclUint8, j, nc, cs);
      if (st.ok())
        st = HLOC_NCCL(*lib_, ncclRecv, what, reinterpret_cast<void*>(args[n + j]),
                       static_cast<size_t>(t.arguments[n + j].size), ncclUint8, j, nc, cs);
    }
    absl::Status end = HLOC_NCCL(*lib_, ncclGroupEnd, what);
    return st.ok() ? end : st;
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t outer = c.outer[i], chunk = c.chunk_bytes[i], block = outer * chunk;
    CUdeviceptr send = args[i], recv = args[n + i];
    if (outer > 1) {
      absl::StatusOr<CUdeviceptr> a = Scratch(t, block * k, static_cast<int>(2 * i));
      absl::StatusOr<CUdeviceptr> b = Scratch(t, block * k, static_cast<int>(2 * i + 1));
      if (!a.ok()) return a.status();
      if (!b.ok()) return b.status();
      if (absl::Status s = Restage(d, args[i], *a, outer, k, chunk, true, stream); !s.ok()) return s;
      send = *a;
      recv = *b;
    }
    if (absl::Status s = HLOC_NCCL(*lib_, ncclGroupStart, what); !s.ok()) return s;
    absl::Status st = absl::OkStatus();
    for (int j = 0; j < k && st.ok(); ++j) {
      st = HLOC_NCCL(*lib_, ncclSend, what, reinterpret_cast<void*>(send + j * block), static_cast<size_t>(block),
                     ncclUint8, j, nc, cs);
      if (st.ok())
        st = HLOC_NCCL(*lib_, ncclRecv, what, reinterpret_cast<void*>(recv + j * block), static_cast<size_t>(block),
                       ncclUint8, j, nc, cs);
    }
    absl::Status end = HLOC_NCCL(*lib_, ncclGroupEnd, what);
    if (!st.ok()) return st;
    if (!end.ok()) return end;
    if (outer > 1)
      if (absl::Status s = Restage(d, args[n + i], recv, outer, k, chunk, false, stream); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status NcclDevice::Permute(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  const CollectiveConfig& c = t.collective;
  const CudaDriver& d = *context_->driver;
  const size_t n = args.size() / 2;
  std::vector<int64_t> targets;
  int64_t source = -1;
  for (const auto& [s, tg] : c.source_target_pairs) {
    if (s == device_id_) targets.push_back(tg);
    if (tg == device_id_) source = s;
  }
  const std::string what = absl::StrCat("running %", t.name);
  const ncclComm_t world = static_cast<ncclComm_t>(world_);
  const cudaStream_t cs = reinterpret_cast<cudaStream_t>(stream);
  if (world_ == nullptr) return absl::FailedPreconditionError("the communicator was aborted");
  if (source < 0) {  // nothing arrives: the result is zero (XLA's semantics)
    for (size_t i = 0; i < n; ++i)
      if (absl::Status s = HLOC_CU(d, cuMemsetD8Async, what, args[n + i], 0, static_cast<size_t>(t.arguments[n + i].size), stream); !s.ok())
        return s;
  }
  if (absl::Status s = HLOC_NCCL(*lib_, ncclGroupStart, what); !s.ok()) return s;
  absl::Status st = absl::OkStatus();
  for (size_t i = 0; i < n && st.ok(); ++i) {
    const size_t bytes = static_cast<size_t>(t.arguments[n + i].size);
    for (int64_t tg : targets) {
      if (tg == device_id_) continue;
      st = HLOC_NCCL(*lib_, ncclSend, what, reinterpret_cast<void*>(args[i]), bytes, ncclUint8, static_cast<int>(tg),
                     world, cs);
      if (!st.ok()) break;
    }
    if (st.ok() && source >= 0 && source != device_id_)
      st = HLOC_NCCL(*lib_, ncclRecv, what, reinterpret_cast<void*>(args[n + i]), bytes, ncclUint8,
                     static_cast<int>(source), world, cs);
  }
  absl::Status end = HLOC_NCCL(*lib_, ncclGroupEnd, what);
  if (!st.ok()) return st;
  if (!end.ok()) return end;
  if (source == device_id_)  // a self pair: the operand itself
    for (size_t i = 0; i < n; ++i)
      if (args[i] != args[n + i])
        if (absl::Status s = HLOC_CU(d, cuMemcpyDtoDAsync, what, args[n + i], args[i], static_cast<size_t>(t.arguments[n + i].size), stream); !s.ok())
          return s;
  return absl::OkStatus();
}

absl::Status NcclDevice::Broadcast(const Thunk& t, const std::vector<CUdeviceptr>& args, CUstream stream) {
  int rank = 0, k = 0;
  absl::StatusOr<Comm> comm = CommFor(t.collective, &rank, &k);
  if (!comm.ok()) return comm.status();
  const size_t n = args.size() / 2;
  const std::string what = absl::StrCat("running %", t.name);
  if (absl::Status s = HLOC_NCCL(*lib_, ncclGroupStart, what); !s.ok()) return s;
  absl::Status st = absl::OkStatus();
  for (size_t i = 0; i < n && st.ok(); ++i)
    st = HLOC_NCCL(*lib_, ncclBroadcast, what, reinterpret_cast<void*>(args[i]), reinterpret_cast<void*>(args[n + i]),
                   static_cast<size_t>(t.arguments[n + i].size), ncclUint8, 0, static_cast<ncclComm_t>(*comm),
                   reinterpret_cast<cudaStream_t>(stream));
  absl::Status end = HLOC_NCCL(*lib_, ncclGroupEnd, what);
  return st.ok() ? end : st;
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
