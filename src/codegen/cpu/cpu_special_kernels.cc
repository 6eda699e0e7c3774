// CPU kernels that are not one element at a time: sort and top-k (runtime calls with emitted
// comparators), scatter, in-place dynamic-update-slice, scan and select-and-scatter.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"

namespace hloc::codegen::cpu {
namespace {

std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int64_t>(s.layout().minor_to_major.size()) == s.rank())
    return s.layout().minor_to_major;
  std::vector<int64_t> m;
  for (int64_t d = s.rank() - 1; d >= 0; --d) m.push_back(d);
  return m;
}

bool IsRowMajor(const Shape& s) {
  std::vector<int64_t> m = MinorToMajor(s);
  for (size_t i = 0; i < m.size(); ++i)
    if (m[i] != static_cast<int64_t>(m.size() - 1 - i)) return false;
  return true;
}

llvm::Value* ToI8(llvm::IRBuilderBase& b, llvm::Value* v) {
  if (v->getType()->isIntegerTy(8)) return v;
  if (v->getType()->isIntegerTy()) return b.CreateZExtOrTrunc(b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0)),
                                                              b.getInt8Ty());
  return v;
}

// Comparator function `void NAME(char* result, char** operands)` (HlocCpuComparator) applying
// `comparator` (a computation of 2*N scalar parameters returning pred) to the pointed-at elements.
absl::StatusOr<llvm::Function*> EmitComparatorFunction(llvm::Module* module, const HloComputation& comparator,
                                                       const std::string& name) {
  llvm::LLVMContext& ctx = module->getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  llvm::Function* f = llvm::Function::Create(fty, llvm::Function::InternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
  ElementalIrEmitter emitter(module, &b);
  std::vector<llvm::Value*> args;
  for (int64_t p = 0; p < comparator.num_parameters(); ++p) {
    const Shape& s = comparator.parameter_instruction(p)->shape();
    if (!s.IsArray() || s.rank() != 0) {
      f->eraseFromParent();
      return absl::InvalidArgumentError(absl::StrCat("comparator parameter ", p, " is not a scalar"));
    }
    llvm::Value* slot = b.CreateConstInBoundsGEP1_64(ptr, f->getArg(1), p);
    llvm::Value* elem_ptr = b.CreateLoad(ptr, slot);
    IrArray scalar(elem_ptr, s);
    args.push_back(scalar.EmitReadArrayElement(IrArray::Index(), b));
  }
  absl::StatusOr<std::vector<llvm::Value*>> r = emitter.EmitThreadLocalCall(comparator, args, name);
  if (!r.ok() || r->empty()) {
    f->eraseFromParent();
    return r.ok() ? absl::InternalError("comparator returned nothing") : r.status();
  }
  b.CreateStore(ToI8(b, (*r)[0]), f->getArg(0));
  b.CreateRetVoid();
  return f;
}

// `a` orders before `b` under a total order (floats: -NaN < -inf < ... < -0 < +0 < ... < NaN).
llvm::Value* TotalOrderCompare(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, PrimitiveType t,
                               bool greater) {
  if (IsFloatingPoint(t)) {
    // The key of the element type's own bits, not of its storage byte (f4e2m1fn, f8e8m0fnu).
    llvm::Value* kx = EmitFloatTotalOrderKey(b, x, t);
    llvm::Value* ky = EmitFloatTotalOrderKey(b, y, t);
    return greater ? b.CreateICmpSGT(kx, ky) : b.CreateICmpSLT(kx, ky);
  }
  if (IsUnsignedIntegral(t) || t == PrimitiveType::PRED) return greater ? b.CreateICmpUGT(x, y) : b.CreateICmpULT(x, y);
  return greater ? b.CreateICmpSGT(x, y) : b.CreateICmpSLT(x, y);
}

}  // namespace

