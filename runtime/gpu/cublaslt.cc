// cuBLASLt GEMMs (see cublaslt.h for the conventions).
#include "runtime/gpu/cublaslt.h"

#include <dlfcn.h>

#include <algorithm>
#include <optional>
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/gpu/graph_timer.h"

#if HLOC_HAVE_CUDA
#include <cublasLt.h>
#endif

namespace hloc::runtime::gpu {

#if !HLOC_HAVE_CUDA
absl::Status CublasLtAvailable() { return absl::UnavailableError("hloc was built without the CUDA headers"); }
absl::StatusOr<std::string> CublasLtVersionString() { return CublasLtAvailable(); }
#else

namespace {

#define HLOC_CUBLASLT_ENTRIES(X)                                                                                 \
  X(cublasLtCreate) X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtGetStatusName) X(cublasLtGetStatusString) \
  X(cublasLtMatmulDescCreate) X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute)                     \
  X(cublasLtMatrixLayoutCreate) X(cublasLtMatrixLayoutDestroy) X(cublasLtMatrixLayoutSetAttribute)               \
  X(cublasLtMatmulPreferenceCreate) X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)   \
  X(cublasLtMatmulAlgoGetHeuristic) X(cublasLtMatmulAlgoCheck) X(cublasLtMatmul)                                 \
  X(cublasLtMatmulAlgoGetIds) X(cublasLtMatmulAlgoInit) X(cublasLtMatmulAlgoCapGetAttribute)                     \
  X(cublasLtMatmulAlgoConfigSetAttribute)

struct CublasLtLib {
  void* library = nullptr;
  size_t version = 0;
#define HLOC_LT_MEMBER(name) decltype(&::name) name = nullptr;
  HLOC_CUBLASLT_ENTRIES(HLOC_LT_MEMBER)
#undef HLOC_LT_MEMBER
};

absl::StatusOr<std::unique_ptr<CublasLtLib>> LoadLibOnce() {
  absl::StatusOr<void*> lib = OpenLibrary({"libcublasLt.so.13", "libcublasLt.so.12", "/usr/local/cuda/lib64/libcublasLt.so.13",
                                           "/usr/local/cuda/lib64/libcublasLt.so.12", "libcublasLt.so"},
                                          "cuBLASLt (set LD_LIBRARY_PATH=/usr/local/cuda/lib64)");
  if (!lib.ok()) return lib.status();
  auto l = std::make_unique<CublasLtLib>();
  l->library = *lib;
  std::vector<std::string> missing;
#define HLOC_LT_LOAD(name)                                                     \
  l->name = reinterpret_cast<decltype(l->name)>(dlsym(*lib, #name));           \
  if (l->name == nullptr) missing.push_back(#name);
  HLOC_CUBLASLT_ENTRIES(HLOC_LT_LOAD)
#undef HLOC_LT_LOAD
  if (!missing.empty()) return absl::UnavailableError(absl::StrCat("cuBLASLt lacks ", absl::StrJoin(missing, ", ")));
  l->version = l->cublasLtGetVersion();
  return l;
}

absl::StatusOr<const CublasLtLib*> LoadLib() { return LoadLibraryOnce(LoadLibOnce); }

absl::Status LtCheck(const CublasLtLib& lib, cublasStatus_t s, const char* fn, const std::string& what) {
  if (s == CUBLAS_STATUS_SUCCESS) return absl::OkStatus();
  const char* name = lib.cublasLtGetStatusName(s);
  const char* text = lib.cublasLtGetStatusString(s);
  std::string msg = absl::StrCat(fn, " failed with ", name ? name : "?", " (", text ? text : "", ") while ", what);
  if (s == CUBLAS_STATUS_ALLOC_FAILED) return absl::ResourceExhaustedError(msg);
  if (s == CUBLAS_STATUS_NOT_SUPPORTED || s == CUBLAS_STATUS_ARCH_MISMATCH) return absl::UnimplementedError(msg);
  if (s == CUBLAS_STATUS_INVALID_VALUE) return absl::InvalidArgumentError(msg);
  return absl::InternalError(msg);
}
#define HLOC_LT(lib, fn, what, ...) LtCheck((lib), (lib).fn(__VA_ARGS__), #fn, (what))

// One handle per device, made once (cublasLtCreate is not cheap and handles are thread-safe
// for matmuls on different streams).
absl::StatusOr<cublasLtHandle_t> Handle(const CublasLtLib& lib, const CudaContext& ctx) {
  static std::mutex mu;
  static auto* handles = new std::map<int, cublasLtHandle_t>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = handles->find(ctx.info.ordinal);
  if (it != handles->end()) return it->second;
  if (absl::Status s = ctx.MakeCurrent(); !s.ok()) return s;
  cublasLtHandle_t h = nullptr;
  if (absl::Status s = HLOC_LT(lib, cublasLtCreate, "creating the cuBLASLt handle", &h); !s.ok()) return s;
  (*handles)[ctx.info.ordinal] = h;
  return h;
}

struct TypeInfo {
  cudaDataType_t type;
  int64_t bytes;
  bool f8 = false;
  bool complex = false;
};

std::optional<TypeInfo> LtType(const std::string& t) {
  if (t == "f32") return TypeInfo{CUDA_R_32F, 4};
  if (t == "f64") return TypeInfo{CUDA_R_64F, 8};
  if (t == "bf16") return TypeInfo{CUDA_R_16BF, 2};
  if (t == "f16") return TypeInfo{CUDA_R_16F, 2};
  if (t == "s8") return TypeInfo{CUDA_R_8I, 1};
  if (t == "s32") return TypeInfo{CUDA_R_32I, 4};
  if (t == "f8e4m3fn") return TypeInfo{CUDA_R_8F_E4M3, 1, true};
  if (t == "f8e5m2") return TypeInfo{CUDA_R_8F_E5M2, 1, true};
  if (t == "c64") return TypeInfo{CUDA_C_32F, 8, false, true};
  if (t == "c128") return TypeInfo{CUDA_C_64F, 16, false, true};
  return std::nullopt;
}

std::optional<cublasLtEpilogue_t> LtEpilogue(const std::string& e) {
  if (e.empty() || e == "DEFAULT") return CUBLASLT_EPILOGUE_DEFAULT;
  if (e == "BIAS") return CUBLASLT_EPILOGUE_BIAS;
  if (e == "RELU") return CUBLASLT_EPILOGUE_RELU;
  if (e == "BIAS_RELU") return CUBLASLT_EPILOGUE_RELU_BIAS;
  if (e == "GELU") return CUBLASLT_EPILOGUE_GELU;
  if (e == "BIAS_GELU") return CUBLASLT_EPILOGUE_GELU_BIAS;
  return std::nullopt;
}

bool HasBias(const std::string& e) { return e == "BIAS" || e == "BIAS_RELU" || e == "BIAS_GELU"; }

// The largest element index + 1 that a [batch, rows, cols] view with leading dim ld and batch
// stride bs touches (0 when empty); -1 on overflow.
int64_t Extent(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t bs) {
  if (batch == 0 || rows == 0 || cols == 0) return 0;
  __int128 e = static_cast<__int128>(batch - 1) * bs + static_cast<__int128>(rows - 1) * ld + cols;
  if (e > INT64_MAX) return -1;
  return static_cast<int64_t>(e);
}

std::string Hex(const void* data, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(digits[p[i] >> 4]);
    out.push_back(digits[p[i] & 15]);
  }
  return out;
}

bool Unhex(const std::string& s, void* data, size_t n) {
  if (s.size() != 2 * n) return false;
  auto* p = static_cast<uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    int v = 0;
    for (int j = 0; j < 2; ++j) {
      const char c = s[2 * i + j];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + d;
    }
    p[i] = static_cast<uint8_t>(v);
  }
  return true;
}

}  // namespace

