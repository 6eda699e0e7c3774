#include "passes/layout/float_normalization.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/profile.h"
#include "engine/requirements.h"
#include "passes/layout/layout_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using layout::Builder;

bool UsesType(const Shape& s, PrimitiveType t) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes())
      if (UsesType(e, t)) return true;
    return false;
  }
  return s.IsArray() && s.element_type() == t;
}

Shape Retype(const Shape& s, PrimitiveType from, PrimitiveType to) {
  Shape out = s;
  if (out.IsTuple()) {
    for (Shape& e : out.mutable_tuple_shapes()) e = Retype(e, from, to);
  } else if (out.IsArray() && out.element_type() == from) {
    out.set_element_type(to);
  }
  return out;
}

// XLA's GpuFloatSupport data-movement list: correct in any precision.
bool IsDataMovement(HloOpcode op) {
  switch (op) {
    case HloOpcode::kBroadcast: case HloOpcode::kConcatenate: case HloOpcode::kCopy:
    case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kGather:
    case HloOpcode::kPad: case HloOpcode::kReshape: case HloOpcode::kReverse: case HloOpcode::kScatter:
    case HloOpcode::kSelect: case HloOpcode::kSelectAndScatter: case HloOpcode::kSlice:
    case HloOpcode::kTranspose: case HloOpcode::kBitcast:
      return true;
    default:
      return IsCollective(op);
  }
}

// Instructions the pass never touches (XLA's FloatNormalizationVisitor skips them too).
bool Skipped(const HloInstruction& x) {
  switch (x.opcode()) {
    case HloOpcode::kTuple: case HloOpcode::kGetTupleElement: case HloOpcode::kConstant:
    case HloOpcode::kParameter: case HloOpcode::kFusion: case HloOpcode::kConvert: case HloOpcode::kCall:
    case HloOpcode::kCustomCall: case HloOpcode::kWhile: case HloOpcode::kConditional:
    case HloOpcode::kBitcastConvert: case HloOpcode::kAfterAll: case HloOpcode::kIota:
      return true;
    default:
      return HasSideEffectNoRecurse(x);
  }
}

// Whether a computation `x` applies reads the bits of a low-precision value (bitcast-convert):
// such a callee cannot be retyped to the high type. A total-order compare is expanded into
// bitcast-converts (comparison-expander), which is what JAX's jnp.sort on bf16 gives: its
// comparator stays in bf16, which the sort emitters read as they do f16.
bool CalleesReadBits(const HloInstruction& x) {
  for (const HloComputation* callee : x.called_computations()) {
    for (const auto& inst : callee->instructions()) {
      if (inst->opcode() == HloOpcode::kBitcastConvert && inst->operand(0)->shape().IsArray() &&
          IsFloatingPoint(inst->operand(0)->shape().element_type()))
        return true;
      if (CalleesReadBits(*inst)) return true;
    }
  }
  return false;
}

class Normalizer {
 public:
  Normalizer(HloModule& m, PrimitiveType low, PrimitiveType high, absl::flat_hash_set<HloOpcode> arith)
      : module_(m), low_(low), high_(high), arith_(std::move(arith)), names_(CloneNames::ForModule(m)),
        inst_names_(InstructionNameUniquer(m)) {}

  absl::StatusOr<bool> Run() {
    // Computations applied elementwise (reducers, comparators) change with their callers.
    absl::flat_hash_set<const HloComputation*> embedded;
    for (const auto& c : module_.computations())
      for (const auto& inst : c->instructions())
        if (GetInstructionCallContext(inst->opcode()) == CallContext::kEmbedded)
          for (const HloComputation* callee : inst->called_computations()) embedded.insert(callee);
    bool changed = false;
    for (HloComputation* c : module_.MakeComputationPostOrder()) {
      if (c->IsFusionComputation() || embedded.count(c)) continue;
      for (HloInstruction* x : c->MakeInstructionPostOrder()) {
        if (Skipped(*x) || IsDataMovement(x->opcode()) || arith_.count(x->opcode())) continue;
        if (CalleesReadBits(*x)) continue;
        bool uses = UsesType(x->shape(), low_);
        for (const HloInstruction* o : x->operands()) uses |= UsesType(o->shape(), low_);
        if (!uses) continue;
        absl::Status s = Upcast(c, x);
        if (!s.ok()) return s;
        changed = true;
      }
    }
    return changed;
  }

