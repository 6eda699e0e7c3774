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
#include "codegen/elemental/llvm_util.h"
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
      // Chunks sorted on their own (stages 2..S), then the merge stages S*2..P. The stages and
      // steps are runtime loops: unrolled, a 32768-wide row made a kernel of ~200 copies of the
      // comparator and 2.8 s of compile time.
      if (absl::Status s = ChunkPass(tid, nullptr); !s.ok()) return s;
      return EmitForLoop(b_, b_.getInt64(log_s_ + 1), b_.getInt64(log_p_ + 1), "stage",
                              [&](llvm::Value* lk) -> absl::Status {
        // Steps 2^(lk-1) .. S across chunks, in global memory.
        absl::Status s = EmitForLoop(b_, b_.getInt64(0), b_.CreateSub(lk, b_.getInt64(log_s_)), "global",
                                          [&](llvm::Value* t) {
          return Step(tid, Global(), P_, lk, b_.CreateSub(b_.CreateSub(lk, b_.getInt64(1)), t), b_.getInt64(rows_.n));
        });
        if (!s.ok()) return s;
        return ChunkPass(tid, lk);
      });
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

  // One step of merge stage 2^lk with distance 2^lj (both runtime i64) over `size` positions of
  // `m` (pairs whose upper position is at or past `limit` are skipped), then a barrier. The
  // stage's first step (lj == lk - 1) pairs i with its mirror in the block of 2^lk, the others
  // i with i + 2^lj; both start from the same lower position.
  absl::Status Step(llvm::Value* tid, const RowAccess& m, int64_t size, llvm::Value* lk, llvm::Value* lj,
                    llvm::Value* limit) {
    absl::Status s = EmitStridedLoop(b_, tid, b_.getInt64(size / 2), b_.getInt64(k_.launch.block_x), "pair",
                                     [&](llvm::Value* t) -> absl::Status {
      llvm::Value* j = b_.CreateShl(b_.getInt64(1), lj);
      llvm::Value* off = b_.CreateAnd(t, b_.CreateSub(j, b_.getInt64(1)));
      llvm::Value* base = b_.CreateShl(b_.CreateLShr(t, lj), b_.CreateAdd(lj, b_.getInt64(1)));
      llvm::Value* lo = b_.CreateOr(base, off);
      llvm::Value* flip = b_.CreateICmpEQ(lj, b_.CreateSub(lk, b_.getInt64(1)));
      llvm::Value* mirror = b_.CreateSub(b_.CreateAdd(base, b_.CreateSub(b_.CreateShl(j, 1), b_.getInt64(1))), off);
      llvm::Value* hi = b_.CreateSelect(flip, mirror, b_.CreateAdd(lo, j));
      return EmitIf(b_, b_.CreateICmpSLT(hi, limit), "inside", [&]() -> absl::Status {
        std::vector<llvm::Value*> vl, vh;
        for (size_t a = 0; a < n_arrays_; ++a) {
          vl.push_back(m.load(a, lo));
          vh.push_back(m.load(a, hi));
        }
        absl::StatusOr<llvm::Value*> swap = less_(vh, vl);
        if (!swap.ok()) return swap.status();
        return EmitIf(b_, *swap, "swap", [&]() -> absl::Status {
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

  // Every chunk through shared memory: without `stage`, whole stages 2..S (each all its steps);
  // with it, the steps S/2..1 of that stage.
  absl::Status ChunkPass(llvm::Value* tid, llvm::Value* stage) {
    if (log_s_ < 1) return absl::OkStatus();
    return EmitForLoop(b_, b_.getInt64(0), b_.getInt64(P_ / S_), "chunk", [&](llvm::Value* c) -> absl::Status {
      llvm::Value* base = b_.CreateMul(c, b_.getInt64(S_));
      llvm::Value* limit = b_.CreateSub(b_.getInt64(rows_.n), base);  // row end, chunk-relative
      absl::Status s = Move(tid, base, limit, /*to_shared=*/true);
      if (!s.ok()) return s;
      auto steps = [&](llvm::Value* lk, llvm::Value* top) {  // steps top..0 of stage lk
        return EmitForLoop(b_, b_.getInt64(0), b_.CreateAdd(top, b_.getInt64(1)), "step", [&](llvm::Value* t) {
          return Step(tid, Shared(), S_, lk, b_.CreateSub(top, t), limit);
        });
      };
      if (stage == nullptr) {
        s = EmitForLoop(b_, b_.getInt64(1), b_.getInt64(log_s_ + 1), "stage",
                             [&](llvm::Value* lk) { return steps(lk, b_.CreateSub(lk, b_.getInt64(1))); });
      } else {
        s = steps(stage, b_.getInt64(log_s_ - 1));
      }
      if (!s.ok()) return s;
      return Move(tid, base, limit, /*to_shared=*/false);
    });
  }

  absl::Status Move(llvm::Value* tid, llvm::Value* base, llvm::Value* limit, bool to_shared) {
    absl::Status s = EmitStridedLoop(b_, tid, b_.getInt64(S_), b_.getInt64(k_.launch.block_x), "move",
                                     [&](llvm::Value* i) -> absl::Status {
      return EmitIf(b_, b_.CreateICmpSLT(i, limit), "real", [&]() -> absl::Status {
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
