// Shardings given meaning: every written form (V1 device lists, V2 iota lists,
// last_tile_dim_replicate, last_tile_dims={...}, Shardy's named mesh form) is brought to one
// normalized form that the propagation, the partitioner, the evaluator and the runtimes read:
//   kReplicated | kMaximal device=D | kManual | kTuple of normalized leaves |
//   kTiled with `tile_dims` = data dims then subgroup dims, `devices` spelled out row-major,
//   `last_tile_dims` naming every subgroup dim (replicated or manual), no `iota`,
//   last_tile_dim_replicate folded into last_tile_dims.
// A tiled sharding whose data dims are all 1 and whose subgroups are all replicated is
// kReplicated; one whose subgroups are all manual is kManual.
//
// Shards follow XLA: dimension d of a shape of size S over T tiles has shard size ceil(S/T);
// tile t holds [t*ceil, min(S, (t+1)*ceil)), the rest of the last shards is padding.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/literal.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace hloc {

// Spells out an iota device list (reshape iota to reshape_dims, transpose, flatten).
absl::StatusOr<std::vector<int64_t>> MaterializeIota(const IotaTileAssignment& iota);

// The normalized form of `s` for a value of `shape` (tuple shardings get one leaf per array
// leaf of a tuple shape; a single sharding on a tuple shape applies to every leaf).
absl::StatusOr<HloSharding> NormalizeSharding(const HloSharding& s, const Shape& shape);

// Normalized shardings.
HloSharding ReplicatedSharding();
HloSharding ManualSharding();
// Tiled over `tile_dims` (data dims) with devices in row-major order 0..n-1, plus a trailing
// replicated subgroup of `replicas` (omitted when 1).
HloSharding TiledSharding(std::vector<int64_t> tile_dims, std::vector<int64_t> devices, int64_t replicas = 1);
// Normalizes kTiled results built by hand: all-1 data dims with replicated subgroups -> kReplicated.
HloSharding Canonical(HloSharding s);

// Queries on normalized shardings.
bool IsReplicated(const HloSharding& s);
bool IsTiled(const HloSharding& s);  // kTiled (some data dim split over more than one tile)
bool IsManual(const HloSharding& s);
// Number of data dims (tile_dims minus subgroup dims) of a kTiled sharding; 0 otherwise.
int64_t DataRank(const HloSharding& s);
// Tiles along data dim d (1 when not tiled).
int64_t TilesAlong(const HloSharding& s, int64_t d);
// Product of the replicated subgroup dims (1 when none); manual subgroups not counted.
int64_t ReplicationFactor(const HloSharding& s);
// Number of devices the sharding spans (the size of its device list; 1 for replicated).
int64_t NumDevicesOf(const HloSharding& s);
// The data-tile coordinates of `device` (one per data dim); error if it holds no tile.
absl::StatusOr<std::vector<int64_t>> TileIndexOf(const HloSharding& s, int64_t device);
// Per-device shape of an array of `shape` (ceil division per tiled dim); layout kept.
Shape ShardShape(const HloSharding& s, const Shape& shape);
// Offsets of `device`'s shard within the global array (0 for untiled dims).
absl::StatusOr<std::vector<int64_t>> ShardOffsets(const HloSharding& s, const Shape& shape, int64_t device);

// Array literals cut by a sharding: the shard `device` holds (zero padded past the end), and
// the global array put back together from every device's shard (devices 0..n-1; any holder of
// a tile will do, they agree when replicated).
absl::StatusOr<Literal> ExtractShard(const Literal& global, const HloSharding& s, int64_t device);
absl::StatusOr<Literal> AssembleShards(absl::Span<const Literal> per_device, const HloSharding& s,
                                       const Shape& global_shape);

// Replica groups as explicit lists of ids: the explicit form as written, the iota form spelled
// out, and Shardy's mesh form `mesh['x'=2,'y'=4] {'x'}` (one group per combination of the axes
// not named, holding the devices that vary along the named ones).
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandDeviceList(const CollectiveDeviceList& list);

// "{devices=[2,1]0,1}" etc., XLA's printed form of a normalized sharding (for messages and tests).
std::string ShardingToString(const HloSharding& s);

}  // namespace hloc
