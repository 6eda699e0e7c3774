#include "passes/layout/layout_normalization.h"

#include <algorithm>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "passes/layout/layout_util.h"
#include "passes/pass_util.h"

namespace hloc {
namespace {

using layout::Builder;
using layout::HasDefaultLayout;
using layout::InversePermutation;
using layout::MajorToMinor;
using layout::Normalize;

// Dimensions of `s` listed in the order of `order` (logical indices).
std::vector<int64_t> DimsInOrder(const Shape& s, const std::vector<int64_t>& order) {
  std::vector<int64_t> out;
  for (int64_t d : order) out.push_back(s.dimensions(d));
  return out;
}

Shape DefaultShape(PrimitiveType t, const std::vector<int64_t>& dims) {
  Shape s(t, dims);
  s.set_layout(layout::DefaultLayout(static_cast<int64_t>(dims.size())));
  return s;
}

class Normalizer {
 public:
  Normalizer(HloComputation* c, NameUniquer& names) : c_(c), names_(names) {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    for (HloInstruction* x : c_->MakeInstructionPostOrder()) {
      if (IsVariadic(*x)) {
        absl::StatusOr<bool> done = RewriteVariadic(*x);
        if (!done.ok()) return done.status();
        changed |= *done;
        continue;
      }
      if (!NeedsWork(*x)) continue;
      Builder b(c_, &names_, x);
      absl::StatusOr<HloInstruction*> n = Rewrite(*x, b);
      if (!n.ok()) return n.status();
      if (*n == nullptr) continue;
      HloInstruction* replacement = *n;
      // The new op of x's kind keeps x's name and metadata (a copy that became a transpose
      // keeps the transpose's own name).
      HloInstruction* core = nullptr;
      for (HloInstruction* a : b.added())
        if (a->opcode() == x->opcode()) core = a;
      if (!(replacement->shape() == x->shape())) replacement = b.Bitcast(replacement, x->shape());
      x->ReplaceAllUsesWith(replacement);
      const std::string name = x->name();
      const OpMetadata metadata = x->attrs().metadata;
      HLOC_LAYOUT_RETURN_IF_ERROR(RemoveInstruction(x));
      if (core != nullptr) {
        core->set_name(name);
        core->mutable_attrs().metadata = metadata;
      }
      changed = true;
    }
    if (FoldBitcasts()) changed = true;
    return changed;
  }

 private:
  static bool NeedsWork(const HloInstruction& x) {
    if (!x.shape().IsArray() || x.opcode() == HloOpcode::kParameter) return false;
    if (!x.control_predecessors().empty() || !x.control_successors().empty()) return false;
    if (!HasDefaultLayout(x.shape())) return true;
    for (const HloInstruction* o : x.operands())
      if (o->shape().IsArray() && !HasDefaultLayout(o->shape())) return true;
    return false;
  }

  // A variadic reduce or sort (a tuple of results over inputs of one layout).
  static bool IsVariadic(const HloInstruction& x) {
    return x.shape().IsTuple() && (x.opcode() == HloOpcode::kReduce || x.opcode() == HloOpcode::kSort) &&
           x.control_predecessors().empty() && x.control_successors().empty();
  }

