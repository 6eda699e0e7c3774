#include "passes/spmd/sharding_rules.h"

#include <algorithm>
#include <numeric>

#include "ir/computation.h"
#include "ir/sharding_util.h"
#include "passes/spmd/tile_coords.h"

namespace hloc::spmd {
namespace {

using O = HloOpcode;

const HloSharding* Known(const ShardingMap& known, const HloInstruction* inst) {
  auto it = known.find(inst);
  return it == known.end() ? nullptr : &it->second;
}

// The sharding of element `index` of a tuple value of `shape` with sharding `s`.
std::optional<HloSharding> Element(const HloSharding& s, const Shape& shape, int64_t index) {
  if (s.kind != HloSharding::Kind::kTuple) return s;  // one sharding for every leaf
  int64_t begin = 0;
  for (int64_t i = 0; i < index; ++i) begin += LeafCount(shape.tuple_shapes(i));
  const Shape& e = shape.tuple_shapes(index);
  if (begin + LeafCount(e) > (int64_t)s.tuple_elements.size()) return std::nullopt;
  if (!e.IsTuple()) return s.tuple_elements[begin];
  HloSharding out;
  out.kind = HloSharding::Kind::kTuple;
  out.tuple_elements.assign(s.tuple_elements.begin() + begin, s.tuple_elements.begin() + begin + LeafCount(e));
  return out;
}

HloSharding TupleOf(const std::vector<HloSharding>& parts) {
  HloSharding t;
  t.kind = HloSharding::Kind::kTuple;
  for (const HloSharding& p : parts) {
    if (p.kind == HloSharding::Kind::kTuple)
      t.tuple_elements.insert(t.tuple_elements.end(), p.tuple_elements.begin(), p.tuple_elements.end());
    else
      t.tuple_elements.push_back(p);
  }
  return t;
}

std::optional<HloSharding> RemapOrNone(const HloSharding& s, const std::vector<int64_t>& src, int64_t n) {
  if (IsManual(s)) return s;
  if (!IsTiled(s)) return ReplicatedSharding();
  auto r = Remap(s, src, n);
  if (!r.ok()) return std::nullopt;
  return *r;
}

std::vector<int64_t> Identity(int64_t rank) {
  std::vector<int64_t> v(rank);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// s with `dims` unsplit.
std::optional<HloSharding> Unsplit(const HloSharding& s, const std::vector<int64_t>& dims, int64_t rank, int64_t n) {
  std::vector<int64_t> src = Identity(rank);
  for (int64_t d : dims)
    if (d >= 0 && d < rank) src[d] = -1;
  return RemapOrNone(s, src, n);
}

// s with `dims` unsplit, each one's split moved to another dim that is whole and divides by it
// (one all-to-all, as XLA's sort handler does, instead of gathering the dim on every device).
std::optional<HloSharding> MoveSplitOff(const HloSharding& s, const std::vector<int64_t>& dims, const Shape& shape,
                                        int64_t n) {
  if (!IsTiled(s)) return RemapOrNone(s, Identity(shape.rank()), n);
  std::vector<int64_t> src = Identity(shape.rank());
  auto in = [&](int64_t d) { return std::find(dims.begin(), dims.end(), d) != dims.end(); };
  for (int64_t d : dims) {
    if (d < 0 || d >= shape.rank()) continue;
    int64_t t = TilesAlong(s, d);
    src[d] = -1;
    if (t == 1 || shape.dimensions(d) % t != 0) continue;
    for (int64_t e = 0; e < shape.rank(); ++e) {
      if (in(e) || src[e] != e || TilesAlong(s, e) != 1 || shape.dimensions(e) % t != 0) continue;
      src[e] = d;
      break;
    }
  }
  return RemapOrNone(s, src, n);
}

// Reshape sources, dropping a dim whose tiles do not divide both sizes.
std::vector<int64_t> ReshapeSources(const HloSharding& s, const Shape& in, const Shape& out) {
  std::vector<int64_t> src = ReshapeDimSources(in, out);
  for (size_t d = 0; d < src.size(); ++d) {
    if (src[d] < 0) continue;
    int64_t t = TilesAlong(s, src[d]);
    if (in.dimensions(src[d]) % t != 0 || out.dimensions(d) % t != 0) src[d] = -1;
  }
  return src;
}

// The output dims of a dot, in order: batch, lhs free, rhs free. For each, (operand, dim).
struct DotDims {
  std::vector<int64_t> lhs_of_out, rhs_of_out;  // per output dim: the lhs/rhs dim or -1
  std::vector<int64_t> lhs_contracting, rhs_contracting;
};

DotDims DotDimsOf(const HloInstruction& dot) {
  const DotDimensionNumbers& dn = *dot.attrs().dot_dimension_numbers;
  DotDims d;
  d.lhs_contracting = dn.lhs_contracting_dimensions;
  d.rhs_contracting = dn.rhs_contracting_dimensions;
  for (size_t i = 0; i < dn.lhs_batch_dimensions.size(); ++i) {
    d.lhs_of_out.push_back(dn.lhs_batch_dimensions[i]);
    d.rhs_of_out.push_back(dn.rhs_batch_dimensions[i]);
  }
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> f;
    for (int64_t i = 0; i < rank; ++i)
      if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) f.push_back(i);
    return f;
  };
  for (int64_t i : free_dims(dot.operand(0)->shape().rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions)) {
    d.lhs_of_out.push_back(i);
    d.rhs_of_out.push_back(-1);
  }
  for (int64_t i : free_dims(dot.operand(1)->shape().rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions)) {
    d.lhs_of_out.push_back(-1);
    d.rhs_of_out.push_back(i);
  }
  return d;
}

std::optional<HloSharding> Combine(const std::vector<std::pair<const HloSharding*, int64_t>>& sources, int64_t n) {
  return CombineSources(sources, n);
}

std::optional<HloSharding> DotForward(const HloInstruction& dot, const ShardingMap& known, int64_t n) {
  const HloSharding* l = Known(known, dot.operand(0));
  const HloSharding* r = Known(known, dot.operand(1));
  if (l == nullptr && r == nullptr) return std::nullopt;
  if ((l && IsManual(*l)) || (r && IsManual(*r))) return ManualSharding();
  DotDims d = DotDimsOf(dot);
  std::vector<std::pair<const HloSharding*, int64_t>> both, lhs_only, rhs_only;
  for (size_t i = 0; i < d.lhs_of_out.size(); ++i) {
    bool from_lhs = d.lhs_of_out[i] >= 0 && l && TilesAlong(*l, d.lhs_of_out[i]) > 1;
    both.push_back(from_lhs ? std::make_pair(l, d.lhs_of_out[i]) : std::make_pair(r, d.rhs_of_out[i]));
    lhs_only.push_back({l, d.lhs_of_out[i]});
    rhs_only.push_back({r, d.rhs_of_out[i]});
  }
  std::optional<HloSharding> best;
  for (const auto* cand : {&both, &lhs_only, &rhs_only}) {
    auto s = Combine(*cand, n);
    if (s && (!best || Specificity(*s) > Specificity(*best))) best = s;
  }
  return best;
}

std::optional<HloSharding> DotBackward(const HloInstruction& dot, int64_t operand, const HloSharding& out,
                                       const ShardingMap& known, int64_t n) {
  DotDims d = DotDimsOf(dot);
  const std::vector<int64_t>& of_out = operand == 0 ? d.lhs_of_out : d.rhs_of_out;
  const std::vector<int64_t>& mine_c = operand == 0 ? d.lhs_contracting : d.rhs_contracting;
  const std::vector<int64_t>& other_c = operand == 0 ? d.rhs_contracting : d.lhs_contracting;
  const HloSharding* other = Known(known, dot.operand(1 - operand));
  int64_t rank = dot.operand(operand)->shape().rank();
  std::vector<std::pair<const HloSharding*, int64_t>> with_other(rank, {nullptr, -1}), plain(rank, {nullptr, -1});
  for (size_t i = 0; i < of_out.size(); ++i)
    if (of_out[i] >= 0) with_other[of_out[i]] = plain[of_out[i]] = {&out, static_cast<int64_t>(i)};
  for (size_t i = 0; i < mine_c.size(); ++i) with_other[mine_c[i]] = {other, other_c[i]};
  auto a = Combine(with_other, n);
  auto b = Combine(plain, n);
  if (a && (!b || Specificity(*a) >= Specificity(*b))) return a;
  return b;
}

// Sharding of a while loop's state / a conditional's result: what the operand or branch has.
std::optional<HloSharding> Pass(const HloSharding* s) { return s ? std::optional<HloSharding>(*s) : std::nullopt; }

}  // namespace

