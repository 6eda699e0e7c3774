// Rows too long for one block's shared memory (top-p sampling sorts 32000 logits a row): a
// block per row sorts it in place in the outputs with a bitonic network, every step of which
// that stays within a chunk of S elements running on the chunk loaded into shared memory. Only
// the steps across chunks (log2(P/S) per merge stage) touch global memory, so a row of 32768
// f32 with 8192-element chunks is read and written ~9 times instead of 120.
//
// All compare-exchanges are ascending (the "flip" form: the first step of each merge stage
// pairs i with the mirror position in its block, the others i with i + j), so elements past
// the row's end behave as +infinity that never moves and padding costs nothing: a pair whose
// upper position is past the end is skipped. The network is not stable; the dispatch takes this
// path only for sorts that are not (stable-sort-expander gives long stable sorts an index
// operand and a tie-breaking comparator first).
#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_sort_internal.h"
#include "llvm/Support/MathExtras.h"

namespace hloc::codegen::gpu {
namespace {

// Loads and stores of element `i` of array `a` of the current row (global) or chunk (shared).
struct RowAccess {
  std::function<llvm::Value*(size_t a, llvm::Value* i)> load;
  std::function<void(size_t a, llvm::Value* i, llvm::Value* v)> store;
};

class GlobalBitonic {
 public:
  GlobalBitonic(GpuKernel& k, const SortRows& rows, const SortLessFn& less, int64_t chunk)
      : k_(k), b_(*k.b), rows_(rows), less_(less), n_arrays_(k.outputs.size()), S_(chunk),
        P_(NextPow2(rows.n)), log_s_(llvm::Log2_64(chunk)), log_p_(llvm::Log2_64(NextPow2(rows.n))) {}

  absl::Status Emit() {
    for (size_t a = 0; a < n_arrays_; ++a)
      shared_.push_back(k_.SharedArray(Type(a), S_, absl::StrCat("chunk", a)));
    llvm::Value* tid = k_.ThreadIdX();
    return EmitStridedLoop(b_, k_.BlockIdX(), b_.getInt64(rows_.count), b_.getInt64(k_.launch.grid_x), "row",
                           [&](llvm::Value* r) -> absl::Status {
      row_ = DelinearizeRowMajor(r, rows_.other_dims, b_);
      if (absl::Status s = CopyIn(tid); !s.ok()) return s;
      // Chunks sorted on their own (stages 2..S), then the merge stages S*2..P.
      if (absl::Status s = ChunkPass(tid, 1, log_s_, /*whole_stages=*/true); !s.ok()) return s;
      for (int64_t lk = log_s_ + 1; lk <= log_p_; ++lk) {
        if (absl::Status s = Step(tid, Global(), P_, lk, lk - 1, b_.getInt64(rows_.n)); !s.ok()) return s;
        for (int64_t lj = lk - 2; lj >= log_s_; --lj)
          if (absl::Status s = Step(tid, Global(), P_, lk, lj, b_.getInt64(rows_.n)); !s.ok()) return s;
        if (absl::Status s = ChunkPass(tid, lk, log_s_ - 1, /*whole_stages=*/false); !s.ok()) return s;
      }
      return absl::OkStatus();
    });
  }

 private:
  llvm::Type* Type(size_t a) { return PrimitiveTypeToIrType(k_.outputs[a].shape().element_type(), b_.getContext()); }

  RowAccess Global() {
    return {[this](size_t a, llvm::Value* i) { return k_.outputs[a].EmitReadArrayElement(rows_.At(row_, i), b_); },
            [this](size_t a, llvm::Value* i, llvm::Value* v) {
              k_.outputs[a].EmitWriteArrayElement(rows_.At(row_, i), v, b_);
            }};
  }
  llvm::Value* SharedAt(size_t a, llvm::Value* i) {
    return b_.CreateInBoundsGEP(llvm::ArrayType::get(Type(a), S_), shared_[a], {b_.getInt64(0), i});
  }
  RowAccess Shared() {
    return {[this](size_t a, llvm::Value* i) { return b_.CreateLoad(Type(a), SharedAt(a, i)); },
            [this](size_t a, llvm::Value* i, llvm::Value* v) { b_.CreateStore(v, SharedAt(a, i)); }};
  }

  // The outputs start as the operands (unless the sort runs in place).
  absl::Status CopyIn(llvm::Value* tid) {
    absl::Status s = EmitStridedLoop(b_, tid, b_.getInt64(rows_.n), b_.getInt64(k_.launch.block_x), "copy",
                                     [&](llvm::Value* i) {
      for (size_t a = 0; a < n_arrays_; ++a)
        if (!k_.OutputAliasesOperand(a, a))
          k_.outputs[a].EmitWriteArrayElement(rows_.At(row_, i), k_.operands[a].EmitReadArrayElement(rows_.At(row_, i), b_), b_);
      return absl::OkStatus();
    });
    k_.Barrier();
    return s;
  }

