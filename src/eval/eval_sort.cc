// sort (multi-operand, comparator computation, any dimension), topk and scan.
// Sorting uses our own bottom-up merge sort: it is stable (so is_stable holds either way) and
// stays in bounds whatever the comparator answers, which std::sort does not promise for an
// inconsistent user comparator.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

// Stable bottom-up merge sort of `perm` by less(a, b). `failed` lets a comparator that hit an
// error stop early (the permutation stays valid).
template <typename Less>
void MergeSort(std::vector<int64_t>& perm, Less&& less, const bool* failed) {
  const int64_t n = static_cast<int64_t>(perm.size());
  std::vector<int64_t> tmp(n);
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) {
        // Take from the right run only when strictly less: equal keys keep their order.
        if (!*failed && less(perm[j], perm[i])) tmp[o++] = perm[j++];
        else tmp[o++] = perm[i++];
      }
      while (i < mid) tmp[o++] = perm[i++];
      while (j < hi) tmp[o++] = perm[j++];
    }
    perm.swap(tmp);
    if (*failed) return;
  }
}

// The 1-D lines of an array along `dim`: calls fn(base_offset) for each line; the elements of
// a line are at base + i * stride for i in [0, dims[dim]).
template <typename Fn>
void ForEachLine(const DimVec& dims, int64_t dim, Fn&& fn) {
  DimVec outer = dims;
  outer[dim] = 1;
  const DimVec strides = RowMajorStrides(dims);
  evalops::ForEachOffset(outer, strides, [&](int64_t, int64_t base) { fn(base); });
}

int64_t SingleDimension(const HloInstruction& inst, int64_t rank, absl::Status* status) {
  const DimVec& d = inst.attrs().dimensions;
  if (d.size() != 1 || d[0] < 0 || d[0] >= rank) {
    *status = evalops::Malformed(inst, absl::StrCat("dimensions must name one dimension below rank ", rank));
    return 0;
  }
  return d[0];
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.empty()) return evalops::Malformed(inst, "expected at least one operand");
  if (inst.to_apply() == nullptr) return evalops::Malformed(inst, "missing comparator");
  const int64_t n = static_cast<int64_t>(ops.size());
  const DimVec& dims = ops[0]->shape().dimensions();
  std::vector<PrimitiveType> types;
  for (const Literal* l : ops) {
    if (!l->shape().IsArray() || l->shape().dimensions() != dims)
      return evalops::Malformed(inst, "operands must be arrays of the same dimensions");
    types.push_back(l->element_type());
  }
  absl::Status status;
  const int64_t dim = SingleDimension(inst, static_cast<int64_t>(dims.size()), &status);
  if (!status.ok()) return status;
  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<const Shape*> leaf = evalops::ResultLeaf(inst.shape(), i, n);
    if (!leaf.ok()) return evalops::Malformed(inst, std::string(leaf.status().message()));
    if ((*leaf)->element_type() != types[i] || (*leaf)->dimensions() != dims)
      return evalops::Malformed(inst, "results must have the operands' shapes");
    absl::StatusOr<Literal> r = Literal::Create(**leaf);
    if (!r.ok()) return r.status();
    results.push_back(std::move(*r));
  }
  const int64_t len = dims[dim];
  const int64_t stride = RowMajorStrides(dims)[dim];
  const HloComputation& cmp = *inst.to_apply();

  std::optional<evalops::CompareKeys> keys;
  if (std::optional<evalops::ScalarCompare> c = evalops::MatchScalarCompare(&cmp, types[0], 2 * n))
    keys = evalops::CompareKeys::Make(*ops[0], *c);
  std::vector<PrimitiveType> arg_types;
  for (PrimitiveType t : types) {
    arg_types.push_back(t);
    arg_types.push_back(t);
  }
  evalops::ScalarArgs args(arg_types);
  // A comparator that is not one compare of the first keys may still compile to a scalar
  // program (JAX's comparators canonicalize NaN and -0 with selects before a total-order
  // compare); only what does not compile is called per comparison.
  std::optional<evalops::ScalarProgram> prog;
  if (!keys) {
    prog = evalops::ScalarProgram::Compile(&cmp);
    if (prog && (prog->num_params() != 2 * n || prog->num_results() != 1 ||
                 prog->result_type(0) != PrimitiveType::PRED))
      prog.reset();
  }
  std::vector<evalops::Value> pv(2 * n + 1), line;
  bool failed = false;
  std::vector<int64_t> perm(len);
  ForEachLine(dims, dim, [&](int64_t base) {
    if (failed) return;
    for (int64_t i = 0; i < len; ++i) perm[i] = base + i * stride;
    if (keys) {
      MergeSort(perm, [&](int64_t a, int64_t b) { return keys->Compare(a, b); }, &failed);
    } else if (prog) {
      // The line's values are decoded once; the comparator then reads them by position.
      line.resize(n * len);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t p = 0; p < len; ++p) line[i * len + p] = evalops::LoadValue(*ops[i], base + p * stride);
      MergeSort(
          perm,
          [&](int64_t a, int64_t b) {
            const int64_t pa = (a - base) / stride, pb = (b - base) / stride;
            for (int64_t i = 0; i < n; ++i) {
              pv[2 * i] = line[i * len + pa];
              pv[2 * i + 1] = line[i * len + pb];
            }
            prog->Run(pv.data(), pv.data() + 2 * n);
            return pv[2 * n].i != 0;
          },
          &failed);
    } else {
      MergeSort(
          perm,
          [&](int64_t a, int64_t b) {
            for (int64_t i = 0; i < n; ++i) {
              evalops::CopyElement(*ops[i], a, args.arg(2 * i), 0);
              evalops::CopyElement(*ops[i], b, args.arg(2 * i + 1), 0);
            }
            absl::StatusOr<Literal> r =
                evalops::CallScalarComputation(ctx, cmp, args.span(), {PrimitiveType::PRED}, inst);
            if (!r.ok()) {
              status = r.status();
              failed = true;
              return false;
            }
            return evalops::ScalarLeaf(*r, 0).GetPred(0);
          },
          &failed);
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t p = 0; p < len; ++p) evalops::CopyElement(*ops[i], perm[p], results[i], base + p * stride);
  });
  if (!status.ok()) return status;
  if (n == 1) return std::move(results[0]);
  return Literal::MakeTuple(std::move(results));
}