absl::Status CublasLtAvailable() {
  absl::StatusOr<const CublasLtLib*> lib = LoadLib();
  return lib.ok() ? absl::OkStatus() : lib.status();
}

absl::StatusOr<std::string> CublasLtVersionString() {
  absl::StatusOr<const CublasLtLib*> lib = LoadLib();
  if (!lib.ok()) return lib.status();
  return absl::StrCat("cublasLt-", (*lib)->version);
}

absl::StatusOr<GemmConfig> NormalizeGpuGemmConfig(const GemmConfig& config) {
  GemmConfig g = config;
  for (const std::string* t : {&g.lhs_type, &g.rhs_type, &g.output_type}) {
    if (!LtType(*t)) {
      return absl::UnimplementedError(absl::StrCat("GEMM element type '", *t,
                                                   "' is not supported by cuBLASLt here (f32, f64, bf16, f16, s8, "
                                                   "s32, f8e4m3fn, f8e5m2, c64, c128)"));
    }
  }
  // Complex GEMMs: all three of one complex type (XLA's c64 x c64 -> c64, c128 x c128 -> c128),
  // no epilogue (XLA fuses none into them); only they take an imaginary alpha.
  const bool complex = LtType(g.lhs_type)->complex || LtType(g.rhs_type)->complex || LtType(g.output_type)->complex;
  if (complex && (g.lhs_type != g.rhs_type || g.lhs_type != g.output_type)) {
    return absl::UnimplementedError(absl::StrCat("complex GEMM ", g.lhs_type, " x ", g.rhs_type, " -> ", g.output_type,
                                                 " (cuBLASLt multiplies c64 x c64 -> c64 and c128 x c128 -> c128)"));
  }
  if (complex && !(g.epilogue.empty() || g.epilogue == "DEFAULT")) {
    return absl::UnimplementedError(absl::StrCat("epilogue ", g.epilogue, " on a complex GEMM"));
  }
  if (!complex && g.alpha_imag != 0) {
    return absl::InvalidArgumentError(absl::StrCat("an imaginary alpha (", g.alpha_imag, ") on a ", g.lhs_type, " GEMM"));
  }
  if (!std::isfinite(g.alpha_imag)) return absl::InvalidArgumentError("GEMM alpha must be finite");
  if (!LtEpilogue(g.epilogue)) return absl::InvalidArgumentError(absl::StrCat("unknown GEMM epilogue '", g.epilogue, "'"));
  if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative GEMM size: batch ", g.batch, " m ", g.m, " n ", g.n, " k ", g.k));
  }
  if (!std::isfinite(g.alpha) || !std::isfinite(g.beta)) return absl::InvalidArgumentError("GEMM alpha and beta must be finite");
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, a_cols = g.lhs_transposed ? g.m : g.k;
  const int64_t b_rows = g.rhs_transposed ? g.n : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  if (g.lhs_leading_dim <= 0) g.lhs_leading_dim = std::max<int64_t>(a_cols, 1);
  if (g.rhs_leading_dim <= 0) g.rhs_leading_dim = std::max<int64_t>(b_cols, 1);
  if (g.output_leading_dim <= 0) g.output_leading_dim = std::max<int64_t>(g.n, 1);
  if (g.lhs_leading_dim < a_cols || g.rhs_leading_dim < b_cols || g.output_leading_dim < g.n) {
    return absl::InvalidArgumentError(absl::StrCat("GEMM leading dimensions (", g.lhs_leading_dim, ", ",
                                                   g.rhs_leading_dim, ", ", g.output_leading_dim,
                                                   ") below the stored row lengths (", a_cols, ", ", b_cols, ", ",
                                                   g.n, ")"));
  }
  if (g.lhs_batch_stride <= 0) g.lhs_batch_stride = a_rows * g.lhs_leading_dim;
  if (g.rhs_batch_stride <= 0) g.rhs_batch_stride = b_rows * g.rhs_leading_dim;
  if (g.output_batch_stride <= 0) g.output_batch_stride = g.m * g.output_leading_dim;
  return g;
}