  // One step of merge stage 2^lk with distance 2^lj over `size` positions of `m` (pairs whose
  // upper position is at or past `limit` are skipped), then a barrier.
  absl::Status Step(llvm::Value* tid, const RowAccess& m, int64_t size, int64_t lk, int64_t lj, llvm::Value* limit) {
    absl::Status s = EmitStridedLoop(b_, tid, b_.getInt64(size / 2), b_.getInt64(k_.launch.block_x), "pair",
                                     [&](llvm::Value* t) -> absl::Status {
      llvm::Value *lo, *hi;
      if (lj == lk - 1) {  // the flip: i and the mirror of i in its block of 2^lk
        llvm::Value* block = b_.CreateShl(b_.CreateLShr(t, lj), lk);
        llvm::Value* off = b_.CreateAnd(t, b_.getInt64((int64_t{1} << lj) - 1));
        lo = b_.CreateAdd(block, off);
        hi = b_.CreateSub(b_.CreateAdd(block, b_.getInt64((int64_t{1} << lk) - 1)), off);
      } else {
        const int64_t j = int64_t{1} << lj;
        lo = b_.CreateOr(b_.CreateShl(b_.CreateLShr(t, lj), lj + 1), b_.CreateAnd(t, b_.getInt64(j - 1)));
        hi = b_.CreateAdd(lo, b_.getInt64(j));
      }
      return cpu::EmitIf(b_, b_.CreateICmpSLT(hi, limit), "inside", [&]() -> absl::Status {
        std::vector<llvm::Value*> vl, vh;
        for (size_t a = 0; a < n_arrays_; ++a) {
          vl.push_back(m.load(a, lo));
          vh.push_back(m.load(a, hi));
        }
        absl::StatusOr<llvm::Value*> swap = less_(vh, vl);
        if (!swap.ok()) return swap.status();
        return cpu::EmitIf(b_, *swap, "swap", [&]() -> absl::Status {
          for (size_t a = 0; a < n_arrays_; ++a) {
            m.store(a, lo, vh[a]);
            m.store(a, hi, vl[a]);
          }
          return absl::OkStatus();
        });
      });
    });
    k_.Barrier();
    return s;
  }

  // Every chunk through shared memory: whole stages 2^lk_first..2^lj_last (each all its
  // steps), or the steps 2^lj_last..1 of stage 2^lk_first.
  absl::Status ChunkPass(llvm::Value* tid, int64_t lk_first, int64_t lj_last, bool whole_stages) {
    if (lj_last < 0) return absl::OkStatus();
    return cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(P_ / S_), "chunk", [&](llvm::Value* c) -> absl::Status {
      llvm::Value* base = b_.CreateMul(c, b_.getInt64(S_));
      llvm::Value* limit = b_.CreateSub(b_.getInt64(rows_.n), base);  // row end, chunk-relative
      absl::Status s = Move(tid, base, limit, /*to_shared=*/true);
      if (!s.ok()) return s;
      if (whole_stages) {
        for (int64_t lk = lk_first; lk <= lj_last && s.ok(); ++lk)
          for (int64_t lj = lk - 1; lj >= 0 && s.ok(); --lj) s = Step(tid, Shared(), S_, lk, lj, limit);
      } else {
        for (int64_t lj = lj_last; lj >= 0 && s.ok(); --lj) s = Step(tid, Shared(), S_, lk_first, lj, limit);
      }
      if (!s.ok()) return s;
      return Move(tid, base, limit, /*to_shared=*/false);
    });
  }

  absl::Status Move(llvm::Value* tid, llvm::Value* base, llvm::Value* limit, bool to_shared) {
    absl::Status s = EmitStridedLoop(b_, tid, b_.getInt64(S_), b_.getInt64(k_.launch.block_x), "move",
                                     [&](llvm::Value* i) -> absl::Status {
      return cpu::EmitIf(b_, b_.CreateICmpSLT(i, limit), "real", [&]() -> absl::Status {
        llvm::Value* g = b_.CreateAdd(base, i);
        for (size_t a = 0; a < n_arrays_; ++a) {
          if (to_shared) Shared().store(a, i, Global().load(a, g));
          else Global().store(a, g, Shared().load(a, i));
        }
        return absl::OkStatus();
      });
    });
    k_.Barrier();
    return s;
  }

  GpuKernel& k_;
  llvm::IRBuilderBase& b_;
  const SortRows& rows_;
  const SortLessFn& less_;
  const size_t n_arrays_;
  const int64_t S_, P_, log_s_, log_p_;
  std::vector<llvm::Value*> shared_;
  IrArray::Index row_;
};

}  // namespace

absl::Status EmitGlobalBitonicSort(GpuKernel& k, const SortRows& rows, const SortLessFn& less) {
  int64_t bytes = 0;
  for (const IrArray& a : k.outputs) bytes += std::max(1, ByteWidth(a.shape().element_type()));
  // The largest power-of-two chunk of every array that fits the block's shared memory.
  int64_t chunk = 2;
  while (chunk * 2 * bytes <= k.device->shared_memory_per_block && chunk * 2 <= NextPow2(rows.n)) chunk *= 2;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = 1024;
  // Two blocks fit an SM (2048 threads); more rows than that loop.
  k.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(rows.count, k.device->sm_count * 2));
  return GlobalBitonic(k, rows, less, chunk).Emit();
}

}  // namespace hloc::codegen::gpu
