// Sort and top-k: the dispatch and the fallbacks. First choices (gpu_sort_internal.h):
//   - sort rows of up to 8192 slots: gpu_sort_registers.cc (bitonic network in registers, warp
//     shuffles, shared memory only for strides >= 256 and for coalescing);
//   - top-k with k <= 16: gpu_topk_warp.cc (a warp per row, per-lane sorted top-k lists merged
//     by butterfly shuffles).
// Otherwise a block owns a row (grid-stride over rows):
//   - rows whose padded (power of two) length fits in shared memory with every operand and an
//     index: bitonic sort in shared memory, a thread per compare-exchange pair; ties are broken
//     by the original position, so the result is stable whatever `is_stable` says;
//   - longer rows (sort): odd-even transposition sort in place in the outputs, stable because
//     only strictly out-of-order neighbours swap;
//   - top-k sorts the row the same way and keeps the first k; rows too long for shared memory
//     pick the k elements one after another (a thread per row).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_sort_internal.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

// while (cond(iv)) { body(iv); iv = next(iv); } with an i64 induction variable.
absl::Status EmitWhile(llvm::IRBuilderBase& b, llvm::Value* init, const std::string& name,
                       const std::function<llvm::Value*(llvm::Value*)>& cond,
                       const std::function<llvm::Value*(llvm::Value*)>& next,
                       const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, name + ".header", f);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx, name + ".body", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, name + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2, name + ".iv");
  iv->addIncoming(init, pre);
  b.CreateCondBr(cond(iv), body_bb, exit);
  b.SetInsertPoint(body_bb);
  if (absl::Status s = body(iv); !s.ok()) return s;
  iv->addIncoming(next(iv), b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  return absl::OkStatus();
}

