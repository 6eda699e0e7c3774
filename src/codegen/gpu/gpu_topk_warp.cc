// Top-k with small k (XLA's TopK custom kernel works the same way): a warp per row; lane l
// scans elements l, l+32, ... keeping a sorted list of its K best (K = k rounded up to a power
// of two, at most 16) in registers, then five butterfly rounds merge the lanes' lists (the top
// K of two sorted lists is the elementwise best of one and the other reversed, a bitonic
// sequence that log2(K) half-cleaner steps sort). Lanes l < k write the l-th best.
//
// Few long rows (beam search: tens of rows of 32k-50k) would leave most SMs idle with a warp
// per row, so there each row is split into P parts (the profile's topk_split_warps_per_sm and
// topk_split_min_part_elements decide P): a warp finds its part's top k and parks it in a
// scratch array in global memory (a module global, like the split reduction's partials); the
// last warp of the row to arrive (a per-row atomic counter, which that warp resets for the next
// launch) merges the row's P*k candidates the same way and writes the result. One kernel, no
// second launch; the result is the same whatever order the parts finish in.
//
// Elements compare as integer keys: a float's bits with the magnitude bits flipped when
// negative order as the floats do in the total order (-NaN < -inf < ... < -0 < +0 < ... < NaN,
// which is XLA's TopK comparator), integers as themselves; for largest=false the key is
// complemented. Ties go to the lower position, so the result is the stable one. Empty list
// entries hold (INT_MIN, INT32_MAX), after every real element.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_sort_internal.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace hloc::codegen::gpu {
namespace {

constexpr int64_t kWarpsPerBlock = 4;
constexpr int64_t kUnroll = 4;  // loads in flight per lane in the main loop

class WarpTopK {
 public:
  WarpTopK(GpuKernel& k, const HloInstruction& topk)
      : k_(k), b_(*k.b), type_(k.operands[0].shape().element_type()), kk_(topk.attrs().k),
        largest_(topk.attrs().largest) {
    rows_ = SortRowsOf(k.operands[0].shape(), k.operands[0].shape().rank() - 1);
    K_ = NextPow2(std::max<int64_t>(1, kk_));
    bits_ = BitWidth(type_);
    W_ = bits_ <= 32 ? 32 : 64;
  }

  bool Applies() const {
    if (kk_ < 1 || kk_ > 16 || kk_ > rows_.n || rows_.count < 1) return false;
    if (rows_.n > std::numeric_limits<int32_t>::max()) return false;
    switch (type_) {
      case PrimitiveType::F16: case PrimitiveType::BF16: case PrimitiveType::F32: case PrimitiveType::F64:
      case PrimitiveType::S8: case PrimitiveType::S16: case PrimitiveType::S32: case PrimitiveType::S64:
      case PrimitiveType::U8: case PrimitiveType::U16: case PrimitiveType::U32: case PrimitiveType::U64:
        break;
      default:
        return false;
    }
    return IsIntegral(k_.outputs[1].shape().element_type());
  }

  absl::Status Emit();

 private:
  // Parts each row is split into (1: a warp per row), from the device's SMs and the profile.
  int64_t PlanParts() const;
  // Empties the lane's list.
  void InitList();
  // Inserts the row's elements begin + lane, begin + lane + 32, ... < end (i64) into the list.
  absl::Status ScanRange(const IrArray::Index& row, llvm::Value* begin, llvm::Value* end);
  // Five butterfly rounds: every lane's list becomes the warp's top K.
  absl::Status MergeLanes();
  // The (key, position) of list entry `lane` (i32; entries below k only).
  std::pair<llvm::Value*, llvm::Value*> EntryOfLane(llvm::Value* lane);
  // Lanes l < k write the l-th best of row `row`.
  absl::Status WriteResult(const IrArray::Index& row, llvm::Value* lane);
  // The split path's second half for unit (row_id, part): park the part's top k in scratch;
  // the row's last warp merges the row's candidates and writes the result.
  absl::Status PublishAndMerge(const IrArray::Index& row, llvm::Value* row_id, llvm::Value* part, llvm::Value* lane);

