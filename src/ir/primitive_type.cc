#include "ir/primitive_type.h"

namespace hloc {
namespace {
struct TypeInfo {
  std::string_view name;
  int bytes;
  int bits;
};
constexpr TypeInfo kInfo[] = {
#define HLOC_PT_INFO(e, name, bytes, bits) {name, bytes, bits},
    HLOC_PRIMITIVE_TYPES(HLOC_PT_INFO)
#undef HLOC_PT_INFO
};
const TypeInfo& Info(PrimitiveType t) { return kInfo[static_cast<int>(t)]; }
}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType t) { return Info(t).name; }

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kInfo)); ++i) {
    if (kInfo[i].name == name) return static_cast<PrimitiveType>(i);
  }
  return std::nullopt;
}

int ByteWidth(PrimitiveType t) { return Info(t).bytes; }
int BitWidth(PrimitiveType t) { return Info(t).bits; }

bool IsArrayType(PrimitiveType t) {
  return t != PrimitiveType::TOKEN && t != PrimitiveType::TUPLE &&
         t != PrimitiveType::OPAQUE_TYPE;
}

bool IsSignedIntegral(PrimitiveType t) {
  using P = PrimitiveType;
  return t == P::S2 || t == P::S4 || t == P::S8 || t == P::S16 || t == P::S32 || t == P::S64;
}

bool IsUnsignedIntegral(PrimitiveType t) {
  using P = PrimitiveType;
  return t == P::U2 || t == P::U4 || t == P::U8 || t == P::U16 || t == P::U32 || t == P::U64;
}

bool IsF8OrF4(PrimitiveType t) {
  using P = PrimitiveType;
  switch (t) {
    case P::F4E2M1FN: case P::F8E3M4: case P::F8E4M3: case P::F8E4M3FN:
    case P::F8E4M3B11FNUZ: case P::F8E4M3FNUZ: case P::F8E5M2: case P::F8E5M2FNUZ:
    case P::F8E8M0FNU:
      return true;
    default:
      return false;
  }
}

bool IsFloatingPoint(PrimitiveType t) {
  using P = PrimitiveType;
  return t == P::F16 || t == P::BF16 || t == P::F32 || t == P::F64 || IsF8OrF4(t);
}

bool IsComplex(PrimitiveType t) { return t == PrimitiveType::C64 || t == PrimitiveType::C128; }

PrimitiveType ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::C64) return PrimitiveType::F32;
  if (t == PrimitiveType::C128) return PrimitiveType::F64;
  return t;
}

}  // namespace hloc
