#include "passes/spmd/reshard.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "ir/sharding_util.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {
namespace {

enum class Step { kNone, kPermute, kAllToAll, kGather };

struct Plan {
  Step step = Step::kNone;
  std::vector<std::pair<int64_t, int64_t>> pairs;  // kPermute
  int64_t from_dim = -1, to_dim = -1;              // kAllToAll: the split moves from_dim -> to_dim
  std::vector<int64_t> gather_dims;                // kGather, then a dynamic-slice
  bool full_rematerialization = false;
};

int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool SameReplication(const HloSharding& a, const HloSharding& b) { return ReplicationFactor(a) == ReplicationFactor(b); }

// Same tiles per dim, every device holding the same tile.
bool SameTiles(const TileCoords& a, const TileCoords& b) { return a.tiles == b.tiles && a.of_device == b.of_device; }

std::optional<Plan> TryPermute(const TileCoords& a, const TileCoords& b, const HloSharding& from,
                               const HloSharding& to) {
  if (a.tiles != b.tiles || !SameReplication(from, to) || !IsTiled(from)) return std::nullopt;
  std::map<std::vector<int64_t>, std::vector<int64_t>> holders_a, holders_b;
  int64_t n = static_cast<int64_t>(a.of_device.size());
  for (int64_t dev = 0; dev < n; ++dev) {
    holders_a[a.of_device[dev]].push_back(dev);
    holders_b[b.of_device[dev]].push_back(dev);
  }
  Plan p;
  p.step = Step::kPermute;
  for (const auto& [tile, srcs] : holders_a) {
    const std::vector<int64_t>& dsts = holders_b[tile];
    if (dsts.size() != srcs.size()) return std::nullopt;
    // Holders that keep the tile send it to themselves (a device no pair targets would receive
    // zeros); the others are paired in order.
    for (int64_t x : srcs)
      if (std::find(dsts.begin(), dsts.end(), x) != dsts.end()) p.pairs.push_back({x, x});
    std::vector<int64_t> s, d;
    for (int64_t x : srcs)
      if (std::find(dsts.begin(), dsts.end(), x) == dsts.end()) s.push_back(x);
    for (int64_t x : dsts)
      if (std::find(srcs.begin(), srcs.end(), x) == srcs.end()) d.push_back(x);
    for (size_t i = 0; i < s.size(); ++i) p.pairs.push_back({s[i], d[i]});
  }
  std::sort(p.pairs.begin(), p.pairs.end());
  return p;
}

std::optional<Plan> TryAllToAll(const TileCoords& a, const TileCoords& b, const HloSharding& from,
                                const HloSharding& to, const Shape& shape) {
  if (!SameReplication(from, to) || a.tiles.size() != b.tiles.size()) return std::nullopt;
  int64_t src = -1, dst = -1;
  for (size_t d = 0; d < a.tiles.size(); ++d) {
    if (a.tiles[d] == b.tiles[d]) continue;
    if (a.tiles[d] > 1 && b.tiles[d] == 1 && src < 0) src = d;
    else if (a.tiles[d] == 1 && b.tiles[d] > 1 && dst < 0) dst = d;
    else return std::nullopt;
  }
  if (src < 0 || dst < 0 || a.tiles[src] != b.tiles[dst]) return std::nullopt;
  int64_t k = a.tiles[src];
  if (shape.dimensions(src) % k != 0 || shape.dimensions(dst) % k != 0) return std::nullopt;
  for (size_t dev = 0; dev < a.of_device.size(); ++dev) {
    if (a.of_device[dev][src] != b.of_device[dev][dst]) return std::nullopt;
    for (size_t d = 0; d < a.tiles.size(); ++d)
      if (d != (size_t)src && d != (size_t)dst && a.of_device[dev][d] != b.of_device[dev][d]) return std::nullopt;
  }
  Plan p;
  p.step = Step::kAllToAll;
  p.from_dim = src;
  p.to_dim = dst;
  return p;
}

Plan MakePlan(const Shape& shape, const HloSharding& from, const HloSharding& to, int64_t n,
              const ReshardStrategies& strategies) {
  Plan p;
  if (from == to || !IsTiled(from)) return p;  // replicated -> anything: a local slice
  auto a = CoordsOf(from, n);
  auto b = CoordsOf(to, n);
  if (!a.ok() || !b.ok()) return p;
  if (IsTiled(to) && SameTiles(*a, *b)) return p;
  if (Refines(to, from, n)) return p;
  if (IsTiled(to) && strategies.collective_permute)
    if (auto perm = TryPermute(*a, *b, from, to)) return *perm;
  if (IsTiled(to) && strategies.all_to_all)
    if (auto a2a = TryAllToAll(*a, *b, from, to, shape)) return *a2a;
  p.step = Step::kGather;
  int64_t split = 0;
  for (size_t d = 0; d < a->tiles.size(); ++d) {
    if (a->tiles[d] == 1) continue;
    ++split;
    bool keep = d < b->tiles.size() && b->tiles[d] == a->tiles[d];
    for (int64_t dev = 0; keep && dev < n; ++dev) keep = a->of_device[dev][d] == b->of_device[dev][d];
    if (!keep) p.gather_dims.push_back(d);
  }
  // Everything gathered only to be split again over the same devices.
  p.full_rematerialization = IsTiled(to) && static_cast<int64_t>(p.gather_dims.size()) == split;
  return p;
}

double LocalBytes(const Shape& shape, const HloSharding& s) { return static_cast<double>(ShardShape(s, shape).byte_size()); }

}  // namespace

