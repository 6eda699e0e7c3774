// Parallel cumulative operations: associative scans (XLA's `scan` with one carry, as JAX's
// cumsum/cumprod lower) and the cumulative reduce-windows JAX emits for cumprod/cummax (a
// window covering the whole dimension, padded n-1 on one side). The serial form (a thread per
// slice running the recurrence) leaves most of the GPU idle and reads rows with a stride; here:
//   - scanned dimension minor (inner == 1): a block per row walks it in tiles of T elements;
//     each tile is a warp scan (shfl.up), a scan of the warp totals in shared memory, and the
//     carry of the previous tiles (XLA's decoupled-look-back would parallelize one long row
//     further; rows here are many, so a block each keeps the GPU busy);
//   - scanned dimension not minor (inner > 1): 32 adjacent columns x Y chunks per block; each
//     thread folds its chunk (coalesced across the warp), the chunk totals are combined in shared
//     memory, and each thread rescans its chunk from its prefix.
// Both reassociate the combiner, which is why the scan must say is_associative (or the op is
// exactly associative) — XLA reassociates these too (ReduceWindowRewriter's tree).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitter_conditions.h"
#include "codegen/gpu/gpu_emitters.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace hloc::codegen::gpu {
namespace {

using Combine = std::function<absl::StatusOr<llvm::Value*>(llvm::Value*, llvm::Value*)>;

// A cumulative operation over dimension `dim` of a row-major array of `dims`.
struct Cumulative {
  std::vector<int64_t> dims;
  int64_t dim = 0;
  bool reverse = false;
  llvm::Type* type = nullptr;
  Combine combine;                                         // combine(earlier, later)
  std::function<absl::StatusOr<llvm::Value*>(const IrArray::Index&)> load;     // input at a full index
  std::function<absl::StatusOr<llvm::Value*>(const IrArray::Index&)> initial;  // carry in, at a slice index
  std::function<void(const IrArray::Index&, llvm::Value*)> store;              // output at a full index
  std::function<void(const IrArray::Index&, llvm::Value*)> store_carry;        // carry out (may be empty)
};

// shfl.sync.up of a value of up to 64 bits (32-bit pieces).
llvm::Value* ShuffleUp(llvm::IRBuilderBase& b, llvm::Value* v, int offset) {
  llvm::Type* t = v->getType();
  const unsigned bits = static_cast<unsigned>(t->getPrimitiveSizeInBits());
  llvm::Value* as_int = t->isIntegerTy() ? v : b.CreateBitCast(v, b.getIntNTy(bits));
  auto shfl = [&](llvm::Value* x32) {
    return b.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_up_i32, {},
                             {b.getInt32(0xffffffffu), x32, b.getInt32(offset), b.getInt32(0)});
  };
  llvm::Value* r;
  if (bits <= 32) {
    r = b.CreateTrunc(shfl(b.CreateZExt(as_int, b.getInt32Ty())), b.getIntNTy(bits));
  } else {
    llvm::Value* lo = shfl(b.CreateTrunc(as_int, b.getInt32Ty()));
    llvm::Value* hi = shfl(b.CreateTrunc(b.CreateLShr(as_int, 32), b.getInt32Ty()));
    r = b.CreateOr(b.CreateZExt(lo, b.getInt64Ty()), b.CreateShl(b.CreateZExt(hi, b.getInt64Ty()), 32));
  }
  return t->isIntegerTy() ? r : b.CreateBitCast(r, t);
}

IrArray::Index Join(const std::vector<llvm::Value*>& outer, llvm::Value* pos, const std::vector<llvm::Value*>& inner) {
  std::vector<llvm::Value*> v = outer;
  v.push_back(pos);
  v.insert(v.end(), inner.begin(), inner.end());
  return IrArray::Index(v);
}

IrArray::Index Slice(const std::vector<llvm::Value*>& outer, const std::vector<llvm::Value*>& inner) {
  std::vector<llvm::Value*> v = outer;
  v.insert(v.end(), inner.begin(), inner.end());
  return IrArray::Index(v);
}

