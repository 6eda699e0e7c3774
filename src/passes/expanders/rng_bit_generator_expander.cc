#include "passes/expanders/rng_bit_generator_expander.h"

#include <array>
#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

using Op = HloInstruction*;
using P = PrimitiveType;
using B = ExpanderBuilder;

// The value and the updated state of one generator call (XLA's RngOutput).
struct RngOutput {
  Op value = nullptr;
  Op state = nullptr;
};

Op U32(B& b, uint32_t v) { return b.ScalarBits(P::U32, v); }
Op U64(B& b, uint64_t v) { return b.ScalarBits(P::U64, v); }

// (Ops are built one statement at a time so the instruction order is the reading order; C++
// leaves the order of argument evaluation open.)
Op RotateLeftU32(B& b, Op v, int distance) {
  Op left = b.Shl(v, U32(b, distance));
  Op right = b.Shrl(v, U32(b, 32 - distance));
  return b.Or(left, right);
}

std::array<Op, 2> Uint64ToUint32s(B& b, Op u64) {
  return {b.Convert(u64, P::U32), b.Convert(b.Shrl(u64, U64(b, 32)), P::U32)};
}

Op Uint32sToUint64(B& b, Op lo, Op hi) {
  Op low = b.Convert(lo, P::U64);
  Op high = b.Convert(hi, P::U64);
  return b.Or(low, b.Shl(high, U64(b, 32)));
}

int64_t ElementsIn(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// ---- Three-fry 2x32 (Salmon et al., SC 2011), 20 rounds ------------------------------------

std::array<Op, 2> ThreeFry2x32(B& b, std::array<Op, 2> x, std::array<Op, 2> key) {
  static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  // 0x1BD11BDA is the parity constant of the Threefish key schedule.
  std::array<Op, 3> ks = {key[0], key[1], U32(b, 0x1BD11BDA)};
  ks[2] = b.Xor(ks[2], key[0]);
  ks[2] = b.Xor(ks[2], key[1]);
  x[0] = b.Add(x[0], ks[0]);
  x[1] = b.Add(x[1], ks[1]);
  auto round = [&](int rotation) {
    x[0] = b.Add(x[0], x[1]);
    x[1] = RotateLeftU32(b, x[1], rotation);
    x[1] = b.Xor(x[0], x[1]);
  };
  // Five blocks of four rounds, each followed by a key injection.
  for (int block = 1; block <= 5; ++block) {
    const int* rot = kRotations + (block % 2 == 1 ? 0 : 4);
    for (int r = 0; r < 4; ++r) round(rot[r]);
    x[0] = b.Add(x[0], ks[block % 3]);
    x[1] = b.Add(x[1], ks[(block + 1) % 3]);
    x[1] = b.Add(x[1], U32(b, block));
  }
  return x;
}

// Counters state + linear index over `dims` (row-major), split into 32-bit halves, and the
// state advanced by the element count.
std::pair<std::array<Op, 2>, Op> GetThreeFryInputsAndUpdatedState(B& b, Op initial_state,
                                                                   const std::vector<int64_t>& dims) {
  const Shape u64_shape = expanders::MakeShape(P::U64, dims);
  Op input = b.BroadcastScalar(b.Reshape(initial_state, {}), u64_shape);
  int64_t trailing = 1;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    if (dims[i] < 2) continue;
    Op iota = b.Iota(u64_shape, i);
    input = b.Add(input, b.Mul(iota, U64(b, static_cast<uint64_t>(trailing))));
    trailing *= dims[i];
  }
  Op new_state = b.Add(initial_state, U64(b, static_cast<uint64_t>(ElementsIn(dims))));
  return {Uint64ToUint32s(b, input), new_state};
}

// XLA's SplitShapeIntoHalves: 32-bit outputs come in pairs, so a half-size counter block is
// laid out with a new trivial dimension after the split one, where the pair is concatenated.
struct SplitShape {
  std::vector<int64_t> half, concat;
  int64_t split_dim = 0, new_concat_dim = 0;
};

SplitShape SplitShapeIntoHalves(const std::vector<int64_t>& dims) {
  SplitShape s;
  if (dims.empty()) {
    s.half = {1};
    s.concat = {2};
    return s;
  }
  s.split_dim = -1;
  for (size_t i = 0; i < dims.size() && s.split_dim < 0; ++i)
    if (dims[i] % 2 == 0) s.split_dim = static_cast<int64_t>(i);
  if (s.split_dim < 0) {
    // No even dimension: the (first) largest one.
    s.split_dim = 0;
    for (size_t i = 1; i < dims.size(); ++i)
      if (dims[i] > dims[s.split_dim]) s.split_dim = static_cast<int64_t>(i);
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (static_cast<int64_t>(i) == s.split_dim) {
      s.half.push_back((dims[i] + 1) / 2);
      s.half.push_back(1);
      s.concat.push_back((dims[i] + 1) / 2);
      s.concat.push_back(2);
    } else {
      s.half.push_back(dims[i]);
      s.concat.push_back(dims[i]);
    }
  }
  s.new_concat_dim = s.split_dim + 1;
  return s;
}

