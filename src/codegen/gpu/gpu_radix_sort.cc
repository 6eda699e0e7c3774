// "__hloc$radix_sort" (eval/sort_calls.h) on the GPU: an LSD radix sort of (key, value) pairs,
// one 1024-thread block per row (grid-stride over rows), 8-bit digits, key_bits/8 passes.
//
// Buffers: pass p reads B[p] and writes B[p+1], B[0] the operands and B[passes] the outputs,
// the others alternating scratch / outputs backwards from the end (even counts go operands ->
// scratch -> outputs -> scratch -> outputs, odd ones operands -> outputs -> scratch -> ...).
// The scratch holds a whole-array copy of keys and values, so each row stays in its own place.
//
// One pass over a row (barriers between the phases):
//   1. histogram: a count per digit in shared memory (shared atomics, one per digit a warp
//      holds);
//   2. scan: exclusive prefix of the 256 counts -> base[d], the row position of digit d's next
//      element (Hillis-Steele over 256 threads, 8 steps);
//   3. tiles of 1024 elements in row order. Per element: its digit d; `peers`, the lanes of
//      its warp with the same digit (match.any.sync); rank = popc(peers & lanemask_lt); the
//      lowest peer records the warp's count of d. Then, per digit, an exclusive prefix of the
//      32 warps' counts, and each element goes to base[d] + its warp's prefix + rank; base[d]
//      advances by the tile's count. Elements keep their order within a digit (tiles in
//      order, warps in order, lanes in order), so each pass, and the sort, is stable.
// All loops are runtime loops (one copy of each phase in the kernel): compile time stays flat
// in the row length and key width (see gpu_sort_global.cc for what unrolling cost).
#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "eval/sort_calls.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc::codegen::gpu {
namespace {

constexpr int64_t kThreads = 1024;
constexpr int64_t kWarps = kThreads / 32;
constexpr int64_t kBins = 256;  // 8-bit digits

class RadixSortEmitter {
 public:
  RadixSortEmitter(GpuKernel& k, const RadixSortConfig& config, const Shape& keys, const Shape& values)
      : k_(k), b_(*k.b), n_(keys.dimensions(config.dimension)), rows_(keys.num_elements() / n_),
        passes_(config.key_bits / 8),
        key_ty_(b_.getIntNTy(8 * ByteWidth(keys.element_type()))),
        value_ty_(b_.getIntNTy(8 * ByteWidth(values.element_type()))),
        values_offset_(RadixSortScratchValuesOffset(keys.num_elements(), ByteWidth(keys.element_type()))) {}

  absl::Status Emit() {
    hist_ = Shared(b_.getInt32Ty(), kBins, "hist");
    base_ = Shared(b_.getInt32Ty(), kBins, "base");
    tile_base_ = Shared(b_.getInt32Ty(), kBins, "tile_base");
    // [warp][digit]; counts and prefixes within a tile are at most 1024.
    warp_count_ = Shared(b_.getInt16Ty(), kWarps * kBins, "warp_count");
    warp_prefix_ = Shared(b_.getInt16Ty(), kWarps * kBins, "warp_prefix");
    run_ = cpu::EntryAlloca(b_, b_.getInt32Ty(), "run");
    tid_ = k_.ThreadIdX();
    lane_mask_lt_ = k_.LaneMaskLt();
    return EmitStridedLoop(b_, k_.BlockIdX(), b_.getInt64(rows_), b_.getInt64(k_.launch.grid_x), "row",
                           [&](llvm::Value* r) -> absl::Status {
      row_ = b_.CreateMul(r, b_.getInt64(n_));
      return cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(passes_), "pass",
                              [&](llvm::Value* p) { return Pass(p); });
    });
  }

 private:
  llvm::Value* Shared(llvm::Type* t, int64_t count, const std::string& name) {
    shared_types_[name] = llvm::ArrayType::get(t, count);
    return k_.SharedArray(t, count, name);
  }
  llvm::Value* At(llvm::Value* array, const std::string& name, llvm::Value* i) {
    return b_.CreateInBoundsGEP(shared_types_[name], array, {b_.getInt64(0), i});
  }
  llvm::Value* Hist(llvm::Value* i) { return At(hist_, "hist", i); }
  llvm::Value* Base(llvm::Value* i) { return At(base_, "base", i); }
  llvm::Value* TileBase(llvm::Value* i) { return At(tile_base_, "tile_base", i); }
  llvm::Value* WarpCount(llvm::Value* w, llvm::Value* d) {
    return At(warp_count_, "warp_count", b_.CreateAdd(b_.CreateMul(w, b_.getInt64(kBins)), d));
  }
  llvm::Value* WarpPrefix(llvm::Value* w, llvm::Value* d) {
    return At(warp_prefix_, "warp_prefix", b_.CreateAdd(b_.CreateMul(w, b_.getInt64(kBins)), d));
  }

