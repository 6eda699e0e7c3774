#include "passes/expanders/comparison_expander.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "passes/expanders/expander_util.h"

namespace hloc {

using expanders::ExpanderBuilder;

namespace {

using P = PrimitiveType;

absl::StatusOr<std::vector<std::pair<P, P>>> ParseUpcasts(const std::vector<std::string>& specs) {
  std::vector<std::pair<P, P>> out;
  for (const std::string& spec : specs) {
    std::string from, to;
    if (size_t arrow = spec.find("->"); arrow != std::string::npos) {
      from = spec.substr(0, arrow);
      to = spec.substr(arrow + 2);
    } else if (size_t colon = spec.find(':'); colon != std::string::npos) {
      from = spec.substr(0, colon);
      to = spec.substr(colon + 1);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("comparison-expander: expand_via_upcast entry '", spec, "' is not of the form from:to"));
    }
    std::optional<P> f = ParsePrimitiveType(from), t = ParsePrimitiveType(to);
    if (!f || !t || !IsFloatingPoint(*f) || !IsFloatingPoint(*t))
      return absl::InvalidArgumentError(
          absl::StrCat("comparison-expander: expand_via_upcast entry '", spec, "' must name two float types"));
    // XLA CHECKs CastPreservesValues: a lossy conversion would change the order.
    if (!expanders::FloatCastPreservesValues(*f, *t))
      return absl::InvalidArgumentError(absl::StrCat("comparison-expander: converting ", from, " to ", to,
                                                     " does not preserve every value"));
    out.push_back({*f, *t});
  }
  return out;
}

// XLA's BitcastConvertFloatingPointToIntegral: an integer key whose signed order is the total
// order of the float values.
HloInstruction* TotalOrderKey(ExpanderBuilder& b, HloInstruction* value, HloInstruction* zero, HloInstruction* min_value,
                              HloInstruction* max_value) {
  const P signed_type = max_value->shape().element_type();
  HloInstruction* signed_value = b.BitcastConvert(value, signed_type);
  HloInstruction* flipped = nullptr;
  if (expanders::HasNegativeZero(value->shape().element_type())) {
    flipped = b.Xor(max_value, signed_value);
  } else {
    // No -0, so the smallest negative value must take its place: one more than the xor.
    flipped = b.Sub(min_value, signed_value);
    // NaN (the -0 bit pattern, i.e. INT_MIN) is the smallest value.
    HloInstruction* is_nan = b.Compare(signed_value, min_value, ComparisonDirection::kEq);
    flipped = b.Select(is_nan, min_value, flipped);
  }
  HloInstruction* is_negative = b.Compare(signed_value, zero, ComparisonDirection::kLt);
  return b.Select(is_negative, flipped, signed_value);
}

}  // namespace

absl::StatusOr<bool> ComparisonExpander::Run(HloModule& module, PassContext& context) {
  (void)context;
  absl::StatusOr<std::vector<std::pair<P, P>>> upcasts = ParseUpcasts(expand_via_upcast_);
  if (!upcasts.ok()) return upcasts.status();
  NameUniquer names = InstructionNameUniquer(module);
  auto matches = [](const HloInstruction& inst) {
    return inst.opcode() == HloOpcode::kCompare && inst.attrs().comparison_type == ComparisonType::kTotalOrder &&
           inst.operand_count() == 2 && inst.operand(0)->shape().IsArray() &&
           IsFloatingPoint(inst.operand(0)->shape().element_type()) && inst.attrs().comparison_direction.has_value();
  };
  return expanders::RunOpExpander(module, matches, [&](HloInstruction* compare) -> absl::StatusOr<HloInstruction*> {
    ExpanderBuilder b(compare->parent(), &names, compare);
    HloInstruction* lhs = compare->operand(0);
    HloInstruction* rhs = compare->operand(1);
    P type = lhs->shape().element_type();
    for (const auto& [from, to] : *upcasts) {
      if (from != type) continue;
      type = to;
      lhs = b.Convert(lhs, to);
      rhs = b.Convert(rhs, to);
      break;
    }
    HloInstruction* result = nullptr;
    if (type == P::F8E8M0FNU) {
      // No sign bit: the bit patterns, read unsigned, are already in value order (NaN, 0xff,
      // last). XLA's signed key would put the upper half of the range below the lower half.
      HloInstruction* l = b.BitcastConvert(lhs, P::U8);
      HloInstruction* r = b.BitcastConvert(rhs, P::U8);
      result = b.Compare(l, r, *compare->attrs().comparison_direction, ComparisonType::kUnsigned);
    } else {
      absl::StatusOr<P> signed_type = expanders::SignedIntegralTypeForBitWidth(BitWidth(type));
      if (!signed_type.ok()) return signed_type.status();
      const Shape signed_shape = expanders::ShapeWithType(lhs->shape(), *signed_type);
      const int bits = BitWidth(type);
      HloInstruction* zero = b.BroadcastScalar(b.ScalarBits(*signed_type, 0), signed_shape);
      HloInstruction* min_value = b.BroadcastScalar(b.ScalarBits(*signed_type, uint64_t{1} << (bits - 1)), signed_shape);
      HloInstruction* max_value =
          b.BroadcastScalar(b.ScalarBits(*signed_type, (uint64_t{1} << (bits - 1)) - 1), signed_shape);
      HloInstruction* l = TotalOrderKey(b, lhs, zero, min_value, max_value);
      HloInstruction* r = TotalOrderKey(b, rhs, zero, min_value, max_value);
      result = b.Compare(l, r, *compare->attrs().comparison_direction, ComparisonType::kSigned);
    }
    if (!b.ok()) {
      b.Discard();
      return b.status();
    }
    return result;
  });
}

}  // namespace hloc
