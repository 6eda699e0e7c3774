#include "passes/spmd/tile_coords.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "ir/sharding_util.h"

namespace hloc::spmd {

absl::StatusOr<TileCoords> CoordsOf(const HloSharding& s, int64_t num_devices) {
  TileCoords c;
  int64_t rank = DataRank(s);
  c.tiles.assign(s.tile_dims.begin(), s.tile_dims.begin() + rank);
  c.of_device.assign(num_devices, std::vector<int64_t>(rank, 0));
  if (!IsTiled(s)) return c;
  std::vector<bool> seen(num_devices, false);
  for (int64_t dev = 0; dev < num_devices; ++dev) {
    auto idx = TileIndexOf(s, dev);
    if (!idx.ok()) continue;
    c.of_device[dev] = *idx;
    seen[dev] = true;
  }
  for (int64_t dev = 0; dev < num_devices; ++dev)
    if (!seen[dev])
      return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingToString(s), " leaves device ", dev,
                                                     " of ", num_devices, " without a tile"));
  return c;
}

absl::StatusOr<HloSharding> ShardingFromCoords(const TileCoords& coords) {
  int64_t n = static_cast<int64_t>(coords.of_device.size());
  int64_t tiles = 1;
  for (int64_t t : coords.tiles) tiles *= t;
  if (tiles <= 0 || n % tiles != 0)
    return absl::InvalidArgumentError(absl::StrCat(tiles, " tiles do not divide ", n, " devices"));
  // Devices by tile (row-major), ascending ids within a tile.
  std::map<std::vector<int64_t>, std::vector<int64_t>> by_tile;
  for (int64_t dev = 0; dev < n; ++dev) by_tile[coords.of_device[dev]].push_back(dev);
  int64_t per_tile = n / tiles;
  if (static_cast<int64_t>(by_tile.size()) != tiles)
    return absl::InvalidArgumentError("devices do not cover every tile");
  std::vector<int64_t> devices;
  for (const auto& [tile, devs] : by_tile) {
    if (static_cast<int64_t>(devs.size()) != per_tile)
      return absl::InvalidArgumentError("tiles are held by different numbers of devices");
    devices.insert(devices.end(), devs.begin(), devs.end());
  }
  return TiledSharding(coords.tiles, std::move(devices), per_tile);
}

absl::StatusOr<HloSharding> Remap(const HloSharding& s, const std::vector<int64_t>& source_dim, int64_t num_devices) {
  auto c = CoordsOf(s, num_devices);
  if (!c.ok()) return c.status();
  TileCoords out;
  for (int64_t src : source_dim) out.tiles.push_back(src >= 0 && src < (int64_t)c->tiles.size() ? c->tiles[src] : 1);
  out.of_device.resize(num_devices);
  for (int64_t dev = 0; dev < num_devices; ++dev)
    for (int64_t src : source_dim)
      out.of_device[dev].push_back(src >= 0 && src < (int64_t)c->tiles.size() ? c->of_device[dev][src] : 0);
  return ShardingFromCoords(out);
}

std::vector<std::vector<int64_t>> GroupsAlong(const HloSharding& s, const std::vector<int64_t>& dims,
                                              int64_t num_devices) {
  auto c = CoordsOf(s, num_devices);
  // Devices keyed by their coordinates off `dims`, then by their coordinates along `dims`.
  std::map<std::vector<int64_t>, std::map<std::vector<int64_t>, std::vector<int64_t>>> groups;
  for (int64_t dev = 0; dev < num_devices; ++dev) {
    std::vector<int64_t> key = c.ok() ? c->of_device[dev] : std::vector<int64_t>();
    std::vector<int64_t> along;
    for (int64_t d : dims) {
      if (d < (int64_t)key.size()) {
        along.push_back(key[d]);
        key[d] = -1;
      }
    }
    groups[key][along].push_back(dev);
  }
  // A group holds one device per coordinate along `dims`: replicas of a tile go to different
  // groups (the r-th holder of each tile forms group r), so no tile is counted twice.
  std::vector<std::vector<int64_t>> out;
  for (auto& [key, by_tile] : groups) {
    size_t replicas = by_tile.begin()->second.size();
    for (size_t r = 0; r < replicas; ++r) {
      std::vector<int64_t> g;
      for (auto& [along, devs] : by_tile)
        if (r < devs.size()) g.push_back(devs[r]);
      out.push_back(std::move(g));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<HloSharding> CombineSources(const std::vector<std::pair<const HloSharding*, int64_t>>& sources,
                                          int64_t n) {
  TileCoords out;
  out.of_device.assign(n, {});
  for (const auto& [s, dim] : sources) {
    if (s == nullptr || dim < 0 || !IsTiled(*s) || dim >= DataRank(*s)) {
      out.tiles.push_back(1);
      for (auto& c : out.of_device) c.push_back(0);
      continue;
    }
    auto c = CoordsOf(*s, n);
    if (!c.ok()) return std::nullopt;
    out.tiles.push_back(c->tiles[dim]);
    for (int64_t dev = 0; dev < n; ++dev) out.of_device[dev].push_back(c->of_device[dev][dim]);
  }
  auto r = ShardingFromCoords(out);
  if (!r.ok()) return std::nullopt;
  return *r;
}

int64_t LeafCount(const Shape& s) {
  if (!s.IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& e : s.tuple_shapes()) n += LeafCount(e);
  return n;
}

HloSharding UniformSharding(const Shape& shape, const HloSharding& leaf) {
  if (!shape.IsTuple()) return leaf;
  HloSharding t;
  t.kind = HloSharding::Kind::kTuple;
  t.tuple_elements.assign(LeafCount(shape), leaf);
  return t;
}

HloSharding ExpandSharding(const HloSharding& s, const Shape& shape) {
  if (!shape.IsTuple() || s.kind == HloSharding::Kind::kTuple) return s;
  return UniformSharding(shape, s);
}

int64_t TileCount(const HloSharding& s) {
  int64_t t = 1;
  for (int64_t d = 0; d < DataRank(s); ++d) t *= s.tile_dims[d];
  return t;
}

bool Refines(const HloSharding& b, const HloSharding& a, int64_t num_devices) {
  if (!IsTiled(a)) return true;
  if (DataRank(a) != DataRank(b) && IsTiled(b)) return false;
  auto ca = CoordsOf(a, num_devices);
  auto cb = CoordsOf(b, num_devices);
  if (!ca.ok() || !cb.ok()) return false;
  for (int64_t d = 0; d < (int64_t)ca->tiles.size(); ++d) {
    if (ca->tiles[d] == 1) continue;
    if (d >= (int64_t)cb->tiles.size() || cb->tiles[d] != ca->tiles[d]) return false;
    for (int64_t dev = 0; dev < num_devices; ++dev)
      if (ca->of_device[dev][d] != cb->of_device[dev][d]) return false;
  }
  return true;
}

}  // namespace hloc::spmd