// topk(x), k=K, largest=L: the K largest (or smallest) elements of each row along the last
// dimension, in order, with their s32 positions; ties go to the lower position. Floats are
// ordered totally (-NaN < -inf < ... < -0 < +0 < ... < inf < NaN).
absl::StatusOr<Literal> EvalTopK(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 1 || !ops[0]->shape().IsArray() || ops[0]->shape().rank() < 1)
    return evalops::Malformed(inst, "expected one array operand of rank >= 1");
  const Literal& x = *ops[0];
  const PrimitiveType t = x.element_type();
  if (IsComplex(t)) return evalops::Malformed(inst, "topk of complex values");
  const DimVec& dims = x.shape().dimensions();
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  const int64_t len = dims[last], k = inst.attrs().k;
  if (k < 0 || k > len) return evalops::Malformed(inst, absl::StrCat("k=", k, " outside [0, ", len, "]"));
  DimVec out_dims = dims;
  out_dims[last] = k;
  if (!inst.shape().IsTuple() || inst.shape().tuple_shapes().size() != 2)
    return evalops::Malformed(inst, "result must be a (values, indices) tuple");
  const Shape& vs = inst.shape().tuple_shapes(0);
  const Shape& is = inst.shape().tuple_shapes(1);
  if (!vs.IsArray() || vs.dimensions() != out_dims || vs.element_type() != t || !is.IsArray() ||
      is.dimensions() != out_dims || !IsIntegral(is.element_type()))
    return evalops::Malformed(inst, "result shapes do not match the operand and k");
  absl::StatusOr<Literal> values = Literal::Create(vs);
  if (!values.ok()) return values.status();
  absl::StatusOr<Literal> indices = Literal::Create(is);
  if (!indices.ok()) return indices.status();
  evalops::ScalarCompare c;
  c.direction = inst.attrs().largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  c.type = IsFloatingPoint(t) ? ComparisonType::kTotalOrder
           : IsSignedIntegral(t) ? ComparisonType::kSigned
                                 : ComparisonType::kUnsigned;
  std::optional<evalops::CompareKeys> keys = evalops::CompareKeys::Make(x, c);
  if (!keys) return evalops::Malformed(inst, "cannot order the operand's type");
  bool failed = false;
  std::vector<int64_t> perm(len);
  int64_t row = 0;
  for (int64_t base = 0; base < x.element_count(); base += len, ++row) {
    for (int64_t i = 0; i < len; ++i) perm[i] = base + i;
    MergeSort(perm, [&](int64_t a, int64_t b) { return keys->Compare(a, b); }, &failed);
    for (int64_t j = 0; j < k; ++j) {
      evalops::CopyElement(x, perm[j], *values, row * k + j);
      indices->SetInt(row * k + j, perm[j] - base);
    }
    if (len == 0) break;
  }
  std::vector<Literal> parts;
  parts.push_back(std::move(*values));
  parts.push_back(std::move(*indices));
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = inst.shape();
  return out;
}