// Scanned dimension minor: a block per row, tiles of T with warp shuffles.
// k.launch: PlanCumulative's (blocks of T threads).
absl::Status EmitRowScan(GpuKernel& k, const Cumulative& c, int64_t rows, int64_t len) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t T = k.launch.block_x;
  const int64_t warps = T / 32;
  llvm::Value* warp_totals = k.SharedArray(c.type, warps, "warp_totals");
  llvm::Value* carry_slot = k.SharedArray(c.type, 1, "carry_slot");
  auto wt_at = [&](llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(c.type, warps), warp_totals, {b.getInt64(0), i});
  };
  llvm::Value* carry_ptr = b.CreateInBoundsGEP(llvm::ArrayType::get(c.type, 1), carry_slot, {b.getInt64(0), b.getInt64(0)});
  llvm::AllocaInst* carry = EntryAlloca(b, c.type, "carry");
  llvm::AllocaInst* acc = EntryAlloca(b, c.type, "prefix");
  llvm::Value* tid = k.ThreadIdX();
  llvm::Value* lane = b.CreateAnd(tid, b.getInt64(31));
  llvm::Value* warp = b.CreateLShr(tid, 5);
  std::vector<int64_t> outer_dims(c.dims.begin(), c.dims.begin() + c.dim);
  const int64_t tiles = (len + T - 1) / T;
  return EmitStridedLoop(b, k.BlockIdX(), b.getInt64(rows), b.getInt64(k.launch.grid_x), "row",
                         [&](llvm::Value* r) -> absl::Status {
    std::vector<llvm::Value*> outer = DelinearizeRowMajor(r, outer_dims, b).multidim;
    absl::StatusOr<llvm::Value*> init = c.initial(Slice(outer, {}));
    if (!init.ok()) return init.status();
    b.CreateStore(*init, carry);
    absl::Status s = EmitForLoop(b, b.getInt64(0), b.getInt64(tiles), "tile", [&](llvm::Value* t) -> absl::Status {
      llvm::Value* step = b.CreateAdd(b.CreateMul(t, b.getInt64(T)), tid);
      llvm::Value* valid = b.CreateICmpSLT(step, b.getInt64(len));
      // Lanes past the end read a valid element; they come after every real one in scan
      // order, so their values never reach a real output.
      llvm::Value* safe = b.CreateSelect(valid, step, b.getInt64(len - 1));
      llvm::Value* pos = c.reverse ? b.CreateSub(b.getInt64(len - 1), safe) : safe;
      absl::StatusOr<llvm::Value*> x = c.load(Join(outer, pos, {}));
      if (!x.ok()) return x.status();
      llvm::Value* v = *x;
      for (int off = 1; off < 32; off *= 2) {
        llvm::Value* up = ShuffleUp(b, v, off);
        absl::StatusOr<llvm::Value*> comb = c.combine(up, v);
        if (!comb.ok()) return comb.status();
        v = b.CreateSelect(b.CreateICmpSGE(lane, b.getInt64(off)), *comb, v);
      }
      if (warps > 1) {
        if (absl::Status ws = EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(31)), "warp_total", [&]() {
              b.CreateStore(v, wt_at(warp));
              return absl::OkStatus();
            }); !ws.ok())
          return ws;
      }
      k.Barrier();
      b.CreateStore(b.CreateLoad(c.type, carry), acc);
      if (warps > 1) {
        // prefix = carry (+) totals of the earlier warps, in order.
        absl::Status ps = EmitForLoop(b, b.getInt64(0), warp, "earlier", [&](llvm::Value* w) -> absl::Status {
          absl::StatusOr<llvm::Value*> comb = c.combine(b.CreateLoad(c.type, acc), b.CreateLoad(c.type, wt_at(w)));
          if (!comb.ok()) return comb.status();
          b.CreateStore(*comb, acc);
          return absl::OkStatus();
        });
        if (!ps.ok()) return ps;
      }
      absl::StatusOr<llvm::Value*> out = c.combine(b.CreateLoad(c.type, acc), v);
      if (!out.ok()) return out.status();
      absl::Status es = EmitIf(b, valid, "write", [&]() {
        c.store(Join(outer, pos, {}), *out);
        return absl::OkStatus();
      });
      if (!es.ok()) return es;
      // The thread of the tile's last real element publishes the new carry.
      llvm::Value* last = b.CreateICmpEQ(step, b.CreateSelect(b.CreateICmpEQ(t, b.getInt64(tiles - 1)),
                                                              b.getInt64(len - 1),
                                                              b.CreateAdd(b.CreateMul(t, b.getInt64(T)), b.getInt64(T - 1))));
      es = EmitIf(b, last, "publish", [&]() {
        b.CreateStore(*out, carry_ptr);
        return absl::OkStatus();
      });
      if (!es.ok()) return es;
      k.Barrier();
      b.CreateStore(b.CreateLoad(c.type, carry_ptr), carry);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    if (c.store_carry) {
      s = EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "carry_out", [&]() {
        c.store_carry(Slice(outer, {}), b.CreateLoad(c.type, carry));
        return absl::OkStatus();
      });
      if (!s.ok()) return s;
    }
    // Nobody may overwrite the carry slot of this row before everyone has read it.
    k.Barrier();
    return absl::OkStatus();
  });
}

