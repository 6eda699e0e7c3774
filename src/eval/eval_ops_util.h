// Helpers shared by the structured evaluator kernels (eval_dot.cc, eval_conv.cc, ...): row-major
// index iteration without recursion, checked attribute validation, bulk loading of literal
// elements into one storage class, and scalar reducers evaluated without calling a computation.
#pragma once
#include <complex>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "eval/ops.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace hloc {
namespace evalops {

using DimVec = std::vector<int64_t>;

// ---- Index iteration -------------------------------------------------------------------------

// Advances `index` to the next row-major position within `dims` (last dimension fastest).
// Returns false once every position was visited (index wraps back to all zeros).
inline bool NextIndex(absl::Span<const int64_t> dims, absl::Span<int64_t> index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Product of dims; error on negative sizes or overflow beyond 2^62.
absl::StatusOr<int64_t> CheckedProduct(absl::Span<const int64_t> dims);

// Visits every index of `dims` in row-major order, calling fn(linear, offset) where `linear` is
// the row-major position and `offset` = sum(index[d] * strides[d]), updated incrementally.
// Nothing is visited when any dimension is 0.
template <typename Fn>
void ForEachOffset(absl::Span<const int64_t> dims, absl::Span<const int64_t> strides, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d : dims)
    if (d <= 0) return;
  DimVec index(rank, 0);
  int64_t offset = 0, linear = 0;
  while (true) {
    fn(linear, offset);
    ++linear;
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        offset += strides[d];
        break;
      }
      offset -= (dims[d] - 1) * strides[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Like ForEachOffset, with two stride sets: fn(offset_a, offset_b).
template <typename Fn>
void ForEachOffset2(absl::Span<const int64_t> dims, absl::Span<const int64_t> sa,
                    absl::Span<const int64_t> sb, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(dims.size());
  for (int64_t d : dims)
    if (d <= 0) return;
  DimVec index(rank, 0);
  int64_t a = 0, b = 0;
  while (true) {
    fn(a, b);
    int64_t d = rank - 1;
    for (; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        a += sa[d];
        b += sb[d];
        break;
      }
      a -= (dims[d] - 1) * sa[d];
      b -= (dims[d] - 1) * sb[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

// Strides that place each dimension of an array with `dims` into a packed row-major array whose
// dimensions are the concatenation of `groups` (lists of source dimensions, outermost first).
// Source dimensions in no group must have size 1 (they get stride 0).
inline DimVec PackedStrides(absl::Span<const int64_t> dims, const std::vector<DimVec>& groups) {
  DimVec strides(dims.size(), 0);
  int64_t running = 1;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g)
    for (auto d = g->rbegin(); d != g->rend(); ++d) {
      strides[*d] = running;
      running *= dims[*d];
    }
  return strides;
}

// Rearranges row-major `src` (with `dims`) into a new array using PackedStrides' strides.
template <typename T>
std::vector<T> Pack(const std::vector<T>& src, absl::Span<const int64_t> dims,
                    absl::Span<const int64_t> strides, int64_t total) {
  std::vector<T> dst(total);
  ForEachOffset(dims, strides, [&](int64_t linear, int64_t offset) { dst[offset] = src[linear]; });
  return dst;
}

// ---- Windows ---------------------------------------------------------------------------------

// Number of window positions along one dimension of size `n` (XLA's windowed output size:
// base-dilate, pad, then slide the window-dilated window by `stride`). Errors on non-positive
// strides/dilations, negative sizes and any arithmetic overflow.
absl::StatusOr<int64_t> WindowedOutputSize(int64_t n, const WindowDimension& wd);

// ---- Attribute validation --------------------------------------------------------------------

// Error unless every entry of `dims` is in [0, rank) and no entry repeats.
absl::Status CheckDimList(absl::Span<const int64_t> dims, int64_t rank, const std::string& what);
// Error unless `l` is an array literal.
absl::Status CheckArrayLiteral(const Literal& l, const std::string& what);
// Error unless inst.shape() is an array of `dims` (the dims this kernel computed).
absl::Status CheckResultDims(const Shape& shape, absl::Span<const int64_t> dims,
                             const std::string& what);
// The element type of the `i`th leaf of a result shape (the shape itself for arrays).
absl::StatusOr<const Shape*> ResultLeaf(const Shape& shape, int64_t i, int64_t count);
// "evaluating %name: " prefixes are added by the dispatcher; these build uniform messages.
absl::Status Malformed(const HloInstruction& inst, const std::string& why);

// ---- Element storage classes ----------------------------------------------------------------

enum class ValueClass { kFloat, kSigned, kUnsigned, kPred, kComplex };
ValueClass ClassOf(PrimitiveType t);

// All elements of an array literal converted to one storage class (as Literal's getters do).
std::vector<double> LoadDoubles(const Literal& l);
std::vector<int64_t> LoadInts(const Literal& l);  // unsigned values as their bit pattern
std::vector<std::complex<double>> LoadComplex(const Literal& l);

// Copies element `si` of `src` to element `di` of `dst` (same element type).
inline void CopyElement(const Literal& src, int64_t si, Literal& dst, int64_t di) {
  const int w = ByteWidth(src.element_type());
  std::memcpy(dst.untyped_data() + di * w, src.untyped_data() + si * w, w);
}

// x rounded to the element type (f32 by a cast, bf16 by bit arithmetic, others via
// float_types), as XLA rounds each step of narrow-type arithmetic that it computes in f32.
double RoundToElementType(PrimitiveType t, double x);

// The bit pattern of x (already representable in float type t) in t.
uint64_t FloatBits(PrimitiveType t, double x);

// Integer value `v` wrapped to the width/signedness of integer type `t` (two's complement).
int64_t WrapInt(PrimitiveType t, int64_t v);

// Totally ordered integer key of a float bit pattern: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
int64_t TotalOrderKey(PrimitiveType t, uint64_t raw_bits);

// Integers multiply and add modulo 2^64; truncating to the result width afterwards gives the
// same bits as wrapping in the result type at every step.
struct WrappingInt {
  uint64_t v = 0;
  WrappingInt operator*(const WrappingInt& o) const { return {v * o.v}; }
  WrappingInt operator+(const WrappingInt& o) const { return {v + o.v}; }
};

// Runs `fn` with the operands loaded in the storage class of `out_type`: fn(vector<T>& lhs,
// vector<T>& rhs, setter(Literal&, index, T)).
template <typename Fn>
void WithStorageClass(PrimitiveType out_type, const Literal& lhs, const Literal& rhs, Fn&& fn) {
  switch (ClassOf(out_type)) {
    case ValueClass::kFloat:
      fn(LoadDoubles(lhs), LoadDoubles(rhs),
         [](Literal& o, int64_t i, double v) { o.SetDouble(i, v); });
      break;
    case ValueClass::kComplex:
      fn(LoadComplex(lhs), LoadComplex(rhs),
         [](Literal& o, int64_t i, std::complex<double> v) { o.SetComplex(i, v); });
      break;
    default: {
      auto load = [](const Literal& l) {
        std::vector<int64_t> v = LoadInts(l);
        std::vector<WrappingInt> w(v.size());
        for (size_t i = 0; i < v.size(); ++i) w[i].v = static_cast<uint64_t>(v[i]);
        return w;
      };
      fn(load(lhs), load(rhs),
         [](Literal& o, int64_t i, WrappingInt v) { o.SetInt(i, static_cast<int64_t>(v.v)); });
    }
  }
}

// ---- Scalar reducers -------------------------------------------------------------------------

enum class BinaryReducer { kAdd, kMultiply, kMaximum, kMinimum, kAnd, kOr, kXor };

// Recognizes a computation whose root is one binary op of parameter(0) and parameter(1), both
// scalars of `type`, with a scalar `type` result. nullopt means "use the general path".
std::optional<BinaryReducer> MatchBinaryReducer(const HloComputation* comp, PrimitiveType type);

// A scalar of any element type, held in the storage class of its type: floats as a double in
// `f` and their bit pattern in `i` (the pattern keeps what a double cannot, e.g. the sign of a
// narrow-type NaN), integers and pred in `i` (unsigned as their bits), complex in `c`.
struct Value {
  double f = 0;
  int64_t i = 0;
  std::complex<double> c;
};

// Applies a recognized reducer to scalars of one element type, rounding each step to the type
// (bf16 sums round to bf16 after every add), as XLA's evaluator accumulates in the reduce's type.
class ScalarReducer {
 public:
  // Error when the reducer has no meaning for the type (e.g. maximum of complex, and of floats).
  static absl::StatusOr<ScalarReducer> Create(BinaryReducer op, PrimitiveType type);

  Value Load(const Literal& l, int64_t i) const;
  void Store(Literal& l, int64_t i, const Value& v) const;
  Value Combine(const Value& a, const Value& b) const;
  PrimitiveType type() const { return type_; }

 private:
  ScalarReducer(BinaryReducer op, PrimitiveType type) : op_(op), type_(type), cls_(ClassOf(type)) {}
  BinaryReducer op_;
  PrimitiveType type_;
  ValueClass cls_;
};

// Either a fast scalar reducer (when `comp` matches) or nothing; `type` is the element type.
std::optional<ScalarReducer> FastReducerFor(const HloComputation* comp, PrimitiveType type);

// ---- Scalar comparisons ---------------------------------------------------------------------

// A comparison as applied to (parameter 0, parameter 1), with its type resolved (never kDefault).
struct ScalarCompare {
  ComparisonDirection direction = ComparisonDirection::kLt;
  ComparisonType type = ComparisonType::kFloat;
};

// Recognizes a computation of `num_params` scalar parameters whose root is
// compare(parameter(0), parameter(1)) (either operand order) on scalars of `type`.
std::optional<ScalarCompare> MatchScalarCompare(const HloComputation* comp, PrimitiveType type,
                                                int64_t num_params);

// Comparison keys of all elements of an array literal, precomputed for one ScalarCompare so
// that Compare(i, j) gives compare(element i, element j) without decoding again.
class CompareKeys {
 public:
  // nullopt for complex types and type/comparison mismatches.
  static std::optional<CompareKeys> Make(const Literal& l, const ScalarCompare& c);
  bool Compare(int64_t i, int64_t j) const {
    if (use_double_) return Apply(d_[i], d_[j]);
    return Apply(k_[i], k_[j]);
  }

 private:
  template <typename T>
  bool Apply(T a, T b) const {
    switch (dir_) {
      case ComparisonDirection::kEq: return a == b;
      case ComparisonDirection::kNe: return a != b;
      case ComparisonDirection::kLt: return a < b;
      case ComparisonDirection::kLe: return a <= b;
      case ComparisonDirection::kGt: return a > b;
      case ComparisonDirection::kGe: return a >= b;
    }
    return false;
  }
  ComparisonDirection dir_ = ComparisonDirection::kLt;
  bool use_double_ = false;
  std::vector<double> d_;
  std::vector<int64_t> k_;
};

// ---- Scalar programs -------------------------------------------------------------------------

// Element `i` of an array literal as a Value of its storage class, and back (rounding/wrapping).
Value LoadValue(const Literal& l, int64_t i);
void StoreValue(Literal& l, int64_t i, const Value& v);

// A computation on scalars compiled to a flat list of steps, so that comparators, reducers
// and combiners run per element without building literals or walking the HLO graph. Only
// parameter, constant, compare, select, and/or/xor/not, add/subtract/multiply/divide (floats),
// maximum/minimum, negate, abs (real), copy, and a tuple root are accepted, each on scalars
// with XLA's semantics (narrow floats compute in f32 and round every step, integers wrap);
// anything else leaves Compile empty and the caller calls the computation instead.
class ScalarProgram {
 public:
  static std::optional<ScalarProgram> Compile(const HloComputation* comp);
  // Runs with one argument per parameter; writes one Value per result (per root tuple element).
  void Run(const Value* args, Value* results) const;
  int64_t num_params() const { return static_cast<int64_t>(param_types_.size()); }
  int64_t num_results() const { return static_cast<int64_t>(results_.size()); }
  PrimitiveType result_type(int64_t i) const { return steps_[results_[i]].type; }

 private:
  struct Step {
    HloOpcode op = HloOpcode::kParameter;
    PrimitiveType type = PrimitiveType::F32;          // result element type
    PrimitiveType operand_type = PrimitiveType::F32;  // compare's operand type
    ValueClass cls = ValueClass::kFloat;
    int a = -1, b = -1, c = -1;  // operand step indices
    int64_t param = -1;
    ComparisonDirection dir = ComparisonDirection::kEq;
    ComparisonType ctype = ComparisonType::kDefault;
    Value constant;
  };
  std::vector<Step> steps_;
  std::vector<int> results_;
  std::vector<PrimitiveType> param_types_;
  mutable std::vector<Value> scratch_;
};

// ---- Calling computations on scalars ----------------------------------------------------------

// Reusable scalar argument literals for calling a computation per element through ctx.call.
class ScalarArgs {
 public:
  explicit ScalarArgs(absl::Span<const PrimitiveType> types);
  Literal& arg(int64_t i) { return args_[i]; }
  absl::Span<const Literal* const> span() const { return ptrs_; }

 private:
  std::vector<Literal> args_;
  std::vector<const Literal*> ptrs_;
};

// Calls `comp` through ctx and checks the result is one scalar per entry of `types`, of those
// element types (a tuple of them when there are several; a plain scalar or a one-element tuple
// when there is one).
absl::StatusOr<Literal> CallScalarComputation(EvalContext& ctx, const HloComputation& comp,
                                              absl::Span<const Literal* const> args,
                                              absl::Span<const PrimitiveType> types,
                                              const HloInstruction& inst);
// The `i`th scalar leaf of a result from CallScalarComputation.
const Literal& ScalarLeaf(const Literal& result, int64_t i);

// Replica-count check shared by collectives.
int64_t ReplicaCount(const EvalContext& ctx);

}  // namespace evalops
}  // namespace hloc