Op CombineShapePair(B& b, std::array<Op, 2> pair, const SplitShape& split, const std::vector<int64_t>& dims) {
  if (dims.empty()) return b.Reshape(pair[0], {});
  Op result = b.Concatenate({pair[0], pair[1]}, split.new_concat_dim);
  std::vector<int64_t> reshape_dims = dims;
  const int64_t pre_split = dims[split.split_dim];
  reshape_dims[split.split_dim] = (pre_split + 1) / 2 * 2;
  result = b.Reshape(result, reshape_dims);
  if (reshape_dims[split.split_dim] != pre_split)
    result = b.Slice(result, std::vector<int64_t>(dims.size(), 0), dims);
  return result;
}

RngOutput ThreeFryRngBit32(B& b, Op key, Op initial_state, const std::vector<int64_t>& dims) {
  const SplitShape split = SplitShapeIntoHalves(dims);
  auto [inputs, new_state] = GetThreeFryInputsAndUpdatedState(b, initial_state, split.half);
  std::array<Op, 2> outputs = ThreeFry2x32(b, inputs, Uint64ToUint32s(b, key));
  return {CombineShapePair(b, outputs, split, dims), new_state};
}

RngOutput ThreeFryRngBit64(B& b, Op key, Op initial_state, const std::vector<int64_t>& dims) {
  auto [inputs, new_state] = GetThreeFryInputsAndUpdatedState(b, initial_state, dims);
  std::array<Op, 2> outputs = ThreeFry2x32(b, inputs, Uint64ToUint32s(b, key));
  return {Uint32sToUint64(b, outputs[0], outputs[1]), new_state};
}

// ---- Philox 4x32, 10 rounds -------------------------------------------------------------------

std::array<Op, 4> Philox4x32(B& b, std::array<Op, 4> x, std::array<Op, 2> key) {
  // Constants of the Philox algorithm (Random123).
  static constexpr uint32_t kW32A = 0x9E3779B9, kW32B = 0xBB67AE85;
  static constexpr uint32_t kM4x32A = 0xD2511F53, kM4x32B = 0xCD9E8D57;
  // The high and low words of the 64-bit product of a 32-bit value and a constant.
  auto mul_hi_lo = [&](Op v, uint32_t k) -> std::pair<Op, Op> {
    Op wide = b.Convert(v, P::U64);
    Op product = b.Mul(wide, U64(b, k));
    return {b.Convert(b.Shrl(product, U64(b, 32)), P::U32), b.Convert(product, P::U32)};
  };
  for (int round = 0; round < 10; ++round) {
    auto [hi0, lo0] = mul_hi_lo(x[0], kM4x32A);
    auto [hi1, lo1] = mul_hi_lo(x[2], kM4x32B);
    x = {b.Xor(b.Xor(hi1, x[1]), key[0]), lo1, b.Xor(b.Xor(hi0, x[3]), key[1]), lo0};
    // XLA also raises the key after the last round; that value is unused.
    if (round < 9) key = {b.Add(key[0], U32(b, kW32A)), b.Add(key[1], U32(b, kW32B))};
  }
  return x;
}

// A 128-bit value as two u64 (low, high).
using U128 = std::array<Op, 2>;

// u128 + u64 with the carry into the high word; `broadcast_sizes` are prepended to the high
// word's shape when u64 is an array (XLA's Uint128AddUint64).
U128 Uint128AddUint64(B& b, const U128& u128, Op u64, const std::vector<int64_t>& broadcast_sizes = {}) {
  Op new_low = b.Add(u128[0], u64);
  auto bcast = [&](Op x) { return broadcast_sizes.empty() ? x : b.BroadcastScalar(x, expanders::MakeShape(P::U64, broadcast_sizes)); };
  Op carry = b.Compare(new_low, u128[0], ComparisonDirection::kLt);
  Op high_plus_one = bcast(b.Add(u128[1], U64(b, 1)));
  Op new_high = b.Select(carry, high_plus_one, bcast(u128[1]));
  return {new_low, new_high};
}

std::array<Op, 4> Uint128ToUint32s(B& b, const U128& u128) {
  std::array<Op, 2> lo = Uint64ToUint32s(b, u128[0]);
  std::array<Op, 2> hi = Uint64ToUint32s(b, u128[1]);
  return {lo[0], lo[1], hi[0], hi[1]};
}

