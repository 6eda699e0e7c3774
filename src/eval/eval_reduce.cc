// reduce (variadic), reduce-window (variadic, padding, strides, base and window dilation),
// select-and-scatter and map, with XLA's evaluation order: each output starts from the init
// value and folds the inputs in row-major order as reducer(accumulator, element). Reducers that
// are one add/multiply/maximum/minimum/and/or/xor of the two parameters run as a scalar loop
// that rounds every step to the element type; other scalar computations run as compiled
// ScalarPrograms, and only what those cannot express calls the computation per element.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "eval/eval_ops_util.h"
#include "eval/ops.h"

namespace hloc {
namespace {

using evalops::DimVec;

// Splits reduce-style operands (inputs..., inits...) and checks them: inputs are arrays of one
// shape, inits scalars of the matching element types.
absl::Status CheckInputsAndInits(const HloInstruction& inst, Operands ops, int64_t* n) {
  if (ops.empty() || ops.size() % 2 != 0)
    return evalops::Malformed(inst, "expected inputs followed by as many init values");
  *n = static_cast<int64_t>(ops.size()) / 2;
  for (int64_t i = 0; i < *n; ++i) {
    const Literal& in = *ops[i];
    const Literal& init = *ops[*n + i];
    if (!in.shape().IsArray() || !init.shape().IsArray() || init.shape().rank() != 0)
      return evalops::Malformed(inst, "inputs must be arrays and init values scalars");
    if (in.shape().dimensions() != ops[0]->shape().dimensions())
      return evalops::Malformed(inst, "inputs have different dimensions");
    if (in.element_type() != init.element_type())
      return evalops::Malformed(inst, absl::StrCat("input ", i, " and its init value have different types"));
  }
  if (inst.to_apply() == nullptr) return evalops::Malformed(inst, "missing to_apply computation");
  return absl::OkStatus();
}

// Result literals (one per input) of `dims`, each filled with its init value; checks that
// inst.shape() agrees.
absl::StatusOr<std::vector<Literal>> InitResults(const HloInstruction& inst, Operands ops, int64_t n,
                                                 const DimVec& dims) {
  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<const Shape*> leaf = evalops::ResultLeaf(inst.shape(), i, n);
    if (!leaf.ok()) return evalops::Malformed(inst, std::string(leaf.status().message()));
    if ((*leaf)->element_type() != ops[i]->element_type())
      return evalops::Malformed(inst, absl::StrCat("result ", i, " type differs from its input's"));
    if (auto s = evalops::CheckResultDims(**leaf, dims, "result"); !s.ok())
      return evalops::Malformed(inst, std::string(s.message()));
    absl::StatusOr<Literal> r = Literal::Create(**leaf);
    if (!r.ok()) return r.status();
    for (int64_t e = 0; e < r->element_count(); ++e) evalops::CopyElement(*ops[n + i], 0, *r, e);
    results.push_back(std::move(*r));
  }
  return results;
}

Literal Finish(std::vector<Literal> results) {
  if (results.size() == 1) return std::move(results[0]);
  return Literal::MakeTuple(std::move(results));
}

// Folds input element `in_index` of every input into accumulator `acc_index` of every result
// with the reducer computation (the general path): run as a compiled scalar program when it
// compiles, else called through the evaluator.
class GeneralFold {
 public:
  GeneralFold(const HloInstruction& inst, const HloComputation& comp, Operands inputs,
              std::vector<Literal>& accs, EvalContext& ctx)
      : inst_(inst), comp_(comp), inputs_(inputs.begin(), inputs.end()), accs_(accs), ctx_(ctx),
        n_(static_cast<int64_t>(inputs.size())), args_(ArgTypes(inputs)) {
    for (const Literal* l : inputs) types_.push_back(l->element_type());
    program_ = evalops::ScalarProgram::Compile(&comp);
    if (program_) {
      bool fits = program_->num_params() == 2 * n_ && program_->num_results() == n_;
      for (int64_t i = 0; fits && i < n_; ++i) fits = program_->result_type(i) == types_[i];
      if (!fits) program_.reset();
    }
    values_.resize(3 * n_);
  }
  absl::Status Fold(int64_t acc_index, int64_t in_index) {
    if (program_) {
      for (int64_t i = 0; i < n_; ++i) {
        values_[i] = evalops::LoadValue(accs_[i], acc_index);
        values_[n_ + i] = evalops::LoadValue(*inputs_[i], in_index);
      }
      program_->Run(values_.data(), values_.data() + 2 * n_);
      for (int64_t i = 0; i < n_; ++i) evalops::StoreValue(accs_[i], acc_index, values_[2 * n_ + i]);
      return absl::OkStatus();
    }
    for (int64_t i = 0; i < n_; ++i) {
      evalops::CopyElement(accs_[i], acc_index, args_.arg(i), 0);
      evalops::CopyElement(*inputs_[i], in_index, args_.arg(n_ + i), 0);
    }
    absl::StatusOr<Literal> r = evalops::CallScalarComputation(ctx_, comp_, args_.span(), types_, inst_);
    if (!r.ok()) return r.status();
    for (int64_t i = 0; i < n_; ++i) evalops::CopyElement(evalops::ScalarLeaf(*r, i), 0, accs_[i], acc_index);
    return absl::OkStatus();
  }