// Scanned dimension not minor: 32 columns x Y chunks per block.
// k.launch: PlanCumulative's (blocks of 32 x Y threads).
absl::Status EmitColumnScan(GpuKernel& k, const Cumulative& c, int64_t outer_n, int64_t len, int64_t inner) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t Y = k.launch.block_x / 32;
  const int64_t C = (len + Y - 1) / Y;
  const int64_t groups = (inner + 31) / 32;
  const int64_t blocks = outer_n * groups;
  llvm::Value* totals = k.SharedArray(c.type, 32 * Y, "chunk_totals");
  auto tot_at = [&](llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(c.type, 32 * Y), totals, {b.getInt64(0), i});
  };
  llvm::AllocaInst* acc = EntryAlloca(b, c.type, "acc");
  llvm::Value* tid = k.ThreadIdX();
  llvm::Value* x = b.CreateAnd(tid, b.getInt64(31));
  llvm::Value* y = b.CreateLShr(tid, 5);
  std::vector<int64_t> outer_dims(c.dims.begin(), c.dims.begin() + c.dim);
  std::vector<int64_t> inner_dims(c.dims.begin() + c.dim + 1, c.dims.end());
  llvm::Value* begin = b.CreateMul(y, b.getInt64(C));
  llvm::Value* end = b.CreateSelect(b.CreateICmpSLT(b.CreateAdd(begin, b.getInt64(C)), b.getInt64(len)),
                                    b.CreateAdd(begin, b.getInt64(C)), b.getInt64(len));
  llvm::Value* has = b.CreateICmpSLT(begin, end);
  return EmitStridedLoop(b, k.BlockIdX(), b.getInt64(blocks), b.getInt64(k.launch.grid_x), "tile",
                         [&](llvm::Value* blk) -> absl::Status {
    llvm::Value* o = b.CreateUDiv(blk, b.getInt64(groups));
    llvm::Value* col = b.CreateAdd(b.CreateMul(b.CreateURem(blk, b.getInt64(groups)), b.getInt64(32)), x);
    llvm::Value* col_ok = b.CreateICmpSLT(col, b.getInt64(inner));
    std::vector<llvm::Value*> outer = DelinearizeRowMajor(o, outer_dims, b).multidim;
    std::vector<llvm::Value*> in = DelinearizeRowMajor(b.CreateSelect(col_ok, col, b.getInt64(0)), inner_dims, b).multidim;
    auto at = [&](llvm::Value* step) {
      llvm::Value* pos = c.reverse ? b.CreateSub(b.getInt64(len - 1), step) : step;
      return Join(outer, pos, in);
    };
    // Phase 1: the chunk's total.
    absl::Status s = EmitIf(b, b.CreateAnd(col_ok, has), "fold", [&]() -> absl::Status {
      absl::StatusOr<llvm::Value*> first = c.load(at(begin));
      if (!first.ok()) return first.status();
      b.CreateStore(*first, acc);
      absl::Status ls = EmitForLoop(b, b.CreateAdd(begin, b.getInt64(1)), end, "fold", [&](llvm::Value* i) -> absl::Status {
        absl::StatusOr<llvm::Value*> v = c.load(at(i));
        if (!v.ok()) return v.status();
        absl::StatusOr<llvm::Value*> comb = c.combine(b.CreateLoad(c.type, acc), *v);
        if (!comb.ok()) return comb.status();
        b.CreateStore(*comb, acc);
        return absl::OkStatus();
      });
      if (!ls.ok()) return ls;
      b.CreateStore(b.CreateLoad(c.type, acc), tot_at(tid));
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k.Barrier();
    // Phases 2-3: prefix from the carry and the earlier chunks, then rescan the chunk.
    s = EmitIf(b, b.CreateAnd(col_ok, has), "scan", [&]() -> absl::Status {
      absl::StatusOr<llvm::Value*> init = c.initial(Slice(outer, in));
      if (!init.ok()) return init.status();
      b.CreateStore(*init, acc);
      absl::Status ls = EmitForLoop(b, b.getInt64(0), y, "earlier", [&](llvm::Value* w) -> absl::Status {
        llvm::Value* t = b.CreateLoad(c.type, tot_at(b.CreateAdd(b.CreateMul(w, b.getInt64(32)), x)));
        absl::StatusOr<llvm::Value*> comb = c.combine(b.CreateLoad(c.type, acc), t);
        if (!comb.ok()) return comb.status();
        b.CreateStore(*comb, acc);
        return absl::OkStatus();
      });
      if (!ls.ok()) return ls;
      ls = EmitForLoop(b, begin, end, "rescan", [&](llvm::Value* i) -> absl::Status {
        absl::StatusOr<llvm::Value*> v = c.load(at(i));
        if (!v.ok()) return v.status();
        absl::StatusOr<llvm::Value*> comb = c.combine(b.CreateLoad(c.type, acc), *v);
        if (!comb.ok()) return comb.status();
        b.CreateStore(*comb, acc);
        c.store(at(i), *comb);
        return absl::OkStatus();
      });
      if (!ls.ok()) return ls;
      if (c.store_carry) {
        return EmitIf(b, b.CreateICmpEQ(end, b.getInt64(len)), "carry_out", [&]() {
          c.store_carry(Slice(outer, in), b.CreateLoad(c.type, acc));
          return absl::OkStatus();
        });
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k.Barrier();
    return absl::OkStatus();
  });
}

// The extent of a cumulative operation over dimension `dim` of a row-major array of `dims`:
// the slices before it (outer), its length, and the elements after it (inner).
struct CumulativeExtent {
  int64_t outer = 1, len = 0, inner = 1;
};

CumulativeExtent ExtentOf(const std::vector<int64_t>& dims, int64_t dim) {
  CumulativeExtent e;
  e.len = dims[dim];
  for (int64_t d = 0; d < dim; ++d) e.outer *= dims[d];
  for (size_t d = dim + 1; d < dims.size(); ++d) e.inner *= dims[d];
  return e;
}

// The scan's launch (no IR): scanned dimension minor, a block of T threads per row (T the
// row's length rounded up to a warp, 512 from 2048 on, at most 1024), at most 8 waves of
// blocks; else blocks of 32 columns x Y chunks (chunks of at least 16 elements, Y at most 32),
// at most 64 blocks an SM. nullopt where the serial form is as good (EmitCumulative declines).
std::optional<runtime::LaunchDimensions> PlanCumulative(const std::vector<int64_t>& dims, int64_t dim,
                                                        const GpuDeviceInfo& dev) {
  const CumulativeExtent e = ExtentOf(dims, dim);
  if (e.len < 2 || e.outer * e.inner == 0) return std::nullopt;
  runtime::LaunchDimensions l;
  if (e.inner == 1) {
    const int64_t T = std::min<int64_t>(1024, std::max<int64_t>(32, e.len >= 2048 ? 512 : ((e.len + 31) / 32) * 32));
    l.block_x = T;
    l.grid_x = std::max<int64_t>(1, std::min<int64_t>(e.outer, dev.sm_count * (2048 / T) * 8));
  } else {
    int64_t Y = 1;
    while (Y < 32 && Y * 2 * 16 <= e.len) Y *= 2;  // chunks of at least 16 elements
    const int64_t blocks = e.outer * ((e.inner + 31) / 32);
    l.block_x = 32 * Y;
    l.grid_x = std::max<int64_t>(1, std::min<int64_t>(blocks, dev.sm_count * 64));
  }
  return l;
}

absl::StatusOr<bool> EmitCumulative(GpuKernel& k, const Cumulative& c) {
  std::optional<runtime::LaunchDimensions> launch = PlanCumulative(c.dims, c.dim, *k.device);
  if (!launch) return false;  // the serial form is as good
  k.launch = *launch;
  const CumulativeExtent e = ExtentOf(c.dims, c.dim);
  const int64_t len = e.len, outer = e.outer, inner = e.inner;
  if (inner == 1) {
    if (absl::Status s = EmitRowScan(k, c, outer, len); !s.ok()) return s;
  } else {
    if (absl::Status s = EmitColumnScan(k, c, outer, len, inner); !s.ok()) return s;
  }
  return true;
}

bool Scannable(PrimitiveType t) {
  return !IsComplex(t) && t != PrimitiveType::TUPLE && BitWidth(t) >= 1 && BitWidth(t) <= 64;
}

bool IsParam(const HloInstruction* i) { return i->opcode() == HloOpcode::kParameter; }

// The commutative, associative op `combine` applies (add, multiply, and, or, xor), for ops
// whose IR is one instruction whatever the type.
std::optional<Combine> SimpleCombine(llvm::IRBuilderBase& b, HloOpcode op, PrimitiveType t) {
  const bool fp = IsFloatingPoint(t);
  switch (op) {
    case HloOpcode::kAdd:
      if (t == PrimitiveType::PRED) return std::nullopt;
      return Combine([&b, fp](llvm::Value* x, llvm::Value* y) -> absl::StatusOr<llvm::Value*> {
        return fp ? b.CreateFAdd(x, y) : b.CreateAdd(x, y);
      });
    case HloOpcode::kMultiply:
      if (t == PrimitiveType::PRED) return std::nullopt;
      return Combine([&b, fp](llvm::Value* x, llvm::Value* y) -> absl::StatusOr<llvm::Value*> {
        return fp ? b.CreateFMul(x, y) : b.CreateMul(x, y);
      });
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      if (fp) return std::nullopt;
      return Combine([&b, op](llvm::Value* x, llvm::Value* y) -> absl::StatusOr<llvm::Value*> {
        if (op == HloOpcode::kAnd) return b.CreateAnd(x, y);
        if (op == HloOpcode::kOr) return b.CreateOr(x, y);
        return b.CreateXor(x, y);
      });
    default:
      return std::nullopt;
  }
}

// Whether the scalar constant `init` is the identity of `op` (so reduce-window's padding,
// which reads `init`, adds nothing), or op is idempotent (max/min/and/or: f(init, init) = init).
bool InitIsNeutral(const HloInstruction* init, HloOpcode op) {
  if (op == HloOpcode::kMaximum || op == HloOpcode::kMinimum || op == HloOpcode::kAnd || op == HloOpcode::kOr)
    return true;
  if (init->opcode() != HloOpcode::kConstant || !init->attrs().literal) return false;
  const PrimitiveType t = init->shape().element_type();
  if (IsComplex(t)) return false;
  const double v = init->attrs().literal->GetDouble(0);
  if (op == HloOpcode::kAdd || op == HloOpcode::kXor) return v == 0.0;
  if (op == HloOpcode::kMultiply) return v == 1.0;
  return false;
}

}  // namespace

absl::StatusOr<bool> TryEmitParallelScan(GpuKernel& k, const HloInstruction& scan) {
  llvm::IRBuilderBase& b = *k.b;
  const HloComputation* body = scan.to_apply();
  if (body == nullptr || scan.attrs().num_carries != 1 || scan.operand_count() != 2 || k.outputs.size() != 2 ||
      k.operands.size() != 2 || scan.attrs().dimensions.size() != 1)
    return false;
  // body(input, carry) = (op, op) with op = input (+) carry.
  const HloInstruction* root = body->root_instruction();
  if (root->opcode() != HloOpcode::kTuple || root->operand_count() != 2 || root->operand(0) != root->operand(1))
    return false;
  const HloInstruction* op = root->operand(0);
  if (op->operand_count() != 2 || !IsParam(op->operand(0)) || !IsParam(op->operand(1)) ||
      op->operand(0) == op->operand(1))
    return false;
  const IrArray& in = k.operands[0];
  const PrimitiveType t = in.shape().element_type();
  if (!Scannable(t) || k.outputs[0].shape().element_type() != t || k.outputs[1].shape().element_type() != t) return false;
  if (!IsRowMajorLayout(in.shape()) || !IsRowMajorLayout(k.outputs[0].shape())) return false;
  const bool exact = !IsFloatingPoint(t);
  if (!exact && !scan.attrs().is_associative.value_or(false)) return false;
  const bool fp_bits = !exact && !PrimitiveTypeToIrType(t, b.getContext())->isFloatingPointTy();
  std::optional<Combine> combine = SimpleCombine(b, op->opcode(), t);
  if (!combine) return false;
  // f8/f4 values are integer bits in IR (LLVM has no such float types): their arithmetic is the
  // elemental emitter's (in f32, rounded back), as everywhere else.
  if (fp_bits) {
    ElementalIrEmitter* e = k.emitter;
    combine = [e, op](llvm::Value* x, llvm::Value* y) { return e->EmitElementwiseOp(op, {x, y}); };
  }
  Cumulative c;
  c.dims = in.shape().dimensions();
  c.dim = scan.attrs().dimensions[0];
  if (c.dim < 0 || c.dim >= static_cast<int64_t>(c.dims.size())) return false;
  c.reverse = scan.attrs().is_reverse;
  c.type = PrimitiveTypeToIrType(t, b.getContext());
  c.combine = *combine;
  IrArray input = k.operands[0], init = k.operands[1], out = k.outputs[0], carry = k.outputs[1];
  c.load = [input, &b](const IrArray::Index& i) -> absl::StatusOr<llvm::Value*> { return input.EmitReadArrayElement(i, b); };
  c.initial = [init, &b](const IrArray::Index& i) -> absl::StatusOr<llvm::Value*> { return init.EmitReadArrayElement(i, b); };
  c.store = [out, &b](const IrArray::Index& i, llvm::Value* v) { out.EmitWriteArrayElement(i, v, b); };
  c.store_carry = [carry, &b](const IrArray::Index& i, llvm::Value* v) { carry.EmitWriteArrayElement(i, v, b); };
  return EmitCumulative(k, c);
}

namespace {

// The cumulative form of a reduce-window: its one scanned dimension and direction.
struct CumulativeForm {
  int64_t dim = -1;
  bool reverse = false;
};

std::optional<CumulativeForm> CumulativeFormOf(const HloInstruction& rw, const std::vector<Shape>& outputs) {
  if (rw.operand_count() != 2 || !rw.shape().IsArray() || outputs.size() != 1) return std::nullopt;
  if (!rw.attrs().window || rw.to_apply() == nullptr) return std::nullopt;
  const Shape& s = rw.shape();
  if (rw.operand(0)->shape().dimensions() != s.dimensions() || !IsRowMajorLayout(outputs[0])) return std::nullopt;
  const PrimitiveType t = s.element_type();
  if (!Scannable(t)) return std::nullopt;
  const std::vector<WindowDimension>& wd = rw.attrs().window->dimensions;
  if (static_cast<int64_t>(wd.size()) != s.rank()) return std::nullopt;
  int64_t dim = -1;
  bool reverse = false;
  for (int64_t d = 0; d < s.rank(); ++d) {
    const WindowDimension& w = wd[d];
    if (w.stride != 1 || w.window_dilation != 1 || w.base_dilation != 1 || w.window_reversal) return std::nullopt;
    if (w.size == 1 && w.padding_low == 0 && w.padding_high == 0) continue;
    const int64_t n = s.dimensions(d);
    if (dim >= 0 || w.size != n) return std::nullopt;
    if (w.padding_low == n - 1 && w.padding_high == 0) {
      reverse = false;
    } else if (w.padding_low == 0 && w.padding_high == n - 1) {
      reverse = true;
    } else {
      return std::nullopt;
    }
    dim = d;
  }
  if (dim < 0) return std::nullopt;
  // The reducer: a commutative op of its two parameters (applied through the elemental
  // emitter, so max/min keep XLA's NaN semantics).
  const HloComputation& reducer = *rw.to_apply();
  const HloInstruction* root = reducer.root_instruction();
  if (reducer.num_parameters() != 2 || root->operand_count() != 2 || !IsParam(root->operand(0)) ||
      !IsParam(root->operand(1)) || root->operand(0) == root->operand(1))
    return std::nullopt;
  const HloOpcode op = root->opcode();
  if (op != HloOpcode::kAdd && op != HloOpcode::kMultiply && op != HloOpcode::kMaximum && op != HloOpcode::kMinimum &&
      op != HloOpcode::kAnd && op != HloOpcode::kOr && op != HloOpcode::kXor)
    return std::nullopt;
  if (!InitIsNeutral(rw.operand(1), op)) return std::nullopt;
  return CumulativeForm{dim, reverse};
}

}  // namespace

bool CumulativeReduceWindowApplies(const HloInstruction& rw, const std::vector<Shape>& outputs) {
  return CumulativeFormOf(rw, outputs).has_value();
}

std::optional<runtime::LaunchDimensions> CumulativeReduceWindowLaunch(const HloInstruction& rw,
                                                                      const std::vector<Shape>& outputs,
                                                                      const GpuDeviceInfo& dev) {
  std::optional<CumulativeForm> form = CumulativeFormOf(rw, outputs);
  if (!form) return std::nullopt;
  return PlanCumulative(rw.shape().dimensions(), form->dim, dev);
}

absl::StatusOr<bool> TryEmitCumulativeReduceWindow(GpuKernel& k, const HloInstruction& rw,
                                                   const ElementGenerator& operand, const ElementGenerator& init) {
  llvm::IRBuilderBase& b = *k.b;
  if (!operand || !init) return false;
  std::vector<Shape> outputs;
  for (const IrArray& a : k.outputs) outputs.push_back(a.shape());
  std::optional<CumulativeForm> form = CumulativeFormOf(rw, outputs);
  if (!form) return false;
  const Shape& s = rw.shape();
  const PrimitiveType t = s.element_type();
  const HloComputation& reducer = *rw.to_apply();
  const int64_t dim = form->dim;
  const bool reverse = form->reverse;
  Cumulative c;
  c.dims = s.dimensions();
  c.dim = dim;
  c.reverse = reverse;
  c.type = PrimitiveTypeToIrType(t, b.getContext());
  ElementalIrEmitter* e = k.emitter;
  c.combine = [e, &reducer](llvm::Value* x, llvm::Value* y) -> absl::StatusOr<llvm::Value*> {
    absl::StatusOr<std::vector<llvm::Value*>> r = ApplyReducer(*e, reducer, {x}, {y});
    if (!r.ok()) return r.status();
    if (r->size() != 1) return absl::InternalError("reduce-window reducer with several results");
    return (*r)[0];
  };
  c.load = operand;
  c.initial = [init](const IrArray::Index&) { return init(IrArray::Index()); };
  IrArray out = k.outputs[0];
  c.store = [out, &b](const IrArray::Index& i, llvm::Value* v) { out.EmitWriteArrayElement(i, v, b); };
  return EmitCumulative(k, c);
}

}  // namespace hloc::codegen::gpu
