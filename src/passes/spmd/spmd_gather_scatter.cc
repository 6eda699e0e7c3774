// Gather and scatter over an operand split along dimensions they index one element at a time
// (an embedding table split by rows: XLA's "trivial sliced operand dimensions"). Each device
// looks its indices up in its own rows:
//   gather:  indices clamped to the global bounds (gather's own clamping, done before it can
//            differ per shard), shifted by the shard's first row; rows another device holds are
//            zeroed and the shards' results summed with one all-reduce;
//   scatter: indices shifted the same way; an update outside the shard is skipped by scatter's
//            own out-of-bounds rule, so each device updates exactly its rows, no collective.
// Other forms run replicated.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "ir/sharding_util.h"
#include "passes/spmd/partitioner_impl.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {
namespace {

using O = HloOpcode;

int64_t IndexOf(const std::vector<int64_t>& v, int64_t x) {
  auto it = std::find(v.begin(), v.end(), x);
  return it == v.end() ? -1 : static_cast<int64_t>(it - v.begin());
}

// The operand dims `s` splits, when each is indexed by component start_map of the index vector
// one element at a time (`single`) and splits evenly; nullopt otherwise.
std::optional<std::vector<int64_t>> IndexedSplitDims(const HloSharding& s, const Shape& operand,
                                                     const std::vector<int64_t>& start_map,
                                                     const std::vector<int64_t>& single) {
  if (!IsTiled(s)) return std::nullopt;
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    int64_t t = TilesAlong(s, d);
    if (t == 1) continue;
    if (IndexOf(start_map, d) < 0 || IndexOf(single, d) < 0 || operand.dimensions(d) % t != 0) return std::nullopt;
    dims.push_back(d);
  }
  return dims;
}

// Indices with component `pos` (along index_vector_dim `ivd`; ivd == rank: the whole array)
// replaced by f(component).
HloInstruction* MapComponent(SpmdBuilder& sb, HloInstruction* idx, int64_t ivd, int64_t pos,
                             const std::function<HloInstruction*(HloInstruction*)>& f) {
  auto& b = sb.b();
  if (idx == nullptr) return nullptr;
  HloInstruction* mapped = f(idx);
  if (ivd >= idx->shape().rank()) return mapped;
  HloInstruction* iota = b.Iota(expanders::MakeShape(PrimitiveType::S32, idx->shape().dimensions()), ivd);
  HloInstruction* is_pos = b.Compare(iota, b.ScalarConstant(PrimitiveType::S32, static_cast<double>(pos)),
                                     ComparisonDirection::kEq);
  return b.Select(is_pos, mapped, idx);
}

// Component `pos` of the index vectors: the batch-shaped array of one coordinate.
HloInstruction* Component(SpmdBuilder& sb, HloInstruction* idx, int64_t ivd, int64_t pos) {
  auto& b = sb.b();
  if (idx == nullptr || ivd >= idx->shape().rank()) return idx;
  std::vector<int64_t> starts(idx->shape().rank(), 0), limits = idx->shape().dimensions();
  starts[ivd] = pos;
  limits[ivd] = pos + 1;
  HloInstruction* s = b.Slice(idx, starts, limits);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < idx->shape().rank(); ++d)
    if (d != ivd) dims.push_back(idx->shape().dimensions(d));
  return b.Reshape(s, dims);
}

struct Shift {
  int64_t dim, pos, shard;
  std::vector<int64_t> offsets;  // per device
};

std::vector<Shift> Shifts(const HloSharding& s, const Shape& operand, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& start_map, int64_t n) {
  std::vector<Shift> out;
  auto coords = CoordsOf(s, n);
  for (int64_t d : dims) {
    Shift sh{d, IndexOf(start_map, d), operand.dimensions(d) / TilesAlong(s, d), {}};
    for (int64_t dev = 0; dev < n; ++dev) sh.offsets.push_back(coords.ok() ? coords->of_device[dev][d] * sh.shard : 0);
    out.push_back(sh);
  }
  return out;
}

}  // namespace