int64_t Specificity(const HloSharding& s) {
  if (s.kind == HloSharding::Kind::kTuple) {
    int64_t t = 0;
    for (const auto& e : s.tuple_elements) t += Specificity(e);
    return t;
  }
  return TileCount(s);
}

std::vector<int64_t> ReshapeDimSources(const Shape& in, const Shape& out) {
  std::vector<int64_t> src(out.rank(), -1);
  int64_t i = 0, j = 0;
  while (i < in.rank() && j < out.rank()) {
    // Skip size-1 dims: they hold no tiles.
    if (in.dimensions(i) == 1) { ++i; continue; }
    if (out.dimensions(j) == 1) { ++j; continue; }
    // One group of dims with equal products.
    int64_t gi = i, gj = j, pi = in.dimensions(i), pj = out.dimensions(j);
    while (pi != pj) {
      if (pi < pj) {
        if (++gi >= in.rank()) return src;
        pi *= in.dimensions(gi);
      } else {
        if (++gj >= out.rank()) return src;
        pj *= out.dimensions(gj);
      }
    }
    int64_t a = in.dimensions(i), b = out.dimensions(j);
    if (a % b == 0 || b % a == 0) src[j] = i;  // the group's major dims share their split
    i = gi + 1;
    j = gj + 1;
  }
  return src;
}

