// Partitioning of the ops that combine elements across a dimension: dot (XLA's
// dot_handler.cc: choose the iteration-space sharding, all-reduce partial sums over split
// contracting dims), reduce (partial reduce, then all-reduce with the reducer), convolution
// (batch, output-feature and spatial splits; spatial ones with a halo).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "ir/sharding_util.h"
#include "passes/pass_util.h"
#include "passes/spmd/partitioner_impl.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {
namespace {

using O = HloOpcode;

int64_t Ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The most negative value of a signed integer type.
int64_t MinInt(PrimitiveType t) {
  int bits = BitWidth(t);
  return bits >= 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
}

// One dimension of a dot's iteration space: where it appears in lhs, rhs and the result.
struct IterDim {
  int64_t lhs = -1, rhs = -1, out = -1;
  int64_t size = 1;
  bool contracting() const { return out < 0; }
};

std::vector<IterDim> DotIterationSpace(const HloInstruction& dot) {
  const DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  const Shape& l = dot.operand(0)->shape();
  const Shape& r = dot.operand(1)->shape();
  std::vector<IterDim> it;
  int64_t out = 0;
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i)
    it.push_back({dn.lhs_batch_dimensions[i], dn.rhs_batch_dimensions[i], out++, l.dimensions(dn.lhs_batch_dimensions[i])});
  auto is_in = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  for (int64_t d = 0; d < l.rank(); ++d)
    if (!is_in(dn.lhs_batch_dimensions, d) && !is_in(dn.lhs_contracting_dimensions, d))
      it.push_back({d, -1, out++, l.dimensions(d)});
  for (int64_t d = 0; d < r.rank(); ++d)
    if (!is_in(dn.rhs_batch_dimensions, d) && !is_in(dn.rhs_contracting_dimensions, d))
      it.push_back({-1, d, out++, r.dimensions(d)});
  for (size_t i = 0; i < dn.lhs_contracting_dimensions.size(); ++i)
    it.push_back({dn.lhs_contracting_dimensions[i], dn.rhs_contracting_dimensions[i], -1,
                  l.dimensions(dn.lhs_contracting_dimensions[i])});
  return it;
}

enum Source { kLhs, kRhs, kOut, kNone };

// For each iteration dim, its tiles from the first source in `order` that splits it.
std::optional<HloSharding> Candidate(const std::vector<IterDim>& it, const std::vector<std::vector<Source>>& order,
                                     const HloSharding* ls, const HloSharding* rs, const HloSharding* os, int64_t n) {
  std::vector<std::pair<const HloSharding*, int64_t>> src;
  for (size_t i = 0; i < it.size(); ++i) {
    std::pair<const HloSharding*, int64_t> pick = {nullptr, -1};
    for (Source s : order[i]) {
      const HloSharding* sh = s == kLhs ? ls : s == kRhs ? rs : s == kOut ? os : nullptr;
      int64_t dim = s == kLhs ? it[i].lhs : s == kRhs ? it[i].rhs : s == kOut ? it[i].out : -1;
      if (sh != nullptr && dim >= 0 && TilesAlong(*sh, dim) > 1) {
        pick = {sh, dim};
        break;
      }
    }
    src.push_back(pick);
  }
  auto c = CombineSources(src, n);
  if (!c) return std::nullopt;
  // Contracting dims must split evenly: padding would enter the sums.
  for (size_t i = 0; i < it.size(); ++i)
    if (it[i].contracting() && it[i].size % TilesAlong(*c, i) != 0) return std::nullopt;
  return c;
}

// The sharding of one operand (or the result) of the iteration space sharding `space`.
HloSharding Project(const HloSharding& space, const std::vector<IterDim>& it, int64_t rank, int which, int64_t n) {
  std::vector<int64_t> src(rank, -1);
  for (size_t i = 0; i < it.size(); ++i) {
    int64_t d = which == 0 ? it[i].lhs : which == 1 ? it[i].rhs : it[i].out;
    if (d >= 0) src[d] = static_cast<int64_t>(i);
  }
  auto r = Remap(space, src, n);
  return r.ok() ? *r : ReplicatedSharding();
}

double AllReduceBytes(const Shape& local, int64_t k) {
  return k <= 1 ? 0 : 2.0 * static_cast<double>(local.byte_size()) * (k - 1) / k;
}