U128 Uint128FromOp(B& b, Op op) {
  return {b.Reshape(b.Slice(op, {0}, {1}), {}), b.Reshape(b.Slice(op, {1}, {2}), {})};
}

Op Uint128ToOp(B& b, const U128& u128) {
  return b.Concatenate({b.Reshape(u128[0], {1}), b.Reshape(u128[1], {1})}, 0);
}

// Philox outputs for `num_elems` 32-bit values (whole 128-bit blocks) and the counter advanced
// by the number of blocks.
std::pair<std::array<Op, 4>, Op> GeneratePhiloxBits(B& b, int64_t num_elems, Op initial_state, std::array<Op, 2> key) {
  std::array<Op, 4> state = Uint128ToUint32s(b, Uint128FromOp(b, initial_state));
  const int64_t blocks = (num_elems + 3) / 4;
  Op iota = b.Iota(expanders::MakeShape(P::U64, {blocks}), 0);
  U128 counter = {Uint32sToUint64(b, state[0], state[1]), Uint32sToUint64(b, state[2], state[3])};
  std::array<Op, 4> inputs = Uint128ToUint32s(b, Uint128AddUint64(b, counter, iota, {blocks}));
  Op new_state = Uint128ToOp(b, Uint128AddUint64(b, counter, U64(b, static_cast<uint64_t>(blocks))));
  return {Philox4x32(b, inputs, key), new_state};
}

// The four (or two) output words of each block, interleaved in order (round-robin, as non-XLA
// implementations lay them out), cut to the element count.
Op Interleave(B& b, std::vector<Op> parts, int64_t len, int64_t num_elems, const std::vector<int64_t>& dims) {
  const int64_t k = static_cast<int64_t>(parts.size());
  for (Op& p : parts) p = b.Reshape(p, {len, 1});
  Op numbers = b.Concatenate(parts, 1);
  numbers = b.Reshape(numbers, {len * k});
  numbers = b.Slice(numbers, {0}, {num_elems});
  return b.Reshape(numbers, dims);
}

RngOutput PhiloxRngBit32(B& b, Op op_key, Op initial_state, const std::vector<int64_t>& dims) {
  const int64_t n = ElementsIn(dims);
  auto [bits, new_state] = GeneratePhiloxBits(b, n, initial_state, Uint64ToUint32s(b, op_key));
  return {Interleave(b, {bits[0], bits[1], bits[2], bits[3]}, (n + 3) / 4, n, dims), new_state};
}

RngOutput PhiloxRngBit64(B& b, Op op_key, Op initial_state, const std::vector<int64_t>& dims) {
  const int64_t n = ElementsIn(dims);
  auto [bits, new_state] = GeneratePhiloxBits(b, n * 2, initial_state, Uint64ToUint32s(b, op_key));
  Op bits64_0 = Uint32sToUint64(b, bits[0], bits[1]);
  Op bits64_1 = Uint32sToUint64(b, bits[2], bits[3]);
  return {Interleave(b, {bits64_0, bits64_1}, (n + 1) / 2, n, dims), new_state};
}

// XLA's ThreeFryBitGenerator / PhiloxBitGenerator: 64-bit types from 64-bit outputs, 32-bit
// ones directly, narrower ones from 32-bit outputs converted (truncated) to uN.
RngOutput BitGenerator(B& b, RandomAlgorithm algorithm, Op key, Op initial_state, const Shape& shape) {
  const int bits = BitWidth(shape.element_type());
  const std::vector<int64_t>& dims = shape.dimensions();
  const bool three_fry = algorithm == RandomAlgorithm::kThreeFry;
  if (bits == 64) return three_fry ? ThreeFryRngBit64(b, key, initial_state, dims) : PhiloxRngBit64(b, key, initial_state, dims);
  RngOutput out = three_fry ? ThreeFryRngBit32(b, key, initial_state, dims) : PhiloxRngBit32(b, key, initial_state, dims);
  if (bits < 32) {
    absl::StatusOr<P> narrow = expanders::UnsignedIntegralTypeForBitWidth(bits);
    if (!narrow.ok()) return {b.Fail(narrow.status()), nullptr};
    out.value = b.Convert(out.value, *narrow);
  }
  return out;
}

absl::StatusOr<RandomAlgorithm> ParseAlgorithm(const std::string& name) {
  const std::string n = absl::AsciiStrToLower(name);
  if (n == "philox" || n == "rng_philox") return RandomAlgorithm::kPhilox;
  if (n == "three_fry" || n == "threefry" || n == "rng_three_fry") return RandomAlgorithm::kThreeFry;
  return absl::InvalidArgumentError(absl::StrCat("rng-bit-generator-expander: default_algorithm must be philox or three_fry, not '", name, "'"));
}