llvm::Value* ToBool(llvm::IRBuilderBase& b, llvm::Value* v) {
  if (v->getType()->isIntegerTy(1)) return v;
  return b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

// `a` before `b` in the total order top-k uses (floats: -NaN < -inf < ... < -0 < +0 < ... < NaN).
llvm::Value* TotalOrderBefore(llvm::IRBuilderBase& b, llvm::Value* x, llvm::Value* y, PrimitiveType t, bool largest) {
  if (IsFloatingPoint(t)) {
    // The key of the element type's own bits, not of its storage byte (f4e2m1fn, f8e8m0fnu).
    llvm::Value* kx = EmitFloatTotalOrderKey(b, x, t);
    llvm::Value* ky = EmitFloatTotalOrderKey(b, y, t);
    return largest ? b.CreateICmpSGT(kx, ky) : b.CreateICmpSLT(kx, ky);
  }
  if (IsUnsignedIntegral(t) || t == PrimitiveType::PRED) return largest ? b.CreateICmpUGT(x, y) : b.CreateICmpULT(x, y);
  return largest ? b.CreateICmpSGT(x, y) : b.CreateICmpSLT(x, y);
}

using Rows = SortRows;
Rows RowsOf(const Shape& s, int64_t dim) { return SortRowsOf(s, dim); }

// Comparison of two shared-memory elements: less(values of a..., values of b...).
using LessFn = SortLessFn;

// Sorts, in each block, the row loaded into `arrays` (shared [P] of each type) + `index`
// (shared [P] i64 original positions; >= n marks padding, which sorts last).
absl::Status EmitBitonic(GpuKernel& k, int64_t P, int64_t n, int64_t T, const std::vector<llvm::Type*>& types,
                         const std::vector<llvm::Value*>& arrays, llvm::Value* index, const LessFn& less) {
  llvm::IRBuilderBase& b = *k.b;
  auto at = [&](size_t a, llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(types[a], P), arrays[a], {b.getInt64(0), i});
  };
  auto idx_at = [&](llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(b.getInt64Ty(), P), index, {b.getInt64(0), i});
  };
  llvm::Value* tid = k.ThreadIdX();
  // full_less(a, b): padding last, then the comparator, then the original position.
  auto full_less = [&](llvm::Value* ia, llvm::Value* ib) -> absl::StatusOr<llvm::Value*> {
    std::vector<llvm::Value*> va, vb;
    for (size_t a = 0; a < arrays.size(); ++a) {
      va.push_back(b.CreateLoad(types[a], at(a, ia)));
      vb.push_back(b.CreateLoad(types[a], at(a, ib)));
    }
    llvm::Value* pa = b.CreateLoad(b.getInt64Ty(), idx_at(ia));
    llvm::Value* pb = b.CreateLoad(b.getInt64Ty(), idx_at(ib));
    absl::StatusOr<llvm::Value*> lt = less(va, vb);
    if (!lt.ok()) return lt.status();
    absl::StatusOr<llvm::Value*> gt = less(vb, va);
    if (!gt.ok()) return gt.status();
    llvm::Value* tie = b.CreateAnd(b.CreateNot(*lt), b.CreateNot(*gt));
    llvm::Value* ordered = b.CreateOr(*lt, b.CreateAnd(tie, b.CreateICmpSLT(pa, pb)));
    llvm::Value* pad_a = b.CreateICmpSGE(pa, b.getInt64(n));
    llvm::Value* pad_b = b.CreateICmpSGE(pb, b.getInt64(n));
    // a < b  <=>  a is real and (b is padding or ordered).
    return b.CreateAnd(b.CreateNot(pad_a), b.CreateOr(pad_b, ordered));
  };
  return EmitWhile(
      b, b.getInt64(2), "bitonic.k", [&](llvm::Value* kk) { return b.CreateICmpSLE(kk, b.getInt64(P)); },
      [&](llvm::Value* kk) { return b.CreateShl(kk, 1); },
      [&](llvm::Value* kk) -> absl::Status {
        return EmitWhile(
            b, b.CreateLShr(kk, 1), "bitonic.j", [&](llvm::Value* j) { return b.CreateICmpSGT(j, b.getInt64(0)); },
            [&](llvm::Value* j) { return b.CreateLShr(j, 1); },
            [&](llvm::Value* j) -> absl::Status {
              // A thread per compare-exchange pair (P/2 of them): pair p is element i (bit j of
              // i clear) and i + j, so no thread idles on the upper half of a pair.
              absl::Status s = EmitStridedLoop(b, tid, b.getInt64(P / 2), b.getInt64(T), "bitonic.p",
                                               [&](llvm::Value* p) -> absl::Status {
                llvm::Value* low_mask = b.CreateSub(j, b.getInt64(1));
                llvm::Value* i = b.CreateOr(b.CreateShl(b.CreateAnd(p, b.CreateNot(low_mask)), 1),
                                            b.CreateAnd(p, low_mask));
                llvm::Value* ixj = b.CreateOr(i, j);
                {
                  llvm::Value* up = b.CreateICmpEQ(b.CreateAnd(i, kk), b.getInt64(0));
                  // Ascending pairs swap when [ixj] < [i], descending ones when [i] < [ixj]:
                  // one comparison with the operands picked by direction.
                  absl::StatusOr<llvm::Value*> swap =
                      full_less(b.CreateSelect(up, ixj, i), b.CreateSelect(up, i, ixj));
                  if (!swap.ok()) return swap.status();
                  return EmitIf(b, *swap, "swap", [&]() -> absl::Status {
                    for (size_t a = 0; a < arrays.size(); ++a) {
                      llvm::Value* x = b.CreateLoad(types[a], at(a, i));
                      llvm::Value* y = b.CreateLoad(types[a], at(a, ixj));
                      b.CreateStore(y, at(a, i));
                      b.CreateStore(x, at(a, ixj));
                    }
                    llvm::Value* x = b.CreateLoad(b.getInt64Ty(), idx_at(i));
                    llvm::Value* y = b.CreateLoad(b.getInt64Ty(), idx_at(ixj));
                    b.CreateStore(y, idx_at(i));
                    b.CreateStore(x, idx_at(ixj));
                    return absl::OkStatus();
                  });
                }
              });
              if (!s.ok()) return s;
              k.Barrier();
              return absl::OkStatus();
            });
      });
}