  // Buffer B[j] (see the file comment) for a runtime j >= 1: the outputs when passes - j is even.
  llvm::Value* BufferIsOutput(llvm::Value* j) {
    llvm::Value* left = b_.CreateSub(b_.getInt64(passes_), j);
    return b_.CreateICmpEQ(b_.CreateAnd(left, b_.getInt64(1)), b_.getInt64(0));
  }
  llvm::Value* ScratchValues() {
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), k_.outputs[2].base(), b_.getInt64(values_offset_));
  }

  // The digit of `key` that pass `shift` (bits, i64) sorts by, as an i64 in [0, 256).
  llvm::Value* Digit(llvm::Value* key, llvm::Value* shift) {
    llvm::Value* s = b_.CreateZExtOrTrunc(shift, key_ty_);
    return b_.CreateZExt(b_.CreateTrunc(b_.CreateLShr(key, s), b_.getInt8Ty()), b_.getInt64Ty());
  }

  absl::Status Pass(llvm::Value* p) {
    // The previous pass's scatter (or the previous row's) is done before this one reads.
    k_.Barrier();
    llvm::Value* first = b_.CreateICmpEQ(p, b_.getInt64(0));
    llvm::Value* src_out = BufferIsOutput(p);  // for p >= 1
    llvm::Value* dst_out = BufferIsOutput(b_.CreateAdd(p, b_.getInt64(1)));
    llvm::Value* scratch_keys = k_.outputs[2].base();
    llvm::Value* scratch_values = ScratchValues();
    src_keys_ = b_.CreateSelect(first, k_.operands[0].base(),
                                b_.CreateSelect(src_out, k_.outputs[0].base(), scratch_keys), "src_keys");
    src_values_ = b_.CreateSelect(first, k_.operands[1].base(),
                                  b_.CreateSelect(src_out, k_.outputs[1].base(), scratch_values), "src_values");
    dst_keys_ = b_.CreateSelect(dst_out, k_.outputs[0].base(), scratch_keys, "dst_keys");
    dst_values_ = b_.CreateSelect(dst_out, k_.outputs[1].base(), scratch_values, "dst_values");
    shift_ = b_.CreateMul(p, b_.getInt64(8));
    if (absl::Status s = Histogram(); !s.ok()) return s;
    if (absl::Status s = Scan(); !s.ok()) return s;
    return EmitStridedLoop(b_, b_.getInt64(0), b_.getInt64(n_), b_.getInt64(kThreads), "tile",
                                [&](llvm::Value* t0) { return Tile(t0); });
  }

  llvm::Value* LoadKey(llvm::Value* base, llvm::Value* i) {
    return b_.CreateLoad(key_ty_, b_.CreateInBoundsGEP(key_ty_, base, b_.CreateAdd(row_, i)));
  }
  llvm::Value* LoadValue(llvm::Value* base, llvm::Value* i) {
    return b_.CreateLoad(value_ty_, b_.CreateInBoundsGEP(value_ty_, base, b_.CreateAdd(row_, i)));
  }

  // hist[d] = elements of the row with digit d; the warp counts start at zero.
  absl::Status Histogram() {
    absl::Status s = EmitStridedLoop(b_, tid_, b_.getInt64(kBins), b_.getInt64(kThreads), "zero_hist",
                                          [&](llvm::Value* d) {
      b_.CreateStore(b_.getInt32(0), Hist(d));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    s = EmitStridedLoop(b_, tid_, b_.getInt64(kWarps * kBins), b_.getInt64(kThreads), "zero_counts",
                             [&](llvm::Value* i) {
      b_.CreateStore(b_.getInt16(0), At(warp_count_, "warp_count", i));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k_.Barrier();
    // In tiles, so that whole warps meet the match: one atomic per digit a warp holds (the
    // top digits of float keys are mostly alike, and one hot bin would serialize the block).
    s = EmitStridedLoop(b_, b_.getInt64(0), b_.getInt64(n_), b_.getInt64(kThreads), "count", [&](llvm::Value* t0) {
      TileLane lane = LoadTileLane(t0);
      return cpu::EmitIf(b_, lane.leader, "count_leader", [&] {
        b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Hist(lane.digit), lane.peer_count, llvm::MaybeAlign(4),
                           llvm::AtomicOrdering::Monotonic);
        return absl::OkStatus();
      });
    });
    k_.Barrier();
    return s;
  }

  // This thread's element of the tile at t0 and its standing among same-digit lanes of its warp.
  struct TileLane {
    llvm::Value *valid, *key, *value, *digit, *peers, *rank, *leader, *peer_count;
  };
  TileLane LoadTileLane(llvm::Value* t0, bool with_value = false) {
    TileLane l;
    llvm::Value* i = b_.CreateAdd(t0, tid_);
    l.valid = b_.CreateICmpSLT(i, b_.getInt64(n_));
    // Lanes past the row's end load its last element (in bounds) and take no part after.
    llvm::Value* at = b_.CreateSelect(l.valid, i, b_.getInt64(n_ - 1));
    l.key = LoadKey(src_keys_, at);
    l.value = with_value ? LoadValue(src_values_, at) : nullptr;
    l.digit = Digit(l.key, shift_);
    // Every lane of the warp runs the match; the past-the-end ones under a digit of their own.
    llvm::Value* match = b_.CreateSelect(l.valid, b_.CreateTrunc(l.digit, b_.getInt32Ty()), b_.getInt32(kBins));
    l.peers = k_.MatchAnySync(b_.getInt32(0xffffffffu), match);
    l.rank = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, b_.CreateAnd(l.peers, lane_mask_lt_));
    l.leader = b_.CreateAnd(l.valid, b_.CreateICmpEQ(l.rank, b_.getInt32(0)));
    l.peer_count = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, l.peers);
    return l;
  }

  // base[d] = sum of hist[0..d) (inclusive Hillis-Steele scan of hist in place, threads 0..255;
  // every thread takes part in the barriers).
  absl::Status Scan() {
    llvm::Value* is_bin = b_.CreateICmpULT(tid_, b_.getInt64(kBins));
    llvm::Value* bin = b_.CreateSelect(is_bin, tid_, b_.getInt64(kBins - 1));
    llvm::Value* count = b_.CreateLoad(b_.getInt32Ty(), Hist(bin), "count");
    absl::Status s = cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(8), "scan", [&](llvm::Value* step) {
      llvm::Value* off = b_.CreateShl(b_.getInt64(1), step);
      llvm::Value* has = b_.CreateAnd(is_bin, b_.CreateICmpUGE(bin, off));
      llvm::Value* from = b_.CreateSelect(has, b_.CreateSub(bin, off), b_.getInt64(0));
      llvm::Value* add = b_.CreateSelect(has, b_.CreateLoad(b_.getInt32Ty(), Hist(from)), b_.getInt32(0));
      k_.Barrier();
      absl::Status st = cpu::EmitIf(b_, is_bin, "scan_add", [&] {
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), Hist(bin)), add), Hist(bin));
        return absl::OkStatus();
      });
      k_.Barrier();
      return st;
    });
    if (!s.ok()) return s;
    s = cpu::EmitIf(b_, is_bin, "base", [&] {
      b_.CreateStore(b_.CreateSub(b_.CreateLoad(b_.getInt32Ty(), Hist(bin)), count), Base(bin));
      return absl::OkStatus();
    });
    k_.Barrier();
    return s;
  }

  // Elements t0 .. t0+1023 of the row to their places in dst (see the file comment).
  absl::Status Tile(llvm::Value* t0) {
    TileLane lane = LoadTileLane(t0, /*with_value=*/true);
    llvm::Value* digit = lane.digit;
    llvm::Value* warp = b_.CreateLShr(tid_, b_.getInt64(5));
    absl::Status s = cpu::EmitIf(b_, lane.leader, "leader", [&] {
      b_.CreateStore(b_.CreateTrunc(lane.peer_count, b_.getInt16Ty()), WarpCount(warp, digit));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k_.Barrier();
    // Per digit (threads 0..255): the warps' exclusive prefix, the tile's base; the counts go
    // back to zero for the next tile.
    s = cpu::EmitIf(b_, b_.CreateICmpULT(tid_, b_.getInt64(kBins)), "prefix", [&]() -> absl::Status {
      b_.CreateStore(b_.getInt32(0), run_);
      absl::Status st = cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(kWarps), "warp", [&](llvm::Value* w) {
        llvm::Value* run = b_.CreateLoad(b_.getInt32Ty(), run_);
        llvm::Value* c = b_.CreateZExt(b_.CreateLoad(b_.getInt16Ty(), WarpCount(w, tid_)), b_.getInt32Ty());
        b_.CreateStore(b_.CreateTrunc(run, b_.getInt16Ty()), WarpPrefix(w, tid_));
        b_.CreateStore(b_.getInt16(0), WarpCount(w, tid_));
        b_.CreateStore(b_.CreateAdd(run, c), run_);
        return absl::OkStatus();
      });
      if (!st.ok()) return st;
      llvm::Value* base = b_.CreateLoad(b_.getInt32Ty(), Base(tid_));
      b_.CreateStore(base, TileBase(tid_));
      b_.CreateStore(b_.CreateAdd(base, b_.CreateLoad(b_.getInt32Ty(), run_)), Base(tid_));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k_.Barrier();
    // The scatter. The next tile's prefix phase (which rewrites tile_base and warp_prefix) is
    // behind that tile's first barrier.
    return cpu::EmitIf(b_, lane.valid, "scatter", [&] {
      llvm::Value* prefix = b_.CreateZExt(b_.CreateLoad(b_.getInt16Ty(), WarpPrefix(warp, digit)), b_.getInt32Ty());
      llvm::Value* pos = b_.CreateAdd(b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), TileBase(digit)), prefix), lane.rank);
      llvm::Value* at_row = b_.CreateAdd(row_, b_.CreateZExt(pos, b_.getInt64Ty()));
      b_.CreateStore(lane.key, b_.CreateInBoundsGEP(key_ty_, dst_keys_, at_row));
      b_.CreateStore(lane.value, b_.CreateInBoundsGEP(value_ty_, dst_values_, at_row));
      return absl::OkStatus();
    });
  }

  GpuKernel& k_;
  llvm::IRBuilderBase& b_;
  const int64_t n_, rows_, passes_;
  llvm::Type* key_ty_;
  llvm::Type* value_ty_;
  const int64_t values_offset_;
  std::map<std::string, llvm::Type*> shared_types_;
  llvm::Value *hist_ = nullptr, *base_ = nullptr, *tile_base_ = nullptr, *warp_count_ = nullptr,
              *warp_prefix_ = nullptr;
  llvm::AllocaInst* run_ = nullptr;
  llvm::Value *tid_ = nullptr, *lane_mask_lt_ = nullptr, *row_ = nullptr, *shift_ = nullptr;
  llvm::Value *src_keys_ = nullptr, *src_values_ = nullptr, *dst_keys_ = nullptr, *dst_values_ = nullptr;
};

}  // namespace

