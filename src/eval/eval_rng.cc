// Random-number ops. rng-bit-generator is bit-exact with XLA: it follows
// RngBitGeneratorExpander and xla/hlo/builder/lib/prng.cc (three-fry 2x32-20 and
// philox 4x32-10, including how they split the state, lay out the counter and interleave
// the outputs). RNG_DEFAULT is philox, as XLA's CPU and GPU compilers configure the
// expander. rng-get-and-update-state follows XLA's CPU runtime. `rng` (uniform/normal) is
// implementation-defined in XLA; here it draws from a fixed-seed engine.
#include <cmath>
#include <cstdlib>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "eval/eval_internal.h"

namespace hloc {
namespace eval_internal {
namespace {

using u32 = uint32_t;
using u64 = uint64_t;
using u128 = unsigned __int128;

absl::Status Invalid(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(inst.opcode())), ": ", why));
}

u32 Rotl(u32 v, int d) { return (v << d) | (v >> (32 - d)); }

}  // namespace

// Exposed (not static) so the unit tests can check them against the published
// known-answer vectors of Random123.
void ThreeFry2x32(u32 key0, u32 key1, u32 x[2]) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const u32 ks[3] = {key0, key1, 0x1BD11BDAu ^ key0 ^ key1};
  x[0] += ks[0];
  x[1] += ks[1];
  for (int block = 0; block < 5; ++block) {
    const int* rot = kRot + (block % 2) * 4;
    for (int r = 0; r < 4; ++r) {
      x[0] += x[1];
      x[1] = Rotl(x[1], rot[r]);
      x[1] ^= x[0];
    }
    // Key injection after every four rounds.
    x[0] += ks[(block + 1) % 3];
    x[1] += ks[(block + 2) % 3] + static_cast<u32>(block + 1);
  }
}

void Philox4x32(u32 key0, u32 key1, u32 x[4]) {
  for (int round = 0; round < 10; ++round) {
    const u64 p0 = static_cast<u64>(x[0]) * 0xD2511F53u;
    const u64 p1 = static_cast<u64>(x[2]) * 0xCD9E8D57u;
    const u32 n0 = static_cast<u32>(p1 >> 32) ^ x[1] ^ key0;
    const u32 n2 = static_cast<u32>(p0 >> 32) ^ x[3] ^ key1;
    x[0] = n0;
    x[1] = static_cast<u32>(p1);
    x[2] = n2;
    x[3] = static_cast<u32>(p0);
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
}

namespace {

// Three-fry: key = state[0], counter = state[1]. 32-bit (and narrower) outputs come from a
// half-size counter block split along one dimension (XLA's SplitShapeIntoHalves).
void ThreeFryBits(u64 key, u64& ctr, const std::vector<int64_t>& dims, int width, std::vector<u64>& out) {
  const u32 k0 = static_cast<u32>(key), k1 = static_cast<u32>(key >> 32);
  const int64_t n = static_cast<int64_t>(out.size());
  if (width > 32) {
    for (int64_t j = 0; j < n; ++j) {
      const u64 c = ctr + static_cast<u64>(j);
      u32 x[2] = {static_cast<u32>(c), static_cast<u32>(c >> 32)};
      ThreeFry2x32(k0, k1, x);
      out[j] = static_cast<u64>(x[0]) | (static_cast<u64>(x[1]) << 32);
    }
    ctr += static_cast<u64>(n);
    return;
  }
  if (dims.empty()) {
    u32 x[2] = {static_cast<u32>(ctr), static_cast<u32>(ctr >> 32)};
    ThreeFry2x32(k0, k1, x);
    out[0] = x[0];
    ctr += 1;
    return;
  }
  // The split dimension: the first even one, else the (first) largest.
  int64_t split = -1;
  for (size_t i = 0; i < dims.size() && split < 0; ++i)
    if (dims[i] % 2 == 0) split = static_cast<int64_t>(i);
  if (split < 0) {
    split = 0;
    for (size_t i = 1; i < dims.size(); ++i)
      if (dims[i] > dims[split]) split = static_cast<int64_t>(i);
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < split; ++i) outer *= dims[i];
  for (size_t i = split + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t mid = dims[split], half = (mid + 1) / 2;
  // Half-shape element (o, h, i) yields output elements (o, 2h, i) and (o, 2h+1, i).
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t h = 0; h < half; ++h) {
      for (int64_t i = 0; i < inner; ++i) {
        const u64 c = ctr + static_cast<u64>((o * half + h) * inner + i);
        u32 x[2] = {static_cast<u32>(c), static_cast<u32>(c >> 32)};
        ThreeFry2x32(k0, k1, x);
        out[(o * mid + 2 * h) * inner + i] = x[0];
        if (2 * h + 1 < mid) out[(o * mid + 2 * h + 1) * inner + i] = x[1];
      }
    }
  }
  ctr += static_cast<u64>(outer * half * inner);
}

// Philox: one 128-bit counter block per four 32-bit outputs (two 64-bit ones), the blocks'
// words interleaved in order.
void PhiloxBits(u64 key, u128& ctr, int width, std::vector<u64>& out) {
  const u32 k0 = static_cast<u32>(key), k1 = static_cast<u32>(key >> 32);
  const int64_t n = static_cast<int64_t>(out.size());
  const int64_t per_block = width > 32 ? 2 : 4;
  const int64_t blocks = (n + per_block - 1) / per_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const u128 c = ctr + static_cast<u128>(b);
    u32 x[4] = {static_cast<u32>(c), static_cast<u32>(c >> 32), static_cast<u32>(c >> 64), static_cast<u32>(c >> 96)};
    Philox4x32(k0, k1, x);
    if (per_block == 4) {
      for (int j = 0; j < 4 && b * 4 + j < n; ++j) out[b * 4 + j] = x[j];
    } else {
      out[b * 2] = static_cast<u64>(x[0]) | (static_cast<u64>(x[1]) << 32);
      if (b * 2 + 1 < n) out[b * 2 + 1] = static_cast<u64>(x[2]) | (static_cast<u64>(x[3]) << 32);
    }
  }
  ctr += static_cast<u128>(blocks);
}