absl::Status EmitSortKernel(KernelContext& k, const HloInstruction& sort) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t n_arrays = sort.operand_count();
  if (static_cast<int64_t>(k.outputs.size()) != n_arrays || static_cast<int64_t>(k.operands.size()) != n_arrays)
    return absl::InvalidArgumentError("sort: operands and results differ in number");
  if (sort.attrs().dimensions.size() != 1) return absl::InvalidArgumentError("sort needs one dimension");
  const Shape& s0 = k.outputs[0].shape();
  const std::vector<int64_t> m2m = MinorToMajor(s0);
  for (int64_t i = 0; i < n_arrays; ++i) {
    if (k.outputs[i].shape().dimensions() != s0.dimensions() || MinorToMajor(k.outputs[i].shape()) != m2m)
      return absl::UnimplementedError("sort of arrays with different layouts");
    // Sorted in place in the outputs: copy the operands there first unless they are the same buffer.
    const IrArray& from = k.operands[i];
    const IrArray& to = k.outputs[i];
    absl::Status s = EmitIf(b, b.CreateICmpNE(from.base(), to.base()), absl::StrCat("copy", i),
                            [&] { return EmitArrayCopy(b, from, to, absl::StrCat("sort.copy", i)); });
    if (!s.ok()) return s;
  }
  // The [outer, n, inner] view of the sorted dimension in physical order.
  const int64_t dim = sort.attrs().dimensions[0];
  if (dim < 0 || dim >= s0.rank()) return absl::InvalidArgumentError("sort dimension out of range");
  int64_t inner = 1, outer = 1;
  bool below = true;
  for (int64_t d : m2m) {
    if (d == dim) {
      below = false;
      continue;
    }
    (below ? inner : outer) *= s0.dimensions(d);
  }
  const int64_t n = s0.dimensions(dim);
  if (sort.to_apply() == nullptr) return absl::InvalidArgumentError("sort without a comparator");
  absl::StatusOr<llvm::Function*> cmp = EmitComparatorFunction(k.module, *sort.to_apply(), k.name + ".comparator");
  if (!cmp.ok()) return cmp.status();

  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::AllocaInst* arrays = EntryAlloca(b, ptr, "sort.arrays", b.getInt32(static_cast<uint32_t>(n_arrays)));
  std::vector<llvm::Constant*> sizes;
  for (int64_t i = 0; i < n_arrays; ++i) {
    b.CreateStore(k.outputs[i].base(), b.CreateConstInBoundsGEP1_64(ptr, arrays, i));
    const int w = std::max(1, ByteWidth(k.outputs[i].shape().element_type()));
    sizes.push_back(b.getInt32(w));
  }
  auto* sizes_ty = llvm::ArrayType::get(b.getInt32Ty(), n_arrays);
  auto* sizes_gv = new llvm::GlobalVariable(*k.module, sizes_ty, /*isConstant=*/true, llvm::GlobalValue::InternalLinkage,
                                            llvm::ConstantArray::get(sizes_ty, sizes), k.name + ".element_sizes");
  llvm::FunctionCallee fn = k.module->getOrInsertFunction(
      "__hloc_cpu_sort", llvm::FunctionType::get(b.getVoidTy(),
                                                 {b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty(), ptr,
                                                  ptr, b.getInt8Ty(), ptr},
                                                 false));
  b.CreateCall(fn, {b.getInt64(outer), b.getInt64(n), b.getInt64(inner), b.getInt32(static_cast<uint32_t>(n_arrays)),
                    arrays, sizes_gv, b.getInt8(sort.attrs().is_stable ? 1 : 0), *cmp});
  return absl::OkStatus();
}