  llvm::Type* KeyTy() { return b_.getIntNTy(static_cast<unsigned>(W_)); }
  llvm::Type* NarrowTy() { return b_.getIntNTy(static_cast<unsigned>(bits_)); }
  // Order-preserving signed integer key of element value v.
  llvm::Value* Key(llvm::Value* v) {
    llvm::Value* i = v->getType()->isIntegerTy() ? v : b_.CreateBitCast(v, NarrowTy());
    if (IsFloatingPoint(type_)) {
      i = b_.CreateXor(i, b_.CreateLShr(b_.CreateAShr(i, bits_ - 1), 1));
    } else if (IsUnsignedIntegral(type_)) {
      i = b_.CreateXor(i, llvm::ConstantInt::get(NarrowTy(), llvm::APInt::getSignMask(bits_)));
    }
    if (!largest_) i = b_.CreateNot(i);
    return b_.CreateSExt(i, KeyTy());
  }
  // The element value of key `key` (Key's inverse).
  llvm::Value* Value(llvm::Value* key) {
    llvm::Value* i = b_.CreateTrunc(key, NarrowTy());
    if (!largest_) i = b_.CreateNot(i);
    if (IsFloatingPoint(type_)) {
      i = b_.CreateXor(i, b_.CreateLShr(b_.CreateAShr(i, bits_ - 1), 1));
    } else if (IsUnsignedIntegral(type_)) {
      i = b_.CreateXor(i, llvm::ConstantInt::get(NarrowTy(), llvm::APInt::getSignMask(bits_)));
    }
    llvm::Type* vt = PrimitiveTypeToIrType(type_, b_.getContext());
    return vt->isIntegerTy() ? i : b_.CreateBitCast(i, vt);
  }
  // (ka, ia) ahead of (kb, ib): larger key, then lower position.
  llvm::Value* Before(llvm::Value* ka, llvm::Value* ia, llvm::Value* kb, llvm::Value* ib) {
    return b_.CreateOr(b_.CreateICmpSGT(ka, kb), b_.CreateAnd(b_.CreateICmpEQ(ka, kb), b_.CreateICmpSLT(ia, ib)));
  }
  // Inserts (key, pos) into the lane's sorted list when it beats the last entry.
  absl::Status Insert(llvm::Value* key, llvm::Value* pos);
  // One butterfly round at lane offset `offset` (i32): the lane's list becomes the top K of
  // its own and its partner's.
  void MergeRound(llvm::Value* offset);