// XLA's reduction identities: the reducer's root combines its two parameters with one of
// these ops and the init value is its identity, so per-shard partial results can be combined.
bool ReducerWithIdentity(const HloInstruction& reduce) {
  if (reduce.operand_count() != 2) return false;
  const HloInstruction* init = reduce.operand(1);
  if (init->opcode() != O::kConstant || !init->attrs().literal) return false;
  const HloComputation* c = reduce.to_apply();
  const HloInstruction* root = c->root_instruction();
  if (root->operand_count() != 2 || root->operand(0)->opcode() != O::kParameter ||
      root->operand(1)->opcode() != O::kParameter || root->operand(0) == root->operand(1))
    return false;
  PrimitiveType t = init->shape().element_type();
  if (!IsFloatingPoint(t) && !IsIntegral(t) && t != PrimitiveType::PRED) return false;
  double v = init->attrs().literal->GetDouble(0);
  switch (root->opcode()) {
    case O::kAdd: case O::kOr: case O::kXor: return v == 0;
    case O::kMultiply: case O::kAnd: return v == 1;
    // Integer max/min: only the type's extreme is an identity; floats need -inf / +inf.
    case O::kMaximum:
      if (IsFloatingPoint(t)) return std::isinf(v) && v < 0;
      return IsUnsignedIntegral(t) ? v == 0 : init->attrs().literal->GetInt(0) == MinInt(t);
    case O::kMinimum:
      if (IsFloatingPoint(t)) return std::isinf(v) && v > 0;
      return false;
    default: return false;
  }
}

}  // namespace

absl::Status Partitioner::HandleDot(SpmdBuilder& b, const HloInstruction& inst) {
  const HloInstruction* lhs = inst.operand(0);
  const HloInstruction* rhs = inst.operand(1);
  std::vector<IterDim> it = DotIterationSpace(inst);
  HloSharding ls = ValueOf(lhs).sharding, rs = ValueOf(rhs).sharding, target = ShardingOf(&inst);
  // Candidate iteration-space shardings, each dim taking its split from the listed sources.
  std::vector<std::vector<std::vector<Source>>> orders;
  auto uniform = [&](std::vector<Source> s) { return std::vector<std::vector<Source>>(it.size(), s); };
  if (options().dot_from_output) {
    orders.push_back(uniform({kOut}));
    orders.push_back(uniform({kOut, kLhs}));
    orders.push_back(uniform({kOut, kRhs}));
  }
  if (options().dot_from_operands) {
    orders.push_back(uniform({kLhs}));
    orders.push_back(uniform({kRhs}));
  }
  if (options().dot_combine_operands) {
    orders.push_back(uniform({kLhs, kRhs}));
    orders.push_back(uniform({kRhs, kLhs}));
    orders.push_back(uniform({kLhs, kRhs, kOut}));
  }
  orders.push_back(uniform({kNone}));
  struct Choice {
    HloSharding space, l, r, out;
    double cost = 0;
    int64_t tiles = 1;
  };
  std::optional<Choice> best;
  for (const auto& order : orders) {
    auto space = Candidate(it, order, &ls, &rs, &target, n());
    if (!space) continue;
    Choice c;
    c.space = *space;
    c.l = Project(*space, it, lhs->shape().rank(), 0, n());
    c.r = Project(*space, it, rhs->shape().rank(), 1, n());
    c.out = Project(*space, it, inst.shape().rank(), 2, n());
    int64_t k = 1;
    for (size_t i = 0; i < it.size(); ++i)
      if (it[i].contracting()) k *= TilesAlong(*space, i);
    c.tiles = TileCount(*space);
    c.cost = ReshardCost(lhs->shape(), ls, c.l, n(), options().reshard) +
             ReshardCost(rhs->shape(), rs, c.r, n(), options().reshard) +
             AllReduceBytes(ShardShape(c.out, inst.shape()), k) +
             ReshardCost(inst.shape(), c.out, target, n(), options().reshard);
    // Cheapest in bytes moved, then the most split (least work per device).
    if (!best || c.cost < best->cost - 1e-9 || (c.cost <= best->cost + 1e-9 && c.tiles > best->tiles)) best = c;
  }
  if (!best) return HandleReplicated(b, inst, true);
  auto l = Get(b, lhs, best->l);
  if (!l.ok()) return l.status();
  auto r = Get(b, rhs, best->r);
  if (!r.ok()) return r.status();
  auto local = CloneLocal(b, inst, {*l, *r}, ShardShape(best->out, inst.shape()));
  if (!local.ok()) return local.status();
  std::vector<int64_t> contracting;
  for (size_t i = 0; i < it.size(); ++i)
    if (it[i].contracting() && TilesAlong(best->space, i) > 1) contracting.push_back(static_cast<int64_t>(i));
  HloInstruction* result = *local;
  if (!contracting.empty()) {
    result = b.AllReduce(result, b.AddComputation(inst.shape().element_type()),
                         GroupsAlong(best->space, contracting, n()));
    if (result == nullptr) return b.b().status();
  }
  Set(&inst, result, best->out);
  return absl::OkStatus();
}