 private:
  absl::StatusOr<HloComputation*> HighPrecisionClone(HloComputation* callee) {
    auto it = clones_.find(callee);
    if (it != clones_.end()) return it->second;
    absl::StatusOr<HloComputation*> clone =
        CloneComputation(*callee, module_, names_, std::string(PrimitiveTypeName(high_)));
    if (!clone.ok()) return clone.status();
    for (const auto& inst : (*clone)->instructions()) {
      if (!UsesType(inst->shape(), low_)) continue;
      if (inst->opcode() == HloOpcode::kConstant && inst->attrs().literal && inst->shape().IsArray()) {
        const Literal& old = *inst->attrs().literal;
        Literal lit(Retype(old.shape(), low_, high_));
        for (int64_t i = 0; i < old.element_count(); ++i) lit.SetDouble(i, old.GetDouble(i));
        inst->mutable_attrs().literal = std::move(lit);
      }
      inst->mutable_shape() = Retype(inst->shape(), low_, high_);
    }
    clones_[callee] = *clone;
    return *clone;
  }

  absl::Status Upcast(HloComputation* c, HloInstruction* x) {
    Builder b(c, &inst_names_, x);
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : x->operands()) {
      if (o->shape().IsArray() && o->shape().element_type() == low_) ops.push_back(b.Convert(o, high_));
      else ops.push_back(o);
    }
    std::unique_ptr<HloInstruction> clone = CloneInstruction(*x, ops);
    clone->mutable_shape() = Retype(x->shape(), low_, high_);
    if (GetInstructionCallContext(x->opcode()) == CallContext::kEmbedded) {
      for (HloComputation*& callee : clone->mutable_called_computations()) {
        absl::StatusOr<HloComputation*> hc = HighPrecisionClone(callee);
        if (!hc.ok()) return hc.status();
        callee = *hc;
      }
    }
    HloInstruction* n = b.Add(std::move(clone));
    HloInstruction* out = n;
    if (x->shape().IsArray() && x->shape().element_type() == low_) {
      out = b.Convert(n, low_);
    } else if (x->shape().IsTuple()) {
      std::vector<HloInstruction*> elems;
      for (int64_t i = 0; i < static_cast<int64_t>(x->shape().tuple_shapes().size()); ++i) {
        HloInstruction* e = b.GetTupleElement(n, i);
        if (x->shape().tuple_shapes(i).IsArray() && x->shape().tuple_shapes(i).element_type() == low_)
          e = b.Convert(e, low_);
        elems.push_back(e);
      }
      out = b.Tuple(elems);
    }
    x->ReplaceAllUsesWith(out);
    return RemoveInstruction(x);
  }

  HloModule& module_;
  PrimitiveType low_, high_;
  absl::flat_hash_set<HloOpcode> arith_;
  CloneNames names_;
  NameUniquer inst_names_;
  absl::flat_hash_map<const HloComputation*, HloComputation*> clones_;
};

}  // namespace

absl::StatusOr<bool> FloatNormalization::Run(HloModule& module, PassContext& context) {
  std::optional<PrimitiveType> low = ParsePrimitiveType(low_), high = ParsePrimitiveType(high_);
  if (!low || !IsFloatingPoint(*low))
    return absl::InvalidArgumentError(absl::StrCat("float-normalization: low_precision_type '", low_,
                                                   "' is not a floating-point type"));
  if (!high || !IsFloatingPoint(*high))
    return absl::InvalidArgumentError(absl::StrCat("float-normalization: high_precision_type '", high_,
                                                   "' is not a floating-point type"));
  absl::flat_hash_set<HloOpcode> arith;
  if (!supported_ops_.empty()) {
    for (const std::string& name : supported_ops_) {
      std::optional<HloOpcode> op = StringToHloOpcode(name);
      if (!op) return absl::InvalidArgumentError(absl::StrCat("float-normalization: unknown opcode '", name,
                                                              "' in supported_ops"));
      arith.insert(*op);
    }
  } else if (const HardwareProfile* p = context.profile; p != nullptr && p->kind == "gpu") {
    const bool f8 = IsF8OrF4(*low);
    if (HasCapability(p, f8 ? Requirement::kHasFp8 : Requirement::kHasBf16)) {
      arith.insert(HloOpcode::kDot);
      arith.insert(HloOpcode::kConvolution);
    }
    if (*low == PrimitiveType::BF16 && p->compute_capability_major >= 9) {
      arith.insert(HloOpcode::kAdd);
      arith.insert(HloOpcode::kSubtract);
      arith.insert(HloOpcode::kMultiply);
    }
  }
  Normalizer n(module, *low, *high, std::move(arith));
  return n.Run();
}

}  // namespace hloc
