// In-process collectives (see collectives.h).
#include "runtime/cpu/collectives.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/cpu/gemm.h"  // FloatToBf16 and friends

namespace hloc::runtime {
namespace {

// ---- reductions ----------------------------------------------------------------------------------

enum class Red { kAdd, kMul, kMin, kMax, kAnd, kOr, kXor };

absl::StatusOr<Red> ParseReduction(const std::string& r) {
  if (r == "add") return Red::kAdd;
  if (r == "mul") return Red::kMul;
  if (r == "min") return Red::kMin;
  if (r == "max") return Red::kMax;
  if (r == "and") return Red::kAnd;
  if (r == "or") return Red::kOr;
  if (r == "xor") return Red::kXor;
  return absl::InvalidArgumentError(absl::StrCat("unknown reduction '", r, "'"));
}

// Integers wrap (computed unsigned, as XLA's two's complement arithmetic); floats propagate NaN
// through min and max as XLA's minimum / maximum do.
template <typename T>
T Combine(Red r, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    switch (r) {
      case Red::kAdd: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
      case Red::kMul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
      case Red::kMin: return a < b ? a : b;
      case Red::kMax: return a > b ? a : b;
      case Red::kAnd: return a & b;
      case Red::kOr: return a | b;
      case Red::kXor: return a ^ b;
    }
  } else {
    switch (r) {
      case Red::kAdd: return a + b;
      case Red::kMul: return a * b;
      case Red::kMin: return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b);
      case Red::kMax: return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b);
      default: break;  // refused at load time
    }
  }
  return a;
}

template <typename T, typename Op>
void ReduceArray(uint8_t* acc, const uint8_t* x, int64_t bytes, Op op) {
  const int64_t n = bytes / static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < n; ++i) {
    T a, b;
    std::memcpy(&a, acc + i * sizeof(T), sizeof(T));
    std::memcpy(&b, x + i * sizeof(T), sizeof(T));
    a = op(a, b);
    std::memcpy(acc + i * sizeof(T), &a, sizeof(T));
  }
}

template <typename T>
void ReduceTyped(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceArray<T>(acc, x, bytes, [r](T a, T b) { return Combine<T>(r, a, b); });
}

// f16 / bf16: each step computed in f32 and rounded back, as XLA's 16-bit arithmetic does.
template <float (*ToFloat)(uint16_t), uint16_t (*FromFloat)(float)>
void ReduceHalf(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceArray<uint16_t>(acc, x, bytes,
                        [r](uint16_t a, uint16_t b) { return FromFloat(Combine<float>(r, ToFloat(a), ToFloat(b))); });
}

// ---- the 8- and 4-bit floats and the 2- and 4-bit integers, one element a byte -------------------
// Reduced as XLA's CPU collectives reduce them (ml_dtypes arithmetic): each step computed in f32
// (the sum or product of two such values is exact there) and rounded back to nearest even.

enum class NanKind { kIeee, kAllOnes, kNegZero, kNone };

struct NarrowFloat {
  int ebits, mbits, bias;
  bool has_inf;
  NanKind nan;
};

constexpr NarrowFloat kF8E5M2{5, 2, 15, true, NanKind::kIeee};
constexpr NarrowFloat kF8E4M3{4, 3, 7, true, NanKind::kIeee};
constexpr NarrowFloat kF8E3M4{3, 4, 3, true, NanKind::kIeee};
constexpr NarrowFloat kF8E4M3FN{4, 3, 7, false, NanKind::kAllOnes};
constexpr NarrowFloat kF8E4M3FNUZ{4, 3, 8, false, NanKind::kNegZero};
constexpr NarrowFloat kF8E4M3B11FNUZ{4, 3, 11, false, NanKind::kNegZero};
constexpr NarrowFloat kF8E5M2FNUZ{5, 2, 16, false, NanKind::kNegZero};
constexpr NarrowFloat kF4E2M1FN{2, 1, 1, false, NanKind::kNone};

