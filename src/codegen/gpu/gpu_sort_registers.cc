// Sort of rows up to a few thousand elements: a bitonic network whose elements live in
// registers (XLA sorts such rows in one kernel too, see sort_topk.large.thunk_sequence.txt).
//
// Layout: a row of P = NextPow2(n) slots is held by R = P/E threads, thread t holding slots
// t*E .. t*E+E-1 (E = 8). A compare-exchange step of stride j then pairs
//   j < E        two registers of one thread (no communication),
//   E <= j < 32E lanes t and t^(j/E) of one warp: shfl.bfly, each lane keeps its half,
//   j >= 32E     threads of different warps: through shared memory, one barrier a step
//                (double-buffered, so one barrier suffices).
// For P = 1024 that is 27 register steps, 25 shuffle steps and 3 shared steps of the 55,
// against the shared-memory-per-step bitonic sort (a barrier and 64-bit index math per step)
// this replaces. Rows shorter than 128 threads' worth share a block (G rows a block).
//
// The code is the same whatever P: the stages up to E (inside a thread) are unrolled, the
// later stages are a runtime loop whose body holds one cross-thread step (a runtime loop over
// the strides, shuffle or shared memory by stride) and the in-thread steps. Unrolled, every
// step was a copy of the comparator (sort_topk's 1024-wide rows: 55 steps, 880 copies, most of
// the module's compile time).
//
// Every element carries its original position (i32): the order is (comparator, position), so
// the result is the stable sort whatever `is_stable` says, and padding slots (position >= n)
// sort last. An operand that is an iota along the sort dimension (argsort's payload) is not
// read or moved at all: its value is the position.
//
// Global loads and stores are coalesced by staging the block's rows through shared memory
// (a thread's 8 consecutive slots would otherwise make every warp access touch 8 lines).
// Shared slots are padded one word every 32 so the thread-contiguous accesses (lane stride
// 8 words) hit 32 different banks.
#include <algorithm>
#include <functional>
#include <limits>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_sort_internal.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

constexpr int64_t kElementsPerThread = 8;

int Log2(int64_t p) {
  int l = 0;
  while ((int64_t{1} << l) < p) ++l;
  return l;
}

// Whether `op` holds its position along `dim` (an iota, a broadcast of a 1-D iota, or a loop
// fusion computing one) in an integer type that represents every position of a row of n.
bool IsIotaAlong(const HloInstruction* op, int64_t dim, int64_t n) {
  const PrimitiveType t = op->shape().element_type();
  if (t != PrimitiveType::S32 && t != PrimitiveType::S64 && t != PrimitiveType::U32 && t != PrimitiveType::U64)
    return false;
  if (n > std::numeric_limits<int32_t>::max()) return false;
  const HloInstruction* r = op;
  if (op->opcode() == HloOpcode::kFusion) {
    if (op->called_computations().empty() || op->fused_instructions_computation() == nullptr) return false;
    r = op->fused_instructions_computation()->root_instruction();
    if (r == nullptr || r->shape().element_type() != t) return false;
  }
  if (r->opcode() == HloOpcode::kIota) return r->attrs().iota_dimension == dim;
  if (r->opcode() == HloOpcode::kBroadcast && r->operand_count() == 1) {
    const HloInstruction* src = r->operand(0);
    return src->opcode() == HloOpcode::kIota && src->shape().rank() == 1 && src->shape().element_type() == t &&
           r->attrs().dimensions == std::vector<int64_t>{dim};
  }
  return false;
}

// One slot of a row in registers: the moved operand values (nullptr for iota operands) and
// the original position.
struct Slot {
  std::vector<llvm::Value*> values;
  llvm::Value* position = nullptr;  // i32
};

class RegisterSort {
 public:
  RegisterSort(GpuKernel& k, const HloInstruction& sort, const SortRows& rows, const SortLessFn& less)
      : k_(k), b_(*k.b), rows_(rows), less_(less) {
    n_ = rows.n;
    P_ = NextPow2(n_);
    E_ = std::min<int64_t>(kElementsPerThread, P_);
    R_ = P_ / E_;
    B_ = std::max<int64_t>(R_, 128);
    G_ = B_ / R_;
    m_ = k.operands.size();
    for (size_t a = 0; a < m_; ++a) {
      types_.push_back(PrimitiveTypeToIrType(k.operands[a].shape().element_type(), b_.getContext()));
      iota_.push_back(IsIotaAlong(sort.operand(static_cast<int64_t>(a)), rows.dim, n_));
    }
  }

