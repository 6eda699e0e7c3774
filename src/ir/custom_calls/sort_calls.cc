// "__hloc$radix_sort"'s backend_config and shape checks (sort_calls.h).
#include "ir/custom_calls/sort_calls.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "ir/custom_calls/library_calls.h"
#include "ir/opcode.h"

namespace hloc {
namespace {

absl::Status Bad(const HloInstruction& inst, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(inst.opcode())), " ", inst.name(), ": ", why));
}

}  // namespace

std::string RadixSortConfigToJson(const RadixSortConfig& config) {
  return absl::StrCat("{\"dimension\":", config.dimension, ",\"key_bits\":", config.key_bits, "}");
}

absl::StatusOr<RadixSortConfig> ParseRadixSortCall(const HloInstruction& inst) {
  if (inst.operand_count() != 2) return Bad(inst, absl::StrCat("takes (keys, values), got ", inst.operand_count(), " operands"));
  const Shape& keys = inst.operand(0)->shape();
  const Shape& values = inst.operand(1)->shape();
  if (!keys.IsArray() || (keys.element_type() != PrimitiveType::U32 && keys.element_type() != PrimitiveType::U64))
    return Bad(inst, absl::StrCat("keys must be a u32 or u64 array, got ", keys.ToString(false)));
  if (!values.IsArray() || values.dimensions() != keys.dimensions())
    return Bad(inst, absl::StrCat("values must have the keys' dimensions, got ", values.ToString(false)));
  const Shape& s = inst.shape();
  if (!s.IsTuple() || s.tuple_shapes().size() != 3 || !s.tuple_shapes(0).EqualIgnoringLayout(keys) ||
      !s.tuple_shapes(1).EqualIgnoringLayout(values) || !s.tuple_shapes(2).IsArray() ||
      s.tuple_shapes(2).element_type() != PrimitiveType::U8 || s.tuple_shapes(2).rank() != 1)
    return Bad(inst, absl::StrCat("result must be (", keys.ToString(false), ", ", values.ToString(false),
                                  ", u8[scratch]), got ", s.ToString(false)));
  absl::StatusOr<nlohmann::json> json = ParseJson(inst.attrs().backend_config);
  if (!json.ok()) return Bad(inst, absl::StrCat("backend_config: ", json.status().message()));
  auto dim = json->find("dimension");
  auto bits = json->find("key_bits");
  if (!json->is_object() || dim == json->end() || !dim->is_number() || bits == json->end() || !bits->is_number())
    return Bad(inst, "backend_config must give numbers \"dimension\" and \"key_bits\"");
  RadixSortConfig config;
  config.dimension = dim->get<int64_t>();
  const int64_t key_bits = bits->get<int64_t>();
  if (config.dimension < 0 || config.dimension >= keys.rank())
    return Bad(inst, absl::StrCat("dimension ", dim->dump(), " is not below the keys' rank ", keys.rank()));
  if (key_bits < 8 || key_bits % 8 != 0 || key_bits > BitWidth(keys.element_type()))
    return Bad(inst, absl::StrCat("key_bits ", bits->dump(), " must be a multiple of 8 up to the key width"));
  config.key_bits = static_cast<int>(key_bits);
  const int64_t n = keys.num_elements();
  const int64_t need = RadixSortScratchBytes(n, ByteWidth(keys.element_type()), ByteWidth(values.element_type()));
  if (s.tuple_shapes(2).dimensions(0) < need)
    return Bad(inst, absl::StrCat("scratch must hold at least ", need, " bytes, got ", s.tuple_shapes(2).dimensions(0)));
  return config;
}

}  // namespace hloc