// scan(inputs..., inits...), dimensions={d}, num_carries=C: walks the inputs along dimension d
// (last to first when is_reverse), calling to_apply(input slices..., carries...) at each step;
// it returns (output slices..., new carries...). The result is (outputs..., final carries...),
// each output being its slices stacked along d. (XLA's newer op; is_associative only allows an
// implementation to reorder the steps, so a sequential walk is exact.) The body's parameter
// order (input slices, then carries) mirrors the operand order and its result order mirrors
// the scan's result; the corpus's cumsum (a commutative add) cannot tell the orders apart, and
// XLA's scan sources were not available to confirm them.
absl::StatusOr<Literal> EvalScan(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  auto bad = [&](const std::string& why) { return evalops::Malformed(inst, why); };
  const int64_t c = inst.attrs().num_carries;
  const int64_t nops = static_cast<int64_t>(ops.size());
  if (c < 0 || c >= nops) return bad("num_carries must leave at least one input");
  if (inst.to_apply() == nullptr) return bad("missing to_apply computation");
  const int64_t nin = nops - c;
  const DimVec& dims = ops[0]->shape().dimensions();
  for (int64_t i = 0; i < nin; ++i)
    if (!ops[i]->shape().IsArray() || ops[i]->shape().dimensions() != dims)
      return bad("inputs must be arrays of the same dimensions");
  absl::Status status;
  const int64_t dim = SingleDimension(inst, static_cast<int64_t>(dims.size()), &status);
  if (!status.ok()) return status;
  if (!inst.shape().IsTuple()) return bad("result must be a tuple (outputs..., carries...)");
  const int64_t nres = static_cast<int64_t>(inst.shape().tuple_shapes().size());
  const int64_t nout = nres - c;
  if (nout < 0) return bad("result tuple has fewer elements than num_carries");
  const int64_t len = dims[dim];
  // Carries must keep the init values' shapes.
  std::vector<Literal> carries;
  for (int64_t j = 0; j < c; ++j) {
    const Shape& rs = inst.shape().tuple_shapes(nout + j);
    if (!ops[nin + j]->shape().EqualIgnoringLayout(rs)) return bad(absl::StrCat("carry ", j, " shape differs from its init's"));
    carries.push_back(*ops[nin + j]);
  }
  // Input slices: the input without dimension d.
  DimVec slice_dims = dims;
  slice_dims.erase(slice_dims.begin() + dim);
  int64_t inner = 1;
  for (size_t d = dim + 1; d < dims.size(); ++d) inner *= dims[d];
  std::vector<Literal> in_slices;
  for (int64_t i = 0; i < nin; ++i) in_slices.emplace_back(Shape(ops[i]->element_type(), slice_dims));
  // Outputs: each result element is its per-step slice with dimension d (length len) inserted.
  std::vector<Literal> outputs;
  std::vector<Shape> out_slice_shapes;
  std::vector<int64_t> out_inner;
  for (int64_t o = 0; o < nout; ++o) {
    const Shape& rs = inst.shape().tuple_shapes(o);
    if (!rs.IsArray() || rs.rank() <= dim || rs.dimensions(dim) != len)
      return bad(absl::StrCat("output ", o, " must be an array with dimension ", dim, " of size ", len));
    DimVec sd = rs.dimensions();
    sd.erase(sd.begin() + dim);
    out_slice_shapes.emplace_back(rs.element_type(), sd);
    int64_t in_o = 1;
    for (int64_t d = dim + 1; d < rs.rank(); ++d) in_o *= rs.dimensions(d);
    out_inner.push_back(in_o);
    absl::StatusOr<Literal> r = Literal::Create(rs);
    if (!r.ok()) return r.status();
    outputs.push_back(std::move(*r));
  }
  if (!ctx.call) return bad("no evaluator to call computations with");
  std::vector<const Literal*> args;
  for (const Literal& l : in_slices) args.push_back(&l);
  for (const Literal& l : carries) args.push_back(&l);
  for (int64_t step = 0; step < len; ++step) {
    const int64_t pos = inst.attrs().is_reverse ? len - 1 - step : step;
    for (int64_t i = 0; i < nin; ++i) {
      Literal& s = in_slices[i];
      const int64_t n = s.element_count();
      for (int64_t e = 0; e < n; ++e) {
        const int64_t outer = inner ? e / inner : 0, in = inner ? e % inner : 0;
        evalops::CopyElement(*ops[i], (outer * len + pos) * inner + in, s, e);
      }
    }
    absl::StatusOr<Literal> r = ctx.call(*inst.to_apply(), args);
    if (!r.ok()) return r.status();
    if (!r->shape().IsTuple() || r->tuple_size() != nres) {
      if (!(nres == 1 && r->shape().IsArray()))
        return bad(absl::StrCat("to_apply returned ", r->shape().ToString(false), ", expected a tuple of ", nres));
    }
    auto leaf = [&](int64_t i) -> const Literal& { return r->shape().IsArray() ? *r : r->tuple_element(i); };
    for (int64_t o = 0; o < nout; ++o) {
      const Literal& s = leaf(o);
      if (!s.shape().EqualIgnoringLayout(out_slice_shapes[o]))
        return bad(absl::StrCat("to_apply output ", o, " is ", s.shape().ToString(false), ", expected ",
                                out_slice_shapes[o].ToString(false)));
      const int64_t n = s.element_count(), in_o = out_inner[o];
      for (int64_t e = 0; e < n; ++e) {
        const int64_t outer = in_o ? e / in_o : 0, in = in_o ? e % in_o : 0;
        evalops::CopyElement(s, e, outputs[o], (outer * len + pos) * in_o + in);
      }
    }
    for (int64_t j = 0; j < c; ++j) {
      const Literal& s = leaf(nout + j);
      if (!s.shape().EqualIgnoringLayout(carries[j].shape()))
        return bad(absl::StrCat("to_apply carry ", j, " is ", s.shape().ToString(false)));
      Shape keep = carries[j].shape();
      carries[j] = s;
      carries[j].mutable_shape() = keep;
    }
  }
  std::vector<Literal> parts = std::move(outputs);
  for (Literal& l : carries) parts.push_back(std::move(l));
  Literal out = Literal::MakeTuple(std::move(parts));
  out.mutable_shape() = inst.shape();
  return out;
}