  // The variadic reduce / sort on normalized inputs; each result element is transposed where
  // its layout wants another order and bitcast back, and the tuple of those replaces it.
  absl::StatusOr<bool> RewriteVariadic(HloInstruction& x) {
    const bool reduce = x.opcode() == HloOpcode::kReduce;
    const int64_t inputs = reduce ? x.operand_count() / 2 : x.operand_count();
    if (inputs < 1 || static_cast<int64_t>(x.shape().tuple_shapes().size()) != inputs) return false;
    const Shape& in0 = x.operand(0)->shape();
    bool all_default = true;
    for (int64_t i = 0; i < inputs; ++i) {
      const Shape& si = x.operand(i)->shape();
      if (!si.IsArray() || si.rank() != in0.rank() || MajorToMinor(si) != MajorToMinor(in0)) return false;
      all_default &= HasDefaultLayout(si) && HasDefaultLayout(x.shape().tuple_shapes(i));
    }
    if (all_default) return false;
    Builder b(c_, &names_, &x);
    const std::vector<int64_t> po = MajorToMinor(in0);
    const std::vector<int64_t> io = InversePermutation(po);
    std::vector<HloInstruction*> ops;
    for (int64_t i = 0; i < x.operand_count(); ++i)
      ops.push_back(i < inputs ? NormalizedInput(x.operand(i), b) : x.operand(i));
    std::unique_ptr<HloInstruction> clone = CloneInstruction(x, ops);
    std::vector<int64_t> kept;  // result logical dims in the inputs' physical order
    if (reduce) {
      const std::vector<int64_t>& reduced = x.attrs().dimensions;
      for (int64_t d : po) {
        if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
        int64_t out = d;
        for (int64_t r : reduced)
          if (r < d) --out;
        kept.push_back(out);
      }
      clone->mutable_attrs().dimensions.clear();
      for (int64_t d : reduced) clone->mutable_attrs().dimensions.push_back(io[d]);
      std::sort(clone->mutable_attrs().dimensions.begin(), clone->mutable_attrs().dimensions.end());
    } else {
      kept = po;
      for (int64_t& d : clone->mutable_attrs().dimensions) d = io[d];
    }
    std::vector<Shape> leaves;
    for (const Shape& leaf : x.shape().tuple_shapes()) {
      if (!leaf.IsArray() || leaf.rank() != static_cast<int64_t>(kept.size())) return false;
      leaves.push_back(DefaultShape(leaf.element_type(), DimsInOrder(leaf, kept)));
    }
    clone->mutable_shape() = Shape::Tuple(leaves);
    HloInstruction* n = b.Add(std::move(clone));
    std::vector<HloInstruction*> elems;
    const std::vector<int64_t> ik = InversePermutation(kept);
    for (int64_t i = 0; i < inputs; ++i) {
      const Shape& leaf = x.shape().tuple_shapes(i);
      std::vector<int64_t> t;
      for (int64_t d : MajorToMinor(leaf)) t.push_back(ik[d]);
      HloInstruction* e = TransposeIfNeeded(b.GetTupleElement(n, i), t, b);
      if (!(e->shape() == leaf)) e = b.Bitcast(e, leaf);
      elems.push_back(e);
    }
    HloInstruction* tuple = b.Tuple(elems);
    x.ReplaceAllUsesWith(tuple);
    const std::string name = x.name();
    HLOC_LAYOUT_RETURN_IF_ERROR(RemoveInstruction(&x));
    n->set_name(name);
    return true;
  }

  // The instruction holding `x`'s bytes with the default layout (XLA's GetNormalizedInput).
  HloInstruction* NormalizedInput(HloInstruction* x, Builder& b) {
    if (HasDefaultLayout(x->shape())) return x;
    Shape n = Normalize(x->shape());
    if (x->opcode() == HloOpcode::kBitcast && x->operand(0)->shape() == n) return x->operand(0);
    auto it = normalized_.find(x);
    if (it != normalized_.end()) return it->second;
    HloInstruction* bc = b.Bitcast(x, n);
    normalized_[x] = bc;
    return bc;
  }

  // Transpose `x` (default layout) so its dimension j becomes dims[j]; nothing for the identity.
  HloInstruction* TransposeIfNeeded(HloInstruction* x, const std::vector<int64_t>& dims, Builder& b) {
    if (layout::IsIdentityPermutation(dims)) return x;
    return b.Transpose(x, dims);
  }