  GpuKernel& k_;
  llvm::IRBuilderBase& b_;
  PrimitiveType type_;
  int64_t kk_;
  bool largest_;
  SortRows rows_;
  int64_t K_ = 1;
  int bits_ = 32, W_ = 32;
  std::vector<llvm::AllocaInst*> keys_, positions_;
  int64_t parts_ = 1;
  llvm::GlobalVariable *scratch_keys_ = nullptr, *scratch_pos_ = nullptr, *arrived_ = nullptr;
};

int64_t WarpTopK::PlanParts() const {
  const GpuDeviceInfo& d = *k_.device;
  const int64_t target_warps = d.sm_count * d.topk_split_warps_per_sm;
  if (rows_.count >= target_warps) return 1;
  const int64_t by_size = rows_.n / std::max<int64_t>(d.topk_split_min_part_elements, kk_);
  const int64_t wanted = (target_warps + rows_.count - 1) / rows_.count;
  return std::max<int64_t>(1, std::min(by_size, wanted));
}

absl::Status WarpTopK::Insert(llvm::Value* key, llvm::Value* pos) {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* beats_last =
      Before(key, pos, b_.CreateLoad(kt, keys_[K_ - 1]), b_.CreateLoad(i32, positions_[K_ - 1]));
  return EmitIf(b_, beats_last, "topk.insert", [&]() -> absl::Status {
    std::vector<llvm::Value*> lk(K_), lp(K_), c(K_);
    for (int64_t j = 0; j < K_; ++j) {
      lk[j] = b_.CreateLoad(kt, keys_[j]);
      lp[j] = b_.CreateLoad(i32, positions_[j]);
      c[j] = Before(key, pos, lk[j], lp[j]);
    }
    // c is monotone (once ahead of entry j, ahead of every later one): entry j becomes entry
    // j-1 where the new element is ahead of j-1, the new element where it lands, else stays.
    for (int64_t j = 0; j < K_; ++j) {
      llvm::Value* nk = b_.CreateSelect(c[j], key, lk[j]);
      llvm::Value* np = b_.CreateSelect(c[j], pos, lp[j]);
      if (j > 0) {
        nk = b_.CreateSelect(c[j - 1], lk[j - 1], nk);
        np = b_.CreateSelect(c[j - 1], lp[j - 1], np);
      }
      b_.CreateStore(nk, keys_[j]);
      b_.CreateStore(np, positions_[j]);
    }
    return absl::OkStatus();
  });
}

void WarpTopK::MergeRound(llvm::Value* offset) {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  std::vector<llvm::Value*> lk(K_), lp(K_), ok(K_), op(K_);
  for (int64_t j = 0; j < K_; ++j) {
    lk[j] = b_.CreateLoad(kt, keys_[j]);
    lp[j] = b_.CreateLoad(i32, positions_[j]);
  }
  for (int64_t j = 0; j < K_; ++j) {
    ok[j] = k_.ShuffleXor(lk[j], offset);
    op[j] = k_.ShuffleXor(lp[j], offset);
  }
  for (int64_t j = 0; j < K_; ++j) {
    llvm::Value* mine = Before(lk[j], lp[j], ok[K_ - 1 - j], op[K_ - 1 - j]);
    llvm::Value* nk = b_.CreateSelect(mine, lk[j], ok[K_ - 1 - j]);
    llvm::Value* np = b_.CreateSelect(mine, lp[j], op[K_ - 1 - j]);
    lk[j] = nk;
    lp[j] = np;
  }
  for (int64_t s = K_ / 2; s >= 1; s /= 2) {
    for (int64_t j = 0; j < K_; ++j) {
      if (j & s) continue;
      llvm::Value* swap = Before(lk[j | s], lp[j | s], lk[j], lp[j]);
      llvm::Value* k0 = b_.CreateSelect(swap, lk[j | s], lk[j]);
      llvm::Value* p0 = b_.CreateSelect(swap, lp[j | s], lp[j]);
      llvm::Value* k1 = b_.CreateSelect(swap, lk[j], lk[j | s]);
      llvm::Value* p1 = b_.CreateSelect(swap, lp[j], lp[j | s]);
      lk[j] = k0;
      lp[j] = p0;
      lk[j | s] = k1;
      lp[j | s] = p1;
    }
  }
  for (int64_t j = 0; j < K_; ++j) {
    b_.CreateStore(lk[j], keys_[j]);
    b_.CreateStore(lp[j], positions_[j]);
  }
}

void WarpTopK::InitList() {
  llvm::Type* kt = KeyTy();
  for (int64_t j = 0; j < K_; ++j) {
    b_.CreateStore(llvm::ConstantInt::get(kt, llvm::APInt::getSignedMinValue(static_cast<unsigned>(W_))), keys_[j]);
    b_.CreateStore(b_.getInt32(std::numeric_limits<int32_t>::max()), positions_[j]);
  }
}

absl::Status WarpTopK::ScanRange(const IrArray::Index& row, llvm::Value* begin, llvm::Value* end) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Value* lane = b_.CreateAnd(b_.CreateTrunc(k_.ThreadIdX(), i32), b_.getInt32(31));
  auto load = [&](llvm::Value* pos32) {
    llvm::Value* v = k_.operands[0].EmitReadArrayElement(rows_.At(row, b_.CreateZExt(pos32, i64)), b_);
    return Key(v);
  };
  // Full chunks of 32*kUnroll elements: all loads first, then the inserts in position order.
  // (With constant bounds, as in the warp-per-row plan, the chunk count folds to a constant.)
  llvm::Value* chunks = b_.CreateUDiv(b_.CreateSub(end, begin), b_.getInt64(32 * kUnroll));
  auto* constant_chunks = llvm::dyn_cast<llvm::ConstantInt>(chunks);
  if (!constant_chunks || !constant_chunks->isZero()) {
    absl::Status s = EmitForLoop(b_, b_.getInt64(0), chunks, "topk.chunk", [&](llvm::Value* c) -> absl::Status {
      llvm::Value* base = b_.CreateAdd(b_.CreateTrunc(b_.CreateAdd(begin, b_.CreateMul(c, b_.getInt64(32 * kUnroll))), i32),
                                       lane);
      std::vector<llvm::Value*> pos(kUnroll), key(kUnroll);
      for (int64_t u = 0; u < kUnroll; ++u) {
        pos[u] = b_.CreateAdd(base, b_.getInt32(static_cast<uint32_t>(32 * u)));
        key[u] = load(pos[u]);
      }
      for (int64_t u = 0; u < kUnroll; ++u)
        if (absl::Status is = Insert(key[u], pos[u]); !is.ok()) return is;
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  llvm::Value* rest = b_.CreateAdd(begin, b_.CreateMul(chunks, b_.getInt64(32 * kUnroll)));
  auto* constant_rest = llvm::dyn_cast<llvm::ConstantInt>(rest);
  auto* constant_end = llvm::dyn_cast<llvm::ConstantInt>(end);
  if (constant_rest && constant_end && constant_rest->getSExtValue() >= constant_end->getSExtValue())
    return absl::OkStatus();
  return EmitStridedLoop(b_, b_.CreateAdd(rest, b_.CreateZExt(lane, i64)), end, b_.getInt64(32), "topk.rest",
                         [&](llvm::Value* i) {
                           llvm::Value* pos = b_.CreateTrunc(i, i32);
                           return Insert(load(pos), pos);
                         });
}

absl::Status WarpTopK::MergeLanes() {
  // One loop trip a round (offset 16, 8, .., 1). A runtime loop, not five unrolled rounds: the
  // rounds' compare-exchanges would chain 20 selects deep, and every InstCombine run then spends
  // its time computing known bits up and down those chains (0.18 s of a 0.23 s kernel); ptxas
  // unrolls the 5 trips itself.
  return EmitForLoop(b_, b_.getInt64(0), b_.getInt64(5), "topk.round", [&](llvm::Value* round) -> absl::Status {
    MergeRound(b_.CreateLShr(b_.getInt32(16), b_.CreateTrunc(round, b_.getInt32Ty())));
    return absl::OkStatus();
  });
}

std::pair<llvm::Value*, llvm::Value*> WarpTopK::EntryOfLane(llvm::Value* lane) {
  llvm::Value* key = b_.CreateLoad(KeyTy(), keys_[0]);
  llvm::Value* pos = b_.CreateLoad(b_.getInt32Ty(), positions_[0]);
  for (int64_t j = 1; j < kk_; ++j) {
    llvm::Value* is_j = b_.CreateICmpEQ(lane, b_.getInt32(static_cast<uint32_t>(j)));
    key = b_.CreateSelect(is_j, b_.CreateLoad(KeyTy(), keys_[j]), key);
    pos = b_.CreateSelect(is_j, b_.CreateLoad(b_.getInt32Ty(), positions_[j]), pos);
  }
  return {key, pos};
}

absl::Status WarpTopK::WriteResult(const IrArray::Index& row, llvm::Value* lane) {
  auto [key, pos] = EntryOfLane(lane);
  return EmitIf(b_, b_.CreateICmpULT(lane, b_.getInt32(static_cast<uint32_t>(kk_))), "topk.write",
                     [&]() -> absl::Status {
    IrArray::Index at = rows_.At(row, b_.CreateZExt(lane, b_.getInt64Ty()));
    k_.outputs[0].EmitWriteArrayElement(at, Value(key), b_);
    llvm::Type* it = PrimitiveTypeToIrType(k_.outputs[1].shape().element_type(), b_.getContext());
    k_.outputs[1].EmitWriteArrayElement(at, b_.CreateSExtOrTrunc(pos, it), b_);
    return absl::OkStatus();
  });
}

absl::Status WarpTopK::PublishAndMerge(const IrArray::Index& row, llvm::Value* row_id, llvm::Value* part,
                                       llvm::Value* lane) {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  const int64_t candidates = parts_ * kk_;  // per row
  auto key_ptr = [&](llvm::Value* slot) {
    return b_.CreateInBoundsGEP(scratch_keys_->getValueType(), scratch_keys_, {b_.getInt64(0), slot});
  };
  auto pos_ptr = [&](llvm::Value* slot) {
    return b_.CreateInBoundsGEP(scratch_pos_->getValueType(), scratch_pos_, {b_.getInt64(0), slot});
  };
  llvm::Value* counter = b_.CreateInBoundsGEP(arrived_->getValueType(), arrived_, {b_.getInt64(0), row_id});
  // Lanes l < k park entry l at [row][part][l].
  auto [key, pos] = EntryOfLane(lane);
  absl::Status ps = EmitIf(b_, b_.CreateICmpULT(lane, b_.getInt32(static_cast<uint32_t>(kk_))), "topk.park",
                                [&]() -> absl::Status {
    llvm::Value* slot = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(b_.CreateMul(row_id, b_.getInt64(parts_)), part),
                                                  b_.getInt64(kk_)),
                                     b_.CreateZExt(lane, i64));
    b_.CreateStore(key, key_ptr(slot));
    b_.CreateStore(pos, pos_ptr(slot));
    return absl::OkStatus();
  });
  if (!ps.ok()) return ps;
  // Every lane's stores reach global memory before lane 0 counts the part as arrived.
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {b_.getInt32(0xffffffffu)});
  llvm::AllocaInst* last_slot = EntryAlloca(b_, i32, "topk.last");
  b_.CreateStore(b_.getInt32(0), last_slot);
  absl::Status as = EmitIf(b_, b_.CreateICmpEQ(lane, b_.getInt32(0)), "topk.arrive", [&]() -> absl::Status {
    llvm::Value* old = b_.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b_.getInt32(1), llvm::Align(4),
                                          llvm::AtomicOrdering::Monotonic);
    b_.CreateStore(b_.CreateZExt(b_.CreateICmpEQ(old, b_.getInt32(static_cast<uint32_t>(parts_ - 1))), i32), last_slot);
    return absl::OkStatus();
  });
  if (!as.ok()) return as;
  // Lane 0's verdict to the whole warp (the others hold 0).
  llvm::Value* last = b_.CreateLoad(i32, last_slot);
  for (int offset = 16; offset >= 1; offset /= 2) last = b_.CreateOr(last, k_.ShuffleXor(last, offset));
  return EmitIf(b_, b_.CreateICmpNE(last, b_.getInt32(0)), "topk.last", [&]() -> absl::Status {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
    InitList();
    // The row's candidates, lane-strided (each part's list is sorted, but any order merges the
    // same). Volatile loads: the other warps' stores are not in this SM's L1.
    llvm::Value* first = b_.CreateMul(row_id, b_.getInt64(candidates));
    absl::Status gs = EmitStridedLoop(b_, b_.CreateZExt(lane, i64), b_.getInt64(candidates), b_.getInt64(32),
                                      "topk.gather", [&](llvm::Value* c) -> absl::Status {
      llvm::Value* slot = b_.CreateAdd(first, c);
      llvm::LoadInst* ck = b_.CreateLoad(kt, key_ptr(slot));
      llvm::LoadInst* cp = b_.CreateLoad(i32, pos_ptr(slot));
      ck->setVolatile(true);
      cp->setVolatile(true);
      return Insert(ck, cp);
    });
    if (!gs.ok()) return gs;
    if (absl::Status ms = MergeLanes(); !ms.ok()) return ms;
    if (absl::Status ws = WriteResult(row, lane); !ws.ok()) return ws;
    // Ready for the next launch.
    return EmitIf(b_, b_.CreateICmpEQ(lane, b_.getInt32(0)), "topk.reset", [&]() {
      b_.CreateStore(b_.getInt32(0), counter)->setVolatile(true);
      return absl::OkStatus();
    });
  });
}