// Loads each row into shared memory, sorts it, and hands the sorted row to `store`.
absl::Status EmitSharedSort(GpuKernel& k, const Rows& rows, const std::vector<const IrArray*>& inputs,
                            const LessFn& less,
                            const std::function<absl::Status(const IrArray::Index& row, llvm::Value* i,
                                                             const std::vector<llvm::Value*>& values,
                                                             llvm::Value* original)>& store) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t P = NextPow2(rows.n);
  const int64_t T = std::min<int64_t>(1024, std::max<int64_t>(32, P / 2));
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = T;
  k.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(rows.count, k.device->sm_count * 16));
  std::vector<llvm::Type*> types;
  std::vector<llvm::Value*> arrays;
  for (size_t a = 0; a < inputs.size(); ++a) {
    types.push_back(PrimitiveTypeToIrType(inputs[a]->shape().element_type(), b.getContext()));
    arrays.push_back(k.SharedArray(types.back(), P, absl::StrCat("keys", a)));
  }
  llvm::Value* index = k.SharedArray(b.getInt64Ty(), P, "index");
  llvm::Value* tid = k.ThreadIdX();
  return EmitStridedLoop(b, k.BlockIdX(), b.getInt64(rows.count), b.getInt64(k.launch.grid_x), "row",
                         [&](llvm::Value* r) -> absl::Status {
    IrArray::Index row = DelinearizeRowMajor(r, rows.other_dims, b);
    absl::Status s = EmitStridedLoop(b, tid, b.getInt64(P), b.getInt64(T), "load", [&](llvm::Value* i) -> absl::Status {
      b.CreateStore(i, b.CreateInBoundsGEP(llvm::ArrayType::get(b.getInt64Ty(), P), index, {b.getInt64(0), i}));
      return EmitIf(b, b.CreateICmpSLT(i, b.getInt64(rows.n)), "real", [&]() -> absl::Status {
        for (size_t a = 0; a < inputs.size(); ++a)
          b.CreateStore(inputs[a]->EmitReadArrayElement(rows.At(row, i), b),
                        b.CreateInBoundsGEP(llvm::ArrayType::get(types[a], P), arrays[a], {b.getInt64(0), i}));
        return absl::OkStatus();
      });
    });
    if (!s.ok()) return s;
    k.Barrier();
    if (absl::Status bs = EmitBitonic(k, P, rows.n, T, types, arrays, index, less); !bs.ok()) return bs;
    s = EmitStridedLoop(b, tid, b.getInt64(rows.n), b.getInt64(T), "store", [&](llvm::Value* i) -> absl::Status {
      std::vector<llvm::Value*> values;
      for (size_t a = 0; a < inputs.size(); ++a)
        values.push_back(b.CreateLoad(types[a], b.CreateInBoundsGEP(llvm::ArrayType::get(types[a], P), arrays[a],
                                                                    {b.getInt64(0), i})));
      llvm::Value* original = b.CreateLoad(
          b.getInt64Ty(), b.CreateInBoundsGEP(llvm::ArrayType::get(b.getInt64Ty(), P), index, {b.getInt64(0), i}));
      return store(row, i, values, original);
    });
    if (!s.ok()) return s;
    k.Barrier();
    return absl::OkStatus();
  });
}

int64_t SharedBytes(int64_t P, const std::vector<const IrArray*>& inputs) {
  int64_t per = 8;
  for (const IrArray* a : inputs) per += std::max(1, ByteWidth(a->shape().element_type()));
  return P * per;
}

}  // namespace

