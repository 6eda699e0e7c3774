#include "passes/layout/layout_util.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"

namespace hloc::layout {

namespace {
bool IsPermutationOf(const std::vector<int64_t>& dims, int64_t rank) {
  if (static_cast<int64_t>(dims.size()) != rank) return false;
  std::vector<bool> seen(dims.size(), false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}
}  // namespace

Layout DefaultLayout(int64_t rank) {
  Layout l;
  for (int64_t i = rank - 1; i >= 0; --i) l.minor_to_major.push_back(i);
  return l;
}

Layout MakeLayout(std::vector<int64_t> minor_to_major) {
  Layout l;
  l.minor_to_major = std::move(minor_to_major);
  return l;
}

Layout LayoutFromMajorToMinor(const std::vector<int64_t>& major_to_minor) {
  return MakeLayout(std::vector<int64_t>(major_to_minor.rbegin(), major_to_minor.rend()));
}

std::vector<int64_t> MajorToMinor(const Shape& shape) {
  if (!shape.has_layout() || static_cast<int64_t>(shape.layout().minor_to_major.size()) != shape.rank()) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < shape.rank(); ++i) out.push_back(i);
    return out;
  }
  const auto& m2m = shape.layout().minor_to_major;
  // Not a permutation (an unverified module): treat it as the default layout.
  std::vector<bool> seen(m2m.size(), false);
  for (int64_t d : m2m) {
    if (d < 0 || d >= shape.rank() || seen[d]) return MajorToMinor(Shape(shape.element_type(), shape.dimensions()));
    seen[d] = true;
  }
  return std::vector<int64_t>(m2m.rbegin(), m2m.rend());
}

bool HasDefaultLayout(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes())
      if (!HasDefaultLayout(s)) return false;
    return true;
  }
  if (!shape.IsArray() || !shape.has_layout()) return true;
  return shape.layout().minor_to_major == DefaultLayout(shape.rank()).minor_to_major;
}

bool SameLayout(const Shape& a, const Shape& b) {
  if (a.IsTuple() != b.IsTuple()) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes().size() != b.tuple_shapes().size()) return false;
    for (size_t i = 0; i < a.tuple_shapes().size(); ++i)
      if (!SameLayout(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return true;
  return MajorToMinor(a) == MajorToMinor(b);
}

bool LayoutsEqual(const Layout& a, const Layout& b) { return a.minor_to_major == b.minor_to_major; }

void FillDefaultLayouts(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& s : shape.mutable_tuple_shapes()) FillDefaultLayouts(s);
    return;
  }
  if (shape.IsArray() && (!shape.has_layout() ||
                          static_cast<int64_t>(shape.layout().minor_to_major.size()) != shape.rank()))
    shape.set_layout(DefaultLayout(shape.rank()));
}

Shape WithDefaultLayouts(const Shape& shape) {
  Shape s = shape;
  if (s.IsTuple()) {
    for (Shape& e : s.mutable_tuple_shapes()) e = WithDefaultLayouts(e);
    return s;
  }
  if (s.IsArray()) s.set_layout(DefaultLayout(s.rank()));
  return s;
}

Shape WithLayout(const Shape& shape, const Layout& layout) {
  Shape s = shape;
  Layout l = s.has_layout() ? s.layout() : Layout();
  l.minor_to_major = layout.minor_to_major;
  s.set_layout(std::move(l));
  return s;
}

Shape Normalize(const Shape& shape) {
  std::vector<int64_t> order = MajorToMinor(shape);
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t d : order) {
    dims.push_back(shape.dimensions(d));
    dynamic.push_back(shape.is_dynamic_dimension(d));
  }
  Shape out(shape.element_type(), dims);
  if (std::find(dynamic.begin(), dynamic.end(), true) != dynamic.end()) out.mutable_dynamic_dimensions() = dynamic;
  Layout l = DefaultLayout(out.rank());
  if (shape.has_layout()) {  // keep memory space and element size; the order is the point
    l = shape.layout();
    l.minor_to_major = DefaultLayout(out.rank()).minor_to_major;
  }
  out.set_layout(l);
  return out;
}