uint32_t SignBit(const NarrowFloat& f) { return uint32_t{1} << (f.ebits + f.mbits); }
uint32_t ExpMax(const NarrowFloat& f) { return (uint32_t{1} << f.ebits) - 1; }
uint32_t MantAll(const NarrowFloat& f) { return (uint32_t{1} << f.mbits) - 1; }

// The largest finite magnitude's bits.
uint32_t MaxFiniteBits(const NarrowFloat& f) {
  switch (f.nan) {
    case NanKind::kIeee: return ((ExpMax(f) - 1) << f.mbits) | MantAll(f);
    case NanKind::kAllOnes: return (ExpMax(f) << f.mbits) | (MantAll(f) - 1);
    case NanKind::kNegZero: case NanKind::kNone: break;
  }
  return (ExpMax(f) << f.mbits) | MantAll(f);
}

uint32_t NanBits(const NarrowFloat& f, bool negative) {
  const uint32_t sign = negative ? SignBit(f) : 0;
  switch (f.nan) {
    case NanKind::kIeee: return sign | (ExpMax(f) << f.mbits) | (uint32_t{1} << (f.mbits - 1));
    case NanKind::kAllOnes: return sign | (ExpMax(f) << f.mbits) | MantAll(f);
    case NanKind::kNegZero: return SignBit(f);
    case NanKind::kNone: break;
  }
  return 0;
}

float DecodeNarrow(const NarrowFloat& f, uint32_t bits) {
  bits &= (SignBit(f) << 1) - 1;
  const bool negative = bits & SignBit(f);
  const uint32_t e = (bits >> f.mbits) & ExpMax(f), m = bits & MantAll(f);
  const float nan = std::copysign(std::numeric_limits<float>::quiet_NaN(), negative ? -1.0f : 1.0f);
  if (f.nan == NanKind::kNegZero && bits == SignBit(f)) return std::numeric_limits<float>::quiet_NaN();
  if (f.nan == NanKind::kIeee && e == ExpMax(f))
    return m != 0 ? nan : (negative ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity());
  if (f.nan == NanKind::kAllOnes && e == ExpMax(f) && m == MantAll(f)) return nan;
  const double v = e == 0 ? std::ldexp(static_cast<double>(m), 1 - f.bias - f.mbits)
                          : std::ldexp(1.0 + std::ldexp(static_cast<double>(m), -f.mbits), static_cast<int>(e) - f.bias);
  return static_cast<float>(negative ? -v : v);
}

// Round to nearest, ties to even; beyond the largest finite value: infinity where the type has
// one, else NaN (the fn / fnuz types), else the largest value (f4e2m1fn, which has no NaN).
uint32_t EncodeNarrow(const NarrowFloat& f, float x) {
  const bool negative = std::signbit(x);
  if (std::isnan(x)) return NanBits(f, negative);
  const double a = std::fabs(static_cast<double>(x));
  uint32_t magnitude;
  if (std::isinf(a)) {
    magnitude = MaxFiniteBits(f) + 1;
  } else {
    int exp2;
    (void)std::frexp(a, &exp2);  // a = fr * 2^exp2, fr in [0.5, 1)
    const int emin = 1 - f.bias;
    const int e = a == 0 ? emin - 1 : exp2 - 1;
    // Subnormal (and zero): a multiple of 2^(emin - mbits); the carry into the exponent field
    // of a rounded-up mantissa gives the next binade's bits, as the encoding is monotonic.
    const double scaled = e < emin ? std::ldexp(a, f.mbits - emin) : std::ldexp(a, f.mbits - e);
    const double q = std::nearbyint(scaled);  // the default rounding mode: ties to even
    const double limit = std::ldexp(1.0, 24);
    magnitude = e < emin ? static_cast<uint32_t>(q)
                         : (e - emin + 1 > static_cast<int>(ExpMax(f)) + 1 || q > limit)
                               ? MaxFiniteBits(f) + 1
                               : (static_cast<uint32_t>(e - emin + 1) << f.mbits) + static_cast<uint32_t>(q) -
                                     (uint32_t{1} << f.mbits);
  }
  if (magnitude > MaxFiniteBits(f)) {
    if (f.has_inf) return (negative ? SignBit(f) : 0) | (ExpMax(f) << f.mbits);
    if (f.nan == NanKind::kNone) return (negative ? SignBit(f) : 0) | MaxFiniteBits(f);
    return NanBits(f, negative);
  }
  if (magnitude == 0 && f.nan == NanKind::kNegZero) return 0;  // no -0: that is the NaN
  return (negative ? SignBit(f) : 0) | magnitude;
}

