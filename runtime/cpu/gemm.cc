// Blocked GEMM for kGemm thunks; see gemm.h. The inner loops are plain C++ written so the
// compiler vectorizes them (packed, unit-stride panels; restrict-qualified rows); on x86-64
// with GCC the micro-kernels are also built for x86-64-v3 (AVX2/FMA) and picked at load time.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("O3")
#endif
#include "runtime/cpu/gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define HLOC_GEMM_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HLOC_GEMM_CLONES
#endif

// OpenBLAS's CBLAS entry points (linked from libopenblas, the single-threaded build; see
// CMakeLists.txt), declared here so the header of whichever BLAS is installed does not matter.
extern "C" {
void cblas_sgemm(int order, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                 const float* b, int ldb, float beta, float* c, int ldc);
void cblas_dgemm(int order, int trans_a, int trans_b, int m, int n, int k, double alpha, const double* a, int lda,
                 const double* b, int ldb, double beta, double* c, int ldc);
}

namespace hloc::runtime {

uint16_t FloatToBf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float Bf16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf (or is inf)
  if (ax < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    if (ax < 0x33000000u) return static_cast<uint16_t>(sign);  // rounds to zero
    const int shift = 126 - static_cast<int>(ax >> 23);       // 14..24
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = ((ax >> 13) - (112u << 10));
  const uint32_t rem = ax & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

float F16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);
  } else if (mant == 0) {
    bits = sign;
  } else {  // subnormal: normalize
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | ((112u - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

namespace {

enum class ET { kF32, kF64, kBF16, kF16, kS8, kS32, kBad };

ET ParseType(const std::string& s) {
  if (s == "f32") return ET::kF32;
  if (s == "f64") return ET::kF64;
  if (s == "bf16") return ET::kBF16;
  if (s == "f16") return ET::kF16;
  if (s == "s8") return ET::kS8;
  if (s == "s32") return ET::kS32;
  return ET::kBad;
}

int64_t SizeOf(ET t) {
  switch (t) {
    case ET::kF64: return 8;
    case ET::kF32:
    case ET::kS32: return 4;
    case ET::kBF16:
    case ET::kF16: return 2;
    case ET::kS8: return 1;
    default: return 0;
  }
}

bool IsFloat(ET t) { return t == ET::kF32 || t == ET::kF64 || t == ET::kBF16 || t == ET::kF16; }

double LoadDouble(ET t, const void* base, int64_t i) {
  switch (t) {
    case ET::kF32: return static_cast<const float*>(base)[i];
    case ET::kF64: return static_cast<const double*>(base)[i];
    case ET::kBF16: return Bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case ET::kF16: return F16ToFloat(static_cast<const uint16_t*>(base)[i]);
    case ET::kS8: return static_cast<const int8_t*>(base)[i];
    case ET::kS32: return static_cast<const int32_t*>(base)[i];
    default: return 0;
  }
}

template <typename Int>
Int SaturatingCast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<Int>::min())) return std::numeric_limits<Int>::min();
  if (v >= static_cast<double>(std::numeric_limits<Int>::max())) return std::numeric_limits<Int>::max();
  return static_cast<Int>(v);
}

void StoreDouble(ET t, void* base, int64_t i, double v) {
  switch (t) {
    case ET::kF32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
    case ET::kF64: static_cast<double*>(base)[i] = v; break;
    case ET::kBF16: static_cast<uint16_t*>(base)[i] = FloatToBf16(static_cast<float>(v)); break;
    case ET::kF16: static_cast<uint16_t*>(base)[i] = FloatToF16(static_cast<float>(v)); break;
    case ET::kS8: static_cast<int8_t*>(base)[i] = SaturatingCast<int8_t>(v); break;
    case ET::kS32: static_cast<int32_t*>(base)[i] = SaturatingCast<int32_t>(v); break;
    default: break;
  }
}

enum class Epilogue { kDefault, kBias, kRelu, kBiasRelu, kGelu, kBiasGelu, kBad };

Epilogue ParseEpilogue(const std::string& s) {
  if (s.empty() || s == "DEFAULT") return Epilogue::kDefault;
  if (s == "BIAS") return Epilogue::kBias;
  if (s == "RELU") return Epilogue::kRelu;
  if (s == "BIAS_RELU") return Epilogue::kBiasRelu;
  if (s == "GELU") return Epilogue::kGelu;
  if (s == "BIAS_GELU") return Epilogue::kBiasGelu;
  return Epilogue::kBad;
}

bool HasBias(Epilogue e) { return e == Epilogue::kBias || e == Epilogue::kBiasRelu || e == Epilogue::kBiasGelu; }

// The activation after alpha, beta and bias. GELU is the tanh approximation cuBLASLt uses.
template <typename T>
T Activate(Epilogue e, T v) {
  if (e == Epilogue::kRelu || e == Epilogue::kBiasRelu) return v > T(0) ? v : T(0);  // NaN -> 0, as max(x, 0)
  if (e == Epilogue::kGelu || e == Epilogue::kBiasGelu) {
    const T c = T(0.7978845608028654);  // sqrt(2/pi)
    return T(0.5) * v * (T(1) + std::tanh(c * (v + T(0.044715) * v * v * v)));
  }
  return v;
}

// Where element (r, c) of op(X) lives: r * row_stride + c * col_stride.
struct View {
  int64_t row_stride, col_stride, batch_stride;
};

View LhsView(const GemmConfig& g) {
  return g.lhs_transposed ? View{1, g.lhs_leading_dim, g.lhs_batch_stride}
                          : View{g.lhs_leading_dim, 1, g.lhs_batch_stride};
}
View RhsView(const GemmConfig& g) {
  return g.rhs_transposed ? View{1, g.rhs_leading_dim, g.rhs_batch_stride}
                          : View{g.rhs_leading_dim, 1, g.rhs_batch_stride};
}

// ---- packing: a rows x cols block of a strided view into a dense row-major Acc panel --------

template <typename Acc, typename Src, typename Conv>
void PackT(const Src* src, int64_t rs, int64_t cs, int64_t rows, int64_t cols, Acc* out, Conv conv) {
  if (cs == 1) {
    for (int64_t r = 0; r < rows; ++r) {
      const Src* row = src + r * rs;
      Acc* o = out + r * cols;
      for (int64_t c = 0; c < cols; ++c) o[c] = conv(row[c]);
    }
  } else {
    for (int64_t r = 0; r < rows; ++r) {
      Acc* o = out + r * cols;
      for (int64_t c = 0; c < cols; ++c) o[c] = conv(src[r * rs + c * cs]);
    }
  }
}

template <typename Acc>
void Pack(ET t, const void* base, int64_t rs, int64_t cs, int64_t rows, int64_t cols, Acc* out) {
  switch (t) {
    case ET::kF32:
      PackT(static_cast<const float*>(base), rs, cs, rows, cols, out, [](float v) { return static_cast<Acc>(v); });
      break;
    case ET::kF64:
      PackT(static_cast<const double*>(base), rs, cs, rows, cols, out, [](double v) { return static_cast<Acc>(v); });
      break;
    case ET::kBF16:
      PackT(static_cast<const uint16_t*>(base), rs, cs, rows, cols, out,
            [](uint16_t v) { return static_cast<Acc>(Bf16ToFloat(v)); });
      break;
    case ET::kF16:
      PackT(static_cast<const uint16_t*>(base), rs, cs, rows, cols, out,
            [](uint16_t v) { return static_cast<Acc>(F16ToFloat(v)); });
      break;
    case ET::kS8:
      PackT(static_cast<const int8_t*>(base), rs, cs, rows, cols, out,
            [](int8_t v) { return static_cast<Acc>(static_cast<int32_t>(v)); });
      break;
    case ET::kS32:
      PackT(static_cast<const int32_t*>(base), rs, cs, rows, cols, out, [](int32_t v) { return static_cast<Acc>(v); });
      break;
    default: break;
  }
}

// ---- micro-kernels: acc[mc x nc] += A[mc x kc] * B[kc x nc], all dense row-major ------------

template <typename T>
inline __attribute__((always_inline)) void Row1(T* __restrict c0, const T* __restrict b, T a0, int64_t nc) {
  for (int64_t j = 0; j < nc; ++j) c0[j] += a0 * b[j];
}

// A kMr x (2 vectors) tile of acc kept in registers over the whole k loop: per step, kMr
// broadcasts of A and two vector loads of B feed 2 * kMr vector multiply-adds. GCC's generic
// vectors (32 bytes: 8 floats, 4 doubles) become AVX2 registers in the x86-64-v3 clone and
// pairs of SSE registers in the default one.
template <typename T, int kMr>
inline __attribute__((always_inline)) void Tile(T* acc, const T* a, const T* b, int64_t i0, int64_t j0, int64_t nc,
                                                int64_t kc) {
  typedef T V __attribute__((vector_size(32)));
  constexpr int kLanes = 32 / sizeof(T);
  V c[kMr][2];
  for (int r = 0; r < kMr; ++r) c[r][0] = c[r][1] = V{};
  const T* ar[kMr];
  for (int r = 0; r < kMr; ++r) ar[r] = a + (i0 + r) * kc;
  for (int64_t p = 0; p < kc; ++p) {
    const T* bp = b + p * nc + j0;
    V b0, b1;
    std::memcpy(&b0, bp, sizeof(V));
    std::memcpy(&b1, bp + kLanes, sizeof(V));
    for (int r = 0; r < kMr; ++r) {
      const V av = V{} + ar[r][p];
      c[r][0] += av * b0;
      c[r][1] += av * b1;
    }
  }
  for (int r = 0; r < kMr; ++r) {
    T* out = acc + (i0 + r) * nc + j0;
    V o0, o1;
    std::memcpy(&o0, out, sizeof(V));
    std::memcpy(&o1, out + kLanes, sizeof(V));
    o0 += c[r][0];
    o1 += c[r][1];
    std::memcpy(out, &o0, sizeof(V));
    std::memcpy(out + kLanes, &o1, sizeof(V));
  }
}

template <typename T>
inline __attribute__((always_inline)) void MicroT(T* acc, const T* a, const T* b, int64_t mc, int64_t nc,
                                                  int64_t kc) {
  // 6 x 16 floats (6 x 8 doubles) of accumulators are 12 AVX2 registers, leaving room for B and
  // the broadcast A value: the classic shape for 16 vector registers.
  constexpr int kMr = 6, kNr = 64 / static_cast<int>(sizeof(T));  // two 32-byte vectors
  int64_t i = 0;
  const int64_t n_full = nc / kNr * kNr;
  for (; i + kMr <= mc; i += kMr) {
    for (int64_t j = 0; j < n_full; j += kNr) Tile<T, kMr>(acc, a, b, i, j, nc, kc);
  }
  // Edges: leftover rows over the full-width part, and the leftover columns of every row.
  for (int64_t r = i; r < mc; ++r) {
    for (int64_t p = 0; p < kc; ++p) Row1(acc + r * nc, b + p * nc, a[r * kc + p], n_full);
  }
  if (n_full < nc) {
    for (int64_t r = 0; r < mc; ++r) {
      for (int64_t p = 0; p < kc; ++p) Row1(acc + r * nc + n_full, b + p * nc + n_full, a[r * kc + p], nc - n_full);
    }
  }
}

HLOC_GEMM_CLONES void MicroF32(float* acc, const float* a, const float* b, int64_t mc, int64_t nc, int64_t kc) {
  MicroT(acc, a, b, mc, nc, kc);
}
HLOC_GEMM_CLONES void MicroF64(double* acc, const double* a, const double* b, int64_t mc, int64_t nc, int64_t kc) {
  MicroT(acc, a, b, mc, nc, kc);
}
// uint32: integer dots wrap modulo 2^32 as XLA's s32 arithmetic does (no signed overflow UB).
HLOC_GEMM_CLONES void MicroU32(uint32_t* acc, const uint32_t* a, const uint32_t* b, int64_t mc, int64_t nc,
                               int64_t kc) {
  MicroT(acc, a, b, mc, nc, kc);
}

inline void Micro(float* acc, const float* a, const float* b, int64_t mc, int64_t nc, int64_t kc) {
  MicroF32(acc, a, b, mc, nc, kc);
}
inline void Micro(double* acc, const double* a, const double* b, int64_t mc, int64_t nc, int64_t kc) {
  MicroF64(acc, a, b, mc, nc, kc);
}
inline void Micro(uint32_t* acc, const uint32_t* a, const uint32_t* b, int64_t mc, int64_t nc, int64_t kc) {
  MicroU32(acc, a, b, mc, nc, kc);
}

constexpr int64_t kMc = 72, kNc = 256, kKc = 256;

struct Operands {
  ET a, b, out;
  Epilogue epilogue;
  const void* a_ptr;
  const void* b_ptr;
  const void* c_ptr;  // bias or C (may alias d)
  void* d_ptr;
};

// Writes one finished tile: alpha, beta * C, bias, activation, conversion to the output type.
template <typename Acc>
void StoreTile(const GemmConfig& g, const Operands& o, int64_t batch, int64_t i0, int64_t j0, int64_t mc,
               int64_t nc, const Acc* acc) {
  const int64_t ld = g.output_leading_dim, bs = g.output_batch_stride;
  const bool simple = g.alpha == 1.0 && g.beta == 0.0 && o.epilogue == Epilogue::kDefault;
  const bool bias = HasBias(o.epilogue);
  const void* c = o.c_ptr != nullptr ? o.c_ptr : o.d_ptr;
  for (int64_t i = 0; i < mc; ++i) {
    const int64_t row = batch * bs + (i0 + i) * ld + j0;
    const Acc* a = acc + i * nc;
    if (simple && o.out == ET::kF32 && std::is_same_v<Acc, float>) {
      std::memcpy(static_cast<float*>(o.d_ptr) + row, a, nc * sizeof(float));
      continue;
    }
    if (simple && o.out == ET::kS32 && std::is_same_v<Acc, uint32_t>) {
      std::memcpy(static_cast<int32_t*>(o.d_ptr) + row, a, nc * sizeof(int32_t));
      continue;
    }
    for (int64_t j = 0; j < nc; ++j) {
      double v = std::is_same_v<Acc, uint32_t> ? static_cast<double>(static_cast<int32_t>(a[j]))
                                               : static_cast<double>(a[j]);
      if (!simple) {
        v *= g.alpha;
        if (g.beta != 0.0 && !bias) v += g.beta * LoadDouble(o.out, c, row + j);
        if (bias) v += LoadDouble(o.out, o.c_ptr, j0 + j);
        v = Activate(o.epilogue, v);
      }
      StoreDouble(o.out, o.d_ptr, row + j, v);
    }
  }
}

template <typename Acc>
void RunTyped(const GemmConfig& g, const Operands& o, ThreadPool* pool) {
  const View va = LhsView(g), vb = RhsView(g);
  const int64_t mt = (g.m + kMc - 1) / kMc, nt = (g.n + kNc - 1) / kNc;
  const int64_t tiles = g.batch * mt * nt;
  const int64_t esa = SizeOf(o.a), esb = SizeOf(o.b);
  auto tile = [&](int64_t t) {
    const int64_t batch = t / (mt * nt), rest = t % (mt * nt);
    const int64_t i0 = (rest / nt) * kMc, j0 = (rest % nt) * kNc;
    const int64_t mc = std::min(kMc, g.m - i0), nc = std::min(kNc, g.n - j0);
    thread_local std::vector<Acc> acc, pa, pb;
    acc.assign(mc * nc, Acc(0));
    pa.resize(kMc * kKc);
    pb.resize(kKc * kNc);
    for (int64_t k0 = 0; k0 < g.k; k0 += kKc) {
      const int64_t kc = std::min(kKc, g.k - k0);
      const char* a = static_cast<const char*>(o.a_ptr) +
                      (batch * va.batch_stride + i0 * va.row_stride + k0 * va.col_stride) * esa;
      const char* b = static_cast<const char*>(o.b_ptr) +
                      (batch * vb.batch_stride + k0 * vb.row_stride + j0 * vb.col_stride) * esb;
      Pack<Acc>(o.a, a, va.row_stride, va.col_stride, mc, kc, pa.data());
      Pack<Acc>(o.b, b, vb.row_stride, vb.col_stride, kc, nc, pb.data());
      Micro(acc.data(), pa.data(), pb.data(), mc, nc, kc);
    }
    StoreTile<Acc>(g, o, batch, i0, j0, mc, nc, acc.data());
  };
  // Small products are not worth waking the pool for.
  const double flops = 2.0 * g.batch * g.m * g.n * static_cast<double>(g.k);
  if (pool == nullptr || tiles == 1 || flops < 2e5) {
    for (int64_t t = 0; t < tiles; ++t) tile(t);
  } else {
    pool->ParallelFor(tiles, tile);
  }
}

// The largest element index a strided [batch, rows, cols] view touches, or -1 when it touches
// none; false on overflow.
bool MaxIndex(int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t bs, int64_t* out) {
  if (batch == 0 || rows == 0 || cols == 0) {
    *out = -1;
    return true;
  }
  int64_t x, y, z;
  if (__builtin_mul_overflow(batch - 1, bs, &x) || __builtin_mul_overflow(rows - 1, ld, &y) ||
      __builtin_add_overflow(x, y, &z) || __builtin_add_overflow(z, cols - 1, out)) {
    return false;
  }
  return true;
}

// ---- f32 and f64 through OpenBLAS -----------------------------------------------------------

constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

bool FitsInt(int64_t v) { return v >= 0 && v <= std::numeric_limits<int>::max(); }

// D = alpha * op(A) op(B) + beta * C (with the bias or C first copied into D) by cblas_?gemm,
// one call per batch and row block, the blocks spread over the pool; then the activation.
// False (nothing written) when the config is not one BLAS runs: operand and output types not
// all f32 (f32 compute) or all f64, sizes or strides beyond int, or leading dims BLAS refuses.
template <typename T>
bool RunBlas(const GemmConfig& g, const Operands& o, ThreadPool* pool) {
  const int64_t a_cols = g.lhs_transposed ? g.m : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  if (g.k == 0 || g.lhs_leading_dim < std::max<int64_t>(a_cols, 1) ||
      g.rhs_leading_dim < std::max<int64_t>(b_cols, 1) || g.output_leading_dim < std::max<int64_t>(g.n, 1)) {
    return false;
  }
  for (int64_t v : {g.m, g.n, g.k, g.lhs_leading_dim, g.rhs_leading_dim, g.output_leading_dim}) {
    if (!FitsInt(v)) return false;
  }
  const bool bias = HasBias(o.epilogue);
  const bool c_in_d = g.beta != 0.0 && !bias;  // BLAS reads C from D
  if (c_in_d && o.c_ptr != nullptr && o.c_ptr != o.d_ptr) {
    // A separate C that overlaps D other than exactly would be clobbered by the copy.
    const char* c0 = static_cast<const char*>(o.c_ptr);
    const char* d0 = static_cast<const char*>(o.d_ptr);
    const int64_t span = ((g.batch - 1) * g.output_batch_stride + (g.m - 1) * g.output_leading_dim + g.n) *
                         static_cast<int64_t>(sizeof(T));
    if (c0 < d0 + span && d0 < c0 + span) return false;
  }
  const T* a = static_cast<const T*>(o.a_ptr);
  const T* b = static_cast<const T*>(o.b_ptr);
  T* d = static_cast<T*>(o.d_ptr);
  const int64_t lda = g.lhs_leading_dim, ldb = g.rhs_leading_dim, ldd = g.output_leading_dim;
  // Tasks: batches x row blocks, about two per thread when the product is big enough.
  const double flops = 2.0 * g.batch * g.m * g.n * static_cast<double>(g.k);
  const int threads = pool == nullptr || flops < 2e5 ? 1 : pool->num_threads();
  int64_t row_blocks = 1;
  if (threads > 1 && g.batch < 2 * threads) {
    row_blocks = std::min<int64_t>((2 * threads + g.batch - 1) / g.batch, std::max<int64_t>(g.m / 16, 1));
  }
  const int64_t rows_per = (g.m + row_blocks - 1) / row_blocks;
  const int64_t tasks = g.batch * row_blocks;
  auto task = [&](int64_t t) {
    const int64_t bt = t / row_blocks, i0 = (t % row_blocks) * rows_per;
    const int64_t mc = std::min(rows_per, g.m - i0);
    if (mc <= 0) return;
    T* dp = d + bt * g.output_batch_stride + i0 * ldd;
    T beta = static_cast<T>(g.beta);
    if (bias) {
      const T* bias_row = static_cast<const T*>(o.c_ptr);
      for (int64_t i = 0; i < mc; ++i) std::memcpy(dp + i * ldd, bias_row, g.n * sizeof(T));
      beta = T(1);
    } else if (c_in_d && o.c_ptr != nullptr && o.c_ptr != o.d_ptr) {
      const T* cp = static_cast<const T*>(o.c_ptr) + bt * g.output_batch_stride + i0 * ldd;
      for (int64_t i = 0; i < mc; ++i) std::memcpy(dp + i * ldd, cp + i * ldd, g.n * sizeof(T));
    } else if (!c_in_d) {
      beta = T(0);
    }
    // op(A) rows i0.. : A stored [m, k] starts at row i0; stored [k, m] (transposed) at column i0.
    const T* ap = a + bt * g.lhs_batch_stride + (g.lhs_transposed ? i0 : i0 * lda);
    const T* bp = b + bt * g.rhs_batch_stride;
    const int ta = g.lhs_transposed ? kCblasTrans : kCblasNoTrans, tb = g.rhs_transposed ? kCblasTrans : kCblasNoTrans;
    if constexpr (std::is_same_v<T, float>) {
      cblas_sgemm(kCblasRowMajor, ta, tb, static_cast<int>(mc), static_cast<int>(g.n), static_cast<int>(g.k),
                  static_cast<float>(g.alpha), ap, static_cast<int>(lda), bp, static_cast<int>(ldb), beta, dp,
                  static_cast<int>(ldd));
    } else {
      cblas_dgemm(kCblasRowMajor, ta, tb, static_cast<int>(mc), static_cast<int>(g.n), static_cast<int>(g.k),
                  g.alpha, ap, static_cast<int>(lda), bp, static_cast<int>(ldb), beta, dp, static_cast<int>(ldd));
    }
    if (o.epilogue != Epilogue::kDefault && o.epilogue != Epilogue::kBias) {
      for (int64_t i = 0; i < mc; ++i) {
        T* row = dp + i * ldd;
        for (int64_t j = 0; j < g.n; ++j) row[j] = static_cast<T>(Activate(o.epilogue, static_cast<double>(row[j])));
      }
    }
  };
  if (threads == 1 || tasks == 1) {
    for (int64_t t = 0; t < tasks; ++t) task(t);
  } else {
    pool->ParallelFor(tasks, task);
  }
  return true;
}

}  // namespace