absl::StatusOr<Literal> RngBitGenerator(const HloInstruction& inst, Operands ops) {
  const Shape& s = inst.shape();
  if (ops.size() != 1 || !s.IsTuple() || s.tuple_shapes().size() != 2)
    return Invalid(inst, "takes a state and returns (state, data)");
  const Literal& st = *ops[0];
  if (!st.shape().IsArray() || st.element_type() != PrimitiveType::U64 || st.shape().rank() != 1 || st.element_count() < 2)
    return Invalid(inst, "state must be u64[n] with n >= 2");
  const Shape& data_shape = s.tuple_shapes(1);
  const PrimitiveType dt = data_shape.element_type();
  if (!IsArrayType(dt) || dt == PrimitiveType::PRED || IsComplex(dt) || BitWidth(dt) > 64)
    return Invalid(inst, absl::StrCat("cannot generate ", std::string(PrimitiveTypeName(dt)), " bits"));
  auto out = NewLiteral(s);
  if (!out.ok()) return out.status();
  Literal& state_out = out->tuple_element(0);
  Literal& data = out->tuple_element(1);
  if (state_out.element_count() != st.element_count()) return Invalid(inst, "output state must match the input state");
  const int width = BitWidth(dt);
  const int64_t n = data.element_count();
  std::vector<u64> bits(n);
  const int64_t sn = st.element_count();
  const u64* sv = st.data<u64>();
  for (int64_t i = 0; i < sn; ++i) state_out.SetUint(i, sv[i]);
  const u64 key = sv[0];
  if (inst.attrs().rng_algorithm == RandomAlgorithm::kThreeFry) {
    u64 ctr = sv[1];
    ThreeFryBits(key, ctr, data.shape().dimensions(), width, bits);
    state_out.SetUint(1, ctr);
  } else {
    // A 2-word state holds the counter as (low = state[1], high = state[0]) and keeps only
    // the new low word; a longer one holds (state[1], state[2]).
    u128 ctr = sn >= 3 ? (static_cast<u128>(sv[2]) << 64) | sv[1] : (static_cast<u128>(sv[0]) << 64) | sv[1];
    PhiloxBits(key, ctr, width, bits);
    state_out.SetUint(1, static_cast<u64>(ctr));
    if (sn >= 3) state_out.SetUint(2, static_cast<u64>(ctr >> 64));
  }
  // Narrow outputs keep the low bits of the 32-bit values (XLA converts u32 -> uN).
  for (int64_t i = 0; i < n; ++i) data.SetRawBits(i, bits[i]);
  return out;
}

