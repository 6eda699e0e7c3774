// The pieces of scatter, scan and select-and-scatter that the CPU kernels and the GPU's kernels
// share (see scatter_scan_emitters.h).
#include "codegen/elemental/scatter_scan_emitters.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen {

absl::StatusOr<ScatterIndexing> ScatterIndexing::For(const ScatterDimensionNumbers& dn, const Shape& operand_shape,
                                                     const Shape& indices_shape, const Shape& updates_shape) {
  ScatterIndexing x;
  x.dn = &dn;
  x.operand_shape = &operand_shape;
  x.indices_shape = &indices_shape;
  x.updates_shape = &updates_shape;
  for (int64_t d = 0; d < updates_shape.rank(); ++d)
    if (std::find(dn.update_window_dims.begin(), dn.update_window_dims.end(), d) == dn.update_window_dims.end())
      x.update_scatter_dims.push_back(d);
  for (int64_t d = 0; d < operand_shape.rank(); ++d) {
    auto in = [&](const std::vector<int64_t>& v) { return std::find(v.begin(), v.end(), d) != v.end(); };
    if (!in(dn.inserted_window_dims) && !in(dn.input_batching_dims)) x.window_operand_dims.push_back(d);
  }
  if (x.window_operand_dims.size() != dn.update_window_dims.size())
    return absl::InvalidArgumentError("scatter: update window does not match the operand");
  x.implicit_index_dim = dn.index_vector_dim >= indices_shape.rank();
  return x;
}

absl::StatusOr<ScatterIndexing::Place> ScatterIndexing::PlaceOf(llvm::IRBuilderBase& b,
                                                                const ElementGenerator& indices_gen,
                                                                const IrArray::Index& u) const {
  const int64_t rank = operand_shape->rank();
  // The index into `indices` without its index-vector dimension.
  std::vector<llvm::Value*> ibase(indices_shape->rank(), b.getInt64(0));
  size_t j = 0;
  for (int64_t d = 0; d < indices_shape->rank(); ++d) {
    if (!implicit_index_dim && d == dn->index_vector_dim) continue;
    if (j < update_scatter_dims.size()) ibase[d] = u[update_scatter_dims[j++]];
  }
  std::vector<llvm::Value*> start(rank, b.getInt64(0));
  for (size_t i = 0; i < dn->scatter_dims_to_operand_dims.size(); ++i) {
    std::vector<llvm::Value*> at = ibase;
    if (!implicit_index_dim) at[dn->index_vector_dim] = b.getInt64(i);
    absl::StatusOr<llvm::Value*> v = indices_gen(IrArray::Index(at));
    if (!v.ok()) return v.status();
    start[dn->scatter_dims_to_operand_dims[i]] = IndexToI64(b, *v, indices_shape->element_type());
  }
  for (size_t q = 0; q < dn->input_batching_dims.size() && q < dn->scatter_indices_batching_dims.size(); ++q)
    start[dn->input_batching_dims[q]] = ibase[dn->scatter_indices_batching_dims[q]];
  std::vector<int64_t> window(rank, 1);
  Place p;
  p.at = start;
  for (size_t w = 0; w < window_operand_dims.size(); ++w) {
    const int64_t od = window_operand_dims[w];
    window[od] = updates_shape->dimensions(dn->update_window_dims[w]);
    p.at[od] = b.CreateAdd(start[od], u[dn->update_window_dims[w]]);
  }
  // A window that does not fit is skipped whole (XLA's semantics).
  p.ok = b.getTrue();
  for (int64_t d = 0; d < rank; ++d) {
    p.ok = b.CreateAnd(p.ok, b.CreateICmpSGE(start[d], b.getInt64(0)));
    p.ok = b.CreateAnd(p.ok, b.CreateICmpSLE(start[d], b.getInt64(operand_shape->dimensions(d) - window[d])));
  }
  return p;
}