namespace {

// One side of a reshape: its non-degenerate dimensions as (dimension, suffix-product range).
struct Side {
  std::vector<int64_t> dims;        // logical indices of the non-degenerate dimensions
  std::vector<int64_t> lo, hi;      // the dimension covers linear strides (lo, hi] of the row-major index
};

Side MakeSide(const Shape& s) {
  Side side;
  int64_t acc = 1;
  for (int64_t i = s.rank() - 1; i >= 0; --i) {
    if (s.dimensions(i) == 1) continue;
    side.dims.insert(side.dims.begin(), i);
    side.lo.insert(side.lo.begin(), acc);
    acc *= s.dimensions(i);
    side.hi.insert(side.hi.begin(), acc);
  }
  return side;
}

// The physical sequence of atoms of one side, or nullopt when a merged (non-refinable) atom's
// dimensions are not physically contiguous in row-major order.
std::optional<std::vector<int64_t>> PhysicalAtoms(const Shape& s, const Side& side,
                                                  const std::vector<std::pair<int64_t, int64_t>>& atoms,
                                                  const std::vector<bool>& merged) {
  // atoms: (lo, hi] intervals, major first.
  std::map<int64_t, std::vector<int64_t>> atoms_of_dim;  // logical dim -> atom ids, major first
  std::map<int64_t, std::vector<int64_t>> dims_of_merged;  // merged atom -> its dims, major first
  for (size_t k = 0; k < side.dims.size(); ++k) {
    for (size_t a = 0; a < atoms.size(); ++a) {
      bool inside = atoms[a].first >= side.lo[k] && atoms[a].second <= side.hi[k];
      bool overlaps = atoms[a].first < side.hi[k] && atoms[a].second > side.lo[k];
      if (inside || (merged[a] && overlaps)) {
        atoms_of_dim[side.dims[k]].push_back(static_cast<int64_t>(a));
        if (merged[a]) dims_of_merged[a].push_back(side.dims[k]);
      }
    }
  }
  std::vector<int64_t> seq;
  std::vector<int64_t> order;
  for (int64_t d : MajorToMinor(s))
    if (s.dimensions(d) != 1) order.push_back(d);
  for (size_t i = 0; i < order.size();) {
    int64_t d = order[i];
    const std::vector<int64_t>& as = atoms_of_dim[d];
    if (as.size() == 1 && merged[as[0]]) {
      const std::vector<int64_t>& group = dims_of_merged[as[0]];
      for (size_t g = 0; g < group.size(); ++g)
        if (i + g >= order.size() || order[i + g] != group[g]) return std::nullopt;
      seq.push_back(as[0]);
      i += group.size();
      continue;
    }
    for (int64_t a : as) {
      if (merged[a]) return std::nullopt;
      seq.push_back(a);
    }
    ++i;
  }
  return seq;
}

}  // namespace

bool ReshapeIsBitcast(const Shape& from, const Shape& to) {
  if (!from.IsArray() || !to.IsArray()) return false;
  if (from.element_type() != to.element_type()) return false;
  if (from.num_elements() != to.num_elements()) return false;
  if (from.num_elements() == 0) return true;
  Side a = MakeSide(from), b = MakeSide(to);
  std::set<int64_t> cuts_a{1}, cuts_b{1};
  for (int64_t h : a.hi) cuts_a.insert(h);
  for (int64_t h : b.hi) cuts_b.insert(h);
  std::set<int64_t> all = cuts_a;
  all.insert(cuts_b.begin(), cuts_b.end());
  std::vector<int64_t> common;
  for (int64_t c : cuts_a)
    if (cuts_b.count(c)) common.push_back(c);
  // Atoms: between two common cuts, the union of cuts if each divides the next, else one
  // merged atom (its dimensions must then be contiguous and row-major on both sides).
  std::vector<std::pair<int64_t, int64_t>> atoms;
  std::vector<bool> merged;
  for (size_t i = 0; i + 1 < common.size(); ++i) {
    std::vector<int64_t> seg;
    for (auto it = all.lower_bound(common[i]); it != all.end() && *it <= common[i + 1]; ++it) seg.push_back(*it);
    bool chain = true;
    for (size_t k = 0; k + 1 < seg.size(); ++k)
      if (seg[k + 1] % seg[k] != 0) chain = false;
    if (chain) {
      for (size_t k = 0; k + 1 < seg.size(); ++k) {
        atoms.push_back({seg[k], seg[k + 1]});
        merged.push_back(false);
      }
    } else {
      atoms.push_back({common[i], common[i + 1]});
      merged.push_back(true);
    }
  }
  // Major atoms first.
  std::vector<size_t> idx(atoms.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return atoms[x].first > atoms[y].first; });
  std::vector<std::pair<int64_t, int64_t>> sorted_atoms;
  std::vector<bool> sorted_merged;
  for (size_t i : idx) {
    sorted_atoms.push_back(atoms[i]);
    sorted_merged.push_back(merged[i]);
  }
  auto pa = PhysicalAtoms(from, a, sorted_atoms, sorted_merged);
  auto pb = PhysicalAtoms(to, b, sorted_atoms, sorted_merged);
  return pa && pb && *pa == *pb;
}

