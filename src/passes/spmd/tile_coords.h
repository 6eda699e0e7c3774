// Shardings seen per device: which tile of each data dimension a device holds. Every sharding
// the partitioner builds (an operand's required sharding, a dot's iteration space, a reduce's
// partial result) is made by choosing, for each new dimension, where its tile coordinate comes
// from, then grouping the devices by their coordinates. Devices holding the same tile form the
// replicated subgroup, in ascending id order.
#pragma once
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/sharding.h"
#include "ir/shape.h"

namespace hloc::spmd {

// Per device (0..num_devices-1), its tile coordinate along each data dim of a normalized
// sharding; replicated / manual shardings give an empty coordinate list per device.
struct TileCoords {
  std::vector<int64_t> tiles;                  // tiles per data dim
  std::vector<std::vector<int64_t>> of_device;  // [device][dim]
};
absl::StatusOr<TileCoords> CoordsOf(const HloSharding& s, int64_t num_devices);

// A normalized sharding with `tiles` per data dim from per-device coordinates; error when the
// devices do not cover every tile the same number of times.
absl::StatusOr<HloSharding> ShardingFromCoords(const TileCoords& coords);

// A sharding over a new index space of `source_dim.size()` dims: new dim i takes its tiles and
// coordinates from dim source_dim[i] of `s` (-1: not tiled); s's other dims become replication.
absl::StatusOr<HloSharding> Remap(const HloSharding& s, const std::vector<int64_t>& source_dim, int64_t num_devices);

// The groups of devices that hold the same coordinates on every data dim of `s` except `dims`,
// each ordered by its coordinates along `dims` (row-major), one device per coordinate (replicas
// of a tile go to different groups). One collective's
// replica_groups: an all-gather along one dim, an all-reduce over a reduced dim's shards.
std::vector<std::vector<int64_t>> GroupsAlong(const HloSharding& s, const std::vector<int64_t>& dims,
                                              int64_t num_devices);

// A sharding over a new index space whose dim i takes its tiles from dim sources[i].second of
// sharding sources[i].first (null or -1: untiled); nullopt when the devices do not form a
// tiling (two sources split the same devices the same way, or unevenly).
std::optional<HloSharding> CombineSources(const std::vector<std::pair<const HloSharding*, int64_t>>& sources,
                                          int64_t n);

// Array leaves of a shape (1 for an array), and tuple shardings spelled leaf by leaf: the same
// leaf for every array of `shape`, or `s` itself expanded when it is one sharding for a tuple.
int64_t LeafCount(const Shape& s);
HloSharding UniformSharding(const Shape& shape, const HloSharding& leaf);
HloSharding ExpandSharding(const HloSharding& s, const Shape& shape);

// Total tiles (product over data dims).
int64_t TileCount(const HloSharding& s);

// Whether every device holds, in `a`, a tile that contains its tile in `b`: b refines a on
// every dim (same coordinates where a is tiled, a untiled elsewhere), so `b`'s shard is a local
// slice of `a`'s.
bool Refines(const HloSharding& b, const HloSharding& a, int64_t num_devices);

}  // namespace hloc::spmd