template <const NarrowFloat& F>
void ReduceNarrowFloat(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceArray<uint8_t>(acc, x, bytes, [r](uint8_t a, uint8_t b) {
    return static_cast<uint8_t>(EncodeNarrow(F, Combine<float>(r, DecodeNarrow(F, a), DecodeNarrow(F, b))));
  });
}

// s2 / s4 / u2 / u4 with the value in the low bits of a byte: wrapped to `Bits` bits, signed
// ones stored sign-extended.
template <int Bits, bool Signed>
uint8_t WrapNarrowInt(int v) {
  const int shift = 8 - Bits;
  if constexpr (Signed) return static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(v << shift)) >> shift);
  return static_cast<uint8_t>(v & ((1 << Bits) - 1));
}

template <int Bits, bool Signed>
void ReduceNarrowInt(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceArray<uint8_t>(acc, x, bytes, [r](uint8_t a, uint8_t b) {
    const int va = Signed ? static_cast<int8_t>(WrapNarrowInt<Bits, true>(a)) : WrapNarrowInt<Bits, false>(a);
    const int vb = Signed ? static_cast<int8_t>(WrapNarrowInt<Bits, true>(b)) : WrapNarrowInt<Bits, false>(b);
    return WrapNarrowInt<Bits, Signed>(Combine<int>(r, va, vb));
  });
}

template <typename T>
void ReduceComplex(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceArray<std::complex<T>>(acc, x, bytes, [r](std::complex<T> a, std::complex<T> b) {
    return r == Red::kMul ? a * b : a + b;  // only add and mul pass the load-time check
  });
}

// pred: add and max are or, mul and min are and (false < true), as on XLA's pred.
Red PredReduction(Red r) {
  switch (r) {
    case Red::kAdd: case Red::kMax: return Red::kOr;
    case Red::kMul: case Red::kMin: return Red::kAnd;
    default: return r;
  }
}

using ReduceFn = void (*)(Red, uint8_t*, const uint8_t*, int64_t);

void ReducePred(Red r, uint8_t* acc, const uint8_t* x, int64_t bytes) {
  ReduceTyped<uint8_t>(PredReduction(r), acc, x, bytes);
}