  // Whether this kernel form applies (row fits a block, shared memory suffices, types move).
  bool Applies() const {
    if (n_ < 2 || rows_.count < 1 || n_ > (int64_t{1} << 30)) return false;
    if (R_ > k_.device->max_threads_per_block) return false;
    for (size_t a = 0; a < m_; ++a)
      if (IsComplex(k_.operands[a].shape().element_type())) return false;
    return SharedBytes() <= k_.device->shared_memory_per_block;
  }

  absl::Status Emit();

 private:
  bool HasSharedSteps() const { return R_ > 32; }
  bool AnyIota() const { return std::find(iota_.begin(), iota_.end(), true) != iota_.end(); }
  bool NeedSharedPositions() const { return HasSharedSteps() || AnyIota(); }
  int64_t SlotsPerHalf() const { return G_ * P_ + (G_ * P_) / 32; }
  int64_t SharedBytes() const {
    int64_t per = NeedSharedPositions() ? 4 : 0;
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) per += std::max(1, ByteWidth(k_.operands[a].shape().element_type()));
    return 2 * SlotsPerHalf() * per;
  }

  llvm::Value* I32(int64_t v) { return b_.getInt32(static_cast<uint32_t>(v)); }
  // Shared slot of block-local element q in buffer half `half` (one pad word every 32).
  llvm::Value* Phys(llvm::Value* q, llvm::Value* half) {
    return b_.CreateAdd(b_.CreateAdd(q, b_.CreateLShr(q, 5)), b_.CreateMul(half, I32(SlotsPerHalf())));
  }
  llvm::Value* SharedAt(llvm::Value* array, llvm::Type* t, llvm::Value* q, llvm::Value* half) {
    auto* ty = llvm::ArrayType::get(t, static_cast<uint64_t>(2 * SlotsPerHalf()));
    return b_.CreateInBoundsGEP(ty, array, {b_.getInt32(0), Phys(q, half)});
  }
  // The value operand a has in slot s (computed from the position for iota operands).
  llvm::Value* ValueOf(const Slot& s, size_t a) {
    if (!iota_[a]) return s.values[a];
    return b_.CreateZExtOrTrunc(s.position, types_[a]);
  }
  std::vector<llvm::Value*> ValuesOf(const Slot& s) {
    std::vector<llvm::Value*> v;
    for (size_t a = 0; a < m_; ++a) v.push_back(ValueOf(s, a));
    return v;
  }
  Slot Select(llvm::Value* c, const Slot& x, const Slot& y) {
    Slot r;
    r.values.resize(m_, nullptr);
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) r.values[a] = b_.CreateSelect(c, x.values[a], y.values[a]);
    r.position = b_.CreateSelect(c, x.position, y.position);
    return r;
  }
  // (x before y, y before x) in the total order (comparator, position), padding last.
  absl::StatusOr<std::pair<llvm::Value*, llvm::Value*>> Order(const Slot& x, const Slot& y);
  // d (partner thread distance) and kk (stage) are runtime i32 values from here on.
  absl::Status SharedStep(std::vector<Slot>& slots, llvm::Value* d, llvm::Value* kk);
  absl::Status ShuffleStep(std::vector<Slot>& slots, llvm::Value* d, llvm::Value* kk);
  absl::Status Exchange(std::vector<Slot>& slots, const std::vector<Slot>& partner, llvm::Value* d, llvm::Value* kk);
  // In-thread steps j = jmax..1 of stage kk: kk a constant below E, or a runtime i32 value.
  absl::Status ThreadSteps(std::vector<Slot>& slots, int64_t kk_const, llvm::Value* kk, int64_t jmax);
  // The stages after E: a runtime loop.
  absl::Status LaterStages();
  // The slots live in allocas between loop iterations (promoted to registers).
  std::vector<Slot> LoadSlots();
  void StoreSlots(const std::vector<Slot>& slots);
  // `step` on the slots loaded from their allocas, stored back after.
  absl::Status WithSlots(const std::function<absl::Status(std::vector<Slot>&)>& step);

  GpuKernel& k_;
  llvm::IRBuilderBase& b_;
  const SortRows& rows_;
  const SortLessFn& less_;
  int64_t n_, P_, E_, R_, B_, G_;
  size_t m_;
  std::vector<llvm::Type*> types_;
  std::vector<bool> iota_;
  // Per kernel: shared arrays (nullptr where unused), the thread's row in the block and slot base.
  std::vector<llvm::Value*> shared_values_;
  llvm::Value* shared_positions_ = nullptr;
  llvm::Value* g_ = nullptr;  // row of the block this thread works on (i32)
  llvm::Value* t_ = nullptr;  // thread within that row (i32)
  std::vector<Slot> vars_;     // per slot: allocas of its values and position
  llvm::Value* half_ = nullptr;  // alloca (i32): the shared half the last shared step wrote
};