absl::StatusOr<Literal> EvalXlaTopKCall(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 1 || !ops[0]->shape().IsArray() || ops[0]->shape().rank() < 1 ||
      inst.called_computations().size() != 1 || !inst.shape().IsTuple() || inst.shape().tuple_shapes().size() != 2)
    return evalops::Malformed(inst, "TopK takes one array and a comparator and returns (values, indices)");
  const Literal& x = *ops[0];
  const DimVec& dims = x.shape().dimensions();
  const int64_t last = static_cast<int64_t>(dims.size()) - 1;
  const Shape& is = inst.shape().tuple_shapes(1);
  if (!is.IsArray() || is.rank() != x.shape().rank()) return evalops::Malformed(inst, "indices shape");
  const int64_t k = is.dimensions(last);
  if (k < 0 || k > dims[last]) return evalops::Malformed(inst, "k exceeds the row length");
  // The positions along the last dim, in the indices' type.
  absl::StatusOr<Literal> iota = Literal::Create(Shape(is.element_type(), dims));
  if (!iota.ok()) return iota.status();
  for (int64_t i = 0; i < iota->element_count(); ++i) iota->SetInt(i, i % dims[last]);
  HloInstruction sort(HloOpcode::kSort, Shape::Tuple({Shape(x.element_type(), dims), Shape(is.element_type(), dims)}),
                      inst.name());
  sort.mutable_attrs().dimensions = {last};
  sort.mutable_attrs().is_stable = true;
  sort.mutable_called_computations().push_back(inst.called_computations()[0]);
  const Literal* sort_ops[] = {&x, &*iota};
  absl::StatusOr<Literal> sorted = EvalSort(sort, Operands(sort_ops, 2), ctx);
  if (!sorted.ok()) return sorted.status();
  std::vector<Literal> parts;
  for (int64_t leaf = 0; leaf < 2; ++leaf) {
    const Literal& full = sorted->tuple_element(leaf);
    absl::StatusOr<Literal> cut = Literal::Create(inst.shape().tuple_shapes(leaf));
    if (!cut.ok()) return cut.status();
    for (int64_t row = 0, n = full.element_count() / std::max<int64_t>(1, dims[last]); row < n; ++row)
      for (int64_t j = 0; j < k; ++j) evalops::CopyElement(full, row * dims[last] + j, *cut, row * k + j);
    parts.push_back(std::move(*cut));
  }
  return Literal::MakeTuple(std::move(parts));
}

}  // namespace hloc