struct GemmPlanState {
  const CublasLtLib* lib = nullptr;
  const CudaContext* ctx = nullptr;
  cublasLtHandle_t handle = nullptr;
  GemmConfig g;
  std::string name, description, key, chosen_by;
  bool has_c = false, bias = false;
  GemmOptions options;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, c_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool have_algo = false;
  // alpha/beta in the scale type (host pointer mode); complex scales are {re, im} pairs
  // (cuComplex, cuDoubleComplex).
  float alpha_f = 1, beta_f = 0;
  double alpha_d = 1, beta_d = 0;
  int32_t alpha_i = 1, beta_i = 0;
  float alpha_c[2] = {1, 0}, beta_c[2] = {0, 0};
  double alpha_z[2] = {1, 0}, beta_z[2] = {0, 0};
  cudaDataType_t scale_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cudaDataType_t lt_a_type = CUDA_R_32F, lt_b_type = CUDA_R_32F, d_type = CUDA_R_32F;  // cuBLASLt's A, B; C and D

  const void* alpha() const {
    switch (scale_type) {
      case CUDA_R_64F: return &alpha_d;
      case CUDA_R_32I: return &alpha_i;
      case CUDA_C_32F: return alpha_c;
      case CUDA_C_64F: return alpha_z;
      default: return &alpha_f;
    }
  }
  const void* beta() const {
    switch (scale_type) {
      case CUDA_R_64F: return &beta_d;
      case CUDA_R_32I: return &beta_i;
      case CUDA_C_32F: return beta_c;
      case CUDA_C_64F: return beta_z;
      default: return &beta_f;
    }
  }
  std::string Where(const std::string& what) const { return absl::StrCat(what, " for GEMM '", name, "' (", description, ")"); }
};

CublasLtGemm::~CublasLtGemm() {
  if (state_ == nullptr || state_->lib == nullptr) return;
  const CublasLtLib& l = *state_->lib;
  for (cublasLtMatrixLayout_t m : {state_->a_layout, state_->b_layout, state_->c_layout, state_->d_layout})
    if (m != nullptr) l.cublasLtMatrixLayoutDestroy(m);
  if (state_->desc != nullptr) l.cublasLtMatmulDescDestroy(state_->desc);
}

const std::string& CublasLtGemm::description() const { return state_->description; }
const std::string& CublasLtGemm::key() const { return state_->key; }
const std::string& CublasLtGemm::chosen_by() const { return state_->chosen_by; }