absl::Status EmitTopKKernel(KernelContext& k, const HloInstruction& topk) {
  llvm::IRBuilderBase& b = *k.b;
  if (k.operands.size() != 1 || k.outputs.size() != 2) return absl::InvalidArgumentError("topk: expected (values, indices)");
  const Shape& x = k.operands[0].shape();
  const Shape& values = k.outputs[0].shape();
  const Shape& indices = k.outputs[1].shape();
  if (x.rank() < 1) return absl::InvalidArgumentError("topk of a scalar");
  if (!IsRowMajor(x) || !IsRowMajor(values) || !IsRowMajor(indices))
    return absl::UnimplementedError("topk with a non-row-major layout");
  if (indices.element_type() != PrimitiveType::S32) return absl::UnimplementedError("topk indices other than s32");
  const PrimitiveType t = x.element_type();
  if (IsComplex(t)) return absl::UnimplementedError("topk of complex values");
  const int64_t n = x.dimensions(x.rank() - 1);
  const int64_t batch = n == 0 ? 0 : x.num_elements() / n;
  const int64_t kk = topk.attrs().k;

  // The "first" comparator: a > b (largest) or a < b, in the total order the evaluator uses.
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  auto* fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr}, false);
  llvm::Function* cmp = llvm::Function::Create(fty, llvm::Function::InternalLinkage, k.name + ".comparator", k.module);
  {
    llvm::IRBuilder<> cb(llvm::BasicBlock::Create(ctx, "entry", cmp));
    Shape scalar(t, {});
    scalar.SetDefaultLayout();
    llvm::Value* pa = cb.CreateLoad(ptr, cb.CreateConstInBoundsGEP1_64(ptr, cmp->getArg(1), 0));
    llvm::Value* pb = cb.CreateLoad(ptr, cb.CreateConstInBoundsGEP1_64(ptr, cmp->getArg(1), 1));
    llvm::Value* va = IrArray(pa, scalar).EmitReadArrayElement(IrArray::Index(), cb);
    llvm::Value* vb = IrArray(pb, scalar).EmitReadArrayElement(IrArray::Index(), cb);
    llvm::Value* r = TotalOrderCompare(cb, va, vb, t, topk.attrs().largest);
    cb.CreateStore(cb.CreateZExt(r, cb.getInt8Ty()), cmp->getArg(0));
    cb.CreateRetVoid();
  }
  llvm::FunctionCallee fn = k.module->getOrInsertFunction(
      "__hloc_cpu_topk", llvm::FunctionType::get(b.getVoidTy(),
                                                 {b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt32Ty(), ptr,
                                                  ptr, ptr, ptr},
                                                 false));
  b.CreateCall(fn, {b.getInt64(batch), b.getInt64(n), b.getInt64(kk), b.getInt32(std::max(1, ByteWidth(t))),
                    k.operands[0].base(), k.outputs[0].base(), k.outputs[1].base(), cmp});
  return absl::OkStatus();
}

absl::Status EmitDynamicUpdateSliceKernel(KernelContext& k, const HloInstruction& dus, const GeneratorMap& operands,
                                          const std::function<const IrArray*(int64_t)>& operand_array) {
  llvm::IRBuilderBase& b = *k.b;
  if (k.outputs.size() != 1) return absl::InvalidArgumentError("dynamic-update-slice: expected one output");
  const IrArray& out = k.outputs[0];
  const Shape& update_shape = dus.operand(1)->shape();
  auto gen_of = [&](int64_t i) -> absl::StatusOr<ElementGenerator> {
    auto it = operands.find(dus.operand(i));
    if (it == operands.end()) return absl::InternalError("dynamic-update-slice operand without a generator");
    return it->second;
  };
  absl::StatusOr<ElementGenerator> update = gen_of(1);
  if (!update.ok()) return update.status();
  const IrArray* in = operand_array(0);

  auto in_place = [&]() -> absl::Status {
    // Start indices clamped so the update fits (XLA's semantics), computed once; in either of
    // HLO's index forms (a scalar per dimension, or the old single vector).
    std::vector<llvm::Value*> starts;
    auto index_gen = [&](int64_t i) -> ElementGenerator {
      absl::StatusOr<ElementGenerator> g = gen_of(i);
      return g.ok() ? *g : ElementGenerator();
    };
    for (int64_t d = 0; d < out.shape().rank(); ++d) {
      const int64_t hi = out.shape().dimensions(d) - update_shape.dimensions(d);
      absl::StatusOr<llvm::Value*> s = EmitClampedStartIndex(b, dus, 2, d, hi, index_gen);
      if (!s.ok()) return s.status();
      starts.push_back(*s);
    }
    return EmitLoopNest(update_shape, b, k.part, k.num_parts, [&](const IrArray::Index& index) -> absl::Status {
      absl::StatusOr<llvm::Value*> v = (*update)(index);
      if (!v.ok()) return v.status();
      std::vector<llvm::Value*> at;
      for (size_t d = 0; d < starts.size(); ++d) at.push_back(b.CreateAdd(starts[d], index[d]));
      out.EmitWriteArrayElement(IrArray::Index(at), *v, b);
      return absl::OkStatus();
    });
  };
  auto elemental = [&]() -> absl::Status {
    absl::StatusOr<ElementGenerator> g = k.emitter->MakeElementGenerator(&dus, operands);
    if (!g.ok()) return g.status();
    return EmitLoopNest(out.shape(), b, k.part, k.num_parts, [&](const IrArray::Index& index) -> absl::Status {
      absl::StatusOr<llvm::Value*> v = (*g)(index);
      if (!v.ok()) return v.status();
      out.EmitWriteArrayElement(index, v.value(), b);
      return absl::OkStatus();
    });
  };
  if (in == nullptr) return elemental();
  // In place when buffer assignment gave the output the operand's buffer; otherwise every
  // element is written (the operand's or the update's).
  return EmitIfElse(b, b.CreateICmpEQ(in->base(), out.base()), "dus.in_place", in_place, elemental);
}