  // The attributes the rewrites index with name real dimensions (the verifier checks this;
  // the pass may also see unverified modules, which it then leaves alone).
  static bool WellFormed(const HloInstruction& x) {
    auto all_below = [](const std::vector<int64_t>& v, int64_t n) {
      return std::all_of(v.begin(), v.end(), [&](int64_t d) { return d >= 0 && d < n; });
    };
    const int64_t rank = x.shape().IsArray() ? x.shape().rank() : -1;
    const int64_t r0 = x.operand_count() > 0 && x.operand(0)->shape().IsArray() ? x.operand(0)->shape().rank() : -1;
    const InstructionAttributes& a = x.attrs();
    switch (x.opcode()) {
      case HloOpcode::kTranspose: {
        std::vector<int64_t> sorted = a.dimensions;
        std::sort(sorted.begin(), sorted.end());
        return r0 == rank && static_cast<int64_t>(sorted.size()) == rank && all_below(sorted, rank) &&
               std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
      }
      case HloOpcode::kCopy: return r0 == rank;
      case HloOpcode::kBroadcast: return static_cast<int64_t>(a.dimensions.size()) == r0 && all_below(a.dimensions, rank);
      case HloOpcode::kReduce: return r0 >= 0 && all_below(a.dimensions, r0);
      case HloOpcode::kIota: return a.iota_dimension >= 0 && a.iota_dimension < rank;
      case HloOpcode::kConcatenate: case HloOpcode::kReverse: case HloOpcode::kSort:
        return all_below(a.dimensions, rank);
      case HloOpcode::kDot: {
        if (!a.dot_dimension_numbers || x.operand_count() != 2) return false;
        const DotDimensionNumbers& d = *a.dot_dimension_numbers;
        const int64_t r1 = x.operand(1)->shape().rank();
        return all_below(d.lhs_batch_dimensions, r0) && all_below(d.lhs_contracting_dimensions, r0) &&
               all_below(d.rhs_batch_dimensions, r1) && all_below(d.rhs_contracting_dimensions, r1);
      }
      case HloOpcode::kConvolution: {
        if (!a.convolution_dimension_numbers || x.operand_count() != 2) return false;
        const ConvolutionDimensionNumbers& c = *a.convolution_dimension_numbers;
        const int64_t r1 = x.operand(1)->shape().rank();
        return all_below({c.input_batch_dimension, c.input_feature_dimension}, r0) &&
               all_below(c.input_spatial_dimensions, r0) &&
               all_below({c.kernel_input_feature_dimension, c.kernel_output_feature_dimension}, r1) &&
               all_below(c.kernel_spatial_dimensions, r1) &&
               all_below({c.output_batch_dimension, c.output_feature_dimension}, rank) &&
               all_below(c.output_spatial_dimensions, rank);
      }
      default:
        return true;
    }
  }