absl::StatusOr<Literal> RngGetAndUpdateState(const HloInstruction& inst, RngState& state) {
  int64_t delta = 0;
  bool found = false;
  for (const auto& [name, value] : inst.attrs().raw_attributes) {
    if (name == "delta") found = absl::SimpleAtoi(value, &delta);
  }
  if (!found) return Invalid(inst, "missing delta=");
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (out->element_type() != PrimitiveType::U64 || out->element_count() != 2) return Invalid(inst, "result must be u64[2]");
  auto it = state.counters.try_emplace(&inst, static_cast<u128>(0x7012395u)).first;
  out->SetUint(0, static_cast<u64>(it->second));
  out->SetUint(1, static_cast<u64>(it->second >> 64));
  it->second += static_cast<u128>(static_cast<__int128>(delta));
  return out;
}

absl::StatusOr<Literal> Rng(const HloInstruction& inst, Operands ops, RngState& state) {
  if (ops.size() != 2) return Invalid(inst, "takes two scalar parameters");
  for (const Literal* l : ops)
    if (!l->shape().IsArray() || l->element_count() != 1) return Invalid(inst, "parameters must be scalars");
  auto out = NewLiteral(inst.shape());
  if (!out.ok()) return out.status();
  if (!out->shape().IsArray()) return Invalid(inst, "result must be an array");
  const PrimitiveType t = out->element_type();
  const int64_t n = out->element_count();
  const bool normal = inst.attrs().distribution == RandomDistribution::kNormal;
  if (IsFloatingPoint(t)) {
    const double a = ops[0]->GetDouble(0), b = ops[1]->GetDouble(0);
    if (normal) {
      std::normal_distribution<double> dist(a, b);
      for (int64_t i = 0; i < n; ++i) out->SetDouble(i, dist(state.engine));
      return out;
    }
    if (!(a < b)) return Invalid(inst, "uniform needs low < high");
    std::uniform_real_distribution<double> dist(a, b);
    for (int64_t i = 0; i < n; ++i) {
      // Rounding to a narrow type can reach `b`; draw again (bounded) to keep [a, b).
      for (int tries = 0; tries < 64; ++tries) {
        out->SetDouble(i, dist(state.engine));
        if (out->GetDouble(i) < b) break;
        out->SetDouble(i, a);
      }
    }
    return out;
  }
  if (IsIntegral(t)) {
    if (normal) return Invalid(inst, "the normal distribution needs a floating-point type");
    const int64_t a = ops[0]->GetInt(0), b = ops[1]->GetInt(0);
    if (!(a < b)) return Invalid(inst, "uniform needs low < high");
    std::uniform_int_distribution<int64_t> dist(a, b - 1);
    for (int64_t i = 0; i < n; ++i) out->SetInt(i, dist(state.engine));
    return out;
  }
  return Invalid(inst, absl::StrCat("unsupported element type ", std::string(PrimitiveTypeName(t))));
}

}  // namespace

bool IsHandledRng(HloOpcode op) {
  return op == HloOpcode::kRng || op == HloOpcode::kRngBitGenerator || op == HloOpcode::kRngGetAndUpdateState;
}

absl::StatusOr<Literal> EvalRng(const HloInstruction& inst, Operands ops, RngState& state) {
  switch (inst.opcode()) {
    case HloOpcode::kRngBitGenerator: return RngBitGenerator(inst, ops);
    case HloOpcode::kRngGetAndUpdateState: return RngGetAndUpdateState(inst, state);
    case HloOpcode::kRng: return Rng(inst, ops, state);
    default: return Invalid(inst, "not a random-number op");
  }
}

}  // namespace eval_internal
}  // namespace hloc