absl::Status Partitioner::HandleGather(SpmdBuilder& sb, const HloInstruction& inst) {
  const GatherDimensionNumbers& g = *inst.attrs().gather_dimension_numbers;
  const HloInstruction* operand = inst.operand(0);
  const HloSharding s = ValueOf(operand).sharding;
  std::vector<int64_t> single;
  for (int64_t d = 0; d < operand->shape().rank(); ++d)
    if (inst.attrs().dynamic_slice_sizes[d] == 1) single.push_back(d);
  auto dims = IndexedSplitDims(s, operand->shape(), g.start_index_map, single);
  PrimitiveType t = inst.shape().element_type();
  if (!options().gather_scatter_indexed_split || !dims || dims->empty() || !g.operand_batching_dims.empty() ||
      t == PrimitiveType::PRED || IsComplex(t))
    return HandleReplicated(sb, inst, true);
  auto& b = sb.b();
  auto table = Get(sb, operand, s);
  if (!table.ok()) return table.status();
  auto idx = Get(sb, inst.operand(1), ReplicatedSharding());
  if (!idx.ok()) return idx.status();
  HloInstruction* local = *idx;
  PrimitiveType it = local->shape().element_type();
  HloInstruction* in_range = nullptr;
  for (const Shift& sh : Shifts(s, operand->shape(), *dims, g.start_index_map, n())) {
    HloInstruction* offset = b.Convert(sb.TableLookup(sh.offsets), it);
    int64_t last = operand->shape().dimensions(sh.dim) - 1;
    local = MapComponent(sb, local, g.index_vector_dim, sh.pos, [&](HloInstruction* x) {
      HloInstruction* clamped = b.Binary(O::kMinimum, b.Binary(O::kMaximum, x, b.ScalarConstant(it, 0)),
                                         b.ScalarConstant(it, static_cast<double>(last)));
      return b.Sub(clamped, offset);
    });
    HloInstruction* c = Component(sb, local, g.index_vector_dim, sh.pos);
    HloInstruction* ok = b.Binary(O::kAnd, b.Compare(c, b.ScalarConstant(it, 0), ComparisonDirection::kGe),
                                  b.Compare(c, b.ScalarConstant(it, static_cast<double>(sh.shard)),
                                            ComparisonDirection::kLt));
    in_range = in_range == nullptr ? ok : b.Binary(O::kAnd, in_range, ok);
  }
  if (!b.ok()) return b.status();
  auto gathered = CloneLocal(sb, inst, {*table, local}, inst.shape());
  if (!gathered.ok()) return gathered.status();
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < inst.shape().rank(); ++d)
    if (IndexOf(g.offset_dims, d) < 0) batch_dims.push_back(d);
  HloInstruction* mask = b.Broadcast(in_range, expanders::MakeShape(PrimitiveType::PRED, inst.shape().dimensions()),
                                     batch_dims);
  HloInstruction* zeros = b.BroadcastScalar(sb.Zero(t), inst.shape());
  HloInstruction* mine = b.Select(mask, *gathered, zeros);
  HloInstruction* sum = sb.AllReduce(mine, sb.AddComputation(t), GroupsAlong(s, *dims, n()));
  if (sum == nullptr) return b.status();
  Set(&inst, sum, ReplicatedSharding());
  return absl::OkStatus();
}

absl::Status Partitioner::HandleScatter(SpmdBuilder& sb, const HloInstruction& inst) {
  if (inst.operand_count() != 3 || !options().gather_scatter_indexed_split) return HandleReplicated(sb, inst, true);
  const ScatterDimensionNumbers& sc = *inst.attrs().scatter_dimension_numbers;
  const HloInstruction* operand = inst.operand(0);
  // The result's split when it qualifies (the operand is often a fresh zeros), else the operand's.
  std::optional<std::vector<int64_t>> dims;
  HloSharding s = ShardingOf(&inst);
  dims = IndexedSplitDims(s, operand->shape(), sc.scatter_dims_to_operand_dims, sc.inserted_window_dims);
  if (!dims || dims->empty()) {
    s = ValueOf(operand).sharding;
    dims = IndexedSplitDims(s, operand->shape(), sc.scatter_dims_to_operand_dims, sc.inserted_window_dims);
  }
  if (!dims || dims->empty() || !sc.input_batching_dims.empty()) return HandleReplicated(sb, inst, true);
  auto& b = sb.b();
  auto local_operand = Get(sb, operand, s);
  if (!local_operand.ok()) return local_operand.status();
  auto idx = Get(sb, inst.operand(1), ReplicatedSharding());
  if (!idx.ok()) return idx.status();
  auto updates = Get(sb, inst.operand(2), ReplicatedSharding());
  if (!updates.ok()) return updates.status();
  HloInstruction* local = *idx;
  PrimitiveType it = local->shape().element_type();
  for (const Shift& sh : Shifts(s, operand->shape(), *dims, sc.scatter_dims_to_operand_dims, n())) {
    HloInstruction* offset = b.Convert(sb.TableLookup(sh.offsets), it);
    local = MapComponent(sb, local, sc.index_vector_dim, sh.pos, [&](HloInstruction* x) { return b.Sub(x, offset); });
  }
  if (!b.ok()) return b.status();
  auto clone = CloneLocal(sb, inst, {*local_operand, local, *updates}, ShardShape(s, inst.shape()));
  if (!clone.ok()) return clone.status();
  Set(&inst, *clone, s);
  return absl::OkStatus();
}

}  // namespace hloc::spmd
