// HloSharding as written in HLO text: {replicated}, {maximal device=1}, {devices=[2,1]0,1},
// {devices=[2,1]<=[2] last_tile_dims={manual}}, tuples, and Shardy's mesh form
// {mesh['x'=2], [{'x'}, {}]} (kept as text until the SPMD issue gives it meaning).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/attributes.h"

namespace hloc {

struct HloSharding {
  // kUnreduced: "{unreduced}" (added for the parser; XLA's HloSharding::Unreduced).
  enum class Kind { kReplicated, kMaximal, kTiled, kManual, kUnknown, kTuple, kMesh, kUnreduced };
  enum class SubgroupType { kTuple, kReplicated, kManual, kUnreduced };
  Kind kind = Kind::kReplicated;
  int64_t device = 0;                       // kMaximal
  std::vector<int64_t> tile_dims;           // kTiled: devices=[...]
  std::vector<int64_t> devices;             // explicit device order
  std::optional<IotaTileAssignment> iota;   // or <=[...]
  bool last_tile_dim_replicate = false;
  std::vector<SubgroupType> last_tile_dims;
  std::vector<OpMetadata> metadata;
  std::string shard_group;                  // "shard_as 1" / "shard_like 2", verbatim
  std::vector<HloSharding> tuple_elements;  // kTuple
  std::string mesh_text;                    // kMesh: the text inside the braces
  bool operator==(const HloSharding&) const = default;
};

}  // namespace hloc
