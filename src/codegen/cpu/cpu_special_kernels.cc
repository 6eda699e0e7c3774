// CPU kernels that are not one element at a time: sort and top-k (runtime calls with emitted
// comparators), in-place dynamic-update-slice, scan and select-and-scatter (their per-slice and
// per-element pieces, and the serial scatter, are shared with the GPU: scatter_scan_emitters.h).
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

// Every output element gathers its sources (EmitSelectAndScatterElement); parts split the output.
absl::Status EmitSelectAndScatterKernel(KernelContext& k, const HloInstruction& sas) {
  if (absl::Status s = CheckSelectAndScatter(k.operands, k.outputs, sas); !s.ok()) return s;
  llvm::IRBuilderBase& b = *k.b;
  llvm::Value* init_value = k.operands[2].EmitReadArrayElement(IrArray::Index(), b);
  return EmitLoopNest(k.outputs[0].shape(), b, k.part, k.num_parts, [&](const IrArray::Index& o) {
    return EmitSelectAndScatterElement(b, *k.emitter, sas, k.operands[0], k.operands[1], init_value, k.outputs[0], o);
  });
}

}  // namespace hloc::codegen::cpu