absl::Status EmitSerialScatter(llvm::IRBuilderBase& b, ElementalIrEmitter& emitter, const HloInstruction& scatter,
                               const std::vector<IrArray>& outputs,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<const IrArray*(int64_t)>& operand_array) {
  const int64_t n = (scatter.operand_count() - 1) / 2;
  if (n < 1 || scatter.operand_count() != 2 * n + 1 || static_cast<int64_t>(outputs.size()) != n)
    return absl::InvalidArgumentError("scatter: malformed operands");
  if (!scatter.attrs().scatter_dimension_numbers || scatter.to_apply() == nullptr)
    return absl::InvalidArgumentError("scatter without dimension numbers or combiner");
  const ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  // 1. The operand into the output, unless it is already there.
  for (int64_t i = 0; i < n; ++i) {
    const IrArray& out = outputs[i];
    const IrArray* in = operand_array(i);
    absl::Status s;
    if (in != nullptr) {
      s = EmitIf(b, b.CreateICmpNE(in->base(), out.base()), absl::StrCat("scatter.copy", i),
                 [&] { return EmitArrayCopy(b, *in, out, absl::StrCat("scatter.copy", i)); });
    } else {
      ElementGenerator g = operand_gen(i);
      if (!g) return absl::InternalError("scatter operand without a generator");
      s = EmitIndexLoops(b, out.shape().dimensions(), absl::StrCat("scatter.init", i),
                         [&](const IrArray::Index& index) -> absl::Status {
                           absl::StatusOr<llvm::Value*> v = g(index);
                           if (!v.ok()) return v.status();
                           out.EmitWriteArrayElement(index, *v, b);
                           return absl::OkStatus();
                         });
    }
    if (!s.ok()) return s;
  }
  // 2. The updates, in order, each window skipped when it does not fit.
  const Shape& operand_shape = outputs[0].shape();
  const Shape& indices_shape = scatter.operand(n)->shape();
  const Shape& updates_shape = scatter.operand(n + 1)->shape();
  ElementGenerator indices_gen = operand_gen(n);
  std::vector<ElementGenerator> update_gens;
  for (int64_t i = 0; i < n; ++i) update_gens.push_back(operand_gen(n + 1 + i));
  if (!indices_gen) return absl::InternalError("scatter indices without a generator");
  absl::StatusOr<ScatterIndexing> indexing = ScatterIndexing::For(dn, operand_shape, indices_shape, updates_shape);
  if (!indexing.ok()) return indexing.status();

  return EmitIndexLoops(b, updates_shape.dimensions(), "scatter.upd", [&](const IrArray::Index& u) -> absl::Status {
    absl::StatusOr<ScatterIndexing::Place> place = indexing->PlaceOf(b, indices_gen, u);
    if (!place.ok()) return place.status();
    llvm::Value* ok = place->ok;
    const std::vector<llvm::Value*>& at = place->at;
    return EmitIf(b, ok, "scatter.in_bounds", [&]() -> absl::Status {
      std::vector<llvm::Value*> args;
      IrArray::Index oi(at);
      for (int64_t i = 0; i < n; ++i) args.push_back(outputs[i].EmitReadArrayElement(oi, b));
      for (int64_t i = 0; i < n; ++i) {
        if (!update_gens[i]) return absl::InternalError("scatter updates without a generator");
        absl::StatusOr<llvm::Value*> v = update_gens[i](u);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      absl::StatusOr<std::vector<llvm::Value*>> r = emitter.EmitThreadLocalCall(*scatter.to_apply(), args, "combiner");
      if (!r.ok()) return r.status();
      if (static_cast<int64_t>(r->size()) < n) return absl::InternalError("scatter combiner returned too few values");
      for (int64_t i = 0; i < n; ++i) outputs[i].EmitWriteArrayElement(oi, (*r)[i], b);
      return absl::OkStatus();
    });
  });
}

// scan over dimension d: the body must compute each element of its results from the same
// element of its parameters (elementwise ops, scalar broadcasts, constants), which is what
// cumulative sums/products lower to; then each position of the slice is an independent
// recurrence, run in place in the carry outputs.
absl::StatusOr<ScanSlices> AnalyzeScan(const HloInstruction& scan, const std::vector<IrArray>& operands,
                                       const std::vector<IrArray>& outputs) {
  const HloComputation* body = scan.to_apply();
  if (body == nullptr) return absl::InvalidArgumentError("scan without a body");
  for (const auto& inst : body->instructions()) {
    const HloOpcode op = inst->opcode();
    const bool ok = inst->IsElementwise() || op == HloOpcode::kParameter || op == HloOpcode::kTuple ||
                    op == HloOpcode::kCopy || (op == HloOpcode::kConstant && inst->shape().IsArray()) ||
                    (op == HloOpcode::kBroadcast && inst->operand(0)->shape().rank() == 0);
    if (!ok)
      return absl::UnimplementedError(absl::StrCat("scan body with %", inst->name(), " (",
                                                   std::string(HloOpcodeString(op)),
                                                   "): only element-independent bodies are supported"));
  }
  ScanSlices p;
  p.c = scan.attrs().num_carries;
  const int64_t nops = scan.operand_count();
  p.nin = nops - p.c;
  p.nres = static_cast<int64_t>(outputs.size());
  p.nout = p.nres - p.c;
  if (p.c < 0 || p.nin < 1 || p.nout < 0 || static_cast<int64_t>(operands.size()) != nops)
    return absl::InvalidArgumentError("scan: malformed operands or results");
  if (scan.attrs().dimensions.size() != 1) return absl::InvalidArgumentError("scan needs one dimension");
  p.dim = scan.attrs().dimensions[0];
  const Shape& in0 = operands[0].shape();
  if (p.dim < 0 || p.dim >= in0.rank()) return absl::InvalidArgumentError("scan dimension out of range");
  p.len = in0.dimensions(p.dim);
  p.slice_dims = in0.dimensions();
  p.slice_dims.erase(p.slice_dims.begin() + p.dim);
  return p;
}

absl::Status EmitScanSlice(llvm::IRBuilderBase& b, const HloInstruction& scan, const ScanSlices& p,
                           const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                           const IrArray::Index& s, const ScanBodyGenerators& make_generators) {
  const int64_t c = p.c, nin = p.nin, nout = p.nout, dim = p.dim, len = p.len;
  auto with_pos = [&](const IrArray::Index& at, llvm::Value* pos) {
    std::vector<llvm::Value*> v = at.multidim;
    v.insert(v.begin() + dim, pos);
    return IrArray::Index(v);
  };
  for (int64_t j = 0; j < c; ++j) outputs[nout + j].EmitWriteArrayElement(s, operands[nin + j].EmitReadArrayElement(s, b), b);
  return EmitForLoop(b, b.getInt64(0), b.getInt64(len), "scan.step", [&](llvm::Value* step) -> absl::Status {
    llvm::Value* pos = scan.attrs().is_reverse ? b.CreateSub(b.getInt64(len - 1), step) : step;
    auto param = [&](int64_t q) -> ElementGenerator {
      IrArray array = q < nin ? operands[q] : outputs[nout + (q - nin)];
      const bool is_input = q < nin;
      llvm::IRBuilderBase* bb = &b;
      return [array, is_input, pos, bb, dim](const IrArray::Index& i) -> absl::StatusOr<llvm::Value*> {
        if (!is_input) return array.EmitReadArrayElement(i, *bb);
        std::vector<llvm::Value*> v = i.multidim;
        v.insert(v.begin() + dim, pos);
        return array.EmitReadArrayElement(IrArray::Index(v), *bb);
      };
    };
    absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = make_generators(param);
    if (!gens.ok()) return gens.status();
    const HloInstruction* root = scan.to_apply()->root_instruction();
    std::vector<const HloInstruction*> leaves;
    if (root->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : root->operands()) leaves.push_back(op);
    } else {
      leaves.push_back(root);
    }
    if (static_cast<int64_t>(leaves.size()) != p.nres) return absl::InvalidArgumentError("scan body result count");
    std::vector<llvm::Value*> values;
    for (const HloInstruction* leaf : leaves) {
      auto it = (*gens)->find(leaf);
      if (it == (*gens)->end()) return absl::InternalError("scan body leaf without a generator");
      absl::StatusOr<llvm::Value*> v = it->second(s);
      if (!v.ok()) return v.status();
      values.push_back(*v);
    }
    for (int64_t o = 0; o < nout; ++o) outputs[o].EmitWriteArrayElement(with_pos(s, pos), values[o], b);
    for (int64_t j = 0; j < c; ++j) outputs[nout + j].EmitWriteArrayElement(s, values[nout + j], b);
    return absl::OkStatus();
  });
}