double ReshardCost(const Shape& shape, const HloSharding& from, const HloSharding& to, int64_t n,
                   const ReshardStrategies& strategies) {
  Plan p = MakePlan(shape, from, to, n, strategies);
  switch (p.step) {
    case Step::kNone: return 0;
    case Step::kPermute: {
      bool moves = false;
      for (const auto& [src, dst] : p.pairs) moves = moves || src != dst;
      return moves ? LocalBytes(shape, from) : 0;
    }
    case Step::kAllToAll: {
      int64_t k = TilesAlong(from, p.from_dim);
      return LocalBytes(shape, from) * (k - 1) / k;
    }
    case Step::kGather: {
      double bytes = LocalBytes(shape, from), sent = 0;
      for (int64_t d : p.gather_dims) {
        int64_t k = TilesAlong(from, d);
        sent += bytes * (k - 1);
        bytes *= k;
      }
      return sent;
    }
  }
  return 0;
}

namespace {

// all-to-all moving the split of dim `src` (k tiles) to dim `dst`, as XLA does it: split dst
// into [k, dst/k], exchange along the k dim, move the received blocks in front of src, merge.
HloInstruction* EmitAllToAll(SpmdBuilder& sb, HloInstruction* x, int64_t src, int64_t dst, int64_t k,
                             const std::vector<std::vector<int64_t>>& groups) {
  auto& b = sb.b();
  std::vector<int64_t> local = x->shape().dimensions();
  std::vector<int64_t> split;
  for (int64_t i = 0; i < (int64_t)local.size(); ++i) {
    if (i == dst) {
      split.push_back(k);
      split.push_back(local[i] / k);
    } else {
      split.push_back(local[i]);
    }
  }
  HloInstruction* y = b.Reshape(x, split);
  y = sb.AllToAll(y, dst, groups);
  int64_t src_pos = src < dst ? src : src + 1;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < (int64_t)split.size(); ++i) {
    if (i == dst) continue;
    if (i == src_pos) perm.push_back(dst);
    perm.push_back(i);
  }
  y = b.Transpose(y, perm);
  std::vector<int64_t> final_dims = local;
  final_dims[src] = local[src] * k;
  final_dims[dst] = local[dst] / k;
  return b.Reshape(y, final_dims);
}

}  // namespace

absl::StatusOr<ReshardResult> Reshard(SpmdBuilder& sb, HloInstruction* x, const Shape& shape, const HloSharding& from,
                                      const HloSharding& to, const ReshardStrategies& strategies) {
  const int64_t n = sb.num_devices();
  ReshardResult r;
  r.value = x;
  if (IsManual(from) || IsManual(to)) {
    if (IsManual(from) && IsManual(to)) return r;
    return absl::UnimplementedError(absl::StrCat("resharding between manual and ", ShardingToString(IsManual(from) ? to : from),
                                                 " outside a shard_map region"));
  }
  Plan p = MakePlan(shape, from, to, n, strategies);
  r.full_rematerialization = p.full_rematerialization;
  auto& b = sb.b();
  HloSharding current = from;
  switch (p.step) {
    case Step::kPermute:
      for (const auto& [src, dst] : p.pairs)
        if (src != dst) {
          r.value = sb.CollectivePermute(x, p.pairs);
          break;
        }
      return r;
    case Step::kAllToAll: {
      int64_t k = TilesAlong(from, p.from_dim);
      r.value = EmitAllToAll(sb, x, p.from_dim, p.to_dim, k, GroupsAlong(from, {p.from_dim}, n));
      return r;
    }
    case Step::kGather:
      for (int64_t d : p.gather_dims) {
        r.value = sb.AllGather(r.value, d, GroupsAlong(current, {d}, n));
        if (r.value != nullptr && r.value->shape().dimensions(d) != shape.dimensions(d)) {
          std::vector<int64_t> starts(shape.rank(), 0), limits = r.value->shape().dimensions();
          limits[d] = shape.dimensions(d);
          r.value = b.Slice(r.value, starts, limits);
        }
        std::vector<int64_t> keep(shape.rank());
        std::iota(keep.begin(), keep.end(), 0);
        keep[d] = -1;
        auto next = Remap(current, keep, n);
        if (!next.ok()) return next.status();
        current = *next;
      }
      break;
    case Step::kNone: break;
  }
  if (!b.ok()) return b.status();
  // A local dynamic-slice takes `to`'s tile out of what this device holds now.
  if (!IsTiled(to)) return r;
  auto cur = CoordsOf(current, n);
  auto tgt = CoordsOf(to, n);
  if (!cur.ok()) return cur.status();
  if (!tgt.ok()) return tgt.status();
  Shape target_local = ShardShape(to, shape);
  std::vector<HloInstruction*> starts;
  bool any = false;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    int64_t tiles_now = d < (int64_t)cur->tiles.size() ? cur->tiles[d] : 1;
    int64_t tiles_to = tgt->tiles[d];
    if (tiles_to == 1 || tiles_now == tiles_to) {
      starts.push_back(sb.TableLookup({0}));
      continue;
    }
    if (tiles_now != 1) return absl::InternalError("reshard: a dimension is still split differently");
    any = true;
    int64_t chunk = Ceil(shape.dimensions(d), tiles_to);
    r.value = sb.PadHigh(r.value, d, chunk * tiles_to);
    std::vector<int64_t> table(n);
    for (int64_t dev = 0; dev < n; ++dev) table[dev] = tgt->of_device[dev][d] * chunk;
    starts.push_back(sb.TableLookup(table));
  }
  if (any) r.value = sb.DynamicSlice(r.value, starts, target_local.dimensions());
  if (!b.ok()) return b.status();
  return r;
}

}  // namespace hloc::spmd