// The reducer of `type` that supports `r`, or an error naming what is unsupported.
absl::StatusOr<ReduceFn> ReducerFor(const std::string& type, Red r) {
  const bool bitwise = r == Red::kAnd || r == Red::kOr || r == Red::kXor;
  const bool ordered = r == Red::kMin || r == Red::kMax;
  auto refuse = [&] {
    return absl::InvalidArgumentError(absl::StrCat("reduction is not supported on ", type));
  };
  if (type == "pred") return &ReducePred;
  if (type == "s8") return &ReduceTyped<int8_t>;
  if (type == "s16") return &ReduceTyped<int16_t>;
  if (type == "s32") return &ReduceTyped<int32_t>;
  if (type == "s64") return &ReduceTyped<int64_t>;
  if (type == "u8") return &ReduceTyped<uint8_t>;
  if (type == "u16") return &ReduceTyped<uint16_t>;
  if (type == "u32") return &ReduceTyped<uint32_t>;
  if (type == "u64") return &ReduceTyped<uint64_t>;
  if (type == "s4") return &ReduceNarrowInt<4, true>;
  if (type == "s2") return &ReduceNarrowInt<2, true>;
  if (type == "u4") return &ReduceNarrowInt<4, false>;
  if (type == "u2") return &ReduceNarrowInt<2, false>;
  if (bitwise) return refuse();
  if (type == "f32") return &ReduceTyped<float>;
  if (type == "f64") return &ReduceTyped<double>;
  if (type == "bf16") return &ReduceHalf<Bf16ToFloat, FloatToBf16>;
  if (type == "f16") return &ReduceHalf<F16ToFloat, FloatToF16>;
  if (type == "f8e5m2") return &ReduceNarrowFloat<kF8E5M2>;
  if (type == "f8e4m3") return &ReduceNarrowFloat<kF8E4M3>;
  if (type == "f8e3m4") return &ReduceNarrowFloat<kF8E3M4>;
  if (type == "f8e4m3fn") return &ReduceNarrowFloat<kF8E4M3FN>;
  if (type == "f8e4m3fnuz") return &ReduceNarrowFloat<kF8E4M3FNUZ>;
  if (type == "f8e4m3b11fnuz") return &ReduceNarrowFloat<kF8E4M3B11FNUZ>;
  if (type == "f8e5m2fnuz") return &ReduceNarrowFloat<kF8E5M2FNUZ>;
  if (type == "f4e2m1fn") return &ReduceNarrowFloat<kF4E2M1FN>;
  if (ordered) return refuse();
  if (type == "c64") return &ReduceComplex<float>;
  if (type == "c128") return &ReduceComplex<double>;
  return refuse();
}

int64_t ElementBytes(const std::string& type) {
  if (type == "pred" || type == "s8" || type == "u8") return 1;
  if (type == "s16" || type == "u16" || type == "f16" || type == "bf16") return 2;
  if (type == "s32" || type == "u32" || type == "f32") return 4;
  if (type == "s64" || type == "u64" || type == "f64" || type == "c64") return 8;
  if (type == "c128") return 16;
  return 1;
}

// ---- planning ------------------------------------------------------------------------------------

bool IsDeviceId(const std::string& op) { return op == "partition-id" || op == "replica-id"; }

absl::Status PlanSizes(const Thunk& t, CollectivePlan& plan) {
  const CollectiveConfig& c = t.collective;
  const size_t leaves = t.arguments.size() / 2;
  if (t.arguments.size() % 2 != 0 || c.outer.size() != leaves || c.chunk_bytes.size() != leaves ||
      c.element_types.size() != leaves) {
    return absl::InvalidArgumentError(absl::StrCat("has ", t.arguments.size(), " arguments for ", c.outer.size(),
                                                   " operand leaves"));
  }
  for (size_t i = 0; i < t.written.size(); ++i) {
    if (t.written[i] != (i >= leaves)) return absl::InvalidArgumentError("operands must precede results");
  }
  const int64_t g = plan.group_size;
  const bool tuple_all_to_all = c.op == "all-to-all" && c.dimension < 0;
  if (tuple_all_to_all && static_cast<int64_t>(leaves) != g)
    return absl::InvalidArgumentError(absl::StrCat("all-to-all over ", g, " devices has ", leaves, " operands"));
  // The tuple form sends operand k to member k, whose result i it becomes: one size for all.
  for (size_t i = 1; tuple_all_to_all && i < leaves; ++i) {
    if (c.outer[i] != c.outer[0] || c.chunk_bytes[i] != c.chunk_bytes[0])
      return absl::InvalidArgumentError("all-to-all operands differ in size");
  }
  for (size_t i = 0; i < leaves; ++i) {
    int64_t piece;
    if (__builtin_mul_overflow(c.outer[i], c.chunk_bytes[i], &piece) || piece > (int64_t{1} << 50))
      return absl::InvalidArgumentError("collective sizes overflow");
    const int64_t whole = piece * g;
    int64_t in = piece, out = piece;
    if (c.op == "all-gather") out = whole;
    if (c.op == "reduce-scatter") in = whole;
    if (c.op == "all-to-all" && !tuple_all_to_all) in = out = whole;
    if (in > t.arguments[i].size || out > t.arguments[leaves + i].size) {
      return absl::InvalidArgumentError(absl::StrCat("leaf ", i, " moves ", in, " -> ", out, " bytes between slices of ",
                                                     t.arguments[i].size, " and ", t.arguments[leaves + i].size));
    }
    plan.in_bytes.push_back(in);
    plan.out_bytes.push_back(out);
    plan.staging_offset.push_back(plan.staging_bytes);
    plan.staging_bytes += in;
    if (!c.reduction.empty() && c.chunk_bytes[i] % ElementBytes(c.element_types[i]) != 0)
      return absl::InvalidArgumentError("chunk is not a whole number of elements");
  }
  return absl::OkStatus();
}

