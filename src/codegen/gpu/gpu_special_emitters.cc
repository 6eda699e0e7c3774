// Kernels that are not one element per thread: scatter, in-place dynamic-update-slice, scan
// and select-and-scatter (XLA: scatter.cc, in_place_dynamic_update_slice.cc, ir_emitter_unnested
// for select-and-scatter).
//   scatter: a thread per update element combining into the output with atomics for one 32- or
//     64-bit array (add is the hardware's red.add; any other combiner a compare-and-swap loop
//     applying it, as XLA's scatter emitter does). In place (the output is the operand's buffer) the whole grid works;
//     otherwise one block copies the operand first, then scatters. Updates that cannot collide
//     (unique_indices, or a single scatter index) combine with a plain read-modify-write, any
//     combiner and type. Several operands and colliding narrow or complex types take the serial
//     path (one thread, updates in order: deterministic, XLA's semantics exactly), as do colliding
//     floating-point combiners under --deterministic-ops (XLA's xla_gpu_deterministic_ops).
//   dynamic-update-slice: in place, a thread per update element; otherwise every output element.
//   scan: associative one-carry scans in parallel (gpu_scan_emitter.cc); others a thread per
//     position of the scanned slice, running the recurrence along the dimension.
//   select-and-scatter: a thread per output element gathering the sources that select it
//     (EmitSelectAndScatterElement; no atomics, the sequential definition's order).
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/elemental/scatter_scan_emitters.h"
#include "codegen/gpu/gpu_emitter_conditions.h"
#include "codegen/gpu/gpu_emitters.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

void SerialLaunch(GpuKernel& k) {
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = 1;
  k.launch.grid_x = 1;
}

llvm::Value* ThreadIndex(GpuKernel& k) {
  return k.b->CreateAdd(k.b->CreateMul(k.BlockIdX(), k.b->getInt64(k.launch.block_x)), k.ThreadIdX(), "thread");
}

// The combiner as an atomic-friendly binary op, when it is one.
std::optional<HloOpcode> AtomicCombiner(const HloComputation& c) {
  const HloInstruction* root = c.root_instruction();
  if (c.num_parameters() != 2 || root->operand_count() != 2) return std::nullopt;
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter || b->opcode() != HloOpcode::kParameter || a == b) return std::nullopt;
  switch (root->opcode()) {
    case HloOpcode::kAdd: case HloOpcode::kMultiply: case HloOpcode::kMaximum: case HloOpcode::kMinimum:
    case HloOpcode::kAnd: case HloOpcode::kOr: case HloOpcode::kXor:
      return root->opcode();
    default:
      return std::nullopt;
  }
}

// *addr = combiner(*addr, value) atomically.
absl::Status EmitAtomicCombine(GpuKernel& k, const HloComputation& combiner, HloOpcode op, const IrArray& out,
                               const IrArray::Index& index, llvm::Value* value) {
  llvm::IRBuilderBase& b = *k.b;
  llvm::Value* addr = out.EmitArrayElementAddress(index, b);
  llvm::Type* t = value->getType();
  // f16 and bf16 too: sm_90 adds them in hardware (atom.add.noftz.{f16,bf16}); where a target
  // cannot, LLVM's atomic expansion makes it a compare-and-swap of the enclosing 32-bit word.
  if (op == HloOpcode::kAdd && (t->isFloatTy() || t->isDoubleTy() || t->isHalfTy() || t->isBFloatTy())) {
    b.CreateAtomicRMW(llvm::AtomicRMWInst::FAdd, addr, value, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
    return absl::OkStatus();
  }
  if (op == HloOpcode::kAdd && t->isIntegerTy()) {
    b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, addr, value, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic);
    return absl::OkStatus();
  }
  // Compare-and-swap loop applying the combiner (NaN-propagating max/min as XLA's).
  const unsigned bits = static_cast<unsigned>(t->getPrimitiveSizeInBits());
  llvm::Type* it = b.getIntNTy(bits);
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(b.getContext(), "cas", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(b.getContext(), "cas.done", f);
  llvm::Value* first = b.CreateLoad(it, addr);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* old = b.CreatePHI(it, 2);
  old->addIncoming(first, pre);
  llvm::Value* old_v = t->isIntegerTy() ? static_cast<llvm::Value*>(old) : b.CreateBitCast(old, t);
  absl::StatusOr<std::vector<llvm::Value*>> r = ApplyReducer(*k.emitter, combiner, {old_v}, {value});
  if (!r.ok()) return r.status();
  llvm::Value* nv = t->isIntegerTy() ? (*r)[0] : b.CreateBitCast((*r)[0], it);
  llvm::Value* pair = b.CreateAtomicCmpXchg(addr, old, nv, llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic,
                                            llvm::AtomicOrdering::Monotonic);
  llvm::Value* seen = b.CreateExtractValue(pair, {0});
  llvm::Value* ok = b.CreateExtractValue(pair, {1});
  old->addIncoming(seen, b.GetInsertBlock());
  b.CreateCondBr(ok, done, loop);
  b.SetInsertPoint(done);
  return absl::OkStatus();
}

}  // namespace

