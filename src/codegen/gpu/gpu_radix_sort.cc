// "__hloc$radix_sort" (eval/sort_calls.h) on the GPU: an LSD radix sort of (key, value) pairs,
// one 512-thread block per row (grid-stride over rows), 8-bit digits, key_bits/8 passes.
//
// Buffers: pass p reads B[p] and writes B[p+1], B[0] the operands and B[passes] the outputs,
// the others alternating scratch / outputs backwards from the end (even counts go operands ->
// scratch -> outputs -> scratch -> outputs, odd ones operands -> outputs -> scratch -> ...).
// The scratch holds a whole-array copy of keys and values, so each row stays in its own place.
//
// A tile is kThreads x items consecutive elements of a row; warp w owns its 32 x items
// elements w*32*items .. and holds them as `items` rounds of 32 consecutive ones (round j,
// lane l: element w*32*items + 32j + l), so the loads coalesce and each thread has `items`
// independent loads in flight. `items` grows as the element bytes shrink (staging <= 32 KiB).
// Tiles of many elements matter: a tile costs four block barriers and a serial walk over the
// warps, and a first version with one element per thread (1024 a tile) spent most of its time
// there (top-p sampling's 256 x 32000 sort: 800 us).
//
// One pass over a row (barriers between the phases):
//   1. histogram: a count per digit in shared memory (shared atomics, one per digit a warp
//      round holds);
//   2. scan: exclusive prefix of the 256 counts -> base[d], the row position of digit d's next
//      element (threads 0..255, see ExclusiveScan256);
//   3. per tile:
//      a. rank: per round, the lanes with the same digit (match.any.sync); an element's rank in
//         its warp = the warp's running count of d (warp_count[warp][d], from earlier rounds)
//         + popc(peers & lanemask_lt); the lowest peer then adds the peers to the running count.
//      b. prefix (threads 0..255, one per digit): warp_count[.][d] becomes, in place, the
//         exclusive prefix over the warps; the digit's tile total `run` is scanned over the
//         digits -> tile_start[d] (where d's run starts in the tile sorted by digit);
//         out_base[d] = base[d] - tile_start[d]; base[d] advances by run.
//      c. stage: each element goes to shared position tile_start[d] + its warp's prefix + rank
//         (the tile sorted by digit, stably).
//      d. write: thread i takes staged elements i, i + kThreads, ..., recomputes each digit d
//         and stores it to row position out_base[d] + s = (tile's base of d) + (s -
//         tile_start[d]). Consecutive threads of a digit's run write consecutive addresses, so a
//         warp's stores fill few 32-byte sectors instead of up to 32 (the 65 MB of a large pass
//         do not fit in L2, where partial sectors would become DRAM read-modify-writes). The
//         warp counts are zeroed for the next tile.
//      Elements keep their order within a digit (tiles, warps, rounds and lanes in row order,
//      staged runs in that order), so each pass, and the sort, is stable. Elements past the
//      row's end (last tile) count nowhere and write nothing; staged positions 0 .. valid-1 are
//      exactly the valid elements.
// Shared memory: 4 x 256 i32 (hist, base, tile_start, out_base), 8 i32 scan totals, 16 x 256
// i16 warp counts and a tile of keys and values (45088 B for 32-bit keys and values).
// The phase loops are runtime loops and the rounds are unrolled `items` times: compile time
// stays flat in the row length and key width (see gpu_sort_global.cc for what unrolling cost).
#include <algorithm>
#include <map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "ir/custom_calls/sort_calls.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace hloc::codegen::gpu {
namespace {

constexpr int64_t kThreads = 512;
constexpr int64_t kWarps = kThreads / 32;
constexpr int64_t kBins = 256;  // 8-bit digits
constexpr int64_t kScanWarps = kBins / 32;  // the warps of threads 0..255
constexpr int kScanBarrier = 1;  // named barrier of threads 0..255 (0 is __syncthreads)
constexpr int64_t kStageBytes = 32 * 1024;  // a tile of keys and values
constexpr int64_t kMaxItems = 8;  // elements a thread holds in registers

// Elements per thread in a tile: as many as the staging holds, a power of two up to kMaxItems
// (the warp counts are i16: a tile's prefix over the warps, at most kThreads * items, fits).
int64_t ItemsPerThread(int64_t element_bytes) {
  int64_t items = 1;
  while (items < kMaxItems && 2 * items * kThreads * element_bytes <= kStageBytes) items *= 2;
  return items;
}

class RadixSortEmitter {
 public:
  RadixSortEmitter(GpuKernel& k, const RadixSortConfig& config, const Shape& keys, const Shape& values)
      : k_(k), b_(*k.b), n_(keys.dimensions(config.dimension)), rows_(keys.num_elements() / n_),
        passes_(config.key_bits / 8),
        items_(ItemsPerThread(ByteWidth(keys.element_type()) + ByteWidth(values.element_type()))),
        tile_(kThreads * items_),
        key_ty_(b_.getIntNTy(8 * ByteWidth(keys.element_type()))),
        value_ty_(b_.getIntNTy(8 * ByteWidth(values.element_type()))),
        values_offset_(RadixSortScratchValuesOffset(keys.num_elements(), ByteWidth(keys.element_type()))) {}