std::optional<Layout> AlignedReshapeLayout(const Shape& from, const Shape& to) {
  if (!from.IsArray() || !to.IsArray() || from.num_elements() != to.num_elements()) return std::nullopt;
  if (from.num_elements() == 0) return DefaultLayout(to.rank());
  // Groups: runs of logical dimensions (major to minor, size-1 dimensions left out) whose
  // products agree on both sides, i.e. the common cuts of the suffix products.
  Side a = MakeSide(from), b = MakeSide(to);
  std::vector<int64_t> group_of_a(from.rank(), -1), group_of_b(to.rank(), -1);
  std::vector<std::vector<int64_t>> a_dims, b_dims;  // per group, logical order
  size_t i = 0, j = 0;
  while (i < a.dims.size() || j < b.dims.size()) {
    a_dims.emplace_back();
    b_dims.emplace_back();
    const int64_t g = static_cast<int64_t>(a_dims.size()) - 1;
    // Extend the group until both sides end at the same lower cut (lo, counted from the minor end).
    int64_t pa = 1, pb = 1;
    do {
      if (pa <= pb && i < a.dims.size()) {
        pa *= from.dimensions(a.dims[i]);
        group_of_a[a.dims[i]] = g;
        a_dims.back().push_back(a.dims[i++]);
      } else if (j < b.dims.size()) {
        pb *= to.dimensions(b.dims[j]);
        group_of_b[b.dims[j]] = g;
        b_dims.back().push_back(b.dims[j++]);
      } else {
        return std::nullopt;
      }
    } while (pa != pb);
  }
  // The groups in `from`'s physical order; each group's dimensions contiguous and row-major there.
  std::vector<int64_t> order;  // physical major-to-minor dims of `from`, size-1 ones left out
  for (int64_t d : MajorToMinor(from))
    if (from.dimensions(d) != 1) order.push_back(d);
  std::vector<int64_t> group_order;
  for (size_t k = 0; k < order.size();) {
    const int64_t g = group_of_a[order[k]];
    const std::vector<int64_t>& dims = a_dims[g];
    for (size_t m = 0; m < dims.size(); ++m)
      if (k + m >= order.size() || order[k + m] != dims[m]) return std::nullopt;
    group_order.push_back(g);
    k += dims.size();
  }
  std::vector<int64_t> m2m_major;  // `to`'s major-to-minor: size-1 dimensions first, then the groups
  for (int64_t d = 0; d < to.rank(); ++d)
    if (to.dimensions(d) == 1) m2m_major.push_back(d);
  for (int64_t g : group_order) m2m_major.insert(m2m_major.end(), b_dims[g].begin(), b_dims[g].end());
  if (static_cast<int64_t>(m2m_major.size()) != to.rank()) return std::nullopt;
  Layout l = LayoutFromMajorToMinor(m2m_major);
  Shape candidate = WithLayout(to, l);
  if (!ReshapeIsBitcast(from, candidate)) return std::nullopt;
  return l;
}

bool TransposeIsBitcast(const Shape& operand, const Shape& result, const std::vector<int64_t>& dims) {
  if (!IsPermutationOf(dims, result.rank()) || operand.rank() != result.rank()) return false;
  std::vector<int64_t> a, b;
  for (int64_t d : MajorToMinor(operand))
    if (operand.dimensions(d) != 1) a.push_back(d);
  for (int64_t d : MajorToMinor(result))
    if (result.dimensions(d) != 1) b.push_back(dims[d]);
  return a == b;
}

