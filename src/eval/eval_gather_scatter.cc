// gather and scatter with full dimension numbers, including operand/start-indices batching
// dimensions. Gather clamps each start index so the whole slice fits in the operand (XLA's
// rule); scatter skips an update window entirely when any part of it would fall outside the
// operand (XLA's evaluator rule), and applies updates in row-major order of the updates.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

bool Contains(const DimVec& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Index values as signed integers; unsigned values beyond int64 saturate (they clamp or skip
// the same way as any index past the end).
std::vector<int64_t> LoadIndices(const Literal& l) {
  std::vector<int64_t> v = evalops::LoadInts(l);
  if (l.element_type() == PrimitiveType::U64)
    for (int64_t& x : v)
      if (x < 0) x = std::numeric_limits<int64_t>::max();
  return v;
}

// The dims of `rank` other than `ivd` (the index vector dimension), in order.
DimVec BatchDimsOfIndices(int64_t rank, int64_t ivd) {
  DimVec out;
  for (int64_t d = 0; d < rank; ++d)
    if (d != ivd) out.push_back(d);
  return out;
}

// Reads the index vector at a batch position of the indices: `base` is the offset of the
// position with the index vector dim at 0.
struct IndexReader {
  const std::vector<int64_t>* values;
  int64_t vec_stride;  // stride of the index vector dim (0 when implicit)
  int64_t Get(int64_t base, int64_t k) const { return (*values)[base + k * vec_stride]; }
};

absl::Status CheckSortedUnique(const DimVec& dims, int64_t rank, const std::string& what) {
  if (auto s = evalops::CheckDimList(dims, rank, what); !s.ok()) return s;
  if (!std::is_sorted(dims.begin(), dims.end()))
    return absl::InvalidArgumentError(absl::StrCat(what, " must be sorted"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalGather(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 2) return evalops::Malformed(inst, "expected operand and start indices");
  const Literal& operand = *ops[0];
  const Literal& indices = *ops[1];
  if (!operand.shape().IsArray() || !indices.shape().IsArray() || !IsIntegral(indices.element_type()))
    return evalops::Malformed(inst, "operand must be an array and start indices an integer array");
  if (!inst.attrs().gather_dimension_numbers) return evalops::Malformed(inst, "missing gather dimension numbers");
  const GatherDimensionNumbers& g = *inst.attrs().gather_dimension_numbers;
  const DimVec& odims = operand.shape().dimensions();
  const DimVec& idims = indices.shape().dimensions();
  const int64_t orank = operand.shape().rank(), irank = indices.shape().rank();
  const DimVec& slice = inst.attrs().dynamic_slice_sizes;
  auto bad = [&](const std::string& why) { return evalops::Malformed(inst, why); };
  if (static_cast<int64_t>(slice.size()) != orank) return bad("slice_sizes must have one entry per operand dimension");
  for (int64_t d = 0; d < orank; ++d)
    if (slice[d] < 0 || slice[d] > odims[d]) return bad(absl::StrCat("slice size ", slice[d], " does not fit dimension ", d));
  const int64_t ivd = g.index_vector_dim;
  if (ivd < 0 || ivd > irank) return bad("index_vector_dim out of range");
  const int64_t vec_size = ivd == irank ? 1 : idims[ivd];
  if (static_cast<int64_t>(g.start_index_map.size()) != vec_size)
    return bad("start_index_map size differs from the index vector size");
  DimVec removed = g.collapsed_slice_dims;
  removed.insert(removed.end(), g.operand_batching_dims.begin(), g.operand_batching_dims.end());
  if (auto s = evalops::CheckDimList(g.start_index_map, orank, "start_index_map"); !s.ok()) return bad(std::string(s.message()));
  if (auto s = evalops::CheckDimList(removed, orank, "collapsed slice + operand batching dims"); !s.ok())
    return bad(std::string(s.message()));
  for (int64_t d : removed)
    if (slice[d] != 1) return bad("collapsed and batching dimensions must have slice size 1");
  DimVec ib = g.start_indices_batching_dims;
  if (ib.size() != g.operand_batching_dims.size()) return bad("batching dimension lists differ in size");
  for (int64_t d : ib)
    if (d == ivd) return bad("start_indices_batching_dims contains index_vector_dim");
  if (auto s = evalops::CheckDimList(ib, irank, "start_indices_batching_dims"); !s.ok()) return bad(std::string(s.message()));
  DimVec offset_operand_dims;  // operand dims that become output offset dims, in order
  for (int64_t d = 0; d < orank; ++d)
    if (!Contains(removed, d)) offset_operand_dims.push_back(d);
  const DimVec ibatch = BatchDimsOfIndices(irank, ivd);
  const int64_t out_rank = static_cast<int64_t>(ibatch.size() + offset_operand_dims.size());
  if (g.offset_dims.size() != offset_operand_dims.size()) return bad("offset_dims has the wrong size");
  if (auto s = CheckSortedUnique(g.offset_dims, out_rank, "offset_dims"); !s.ok()) return bad(std::string(s.message()));
  DimVec out_dims(out_rank), out_batch_dims;
  for (size_t j = 0; j < g.offset_dims.size(); ++j) out_dims[g.offset_dims[j]] = slice[offset_operand_dims[j]];
  for (int64_t d = 0, b = 0; d < out_rank; ++d)
    if (!Contains(g.offset_dims, d)) {
      out_batch_dims.push_back(d);
      out_dims[d] = idims[ibatch[b++]];
    }
  if (auto s = evalops::CheckResultDims(inst.shape(), out_dims, "gather"); !s.ok()) return bad(std::string(s.message()));
  if (inst.shape().element_type() != operand.element_type()) return bad("result type differs from the operand's");
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();

  // Position in ibatch of each operand batching dim's start_indices dim.
  DimVec batch_pos;
  for (int64_t d : ib) batch_pos.push_back(std::find(ibatch.begin(), ibatch.end(), d) - ibatch.begin());
  const std::vector<int64_t> ivals = LoadIndices(indices);
  const DimVec istr = RowMajorStrides(idims), ostr = RowMajorStrides(odims), outstr = RowMajorStrides(out_dims);
  IndexReader reader{&ivals, ivd == irank ? 0 : istr[ivd]};
  DimVec bsizes, bstr_in, bstr_out, slice_sizes, slice_str_op, slice_str_out;
  for (size_t j = 0; j < ibatch.size(); ++j) {
    bsizes.push_back(idims[ibatch[j]]);
    bstr_in.push_back(istr[ibatch[j]]);
    bstr_out.push_back(outstr[out_batch_dims[j]]);
  }
  for (size_t j = 0; j < offset_operand_dims.size(); ++j) {
    slice_sizes.push_back(slice[offset_operand_dims[j]]);
    slice_str_op.push_back(ostr[offset_operand_dims[j]]);
    slice_str_out.push_back(outstr[g.offset_dims[j]]);
  }
  DimVec bidx(ibatch.size(), 0), start(orank, 0);
  const int64_t nbatch = *evalops::CheckedProduct(bsizes);
  for (int64_t bi = 0; bi < nbatch; ++bi, evalops::NextIndex(bsizes, absl::MakeSpan(bidx))) {
    int64_t ibase = 0, obase = 0;
    for (size_t j = 0; j < bidx.size(); ++j) {
      ibase += bidx[j] * bstr_in[j];
      obase += bidx[j] * bstr_out[j];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < vec_size; ++k) start[g.start_index_map[k]] = reader.Get(ibase, k);
    for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) start[g.operand_batching_dims[i]] = bidx[batch_pos[i]];
    int64_t op_base = 0;
    for (int64_t d = 0; d < orank; ++d) {
      start[d] = std::clamp<int64_t>(start[d], 0, odims[d] - slice[d]);
      op_base += start[d] * ostr[d];
    }
    evalops::ForEachOffset2(slice_sizes, slice_str_op, slice_str_out, [&](int64_t a, int64_t b) {
      evalops::CopyElement(operand, op_base + a, *out, obase + b);
    });
  }
  return out;
}

// scatter(operands..., indices, updates..., to_apply).
absl::StatusOr<Literal> EvalScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  auto bad = [&](const std::string& why) { return evalops::Malformed(inst, why); };
  if (ops.size() < 3 || ops.size() % 2 != 1) return bad("expected operands, indices and as many updates");
  const int64_t n = static_cast<int64_t>(ops.size()) / 2;
  const Literal& indices = *ops[n];
  if (!inst.attrs().scatter_dimension_numbers) return bad("missing scatter dimension numbers");
  if (inst.to_apply() == nullptr) return bad("missing to_apply computation");
  const ScatterDimensionNumbers& s = *inst.attrs().scatter_dimension_numbers;
  if (!indices.shape().IsArray() || !IsIntegral(indices.element_type())) return bad("indices must be an integer array");
  const DimVec& odims = ops[0]->shape().dimensions();
  const DimVec& udims = ops[n + 1]->shape().dimensions();
  const DimVec& idims = indices.shape().dimensions();
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Literal& o = *ops[i];
    const Literal& u = *ops[n + 1 + i];
    if (!o.shape().IsArray() || !u.shape().IsArray() || o.shape().dimensions() != odims ||
        u.shape().dimensions() != udims)
      return bad("operands (and updates) must be arrays of one shape");
    if (o.element_type() != u.element_type()) return bad(absl::StrCat("operand ", i, " and update ", i, " types differ"));
    types.push_back(o.element_type());
  }
  const int64_t orank = static_cast<int64_t>(odims.size()), urank = static_cast<int64_t>(udims.size());
  const int64_t irank = static_cast<int64_t>(idims.size());
  const int64_t ivd = s.index_vector_dim;
  if (ivd < 0 || ivd > irank) return bad("index_vector_dim out of range");
  const int64_t vec_size = ivd == irank ? 1 : idims[ivd];
  if (static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()) != vec_size)
    return bad("scatter_dims_to_operand_dims size differs from the index vector size");
  if (auto st = evalops::CheckDimList(s.scatter_dims_to_operand_dims, orank, "scatter_dims_to_operand_dims"); !st.ok())
    return bad(std::string(st.message()));
  if (auto st = CheckSortedUnique(s.update_window_dims, urank, "update_window_dims"); !st.ok()) return bad(std::string(st.message()));
  DimVec removed = s.inserted_window_dims;
  removed.insert(removed.end(), s.input_batching_dims.begin(), s.input_batching_dims.end());
  if (auto st = evalops::CheckDimList(removed, orank, "inserted window + input batching dims"); !st.ok())
    return bad(std::string(st.message()));
  DimVec window_operand_dims;
  for (int64_t d = 0; d < orank; ++d)
    if (!Contains(removed, d)) window_operand_dims.push_back(d);
  if (window_operand_dims.size() != s.update_window_dims.size())
    return bad("update_window_dims size must equal operand rank minus inserted and batching dims");
  DimVec wsize(orank, 1);  // update window extent per operand dim
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    wsize[window_operand_dims[j]] = udims[s.update_window_dims[j]];
    if (wsize[window_operand_dims[j]] > odims[window_operand_dims[j]]) return bad("update window larger than the operand");
  }
  const DimVec ibatch = BatchDimsOfIndices(irank, ivd);
  DimVec uscatter;  // update dims that index scatter positions, in order
  for (int64_t d = 0; d < urank; ++d)
    if (!Contains(s.update_window_dims, d)) uscatter.push_back(d);
  if (uscatter.size() != ibatch.size()) return bad("updates scatter dims do not match the indices' batch dims");
  for (size_t j = 0; j < uscatter.size(); ++j)
    if (udims[uscatter[j]] != idims[ibatch[j]]) return bad("updates scatter dim sizes differ from the indices'");
  const DimVec& ib = s.scatter_indices_batching_dims;
  if (ib.size() != s.input_batching_dims.size()) return bad("batching dimension lists differ in size");
  if (Contains(ib, ivd)) return bad("scatter_indices_batching_dims contains index_vector_dim");
  if (auto st = evalops::CheckDimList(ib, irank, "scatter_indices_batching_dims"); !st.ok()) return bad(std::string(st.message()));

  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<const Shape*> leaf = evalops::ResultLeaf(inst.shape(), i, n);
    if (!leaf.ok()) return bad(std::string(leaf.status().message()));
    if ((*leaf)->element_type() != types[i] || (*leaf)->dimensions() != odims)
      return bad("results must have the operands' shapes");
    results.push_back(*ops[i]);
    results.back().mutable_shape() = **leaf;
  }

  DimVec batch_pos;
  for (int64_t d : ib) batch_pos.push_back(std::find(ibatch.begin(), ibatch.end(), d) - ibatch.begin());
  const std::vector<int64_t> ivals = LoadIndices(indices);
  const DimVec istr = RowMajorStrides(idims), ostr = RowMajorStrides(odims), ustr = RowMajorStrides(udims);
  IndexReader reader{&ivals, ivd == irank ? 0 : istr[ivd]};
  DimVec ssizes, sstr_idx, sstr_upd, wsizes, wstr_op, wstr_upd;
  for (size_t j = 0; j < uscatter.size(); ++j) {
    ssizes.push_back(udims[uscatter[j]]);
    sstr_idx.push_back(istr[ibatch[j]]);
    sstr_upd.push_back(ustr[uscatter[j]]);
  }
  for (size_t j = 0; j < window_operand_dims.size(); ++j) {
    wsizes.push_back(udims[s.update_window_dims[j]]);
    wstr_op.push_back(ostr[window_operand_dims[j]]);
    wstr_upd.push_back(ustr[s.update_window_dims[j]]);
  }

  // How an update combines with the operand: a recognized binary op, an overwrite (to_apply
  // returns its update parameter), or a call of to_apply.
  std::optional<evalops::ScalarReducer> fast;
  bool overwrite = false;
  if (n == 1) {
    fast = evalops::FastReducerFor(inst.to_apply(), types[0]);
    const HloComputation* c = inst.to_apply();
    const HloInstruction* root = c->root_instruction();
    overwrite = !fast && c->num_parameters() == 2 && root != nullptr &&
                root == c->parameter_instruction(1) && root->shape().IsArray() &&
                root->shape().rank() == 0 && root->shape().element_type() == types[0];
  }
  std::optional<evalops::ScalarProgram> prog;
  if (!fast && !overwrite) {
    prog = evalops::ScalarProgram::Compile(inst.to_apply());
    bool fits = prog && prog->num_params() == 2 * n && prog->num_results() == n;
    for (int64_t i = 0; fits && i < n; ++i) fits = prog->result_type(i) == types[i];
    if (!fits) prog.reset();
  }
  std::vector<evalops::Value> pv(3 * n);
  std::vector<PrimitiveType> arg_types = types;
  arg_types.insert(arg_types.end(), types.begin(), types.end());
  evalops::ScalarArgs args(arg_types);
  absl::Status status;
  auto apply = [&](int64_t op_off, int64_t upd_off) {
    if (!status.ok()) return;
    if (fast) {
      fast->Store(results[0], op_off,
                  fast->Combine(fast->Load(results[0], op_off), fast->Load(*ops[n + 1], upd_off)));
      return;
    }
    if (overwrite) {
      evalops::CopyElement(*ops[n + 1], upd_off, results[0], op_off);
      return;
    }
    if (prog) {
      for (int64_t i = 0; i < n; ++i) {
        pv[i] = evalops::LoadValue(results[i], op_off);
        pv[n + i] = evalops::LoadValue(*ops[n + 1 + i], upd_off);
      }
      prog->Run(pv.data(), pv.data() + 2 * n);
      for (int64_t i = 0; i < n; ++i) evalops::StoreValue(results[i], op_off, pv[2 * n + i]);
      return;
    }
    for (int64_t i = 0; i < n; ++i) {
      evalops::CopyElement(results[i], op_off, args.arg(i), 0);
      evalops::CopyElement(*ops[n + 1 + i], upd_off, args.arg(n + i), 0);
    }
    absl::StatusOr<Literal> r = evalops::CallScalarComputation(ctx, *inst.to_apply(), args.span(), types, inst);
    if (!r.ok()) {
      status = r.status();
      return;
    }
    for (int64_t i = 0; i < n; ++i) evalops::CopyElement(evalops::ScalarLeaf(*r, i), 0, results[i], op_off);
  };

  DimVec sidx(ssizes.size(), 0), start(orank, 0);
  const int64_t nscatter = *evalops::CheckedProduct(ssizes);
  for (int64_t si = 0; si < nscatter; ++si, evalops::NextIndex(ssizes, absl::MakeSpan(sidx))) {
    int64_t ibase = 0, ubase = 0;
    for (size_t j = 0; j < sidx.size(); ++j) {
      ibase += sidx[j] * sstr_idx[j];
      ubase += sidx[j] * sstr_upd[j];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < vec_size; ++k) start[s.scatter_dims_to_operand_dims[k]] = reader.Get(ibase, k);
    for (size_t i = 0; i < s.input_batching_dims.size(); ++i) start[s.input_batching_dims[i]] = sidx[batch_pos[i]];
    bool in_bounds = true;
    int64_t op_base = 0;
    for (int64_t d = 0; d < orank; ++d) {
      if (start[d] < 0 || start[d] > odims[d] - wsize[d]) {
        in_bounds = false;
        break;
      }
      op_base += start[d] * ostr[d];
    }
    if (!in_bounds) continue;
    evalops::ForEachOffset2(wsizes, wstr_op, wstr_upd,
                            [&](int64_t a, int64_t b) { apply(op_base + a, ubase + b); });
    if (!status.ok()) return status;
  }
  if (n == 1) return std::move(results[0]);
  return Literal::MakeTuple(std::move(results));
}

}  // namespace hloc
