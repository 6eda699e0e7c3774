#include "eval/compare.h"

#include <cmath>
#include <complex>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/instruction.h"

namespace hloc {
namespace {

// Row-major multi-index of a linear index (what a person reads in a message).
std::vector<int64_t> MultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    int64_t n = shape.dimensions(d);
    if (n <= 0) break;
    index[d] = linear % n;
    linear /= n;
  }
  return index;
}

std::string IndexString(const std::vector<int64_t>& index) {
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

std::string FormatDouble(double v, PrimitiveType t) {
  if (std::isnan(v)) return std::signbit(v) ? "-nan" : "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  // f64 needs 17 digits to be unambiguous; everything narrower is exact in 9.
  bool wide = t == PrimitiveType::F64 || t == PrimitiveType::C128;
  return wide ? absl::StrFormat("%.17g", v) : absl::StrFormat("%.9g", v);  // constant formats (clang checks them)
}

// One element's value as text, in the way its type reads.
std::string FormatElement(const Literal& l, int64_t i) {
  PrimitiveType t = l.element_type();
  if (t == PrimitiveType::PRED) return l.GetPred(i) ? "true" : "false";
  if (IsSignedIntegral(t)) return absl::StrCat(l.GetInt(i));
  if (IsUnsignedIntegral(t)) return absl::StrCat(l.GetUint(i));
  if (IsComplex(t)) {
    std::complex<double> c = l.GetComplex(i);
    return absl::StrCat("(", FormatDouble(c.real(), t), ", ", FormatDouble(c.imag(), t), ")");
  }
  return FormatDouble(l.GetDouble(i), t);
}

// How two scalar components relate when at least one of them is not finite.
enum class Special { kBothFinite, kMatch, kMismatch };
Special ClassifySpecial(double o, double r) {
  bool on = std::isnan(o), rn = std::isnan(r);
  if (on || rn) return on && rn ? Special::kMatch : Special::kMismatch;
  bool oi = std::isinf(o), ri = std::isinf(r);
  if (oi || ri) return (oi && ri && (o > 0) == (r > 0)) ? Special::kMatch : Special::kMismatch;
  return Special::kBothFinite;
}

struct Components {
  double re = 0, im = 0;
};
Components GetComponents(const Literal& l, int64_t i) {
  if (IsComplex(l.element_type())) {
    std::complex<double> c = l.GetComplex(i);
    return {c.real(), c.imag()};
  }
  return {l.GetDouble(i), 0.0};
}

CompareResult CompareExact(const Literal& out, const Literal& ref, int64_t n) {
  CompareResult r;
  r.threshold = 0;
  r.element_count = n;
  double diff2 = 0, ref2 = 0;
  int64_t first = -1;
  for (int64_t i = 0; i < n; ++i) {
    double o = out.GetDouble(i), e = ref.GetDouble(i);
    ref2 += e * e;
    if (out.GetRawBits(i) != ref.GetRawBits(i)) {
      ++r.differing_elements;
      diff2 += (o - e) * (o - e);
      if (first < 0) first = i;
    }
  }
  r.error = ref2 > 0 ? std::sqrt(diff2) / std::sqrt(ref2) : std::sqrt(diff2);
  r.ok = r.differing_elements == 0;
  if (!r.ok) {
    r.first_difference = MultiIndex(out.shape(), first);
    r.message = absl::StrCat(r.differing_elements, " of ", n, " elements differ (",
                             std::string(PrimitiveTypeName(out.element_type())),
                             " must match exactly); first at ", IndexString(r.first_difference),
                             ": got ", FormatElement(out, first), ", expected ",
                             FormatElement(ref, first));
  }
  return r;
}

CompareResult CompareFloat(const Literal& out, const Literal& ref, int64_t n, double tol, double abs_floor) {
  CompareResult r;
  r.threshold = tol;
  r.abs_floor = abs_floor;
  r.element_count = n;
  // Pass 1: the norms over finite components and the special-value mismatches.
  double diff2 = 0, ref2 = 0;
  int64_t special_mismatches = 0, first_special = -1, finite_count = 0;
  for (int64_t i = 0; i < n; ++i) {
    Components o = GetComponents(out, i), e = GetComponents(ref, i);
    bool mismatch = false;
    for (auto [oc, ec] : {std::pair{o.re, e.re}, std::pair{o.im, e.im}}) {
      Special s = ClassifySpecial(oc, ec);
      if (s == Special::kMismatch) mismatch = true;
      if (s != Special::kBothFinite) continue;
      diff2 += (oc - ec) * (oc - ec);
      ref2 += ec * ec;
    }
    if (mismatch) {
      ++special_mismatches;
      if (first_special < 0) first_special = i;
    } else {
      ++finite_count;
    }
  }
  double ref_norm = std::sqrt(ref2);
  r.error = ref_norm > 0 ? std::sqrt(diff2) / ref_norm : std::sqrt(diff2);
  if (std::isnan(r.error)) r.error = std::numeric_limits<double>::infinity();
  r.rms_diff = finite_count > 0 ? std::sqrt(diff2 / static_cast<double>(finite_count)) : 0;
  bool norm_ok = r.error <= tol;
  if (!norm_ok && abs_floor > 0 && r.rms_diff <= abs_floor) {
    norm_ok = true;
    r.by_floor = true;
  }
  r.ok = norm_ok && special_mismatches == 0;
  if (r.ok) return r;

  // Pass 2 (failures only): which elements are off by more than tol x rms(ref), the part
  // of the error a person wants to look at first; and the worst one.
  double rms = finite_count > 0 ? ref_norm / std::sqrt(static_cast<double>(finite_count)) : 0;
  double limit = tol * (rms > 0 ? rms : 1.0);
  int64_t first_far = -1, worst = -1;
  double worst_diff = -1;
  r.differing_elements = special_mismatches;
  for (int64_t i = 0; i < n; ++i) {
    Components o = GetComponents(out, i), e = GetComponents(ref, i);
    if (ClassifySpecial(o.re, e.re) == Special::kMismatch ||
        ClassifySpecial(o.im, e.im) == Special::kMismatch) {
      continue;
    }
    double d2 = 0;
    if (ClassifySpecial(o.re, e.re) == Special::kBothFinite) d2 += (o.re - e.re) * (o.re - e.re);
    if (ClassifySpecial(o.im, e.im) == Special::kBothFinite) d2 += (o.im - e.im) * (o.im - e.im);
    double d = std::sqrt(d2);
    if (d > worst_diff) { worst_diff = d; worst = i; }
    if (d > limit) {
      ++r.differing_elements;
      if (first_far < 0) first_far = i;
    }
  }
  std::vector<std::string> parts;
  if (special_mismatches > 0) {
    std::vector<int64_t> idx = MultiIndex(out.shape(), first_special);
    r.first_difference = idx;
    parts.push_back(absl::StrCat(special_mismatches, " of ", n,
                                 " elements differ in NaN/inf; first at ", IndexString(idx),
                                 ": got ", FormatElement(out, first_special), ", expected ",
                                 FormatElement(ref, first_special)));
  }
  if (!norm_ok) {
    std::string s = absl::StrFormat("relative error %.3g > %.3g", r.error, tol);
    if (abs_floor > 0) absl::StrAppend(&s, absl::StrFormat(" and rms difference %.3g > %.3g", r.rms_diff, abs_floor));
    int64_t far = r.differing_elements - special_mismatches;
    if (first_far >= 0) {
      std::vector<int64_t> idx = MultiIndex(out.shape(), first_far);
      if (r.first_difference.empty() || first_far < first_special) r.first_difference = idx;
      absl::StrAppend(&s, "; ", far, " of ", n, " elements differ by more than ",
                      absl::StrFormat("%.3g", limit), " (tolerance x rms(expected)); first at ",
                      IndexString(idx), ": got ", FormatElement(out, first_far), ", expected ",
                      FormatElement(ref, first_far));
    }
    if (worst >= 0 && worst != first_far) {
      absl::StrAppend(&s, "; largest at ", IndexString(MultiIndex(out.shape(), worst)), ": got ",
                      FormatElement(out, worst), ", expected ", FormatElement(ref, worst));
    }
    parts.push_back(std::move(s));
  }
  r.message = absl::StrJoin(parts, "; ");
  return r;
}

CompareResult CompareArrays(const Literal& out, const Literal& ref, double tolerance, double abs_floor) {
  CompareResult r;
  if (!out.shape().IsArray() || !ref.shape().IsArray()) {
    r.message = absl::StrCat("cannot compare ", out.shape().ToString(false), " with ",
                             ref.shape().ToString(false), ": only arrays and tuples compare");
    return r;
  }
  if (out.element_type() != ref.element_type()) {
    r.message = absl::StrCat("element type mismatch: got ", out.shape().ToString(false),
                             ", expected ", ref.shape().ToString(false));
    return r;
  }
  if (out.shape().dimensions() != ref.shape().dimensions()) {
    r.message = absl::StrCat("shape mismatch: got ", out.shape().ToString(false), ", expected ",
                             ref.shape().ToString(false));
    return r;
  }
  int64_t n = out.element_count();
  // Both literals hold exactly n elements (same type and dims), so reads stay in bounds.
  PrimitiveType t = out.element_type();
  if (IsIntegral(t) || t == PrimitiveType::PRED) return CompareExact(out, ref, n);
  if (!(tolerance >= 0)) tolerance = 0;  // NaN or negative: hold to exactness
  return CompareFloat(out, ref, n, tolerance, abs_floor);
}

bool IsDotLike(const HloInstruction& inst) {
  switch (inst.opcode()) {
    case HloOpcode::kDot:
    case HloOpcode::kConvolution:
    case HloOpcode::kRaggedDot:
      return true;
    case HloOpcode::kCustomCall: {
      // XLA:GPU's library calls in optimized dumps (__cublas$gemm, __cublas$lt$matmul,
      // __cudnn$convForward, ...) and hloc's small-GEMM kernel (__hloc$small_gemm).
      const std::string& target = inst.attrs().custom_call_target;
      return target.rfind("__cublas", 0) == 0 || target.rfind("__cudnn", 0) == 0 || target == "__hloc$small_gemm";
    }
    default:
      return false;
  }
}

}  // namespace