  absl::Status Emit() {
    hist_ = Shared(b_.getInt32Ty(), kBins, "hist");
    base_ = Shared(b_.getInt32Ty(), kBins, "base");
    tile_start_ = Shared(b_.getInt32Ty(), kBins, "tile_start");
    out_base_ = Shared(b_.getInt32Ty(), kBins, "out_base");
    scan_totals_ = Shared(b_.getInt32Ty(), kScanWarps, "scan_totals");
    // [warp][digit]: a tile's running counts, then (in place) their prefixes over the warps.
    warp_count_ = Shared(b_.getInt16Ty(), kWarps * kBins, "warp_count");
    stage_keys_ = Shared(key_ty_, tile_, "stage_keys");
    stage_values_ = Shared(value_ty_, tile_, "stage_values");
    run_ = EntryAlloca(b_, b_.getInt32Ty(), "run");
    tid_ = k_.ThreadIdX();
    lane_ = b_.CreateAnd(tid_, b_.getInt64(31));
    warp_ = b_.CreateLShr(tid_, b_.getInt64(5));
    lane_mask_lt_ = k_.LaneMaskLt();
    return EmitStridedLoop(b_, k_.BlockIdX(), b_.getInt64(rows_), b_.getInt64(k_.launch.grid_x), "row",
                           [&](llvm::Value* r) -> absl::Status {
      row_ = b_.CreateMul(r, b_.getInt64(n_));
      return EmitForLoop(b_, b_.getInt64(0), b_.getInt64(passes_), "pass",
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
  llvm::Value* TileStart(llvm::Value* i) { return At(tile_start_, "tile_start", i); }
  llvm::Value* OutBase(llvm::Value* i) { return At(out_base_, "out_base", i); }
  llvm::Value* ScanTotal(llvm::Value* i) { return At(scan_totals_, "scan_totals", i); }
  llvm::Value* StageKey(llvm::Value* i) { return At(stage_keys_, "stage_keys", i); }
  llvm::Value* StageValue(llvm::Value* i) { return At(stage_values_, "stage_values", i); }
  llvm::Value* WarpCount(llvm::Value* w, llvm::Value* d) {
    return At(warp_count_, "warp_count", b_.CreateAdd(b_.CreateMul(w, b_.getInt64(kBins)), d));
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
    return EmitStridedLoop(b_, b_.getInt64(0), b_.getInt64(n_), b_.getInt64(tile_), "tile",
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
    if (s = ZeroWarpCounts(); !s.ok()) return s;
    k_.Barrier();
    // In warp rounds, so that whole warps meet the match: one atomic per digit a round holds
    // (the top digits of float keys are mostly alike, and one hot bin would serialize the block).
    s = EmitStridedLoop(b_, b_.getInt64(0), b_.getInt64(n_), b_.getInt64(tile_), "count", [&](llvm::Value* t0) {
      std::vector<Round> rounds = LoadRounds(t0, /*with_value=*/false);
      for (Round& r : rounds) {
        Match(r);
        absl::Status st = EmitIf(b_, r.leader, "count_leader", [&] {
          b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Hist(r.digit), r.peer_count, llvm::MaybeAlign(4),
                             llvm::AtomicOrdering::Monotonic);
          return absl::OkStatus();
        });
        if (!st.ok()) return st;
      }
      return absl::OkStatus();
    });
    k_.Barrier();
    return s;
  }

  absl::Status ZeroWarpCounts() {
    return EmitStridedLoop(b_, tid_, b_.getInt64(kWarps * kBins), b_.getInt64(kThreads), "zero_counts",
                           [&](llvm::Value* i) {
      b_.CreateStore(b_.getInt16(0), At(warp_count_, "warp_count", i));
      return absl::OkStatus();
    });
  }

  // Round j of this thread's warp in the tile at t0: one element per lane, and (after Match)
  // its standing among the lanes with the same digit.
  struct Round {
    llvm::Value *valid, *key, *value, *digit;
    llvm::Value *peers = nullptr, *rank = nullptr, *leader = nullptr, *peer_count = nullptr;
  };
  // All rounds' loads first, so that they are in flight together.
  std::vector<Round> LoadRounds(llvm::Value* t0, bool with_value) {
    std::vector<Round> rounds(items_);
    llvm::Value* warp_start = b_.CreateAdd(t0, b_.CreateMul(warp_, b_.getInt64(32 * items_)));
    for (int64_t j = 0; j < items_; ++j) {
      Round& r = rounds[j];
      llvm::Value* i = b_.CreateAdd(warp_start, b_.CreateAdd(b_.getInt64(32 * j), lane_));
      r.valid = b_.CreateICmpSLT(i, b_.getInt64(n_));
      // Lanes past the row's end load its last element (in bounds) and take no part after.
      llvm::Value* at = b_.CreateSelect(r.valid, i, b_.getInt64(n_ - 1));
      r.key = LoadKey(src_keys_, at);
      r.value = with_value ? LoadValue(src_values_, at) : nullptr;
      r.digit = Digit(r.key, shift_);
    }
    return rounds;
  }
  void Match(Round& r) {
    // Every lane of the warp runs the match; the past-the-end ones under a digit of their own.
    llvm::Value* match = b_.CreateSelect(r.valid, b_.CreateTrunc(r.digit, b_.getInt32Ty()), b_.getInt32(kBins));
    r.peers = k_.MatchAnySync(b_.getInt32(0xffffffffu), match);
    r.rank = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, b_.CreateAnd(r.peers, lane_mask_lt_));
    r.leader = b_.CreateAnd(r.valid, b_.CreateICmpEQ(r.rank, b_.getInt32(0)));
    r.peer_count = b_.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, r.peers);
  }

  // shfl.sync.up over the whole warp (lanes below `offset` get their own value back).
  llvm::Value* ShuffleUp(llvm::Value* v, int offset) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                              {b_.getInt32(0xffffffffu), v, b_.getInt32(offset), b_.getInt32(0)});
  }

