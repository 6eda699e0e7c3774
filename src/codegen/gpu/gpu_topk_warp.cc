// Top-k with small k (XLA's TopK custom kernel works the same way): a warp per row; lane l
// scans elements l, l+32, ... keeping a sorted list of its K best (K = k rounded up to a power
// of two, at most 16) in registers, then five butterfly rounds merge the lanes' lists (the top
// K of two sorted lists is the elementwise best of one and the other reversed, a bitonic
// sequence that log2(K) half-cleaner steps sort). Lanes l < k write the l-th best.
//
// Elements compare as integer keys: a float's bits with the magnitude bits flipped when
// negative order as the floats do in the total order (-NaN < -inf < ... < -0 < +0 < ... < NaN,
// which is XLA's TopK comparator), integers as themselves; for largest=false the key is
// complemented. Ties go to the lower position, so the result is the stable one. Empty list
// entries hold (INT_MIN, INT32_MAX), after every real element.
#include <algorithm>
#include <limits>

#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_sort_internal.h"
#include "llvm/IR/Constants.h"

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
};

absl::Status WarpTopK::Insert(llvm::Value* key, llvm::Value* pos) {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* beats_last =
      Before(key, pos, b_.CreateLoad(kt, keys_[K_ - 1]), b_.CreateLoad(i32, positions_[K_ - 1]));
  return cpu::EmitIf(b_, beats_last, "topk.insert", [&]() -> absl::Status {
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

absl::Status WarpTopK::Emit() {
  llvm::Type* kt = KeyTy();
  llvm::Type* i32 = b_.getInt32Ty();
  const int64_t block = 32 * kWarpsPerBlock;
  const int64_t blocks_needed = (rows_.count + kWarpsPerBlock - 1) / kWarpsPerBlock;
  const int64_t resident = std::max<int64_t>(1, k_.device->max_threads_per_sm / block) * k_.device->sm_count;
  k_.launch = runtime::LaunchDimensions{};
  k_.launch.block_x = block;
  k_.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(blocks_needed, resident * std::max<int64_t>(1, k_.device->waves)));
  for (int64_t j = 0; j < K_; ++j) {
    keys_.push_back(cpu::EntryAlloca(b_, kt, "topk.key"));
    positions_.push_back(cpu::EntryAlloca(b_, i32, "topk.pos"));
  }
  llvm::Value* tid = b_.CreateTrunc(k_.ThreadIdX(), i32);
  llvm::Value* lane = b_.CreateAnd(tid, b_.getInt32(31));
  llvm::Value* warp = b_.CreateZExt(b_.CreateLShr(tid, 5), b_.getInt64Ty());
  llvm::Value* first_row = b_.CreateAdd(b_.CreateMul(k_.BlockIdX(), b_.getInt64(kWarpsPerBlock)), warp);
  const int64_t n = rows_.n;
  // The row loop is uniform across a warp, so the shuffles see every lane.
  return EmitStridedLoop(b_, first_row, b_.getInt64(rows_.count), b_.getInt64(k_.launch.grid_x * kWarpsPerBlock),
                         "topk.row", [&](llvm::Value* r) -> absl::Status {
    IrArray::Index row = DelinearizeRowMajor(r, rows_.other_dims, b_);
    for (int64_t j = 0; j < K_; ++j) {
      b_.CreateStore(llvm::ConstantInt::get(kt, llvm::APInt::getSignedMinValue(static_cast<unsigned>(W_))), keys_[j]);
      b_.CreateStore(b_.getInt32(std::numeric_limits<int32_t>::max()), positions_[j]);
    }
    auto load = [&](llvm::Value* pos32) {
      llvm::Value* v = k_.operands[0].EmitReadArrayElement(rows_.At(row, b_.CreateZExt(pos32, b_.getInt64Ty())), b_);
      return Key(v);
    };
    // Full chunks of 32*kUnroll elements: all loads first, then the inserts in position order.
    const int64_t chunks = n / (32 * kUnroll);
    if (chunks > 0) {
      absl::Status s = cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(chunks), "topk.chunk",
                                        [&](llvm::Value* c) -> absl::Status {
        llvm::Value* base = b_.CreateAdd(b_.CreateTrunc(b_.CreateMul(c, b_.getInt64(32 * kUnroll)), i32), lane);
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
    const int64_t rest = chunks * 32 * kUnroll;
    if (rest < n) {
      absl::Status s = EmitStridedLoop(b_, b_.CreateZExt(b_.CreateAdd(lane, b_.getInt32(static_cast<uint32_t>(rest))),
                                                         b_.getInt64Ty()),
                                       b_.getInt64(n), b_.getInt64(32), "topk.rest", [&](llvm::Value* i) {
        llvm::Value* pos = b_.CreateTrunc(i, i32);
        return Insert(load(pos), pos);
      });
      if (!s.ok()) return s;
    }
    // Butterfly merge of the lanes' lists, one loop trip a round (offset 16, 8, .., 1). A
    // runtime loop, not five unrolled rounds: the rounds' compare-exchanges would chain 20
    // selects deep, and every InstCombine run then spends its time computing known bits up
    // and down those chains (0.18 s of a 0.23 s kernel); ptxas unrolls the 5 trips itself.
    if (absl::Status s = cpu::EmitForLoop(b_, b_.getInt64(0), b_.getInt64(5), "topk.round",
                                          [&](llvm::Value* round) -> absl::Status {
          MergeRound(b_.CreateLShr(b_.getInt32(16), b_.CreateTrunc(round, b_.getInt32Ty())));
          return absl::OkStatus();
        });
        !s.ok())
      return s;
    std::vector<llvm::Value*> lk(K_), lp(K_);
    for (int64_t j = 0; j < K_; ++j) {
      lk[j] = b_.CreateLoad(kt, keys_[j]);
      lp[j] = b_.CreateLoad(i32, positions_[j]);
    }
    // Lane l < k writes entry l.
    llvm::Value* key = lk[0];
    llvm::Value* pos = lp[0];
    for (int64_t j = 1; j < kk_; ++j) {
      llvm::Value* is_j = b_.CreateICmpEQ(lane, b_.getInt32(static_cast<uint32_t>(j)));
      key = b_.CreateSelect(is_j, lk[j], key);
      pos = b_.CreateSelect(is_j, lp[j], pos);
    }
    return cpu::EmitIf(b_, b_.CreateICmpULT(lane, b_.getInt32(static_cast<uint32_t>(kk_))), "topk.write",
                       [&]() -> absl::Status {
      IrArray::Index at = rows_.At(row, b_.CreateZExt(lane, b_.getInt64Ty()));
      k_.outputs[0].EmitWriteArrayElement(at, Value(key), b_);
      llvm::Type* it = PrimitiveTypeToIrType(k_.outputs[1].shape().element_type(), b_.getContext());
      k_.outputs[1].EmitWriteArrayElement(at, b_.CreateSExtOrTrunc(pos, it), b_);
      return absl::OkStatus();
    });
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