double DefaultTolerance(PrimitiveType type, bool fed_by_dot_or_conv) {
  switch (type) {
    case PrimitiveType::F32:
    case PrimitiveType::F64:
    case PrimitiveType::C64:
    case PrimitiveType::C128:
      return fed_by_dot_or_conv ? 2e-3 : 1e-4;
    case PrimitiveType::F16:
      return 1e-2;
    case PrimitiveType::BF16:
      return 3e-2;
    default:
      break;
  }
  if (IsF8OrF4(type)) return 3e-2;
  return 0;  // integers, pred and everything else: exact
}

double DefaultAbsoluteFloor(PrimitiveType type, bool fed_by_dot_or_conv) {
  switch (type) {
    case PrimitiveType::F32:
    case PrimitiveType::F64:
    case PrimitiveType::C64:
    case PrimitiveType::C128:
      return fed_by_dot_or_conv ? 1e-6 : 1e-7;
    case PrimitiveType::F16:
    case PrimitiveType::BF16:
      return 1e-3;
    default:
      break;
  }
  if (IsF8OrF4(type)) return 1e-3;
  return 0;  // integers and pred compare exactly
}

CompareResult CompareLiterals(const Literal& out, const Literal& ref, double tolerance, double abs_floor) {
  if (out.shape().IsTuple() || ref.shape().IsTuple()) {
    CompareResult r;
    r.threshold = tolerance;
    if (!out.shape().IsTuple() || !ref.shape().IsTuple() ||
        out.tuple_size() != ref.tuple_size()) {
      r.message = absl::StrCat("shape mismatch: got ", out.shape().ToString(false),
                               ", expected ", ref.shape().ToString(false));
      return r;
    }
    // Element-wise; tuples nest only as deep as their shapes, which the parser caps.
    r.ok = true;
    for (int64_t i = 0; i < out.tuple_size(); ++i) {
      CompareResult e = CompareLiterals(out.tuple_element(i), ref.tuple_element(i), tolerance, abs_floor);
      r.error = std::max(r.error, e.error);
      r.element_count += e.element_count;
      r.differing_elements += e.differing_elements;
      if (!e.ok && r.ok) {
        r.ok = false;
        r.threshold = e.threshold;
        r.first_difference = e.first_difference;
        r.message = absl::StrCat("tuple element {", i, "}: ", e.message);
      }
    }
    return r;
  }
  return CompareArrays(out, ref, tolerance, abs_floor);
}