absl::Status PlanGroups(const Thunk& t, int64_t num_devices, CollectivePlan& plan) {
  const CollectiveConfig& c = t.collective;
  plan.group_of.assign(num_devices, -1);
  plan.rank_of.assign(num_devices, -1);
  plan.source_rank_of.assign(num_devices, -1);
  for (size_t g = 0; g < c.groups.size(); ++g) {
    for (size_t r = 0; r < c.groups[g].size(); ++r) {
      plan.group_of[c.groups[g][r]] = static_cast<int>(g);
      plan.rank_of[c.groups[g][r]] = static_cast<int>(r);
    }
    // Piece sizes follow the group size for these; all-reduce, collective-broadcast and
    // collective-permute move whole operands and take groups of any size.
    const bool sized = c.op == "all-gather" || c.op == "reduce-scatter" || c.op == "all-to-all";
    if (sized && g > 0 && c.groups[g].size() != c.groups[0].size())
      return absl::InvalidArgumentError(absl::StrCat(c.op, " groups differ in size"));
  }
  for (int64_t d = 0; d < num_devices; ++d) {
    if (plan.group_of[d] < 0)
      return absl::InvalidArgumentError(absl::StrCat("device ", d, " of ", num_devices, " is in no group"));
  }
  plan.group_size = c.groups.empty() ? 0 : static_cast<int64_t>(c.groups[0].size());
  for (const auto& [source, target] : c.source_target_pairs) {
    if (plan.group_of[source] != plan.group_of[target])
      return absl::InvalidArgumentError(absl::StrCat("pair {", source, ",", target, "} crosses groups"));
    if (plan.source_rank_of[target] >= 0)
      return absl::InvalidArgumentError(absl::StrCat("device ", target, " is the target of two pairs"));
    plan.source_rank_of[target] = plan.rank_of[source];
  }
  return absl::OkStatus();
}

// ---- running -------------------------------------------------------------------------------------

// This device's results from the group's staged operands (`slots`, in group order).
void WriteResults(const Thunk& t, const CollectivePlan& plan, int rank, int64_t device,
             const std::vector<uint8_t*>& args, const std::vector<const uint8_t*>& slots) {
  const CollectiveConfig& c = t.collective;
  const size_t leaves = plan.in_bytes.size();
  const int64_t g = static_cast<int64_t>(slots.size());
  for (size_t i = 0; i < leaves; ++i) {
    uint8_t* out = args[leaves + i];
    const int64_t outer = c.outer[i], chunk = c.chunk_bytes[i], off = plan.staging_offset[i];
    if (c.op == "all-reduce" || c.op == "reduce-scatter") {
      const Red r = *ParseReduction(c.reduction);
      const ReduceFn reduce = *ReducerFor(c.element_types[i], r);
      const bool scatter = c.op == "reduce-scatter";
      for (int64_t o = 0; o < outer; ++o) {
        const int64_t from = off + (scatter ? (o * g + rank) * chunk : o * chunk);
        std::memcpy(out + o * chunk, slots[0] + from, chunk);
        for (int64_t k = 1; k < g; ++k) reduce(r, out + o * chunk, slots[k] + from, chunk);
      }
    } else if (c.op == "all-gather") {
      for (int64_t k = 0; k < g; ++k)
        for (int64_t o = 0; o < outer; ++o) std::memcpy(out + (o * g + k) * chunk, slots[k] + off + o * chunk, chunk);
    } else if (c.op == "all-to-all" && c.dimension >= 0) {
      for (int64_t j = 0; j < g; ++j)
        for (int64_t o = 0; o < outer; ++o)
          std::memcpy(out + (o * g + j) * chunk, slots[j] + off + (o * g + rank) * chunk, chunk);
    } else if (c.op == "all-to-all") {  // tuple form: result i comes from member i's operand `rank`
      std::memcpy(out, slots[i] + plan.staging_offset[rank], chunk);
    } else if (c.op == "collective-broadcast") {
      std::memcpy(out, slots[0] + off, plan.out_bytes[i]);
    } else if (c.op == "collective-permute") {
      const int source = plan.source_rank_of[device];
      if (source < 0) std::memset(out, 0, plan.out_bytes[i]);
      else std::memcpy(out, slots[source] + off, plan.out_bytes[i]);
    }
  }
}

}  // namespace