absl::StatusOr<std::unique_ptr<CublasLtGemm>> CublasLtGemm::Create(const CudaContext& ctx, const GemmConfig& config,
                                                                   bool has_c, int64_t a_bytes, int64_t b_bytes,
                                                                   int64_t c_bytes, int64_t d_bytes,
                                                                   const GemmOptions& options, const std::string& name) {
  absl::StatusOr<const CublasLtLib*> lib = LoadLib();
  if (!lib.ok()) return lib.status();
  const CublasLtLib& l = **lib;
  absl::StatusOr<GemmConfig> norm = NormalizeGpuGemmConfig(config);
  if (!norm.ok()) return absl::Status(norm.status().code(), absl::StrCat("GEMM '", name, "': ", norm.status().message()));
  const GemmConfig& g = *norm;
  std::unique_ptr<CublasLtGemm> plan(new CublasLtGemm());
  plan->state_ = std::make_unique<GemmPlanState>();
  GemmPlanState& st = *plan->state_;
  st.lib = &l;
  st.ctx = &ctx;
  st.g = g;
  st.name = name;
  st.has_c = has_c;
  st.options = options;
  st.bias = HasBias(g.epilogue);
  const TypeInfo ta = *LtType(g.lhs_type), tb = *LtType(g.rhs_type), td = *LtType(g.output_type);
  st.description = absl::StrFormat("%s x %s -> %s [batch %d] m=%d n=%d k=%d %s%s lds %d/%d/%d epilogue %s alpha %g beta %g",
                                   g.lhs_type, g.rhs_type, g.output_type, g.batch, g.m, g.n, g.k,
                                   g.lhs_transposed ? "T" : "N", g.rhs_transposed ? "T" : "N", g.lhs_leading_dim,
                                   g.rhs_leading_dim, g.output_leading_dim, g.epilogue, g.alpha, g.beta);
  if (g.alpha_imag != 0) absl::StrAppendFormat(&st.description, " alpha_imag %g", g.alpha_imag);
  // Bounds: every element the views touch lies inside its slice.
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, a_cols = g.lhs_transposed ? g.m : g.k;
  const int64_t b_rows = g.rhs_transposed ? g.n : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  struct Need { const char* what; int64_t extent, esize, have; };
  std::vector<Need> needs = {{"lhs", Extent(g.batch, a_rows, a_cols, g.lhs_leading_dim, g.lhs_batch_stride), ta.bytes, a_bytes},
                             {"rhs", Extent(g.batch, b_rows, b_cols, g.rhs_leading_dim, g.rhs_batch_stride), tb.bytes, b_bytes},
                             {"output", Extent(g.batch, g.m, g.n, g.output_leading_dim, g.output_batch_stride), td.bytes, d_bytes}};
  if (st.bias) {
    if (!has_c) return absl::InvalidArgumentError(st.Where("epilogue " + g.epilogue + " needs a bias argument"));
    needs.push_back({"bias", g.n, td.bytes, c_bytes});
  } else if (has_c && g.beta != 0) {
    needs.push_back({"C", Extent(g.batch, g.m, g.n, g.output_leading_dim, g.output_batch_stride), td.bytes, c_bytes});
  }
  for (const Need& n : needs) {
    if (n.extent < 0 || n.extent > n.have / std::max<int64_t>(n.esize, 1)) {
      return absl::InvalidArgumentError(st.Where(absl::StrCat("the ", n.what, " view (", n.extent, " elements of ",
                                                              n.esize, " bytes) does not fit its ", n.have,
                                                              "-byte buffer")));
    }
  }
  absl::StatusOr<cublasLtHandle_t> h = Handle(l, ctx);
  if (!h.ok()) return h.status();
  st.handle = *h;

  // Compute and scale types.
  const bool ints = g.lhs_type == "s8";
  cublasComputeType_t compute;
  if (g.lhs_type == "c128") {
    // XLA's GetBlasComputationType: kF64 for c128 (CUDA_C_64F in, out and scale).
    compute = CUBLAS_COMPUTE_64F;
    st.scale_type = CUDA_C_64F;
  } else if (g.lhs_type == "c64") {
    // f32 for c64 as for f32, TF32 tensor cores under the same rule (XLA's kTF32AsF32 for C64).
    compute = g.compute_type == "tf32" || (options.allow_tf32 && g.compute_type != "f32_highest")
                  ? CUBLAS_COMPUTE_32F_FAST_TF32
                  : CUBLAS_COMPUTE_32F;
    st.scale_type = CUDA_C_32F;
  } else if (g.lhs_type == "f64" || g.compute_type == "f64") {
    compute = CUBLAS_COMPUTE_64F;
    st.scale_type = CUDA_R_64F;
  } else if (ints) {
    compute = CUBLAS_COMPUTE_32I;
    st.scale_type = g.output_type == "s32" ? CUDA_R_32I : CUDA_R_32F;
  } else if (g.lhs_type == "f32" && g.rhs_type == "f32" &&
             (g.compute_type == "tf32" || (options.allow_tf32 && g.compute_type != "f32_highest"))) {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else {
    compute = CUBLAS_COMPUTE_32F;
  }
  const double beta = st.bias ? 0.0 : (has_c || g.beta != 0 ? g.beta : 0.0);
  st.alpha_f = static_cast<float>(g.alpha), st.beta_f = static_cast<float>(beta);
  st.alpha_d = g.alpha, st.beta_d = beta;
  st.alpha_i = static_cast<int32_t>(g.alpha), st.beta_i = static_cast<int32_t>(beta);
  st.alpha_c[0] = static_cast<float>(g.alpha), st.alpha_c[1] = static_cast<float>(g.alpha_imag);
  st.beta_c[0] = static_cast<float>(beta), st.beta_c[1] = 0;
  st.alpha_z[0] = g.alpha, st.alpha_z[1] = g.alpha_imag;
  st.beta_z[0] = beta, st.beta_z[1] = 0;
  if (st.scale_type == CUDA_R_32I && (st.alpha_i != g.alpha || st.beta_i != beta)) {
    return absl::UnimplementedError(st.Where("an integer GEMM with a non-integer alpha or beta"));
  }
  if ((ta.f8 || tb.f8) && (g.lhs_transposed || !g.rhs_transposed)) {
    return absl::UnimplementedError(st.Where("an f8 GEMM outside cuBLASLt's TN layout (A stored [m, k], B stored [n, k])"));
  }

  st.compute = compute;
  st.lt_a_type = tb.type, st.lt_b_type = ta.type, st.d_type = td.type;
  auto where = [&](const char* what) { return st.Where(what); };
  if (absl::Status s = HLOC_LT(l, cublasLtMatmulDescCreate, where("creating the matmul descriptor"), &st.desc, compute,
                               st.scale_type);
      !s.ok()) {
    return s;
  }
  // cuBLASLt's A is our B, its B our A (see cublaslt.h).
  const cublasOperation_t op_a = g.rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.lhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasLtEpilogue_t epi = *LtEpilogue(g.epilogue);
  auto set_desc = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t n, const char* what) {
    return HLOC_LT(l, cublasLtMatmulDescSetAttribute, where(what), st.desc, attr, v, n);
  };
  if (absl::Status s = set_desc(CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof(op_a), "setting TRANSA"); !s.ok()) return s;
  if (absl::Status s = set_desc(CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof(op_b), "setting TRANSB"); !s.ok()) return s;
  if (absl::Status s = set_desc(CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi), "setting the epilogue"); !s.ok()) {
    return s;
  }
  if (st.bias) {
    const cudaDataType_t bias_type = td.type;
    if (absl::Status s = set_desc(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof(bias_type), "setting the bias type");
        !s.ok()) {
      return s;
    }
  }
  // Column-major layouts: X^T of each row-major view.
  auto layout = [&](cublasLtMatrixLayout_t* out, cudaDataType_t type, int64_t cm_rows, int64_t cm_cols, int64_t ld,
                    int64_t batch_stride, const char* what) -> absl::Status {
    if (absl::Status s = HLOC_LT(l, cublasLtMatrixLayoutCreate, where(what), out, type, static_cast<uint64_t>(cm_rows),
                                 static_cast<uint64_t>(cm_cols), ld);
        !s.ok()) {
      return s;
    }
    if (g.batch > 1) {
      const int32_t count = static_cast<int32_t>(g.batch);
      if (absl::Status s = HLOC_LT(l, cublasLtMatrixLayoutSetAttribute, where(what), *out,
                                   CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
          !s.ok()) {
        return s;
      }
      if (absl::Status s = HLOC_LT(l, cublasLtMatrixLayoutSetAttribute, where(what), *out,
                                   CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &batch_stride, sizeof(batch_stride));
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  };
  // Our B stored [b_rows, b_cols] row-major is column-major [b_cols, b_rows].
  if (absl::Status s = layout(&st.a_layout, tb.type, b_cols, b_rows, g.rhs_leading_dim, g.rhs_batch_stride,
                              "describing the rhs (cuBLASLt's A)");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = layout(&st.b_layout, ta.type, a_cols, a_rows, g.lhs_leading_dim, g.lhs_batch_stride,
                              "describing the lhs (cuBLASLt's B)");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = layout(&st.c_layout, td.type, g.n, g.m, g.output_leading_dim, g.output_batch_stride, "describing C");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = layout(&st.d_layout, td.type, g.n, g.m, g.output_leading_dim, g.output_batch_stride, "describing D");
      !s.ok()) {
    return s;
  }
  st.key = absl::StrFormat("%s,%s,%s,%d|b%d,m%d,n%d,k%d|%s%s|ld%d,%d,%d|bs%d,%d,%d|%s|a%g,b%g", g.lhs_type, g.rhs_type,
                           g.output_type, static_cast<int>(compute), g.batch, g.m, g.n, g.k,
                           g.lhs_transposed ? "T" : "N", g.rhs_transposed ? "T" : "N", g.lhs_leading_dim,
                           g.rhs_leading_dim, g.output_leading_dim, g.lhs_batch_stride, g.rhs_batch_stride,
                           g.output_batch_stride, g.epilogue, g.alpha, beta);
  if (g.alpha_imag != 0) absl::StrAppendFormat(&st.key, ",ai%g", g.alpha_imag);
  return plan;
}

absl::Status CublasLtGemm::Run(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                               CUdeviceptr workspace, int64_t workspace_bytes) const {
  const GemmPlanState& st = *state_;
  const GemmConfig& g = st.g;
  if (g.batch == 0 || g.m == 0 || g.n == 0) return absl::OkStatus();
  if (!st.have_algo) return absl::FailedPreconditionError(st.Where("running before an algorithm was chosen"));
  // No C argument: C is D (beta == 0 means it is not read; beta != 0 accumulates in place).
  const CUdeviceptr c_ptr = (!st.bias && st.has_c) ? c : d;
  if (st.bias) {
    const void* bias = reinterpret_cast<const void*>(c);
    cublasStatus_t s = st.lib->cublasLtMatmulDescSetAttribute(st.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias,
                                                              sizeof(bias));
    if (absl::Status e = LtCheck(*st.lib, s, "cublasLtMatmulDescSetAttribute", st.Where("setting the bias pointer"));
        !e.ok()) {
      return e;
    }
  }
  // Our A is cuBLASLt's B and the other way round.
  cublasStatus_t s = st.lib->cublasLtMatmul(
      st.handle, st.desc, st.alpha(), reinterpret_cast<const void*>(b), st.a_layout, reinterpret_cast<const void*>(a),
      st.b_layout, st.beta(), reinterpret_cast<const void*>(c_ptr), st.c_layout, reinterpret_cast<void*>(d),
      st.d_layout, &st.algo, reinterpret_cast<void*>(workspace), static_cast<size_t>(workspace_bytes),
      reinterpret_cast<cudaStream_t>(stream));
  return LtCheck(*st.lib, s, "cublasLtMatmul", st.Where("running"));
}

namespace {

// Output tile (rows x cols of cuBLASLt's column-major D) of the classic tile ids, 0 for others.
std::pair<int, int> TileShape(uint32_t id) {
  static const int kTiles[][2] = {{0, 0},    {8, 8},    {8, 16},   {16, 8},   {8, 32},    {16, 16},  {32, 8},
                                  {8, 64},   {16, 32},  {32, 16},  {64, 8},   {32, 32},   {32, 64},  {64, 32},
                                  {32, 128}, {64, 64},  {128, 32}, {64, 128}, {128, 64},  {64, 256}, {128, 128},
                                  {256, 64}, {64, 512}, {128, 256}, {256, 128}, {512, 64}, {64, 96}, {96, 64},
                                  {96, 128}, {128, 160}, {160, 128}, {192, 128}, {128, 192}, {128, 96}, {32, 256},
                                  {256, 32}};
  if (id >= sizeof(kTiles) / sizeof(kTiles[0])) return {0, 0};
  return {kTiles[id][0], kTiles[id][1]};
}

template <typename T>
std::vector<T> CapList(const CublasLtLib& l, const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoCapAttributes_t attr) {
  size_t bytes = 0;
  if (l.cublasLtMatmulAlgoCapGetAttribute(&algo, attr, nullptr, 0, &bytes) != CUBLAS_STATUS_SUCCESS || bytes == 0)
    return {};
  std::vector<T> v(bytes / sizeof(T));
  if (l.cublasLtMatmulAlgoCapGetAttribute(&algo, attr, v.data(), v.size() * sizeof(T), &bytes) != CUBLAS_STATUS_SUCCESS)
    return {};
  return v;
}

}  // namespace

// Why: for an output too small to fill the GPU with 128x128 tiles (a recurrent step's 128x512),
// cuBLASLt's heuristic offers large tiles without split-K, which leave most SMs idle (8-13 us
// where XLA's Triton GEMMs, 32x64 and 64x32 tiles split 4-8 ways in K, take a few). This adds
// the configurations the heuristic leaves out: every algorithm's small tiles with split-K
// 1-16 and each reduction scheme it supports, kept when their CTA count is between half and
// four times the SM count (the ones that can fill the GPU once), checked by cublasLtMatmulAlgoCheck;
// the autotuner times them beside the heuristic's.
void AddSplitKCandidates(const GemmPlanState& st, int64_t workspace_bytes,
                         std::vector<cublasLtMatmulHeuristicResult_t>* out) {
  const CublasLtLib& l = *st.lib;
  const GemmConfig& g = st.g;
  const int64_t sms = std::max(1, st.ctx->info.sm_count);
  if (g.batch * g.m * g.n >= int64_t{128} * 128 * sms) return;  // big enough for the heuristic's tiles
  constexpr int kMaxIds = 64;
  constexpr size_t kMaxAdded = 96;
  int ids[kMaxIds], n_ids = 0;
  if (l.cublasLtMatmulAlgoGetIds(st.handle, st.compute, st.scale_type, st.lt_a_type, st.lt_b_type, st.d_type,
                                 st.d_type, kMaxIds, ids, &n_ids) != CUBLAS_STATUS_SUCCESS)
    return;
  struct Scored {
    double score;
    cublasLtMatmulHeuristicResult_t r;
  };
  std::vector<Scored> found;
  // cuBLASLt's D is column-major [n, m]: its rows are our columns.
  const int64_t rows = g.n, cols = g.m;
  for (int i = 0; i < n_ids; ++i) {
    cublasLtMatmulAlgo_t base;
    if (l.cublasLtMatmulAlgoInit(st.handle, st.compute, st.scale_type, st.lt_a_type, st.lt_b_type, st.d_type,
                                 st.d_type, ids[i], &base) != CUBLAS_STATUS_SUCCESS)
      continue;
    std::vector<uint32_t> tiles = CapList<uint32_t>(l, base, CUBLASLT_ALGO_CAP_TILE_IDS);
    std::vector<uint32_t> stages = CapList<uint32_t>(l, base, CUBLASLT_ALGO_CAP_STAGES_IDS);
    int32_t splitk_ok = 0;
    uint32_t schemes = 0;
    size_t written = 0;
    l.cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk_ok, sizeof(splitk_ok), &written);
    l.cublasLtMatmulAlgoCapGetAttribute(&base, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &schemes, sizeof(schemes),
                                        &written);
    for (uint32_t tile : tiles) {
      const auto [tr, tc] = TileShape(tile);
      if (tr == 0 || tr > 128 || tc > 128) continue;
      const int64_t ctas = g.batch * ((rows + tr - 1) / tr) * ((cols + tc - 1) / tc);
      for (uint32_t split : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u}) {
        if (split > 1 && (!splitk_ok || g.k / split < 32)) continue;
        const int64_t all = ctas * split;
        if (all * 2 < sms || all > 4 * sms) continue;
        for (uint32_t scheme : {0u, 1u, 2u, 4u}) {
          if ((split == 1) != (scheme == 0) || (scheme != 0 && !(schemes & scheme))) continue;
          cublasLtMatmulAlgo_t a = base;
          l.cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile));
          l.cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split, sizeof(split));
          l.cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &scheme, sizeof(scheme));
          // The default stage count first, then each the algorithm lists, until one checks.
          std::vector<uint32_t> try_stages = {0};
          try_stages.insert(try_stages.end(), stages.begin(), stages.end());
          for (uint32_t stage : try_stages) {
            l.cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stage, sizeof(stage));
            cublasLtMatmulHeuristicResult_t r;
            std::memset(&r, 0, sizeof(r));
            if (l.cublasLtMatmulAlgoCheck(st.handle, st.desc, st.a_layout, st.b_layout, st.c_layout, st.d_layout, &a,
                                          &r) != CUBLAS_STATUS_SUCCESS ||
                r.workspaceSize > static_cast<size_t>(workspace_bytes))
              continue;
            r.algo = a;
            r.state = CUBLAS_STATUS_SUCCESS;
            found.push_back({std::abs(std::log(static_cast<double>(all) / static_cast<double>(sms))), r});
            break;
          }
        }
      }
    }
  }
  // The ones closest to one full wave first, at most kMaxAdded.
  std::stable_sort(found.begin(), found.end(), [](const Scored& x, const Scored& y) { return x.score < y.score; });
  for (size_t i = 0; i < found.size() && i < kMaxAdded; ++i) out->push_back(found[i].r);
}