absl::Status EmitRadixSortKernel(GpuKernel& k, const HloInstruction& call) {
  absl::StatusOr<RadixSortConfig> config = ParseRadixSortCall(call);
  if (!config.ok()) return config.status();
  const Shape& keys = call.operand(0)->shape();
  const Shape& values = call.operand(1)->shape();
  if (k.operands.size() != 2 || k.outputs.size() != 3)
    return absl::InternalError("radix sort: expected 2 operand and 3 result buffers");
  // Rows are contiguous runs of the buffers (the rewriter asks for this).
  if (config->dimension != keys.rank() - 1 || !IsRowMajorLayout(keys) || !IsRowMajorLayout(values) ||
      !IsRowMajorLayout(call.shape().tuple_shapes(0)) || !IsRowMajorLayout(call.shape().tuple_shapes(1)))
    return absl::UnimplementedError("radix sort: the GPU kernel sorts the minor-most dimension of row-major arrays");
  const int64_t shared_bytes = 3 * kBins * 4 + 2 * kWarps * kBins * 2;
  if (shared_bytes > k.device->shared_memory_per_block)
    return absl::UnimplementedError(absl::StrCat("radix sort: needs ", shared_bytes, " bytes of shared memory a block"));
  const int64_t rows = keys.num_elements() / keys.dimensions(config->dimension);
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = kThreads;
  // Two blocks fit an SM (2048 threads, 2 x 35 KiB of shared memory); more rows than that loop.
  k.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(rows, k.device->sm_count * 2));
  if (rows < k.device->sm_count)
    k.serial_reason = "radix sort: a block per row, whose digit passes run one after another";
  return RadixSortEmitter(k, *config, keys, values).Emit();
}

}  // namespace hloc::codegen::gpu