absl::Status EmitScatterKernel(GpuKernel& k, const HloInstruction& scatter,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<int64_t(int64_t)>& operand_leaf) {
  llvm::IRBuilderBase& b = *k.b;
  const int64_t n = (scatter.operand_count() - 1) / 2;
  if (n < 1 || scatter.operand_count() != 2 * n + 1 || static_cast<int64_t>(k.outputs.size()) != n)
    return absl::InvalidArgumentError("scatter: malformed operands");
  if (!scatter.attrs().scatter_dimension_numbers || scatter.to_apply() == nullptr)
    return absl::InvalidArgumentError("scatter without dimension numbers or combiner");
  const std::optional<HloOpcode> atomic = AtomicCombiner(*scatter.to_apply());
  const PrimitiveType t = k.outputs[0].shape().element_type();
  // How updates combine in parallel: with no two updates on one element (unique_indices, or one
  // scatter index) a plain read-modify-write, deterministic; otherwise atomics: add in hardware,
  // any other combiner of a 32- or 64-bit element in a compare-and-swap loop (XLA's scatter
  // emitter: the order of colliding updates is unspecified); f16/bf16 sums by atomic add.
  const Shape& upd_shape = scatter.operand(2)->shape();
  int64_t scatter_positions = 1;
  for (int64_t d = 0; d < upd_shape.rank(); ++d)
    if (std::find(scatter.attrs().scatter_dimension_numbers->update_window_dims.begin(),
                  scatter.attrs().scatter_dimension_numbers->update_window_dims.end(),
                  d) == scatter.attrs().scatter_dimension_numbers->update_window_dims.end())
      scatter_positions *= upd_shape.dimensions(d);
  const bool no_collisions = scatter.attrs().unique_indices || scatter_positions <= 1;
  const bool plain_ok = n == 1 && no_collisions;
  // A 16-bit float sum too (atomic add; a bf16 scatter-add of 12M colliding updates ran serially
  // for seconds: the gather_scatter sweep's add_rows_50000x768_ids16384_bf16).
  const bool half_add = atomic == HloOpcode::kAdd && (t == PrimitiveType::F16 || t == PrimitiveType::BF16);
  const bool atomic_ok = n == 1 && !IsComplex(t) && (BitWidth(t) == 32 || BitWidth(t) == 64 || half_add) &&
                         !(k.deterministic_ops && IsFloatingPoint(t));
  if (!plain_ok && !atomic_ok) {
    // Serial and deterministic: XLA's order of updates exactly.
    SerialLaunch(k);
    // Only an explicit request for determinism makes the order a requirement; other combiners
    // could run in parallel (XLA: a compare-and-swap loop), so the launch check reports them.
    if (k.deterministic_ops && atomic && n == 1)
      k.serial_reason = "--deterministic-ops: a floating-point scatter applies its updates in order";
    return EmitSerialScatter(*k.b, *k.emitter, scatter, k.outputs, operand_gen, [&](int64_t i) -> const IrArray* {
      const int64_t leaf = operand_leaf(i);
      return leaf < 0 ? nullptr : &k.operands[leaf];
    });
  }
  const ScatterDimensionNumbers& dn = *scatter.attrs().scatter_dimension_numbers;
  const IrArray& out = k.outputs[0];
  const int64_t leaf = operand_leaf(0);
  const bool in_place = leaf >= 0 && k.OutputAliasesOperand(0, static_cast<size_t>(leaf));
  const Shape& operand_shape = out.shape();
  const Shape& indices_shape = scatter.operand(1)->shape();
  const Shape& updates_shape = scatter.operand(2)->shape();
  ElementGenerator indices_gen = operand_gen(1), update_gen = operand_gen(2), init_gen = operand_gen(0);
  if (!indices_gen || !update_gen || !init_gen) return absl::InternalError("scatter operand without a generator");
  const int64_t updates = updates_shape.num_elements();
  if (in_place) {
    k.launch = GridStrideLaunch(std::max<int64_t>(1, updates), k.device->threads_per_block, *k.device);
  } else {
    k.launch = runtime::LaunchDimensions{};
    k.launch.block_x = 1024;
    k.launch.grid_x = 1;
  }
  llvm::Value* thread = ThreadIndex(k);
  llvm::Value* stride = b.getInt64(k.launch.block_x * k.launch.grid_x);
  if (!in_place) {
    // One block: the operand into the output, then (after the barrier) the updates.
    absl::Status s = EmitStridedLoop(b, thread, b.getInt64(operand_shape.num_elements()), stride, "init",
                                     [&](llvm::Value* i) -> absl::Status {
      IrArray::Index idx = IrArray::Delinearize(i, operand_shape, b);
      absl::StatusOr<llvm::Value*> v = init_gen(idx);
      if (!v.ok()) return v.status();
      out.EmitWriteArrayElement(idx, *v, b);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    k.Barrier();
  }
  absl::StatusOr<ScatterIndexing> indexing = ScatterIndexing::For(dn, operand_shape, indices_shape, updates_shape);
  if (!indexing.ok()) return indexing.status();
  // One update element: where it goes, whether its window fits, and its value.
  struct Prepared {
    llvm::Value *ok, *value;
    std::vector<llvm::Value*> at;
  };
  auto prepare = [&](llvm::Value* ui) -> absl::StatusOr<Prepared> {
    IrArray::Index u = DelinearizeRowMajor(ui, updates_shape.dimensions(), b);
    absl::StatusOr<ScatterIndexing::Place> place = indexing->PlaceOf(b, indices_gen, u);
    if (!place.ok()) return place.status();
    Prepared p;
    p.ok = place->ok;
    p.at = std::move(place->at);
    // The update's value does not depend on where it goes (its reads are in bounds either way).
    absl::StatusOr<llvm::Value*> v = update_gen(u);
    if (!v.ok()) return v.status();
    p.value = *v;
    return p;
  };
  auto apply = [&](const Prepared& p) -> absl::Status {
    return EmitIf(b, p.ok, "in_bounds", [&]() -> absl::Status {
      if (plain_ok) {
        // Each output element has at most one update: read, combine, write.
        llvm::Value* old = out.EmitReadArrayElement(IrArray::Index(p.at), b);
        absl::StatusOr<std::vector<llvm::Value*>> r = ApplyReducer(*k.emitter, *scatter.to_apply(), {old}, {p.value});
        if (!r.ok()) return r.status();
        out.EmitWriteArrayElement(IrArray::Index(p.at), (*r)[0], b);
        return absl::OkStatus();
      }
      return EmitAtomicCombine(k, *scatter.to_apply(), atomic.value_or(HloOpcode::kCall), out, IrArray::Index(p.at),
                               p.value);
    });
  };
  // kUnroll updates a step, all prepared before any is applied: their index and update reads are
  // in flight together (one at a time, each thread waited on a gather before every atomic:
  // embedding_bag_grad's 16M-update scatter-add ran at a third of its memory rate).
  constexpr int64_t kUnroll = 4;
  return EmitStridedLoop(b, thread, b.getInt64(updates), b.CreateMul(stride, b.getInt64(kUnroll)), "update",
                         [&](llvm::Value* ui) -> absl::Status {
    std::vector<Prepared> group;
    std::vector<llvm::Value*> valid;
    for (int64_t j = 0; j < kUnroll; ++j) {
      llvm::Value* i = b.CreateAdd(ui, b.CreateMul(stride, b.getInt64(j)));
      valid.push_back(b.CreateICmpSLT(i, b.getInt64(updates)));
      // Past the end: prepared at the last update (in bounds), never applied.
      absl::StatusOr<Prepared> p = prepare(b.CreateSelect(valid.back(), i, b.getInt64(updates - 1)));
      if (!p.ok()) return p.status();
      p->ok = b.CreateAnd(p->ok, valid.back());
      group.push_back(std::move(*p));
    }
    for (const Prepared& p : group)
      if (absl::Status s = apply(p); !s.ok()) return s;
    return absl::OkStatus();
  });
}

namespace {

// The start indices of an in-place dynamic-update-slice, clamped so the update fits (XLA's
// semantics), in either of HLO's index forms (a scalar per dimension, or the old single vector).
absl::StatusOr<std::vector<llvm::Value*>> DusStarts(GpuKernel& k, const HloInstruction& dus, const Shape& out,
                                                    const std::function<ElementGenerator(int64_t)>& operand_gen) {
  const Shape& update_shape = dus.operand(1)->shape();
  std::vector<llvm::Value*> starts;
  for (int64_t d = 0; d < out.rank(); ++d) {
    const int64_t hi = out.dimensions(d) - update_shape.dimensions(d);
    absl::StatusOr<llvm::Value*> s = EmitClampedStartIndex(*k.b, dus, 2, d, hi, operand_gen);
    if (!s.ok()) return s.status();
    starts.push_back(*s);
  }
  return starts;
}

}  // namespace

std::optional<runtime::LaunchDimensions> MultiDynamicUpdateSliceLaunch(const std::vector<const HloInstruction*>& dus,
                                                                       const std::vector<Shape>& outputs,
                                                                       const GpuDeviceInfo& dev) {
  if (dus.empty() || outputs.size() != dus.size()) return std::nullopt;
  for (const HloInstruction* d : dus)
    if (d->opcode() != HloOpcode::kDynamicUpdateSlice ||
        d->operand(1)->shape().dimensions() != dus[0]->operand(1)->shape().dimensions())
      return std::nullopt;
  const int64_t n = dus[0]->operand(1)->shape().num_elements();
  return GridStrideLaunch(std::max<int64_t>(1, n), dev.threads_per_block, dev);
}

absl::Status EmitMultiDynamicUpdateSliceKernel(GpuKernel& k, const std::vector<const HloInstruction*>& dus,
                                               const std::function<ElementGenerator(const HloInstruction*)>& gen_of,
                                               const std::function<int64_t(const HloInstruction*)>& leaf_of) {
  llvm::IRBuilderBase& b = *k.b;
  if (dus.empty() || k.outputs.size() != dus.size())
    return absl::InvalidArgumentError("dynamic-update-slices: expected one output per update");
  const Shape& update_shape = dus[0]->operand(1)->shape();
  for (const HloInstruction* d : dus)
    if (d->opcode() != HloOpcode::kDynamicUpdateSlice || d->operand(1)->shape().dimensions() != update_shape.dimensions())
      return absl::InvalidArgumentError("dynamic-update-slices: the updates differ in shape");
  const int64_t n = update_shape.num_elements();
  std::vector<Shape> output_shapes;
  for (const IrArray& a : k.outputs) output_shapes.push_back(a.shape());
  std::optional<runtime::LaunchDimensions> launch = MultiDynamicUpdateSliceLaunch(dus, output_shapes, *k.device);
  if (!launch) return absl::InternalError("dynamic-update-slices: no launch plan");
  k.launch = *launch;
  llvm::Value* thread = ThreadIndex(k);
  llvm::Value* stride = b.getInt64(k.launch.block_x * k.launch.grid_x);
  // In place (the output is the updated operand's buffer): one loop over the update writes them
  // all. Otherwise (buffer assignment gave the output its own buffer) every element of that
  // output is written, from the elemental form, in a loop of its own.
  std::vector<size_t> in_place, copied;
  std::vector<std::vector<llvm::Value*>> starts(dus.size());
  std::vector<ElementGenerator> updates(dus.size());
  for (size_t o = 0; o < dus.size(); ++o) {
    const int64_t leaf = leaf_of(dus[o]->operand(0));
    auto operand_gen = [&](int64_t i) { return gen_of(dus[o]->operand(i)); };
    if (leaf < 0 || !k.OutputAliasesOperand(o, static_cast<size_t>(leaf))) {
      copied.push_back(o);
      continue;
    }
    in_place.push_back(o);
    updates[o] = operand_gen(1);
    if (!updates[o]) return absl::InternalError("dynamic-update-slice update without a generator");
    absl::StatusOr<std::vector<llvm::Value*>> s = DusStarts(k, *dus[o], k.outputs[o].shape(), operand_gen);
    if (!s.ok()) return s.status();
    starts[o] = std::move(*s);
  }
  if (!in_place.empty()) {
    absl::Status s = EmitStridedLoop(b, thread, b.getInt64(n), stride, "dus", [&](llvm::Value* i) -> absl::Status {
      IrArray::Index index = DelinearizeRowMajor(i, update_shape.dimensions(), b);
      for (size_t o : in_place) {
        absl::StatusOr<llvm::Value*> v = updates[o](index);
        if (!v.ok()) return v.status();
        std::vector<llvm::Value*> at;
        for (size_t d = 0; d < starts[o].size(); ++d) at.push_back(b.CreateAdd(starts[o][d], index[d]));
        k.outputs[o].EmitWriteArrayElement(IrArray::Index(at), *v, b);
      }
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  for (size_t o : copied) {
    GeneratorMap operands;
    for (int64_t i = 0; i < dus[o]->operand_count(); ++i) {
      ElementGenerator g = gen_of(dus[o]->operand(i));
      if (!g) return absl::InternalError("dynamic-update-slice operand without a generator");
      operands[dus[o]->operand(i)] = g;
    }
    absl::StatusOr<ElementGenerator> g = k.emitter->MakeElementGenerator(dus[o], operands);
    if (!g.ok()) return g.status();
    const std::vector<int64_t>& dims = k.outputs[o].shape().dimensions();
    const int64_t total = k.outputs[o].shape().num_elements();
    absl::Status s = EmitStridedLoop(b, thread, b.getInt64(total), stride, "dus_copy", [&](llvm::Value* i) -> absl::Status {
      IrArray::Index index = DelinearizeRowMajor(i, dims, b);
      absl::StatusOr<llvm::Value*> v = (*g)(index);
      if (!v.ok()) return v.status();
      k.outputs[o].EmitWriteArrayElement(index, *v, b);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status EmitDynamicUpdateSliceKernel(GpuKernel& k, const HloInstruction& dus,
                                          const std::function<ElementGenerator(int64_t)>& operand_gen,
                                          const std::function<int64_t(int64_t)>& operand_leaf) {
  llvm::IRBuilderBase& b = *k.b;
  if (k.outputs.size() != 1) return absl::InvalidArgumentError("dynamic-update-slice: expected one output");
  const IrArray& out = k.outputs[0];
  const Shape& update_shape = dus.operand(1)->shape();
  const int64_t leaf = operand_leaf(0);
  const bool in_place = leaf >= 0 && k.OutputAliasesOperand(0, static_cast<size_t>(leaf));
  ElementGenerator update = operand_gen(1);
  if (!update) return absl::InternalError("dynamic-update-slice update without a generator");
  if (in_place) {
    const int64_t n = update_shape.num_elements();
    k.launch = GridStrideLaunch(std::max<int64_t>(1, n), k.device->threads_per_block, *k.device);
    absl::StatusOr<std::vector<llvm::Value*>> clamped = DusStarts(k, dus, out.shape(), operand_gen);
    if (!clamped.ok()) return clamped.status();
    const std::vector<llvm::Value*>& starts = *clamped;
    llvm::Value* thread = ThreadIndex(k);
    return EmitStridedLoop(b, thread, b.getInt64(n), b.getInt64(k.launch.block_x * k.launch.grid_x), "dus",
                           [&](llvm::Value* i) -> absl::Status {
      IrArray::Index index = DelinearizeRowMajor(i, update_shape.dimensions(), b);
      absl::StatusOr<llvm::Value*> v = update(index);
      if (!v.ok()) return v.status();
      std::vector<llvm::Value*> at;
      for (size_t d = 0; d < starts.size(); ++d) at.push_back(b.CreateAdd(starts[d], index[d]));
      out.EmitWriteArrayElement(IrArray::Index(at), *v, b);
      return absl::OkStatus();
    });
  }
  GeneratorMap operands;
  for (int64_t i = 0; i < dus.operand_count(); ++i) {
    ElementGenerator g = operand_gen(i);
    if (!g) return absl::InternalError("dynamic-update-slice operand without a generator");
    operands[dus.operand(i)] = g;
  }
  absl::StatusOr<ElementGenerator> g = k.emitter->MakeElementGenerator(&dus, operands);
  if (!g.ok()) return g.status();
  return EmitLoopKernel(k, {LoopOutput{0, *g, -1}});
}

absl::Status EmitScanKernel(GpuKernel& k, const HloInstruction& scan) {
  // Associative one-carry scans (cumsum, cumprod) run as parallel block scans.
  absl::StatusOr<bool> parallel = TryEmitParallelScan(k, scan);
  if (!parallel.ok()) return parallel.status();
  if (*parallel) return absl::OkStatus();
  // Others: a thread per slice position, running its recurrence (the CPU's scan step).
  absl::StatusOr<ScanSlices> p = AnalyzeScan(scan, k.operands, k.outputs);
  if (!p.ok()) return p.status();
  llvm::IRBuilderBase& b = *k.b;
  int64_t slices = 1;
  for (int64_t d : p->slice_dims) slices *= d;
  k.launch = GridStrideLaunch(std::max<int64_t>(1, slices), k.device->threads_per_block, *k.device);
  k.serial_reason = "a scan that is not one associative carry is a recurrence along its dimension: a thread per slice";
  llvm::Value* thread = ThreadIndex(k);
  const HloComputation* body = scan.to_apply();
  return EmitStridedLoop(b, thread, b.getInt64(slices), b.getInt64(k.launch.block_x * k.launch.grid_x), "slice",
                         [&](llvm::Value* si) -> absl::Status {
    IrArray::Index s = DelinearizeRowMajor(si, p->slice_dims, b);
    return EmitScanSlice(b, scan, *p, k.operands, k.outputs, s, [&](const auto& param) {
      return MakeFusionGenerators(*k.emitter, *body, param, nullptr);
    });
  });
}

absl::Status EmitSelectAndScatterKernel(GpuKernel& k, const HloInstruction& sas) {
  if (absl::Status s = CheckSelectAndScatter(k.operands, k.outputs, sas); !s.ok()) return s;
  llvm::IRBuilderBase& b = *k.b;
  const std::vector<int64_t>& dims = k.outputs[0].shape().dimensions();
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  k.launch = GridStrideLaunch(std::max<int64_t>(1, n), k.device->threads_per_block, *k.device);
  llvm::Value* init_value = k.operands[2].EmitReadArrayElement(IrArray::Index(), b);
  return EmitStridedLoop(b, ThreadIndex(k), b.getInt64(n), b.getInt64(k.launch.block_x * k.launch.grid_x), "sas",
                         [&](llvm::Value* linear) -> absl::Status {
    return EmitSelectAndScatterElement(b, *k.emitter, sas, k.operands[0], k.operands[1], init_value,
                                            k.outputs[0], DelinearizeRowMajor(linear, dims, b));
  });
}

}  // namespace hloc::codegen::gpu