  // The exclusive prefix sum of `v` (i32) over threads 0..255, thread d holding digit d's
  // value: an inclusive shuffle scan within each of the 8 warps, their totals through shared
  // memory (named barrier kScanBarrier, which only these threads meet), each warp adding
  // those of the warps below it. Exactly threads 0..255 must call it (whole warps, so the
  // full-mask shuffles hold), and a block barrier must separate two calls (the totals are
  // reused).
  llvm::Value* ExclusiveScan256(llvm::Value* v) {
    llvm::Value* lane = b_.CreateTrunc(b_.CreateAnd(tid_, b_.getInt64(31)), b_.getInt32Ty());
    llvm::Value* warp = b_.CreateLShr(tid_, b_.getInt64(5));
    llvm::Value* incl = v;
    for (int off = 1; off < 32; off *= 2) {
      llvm::Value* up = ShuffleUp(incl, off);
      incl = b_.CreateAdd(incl, b_.CreateSelect(b_.CreateICmpUGE(lane, b_.getInt32(off)), up, b_.getInt32(0)));
    }
    llvm::BasicBlock* bb = b_.GetInsertBlock();
    llvm::Function* f = bb->getParent();
    llvm::BasicBlock* last = llvm::BasicBlock::Create(b_.getContext(), "scan_total", f);
    llvm::BasicBlock* join = llvm::BasicBlock::Create(b_.getContext(), "scan_join", f);
    b_.CreateCondBr(b_.CreateICmpEQ(lane, b_.getInt32(31)), last, join);
    b_.SetInsertPoint(last);
    b_.CreateStore(incl, ScanTotal(warp));
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier_sync_cnt, {},
                       {b_.getInt32(kScanBarrier), b_.getInt32(static_cast<uint32_t>(kBins))});
    llvm::Value* below = b_.getInt32(0);
    for (int64_t j = 0; j + 1 < kScanWarps; ++j) {
      llvm::Value* t = b_.CreateLoad(b_.getInt32Ty(), ScanTotal(b_.getInt64(j)));
      below = b_.CreateAdd(below, b_.CreateSelect(b_.CreateICmpULT(b_.getInt64(j), warp), t, b_.getInt32(0)));
    }
    return b_.CreateAdd(b_.CreateSub(incl, v), below);
  }