absl::StatusOr<std::pair<llvm::Value*, llvm::Value*>> RegisterSort::Order(const Slot& x, const Slot& y) {
  std::vector<llvm::Value*> vx = ValuesOf(x), vy = ValuesOf(y);
  absl::StatusOr<llvm::Value*> lt = less_(vx, vy);
  if (!lt.ok()) return lt.status();
  absl::StatusOr<llvm::Value*> gt = less_(vy, vx);
  if (!gt.ok()) return gt.status();
  llvm::Value* xy = b_.CreateOr(*lt, b_.CreateAnd(b_.CreateNot(*gt), b_.CreateICmpULT(x.position, y.position)));
  llvm::Value* yx = b_.CreateOr(*gt, b_.CreateAnd(b_.CreateNot(*lt), b_.CreateICmpULT(y.position, x.position)));
  if (n_ < P_) {
    llvm::Value* px = b_.CreateICmpUGE(x.position, I32(n_));
    llvm::Value* py = b_.CreateICmpUGE(y.position, I32(n_));
    xy = b_.CreateAnd(b_.CreateNot(px), b_.CreateOr(py, xy));
    yx = b_.CreateAnd(b_.CreateNot(py), b_.CreateOr(px, yx));
  }
  return std::make_pair(xy, yx);
}

// Each thread holds slot e of position t*E+e, its partner slot e of thread t^d; it keeps the
// smaller of the two when it is the lower of the pair in an ascending run (or the upper in a
// descending one), else the larger. Both threads of a pair evaluate the same order, so they
// agree on the swap.
absl::Status RegisterSort::Exchange(std::vector<Slot>& slots, const std::vector<Slot>& partner, llvm::Value* d,
                                    llvm::Value* kk) {
  llvm::Value* lower = b_.CreateICmpEQ(b_.CreateAnd(t_, d), I32(0));
  // Runs of kk slots ascend and descend in turn (the last stage's single run, kk = P, ascends:
  // t < R = P/E).
  llvm::Value* ascending = b_.CreateICmpEQ(b_.CreateAnd(t_, b_.CreateLShr(kk, Log2(E_))), I32(0));
  llvm::Value* keep_min = b_.CreateICmpEQ(lower, ascending);
  for (int64_t e = 0; e < E_; ++e) {
    absl::StatusOr<std::pair<llvm::Value*, llvm::Value*>> o = Order(slots[e], partner[e]);
    if (!o.ok()) return o.status();
    // keep_min takes the partner when it comes first, keep_max when it comes second.
    llvm::Value* take = b_.CreateSelect(keep_min, o->second, o->first);
    slots[e] = Select(take, partner[e], slots[e]);
  }
  return absl::OkStatus();
}

absl::Status RegisterSort::SharedStep(std::vector<Slot>& slots, llvm::Value* d, llvm::Value* kk) {
  llvm::Value* half = b_.CreateXor(b_.CreateLoad(b_.getInt32Ty(), half_), I32(1));
  b_.CreateStore(half, half_);
  llvm::Value* row_base = b_.CreateMul(g_, I32(P_));
  llvm::Value* mine = b_.CreateAdd(row_base, b_.CreateMul(t_, I32(E_)));
  llvm::Value* theirs = b_.CreateAdd(row_base, b_.CreateMul(b_.CreateXor(t_, d), I32(E_)));
  for (int64_t e = 0; e < E_; ++e) {
    llvm::Value* q = b_.CreateAdd(mine, I32(e));
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) b_.CreateStore(slots[e].values[a], SharedAt(shared_values_[a], types_[a], q, half));
    b_.CreateStore(slots[e].position, SharedAt(shared_positions_, b_.getInt32Ty(), q, half));
  }
  k_.Barrier();
  std::vector<Slot> partner(E_);
  for (int64_t e = 0; e < E_; ++e) {
    llvm::Value* q = b_.CreateAdd(theirs, I32(e));
    partner[e].values.resize(m_, nullptr);
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) partner[e].values[a] = b_.CreateLoad(types_[a], SharedAt(shared_values_[a], types_[a], q, half));
    partner[e].position = b_.CreateLoad(b_.getInt32Ty(), SharedAt(shared_positions_, b_.getInt32Ty(), q, half));
  }
  return Exchange(slots, partner, d, kk);
}