absl::StatusOr<GemmConfig> NormalizeGemmConfig(const GemmConfig& config) {
  GemmConfig g = config;
  for (const std::string* t : {&g.lhs_type, &g.rhs_type, &g.output_type}) {
    if (ParseType(*t) == ET::kBad) {
      return absl::UnimplementedError(
          absl::StrCat("GEMM element type '", *t, "' is not supported (f32, f64, bf16, f16, s8, s32)"));
    }
  }
  const bool float_in = IsFloat(ParseType(g.lhs_type)) || IsFloat(ParseType(g.rhs_type));
  const bool int_in = !IsFloat(ParseType(g.lhs_type)) || !IsFloat(ParseType(g.rhs_type));
  if (float_in && int_in) {
    return absl::UnimplementedError(absl::StrCat("GEMM with mixed float and integer operands (", g.lhs_type, " x ",
                                                 g.rhs_type, ")"));
  }
  if (ParseEpilogue(g.epilogue) == Epilogue::kBad) {
    return absl::InvalidArgumentError(absl::StrCat("unknown GEMM epilogue '", g.epilogue, "'"));
  }
  if (g.batch < 0 || g.m < 0 || g.n < 0 || g.k < 0) {
    return absl::InvalidArgumentError(absl::StrCat("negative GEMM size: batch ", g.batch, " m ", g.m, " n ", g.n,
                                                   " k ", g.k));
  }
  if (!std::isfinite(g.alpha) || !std::isfinite(g.beta)) {
    return absl::InvalidArgumentError("GEMM alpha and beta must be finite");
  }
  // Stored shapes: A is [m, k] ([k, m] transposed), B [k, n] ([n, k]), D [m, n].
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, a_cols = g.lhs_transposed ? g.m : g.k;
  const int64_t b_rows = g.rhs_transposed ? g.n : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  if (g.lhs_leading_dim <= 0) g.lhs_leading_dim = std::max<int64_t>(a_cols, 1);
  if (g.rhs_leading_dim <= 0) g.rhs_leading_dim = std::max<int64_t>(b_cols, 1);
  if (g.output_leading_dim <= 0) g.output_leading_dim = std::max<int64_t>(g.n, 1);
  if (g.output_leading_dim < g.n) {
    return absl::InvalidArgumentError(
        absl::StrCat("GEMM output leading dimension ", g.output_leading_dim, " is below n = ", g.n));
  }
  auto compact = [](int64_t rows, int64_t ld, int64_t* out) { return __builtin_mul_overflow(rows, ld, out); };
  if ((g.lhs_batch_stride <= 0 && compact(a_rows, g.lhs_leading_dim, &g.lhs_batch_stride)) ||
      (g.rhs_batch_stride <= 0 && compact(b_rows, g.rhs_leading_dim, &g.rhs_batch_stride)) ||
      (g.output_batch_stride <= 0 && compact(g.m, g.output_leading_dim, &g.output_batch_stride))) {
    return absl::InvalidArgumentError("GEMM strides overflow");
  }
  if (g.output_batch_stride < g.m * g.output_leading_dim && g.batch > 1) {
    return absl::InvalidArgumentError("GEMM output batches overlap");
  }
  return g;
}