absl::Status CublasLtGemm::Prepare(CUstream stream, CUdeviceptr a, CUdeviceptr b, CUdeviceptr c, CUdeviceptr d,
                                   CUdeviceptr workspace, int64_t workspace_bytes) {
  GemmPlanState& st = *state_;
  const CublasLtLib& l = *st.lib;
  const CudaDriver& drv = *st.ctx->driver;
  const GemmConfig& g = st.g;
  if (g.batch == 0 || g.m == 0 || g.n == 0) {
    st.chosen_by = "empty";
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> version = CublasLtVersionString();
  const std::string full_key = absl::StrCat(st.options.profile.empty() ? "any" : st.options.profile, "|",
                                            st.ctx->info.name, "|", version.ok() ? *version : "cublasLt", "|", st.key);
  // 1. The cache.
  if (st.options.cache != nullptr && g.algorithm < 0) {
    if (std::optional<AutotuneEntry> e = st.options.cache->Lookup(full_key)) {
      cublasLtMatmulAlgo_t algo;
      cublasLtMatmulHeuristicResult_t check;
      std::memset(&check, 0, sizeof(check));
      if (Unhex(e->algorithm, &algo, sizeof(algo)) &&
          l.cublasLtMatmulAlgoCheck(st.handle, st.desc, st.a_layout, st.b_layout, st.c_layout, st.d_layout, &algo,
                                    &check) == CUBLAS_STATUS_SUCCESS &&
          check.workspaceSize <= static_cast<size_t>(workspace_bytes)) {
        st.algo = algo;
        st.have_algo = true;
        st.chosen_by = "cache";
        return absl::OkStatus();
      }
    }
  }
  // 2. The heuristic's candidates.
  cublasLtMatmulPreference_t pref = nullptr;
  if (absl::Status s = HLOC_LT(l, cublasLtMatmulPreferenceCreate, st.Where("creating the preference"), &pref); !s.ok()) {
    return s;
  }
  const uint64_t ws = static_cast<uint64_t>(workspace_bytes);
  absl::Status s = HLOC_LT(l, cublasLtMatmulPreferenceSetAttribute, st.Where("setting the workspace limit"), pref,
                           CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  // XLA asks cuBLASLt for up to 128 candidates; the heuristic's first picks are not always the
  // fastest for small shapes, so the autotuner sees more of them.
  constexpr int kMaxCandidates = 64;
  cublasLtMatmulHeuristicResult_t results[kMaxCandidates];
  std::memset(results, 0, sizeof(results));
  int count = 0;
  if (s.ok()) {
    s = HLOC_LT(l, cublasLtMatmulAlgoGetHeuristic, st.Where("asking cuBLASLt's heuristic for algorithms"), st.handle,
                st.desc, st.a_layout, st.b_layout, st.c_layout, st.d_layout, pref,
                st.options.autotune ? kMaxCandidates : 4, results, &count);
  }
  l.cublasLtMatmulPreferenceDestroy(pref);
  if (!s.ok()) return s;
  std::vector<cublasLtMatmulHeuristicResult_t> ok;
  for (int i = 0; i < count; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS) ok.push_back(results[i]);
  if (ok.empty()) return absl::UnimplementedError(st.Where("cuBLASLt has no algorithm"));
  const size_t from_heuristic = ok.size();
  if (st.options.autotune && g.algorithm < 0) AddSplitKCandidates(st, workspace_bytes, &ok);
  if (g.algorithm >= 0) {
    st.algo = ok[std::min<size_t>(static_cast<size_t>(g.algorithm), ok.size() - 1)].algo;
    st.have_algo = true;
    st.chosen_by = "config";
    return absl::OkStatus();
  }
  st.algo = ok[0].algo;
  st.have_algo = true;
  st.chosen_by = "heuristic";
  if (!st.options.autotune || ok.size() == 1) return absl::OkStatus();
  // 3. Time each candidate: one warm-up call, then the mean of a few (XLA's GemmAlgorithmPicker
  // times each once after a warm-up too).
  CUevent start = nullptr, stop = nullptr;
  if (absl::Status e = HLOC_CU(drv, cuEventCreate, st.Where("creating autotuning events"), &start, CU_EVENT_DEFAULT);
      !e.ok()) {
    return e;
  }
  if (absl::Status e = HLOC_CU(drv, cuEventCreate, st.Where("creating autotuning events"), &stop, CU_EVENT_DEFAULT);
      !e.ok()) {
    drv.cuEventDestroy(start);
    return e;
  }
  double best_us = -1;
  size_t best = 0;
  constexpr int kReps = 3;
  // Short GEMMs (a few microseconds) are timed over more calls: a few calls are within the
  // events' resolution.
  constexpr int kShortReps = 30;
  constexpr double kShortUs = 50;
  // Each candidate timed inside a CUDA graph (graph_timer.h) when the stream can be captured,
  // else back to back from the host.
  bool captured = true;
  auto run = [&]() { return Run(stream, a, b, c, d, workspace, workspace_bytes); };
  for (size_t i = 0; i < ok.size(); ++i) {
    st.algo = ok[i].algo;
    if (!run().ok()) continue;
    absl::StatusOr<double> us = TimeAutotuneCandidate(drv, stream, start, stop, kReps, kShortReps, kShortUs, &captured, run);
    if (!us.ok()) {
      drv.cuEventDestroy(start);
      drv.cuEventDestroy(stop);
      // An execution error: the context may be broken, say so now.
      return absl::Status(us.status().code(), st.Where(std::string(us.status().message())));
    }
    if (*us >= 0 && (best_us < 0 || *us < best_us)) best_us = *us, best = i;
  }
  drv.cuEventDestroy(start);
  drv.cuEventDestroy(stop);
  st.algo = ok[best].algo;
  st.chosen_by = absl::StrFormat("autotune (%d candidates, %d of them split-K configurations; best %s, %.1f us)",
                                 ok.size(), ok.size() - from_heuristic,
                                 best < from_heuristic ? "from the heuristic" : "split-K", best_us);
  if (!captured) absl::StrAppend(&st.chosen_by, " (timed from the host: the stream could not be captured)");
  if (best_us >= 0 && st.options.cache != nullptr) {
    st.options.cache->Insert(full_key, AutotuneEntry{Hex(&st.algo, sizeof(st.algo)), best_us});
  }
  return absl::OkStatus();
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