std::vector<int64_t> DimsNeedingWholeOperand(const HloInstruction& inst) {
  std::vector<int64_t> dims;
  const Shape& in = inst.operand(0)->shape();
  const InstructionAttributes& a = inst.attrs();
  switch (inst.opcode()) {
    case O::kSlice:
      for (int64_t d = 0; d < in.rank(); ++d)
        if (a.slice[d].start != 0 || a.slice[d].limit != in.dimensions(d) || a.slice[d].stride != 1) dims.push_back(d);
      break;
    case O::kPad:
      for (int64_t d = 0; d < in.rank(); ++d) {
        const PaddingDimension& p = a.padding_config->dimensions[d];
        if (p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0) dims.push_back(d);
      }
      break;
    case O::kDynamicSlice:
      for (int64_t d = 0; d < in.rank(); ++d)
        if (a.dynamic_slice_sizes[d] != in.dimensions(d)) dims.push_back(d);
      break;
    case O::kDynamicUpdateSlice: {
      const Shape& upd = inst.operand(1)->shape();
      for (int64_t d = 0; d < in.rank(); ++d)
        if (upd.dimensions(d) != in.dimensions(d)) dims.push_back(d);
      break;
    }
    case O::kReverse: case O::kConcatenate: case O::kSort: case O::kScan:
      dims = a.dimensions;
      break;
    default: break;
  }
  return dims;
}