  absl::StatusOr<HloInstruction*> Rewrite(HloInstruction& x, Builder& b) {
    if (!WellFormed(x)) return nullptr;
    const Shape& s = x.shape();
    const std::vector<int64_t> px = MajorToMinor(s);
    const std::vector<int64_t> ix = InversePermutation(px);
    const Shape ns = Normalize(s);
    switch (x.opcode()) {
      case HloOpcode::kCopy: case HloOpcode::kTranspose: {
        HloInstruction* o = x.operand(0);
        const std::vector<int64_t> po = MajorToMinor(o->shape());
        const std::vector<int64_t> io = InversePermutation(po);
        std::vector<int64_t> dims(s.rank());
        std::iota(dims.begin(), dims.end(), 0);
        if (x.opcode() == HloOpcode::kTranspose) dims = x.attrs().dimensions;
        std::vector<int64_t> t;
        for (int64_t j = 0; j < s.rank(); ++j) t.push_back(io[dims[px[j]]]);
        return TransposeIfNeeded(NormalizedInput(o, b), t, b);
      }
      case HloOpcode::kBitcast:
        return b.Bitcast(NormalizedInput(x.operand(0), b), ns);
      case HloOpcode::kReshape: {
        HloInstruction* o = x.operand(0);
        if (!layout::ReshapeIsBitcast(o->shape(), s)) return nullptr;  // reshape-decomposer's job
        HloInstruction* r = b.Make(HloOpcode::kReshape, ns, {NormalizedInput(o, b)}, "reshape");
        return r;
      }
      case HloOpcode::kBroadcast: {
        HloInstruction* o = x.operand(0);
        const std::vector<int64_t> po = MajorToMinor(o->shape());
        std::vector<int64_t> nd;
        for (int64_t m = 0; m < o->shape().rank(); ++m) nd.push_back(ix[x.attrs().dimensions[po[m]]]);
        std::vector<int64_t> q(nd.size());
        std::iota(q.begin(), q.end(), 0);
        std::sort(q.begin(), q.end(), [&](int64_t a, int64_t c) { return nd[a] < nd[c]; });
        HloInstruction* in = TransposeIfNeeded(NormalizedInput(o, b), q, b);
        std::sort(nd.begin(), nd.end());
        HloInstruction* n = b.Make(HloOpcode::kBroadcast, ns, {in}, x.name());
        n->mutable_attrs().dimensions = nd;
        n->mutable_attrs().metadata = x.attrs().metadata;
        return n;
      }
      case HloOpcode::kReduce: {
        if (x.operand_count() != 2) return nullptr;  // variadic reduces keep their layouts
        HloInstruction* o = x.operand(0);
        const std::vector<int64_t> po = MajorToMinor(o->shape());
        const std::vector<int64_t> io = InversePermutation(po);
        const std::vector<int64_t>& reduced = x.attrs().dimensions;
        std::vector<int64_t> nreduced;
        for (int64_t d : reduced) nreduced.push_back(io[d]);
        std::sort(nreduced.begin(), nreduced.end());
        std::vector<int64_t> kept;  // result logical dims in the order the input lays them out
        for (int64_t d : po) {
          if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
          int64_t out = d;
          for (int64_t r : reduced)
            if (r < d) --out;
          kept.push_back(out);
        }
        HloInstruction* n = b.Make(HloOpcode::kReduce, DefaultShape(s.element_type(), DimsInOrder(s, kept)),
                                   {NormalizedInput(o, b), x.operand(1)}, x.name());
        n->mutable_attrs().dimensions = nreduced;
        n->mutable_attrs().metadata = x.attrs().metadata;
        n->mutable_called_computations() = x.called_computations();
        std::vector<int64_t> t;
        std::vector<int64_t> ik = InversePermutation(kept);
        for (int64_t j = 0; j < s.rank(); ++j) t.push_back(ik[px[j]]);
        return TransposeIfNeeded(n, t, b);
      }
      case HloOpcode::kDot: return RewriteDot(x, b);
      case HloOpcode::kConvolution: return RewriteConvolution(x, b);
      case HloOpcode::kConstant: {
        if (!x.attrs().literal || !x.attrs().literal->shape().IsArray()) return nullptr;
        const Literal& lit = *x.attrs().literal;
        Literal out(ns);
        // Walk the original's logical indices row-major; write each element at its physical place.
        const int64_t rank = s.rank(), count = lit.element_count();
        std::vector<int64_t> nstride = RowMajorStrides(ns.dimensions());
        std::vector<int64_t> idx(rank, 0);
        for (int64_t linear = 0; linear < count; ++linear) {
          int64_t target = 0;
          for (int64_t j = 0; j < rank; ++j) target += idx[px[j]] * nstride[j];
          out.SetRawBits(target, lit.GetRawBits(linear));
          for (int64_t d = rank - 1; d >= 0; --d) {
            if (++idx[d] < s.dimensions(d)) break;
            idx[d] = 0;
          }
        }
        HloInstruction* n = b.Make(HloOpcode::kConstant, ns, {}, x.name());
        n->mutable_attrs().literal = std::move(out);
        n->mutable_attrs().metadata = x.attrs().metadata;
        return n;
      }
      case HloOpcode::kIota: {
        HloInstruction* n = b.Make(HloOpcode::kIota, ns, {}, x.name());
        n->mutable_attrs().iota_dimension = ix[x.attrs().iota_dimension];
        n->mutable_attrs().metadata = x.attrs().metadata;
        return n;
      }
      default:
        break;
    }
    if (!layout::PreservesLayout(x) || (x.opcode() == HloOpcode::kSort && x.operand_count() != 1)) return nullptr;
    return RewriteLayoutPreserving(x, b, px, ix, ns);
  }