absl::Status EmitScatterKernel(KernelContext& k, const HloInstruction& scatter,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<const IrArray*(int64_t)>& operand_array) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t n = (scatter.operand_count() - 1) / 2;
  if (n < 1 || scatter.operand_count() != 2 * n + 1 || static_cast<int64_t>(k.outputs.size()) != n)
    return absl::InvalidArgumentError("scatter: malformed operands");
  if (!scatter.attrs().scatter_dimension_numbers || scatter.to_apply() == nullptr)
    return absl::InvalidArgumentError("scatter without dimension numbers or combiner");
  const ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  // 1. The operand into the output, unless it is already there.
  for (int64_t i = 0; i < n; ++i) {
    const IrArray& out = k.outputs[i];
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
  const Shape& operand_shape = k.outputs[0].shape();
  const Shape& indices_shape = scatter.operand(n)->shape();
  const Shape& updates_shape = scatter.operand(n + 1)->shape();
  ElementGenerator indices_gen = operand_gen(n);
  std::vector<ElementGenerator> update_gens;
  for (int64_t i = 0; i < n; ++i) update_gens.push_back(operand_gen(n + 1 + i));
  if (!indices_gen) return absl::InternalError("scatter indices without a generator");
  const int64_t rank = operand_shape.rank();
  std::vector<int64_t> update_scatter_dims;
  for (int64_t d = 0; d < updates_shape.rank(); ++d)
    if (std::find(dn.update_window_dims.begin(), dn.update_window_dims.end(), d) == dn.update_window_dims.end())
      update_scatter_dims.push_back(d);
  // Operand dimensions covered by the update window, in order.
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < rank; ++d) {
    auto in = [&](const std::vector<int64_t>& v) { return std::find(v.begin(), v.end(), d) != v.end(); };
    if (!in(dn.inserted_window_dims) && !in(dn.input_batching_dims)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != dn.update_window_dims.size())
    return absl::InvalidArgumentError("scatter: update window does not match the operand");
  const bool implicit_index_dim = dn.index_vector_dim >= indices_shape.rank();

  return EmitIndexLoops(b, updates_shape.dimensions(), "scatter.upd", [&](const IrArray::Index& u) -> absl::Status {
    // The index into `indices` without its index-vector dimension.
    std::vector<llvm::Value*> ibase(indices_shape.rank(), b.getInt64(0));
    {
      size_t j = 0;
      for (int64_t d = 0; d < indices_shape.rank(); ++d) {
        if (!implicit_index_dim && d == dn.index_vector_dim) continue;
        if (j < update_scatter_dims.size()) ibase[d] = u[update_scatter_dims[j++]];
      }
    }
    std::vector<llvm::Value*> start(rank, b.getInt64(0));
    for (size_t i = 0; i < dn.scatter_dims_to_operand_dims.size(); ++i) {
      std::vector<llvm::Value*> at = ibase;
      if (!implicit_index_dim) at[dn.index_vector_dim] = b.getInt64(i);
      absl::StatusOr<llvm::Value*> v = indices_gen(IrArray::Index(at));
      if (!v.ok()) return v.status();
      start[dn.scatter_dims_to_operand_dims[i]] = IndexToI64(b, *v, indices_shape.element_type());
    }
    for (size_t j = 0; j < dn.input_batching_dims.size() && j < dn.scatter_indices_batching_dims.size(); ++j)
      start[dn.input_batching_dims[j]] = ibase[dn.scatter_indices_batching_dims[j]];
    std::vector<int64_t> window(rank, 1);
    std::vector<llvm::Value*> at(rank, nullptr);
    for (int64_t d = 0; d < rank; ++d) at[d] = start[d];
    for (size_t w = 0; w < window_operand_dims.size(); ++w) {
      const int64_t od = window_operand_dims[w];
      window[od] = updates_shape.dimensions(dn.update_window_dims[w]);
      at[od] = b.CreateAdd(start[od], u[dn.update_window_dims[w]]);
    }
    llvm::Value* ok = b.getTrue();
    for (int64_t d = 0; d < rank; ++d) {
      ok = b.CreateAnd(ok, b.CreateICmpSGE(start[d], b.getInt64(0)));
      ok = b.CreateAnd(ok, b.CreateICmpSLE(start[d], b.getInt64(operand_shape.dimensions(d) - window[d])));
    }
    return EmitIf(b, ok, "scatter.in_bounds", [&]() -> absl::Status {
      std::vector<llvm::Value*> args;
      IrArray::Index oi(at);
      for (int64_t i = 0; i < n; ++i) args.push_back(k.outputs[i].EmitReadArrayElement(oi, b));
      for (int64_t i = 0; i < n; ++i) {
        if (!update_gens[i]) return absl::InternalError("scatter updates without a generator");
        absl::StatusOr<llvm::Value*> v = update_gens[i](u);
        if (!v.ok()) return v.status();
        args.push_back(*v);
      }
      absl::StatusOr<std::vector<llvm::Value*>> r = k.emitter->EmitThreadLocalCall(*scatter.to_apply(), args, "combiner");
      if (!r.ok()) return r.status();
      if (static_cast<int64_t>(r->size()) < n) return absl::InternalError("scatter combiner returned too few values");
      for (int64_t i = 0; i < n; ++i) k.outputs[i].EmitWriteArrayElement(oi, (*r)[i], b);
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

// The slices' positions are split between parts (the caller chose k.partitions).
absl::Status EmitScanKernel(KernelContext& k, const HloInstruction& scan) {
  absl::StatusOr<ScanSlices> p = AnalyzeScan(scan, k.operands, k.outputs);
  if (!p.ok()) return p.status();
  Shape slice_shape(k.operands[0].shape().element_type(), p->slice_dims);
  slice_shape.SetDefaultLayout();
  const HloComputation* body = scan.to_apply();
  return EmitLoopNest(slice_shape, *k.b, k.part, k.num_parts, [&](const IrArray::Index& s) -> absl::Status {
    return EmitScanSlice(*k.b, scan, *p, k.operands, k.outputs, s, [&](const auto& param) {
      return MakeComputationGenerators(*k.emitter, *body, param);
    });
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

absl::Status EmitSelectAndScatterKernel(KernelContext& k, const HloInstruction& sas) {
  if (absl::Status s = CheckSelectAndScatter(k.operands, k.outputs, sas); !s.ok()) return s;
  llvm::IRBuilderBase& b = *k.b;
  llvm::Value* init_value = k.operands[2].EmitReadArrayElement(IrArray::Index(), b);
  return EmitLoopNest(k.outputs[0].shape(), b, k.part, k.num_parts, [&](const IrArray::Index& o) {
    return EmitSelectAndScatterElement(b, *k.emitter, sas, k.operands[0], k.operands[1], init_value, k.outputs[0], o);
  });
}

}  // namespace hloc::codegen::cpu