Layout TransposeBitcastLayout(const Shape& operand, const std::vector<int64_t>& dims) {
  if (!IsPermutationOf(dims, operand.rank())) return DefaultLayout(static_cast<int64_t>(dims.size()));
  std::vector<int64_t> inv = InversePermutation(dims);
  std::vector<int64_t> m2m;
  std::vector<int64_t> op_m2m = MajorToMinor(operand);
  for (auto it = op_m2m.rbegin(); it != op_m2m.rend(); ++it) m2m.push_back(inv[*it]);
  return MakeLayout(m2m);
}

Layout TransposeOperandBitcastLayout(const Shape& result, const std::vector<int64_t>& dims) {
  if (!IsPermutationOf(dims, result.rank())) return DefaultLayout(result.rank());
  std::vector<int64_t> m2m;
  std::vector<int64_t> r = MajorToMinor(result);
  for (auto it = r.rbegin(); it != r.rend(); ++it) m2m.push_back(dims[*it]);
  return MakeLayout(m2m);
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] >= 0 && perm[i] < static_cast<int64_t>(perm.size())) inv[perm[i]] = static_cast<int64_t>(i);
  return inv;
}

bool PreservesLayout(const HloInstruction& inst) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kCopy || !inst.shape().IsArray()) return false;
  for (const HloInstruction* o : inst.operands())
    if (!o->shape().IsArray() || (o->shape().rank() != 0 && o->shape().rank() != inst.shape().rank())) return false;
  if (IsElementwise(op)) return true;
  switch (op) {
    case HloOpcode::kSlice: case HloOpcode::kPad: case HloOpcode::kConcatenate: case HloOpcode::kReverse:
    case HloOpcode::kDynamicSlice: case HloOpcode::kDynamicUpdateSlice: case HloOpcode::kSort:
    case HloOpcode::kReduceWindow: case HloOpcode::kMap: case HloOpcode::kClamp: case HloOpcode::kSelect:
    case HloOpcode::kReducePrecision: case HloOpcode::kConvert: case HloOpcode::kBitcastConvert:
      return true;
    default:
      return false;
  }
}

HloInstruction* Builder::Add(std::unique_ptr<HloInstruction> inst) {
  HloInstruction* added = AddInstructionWithUniqueName(*computation_, std::move(inst), *names_, before_);
  added_.push_back(added);
  return added;
}

HloInstruction* Builder::Make(HloOpcode op, const Shape& shape, const std::vector<HloInstruction*>& operands,
                              const std::string& name_hint) {
  auto inst = std::make_unique<HloInstruction>(op, shape, name_hint);
  for (HloInstruction* o : operands) inst->AppendOperand(o);
  return Add(std::move(inst));
}

HloInstruction* Builder::Bitcast(HloInstruction* x, const Shape& shape) {
  return Make(HloOpcode::kBitcast, shape, {x}, "bitcast");
}

HloInstruction* Builder::Copy(HloInstruction* x, const Shape& shape) { return Make(HloOpcode::kCopy, shape, {x}, "copy"); }

HloInstruction* Builder::Transpose(HloInstruction* x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> rd;
  for (int64_t d : dims) rd.push_back(x->shape().dimensions(d));
  Shape s(x->shape().element_type(), rd);
  HloInstruction* t = Make(HloOpcode::kTranspose, s, {x}, "transpose");
  t->mutable_attrs().dimensions = dims;
  return t;
}

HloInstruction* Builder::Convert(HloInstruction* x, PrimitiveType t) {
  Shape s = x->shape();
  s.set_element_type(t);
  return Make(HloOpcode::kConvert, s, {x}, "convert");
}

HloInstruction* Builder::GetTupleElement(HloInstruction* tuple, int64_t index) {
  HloInstruction* g = Make(HloOpcode::kGetTupleElement, tuple->shape().tuple_shapes(index), {tuple},
                           "get-tuple-element");
  g->mutable_attrs().tuple_index = index;
  return g;
}

HloInstruction* Builder::Tuple(const std::vector<HloInstruction*>& elements) {
  std::vector<Shape> shapes;
  for (HloInstruction* e : elements) shapes.push_back(e->shape());
  return Make(HloOpcode::kTuple, Shape::Tuple(shapes), elements, "tuple");
}

bool IsFusedComputation(const HloComputation& c) { return c.IsFusionComputation(); }

}  // namespace hloc::layout