absl::Status RegisterSort::ShuffleStep(std::vector<Slot>& slots, llvm::Value* d, llvm::Value* kk) {
  std::vector<Slot> partner(E_);
  for (int64_t e = 0; e < E_; ++e) {
    partner[e].values.resize(m_, nullptr);
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) partner[e].values[a] = k_.ShuffleXor(slots[e].values[a], d);
    partner[e].position = k_.ShuffleXor(slots[e].position, d);
  }
  return Exchange(slots, partner, d, kk);
}

absl::Status RegisterSort::ThreadSteps(std::vector<Slot>& slots, int64_t kk_const, llvm::Value* kk, int64_t jmax) {
  // Slots e and e|j of one thread. Within a stage shorter than a thread's slots the run's
  // direction is known statically; in a later one it is the thread's.
  llvm::Value* ascending = nullptr;
  if (kk != nullptr) ascending = b_.CreateICmpEQ(b_.CreateAnd(t_, b_.CreateLShr(kk, Log2(E_))), I32(0));
  else if (kk_const == E_ && E_ < P_) ascending = b_.CreateICmpEQ(b_.CreateAnd(t_, I32(1)), I32(0));
  for (int64_t j = jmax; j > 0; j /= 2) {
    for (int64_t e = 0; e < E_; ++e) {
      if (e & j) continue;
      const int64_t f = e | j;
      absl::StatusOr<std::pair<llvm::Value*, llvm::Value*>> o = Order(slots[e], slots[f]);
      if (!o.ok()) return o.status();
      llvm::Value* swap;
      if (kk == nullptr && kk_const < E_) swap = (e & kk_const) == 0 ? o->second : o->first;
      else if (ascending != nullptr) swap = b_.CreateSelect(ascending, o->second, o->first);
      else swap = o->second;  // the last stage of a row that is one thread's
      Slot lo = Select(swap, slots[f], slots[e]);
      Slot hi = Select(swap, slots[e], slots[f]);
      slots[e] = lo;
      slots[f] = hi;
    }
  }
  return absl::OkStatus();
}

std::vector<Slot> RegisterSort::LoadSlots() {
  std::vector<Slot> slots(E_);
  for (int64_t e = 0; e < E_; ++e) {
    slots[e].values.resize(m_, nullptr);
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) slots[e].values[a] = b_.CreateLoad(types_[a], vars_[e].values[a]);
    slots[e].position = b_.CreateLoad(b_.getInt32Ty(), vars_[e].position);
  }
  return slots;
}

void RegisterSort::StoreSlots(const std::vector<Slot>& slots) {
  for (int64_t e = 0; e < E_; ++e) {
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) b_.CreateStore(slots[e].values[a], vars_[e].values[a]);
    b_.CreateStore(slots[e].position, vars_[e].position);
  }
}

absl::Status RegisterSort::WithSlots(const std::function<absl::Status(std::vector<Slot>&)>& step) {
  std::vector<Slot> slots = LoadSlots();
  if (absl::Status s = step(slots); !s.ok()) return s;
  StoreSlots(slots);
  return absl::OkStatus();
}

// Stages kk = 2E..P (lk = log2 kk): the cross-thread steps j = kk/2..E, partner thread t^d
// with d = j/E (a shuffle inside a warp, shared memory beyond), then the in-thread steps.
absl::Status RegisterSort::LaterStages() {
  const int64_t log_e = Log2(E_);
  return EmitForLoop(b_, b_.getInt64(log_e + 1), b_.getInt64(Log2(P_) + 1), "sort.stage",
                          [&](llvm::Value* lk64) -> absl::Status {
    llvm::Value* lk = b_.CreateTrunc(lk64, b_.getInt32Ty());
    llvm::Value* kk = b_.CreateShl(I32(1), lk);
    absl::Status s = EmitForLoop(b_, b_.getInt64(0), b_.CreateSub(lk64, b_.getInt64(log_e)), "sort.step",
                                      [&](llvm::Value* u64) -> absl::Status {
      // d = (kk >> (u + 1)) / E
      llvm::Value* shift = b_.CreateAdd(b_.CreateTrunc(u64, b_.getInt32Ty()), I32(1 + log_e));
      llvm::Value* d = b_.CreateLShr(kk, shift);
      auto shuffle = [&]() { return WithSlots([&](std::vector<Slot>& slots) { return ShuffleStep(slots, d, kk); }); };
      if (!HasSharedSteps()) return shuffle();
      return EmitIfElse(b_, b_.CreateICmpULT(d, I32(32)), "sort.warp", shuffle, [&]() {
        return WithSlots([&](std::vector<Slot>& slots) { return SharedStep(slots, d, kk); });
      });
    });
    if (!s.ok()) return s;
    return WithSlots([&](std::vector<Slot>& slots) { return ThreadSteps(slots, 0, kk, E_ / 2); });
  });
}