SortRows SortRowsOf(const Shape& s, int64_t dim) {
  SortRows r;
  r.dim = dim;
  r.n = s.dimensions(dim);
  for (int64_t d = 0; d < s.rank(); ++d)
    if (d != dim) {
      r.others.push_back(d);
      r.other_dims.push_back(s.dimensions(d));
      r.count *= s.dimensions(d);
    }
  return r;
}

absl::Status EmitSortKernel(GpuKernel& k, const HloInstruction& sort) {
  llvm::IRBuilderBase& b = *k.b;
  const size_t n_arrays = static_cast<size_t>(sort.operand_count());
  if (k.outputs.size() != n_arrays || k.operands.size() != n_arrays)
    return absl::InvalidArgumentError("sort: operands and results differ in number");
  if (sort.attrs().dimensions.size() != 1 || sort.to_apply() == nullptr)
    return absl::InvalidArgumentError("sort needs one dimension and a comparator");
  const Shape& s0 = k.outputs[0].shape();
  const int64_t dim = sort.attrs().dimensions[0];
  if (dim < 0 || dim >= s0.rank()) return absl::InvalidArgumentError("sort dimension out of range");
  for (size_t a = 0; a < n_arrays; ++a)
    if (k.outputs[a].shape().dimensions() != s0.dimensions())
      return absl::InvalidArgumentError("sort operands of different dimensions");
  const Rows rows = RowsOf(s0, dim);
  const HloComputation& comparator = *sort.to_apply();
  LessFn less = [&](const std::vector<llvm::Value*>& a, const std::vector<llvm::Value*>& c) -> absl::StatusOr<llvm::Value*> {
    std::vector<llvm::Value*> args;
    for (size_t i = 0; i < a.size(); ++i) {
      args.push_back(a[i]);
      args.push_back(c[i]);
    }
    absl::StatusOr<std::vector<llvm::Value*>> r = k.emitter->EmitThreadLocalCall(comparator, args, "comparator");
    if (!r.ok()) return r.status();
    if (r->empty()) return absl::InternalError("comparator returned nothing");
    return ToBool(b, (*r)[0]);
  };
  std::vector<const IrArray*> inputs;
  for (const IrArray& a : k.operands) inputs.push_back(&a);
  if (rows.n > 1 && rows.count > 0) {
    absl::StatusOr<bool> fast = TryEmitRegisterSort(k, sort, rows, less);
    if (!fast.ok()) return fast.status();
    if (*fast) return absl::OkStatus();
  }
  if (rows.n <= 1 || SharedBytes(NextPow2(rows.n), inputs) <= k.device->shared_memory_per_block) {
    if (rows.n == 0 || rows.count == 0) {
      k.launch = runtime::LaunchDimensions{};
      return absl::OkStatus();
    }
    return EmitSharedSort(k, rows, inputs, less,
                          [&](const IrArray::Index& row, llvm::Value* i, const std::vector<llvm::Value*>& values,
                              llvm::Value*) -> absl::Status {
                            for (size_t a = 0; a < n_arrays; ++a)
                              k.outputs[a].EmitWriteArrayElement(rows.At(row, i), values[a], b);
                            return absl::OkStatus();
                          });
  }
  // Long rows: a bitonic network through shared-memory chunks, a block per row; stable sorts
  // (stable-sort-expander left them without an index operand) keep odd-even transposition,
  // which only swaps neighbours that are strictly out of order.
  if (!sort.attrs().is_stable) return EmitGlobalBitonicSort(k, rows, less);
  const int64_t T = 1024;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = T;
  k.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(rows.count, k.device->sm_count * 2));
  llvm::Value* tid = k.ThreadIdX();
  return EmitStridedLoop(b, k.BlockIdX(), b.getInt64(rows.count), b.getInt64(k.launch.grid_x), "row",
                         [&](llvm::Value* r) -> absl::Status {
    IrArray::Index row = DelinearizeRowMajor(r, rows.other_dims, b);
    absl::Status s = EmitStridedLoop(b, tid, b.getInt64(rows.n), b.getInt64(T), "copy", [&](llvm::Value* i) {
      for (size_t a = 0; a < n_arrays; ++a)
        k.outputs[a].EmitWriteArrayElement(rows.At(row, i), k.operands[a].EmitReadArrayElement(rows.At(row, i), b), b);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k.Barrier();
    s = EmitForLoop(b, b.getInt64(0), b.getInt64(rows.n), "phase", [&](llvm::Value* phase) -> absl::Status {
      llvm::Value* parity = b.CreateAnd(phase, b.getInt64(1));
      absl::Status ps = EmitStridedLoop(b, tid, b.getInt64((rows.n + 1) / 2), b.getInt64(T), "pair",
                                        [&](llvm::Value* i) -> absl::Status {
        llvm::Value* p = b.CreateAdd(b.CreateMul(i, b.getInt64(2)), parity);
        llvm::Value* q = b.CreateAdd(p, b.getInt64(1));
        return EmitIf(b, b.CreateICmpSLT(q, b.getInt64(rows.n)), "inside", [&]() -> absl::Status {
          std::vector<llvm::Value*> vp, vq;
          for (size_t a = 0; a < n_arrays; ++a) {
            vp.push_back(k.outputs[a].EmitReadArrayElement(rows.At(row, p), b));
            vq.push_back(k.outputs[a].EmitReadArrayElement(rows.At(row, q), b));
          }
          absl::StatusOr<llvm::Value*> swap = less(vq, vp);
          if (!swap.ok()) return swap.status();
          return EmitIf(b, *swap, "swap", [&]() -> absl::Status {
            for (size_t a = 0; a < n_arrays; ++a) {
              k.outputs[a].EmitWriteArrayElement(rows.At(row, p), vq[a], b);
              k.outputs[a].EmitWriteArrayElement(rows.At(row, q), vp[a], b);
            }
            return absl::OkStatus();
          });
        });
      });
      if (!ps.ok()) return ps;
      k.Barrier();
      return absl::OkStatus();
    });
    return s;
  });
}

absl::Status EmitTopKKernel(GpuKernel& k, const HloInstruction& topk) {
  llvm::IRBuilderBase& b = *k.b;
  if (k.operands.size() != 1 || k.outputs.size() != 2) return absl::InvalidArgumentError("topk: expected (values, indices)");
  const Shape& x = k.operands[0].shape();
  if (x.rank() < 1) return absl::InvalidArgumentError("topk of a scalar");
  const PrimitiveType t = x.element_type();
  if (IsComplex(t)) return absl::UnimplementedError("topk of complex values");
  const PrimitiveType it = k.outputs[1].shape().element_type();
  const int64_t kk = topk.attrs().k;
  const bool largest = topk.attrs().largest;
  const Rows rows = RowsOf(x, x.rank() - 1);
  if (kk > rows.n) return absl::InvalidArgumentError("topk: k exceeds the row length");
  if (rows.count == 0 || kk == 0) {
    k.launch = runtime::LaunchDimensions{};
    return absl::OkStatus();
  }
  auto write = [&](const IrArray::Index& row, llvm::Value* i, llvm::Value* value, llvm::Value* original) {
    k.outputs[0].EmitWriteArrayElement(rows.At(row, i), value, b);
    llvm::Type* ity = PrimitiveTypeToIrType(it, b.getContext());
    k.outputs[1].EmitWriteArrayElement(rows.At(row, i), b.CreateTrunc(original, ity), b);
  };
  absl::StatusOr<bool> warp = TryEmitWarpTopK(k, topk);
  if (!warp.ok()) return warp.status();
  if (*warp) return absl::OkStatus();
  std::vector<const IrArray*> inputs = {&k.operands[0]};
  if (SharedBytes(NextPow2(rows.n), inputs) <= k.device->shared_memory_per_block) {
    LessFn less = [&](const std::vector<llvm::Value*>& a,
                      const std::vector<llvm::Value*>& c) -> absl::StatusOr<llvm::Value*> {
      return TotalOrderBefore(b, a[0], c[0], t, largest);
    };
    return EmitSharedSort(k, rows, inputs, less,
                          [&](const IrArray::Index& row, llvm::Value* i, const std::vector<llvm::Value*>& values,
                              llvm::Value* original) -> absl::Status {
                            return EmitIf(b, b.CreateICmpSLT(i, b.getInt64(kk)), "keep", [&]() {
                              write(row, i, values[0], original);
                              return absl::OkStatus();
                            });
                          });
  }
  // Long rows: a thread per row picks the k best one after another.
  k.launch = GridStrideLaunch(rows.count, 128, *k.device);
  llvm::Value* thread = b.CreateAdd(b.CreateMul(k.BlockIdX(), b.getInt64(k.launch.block_x)), k.ThreadIdX());
  llvm::Type* vty = PrimitiveTypeToIrType(t, b.getContext());
  llvm::AllocaInst* prev_v = EntryAlloca(b, vty, "prev.value");
  llvm::AllocaInst* prev_i = EntryAlloca(b, b.getInt64Ty(), "prev.index");
  llvm::AllocaInst* best_v = EntryAlloca(b, vty, "best.value");
  llvm::AllocaInst* best_i = EntryAlloca(b, b.getInt64Ty(), "best.index");
  // (value, position) before (value', position') in the order top-k returns.
  auto before = [&](llvm::Value* va, llvm::Value* ia, llvm::Value* vb, llvm::Value* ib) {
    llvm::Value* lt = TotalOrderBefore(b, va, vb, t, largest);
    llvm::Value* gt = TotalOrderBefore(b, vb, va, t, largest);
    return b.CreateOr(lt, b.CreateAnd(b.CreateNot(gt), b.CreateICmpSLT(ia, ib)));
  };
  return EmitStridedLoop(b, thread, b.getInt64(rows.count), b.getInt64(k.launch.block_x * k.launch.grid_x), "row",
                         [&](llvm::Value* r) -> absl::Status {
    IrArray::Index row = DelinearizeRowMajor(r, rows.other_dims, b);
    b.CreateStore(b.getInt64(-1), prev_i);
    return EmitForLoop(b, b.getInt64(0), b.getInt64(kk), "pick", [&](llvm::Value* j) -> absl::Status {
      b.CreateStore(b.getInt64(-1), best_i);
      absl::Status s = EmitForLoop(b, b.getInt64(0), b.getInt64(rows.n), "scan", [&](llvm::Value* i) {
        llvm::Value* v = k.operands[0].EmitReadArrayElement(rows.At(row, i), b);
        llvm::Value* pi = b.CreateLoad(b.getInt64Ty(), prev_i);
        llvm::Value* eligible = b.CreateOr(b.CreateICmpSLT(pi, b.getInt64(0)),
                                           before(b.CreateLoad(vty, prev_v), pi, v, i));
        llvm::Value* bi = b.CreateLoad(b.getInt64Ty(), best_i);
        llvm::Value* better = b.CreateOr(b.CreateICmpSLT(bi, b.getInt64(0)), before(v, i, b.CreateLoad(vty, best_v), bi));
        llvm::Value* take = b.CreateAnd(eligible, better);
        b.CreateStore(b.CreateSelect(take, v, b.CreateLoad(vty, best_v)), best_v);
        b.CreateStore(b.CreateSelect(take, i, bi), best_i);
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
      llvm::Value* v = b.CreateLoad(vty, best_v);
      llvm::Value* i = b.CreateLoad(b.getInt64Ty(), best_i);
      write(row, j, v, i);
      b.CreateStore(v, prev_v);
      b.CreateStore(i, prev_i);
      return absl::OkStatus();
    });
  });
}

}  // namespace hloc::codegen::gpu