  // Elementwise ops, slice, pad, concatenate, reverse, dynamic-(update-)slice, sort, map,
  // reduce-window: the same op on the normalized operands with its attributes permuted.
  absl::StatusOr<HloInstruction*> RewriteLayoutPreserving(HloInstruction& x, Builder& b, const std::vector<int64_t>& px,
                                                          const std::vector<int64_t>& ix, const Shape& ns) {
    const int64_t rank = x.shape().rank();
    for (const HloInstruction* o : x.operands())
      if (o->shape().rank() == rank && rank > 0 && MajorToMinor(o->shape()) != px) return nullptr;  // not aligned
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : x.operands())
      ops.push_back(o->shape().rank() == rank && rank > 0 ? NormalizedInput(o, b) : o);
    auto permute_indices = [&](int64_t first) {  // dynamic-(update-)slice start indices
      std::vector<HloInstruction*> reordered = ops;
      for (int64_t j = 0; j < rank; ++j) reordered[first + j] = ops[first + px[j]];
      ops = reordered;
    };
    if (x.opcode() == HloOpcode::kDynamicSlice && x.operand_count() == 1 + rank) permute_indices(1);
    if (x.opcode() == HloOpcode::kDynamicUpdateSlice && x.operand_count() == 2 + rank) permute_indices(2);
    std::unique_ptr<HloInstruction> clone = CloneInstruction(x, ops);
    Shape shape = ns;
    shape.set_element_type(x.shape().element_type());
    clone->mutable_shape() = shape;
    InstructionAttributes& a = clone->mutable_attrs();
    const InstructionAttributes& old = x.attrs();
    auto permute = [&](auto& v) {
      if (static_cast<int64_t>(v.size()) != rank) return;
      auto copy = v;
      for (int64_t j = 0; j < rank; ++j) v[j] = copy[px[j]];
    };
    switch (x.opcode()) {
      case HloOpcode::kSlice: permute(a.slice); break;
      case HloOpcode::kPad: if (a.padding_config) permute(a.padding_config->dimensions); break;
      case HloOpcode::kReduceWindow: if (a.window) permute(a.window->dimensions); break;
      case HloOpcode::kDynamicSlice: permute(a.dynamic_slice_sizes); break;
      case HloOpcode::kConcatenate: case HloOpcode::kReverse: case HloOpcode::kSort:
        a.dimensions.clear();
        for (int64_t d : old.dimensions) a.dimensions.push_back(ix[d]);
        if (x.opcode() == HloOpcode::kReverse) std::sort(a.dimensions.begin(), a.dimensions.end());
        break;
      case HloOpcode::kMap:
        a.dimensions.clear();
        for (int64_t d = 0; d < rank; ++d) a.dimensions.push_back(d);
        break;
      default:
        break;
    }
    return b.Add(std::move(clone));
  }