absl::Status RegisterSort::Emit() {
  const int64_t groups = (rows_.count + G_ - 1) / G_;
  k_.launch = runtime::LaunchDimensions{};
  k_.launch.block_x = B_;
  const int64_t resident = std::max<int64_t>(1, k_.device->max_threads_per_sm / B_) * k_.device->sm_count;
  k_.launch.grid_x = std::max<int64_t>(1, std::min<int64_t>(groups, resident * std::max<int64_t>(1, k_.device->waves)));
  for (size_t a = 0; a < m_; ++a)
    shared_values_.push_back(iota_[a] ? nullptr
                                      : k_.SharedArray(types_[a], 2 * SlotsPerHalf(), absl::StrCat("sort", a)));
  if (NeedSharedPositions()) shared_positions_ = k_.SharedArray(b_.getInt32Ty(), 2 * SlotsPerHalf(), "position");
  vars_.resize(E_);
  for (int64_t e = 0; e < E_; ++e) {
    vars_[e].values.resize(m_, nullptr);
    for (size_t a = 0; a < m_; ++a)
      if (!iota_[a]) vars_[e].values[a] = EntryAlloca(b_, types_[a], absl::StrCat("slot", e, ".", a));
    vars_[e].position = EntryAlloca(b_, b_.getInt32Ty(), absl::StrCat("slot", e, ".position"));
  }
  half_ = EntryAlloca(b_, b_.getInt32Ty(), "sort.half");
  llvm::Value* tid = b_.CreateTrunc(k_.ThreadIdX(), b_.getInt32Ty());
  g_ = b_.CreateLShr(tid, Log2(R_));
  t_ = b_.CreateAnd(tid, I32(R_ - 1));
  const bool rows_exact = rows_.count % G_ == 0;  // every row a block touches exists
  const bool full = n_ == P_;                     // no padding slots

  // The block's element q (= tid + B*i, coalesced) is slot q % P of row group*G + q / P.
  struct Coalesced {
    llvm::Value* q;          // i32 block-local element
    llvm::Value* pos;        // i64 slot in the row
    llvm::Value* row;        // i64 row, clamped to an existing one
    llvm::Value* valid;      // i1 (nullptr: always)
  };
  auto coalesced = [&](llvm::Value* group, int64_t i) {
    Coalesced c;
    c.q = b_.CreateAdd(tid, I32(B_ * i));
    c.pos = b_.CreateZExt(b_.CreateAnd(c.q, I32(P_ - 1)), b_.getInt64Ty());
    llvm::Value* row =
        b_.CreateAdd(b_.CreateMul(group, b_.getInt64(G_)), b_.CreateZExt(b_.CreateLShr(c.q, Log2(P_)), b_.getInt64Ty()));
    c.valid = nullptr;
    c.row = row;
    if (!rows_exact) {
      llvm::Value* ok = b_.CreateICmpULT(row, b_.getInt64(rows_.count));
      c.row = b_.CreateSelect(ok, row, b_.getInt64(rows_.count - 1));
      c.valid = ok;
    }
    if (!full) {
      llvm::Value* ok = b_.CreateICmpULT(c.pos, b_.getInt64(n_));
      c.pos = b_.CreateSelect(ok, c.pos, b_.getInt64(n_ - 1));
      c.valid = c.valid ? b_.CreateAnd(c.valid, ok) : ok;
    }
    return c;
  };

  return EmitStridedLoop(b_, k_.BlockIdX(), b_.getInt64(groups), b_.getInt64(k_.launch.grid_x), "sort.group",
                         [&](llvm::Value* group) -> absl::Status {
    // Load: coalesced global reads into shared half 0 (padding and missing rows as zeros).
    for (int64_t i = 0; i < E_; ++i) {
      bool any = false;
      for (size_t a = 0; a < m_; ++a) any |= !iota_[a];
      if (!any) break;
      Coalesced c = coalesced(group, i);
      IrArray::Index row = DelinearizeRowMajor(c.row, rows_.other_dims, b_);
      for (size_t a = 0; a < m_; ++a) {
        if (iota_[a]) continue;
        llvm::Value* v = k_.operands[a].EmitReadArrayElement(rows_.At(row, c.pos), b_);
        if (c.valid) v = b_.CreateSelect(c.valid, v, llvm::Constant::getNullValue(types_[a]));
        b_.CreateStore(v, SharedAt(shared_values_[a], types_[a], c.q, I32(0)));
      }
    }
    k_.Barrier();
    std::vector<Slot> slots(E_);
    llvm::Value* mine = b_.CreateAdd(b_.CreateMul(g_, I32(P_)), b_.CreateMul(t_, I32(E_)));
    for (int64_t e = 0; e < E_; ++e) {
      slots[e].values.resize(m_, nullptr);
      llvm::Value* q = b_.CreateAdd(mine, I32(e));
      for (size_t a = 0; a < m_; ++a)
        if (!iota_[a]) slots[e].values[a] = b_.CreateLoad(types_[a], SharedAt(shared_values_[a], types_[a], q, I32(0)));
      slots[e].position = b_.CreateAdd(b_.CreateMul(t_, I32(E_)), I32(e));
    }
    for (int64_t kk = 2; kk <= E_; kk *= 2)
      if (absl::Status st = ThreadSteps(slots, kk, nullptr, kk / 2); !st.ok()) return st;
    if (P_ > E_) {
      StoreSlots(slots);
      b_.CreateStore(I32(0), half_);
      if (absl::Status st = LaterStages(); !st.ok()) return st;
      slots = LoadSlots();
    }
    // Store: through the other shared half, then coalesced global writes.
    llvm::Value* half = P_ > E_ ? b_.CreateXor(b_.CreateLoad(b_.getInt32Ty(), half_), I32(1)) : I32(1);
    for (int64_t e = 0; e < E_; ++e) {
      llvm::Value* q = b_.CreateAdd(mine, I32(e));
      for (size_t a = 0; a < m_; ++a)
        if (!iota_[a]) b_.CreateStore(slots[e].values[a], SharedAt(shared_values_[a], types_[a], q, half));
      if (AnyIota()) b_.CreateStore(slots[e].position, SharedAt(shared_positions_, b_.getInt32Ty(), q, half));
    }
    k_.Barrier();
    for (int64_t i = 0; i < E_; ++i) {
      Coalesced c = coalesced(group, i);
      IrArray::Index row = DelinearizeRowMajor(c.row, rows_.other_dims, b_);
      std::vector<llvm::Value*> values(m_);
      for (size_t a = 0; a < m_; ++a) {
        if (iota_[a]) {
          llvm::Value* p = b_.CreateLoad(b_.getInt32Ty(), SharedAt(shared_positions_, b_.getInt32Ty(), c.q, half));
          values[a] = b_.CreateZExtOrTrunc(p, types_[a]);
        } else {
          values[a] = b_.CreateLoad(types_[a], SharedAt(shared_values_[a], types_[a], c.q, half));
        }
      }
      auto write = [&]() -> absl::Status {
        for (size_t a = 0; a < m_; ++a) k_.outputs[a].EmitWriteArrayElement(rows_.At(row, c.pos), values[a], b_);
        return absl::OkStatus();
      };
      if (c.valid) {
        if (absl::Status s = EmitIf(b_, c.valid, "sort.store", write); !s.ok()) return s;
      } else if (absl::Status s = write(); !s.ok()) {
        return s;
      }
    }
    // The next row group's loads reuse shared half 0 (and maybe the half just read).
    k_.Barrier();
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<bool> TryEmitRegisterSort(GpuKernel& k, const HloInstruction& sort, const SortRows& rows,
                                         const SortLessFn& less) {
  if (k.operands.size() != k.outputs.size() || k.operands.empty()) return false;
  if (static_cast<int64_t>(k.operands.size()) != sort.operand_count()) return false;
  RegisterSort emitter(k, sort, rows, less);
  if (!emitter.Applies()) return false;
  if (absl::Status s = emitter.Emit(); !s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