absl::Status WarpTopK::Emit() {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  // Part p of a row covers [p * part_len, min((p + 1) * part_len, n)): whole chunks but the last
  // (rounding the length up may leave fewer parts than planned).
  const int64_t n = rows_.n;
  parts_ = PlanParts();
  const int64_t part_len =
      parts_ == 1 ? n : ((n + parts_ - 1) / parts_ + 32 * kUnroll - 1) / (32 * kUnroll) * (32 * kUnroll);
  parts_ = (n + part_len - 1) / part_len;
  const int64_t units = rows_.count * parts_;  // a warp each
  const int64_t block = 32 * kWarpsPerBlock;
  const int64_t blocks_needed = (units + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const int64_t resident = std::max<int64_t>(1, k_.device->max_threads_per_sm / block) * k_.device->sm_count;
  k_.launch = runtime::LaunchDimensions{};
  k_.launch.block_x = block;
  k_.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(blocks_needed, resident * std::max<int64_t>(1, k_.device->waves)));
  for (int64_t j = 0; j < K_; ++j) {
    keys_.push_back(EntryAlloca(b_, kt, "topk.key"));
    positions_.push_back(EntryAlloca(b_, i32, "topk.pos"));
  }
  if (parts_ > 1) {
    auto global = [&](llvm::Type* elem, int64_t count, const char* what) {
      auto* ty = llvm::ArrayType::get(elem, static_cast<uint64_t>(count));
      auto* gv = new llvm::GlobalVariable(*k_.module, ty, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::ConstantAggregateZero::get(ty), absl::StrCat(k_.name, what), nullptr,
                                          llvm::GlobalValue::NotThreadLocal, 1);
      gv->setAlignment(llvm::Align(16));
      return gv;
    };
    scratch_keys_ = global(kt, rows_.count * parts_ * kk_, ".topk_keys");
    scratch_pos_ = global(i32, rows_.count * parts_ * kk_, ".topk_positions");
    arrived_ = global(i32, rows_.count, ".topk_arrived");
  }
  llvm::Value* tid = b_.CreateTrunc(k_.ThreadIdX(), i32);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(31));
  llvm::Value* warp = b_.CreateZExt(b_.CreateLShr(tid, 5), b_.getInt64Ty());
  llvm::Value* first_unit = b_.CreateAdd(b_.CreateMul(k_.BlockIdX(), b_.getInt64(kWarpsPerBlock)), warp);
  // The unit loop is uniform across a warp, so the shuffles see every lane.
  return EmitStridedLoop(b_, first_unit, b_.getInt64(units),
                         b_.getInt64(k_.launch.grid_x * kWarpsPerBlock), "topk.unit",
                         [&](llvm::Value* u) -> absl::Status {
    llvm::Value* row_id = parts_ == 1 ? u : b_.CreateUDiv(u, b_.getInt64(parts_));
    IrArray::Index row = DelinearizeRowMajor(row_id, rows_.other_dims, b_);
    InitList();
    llvm::Value* begin = b_.getInt64(0);
    llvm::Value* end = b_.getInt64(n);
    llvm::Value* part = nullptr;
    if (parts_ > 1) {
      part = b_.CreateURem(u, b_.getInt64(parts_));
      begin = b_.CreateMul(part, b_.getInt64(part_len));
      llvm::Value* stop = b_.CreateAdd(begin, b_.getInt64(part_len));
      end = b_.CreateSelect(b_.CreateICmpULT(stop, end), stop, end);
    }
    if (absl::Status s = ScanRange(row, begin, end); !s.ok()) return s;
    if (absl::Status s = MergeLanes(); !s.ok()) return s;
    if (parts_ == 1) return WriteResult(row, lane);
    return PublishAndMerge(row, row_id, part, lane);
  });
}

}  // namespace

absl::StatusOr<bool> TryEmitWarpTopK(GpuKernel& k, const HloInstruction& topk) {
  if (k.operands.size() != 1 || k.outputs.size() != 2 || k.operands[0].shape().rank() < 1) return false;
  WarpTopK emitter(k, topk);
  if (!emitter.Applies()) return false;
  if (absl::Status s = emitter.Emit(); !s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