absl::Status Partitioner::HandleReduce(SpmdBuilder& b, const HloInstruction& inst) {
  const HloInstruction* op = inst.operand(0);
  const auto& dims = inst.attrs().dimensions;
  int64_t rank = op->shape().rank();
  bool single = inst.operand_count() == 2 && !inst.shape().IsTuple();
  HloSharding target = ShardingOf(&inst);
  // Candidate operand shardings: what the operand has, and what the result wants of it.
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
  std::vector<HloSharding> candidates = {ValueOf(op).sharding};
  if (!inst.shape().IsTuple()) {
    std::vector<int64_t> src(rank, -1);
    for (size_t i = 0; i < kept.size(); ++i) src[kept[i]] = static_cast<int64_t>(i);
    if (auto s = Remap(target, src, n()); s.ok()) candidates.push_back(*s);
  }
  struct Choice {
    HloSharding in, out;
    std::vector<int64_t> reduced_split;
    double cost = 0;
  };
  std::optional<Choice> best;
  for (HloSharding in : candidates) {
    if (in.kind == HloSharding::Kind::kTuple) in = in.tuple_elements.at(0);
    Choice c;
    // Reduced dims stay split only where partial results combine exactly.
    std::vector<int64_t> unsplit;
    for (int64_t d : dims) {
      int64_t t = TilesAlong(in, d);
      if (t == 1) continue;
      if (single && ReducerWithIdentity(inst) && op->shape().dimensions(d) % t == 0) c.reduced_split.push_back(d);
      else unsplit.push_back(d);
    }
    if (!unsplit.empty()) {
      std::vector<int64_t> src(rank);
      std::iota(src.begin(), src.end(), 0);
      for (int64_t d : unsplit) src[d] = -1;
      auto u = Remap(in, src, n());
      if (!u.ok()) continue;
      in = *u;
      c.reduced_split.clear();
      for (int64_t d : dims)
        if (TilesAlong(in, d) > 1) c.reduced_split.push_back(d);
    }
    c.in = in;
    auto out = Remap(in, kept, n());
    if (!out.ok()) continue;
    c.out = *out;
    HloSharding out_leaf = target.kind == HloSharding::Kind::kTuple ? target.tuple_elements.at(0) : target;
    c.cost = ReshardCost(op->shape(), ValueOf(op).sharding.kind == HloSharding::Kind::kTuple
                                          ? ReplicatedSharding() : ValueOf(op).sharding, in, n(), options().reshard);
    if (!inst.shape().IsTuple()) c.cost += ReshardCost(inst.shape(), c.out, out_leaf, n(), options().reshard);
    if (!best || c.cost < best->cost) best = c;
  }
  if (!best) return HandleReplicated(b, inst, true);
  std::vector<HloInstruction*> ops;
  int64_t inputs = inst.operand_count() / 2;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const HloInstruction* x = inst.operand(i);
    auto v = Get(b, x, i < inputs ? best->in : ReplicatedSharding());
    if (!v.ok()) return v.status();
    ops.push_back(*v);
  }
  HloSharding out = UniformSharding(inst.shape(), best->out);
  auto local = CloneLocal(b, inst, ops, LocalShape(inst.shape(), out));
  if (!local.ok()) return local.status();
  HloInstruction* result = *local;
  if (!best->reduced_split.empty()) {
    result = b.AllReduce(result, inst.to_apply(), GroupsAlong(best->in, best->reduced_split, n()));
    if (result == nullptr) return b.b().status();
  }
  Set(&inst, result, out);
  return absl::OkStatus();
}

// --- convolution --------------------------------------------------------------------------------

namespace {

struct ConvPlan {
  HloSharding out;        // the result's sharding (batch, spatial, output feature)
  HloSharding lhs, rhs;   // what the operands are resharded to before any halo work
};

}  // namespace

