// Element types: all of XLA's PrimitiveType values, with their text names.
#pragma once
#include <cstdint>
#include <optional>
#include <string_view>

namespace hloc {

// X(enumerator, text name, storage bytes per element in a Literal, bit width)
// Sub-byte types (s2, s4, u2, u4, f4e2m1fn) are stored unpacked, one per byte.
#define HLOC_PRIMITIVE_TYPES(X)              \
  X(PRED, "pred", 1, 1)                      \
  X(S2, "s2", 1, 2)                          \
  X(S4, "s4", 1, 4)                          \
  X(S8, "s8", 1, 8)                          \
  X(S16, "s16", 2, 16)                       \
  X(S32, "s32", 4, 32)                       \
  X(S64, "s64", 8, 64)                       \
  X(U2, "u2", 1, 2)                          \
  X(U4, "u4", 1, 4)                          \
  X(U8, "u8", 1, 8)                          \
  X(U16, "u16", 2, 16)                       \
  X(U32, "u32", 4, 32)                       \
  X(U64, "u64", 8, 64)                       \
  X(F16, "f16", 2, 16)                       \
  X(BF16, "bf16", 2, 16)                     \
  X(F32, "f32", 4, 32)                       \
  X(F64, "f64", 8, 64)                       \
  X(F4E2M1FN, "f4e2m1fn", 1, 4)              \
  X(F8E3M4, "f8e3m4", 1, 8)                  \
  X(F8E4M3, "f8e4m3", 1, 8)                  \
  X(F8E4M3FN, "f8e4m3fn", 1, 8)              \
  X(F8E4M3B11FNUZ, "f8e4m3b11fnuz", 1, 8)    \
  X(F8E4M3FNUZ, "f8e4m3fnuz", 1, 8)          \
  X(F8E5M2, "f8e5m2", 1, 8)                  \
  X(F8E5M2FNUZ, "f8e5m2fnuz", 1, 8)          \
  X(F8E8M0FNU, "f8e8m0fnu", 1, 8)            \
  X(C64, "c64", 8, 64)                       \
  X(C128, "c128", 16, 128)                   \
  X(TOKEN, "token", 0, 0)                    \
  X(TUPLE, "tuple", 0, 0)                    \
  X(OPAQUE_TYPE, "opaque", 0, 0)

enum class PrimitiveType : uint8_t {
#define HLOC_PT_ENUM(e, name, bytes, bits) e,
  HLOC_PRIMITIVE_TYPES(HLOC_PT_ENUM)
#undef HLOC_PT_ENUM
};

std::string_view PrimitiveTypeName(PrimitiveType t);
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);
// Bytes one element takes in a Literal's storage (0 for token/tuple/opaque).
int ByteWidth(PrimitiveType t);
// Logical bit width (4 for s4, 1 for pred, 64 for c64).
int BitWidth(PrimitiveType t);

bool IsArrayType(PrimitiveType t);  // not token, tuple, opaque
bool IsSignedIntegral(PrimitiveType t);
bool IsUnsignedIntegral(PrimitiveType t);
inline bool IsIntegral(PrimitiveType t) { return IsSignedIntegral(t) || IsUnsignedIntegral(t); }
bool IsFloatingPoint(PrimitiveType t);  // f16, bf16, f32, f64, the f8/f4 types
bool IsF8OrF4(PrimitiveType t);
bool IsComplex(PrimitiveType t);
// For c64 -> f32, c128 -> f64; identity otherwise.
PrimitiveType ComplexComponentType(PrimitiveType t);

}  // namespace hloc