// select-and-scatter (XLA): the output starts at init; for each source element, the window
// position the select computation picks (the first one it keeps against every later
// candidate) receives scatter(output, source).
// select-and-scatter, as a gather: output element o is init combined (scatter, in increasing
// source order, which is the order of the sequential definition) with every source element s
// whose window's selected position is o. The windows that can cover o are those with
// s*stride + w*dilation - pad_low == o for some window position w; each is re-selected (the
// select computation in window order, skipping padding, as XLA does). Every output element is
// independent, so the kernel is parallel over the operand's shape and needs no atomics.
absl::Status EmitSelectAndScatterElement(llvm::IRBuilderBase& b, ElementalIrEmitter& emitter,
                                         const HloInstruction& sas, const IrArray& operand, const IrArray& source,
                                         llvm::Value* init_value, const IrArray& out, const IrArray::Index& o) {
  const Window& window = *sas.attrs().window;
  const int64_t rank = operand.shape().rank();
  const HloComputation& select = *sas.called_computations()[0];
  const HloComputation& scatter = *sas.called_computations()[1];
  llvm::Type* elem_ty = PrimitiveTypeToIrType(operand.shape().element_type(), b.getContext());
  llvm::Type* out_ty = PrimitiveTypeToIrType(out.shape().element_type(), b.getContext());
  llvm::AllocaInst* acc = EntryAlloca(b, out_ty, "sas.acc");
  llvm::AllocaInst* sel_value = EntryAlloca(b, elem_ty, "sas.value");
  llvm::AllocaInst* sel_found = EntryAlloca(b, b.getInt1Ty(), "sas.found");
  llvm::AllocaInst* sel_is_o = EntryAlloca(b, b.getInt1Ty(), "sas.is_o");
  b.CreateStore(init_value, acc);
  std::vector<int64_t> wsizes;
  for (const WindowDimension& w : window.dimensions) wsizes.push_back(w.size);
  // Window positions in decreasing order give the covering sources in increasing order.
  absl::Status cover = EmitIndexLoops(b, wsizes, "sas.cover", [&](const IrArray::Index& wr) -> absl::Status {
    std::vector<llvm::Value*> si(rank);
    llvm::Value* valid = b.getTrue();
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& w = window.dimensions[d];
      llvm::Value* wd = b.CreateSub(b.getInt64(w.size - 1), wr[d]);
      llvm::Value* t = b.CreateSub(b.CreateAdd(o[d], b.getInt64(w.padding_low)),
                                   b.CreateMul(wd, b.getInt64(w.window_dilation)));
      llvm::Value* q = b.CreateSDiv(t, b.getInt64(w.stride));
      valid = b.CreateAnd(valid, b.CreateICmpSGE(t, b.getInt64(0)));
      valid = b.CreateAnd(valid, b.CreateICmpEQ(b.CreateSRem(t, b.getInt64(w.stride)), b.getInt64(0)));
      valid = b.CreateAnd(valid, b.CreateICmpSLT(q, b.getInt64(source.shape().dimensions(d))));
      si[d] = q;
    }
    return EmitIf(b, valid, "sas.source", [&]() -> absl::Status {
      // Select in source si's window; remember whether the selected position is o.
      b.CreateStore(b.getFalse(), sel_found);
      b.CreateStore(b.getFalse(), sel_is_o);
      absl::Status ws = EmitIndexLoops(b, wsizes, "sas.win", [&](const IrArray::Index& wi) -> absl::Status {
        std::vector<llvm::Value*> oi(rank);
        llvm::Value* inside = b.getTrue();
        llvm::Value* here = b.getTrue();
        for (int64_t d = 0; d < rank; ++d) {
          const WindowDimension& w = window.dimensions[d];
          oi[d] = b.CreateSub(b.CreateAdd(b.CreateMul(si[d], b.getInt64(w.stride)),
                                          b.CreateMul(wi[d], b.getInt64(w.window_dilation))),
                              b.getInt64(w.padding_low));
          inside = b.CreateAnd(inside, b.CreateICmpSGE(oi[d], b.getInt64(0)));
          inside = b.CreateAnd(inside, b.CreateICmpSLT(oi[d], b.getInt64(operand.shape().dimensions(d))));
          here = b.CreateAnd(here, b.CreateICmpEQ(oi[d], o[d]));
        }
        return EmitIf(b, inside, "sas.inside", [&]() -> absl::Status {
          llvm::Value* cand = operand.EmitReadArrayElement(IrArray::Index(oi), b);
          auto take = [&]() -> absl::Status {
            b.CreateStore(cand, sel_value);
            b.CreateStore(b.getTrue(), sel_found);
            b.CreateStore(here, sel_is_o);
            return absl::OkStatus();
          };
          return EmitIfElse(b, b.CreateLoad(b.getInt1Ty(), sel_found), "sas.have", [&]() -> absl::Status {
            llvm::Value* current = b.CreateLoad(elem_ty, sel_value);
            absl::StatusOr<std::vector<llvm::Value*>> keep = emitter.EmitThreadLocalCall(select, {current, cand}, "select");
            if (!keep.ok()) return keep.status();
            if (keep->empty()) return absl::InternalError("select returned nothing");
            llvm::Value* kv = (*keep)[0];
            llvm::Value* keep_bit = kv->getType()->isIntegerTy(1) ? kv : b.CreateICmpNE(kv, llvm::ConstantInt::get(kv->getType(), 0));
            return EmitIf(b, b.CreateNot(keep_bit), "sas.replace", take);
          }, take);
        });
      });
      if (!ws.ok()) return ws;
      return EmitIf(b, b.CreateLoad(b.getInt1Ty(), sel_is_o), "sas.scatter", [&]() -> absl::Status {
        llvm::Value* src = source.EmitReadArrayElement(IrArray::Index(si), b);
        absl::StatusOr<std::vector<llvm::Value*>> r =
            emitter.EmitThreadLocalCall(scatter, {b.CreateLoad(out_ty, acc), src}, "scatter");
        if (!r.ok()) return r.status();
        if (r->empty()) return absl::InternalError("scatter returned nothing");
        b.CreateStore((*r)[0], acc);
        return absl::OkStatus();
      });
    });
  });
  if (!cover.ok()) return cover;
  out.EmitWriteArrayElement(o, b.CreateLoad(out_ty, acc), b);
  return absl::OkStatus();
}

absl::Status CheckSelectAndScatter(const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                                   const HloInstruction& sas) {
  if (operands.size() != 3 || outputs.size() != 1 || !sas.attrs().window || sas.called_computations().size() != 2)
    return absl::InvalidArgumentError("select-and-scatter: malformed");
  if (static_cast<int64_t>(sas.attrs().window->dimensions.size()) != operands[0].shape().rank())
    return absl::InvalidArgumentError("select-and-scatter: window rank");
  for (const WindowDimension& w : sas.attrs().window->dimensions)
    if (w.stride < 1 || w.window_dilation < 1 || w.size < 1)
      return absl::InvalidArgumentError("select-and-scatter: window sizes, strides and dilations must be positive");
  return absl::OkStatus();
}

}  // namespace hloc::codegen
