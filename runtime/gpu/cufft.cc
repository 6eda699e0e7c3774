// cuFFT plans for kFft thunks (see cufft.h).
#include "runtime/gpu/cufft.h"

#include <dlfcn.h>

#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#if HLOC_HAVE_CUDA
#include <cufft.h>
#endif

namespace hloc::runtime::gpu {

#if !HLOC_HAVE_CUDA
absl::Status CufftAvailable() { return absl::UnavailableError("hloc was built without the CUDA headers"); }
absl::StatusOr<std::string> CufftVersionString() { return CufftAvailable(); }
#else

namespace {

#define HLOC_CUFFT_ENTRIES(X)                                                                                  \
  X(cufftCreate) X(cufftDestroy) X(cufftGetVersion) X(cufftSetAutoAllocation) X(cufftMakePlanMany64)           \
  X(cufftSetWorkArea) X(cufftSetStream) X(cufftExecC2C) X(cufftExecR2C) X(cufftExecC2R) X(cufftExecZ2Z)        \
  X(cufftExecD2Z) X(cufftExecZ2D)

struct CufftLib {
  int version = 0;
#define HLOC_CUFFT_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUFFT_ENTRIES(HLOC_CUFFT_MEMBER)
#undef HLOC_CUFFT_MEMBER
};

absl::StatusOr<std::unique_ptr<CufftLib>> LoadLibOnce() {
  absl::StatusOr<void*> lib =
      OpenLibrary({"libcufft.so.12", "libcufft.so.11", "/usr/local/cuda/lib64/libcufft.so.12",
                   "/usr/local/cuda/lib64/libcufft.so.11", "libcufft.so"},
                  "cuFFT (set LD_LIBRARY_PATH=/usr/local/cuda/lib64)");
  if (!lib.ok()) return lib.status();
  auto l = std::make_unique<CufftLib>();
  std::vector<std::string> missing;
#define HLOC_CUFFT_LOAD(name)                                           \
  l->name = reinterpret_cast<decltype(l->name)>(dlsym(*lib, #name));    \
  if (l->name == nullptr) missing.push_back(#name);
  HLOC_CUFFT_ENTRIES(HLOC_CUFFT_LOAD)
#undef HLOC_CUFFT_LOAD
  if (!missing.empty()) return absl::UnavailableError(absl::StrCat("cuFFT lacks ", absl::StrJoin(missing, ", ")));
  if (l->cufftGetVersion(&l->version) != CUFFT_SUCCESS) l->version = 0;
  return l;
}

absl::StatusOr<const CufftLib*> LoadLib() { return LoadLibraryOnce(LoadLibOnce); }

const char* ResultName(cufftResult r) {
  switch (r) {
    case CUFFT_SUCCESS: return "CUFFT_SUCCESS";
    case CUFFT_INVALID_PLAN: return "CUFFT_INVALID_PLAN";
    case CUFFT_ALLOC_FAILED: return "CUFFT_ALLOC_FAILED";
    case CUFFT_INVALID_TYPE: return "CUFFT_INVALID_TYPE";
    case CUFFT_INVALID_VALUE: return "CUFFT_INVALID_VALUE";
    case CUFFT_INTERNAL_ERROR: return "CUFFT_INTERNAL_ERROR";
    case CUFFT_EXEC_FAILED: return "CUFFT_EXEC_FAILED";
    case CUFFT_SETUP_FAILED: return "CUFFT_SETUP_FAILED";
    case CUFFT_INVALID_SIZE: return "CUFFT_INVALID_SIZE";
    case CUFFT_UNALIGNED_DATA: return "CUFFT_UNALIGNED_DATA";
    case CUFFT_INVALID_DEVICE: return "CUFFT_INVALID_DEVICE";
    case CUFFT_NO_WORKSPACE: return "CUFFT_NO_WORKSPACE";
    case CUFFT_NOT_IMPLEMENTED: return "CUFFT_NOT_IMPLEMENTED";
    case CUFFT_NOT_SUPPORTED: return "CUFFT_NOT_SUPPORTED";
    default: return "cufftResult";
  }
}

absl::Status FftCheck(cufftResult r, const char* fn, const std::string& what) {
  if (r == CUFFT_SUCCESS) return absl::OkStatus();
  const std::string msg = absl::StrCat(fn, " failed with ", ResultName(r), " (", static_cast<int>(r), ") while ", what);
  if (r == CUFFT_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (r == CUFFT_INVALID_SIZE || r == CUFFT_INVALID_TYPE || r == CUFFT_INVALID_VALUE || r == CUFFT_UNALIGNED_DATA)
    return absl::InvalidArgumentError(msg);
  if (r == CUFFT_NOT_IMPLEMENTED || r == CUFFT_NOT_SUPPORTED) return absl::UnimplementedError(msg);
  return absl::InternalError(msg);
}
#define HLOC_FFT(lib, fn, what, ...) FftCheck((lib).fn(__VA_ARGS__), #fn, (what))

cufftType CufftTypeOf(const FftGeometry& g) {
  switch (g.kind) {
    case FftGeometry::Kind::kC2C: return g.double_precision ? CUFFT_Z2Z : CUFFT_C2C;
    case FftGeometry::Kind::kR2C: return g.double_precision ? CUFFT_D2Z : CUFFT_R2C;
    case FftGeometry::Kind::kC2R: return g.double_precision ? CUFFT_Z2D : CUFFT_C2R;
  }
  return CUFFT_C2C;
}

bool Overlap(CUdeviceptr a, int64_t a_bytes, CUdeviceptr b, int64_t b_bytes) {
  return a < b + static_cast<CUdeviceptr>(b_bytes) && b < a + static_cast<CUdeviceptr>(a_bytes);
}

constexpr int64_t kAlign = 256;  // the workspace's pieces start on cudaMalloc's alignment
int64_t RoundUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// Plan creation and destruction are serialized: several executables may load at once.
std::mutex& PlanMutex() {
  static std::mutex mu;
  return mu;
}

}  // namespace

struct CufftPlanState {
  const CufftLib* lib = nullptr;
  const CudaContext* ctx = nullptr;
  FftGeometry geometry;
  std::string name;
  bool has_plan = false;
  cufftHandle plan = 0;
  bool copy_input = false;
  int64_t copy_bytes = 0;   // RoundUp(input bytes) when copying, else 0
  int64_t work_bytes = 0;   // cuFFT's work area
  CUstream stream = nullptr;
  CUdeviceptr input_copy = 0;
};

absl::Status CufftAvailable() {
  absl::StatusOr<const CufftLib*> lib = LoadLib();
  return lib.ok() ? absl::OkStatus() : lib.status();
}

absl::StatusOr<std::string> CufftVersionString() {
  absl::StatusOr<const CufftLib*> lib = LoadLib();
  if (!lib.ok()) return lib.status();
  return absl::StrCat("cufft-", (*lib)->version);
}

absl::StatusOr<std::unique_ptr<CufftPlan>> CufftPlan::Create(const CudaContext& context, const FftConfig& config,
                                                             CUdeviceptr input, int64_t input_bytes,
                                                             CUdeviceptr output, int64_t output_bytes,
                                                             const std::string& name) {
  absl::StatusOr<FftGeometry> g = AnalyzeFft(config, input_bytes, output_bytes);
  if (!g.ok()) return absl::Status(g.status().code(), absl::StrCat("thunk '", name, "': ", g.status().message()));
  std::unique_ptr<CufftPlan> p(new CufftPlan());
  p->state_ = std::make_unique<CufftPlanState>();
  CufftPlanState& s = *p->state_;
  s.ctx = &context;
  s.geometry = *g;
  s.name = name;
  const FftGeometry& geo = s.geometry;
  if (geo.zero_length || geo.batch == 0) return p;  // nothing for cuFFT (Run zero-fills or does nothing)
  if (input % geo.input_element_bytes != 0 || output % geo.output_element_bytes != 0)
    return absl::InvalidArgumentError(absl::StrCat("thunk '", name, "': ", geo.description,
                                                   ": cuFFT needs element-aligned input and output buffers"));
  absl::StatusOr<const CufftLib*> lib = LoadLib();
  if (!lib.ok()) return lib.status();
  s.lib = *lib;
  const bool in_place = input == output && geo.kind == FftGeometry::Kind::kC2C;
  s.copy_input = geo.kind == FftGeometry::Kind::kC2R ||
                 (!in_place && Overlap(input, geo.input_bytes(), output, geo.output_bytes()));
  s.copy_bytes = s.copy_input ? RoundUp(geo.input_bytes()) : 0;
  const std::string what = absl::StrCat("planning ", geo.description, " for thunk '", name, "'");
  std::lock_guard<std::mutex> lock(PlanMutex());
  if (absl::Status st = context.MakeCurrent(); !st.ok()) return st;
  if (absl::Status st = HLOC_FFT(*s.lib, cufftCreate, what, &s.plan); !st.ok()) return st;
  s.has_plan = true;  // from here the destructor destroys it
  if (absl::Status st = HLOC_FFT(*s.lib, cufftSetAutoAllocation, what, s.plan, 0); !st.ok()) return st;
  const int rank = static_cast<int>(geo.n.size());
  std::vector<long long> n(geo.n.begin(), geo.n.end());
  std::vector<long long> inembed(geo.input_embed.begin(), geo.input_embed.end());
  std::vector<long long> onembed(geo.output_embed.begin(), geo.output_embed.end());
  size_t work = 0;
  if (absl::Status st = HLOC_FFT(*s.lib, cufftMakePlanMany64, what, s.plan, rank, n.data(), inembed.data(), 1,
                                 geo.input_distance, onembed.data(), 1, geo.output_distance, CufftTypeOf(geo),
                                 geo.batch, &work);
      !st.ok())
    return st;
  s.work_bytes = RoundUp(static_cast<int64_t>(work));
  return p;
}

CufftPlan::~CufftPlan() {
  if (state_ == nullptr || !state_->has_plan) return;
  std::lock_guard<std::mutex> lock(PlanMutex());
  (void)state_->ctx->MakeCurrent();
  state_->lib->cufftDestroy(state_->plan);
}

int64_t CufftPlan::workspace_bytes() const { return state_->copy_bytes + state_->work_bytes; }
const FftGeometry& CufftPlan::geometry() const { return state_->geometry; }
const std::string& CufftPlan::description() const { return state_->geometry.description; }

absl::Status CufftPlan::Prepare(CUstream stream, CUdeviceptr workspace, int64_t workspace_bytes) {
  CufftPlanState& s = *state_;
  s.stream = stream;
  if (!s.has_plan) return absl::OkStatus();
  if (workspace_bytes < this->workspace_bytes() || (this->workspace_bytes() > 0 && workspace == 0))
    return absl::InternalError(absl::StrCat("thunk '", s.name, "': cuFFT needs ", this->workspace_bytes(),
                                            " workspace bytes, the executable has ", workspace_bytes));
  const std::string what = absl::StrCat("binding the stream and work area of thunk '", s.name, "'");
  if (absl::Status st = HLOC_FFT(*s.lib, cufftSetStream, what, s.plan, reinterpret_cast<cudaStream_t>(stream));
      !st.ok())
    return st;
  s.input_copy = s.copy_input ? workspace : 0;
  void* work = s.work_bytes > 0 ? reinterpret_cast<void*>(workspace + s.copy_bytes) : nullptr;
  return HLOC_FFT(*s.lib, cufftSetWorkArea, what, s.plan, work);
}

absl::Status CufftPlan::Run(CUdeviceptr input, CUdeviceptr output) const {
  const CufftPlanState& s = *state_;
  const FftGeometry& g = s.geometry;
  const CudaDriver& d = *s.ctx->driver;
  if (g.zero_length) {
    if (g.output_bytes() == 0) return absl::OkStatus();
    return HLOC_CU(d, cuMemsetD8Async, "zeroing the output of a length-0 fft", output, 0,
                   static_cast<size_t>(g.output_bytes()), s.stream);
  }
  if (!s.has_plan) return absl::OkStatus();
  CUdeviceptr in = input;
  if (s.copy_input) {
    if (absl::Status st = HLOC_CU(d, cuMemcpyDtoDAsync, "copying the fft input (cuFFT overwrites it)", s.input_copy,
                                  input, static_cast<size_t>(g.input_bytes()), s.stream);
        !st.ok())
      return st;
    in = s.input_copy;
  }
  const std::string what = absl::StrCat("running ", g.description);
  const int direction = g.inverse ? CUFFT_INVERSE : CUFFT_FORWARD;
  void* i = reinterpret_cast<void*>(in);
  void* o = reinterpret_cast<void*>(output);
  switch (CufftTypeOf(g)) {
    case CUFFT_C2C:
      return HLOC_FFT(*s.lib, cufftExecC2C, what, s.plan, static_cast<cufftComplex*>(i),
                      static_cast<cufftComplex*>(o), direction);
    case CUFFT_Z2Z:
      return HLOC_FFT(*s.lib, cufftExecZ2Z, what, s.plan, static_cast<cufftDoubleComplex*>(i),
                      static_cast<cufftDoubleComplex*>(o), direction);
    case CUFFT_R2C:
      return HLOC_FFT(*s.lib, cufftExecR2C, what, s.plan, static_cast<cufftReal*>(i), static_cast<cufftComplex*>(o));
    case CUFFT_D2Z:
      return HLOC_FFT(*s.lib, cufftExecD2Z, what, s.plan, static_cast<cufftDoubleReal*>(i),
                      static_cast<cufftDoubleComplex*>(o));
    case CUFFT_C2R:
      return HLOC_FFT(*s.lib, cufftExecC2R, what, s.plan, static_cast<cufftComplex*>(i), static_cast<cufftReal*>(o));
    case CUFFT_Z2D:
      return HLOC_FFT(*s.lib, cufftExecZ2D, what, s.plan, static_cast<cufftDoubleComplex*>(i),
                      static_cast<cufftDoubleReal*>(o));
    default:
      return absl::InternalError("unexpected cuFFT type");
  }
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