 private:
  static std::vector<PrimitiveType> ArgTypes(Operands inputs) {
    std::vector<PrimitiveType> t;
    for (int k = 0; k < 2; ++k)
      for (const Literal* l : inputs) t.push_back(l->element_type());
    return t;
  }
  const HloInstruction& inst_;
  const HloComputation& comp_;
  std::vector<const Literal*> inputs_;
  std::vector<Literal>& accs_;
  EvalContext& ctx_;
  int64_t n_;
  evalops::ScalarArgs args_;
  std::vector<PrimitiveType> types_;
  std::optional<evalops::ScalarProgram> program_;
  std::vector<evalops::Value> values_;
};

// Window geometry over an input: the output dimensions, and per dimension a table giving, for
// output position o and window position k, the input index (or -1 for padding and the holes
// of base dilation).
struct WindowTables {
  DimVec out_dims, sizes;
  std::vector<std::vector<int64_t>> index;
};

absl::StatusOr<WindowTables> MakeWindowTables(const DimVec& in_dims, const std::optional<Window>& window) {
  WindowTables t;
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  std::vector<WindowDimension> wds;
  if (window) wds = window->dimensions;
  if (static_cast<int64_t>(wds.size()) != rank)
    return absl::InvalidArgumentError(absl::StrCat("window has ", wds.size(), " dimensions, operand rank is ", rank));
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& wd = wds[d];
    const int64_t n = in_dims[d];
    absl::StatusOr<int64_t> windows = evalops::WindowedOutputSize(n, wd);
    if (!windows.ok()) return windows.status();
    const int64_t out = *windows;
    t.out_dims.push_back(out);
    t.sizes.push_back(wd.size);
    // The lookup table has out x size entries; refuse sizes no real program reaches rather
    // than allocate gigabytes for a malformed window.
    absl::StatusOr<int64_t> cells = evalops::CheckedProduct({out, wd.size});
    if (!cells.ok() || *cells > (int64_t{1} << 27))
      return absl::InvalidArgumentError("window too large to evaluate");
    std::vector<int64_t> tab(*cells, -1);
    for (int64_t o = 0; o < out; ++o)
      for (int64_t k = 0; k < wd.size; ++k) {
        const int64_t pos = o * wd.stride - wd.padding_low + k * wd.window_dilation;
        if (pos % wd.base_dilation != 0) continue;
        const int64_t idx = pos / wd.base_dilation;
        if (idx >= 0 && idx < n) tab[o * wd.size + k] = idx;
      }
    t.index.push_back(std::move(tab));
  }
  return t;
}