  // base[d] = sum of hist[0..d) (threads 0..255).
  absl::Status Scan() {
    absl::Status s = EmitIf(b_, b_.CreateICmpULT(tid_, b_.getInt64(kBins)), "scan", [&] {
      llvm::Value* count = b_.CreateLoad(b_.getInt32Ty(), Hist(tid_), "count");
      b_.CreateStore(ExclusiveScan256(count), Base(tid_));
      return absl::OkStatus();
    });
    k_.Barrier();
    return s;
  }

  void WarpSync() {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b_.getInt32(0xffffffffu)});
  }

  // a. Each round's rank within its warp, the warp's running counts advanced past it.
  absl::Status RankRounds(std::vector<Round>& rounds) {
    for (Round& r : rounds) {
      Match(r);
      // Past-the-end lanes read a real entry (digit 0) and ignore it.
      llvm::Value* d = b_.CreateSelect(r.valid, r.digit, b_.getInt64(0));
      llvm::Value* before = b_.CreateZExt(b_.CreateLoad(b_.getInt16Ty(), WarpCount(warp_, d)), b_.getInt32Ty());
      r.rank = b_.CreateAdd(r.rank, before);
      WarpSync();  // the peers have read the count before their leader advances it
      absl::Status s = EmitIf(b_, r.leader, "leader", [&] {
        b_.CreateStore(b_.CreateTrunc(b_.CreateAdd(before, r.peer_count), b_.getInt16Ty()), WarpCount(warp_, d));
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
      WarpSync();  // and the next round reads the advanced count
    }
    return absl::OkStatus();
  }

  // b. Per digit (threads 0..255): the warps' exclusive prefix in place, the digit's start in
  // the staged tile, its output base, and base[d] past the tile.
  absl::Status Prefix() {
    return EmitIf(b_, b_.CreateICmpULT(tid_, b_.getInt64(kBins)), "prefix", [&]() -> absl::Status {
      b_.CreateStore(b_.getInt32(0), run_);
      absl::Status st = EmitForLoop(b_, b_.getInt64(0), b_.getInt64(kWarps), "warp", [&](llvm::Value* w) {
        llvm::Value* run = b_.CreateLoad(b_.getInt32Ty(), run_);
        llvm::Value* c = b_.CreateZExt(b_.CreateLoad(b_.getInt16Ty(), WarpCount(w, tid_)), b_.getInt32Ty());
        b_.CreateStore(b_.CreateTrunc(run, b_.getInt16Ty()), WarpCount(w, tid_));
        b_.CreateStore(b_.CreateAdd(run, c), run_);
        return absl::OkStatus();
      });
      if (!st.ok()) return st;
      llvm::Value* run = b_.CreateLoad(b_.getInt32Ty(), run_);
      llvm::Value* start = ExclusiveScan256(run);
      b_.CreateStore(start, TileStart(tid_));
      llvm::Value* base = b_.CreateLoad(b_.getInt32Ty(), Base(tid_));
      // May wrap below zero as an i32; out_base + s (step d) is the element's row position.
      b_.CreateStore(b_.CreateSub(base, start), OutBase(tid_));
      b_.CreateStore(b_.CreateAdd(base, run), Base(tid_));
      return absl::OkStatus();
    });
  }

  // Elements t0 .. t0+tile-1 of the row to their places in dst (see the file comment, 3a-d).
  absl::Status Tile(llvm::Value* t0) {
    // The previous tile's writes have read the staging and zeroed the warp counts.
    k_.Barrier();
    std::vector<Round> rounds = LoadRounds(t0, /*with_value=*/true);
    if (absl::Status s = RankRounds(rounds); !s.ok()) return s;
    k_.Barrier();
    if (absl::Status s = Prefix(); !s.ok()) return s;
    k_.Barrier();
    // c. Stage the tile sorted by digit.
    for (Round& r : rounds) {
      absl::Status s = EmitIf(b_, r.valid, "stage", [&] {
        llvm::Value* prefix = b_.CreateZExt(b_.CreateLoad(b_.getInt16Ty(), WarpCount(warp_, r.digit)), b_.getInt32Ty());
        llvm::Value* local = b_.CreateAdd(b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), TileStart(r.digit)), prefix), r.rank);
        llvm::Value* at = b_.CreateZExt(local, b_.getInt64Ty());
        b_.CreateStore(r.key, StageKey(at));
        b_.CreateStore(r.value, StageValue(at));
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
    }
    k_.Barrier();
    // d. Staged elements tid, tid + kThreads, ... to their row positions, and the warp counts
    // zeroed (the stage has read them) for the next tile.
    llvm::Value* valid = b_.CreateSub(b_.getInt64(n_), t0);
    for (int64_t j = 0; j < items_; ++j) {
      llvm::Value* slot = b_.CreateAdd(tid_, b_.getInt64(j * kThreads));
      absl::Status s = EmitIf(b_, b_.CreateICmpSLT(slot, valid), "write", [&] {
        llvm::Value* key = b_.CreateLoad(key_ty_, StageKey(slot));
        llvm::Value* value = b_.CreateLoad(value_ty_, StageValue(slot));
        llvm::Value* d = Digit(key, shift_);
        llvm::Value* pos = b_.CreateAdd(b_.CreateLoad(b_.getInt32Ty(), OutBase(d)), b_.CreateTrunc(slot, b_.getInt32Ty()));
        llvm::Value* at_row = b_.CreateAdd(row_, b_.CreateZExt(pos, b_.getInt64Ty()));
        b_.CreateStore(key, b_.CreateInBoundsGEP(key_ty_, dst_keys_, at_row));
        b_.CreateStore(value, b_.CreateInBoundsGEP(value_ty_, dst_values_, at_row));
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
    }
    return ZeroWarpCounts();
  }

  GpuKernel& k_;
  llvm::IRBuilderBase& b_;
  const int64_t n_, rows_, passes_, items_, tile_;
  llvm::Type* key_ty_;
  llvm::Type* value_ty_;
  const int64_t values_offset_;
  std::map<std::string, llvm::Type*> shared_types_;
  llvm::Value *hist_ = nullptr, *base_ = nullptr, *tile_start_ = nullptr, *out_base_ = nullptr,
              *scan_totals_ = nullptr, *warp_count_ = nullptr, *stage_keys_ = nullptr, *stage_values_ = nullptr;
  llvm::AllocaInst* run_ = nullptr;
  llvm::Value *tid_ = nullptr, *lane_ = nullptr, *warp_ = nullptr, *lane_mask_lt_ = nullptr, *row_ = nullptr, *shift_ = nullptr;
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
  const int64_t element_bytes = ByteWidth(keys.element_type()) + ByteWidth(values.element_type());
  const int64_t shared_bytes = 4 * kBins * 4 + kScanWarps * 4 + kWarps * kBins * 2 +
                               kThreads * ItemsPerThread(element_bytes) * element_bytes;
  if (shared_bytes > k.device->shared_memory_per_block)
    return absl::UnimplementedError(absl::StrCat("radix sort: needs ", shared_bytes, " bytes of shared memory a block"));
  const int64_t rows = keys.num_elements() / keys.dimensions(config->dimension);
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = kThreads;
  // Two blocks an SM (1024 threads, 2 x at most 48 KiB of shared memory, registers for the
  // items); more rows than that loop.
  k.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(rows, k.device->sm_count * 2));
  // Two blocks an SM hide each other's barriers: ask ptxas for the registers that allows.
  k.min_blocks_per_sm = 2;
  if (rows < k.device->sm_count)
    k.serial_reason = "radix sort: a block per row, whose digit passes run one after another";
  return RadixSortEmitter(k, *config, keys, values).Emit();
}

}  // namespace hloc::codegen::gpu
