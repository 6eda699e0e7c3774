// top-k over a split last dimension (XLA's partitioner does the same for its TopK custom
// call): every device takes the top k of its own shard, the candidates (k per shard, with
// their global positions) are all-gathered, and the top k of those is the answer. Ties keep
// XLA's order: candidates are laid out shard by shard and each shard's in position order, so
// among equal values the lower global position still comes first.
#include "absl/strings/str_cat.h"
#include "ir/sharding_util.h"
#include "passes/spmd/partitioner_impl.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {

using O = HloOpcode;

absl::Status Partitioner::HandleTopK(SpmdBuilder& sb, const HloInstruction& inst) {
  const HloInstruction* x = inst.operand(0);
  const Shape& xs = x->shape();
  const int64_t last = xs.rank() - 1;
  const int64_t k = inst.attrs().k;
  HloSharding s = ValueOf(x).sharding;
  // Only the last dim's split is resolved here; others stay (rows are independent).
  const int64_t t = last >= 0 ? TilesAlong(s, last) : 1;
  if (t == 1 || xs.dimensions(last) % t != 0 || xs.dimensions(last) / t < k || !inst.shape().IsTuple())
    return HandleReplicated(sb, inst, t > 1);
  auto& b = sb.b();
  auto local = Get(sb, x, s);
  if (!local.ok()) return local.status();
  const Shape& ls = (*local)->shape();
  const int64_t shard = ls.dimensions(last);
  PrimitiveType it = inst.shape().tuple_shapes(1).element_type();
  // Local candidates and their global positions.
  std::vector<int64_t> kdims = ls.dimensions();
  kdims[last] = k;
  Shape cand_shape = Shape::Tuple({expanders::MakeShape(ls.element_type(), kdims), expanders::MakeShape(it, kdims)});
  auto topk = CloneLocal(sb, inst, {*local}, cand_shape);
  if (!topk.ok()) return topk.status();
  auto coords = CoordsOf(s, n());
  if (!coords.ok()) return coords.status();
  std::vector<int64_t> offsets;
  for (int64_t dev = 0; dev < n(); ++dev) offsets.push_back(coords->of_device[dev][last] * shard);
  HloInstruction* vals = b.GetTupleElement(*topk, 0);
  HloInstruction* pos = b.Add(b.GetTupleElement(*topk, 1), b.Convert(sb.TableLookup(offsets), it));
  auto groups = GroupsAlong(s, {last}, n());
  HloInstruction* all_vals = sb.AllGather(vals, last, groups);
  HloInstruction* all_pos = sb.AllGather(pos, last, groups);
  if (!b.ok()) return b.status();
  // The top k of the k*t candidates, then their global positions picked by one-hot sums
  // (the candidate index `m` of output j is where m == chosen[j]).
  auto final_topk = CloneLocal(sb, inst, {all_vals}, cand_shape);
  if (!final_topk.ok()) return final_topk.status();
  HloInstruction* chosen = b.GetTupleElement(*final_topk, 1);
  const int64_t kt = k * t;
  std::vector<int64_t> wide = kdims;
  wide.push_back(kt);
  Shape wide_s = expanders::MakeShape(it, wide);
  std::vector<int64_t> keep(kdims.size());
  for (size_t i = 0; i < keep.size(); ++i) keep[i] = static_cast<int64_t>(i);
  std::vector<int64_t> cand_dims(kdims.size());
  for (size_t i = 0; i < cand_dims.size(); ++i) cand_dims[i] = static_cast<int64_t>(i);
  cand_dims[last] = static_cast<int64_t>(kdims.size());  // the candidates run along the new dim
  HloInstruction* m = b.Iota(wide_s, static_cast<int64_t>(kdims.size()));
  HloInstruction* hit = b.Compare(m, b.Broadcast(chosen, wide_s, keep), ComparisonDirection::kEq);
  HloInstruction* picked = b.Select(hit, b.Broadcast(all_pos, wide_s, cand_dims), b.BroadcastScalar(sb.Zero(it), wide_s));
  HloInstruction* index = b.Reduce(picked, sb.Zero(it), {static_cast<int64_t>(kdims.size())}, sb.AddComputation(it));
  HloInstruction* result = b.Tuple({b.GetTupleElement(*final_topk, 0), index});
  if (result == nullptr) return b.status();
  // The rows keep the operand's other splits.
  std::vector<int64_t> src(xs.rank());
  for (int64_t d = 0; d < xs.rank(); ++d) src[d] = d == last ? -1 : d;
  auto rows = Remap(s, src, n());
  if (!rows.ok()) return rows.status();
  Set(&inst, result, UniformSharding(inst.shape(), *rows));
  return absl::OkStatus();
}

}  // namespace hloc::spmd