// Calls fn(input_linear_index) for every in-bounds input element of the window at output
// position `oidx`, in row-major window order.
template <typename Fn>
absl::Status ForEachInWindow(const WindowTables& t, const DimVec& in_strides, const DimVec& oidx,
                             DimVec& widx, Fn&& fn) {
  const int64_t rank = static_cast<int64_t>(t.sizes.size());
  for (int64_t s : t.sizes)
    if (s == 0) return absl::OkStatus();
  std::fill(widx.begin(), widx.end(), 0);
  do {
    int64_t off = 0;
    bool valid = true;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t i = t.index[d][oidx[d] * t.sizes[d] + widx[d]];
      if (i < 0) { valid = false; break; }
      off += i * in_strides[d];
    }
    if (valid)
      if (auto s = fn(off); !s.ok()) return s;
  } while (evalops::NextIndex(t.sizes, absl::MakeSpan(widx)));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalReduce(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = 0;
  if (auto s = CheckInputsAndInits(inst, ops, &n); !s.ok()) return s;
  const DimVec& in_dims = ops[0]->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  const DimVec& red = inst.attrs().dimensions;
  if (auto s = evalops::CheckDimList(red, rank, "reduce dimensions"); !s.ok())
    return evalops::Malformed(inst, std::string(s.message()));
  DimVec out_dims, kept;
  for (int64_t d = 0; d < rank; ++d)
    if (std::find(red.begin(), red.end(), d) == red.end()) {
      out_dims.push_back(in_dims[d]);
      kept.push_back(d);
    }
  absl::StatusOr<std::vector<Literal>> results = InitResults(inst, ops, n, out_dims);
  if (!results.ok()) return results.status();
  // Input element -> accumulator offset: kept dims carry the output's row-major strides.
  const DimVec out_strides = RowMajorStrides(out_dims);
  DimVec strides(rank, 0);
  for (size_t i = 0; i < kept.size(); ++i) strides[kept[i]] = out_strides[i];

  const PrimitiveType type = ops[0]->element_type();
  if (n == 1) {
    if (std::optional<evalops::ScalarReducer> r = evalops::FastReducerFor(inst.to_apply(), type)) {
      Literal& out = (*results)[0];
      std::vector<evalops::Value> acc(out.element_count(), r->Load(*ops[1], 0));
      const Literal& in = *ops[0];
      evalops::ForEachOffset(in_dims, strides, [&](int64_t linear, int64_t off) {
        acc[off] = r->Combine(acc[off], r->Load(in, linear));
      });
      for (int64_t i = 0; i < out.element_count(); ++i) r->Store(out, i, acc[i]);
      return Finish(std::move(*results));
    }
  }
  GeneralFold fold(inst, *inst.to_apply(), ops.subspan(0, n), *results, ctx);
  absl::Status status;
  evalops::ForEachOffset(in_dims, strides, [&](int64_t linear, int64_t off) {
    if (status.ok()) status = fold.Fold(off, linear);
  });
  if (!status.ok()) return status;
  return Finish(std::move(*results));
}

absl::StatusOr<Literal> EvalReduceWindow(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  int64_t n = 0;
  if (auto s = CheckInputsAndInits(inst, ops, &n); !s.ok()) return s;
  const DimVec& in_dims = ops[0]->shape().dimensions();
  absl::StatusOr<WindowTables> t = MakeWindowTables(in_dims, inst.attrs().window);
  if (!t.ok()) return evalops::Malformed(inst, std::string(t.status().message()));
  absl::StatusOr<std::vector<Literal>> results = InitResults(inst, ops, n, t->out_dims);
  if (!results.ok()) return results.status();
  const DimVec in_strides = RowMajorStrides(in_dims);
  DimVec oidx(in_dims.size(), 0), widx(in_dims.size(), 0);
  const int64_t total = (*results)[0].element_count();
  const PrimitiveType type = ops[0]->element_type();
  std::optional<evalops::ScalarReducer> r;
  if (n == 1) r = evalops::FastReducerFor(inst.to_apply(), type);
  if (r) {
    Literal& out = (*results)[0];
    const Literal& in = *ops[0];
    const evalops::Value init = r->Load(*ops[1], 0);
    for (int64_t o = 0; o < total; ++o, evalops::NextIndex(t->out_dims, absl::MakeSpan(oidx))) {
      evalops::Value acc = init;
      (void)ForEachInWindow(*t, in_strides, oidx, widx, [&](int64_t off) {
        acc = r->Combine(acc, r->Load(in, off));
        return absl::OkStatus();
      });
      r->Store(out, o, acc);
    }
    return Finish(std::move(*results));
  }
  GeneralFold fold(inst, *inst.to_apply(), ops.subspan(0, n), *results, ctx);
  for (int64_t o = 0; o < total; ++o, evalops::NextIndex(t->out_dims, absl::MakeSpan(oidx))) {
    absl::Status s = ForEachInWindow(*t, in_strides, oidx, widx,
                                     [&](int64_t off) { return fold.Fold(o, off); });
    if (!s.ok()) return s;
  }
  return Finish(std::move(*results));
}