absl::StatusOr<CollectivePlan> PlanCollective(const Thunk& t, int64_t num_devices) {
  const CollectiveConfig& c = t.collective;
  CollectivePlan plan;
  if (IsDeviceId(c.op)) {
    if (t.arguments.size() != 1 || t.arguments[0].size < 4)
      return absl::InvalidArgumentError(absl::StrCat(c.op, " writes one u32"));
    return plan;
  }
  if (c.op == "collective-done") {  // the start already ran the collective where it stood
    if (!t.arguments.empty()) return absl::InvalidArgumentError("collective-done takes no arguments");
    return plan;
  }
  static const char* const kOps[] = {"all-reduce", "all-gather", "reduce-scatter", "all-to-all",
                                     "collective-permute", "collective-broadcast"};
  bool known = false;
  for (const char* op : kOps) known |= c.op == op;
  if (!known) return absl::InvalidArgumentError(absl::StrCat("unknown collective '", c.op, "'"));
  if (absl::Status s = PlanGroups(t, num_devices, plan); !s.ok()) return s;
  if (absl::Status s = PlanSizes(t, plan); !s.ok()) return s;
  const bool reduces = c.op == "all-reduce" || c.op == "reduce-scatter";
  if (reduces != !c.reduction.empty())
    return absl::InvalidArgumentError(absl::StrCat(c.op, reduces ? " needs" : " takes no", " reduction"));
  if (reduces) {
    absl::StatusOr<Red> r = ParseReduction(c.reduction);
    if (!r.ok()) return r.status();
    for (const std::string& type : c.element_types) {
      absl::StatusOr<ReduceFn> f = ReducerFor(type, *r);
      if (!f.ok()) return absl::InvalidArgumentError(absl::StrCat(c.reduction, " ", f.status().message()));
    }
  }
  return plan;
}

absl::Status RunCollective(const Thunk& t, const CollectivePlan& plan, int64_t device, int64_t num_partitions,
                           const std::vector<uint8_t*>& args, Rendezvous* rendezvous, std::vector<uint8_t>& staging) {
  const CollectiveConfig& c = t.collective;
  if (c.op == "collective-done") return absl::OkStatus();
  if (IsDeviceId(c.op)) {
    const uint32_t id = static_cast<uint32_t>(c.op == "partition-id" ? device % num_partitions : device / num_partitions);
    std::memcpy(args[0], &id, 4);
    return absl::OkStatus();
  }
  const int group_index = plan.group_of[device];
  const int rank = plan.rank_of[device];
  const std::vector<int64_t>& group = c.groups[group_index];
  // Operands are staged so that results may overwrite them (buffer assignment may share an
  // operand's buffer with the result) while other members still read.
  staging.resize(static_cast<size_t>(plan.staging_bytes));
  for (size_t i = 0; i < plan.in_bytes.size(); ++i)
    std::memcpy(staging.data() + plan.staging_offset[i], args[i], plan.in_bytes[i]);
  auto read = [&](const std::vector<const uint8_t*>& slots) { WriteResults(t, plan, rank, device, args, slots); };
  if (group.size() == 1) {
    read({staging.data()});
    return absl::OkStatus();
  }
  if (rendezvous == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        c.op, " spans devices {", absl::StrJoin(group, ","), "} but only one device runs (use RunPartitioned)"));
  }
  return rendezvous->Meet(&t, group_index, group, rank, staging.data(), absl::StrCat(c.op, " '", t.name, "'"), read);
}