  // dot on the normalized operands with renamed dimension numbers; its result comes out in
  // (batch, lhs free, rhs free) order of the normalized operands, transposed if the result's
  // layout wants another order.
  absl::StatusOr<HloInstruction*> RewriteDot(HloInstruction& x, Builder& b) {
    if (!x.attrs().dot_dimension_numbers || x.operand_count() != 2) return nullptr;
    const DotDimensionNumbers& d = *x.attrs().dot_dimension_numbers;
    HloInstruction* lhs = x.operand(0);
    HloInstruction* rhs = x.operand(1);
    const std::vector<int64_t> pl = MajorToMinor(lhs->shape()), pr = MajorToMinor(rhs->shape());
    const std::vector<int64_t> il = InversePermutation(pl), ir = InversePermutation(pr);
    DotDimensionNumbers nd;
    for (int64_t v : d.lhs_batch_dimensions) nd.lhs_batch_dimensions.push_back(il[v]);
    for (int64_t v : d.rhs_batch_dimensions) nd.rhs_batch_dimensions.push_back(ir[v]);
    for (int64_t v : d.lhs_contracting_dimensions) nd.lhs_contracting_dimensions.push_back(il[v]);
    for (int64_t v : d.rhs_contracting_dimensions) nd.rhs_contracting_dimensions.push_back(ir[v]);
    // Logical result dimension of each free operand dimension (free dims ascending).
    auto free_dims = [](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < s.rank(); ++i)
        if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
            std::find(contracting.begin(), contracting.end(), i) == contracting.end())
          out.push_back(i);
      return out;
    };
    const int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
    std::vector<int64_t> lf = free_dims(lhs->shape(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
    std::vector<int64_t> rf = free_dims(rhs->shape(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
    std::vector<int64_t> seq;  // result logical dims in the new dot's order
    for (int64_t i = 0; i < nb; ++i) seq.push_back(i);
    for (int64_t v : pl) {
      auto it = std::find(lf.begin(), lf.end(), v);
      if (it != lf.end()) seq.push_back(nb + (it - lf.begin()));
    }
    for (int64_t v : pr) {
      auto it = std::find(rf.begin(), rf.end(), v);
      if (it != rf.end()) seq.push_back(nb + static_cast<int64_t>(lf.size()) + (it - rf.begin()));
    }
    const Shape& s = x.shape();
    if (static_cast<int64_t>(seq.size()) != s.rank()) return nullptr;
    std::unique_ptr<HloInstruction> dot =
        CloneInstruction(x, {NormalizedInput(lhs, b), NormalizedInput(rhs, b)});
    dot->mutable_shape() = DefaultShape(s.element_type(), DimsInOrder(s, seq));
    dot->mutable_attrs().dot_dimension_numbers = nd;
    HloInstruction* n = b.Add(std::move(dot));
    const std::vector<int64_t> px = MajorToMinor(s);
    const std::vector<int64_t> is = InversePermutation(seq);
    std::vector<int64_t> t;
    for (int64_t j = 0; j < s.rank(); ++j) t.push_back(is[px[j]]);
    return TransposeIfNeeded(n, t, b);
  }

  absl::StatusOr<HloInstruction*> RewriteConvolution(HloInstruction& x, Builder& b) {
    if (!x.attrs().convolution_dimension_numbers || x.operand_count() != 2) return nullptr;
    HloInstruction* in = x.operand(0);
    HloInstruction* k = x.operand(1);
    const std::vector<int64_t> ii = InversePermutation(MajorToMinor(in->shape()));
    const std::vector<int64_t> ik = InversePermutation(MajorToMinor(k->shape()));
    const std::vector<int64_t> io = InversePermutation(MajorToMinor(x.shape()));
    ConvolutionDimensionNumbers c = *x.attrs().convolution_dimension_numbers;
    c.input_batch_dimension = ii[c.input_batch_dimension];
    c.input_feature_dimension = ii[c.input_feature_dimension];
    for (int64_t& v : c.input_spatial_dimensions) v = ii[v];
    c.kernel_input_feature_dimension = ik[c.kernel_input_feature_dimension];
    c.kernel_output_feature_dimension = ik[c.kernel_output_feature_dimension];
    for (int64_t& v : c.kernel_spatial_dimensions) v = ik[v];
    c.output_batch_dimension = io[c.output_batch_dimension];
    c.output_feature_dimension = io[c.output_feature_dimension];
    for (int64_t& v : c.output_spatial_dimensions) v = io[v];
    std::unique_ptr<HloInstruction> conv = CloneInstruction(x, {NormalizedInput(in, b), NormalizedInput(k, b)});
    Shape ns = Normalize(x.shape());
    conv->mutable_shape() = ns;
    conv->mutable_attrs().convolution_dimension_numbers = c;
    return b.Add(std::move(conv));
  }

  // bitcast(bitcast(a)) -> bitcast(a); a bitcast to the operand's own shape -> the operand.
  bool FoldBitcasts() {
    bool changed = false;
    for (HloInstruction* x : c_->MakeInstructionPostOrder()) {
      if (x->opcode() != HloOpcode::kBitcast) continue;
      while (x->operand(0)->opcode() == HloOpcode::kBitcast) {
        x->ReplaceOperandWith(0, x->operand(0)->operand(0));
        changed = true;
      }
      if (x->operand(0)->shape() == x->shape() && x->control_successors().empty() &&
          x->control_predecessors().empty()) {
        x->ReplaceAllUsesWith(x->operand(0));
        changed = true;
      }
    }
    // Drop what nothing uses any more (only bitcasts and the rewritten ops' leftovers).
    std::vector<HloInstruction*> order = c_->MakeInstructionPostOrder();
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      HloInstruction* x = *it;
      if (x->opcode() == HloOpcode::kBitcast && IsDead(*x) && IsSafelyRemovable(*x)) {
        (void)RemoveInstruction(x);
        changed = true;
      }
    }
    return changed;
  }

  HloComputation* c_;
  NameUniquer& names_;
  absl::flat_hash_map<const HloInstruction*, HloInstruction*> normalized_;
};

}  // namespace

absl::StatusOr<bool> LayoutNormalization::Run(HloModule& module, PassContext&) {
  NameUniquer names = InstructionNameUniquer(module);
  bool changed = false;
  for (HloComputation* c : module.MakeComputationPostOrder()) {
    if (c->IsFusionComputation()) continue;
    Normalizer n(c, names);
    absl::StatusOr<bool> r = n.Run();
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  return changed;
}

}  // namespace hloc