// select-and-scatter(operand, source, init): for each window (one per source element) the
// select computation picks an operand element (the first one, replaced whenever
// select(current_pick, candidate) is false); the source element is then combined into the
// result at the picked position with the scatter computation. Windows wholly in padding pick
// nothing.
absl::StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (ops.size() != 3) return evalops::Malformed(inst, "expected operand, source and init value");
  const Literal& operand = *ops[0];
  const Literal& source = *ops[1];
  const Literal& init = *ops[2];
  if (!operand.shape().IsArray() || !source.shape().IsArray() || !init.shape().IsArray() ||
      init.shape().rank() != 0)
    return evalops::Malformed(inst, "operand and source must be arrays, init a scalar");
  if (source.element_type() != init.element_type())
    return evalops::Malformed(inst, "source and init value have different types");
  if (inst.called_computations().size() != 2 || !inst.called_computations()[0] ||
      !inst.called_computations()[1])
    return evalops::Malformed(inst, "expected select and scatter computations");
  const HloComputation& select = *inst.called_computations()[0];
  const HloComputation& scatter = *inst.called_computations()[1];
  const DimVec& in_dims = operand.shape().dimensions();
  absl::StatusOr<WindowTables> t = MakeWindowTables(in_dims, inst.attrs().window);
  if (!t.ok()) return evalops::Malformed(inst, std::string(t.status().message()));
  if (t->out_dims != source.shape().dimensions())
    return evalops::Malformed(inst, "source dimensions differ from the windowed operand's");
  if (!inst.shape().IsArray() || inst.shape().dimensions() != in_dims ||
      inst.shape().element_type() != init.element_type())
    return evalops::Malformed(inst, "result must have the operand's dimensions and the init value's type");
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  for (int64_t e = 0; e < out->element_count(); ++e) evalops::CopyElement(init, 0, *out, e);

  const PrimitiveType otype = operand.element_type();
  std::optional<evalops::ScalarCompare> fast_select = evalops::MatchScalarCompare(&select, otype, 2);
  std::optional<evalops::ScalarReducer> fast_scatter = evalops::FastReducerFor(&scatter, init.element_type());
  std::optional<evalops::CompareKeys> keys;
  if (fast_select) keys = evalops::CompareKeys::Make(operand, *fast_select);
  // Otherwise compiled scalar programs, when the computations compile.
  std::optional<evalops::ScalarProgram> sel_prog = evalops::ScalarProgram::Compile(&select);
  if (sel_prog && (sel_prog->num_params() != 2 || sel_prog->num_results() != 1 ||
                   sel_prog->result_type(0) != PrimitiveType::PRED))
    sel_prog.reset();
  std::optional<evalops::ScalarProgram> sc_prog = evalops::ScalarProgram::Compile(&scatter);
  if (sc_prog && (sc_prog->num_params() != 2 || sc_prog->num_results() != 1 ||
                  sc_prog->result_type(0) != init.element_type()))
    sc_prog.reset();
  evalops::Value pv[3];
  evalops::ScalarArgs sel_args({otype, otype});
  evalops::ScalarArgs sc_args({init.element_type(), init.element_type()});
  const PrimitiveType pred = PrimitiveType::PRED;
  const PrimitiveType stype = init.element_type();

  const DimVec in_strides = RowMajorStrides(in_dims);
  DimVec oidx(in_dims.size(), 0), widx(in_dims.size(), 0);
  const int64_t total = source.element_count();
  for (int64_t o = 0; o < total; ++o, evalops::NextIndex(t->out_dims, absl::MakeSpan(oidx))) {
    int64_t picked = -1;
    absl::Status s = ForEachInWindow(*t, in_strides, oidx, widx, [&](int64_t off) -> absl::Status {
      if (picked < 0) {
        picked = off;
        return absl::OkStatus();
      }
      bool keep;
      if (keys) {
        keep = keys->Compare(picked, off);
      } else if (sel_prog) {
        pv[0] = evalops::LoadValue(operand, picked);
        pv[1] = evalops::LoadValue(operand, off);
        sel_prog->Run(pv, pv + 2);
        keep = pv[2].i != 0;
      } else {
        evalops::CopyElement(operand, picked, sel_args.arg(0), 0);
        evalops::CopyElement(operand, off, sel_args.arg(1), 0);
        absl::StatusOr<Literal> r = evalops::CallScalarComputation(ctx, select, sel_args.span(), {pred}, inst);
        if (!r.ok()) return r.status();
        keep = r->GetPred(0);
      }
      if (!keep) picked = off;
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    if (picked < 0) continue;
    if (fast_scatter) {
      fast_scatter->Store(*out, picked,
                          fast_scatter->Combine(fast_scatter->Load(*out, picked), fast_scatter->Load(source, o)));
      continue;
    }
    if (sc_prog) {
      pv[0] = evalops::LoadValue(*out, picked);
      pv[1] = evalops::LoadValue(source, o);
      sc_prog->Run(pv, pv + 2);
      evalops::StoreValue(*out, picked, pv[2]);
      continue;
    }
    evalops::CopyElement(*out, picked, sc_args.arg(0), 0);
    evalops::CopyElement(source, o, sc_args.arg(1), 0);
    absl::StatusOr<Literal> r = evalops::CallScalarComputation(ctx, scatter, sc_args.span(), {stype}, inst);
    if (!r.ok()) return r.status();
    evalops::CopyElement(evalops::ScalarLeaf(*r, 0), 0, *out, picked);
  }
  return out;
}

// map(ops...): result[i] = to_apply(op_0[i], op_1[i], ...).
absl::StatusOr<Literal> EvalMap(const HloInstruction& inst, Operands ops, EvalContext& ctx) {
  if (inst.to_apply() == nullptr) return evalops::Malformed(inst, "missing to_apply computation");
  if (!inst.shape().IsArray()) return evalops::Malformed(inst, "result must be an array");
  std::vector<PrimitiveType> types;
  for (const Literal* l : ops) {
    if (!l->shape().IsArray() || l->shape().dimensions() != inst.shape().dimensions())
      return evalops::Malformed(inst, "operands must be arrays with the result's dimensions");
    types.push_back(l->element_type());
  }
  absl::StatusOr<Literal> out = Literal::Create(inst.shape());
  if (!out.ok()) return out.status();
  const PrimitiveType rtype = inst.shape().element_type();
  if (ops.size() == 2 && types[0] == rtype && types[1] == rtype) {
    if (std::optional<evalops::ScalarReducer> r = evalops::FastReducerFor(inst.to_apply(), rtype)) {
      for (int64_t e = 0; e < out->element_count(); ++e)
        r->Store(*out, e, r->Combine(r->Load(*ops[0], e), r->Load(*ops[1], e)));
      return out;
    }
  }
  std::optional<evalops::ScalarProgram> prog = evalops::ScalarProgram::Compile(inst.to_apply());
  if (prog && prog->num_params() == static_cast<int64_t>(ops.size()) && prog->num_results() == 1 &&
      prog->result_type(0) == rtype) {
    std::vector<evalops::Value> v(ops.size() + 1);
    for (int64_t e = 0; e < out->element_count(); ++e) {
      for (size_t i = 0; i < ops.size(); ++i) v[i] = evalops::LoadValue(*ops[i], e);
      prog->Run(v.data(), v.data() + ops.size());
      evalops::StoreValue(*out, e, v[ops.size()]);
    }
    return out;
  }
  evalops::ScalarArgs args(types);
  for (int64_t e = 0; e < out->element_count(); ++e) {
    for (size_t i = 0; i < ops.size(); ++i) evalops::CopyElement(*ops[i], e, args.arg(i), 0);
    absl::StatusOr<Literal> r = evalops::CallScalarComputation(ctx, *inst.to_apply(), args.span(), {rtype}, inst);
    if (!r.ok()) return r.status();
    evalops::CopyElement(evalops::ScalarLeaf(*r, 0), 0, *out, e);
  }
  return out;
}

}  // namespace hloc