// Builds the generator computation: (state) -> (new state, bits).
absl::StatusOr<HloComputation*> BuildGenerator(HloModule& module, NameUniquer& computation_names, NameUniquer& names,
                                               const Shape& data_shape, const Shape& state_shape,
                                               RandomAlgorithm algorithm) {
  HloComputation* comp = expanders::AddEmptyComputation(module, computation_names, "rng");
  B b(comp, &names);
  const int64_t words = state_shape.dimensions(0);
  Op state = b.Parameter(0, state_shape, "state");
  Op key = b.Reshape(b.Slice(state, {0}, {1}), {});
  RngOutput output;
  int64_t used_words = 2;
  if (algorithm == RandomAlgorithm::kThreeFry) {
    output = BitGenerator(b, algorithm, key, b.Slice(state, {1}, {2}), data_shape);
  } else {
    // A two-word state holds the 128-bit counter as (high = key word, low = word 1) and keeps
    // only the new low word; a longer one holds (low = word 1, high = word 2).
    Op counter = words >= 3 ? b.Slice(state, {1}, {3}) : b.Reverse(state, {0});
    output = BitGenerator(b, algorithm, key, counter, data_shape);
    if (words < 3) output.state = b.Slice(output.state, {0}, {1});
    used_words = words >= 3 ? 3 : 2;
  }
  std::vector<Op> parts = {b.Reshape(key, {1}), output.state};
  // Words the algorithm does not use pass through, so the state keeps its shape.
  if (words > used_words) parts.push_back(b.Slice(state, {used_words}, {words}));
  Op final_state = b.Concatenate(parts, 0);
  Op value = output.value;
  if (value != nullptr && value->shape().element_type() != data_shape.element_type())
    value = b.BitcastConvert(value, data_shape.element_type());
  Op root = b.Tuple({final_state, value});
  if (!b.ok()) {
    absl::Status st = b.status();
    comp->set_root_instruction(nullptr);
    b.Discard();
    (void)module.RemoveComputation(comp);
    return st;
  }
  comp->set_root_instruction(root);
  return comp;
}

absl::Status CheckSupported(const HloInstruction& rng) {
  auto bad = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("rng-bit-generator-expander: ", rng.name(), ": ", why));
  };
  if (rng.operand_count() != 1) return bad("expected one operand (the state)");
  const Shape& state = rng.operand(0)->shape();
  if (!state.IsArray() || state.element_type() != P::U64 || state.rank() != 1 || state.dimensions(0) < 2 ||
      !state.is_static())
    return bad(absl::StrCat("the state must be u64[n] with n >= 2, not ", state.ToString(false)));
  const Shape& shape = rng.shape();
  if (!shape.IsTuple() || shape.tuple_shapes().size() != 2) return bad("the result must be (state, data)");
  const Shape& data = shape.tuple_shapes(1);
  const P t = data.element_type();
  if (!data.IsArray() || t == P::PRED || IsComplex(t) || BitWidth(t) > 64 || !data.is_static())
    return bad(absl::StrCat("cannot generate ", data.ToString(false)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RngBitGeneratorExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  absl::StatusOr<RandomAlgorithm> default_algorithm = ParseAlgorithm(default_algorithm_);
  if (!default_algorithm.ok()) return default_algorithm.status();
  NameUniquer names = InstructionNameUniquer(module);
  NameUniquer computation_names = ComputationNameUniquer(module);
  // Call sites of the same shapes and algorithm share one generator (XLA's computation cache).
  std::map<std::tuple<std::string, std::string, RandomAlgorithm>, HloComputation*> cache;
  return expanders::RunOpExpander(
      module, [](const HloInstruction& inst) { return inst.opcode() == HloOpcode::kRngBitGenerator; },
      [&](HloInstruction* rng) -> absl::StatusOr<HloInstruction*> {
        absl::Status st = CheckSupported(*rng);
        if (!st.ok()) return st;
        RandomAlgorithm algorithm = rng->attrs().rng_algorithm;
        if (algorithm == RandomAlgorithm::kDefault) algorithm = *default_algorithm;
        const Shape& data_shape = rng->shape().tuple_shapes(1);
        const Shape& state_shape = rng->operand(0)->shape();
        auto key = std::make_tuple(data_shape.ToString(false), state_shape.ToString(false), algorithm);
        HloComputation*& generator = cache[key];
        if (generator == nullptr) {
          absl::StatusOr<HloComputation*> built =
              BuildGenerator(module, computation_names, names, data_shape, state_shape, algorithm);
          if (!built.ok()) {
            cache.erase(key);
            return built.status();
          }
          generator = *built;
        }
        B b(rng->parent(), &names, rng);
        Op call = b.Call(Shape::Tuple({state_shape, data_shape}), {rng->operand(0)}, generator);
        if (!b.ok()) return b.status();
        return call;
      });
}

}  // namespace hloc