absl::Status CheckGemmBounds(const GemmConfig& g, int64_t a_bytes, int64_t b_bytes, int64_t c_bytes,
                             int64_t d_bytes) {
  const int64_t a_rows = g.lhs_transposed ? g.k : g.m, a_cols = g.lhs_transposed ? g.m : g.k;
  const int64_t b_rows = g.rhs_transposed ? g.n : g.k, b_cols = g.rhs_transposed ? g.k : g.n;
  auto check = [](const char* what, int64_t batch, int64_t rows, int64_t cols, int64_t ld, int64_t bs,
                  int64_t esize, int64_t bytes) -> absl::Status {
    int64_t max;
    if (!MaxIndex(batch, rows, cols, ld, bs, &max) || (max >= 0 && (bytes < 0 || max >= bytes / esize))) {
      return absl::InvalidArgumentError(absl::StrCat("GEMM ", what, " ([", batch, ", ", rows, ", ", cols,
                                                     "] with leading dim ", ld, ", batch stride ", bs,
                                                     ") does not fit its ", bytes, "-byte buffer"));
    }
    return absl::OkStatus();
  };
  const int64_t out_size = SizeOf(ParseType(g.output_type));
  if (auto s = check("lhs", g.batch, a_rows, a_cols, g.lhs_leading_dim, g.lhs_batch_stride,
                     SizeOf(ParseType(g.lhs_type)), a_bytes);
      !s.ok()) {
    return s;
  }
  if (auto s = check("rhs", g.batch, b_rows, b_cols, g.rhs_leading_dim, g.rhs_batch_stride,
                     SizeOf(ParseType(g.rhs_type)), b_bytes);
      !s.ok()) {
    return s;
  }
  if (auto s = check("output", g.batch, g.m, g.n, g.output_leading_dim, g.output_batch_stride, out_size, d_bytes);
      !s.ok()) {
    return s;
  }
  const Epilogue e = ParseEpilogue(g.epilogue);
  if (HasBias(e)) {
    if (c_bytes < 0) return absl::InvalidArgumentError(absl::StrCat("GEMM epilogue ", g.epilogue, " needs a bias"));
    if (auto s = check("bias", 1, 1, g.n, g.n, g.n, out_size, c_bytes); !s.ok()) return s;
  } else if (c_bytes >= 0 && g.beta != 0.0) {
    if (auto s = check("C", g.batch, g.m, g.n, g.output_leading_dim, g.output_batch_stride, out_size, c_bytes);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

void RunGemm(const GemmConfig& g, const void* a, const void* b, const void* c, void* d, ThreadPool* pool) {
  Operands o{ParseType(g.lhs_type), ParseType(g.rhs_type), ParseType(g.output_type), ParseEpilogue(g.epilogue),
             a, b, c, d};
  if (g.batch == 0 || g.m == 0 || g.n == 0) return;
  // f32 and f64 go to OpenBLAS; bf16, f16, integers, mixed types and f32 with f64 compute to the
  // blocked kernels below.
  if (o.a == ET::kF32 && o.b == ET::kF32 && o.out == ET::kF32 && g.compute_type != "f64" &&
      RunBlas<float>(g, o, pool)) {
    return;
  }
  if (o.a == ET::kF64 && o.b == ET::kF64 && o.out == ET::kF64 && RunBlas<double>(g, o, pool)) return;
  // C that is D itself is read tile by tile before the tile is written, so in place is safe.
  if (IsFloat(o.a) || IsFloat(o.b)) {
    if (o.a == ET::kF64 || o.b == ET::kF64 || g.compute_type == "f64") {
      RunTyped<double>(g, o, pool);
    } else {
      RunTyped<float>(g, o, pool);
    }
  } else {
    RunTyped<uint32_t>(g, o, pool);
  }
}

void NaiveGemm(const GemmConfig& g, const void* a, const void* b, const void* c, void* d) {
  const ET ta = ParseType(g.lhs_type), tb = ParseType(g.rhs_type), to = ParseType(g.output_type);
  const Epilogue e = ParseEpilogue(g.epilogue);
  const bool ints = !IsFloat(ta) && !IsFloat(tb);
  const View va = LhsView(g), vb = RhsView(g);
  const void* cm = c != nullptr ? c : d;
  for (int64_t bt = 0; bt < g.batch; ++bt) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double sum = 0;
        uint32_t isum = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          double x = LoadDouble(ta, a, bt * va.batch_stride + i * va.row_stride + p * va.col_stride);
          double y = LoadDouble(tb, b, bt * vb.batch_stride + p * vb.row_stride + j * vb.col_stride);
          if (ints) {
            isum += static_cast<uint32_t>(static_cast<int32_t>(x)) * static_cast<uint32_t>(static_cast<int32_t>(y));
          } else {
            sum += x * y;
          }
        }
        double v = ints ? static_cast<double>(static_cast<int32_t>(isum)) : sum;
        const int64_t out = bt * g.output_batch_stride + i * g.output_leading_dim + j;
        v *= g.alpha;
        if (HasBias(e)) {
          v += LoadDouble(to, c, j);
        } else if (g.beta != 0.0) {
          v += g.beta * LoadDouble(to, cm, out);
        }
        StoreDouble(to, d, out, Activate(e, v));
      }
    }
  }
}

}  // namespace hloc::runtime