std::optional<HloSharding> InferFromOperands(const HloInstruction& inst, const ShardingMap& known, int64_t n,
                                             const RuleOptions& options) {
  if (inst.operand_count() == 0) return std::nullopt;
  for (const HloInstruction* op : inst.operands())
    if (const HloSharding* s = Known(known, op); s && IsManual(*s) && inst.opcode() != O::kCustomCall)
      return inst.shape().IsTuple() ? TupleOf(std::vector<HloSharding>(LeafCount(inst.shape()), ManualSharding()))
                                    : ManualSharding();
  const HloSharding* s0 = Known(known, inst.operand(0));
  const Shape& shape = inst.shape();
  switch (inst.opcode()) {
    case O::kBroadcast: {
      if (!s0) return std::nullopt;
      std::vector<int64_t> src(shape.rank(), -1);
      for (size_t i = 0; i < inst.attrs().dimensions.size(); ++i) src[inst.attrs().dimensions[i]] = i;
      return RemapOrNone(*s0, src, n);
    }
    case O::kTranspose:
      if (!s0) return std::nullopt;
      return RemapOrNone(*s0, inst.attrs().dimensions, n);
    case O::kReshape:
      if (!s0) return std::nullopt;
      return RemapOrNone(*s0, ReshapeSources(*s0, inst.operand(0)->shape(), shape), n);
    case O::kReduce: {
      if (!s0) return std::nullopt;
      std::vector<int64_t> kept;
      const auto& dims = inst.attrs().dimensions;
      for (int64_t d = 0; d < inst.operand(0)->shape().rank(); ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
      auto r = RemapOrNone(*s0, kept, n);
      if (!r || !shape.IsTuple()) return r;
      return TupleOf(std::vector<HloSharding>(LeafCount(shape), *r));
    }
    case O::kDot: return DotForward(inst, known, n);
    case O::kConvolution: {
      // Batch and spatial splits from the input, the output-feature split from the kernel
      // (ungrouped convolutions only).
      const HloSharding* k = Known(known, inst.operand(1));
      if (!s0 && !k) return std::nullopt;
      const ConvolutionDimensionNumbers& c = *inst.attrs().convolution_dimension_numbers;
      std::vector<std::pair<const HloSharding*, int64_t>> src(shape.rank(), {nullptr, -1});
      src[c.output_batch_dimension] = {s0, c.input_batch_dimension};
      for (size_t i = 0; i < c.input_spatial_dimensions.size(); ++i)
        src[c.output_spatial_dimensions[i]] = {s0, c.input_spatial_dimensions[i]};
      if (inst.attrs().feature_group_count == 1 && inst.attrs().batch_group_count == 1)
        src[c.output_feature_dimension] = {k, c.kernel_output_feature_dimension};
      auto combined = Combine(src, n);
      if (combined) return combined;
      if (!s0) return std::nullopt;
      src[c.output_feature_dimension] = {nullptr, -1};
      return Combine(src, n);
    }
    case O::kGetTupleElement:
      if (!s0) return std::nullopt;
      return Element(*s0, inst.operand(0)->shape(), inst.attrs().tuple_index);
    case O::kTuple: {
      // Elements not known yet count as replicated: tuple shardings merge leaf by leaf, so
      // they are refined when their operands are.
      std::vector<HloSharding> parts;
      bool any = false;
      for (const HloInstruction* op : inst.operands()) {
        const HloSharding* s = Known(known, op);
        any |= s != nullptr;
        if (s != nullptr) parts.push_back(*s);
        else parts.insert(parts.end(), op->shape().IsTuple() ? LeafCount(op->shape()) : 1, ReplicatedSharding());
      }
      if (!any) return std::nullopt;
      return TupleOf(parts);
    }
    case O::kWhile: case O::kOptimizationBarrier: return Pass(s0);
    case O::kSlice: case O::kPad: case O::kDynamicSlice: case O::kDynamicUpdateSlice: case O::kReverse:
    case O::kScan: {
      // A dynamic-update-slice's buffer takes the update's split where the update has one.
      if (inst.opcode() == O::kDynamicUpdateSlice)
        if (const HloSharding* s1 = Known(known, inst.operand(1)); s1 && (!s0 || Specificity(*s1) > Specificity(*s0)))
          s0 = s1;
      if (!s0 || shape.IsTuple()) return std::nullopt;
      return Unsplit(*s0, DimsNeedingWholeOperand(inst), shape.rank(), n);
    }
    case O::kConcatenate: {
      const HloSharding* best = nullptr;
      for (const HloInstruction* op : inst.operands())
        if (const HloSharding* s = Known(known, op); s && (!best || Specificity(*s) > Specificity(*best))) best = s;
      if (!best) return std::nullopt;
      return Unsplit(*best, inst.attrs().dimensions, shape.rank(), n);
    }
    case O::kSort: {
      if (!s0) return std::nullopt;
      auto r = options.sort_move_split ? MoveSplitOff(*s0, inst.attrs().dimensions, inst.operand(0)->shape(), n)
                                       : Unsplit(*s0, inst.attrs().dimensions, inst.operand(0)->shape().rank(), n);
      if (!r || !shape.IsTuple()) return r;
      return TupleOf(std::vector<HloSharding>(LeafCount(shape), *r));
    }
    default: break;
  }
  if (inst.IsElementwise() || inst.opcode() == O::kCopy) {
    const HloSharding* best = nullptr;
    for (const HloInstruction* op : inst.operands()) {
      const HloSharding* s = Known(known, op);
      if (s && op->shape().rank() == shape.rank() && (!best || Specificity(*s) > Specificity(*best))) best = s;
    }
    return Pass(best);
  }
  return std::nullopt;
}

std::optional<HloSharding> InferForOperand(const HloInstruction& user, int64_t operand, const ShardingMap& known,
                                           int64_t n) {
  const HloSharding* s = Known(known, &user);
  if (!s) return std::nullopt;
  if (IsManual(*s) && user.opcode() != O::kCustomCall) return std::nullopt;
  const Shape& in = user.operand(operand)->shape();
  switch (user.opcode()) {
    case O::kBroadcast: {
      if (operand != 0) return std::nullopt;
      return RemapOrNone(*s, user.attrs().dimensions, n);
    }
    case O::kTranspose: {
      const auto& perm = user.attrs().dimensions;
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
      return RemapOrNone(*s, inv, n);
    }
    case O::kReshape: {
      // The inverse mapping: input dim e takes output dim d's split when d's source is e.
      std::vector<int64_t> src = ReshapeDimSources(user.shape(), in);
      for (size_t e = 0; e < src.size(); ++e) {
        if (src[e] < 0) continue;
        int64_t t = TilesAlong(*s, src[e]);
        if (user.shape().dimensions(src[e]) % t != 0 || in.dimensions(e) % t != 0) src[e] = -1;
      }
      return RemapOrNone(*s, src, n);
    }
    case O::kReduce: {
      if (s->kind == HloSharding::Kind::kTuple) return std::nullopt;
      if (operand >= user.operand_count() / 2) return std::nullopt;  // init values
      std::vector<int64_t> src(in.rank(), -1);
      const auto& dims = user.attrs().dimensions;
      int64_t o = 0;
      for (int64_t d = 0; d < in.rank(); ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) src[d] = o++;
      return RemapOrNone(*s, src, n);
    }
    case O::kDot: return DotBackward(user, operand, *s, known, n);
    case O::kGetTupleElement: return std::nullopt;
    case O::kTuple: return Element(*s, user.shape(), operand);
    case O::kSlice: case O::kPad: case O::kReverse: case O::kDynamicSlice: case O::kScan:
      if (operand != 0) return std::nullopt;
      return Unsplit(*s, DimsNeedingWholeOperand(user), in.rank(), n);
    case O::kDynamicUpdateSlice:
      if (operand > 1) return std::nullopt;
      return Unsplit(*s, DimsNeedingWholeOperand(user), in.rank(), n);
    case O::kConcatenate:
      return Unsplit(*s, user.attrs().dimensions, in.rank(), n);
    case O::kSort: {
      // Every operand as the result (leaf `operand`), the sorted dims whole.
      HloSharding leaf = s->kind == HloSharding::Kind::kTuple
                             ? (operand < (int64_t)s->tuple_elements.size() ? s->tuple_elements[operand] : *s)
                             : *s;
      return Unsplit(leaf, user.attrs().dimensions, in.rank(), n);
    }
    case O::kCustomCall:
      if (user.attrs().custom_call_target == "Sharding") return *s;
      return std::nullopt;
    default: break;
  }
  if ((user.IsElementwise() || user.opcode() == O::kCopy) && in.rank() == user.shape().rank()) return *s;
  return std::nullopt;
}

}  // namespace hloc::spmd