absl::Status Partitioner::HandleConvolution(SpmdBuilder& b, const HloInstruction& inst) {
  const ConvolutionDimensionNumbers& c = *inst.attrs().convolution_dimension_numbers;
  const Window& window = *inst.attrs().window;
  const HloInstruction* lhs = inst.operand(0);
  const HloInstruction* rhs = inst.operand(1);
  const bool grouped = inst.attrs().feature_group_count != 1 || inst.attrs().batch_group_count != 1;
  HloSharding ls = ValueOf(lhs).sharding, ks = ValueOf(rhs).sharding, target = ShardingOf(&inst);
  const int64_t rank = inst.shape().rank();
  // Output dims: batch and spatial split as the input (or the target), output feature as the
  // kernel (or the target). Spatial splits need base dilation 1.
  auto plan_from = [&](bool from_target) -> std::optional<ConvPlan> {
    std::vector<std::pair<const HloSharding*, int64_t>> src(rank, {nullptr, -1});
    if (inst.attrs().batch_group_count == 1)
      src[c.output_batch_dimension] = from_target ? std::make_pair(&target, c.output_batch_dimension)
                                                  : std::make_pair(&ls, c.input_batch_dimension);
    for (size_t i = 0; i < c.output_spatial_dimensions.size(); ++i) {
      if (window.dimensions[i].base_dilation != 1) continue;
      int64_t od = c.output_spatial_dimensions[i];
      src[od] = from_target ? std::make_pair(&target, od) : std::make_pair(&ls, c.input_spatial_dimensions[i]);
    }
    if (!grouped)
      src[c.output_feature_dimension] = from_target ? std::make_pair(&target, c.output_feature_dimension)
                                                    : std::make_pair(&ks, c.kernel_output_feature_dimension);
    auto out = CombineSources(src, n());
    if (!out) return std::nullopt;
    ConvPlan p;
    p.out = *out;
    std::vector<int64_t> lsrc(lhs->shape().rank(), -1), ksrc(rhs->shape().rank(), -1);
    lsrc[c.input_batch_dimension] = c.output_batch_dimension;
    for (size_t i = 0; i < c.input_spatial_dimensions.size(); ++i)
      lsrc[c.input_spatial_dimensions[i]] = c.output_spatial_dimensions[i];
    ksrc[c.kernel_output_feature_dimension] = c.output_feature_dimension;
    auto l = Remap(p.out, lsrc, n());
    auto k = Remap(p.out, ksrc, n());
    if (!l.ok() || !k.ok()) return std::nullopt;
    p.lhs = *l;
    p.rhs = *k;
    return p;
  };
  std::optional<ConvPlan> plan = IsTiled(target) ? plan_from(true) : std::nullopt;
  if (!plan) plan = plan_from(false);
  if (!plan) return HandleReplicated(b, inst, true);

  // Split spatial dims: with a halo exchange where each device needs only its neighbours'
  // edge rows, otherwise gathered whole and cut to this device's input window.
  HloSharding lhs_sharding = plan->lhs;
  Window local_window = window;
  std::vector<int64_t> spatial_split;
  for (size_t i = 0; i < c.input_spatial_dimensions.size(); ++i)
    if (TilesAlong(plan->lhs, c.input_spatial_dimensions[i]) > 1) spatial_split.push_back(static_cast<int64_t>(i));
  if (!spatial_split.empty()) {
    std::vector<int64_t> src(lhs->shape().rank());
    std::iota(src.begin(), src.end(), 0);
    bool all_halo = options().conv_halo_exchange;
    for (int64_t i : spatial_split) {
      const WindowDimension& w = window.dimensions[i];
      int64_t id = c.input_spatial_dimensions[i];
      int64_t t = TilesAlong(plan->lhs, id), size = lhs->shape().dimensions(id);
      int64_t chunk = size / t;
      bool halo = w.stride == 1 && w.window_dilation == 1 && !w.window_reversal && size % t == 0 &&
                  w.padding_low >= 0 && w.padding_high >= 0 && w.padding_low <= chunk && w.padding_high <= chunk &&
                  w.padding_low + w.padding_high == w.size - 1;
      all_halo &= halo;
    }
    if (!all_halo)
      for (int64_t i : spatial_split) src[c.input_spatial_dimensions[i]] = -1;
    if (!all_halo) {
      auto g = Remap(plan->lhs, src, n());
      if (!g.ok()) return HandleReplicated(b, inst, true);
      lhs_sharding = *g;
    }
    auto x = Get(b, lhs, lhs_sharding);
    if (!x.ok()) return x.status();
    HloInstruction* v = *x;
    auto coords = CoordsOf(plan->lhs, n());
    if (!coords.ok()) return coords.status();
    for (int64_t i : spatial_split) {
      const WindowDimension& w = window.dimensions[i];
      int64_t id = c.input_spatial_dimensions[i];
      int64_t t = TilesAlong(plan->lhs, id);
      if (all_halo) {
        // Left halo: the previous device's last padding_low rows; right: the next one's first
        // padding_high rows; devices at the edges receive zeros (the convolution's padding).
        int64_t chunk = v->shape().dimensions(id);
        // Neighbours along the split dim among devices holding the same tiles elsewhere (each
        // group one replica's row of tiles, in coordinate order).
        std::vector<std::pair<int64_t, int64_t>> to_next, to_prev;
        for (const std::vector<int64_t>& g : GroupsAlong(plan->lhs, {id}, n()))
          for (size_t j = 0; j + 1 < g.size(); ++j) {
            to_next.push_back({g[j], g[j + 1]});
            to_prev.push_back({g[j + 1], g[j]});
          }
        std::vector<HloInstruction*> parts;
        auto slice = [&](int64_t start, int64_t limit) {
          std::vector<int64_t> s(v->shape().rank(), 0), l = v->shape().dimensions();
          s[id] = start;
          l[id] = limit;
          return b.b().Slice(v, s, l);
        };
        if (w.padding_low > 0) parts.push_back(b.CollectivePermute(slice(chunk - w.padding_low, chunk), to_next));
        parts.push_back(v);
        if (w.padding_high > 0) parts.push_back(b.CollectivePermute(slice(0, w.padding_high), to_prev));
        v = parts.size() == 1 ? v : b.b().Concatenate(parts, id);
        (void)t;
      } else {
        // This device's output rows [k*c, (k+1)*c) read padded input rows from k*c*stride.
        int64_t out_size = inst.shape().dimensions(c.output_spatial_dimensions[i]);
        int64_t oc = Ceil(out_size, t);
        int64_t span = (oc - 1) * w.stride + (w.size - 1) * w.window_dilation + 1;
        int64_t padded = v->shape().dimensions(id) + w.padding_low + w.padding_high;
        int64_t needed = (t * oc - 1) * w.stride + (w.size - 1) * w.window_dilation + 1;
        v = b.PadDim(v, id, w.padding_low, w.padding_high + std::max<int64_t>(0, needed - padded));
        std::vector<HloInstruction*> starts;
        std::vector<int64_t> sizes = v ? v->shape().dimensions() : std::vector<int64_t>();
        for (int64_t d = 0; d < (int64_t)sizes.size(); ++d) {
          if (d != id) {
            starts.push_back(b.TableLookup({0}));
            continue;
          }
          std::vector<int64_t> table(n());
          for (int64_t dev = 0; dev < n(); ++dev) table[dev] = coords->of_device[dev][id] * oc * w.stride;
          starts.push_back(b.TableLookup(table));
        }
        if (!sizes.empty()) sizes[id] = span;
        v = b.DynamicSlice(v, starts, sizes);
      }
      if (v == nullptr) return b.b().status();
      local_window.dimensions[i].padding_low = 0;
      local_window.dimensions[i].padding_high = 0;
    }
    auto k = Get(b, rhs, plan->rhs);
    if (!k.ok()) return k.status();
    auto clone = CloneInstruction(inst, {v, *k});
    clone->mutable_attrs().sharding.reset();
    clone->mutable_attrs().window = local_window;
    auto added = AddLocal(b, std::move(clone), ShardShape(plan->out, inst.shape()));
    if (!added.ok()) return added.status();
    Set(&inst, *added, plan->out);
    return absl::OkStatus();
  }
  auto l = Get(b, lhs, plan->lhs);
  if (!l.ok()) return l.status();
  auto k = Get(b, rhs, plan->rhs);
  if (!k.ok()) return k.status();
  auto local = CloneLocal(b, inst, {*l, *k}, ShardShape(plan->out, inst.shape()));
  if (!local.ok()) return local.status();
  Set(&inst, *local, plan->out);
  return absl::OkStatus();
}

}  // namespace hloc::spmd