// ---- rendezvous ----------------------------------------------------------------------------------

Rendezvous::Rendezvous(int64_t num_devices)
    : finished_(num_devices, false), running_(num_devices), waiting_at_(num_devices) {}

std::string Rendezvous::MissingMember(const Meeting& m, const std::vector<int64_t>& group) const {
  for (size_t r = 0; r < group.size(); ++r) {
    if (!m.present[r] && finished_[group[r]]) return absl::StrCat(group[r]);
  }
  return "";
}

std::string Rendezvous::Stuck() const {
  if (waiting_ < running_) return "";
  std::vector<std::string> where;
  for (size_t d = 0; d < waiting_at_.size(); ++d)
    if (!waiting_at_[d].empty()) where.push_back(absl::StrCat("device ", d, " at ", waiting_at_[d]));
  return absl::StrJoin(where, ", ");
}

absl::Status Rendezvous::Meet(const void* key, int group_index, const std::vector<int64_t>& group, int rank,
                              const uint8_t* data, const std::string& what,
                              const std::function<void(const std::vector<const uint8_t*>&)>& read) {
  const int size = static_cast<int>(group.size());
  const int64_t device = group[rank];
  std::unique_lock<std::mutex> lock(mu_);
  Meeting& m = meetings_[{key, group_index}];
  if (m.slots.empty()) {
    m.slots.assign(size, nullptr);
    m.present.assign(size, false);
  }
  // Members leave a round only once all have read it, so this never waits in a program whose
  // devices run one collective sequence; it keeps a round's slots from being overwritten if
  // that assumption is ever broken.
  cv_.wait(lock, [&] { return aborted_ || !m.reading; });
  if (aborted_) return error_;
  const int64_t generation = m.generation;
  m.slots[rank] = data;
  m.present[rank] = true;
  if (++m.arrived == size) {
    m.reading = true;
    cv_.notify_all();
  }
  // The last member to arrive never waits here, so a meeting that completed always has a
  // member outside this wait and Stuck() cannot report it.
  std::string missing, stuck;
  ++waiting_;
  waiting_at_[device] = what;
  cv_.wait(lock, [&] {
    if (aborted_ || m.reading) return true;
    missing = MissingMember(m, group);
    if (missing.empty()) stuck = Stuck();
    return !missing.empty() || !stuck.empty();
  });
  --waiting_;
  waiting_at_[device].clear();
  if (aborted_) return error_;
  if (!m.reading) {
    absl::Status s =
        !missing.empty()
            ? absl::AbortedError(absl::StrCat("device ", device, " waits in ", what, " for device ", missing,
                                              ", which finished its program without reaching it"))
            : absl::AbortedError(absl::StrCat("the devices wait at different collectives (", stuck, ")"));
    aborted_ = true;
    error_ = s;
    cv_.notify_all();
    return s;
  }
  const std::vector<const uint8_t*> slots = m.slots;
  lock.unlock();
  read(slots);
  lock.lock();
  if (++m.departed == size) {
    m.arrived = m.departed = 0;
    m.reading = false;
    m.present.assign(size, false);
    ++m.generation;
    cv_.notify_all();
    return absl::OkStatus();
  }
  cv_.wait(lock, [&] { return aborted_ || m.generation != generation; });
  if (m.generation != generation) return absl::OkStatus();
  return error_;
}

void Rendezvous::Abort(const absl::Status& error) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!aborted_) {
    aborted_ = true;
    error_ = error;
  }
  cv_.notify_all();
}

void Rendezvous::Finished(int64_t device) {
  std::lock_guard<std::mutex> lock(mu_);
  finished_[device] = true;
  --running_;
  cv_.notify_all();
}

absl::Status Rendezvous::error() {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

}  // namespace hloc::runtime