std::vector<const Literal*> FlattenLeaves(const Literal& literal) {
  std::vector<const Literal*> leaves;
  // Explicit stack, children pushed in reverse so leaves come out in order.
  std::vector<const Literal*> stack = {&literal};
  while (!stack.empty()) {
    const Literal* l = stack.back();
    stack.pop_back();
    if (!l->shape().IsTuple()) {
      if (l->shape().IsArray()) leaves.push_back(l);  // tokens have no data to compare
      continue;
    }
    for (int64_t i = l->tuple_size() - 1; i >= 0; --i) stack.push_back(&l->tuple_element(i));
  }
  return leaves;
}

std::vector<bool> OutputsFedByDotOrConvolution(const HloModule& module) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr || entry->root_instruction() == nullptr) return {};

  // Which computations contain a dot-like instruction, directly or through their callees
  // (post order puts callees first, so one pass suffices).
  absl::flat_hash_map<const HloComputation*, bool> has_dot;
  for (const HloComputation* c : module.MakeComputationPostOrder()) {
    bool any = false;
    for (const auto& inst : c->instructions()) {
      if (IsDotLike(*inst)) any = true;
      for (const HloComputation* callee : inst->called_computations()) {
        auto it = has_dot.find(callee);
        if (it != has_dot.end() && it->second) any = true;
      }
    }
    has_dot[c] = any;
  }

  // Whether each entry instruction is reachable from a dot-like one (operands first).
  absl::flat_hash_map<const HloInstruction*, bool> fed;
  for (const HloInstruction* inst : entry->MakeInstructionPostOrder()) {
    bool f = IsDotLike(*inst);
    for (const HloComputation* callee : inst->called_computations()) {
      auto it = has_dot.find(callee);
      if (it != has_dot.end() && it->second) f = true;
    }
    for (const HloInstruction* op : inst->operands()) {
      auto it = fed.find(op);
      if (it != fed.end() && it->second) f = true;
    }
    fed[inst] = f;
  }

  // Walk the root's shape; through tuple instructions each element has its own operand.
  struct Item {
    const HloInstruction* inst;  // the instruction producing this (sub)value, or null
    const Shape* shape;
    bool inherited;  // used when inst is null (a part of a non-tuple instruction's tuple)
  };
  std::vector<bool> result;
  std::vector<Item> stack = {{entry->root_instruction(), &entry->root_instruction()->shape(), false}};
  while (!stack.empty()) {
    Item item = stack.back();
    stack.pop_back();
    bool value = item.inherited;
    if (item.inst != nullptr) {
      auto it = fed.find(item.inst);
      value = it != fed.end() && it->second;
    }
    if (!item.shape->IsTuple()) {
      if (item.shape->IsArray()) result.push_back(value);
      continue;
    }
    const auto& elems = item.shape->tuple_shapes();
    bool by_operand = item.inst != nullptr && item.inst->opcode() == HloOpcode::kTuple &&
                      item.inst->operand_count() == static_cast<int64_t>(elems.size());
    for (int64_t i = static_cast<int64_t>(elems.size()) - 1; i >= 0; --i) {
      if (by_operand) {
        const HloInstruction* op = item.inst->operand(i);
        stack.push_back({op, &op->shape(), false});
      } else {
        stack.push_back({nullptr, &elems[i], value});
      }
    }
  }
  return result;
}

}  // namespace hloc
