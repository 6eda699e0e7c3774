// Column reductions and full reductions (XLA's column ReductionFusion and its two-pass full
// reductions, xla/backends/gpu/codegen/emitters/reduction.cc, xla/service/gpu/reduction_utils.cc).
// The reduce input is viewed as [B, R, C]: C the product of the trailing kept dimensions (1 when
// the minor dimension is reduced), R the reduced dimensions (in order, not necessarily
// contiguous), B the other kept dimensions. Work is cut into units (b, column tile, R split):
//   - C > 1: a block of 32x32 threads reduces 32 columns; thread (ty, tx) folds rows ty, ty+32,
//     ... of column tx (coalesced reads of 32 consecutive columns), the 32x32 partials are
//     transposed through shared memory and each warp folds one column with shuffles;
//   - C == 1: a block folds a strided slice of one row, combined by shuffles and shared memory.
// Few outputs with long R (full reductions, bias gradients) split R across S units so the grid
// fills the GPU. The split partials go to a scratch array in global memory (a module global);
// the last block to finish (an atomic counter, reset by that block for the next launch) folds
// them in a fixed order, so the result does not depend on block timing (deterministic, one
// kernel, no second launch). Loads are unrolled 4x so each thread keeps several in flight.
// Elementwise epilogues on the reduced values and outputs of the input's shape that do not
// depend on a reduce (multi-output fusions) are written in the same kernel.
#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"

namespace hloc::codegen::gpu {
namespace {

struct SplitPlan {
  std::vector<int64_t> in_dims;
  std::vector<int64_t> b_dims, r_dims, c_dims;  // positions in in_dims
  std::vector<int64_t> kept_dims;               // the reduced shape's dimensions
  int64_t B = 1, R = 1, C = 1;
  std::vector<const HloInstruction*> reduces;
  struct Output {
    const HloInstruction* inst;
    int member;    // >= 0: a member of a variadic reduce root
    bool is_input;  // of the input's shape, written while folding
  };
  std::vector<Output> outputs;
};

bool Dims(const Shape& s, const std::vector<int64_t>& d) { return s.IsArray() && s.dimensions() == d; }

std::optional<SplitPlan> AnalyzeSplit(const HloComputation& fused) {
  SplitPlan p;
  const auto order = fused.MakeInstructionPostOrder();
  for (const HloInstruction* inst : order)
    if (inst->opcode() == HloOpcode::kReduce) p.reduces.push_back(inst);
  if (p.reduces.empty()) return std::nullopt;
  const HloInstruction* r0 = p.reduces[0];
  p.in_dims = r0->operand(0)->shape().dimensions();
  const int64_t rank = static_cast<int64_t>(p.in_dims.size());
  std::vector<int64_t> red = r0->attrs().dimensions;
  std::sort(red.begin(), red.end());
  if (red.empty()) return std::nullopt;
  std::vector<bool> reduced(rank, false);
  for (int64_t d : red) {
    if (d < 0 || d >= rank) return std::nullopt;
    reduced[d] = true;
  }
  // C: the trailing run of kept dimensions.
  int64_t c_start = rank;
  while (c_start > 0 && !reduced[c_start - 1]) --c_start;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      p.r_dims.push_back(d);
      p.R *= p.in_dims[d];
    } else {
      p.kept_dims.push_back(p.in_dims[d]);
      if (d >= c_start) {
        p.c_dims.push_back(d);
        p.C *= p.in_dims[d];
      } else {
        p.b_dims.push_back(d);
        p.B *= p.in_dims[d];
      }
    }
  }
  // Every reduce reduces the same dimensions of operands of one shape, and reads no reduce.
  std::set<const HloInstruction*> dep;
  for (const HloInstruction* r : p.reduces) {
    std::vector<int64_t> d = r->attrs().dimensions;
    std::sort(d.begin(), d.end());
    if (d != red || r->to_apply() == nullptr) return std::nullopt;
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i)
      if (!Dims(r->operand(i)->shape(), p.in_dims)) return std::nullopt;
  }
  for (const HloInstruction* inst : order) {
    bool d = false;
    for (const HloInstruction* op : inst->operands()) d = d || dep.count(op) > 0;
    if (inst->opcode() == HloOpcode::kReduce) {
      if (d) return std::nullopt;  // chains are the row emitter's
      dep.insert(inst);
      continue;
    }
    if (!d) continue;
    dep.insert(inst);
    switch (inst->opcode()) {
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape:
      case HloOpcode::kCopy:
        if (!Dims(inst->shape(), p.kept_dims) || !Dims(inst->operand(0)->shape(), p.kept_dims)) return std::nullopt;
        continue;
      default:
        if (!inst->IsElementwise() || !Dims(inst->shape(), p.kept_dims)) return std::nullopt;
        for (const HloInstruction* op : inst->operands())
          if (!Dims(op->shape(), p.kept_dims) && op->shape().rank() != 0) return std::nullopt;
        continue;
    }
  }
  const HloInstruction* root = fused.root_instruction();
  auto add_output = [&](const HloInstruction* o) -> bool {
    if (!o->shape().IsArray()) return false;
    if (dep.count(o)) {
      if (!Dims(o->shape(), p.kept_dims)) return false;
      p.outputs.push_back({o, -1, false});
    } else if (Dims(o->shape(), p.in_dims)) {
      p.outputs.push_back({o, -1, true});
    } else {
      return false;
    }
    return true;
  };
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands())
      if (!add_output(op)) return std::nullopt;
  } else if (root->opcode() == HloOpcode::kReduce && root->shape().IsTuple()) {
    for (int64_t i = 0; i < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++i) p.outputs.push_back({root, static_cast<int>(i), false});
  } else if (!add_output(root)) {
    return std::nullopt;
  }
  return p;
}

}  // namespace

// Whether the split emitter would take this fusion (the row emitter defers to it for a few long
// rows without chains).
bool SplitReductionApplies(const HloComputation& fused) { return AnalyzeSplit(fused).has_value(); }

absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter) {
  std::optional<SplitPlan> plan = AnalyzeSplit(fused);
  if (!plan || plan->outputs.size() != k.outputs.size()) return false;
  const SplitPlan& p = *plan;
  if (p.B * p.C == 0 || p.R == 0) return false;  // the loop kernel writes the inits
  llvm::IRBuilderBase& b = *k.b;
  llvm::LLVMContext& ctx = b.getContext();
  const bool column = p.C > 1;
  const int64_t block = column ? 1024 : 256;
  const int64_t tiles = column ? (p.C + 31) / 32 : 1;
  const int64_t resident = std::max<int64_t>(1, k.device->max_threads_per_sm / block) * k.device->sm_count;
  const int64_t base_units = p.B * tiles;
  // Split R until about one wave of resident blocks is busy; each split keeps enough rows
  // (columns: 64 rows, rows: 8 elements a thread) to amortize its partial.
  int64_t S = 1;
  if (base_units < resident) {
    const int64_t min_chunk = column ? 64 : block * 8;
    S = std::max<int64_t>(1, std::min((resident + base_units - 1) / base_units, p.R / min_chunk));
    // Keep the scratch small.
    while (S > 1 && S * p.B * p.C > (int64_t{1} << 22)) S /= 2;
  }
  const int64_t chunk = (p.R + S - 1) / S;
  const int64_t units = base_units * S;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = block;
  k.launch.grid_x = std::max<int64_t>(1, std::min(units, resident * k.device->waves));

  // Accumulators (one alloca per reduce result) that the reduce generators read.
  std::map<const HloInstruction*, std::vector<llvm::AllocaInst*>> slots;
  std::map<const HloInstruction*, llvm::Type*> value_types;
  std::vector<std::pair<const HloInstruction*, int64_t>> accs;  // all accumulators, in order
  for (const HloInstruction* r : p.reduces) {
    const int64_t n = r->operand_count() / 2;
    std::vector<llvm::Type*> types;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = r->shape().IsTuple() ? r->shape().tuple_shapes(i) : r->shape();
      llvm::Type* t = PrimitiveTypeToIrType(s.element_type(), ctx);
      types.push_back(t);
      slots[r].push_back(cpu::EntryAlloca(b, t, absl::StrCat(r->name(), ".acc", i)));
      accs.push_back({r, i});
    }
    value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
  llvm::IRBuilderBase* bp = &b;
  absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = MakeFusionGenerators(
      *k.emitter, fused, parameter, [&](const HloInstruction* inst) -> ElementGenerator {
        if (inst->opcode() != HloOpcode::kReduce) return ElementGenerator();
        std::vector<llvm::AllocaInst*> s = slots[inst];
        llvm::Type* vt = value_types[inst];
        return [s, vt, bp](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
          if (!vt->isStructTy()) return bp->CreateLoad(s[0]->getAllocatedType(), s[0]);
          llvm::Value* v = llvm::UndefValue::get(vt);
          for (size_t i = 0; i < s.size(); ++i)
            v = bp->CreateInsertValue(v, bp->CreateLoad(s[i]->getAllocatedType(), s[i]), {static_cast<unsigned>(i)});
          return v;
        };
      });
  if (!gens.ok()) return gens.status();
  auto gen_of = [&](const HloInstruction* inst) -> absl::StatusOr<ElementGenerator> {
    auto it = (*gens)->find(inst);
    if (it == (*gens)->end()) return absl::InternalError(absl::StrCat("no generator for %", inst->name()));
    return it->second;
  };
  auto acc_type = [&](size_t a) { return slots[accs[a].first][accs[a].second]->getAllocatedType(); };
  auto acc_slot = [&](size_t a) { return slots[accs[a].first][accs[a].second]; };
  auto load_accs = [&]() {
    std::vector<llvm::Value*> v;
    for (size_t a = 0; a < accs.size(); ++a) v.push_back(b.CreateLoad(acc_type(a), acc_slot(a)));
    return v;
  };
  auto store_accs = [&](const std::vector<llvm::Value*>& v) {
    for (size_t a = 0; a < accs.size(); ++a) b.CreateStore(v[a], acc_slot(a));
  };
  // Combines two full accumulator vectors reduce by reduce.
  auto combine = [&](const std::vector<llvm::Value*>& x,
                     const std::vector<llvm::Value*>& y) -> absl::StatusOr<std::vector<llvm::Value*>> {
    std::vector<llvm::Value*> out;
    size_t a = 0;
    for (const HloInstruction* r : p.reduces) {
      const size_t n = slots[r].size();
      std::vector<llvm::Value*> xs(x.begin() + a, x.begin() + a + n), ys(y.begin() + a, y.begin() + a + n);
      absl::StatusOr<std::vector<llvm::Value*>> z = ApplyReducer(*k.emitter, *r->to_apply(), xs, ys);
      if (!z.ok()) return z.status();
      out.insert(out.end(), z->begin(), z->end());
      a += n;
    }
    return out;
  };
  auto init_accs = [&]() -> absl::Status {
    for (const HloInstruction* r : p.reduces) {
      const int64_t n = r->operand_count() / 2;
      for (int64_t i = 0; i < n; ++i) {
        absl::StatusOr<ElementGenerator> g = gen_of(r->operand(n + i));
        if (!g.ok()) return g.status();
        absl::StatusOr<llvm::Value*> v = (*g)(IrArray::Index());
        if (!v.ok()) return v.status();
        b.CreateStore(*v, slots[r][i]);
      }
    }
    return absl::OkStatus();
  };
  auto warp_reduce = [&](std::vector<llvm::Value*> cur) -> absl::StatusOr<std::vector<llvm::Value*>> {
    for (int off = 16; off >= 1; off /= 2) {
      std::vector<llvm::Value*> other;
      for (llvm::Value* v : cur) other.push_back(k.ShuffleXor(v, off));
      absl::StatusOr<std::vector<llvm::Value*>> next = combine(cur, other);
      if (!next.ok()) return next.status();
      cur = *next;
    }
    return cur;
  };
  // The input index of (b, r, c).
  auto full_index = [&](llvm::Value* bb, llvm::Value* r, llvm::Value* c) {
    std::vector<llvm::Value*> v(p.in_dims.size(), nullptr);
    auto place = [&](llvm::Value* lin, const std::vector<int64_t>& pos) {
      std::vector<int64_t> dims;
      for (int64_t d : pos) dims.push_back(p.in_dims[d]);
      IrArray::Index i = DelinearizeRowMajor(lin, dims, b);
      for (size_t j = 0; j < pos.size(); ++j) v[pos[j]] = i.multidim[j];
    };
    place(bb, p.b_dims);
    place(r, p.r_dims);
    place(c, p.c_dims);
    return IrArray::Index(v);
  };
  // Fold the elements at `indices` into the accumulators (loads first, then the folds in order)
  // and write the input-shaped outputs there.
  auto fold = [&](const std::vector<IrArray::Index>& indices) -> absl::Status {
    std::vector<std::vector<llvm::Value*>> vals(indices.size());
    for (size_t e = 0; e < indices.size(); ++e) {
      for (const HloInstruction* r : p.reduces) {
        const int64_t n = r->operand_count() / 2;
        for (int64_t i = 0; i < n; ++i) {
          absl::StatusOr<ElementGenerator> g = gen_of(r->operand(i));
          if (!g.ok()) return g.status();
          absl::StatusOr<llvm::Value*> v = (*g)(indices[e]);
          if (!v.ok()) return v.status();
          vals[e].push_back(*v);
        }
      }
    }
    for (size_t e = 0; e < indices.size(); ++e) {
      absl::StatusOr<std::vector<llvm::Value*>> next = combine(load_accs(), vals[e]);
      if (!next.ok()) return next.status();
      store_accs(*next);
      for (size_t o = 0; o < p.outputs.size(); ++o) {
        if (!p.outputs[o].is_input) continue;
        absl::StatusOr<ElementGenerator> g = gen_of(p.outputs[o].inst);
        if (!g.ok()) return g.status();
        absl::StatusOr<llvm::Value*> v = (*g)(indices[e]);
        if (!v.ok()) return v.status();
        k.outputs[o].EmitWriteArrayElement(indices[e], *v, b);
      }
    }
    return absl::OkStatus();
  };
  // for (i = start; i < end; i += step), 4 at a time while 4 fit.
  auto fold_range = [&](llvm::Value* start, llvm::Value* end, int64_t step,
                        const std::function<IrArray::Index(llvm::Value*)>& at) -> absl::Status {
    llvm::Value* has = b.CreateICmpSLT(start, end);
    llvm::Value* span = b.CreateSelect(has, b.CreateSub(end, start), b.getInt64(0));
    llvm::Value* count = b.CreateUDiv(b.CreateAdd(span, b.getInt64(step - 1)), b.getInt64(step));
    llvm::Value* groups = b.CreateUDiv(count, b.getInt64(4));
    absl::Status s = EmitStridedLoop(b, b.getInt64(0), groups, b.getInt64(1), "fold4", [&](llvm::Value* g) {
      llvm::Value* first = b.CreateAdd(start, b.CreateMul(g, b.getInt64(4 * step)));
      std::vector<IrArray::Index> idx;
      for (int64_t j = 0; j < 4; ++j) idx.push_back(at(b.CreateAdd(first, b.getInt64(j * step))));
      return fold(idx);
    });
    if (!s.ok()) return s;
    return EmitStridedLoop(b, b.CreateMul(groups, b.getInt64(4)), count, b.getInt64(1), "fold1",
                           [&](llvm::Value* i) { return fold({at(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step))))}); });
  };
  // Writes the reduced outputs at kept index (bb, c) from the accumulators.
  auto write_outputs = [&](llvm::Value* bb, llvm::Value* c) -> absl::Status {
    std::vector<llvm::Value*> v;
    auto place = [&](llvm::Value* lin, const std::vector<int64_t>& pos) {
      std::vector<int64_t> dims;
      for (int64_t d : pos) dims.push_back(p.in_dims[d]);
      IrArray::Index i = DelinearizeRowMajor(lin, dims, b);
      v.insert(v.end(), i.multidim.begin(), i.multidim.end());
    };
    place(bb, p.b_dims);  // b dims precede the trailing c dims among the kept dims
    place(c, p.c_dims);
    IrArray::Index kept(v);
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      if (p.outputs[o].is_input) continue;
      absl::StatusOr<ElementGenerator> g = gen_of(p.outputs[o].inst);
      if (!g.ok()) return g.status();
      absl::StatusOr<llvm::Value*> x = (*g)(kept);
      if (!x.ok()) return x.status();
      llvm::Value* val = *x;
      if (p.outputs[o].member >= 0) val = b.CreateExtractValue(val, {static_cast<unsigned>(p.outputs[o].member)});
      k.outputs[o].EmitWriteArrayElement(kept, val, b);
    }
    return absl::OkStatus();
  };

  // Scratch for split partials: [S][B*C] per accumulator, and the arrival counter.
  std::vector<llvm::GlobalVariable*> scratch;
  llvm::GlobalVariable* counter = nullptr;
  if (S > 1) {
    for (size_t a = 0; a < accs.size(); ++a) {
      auto* ty = llvm::ArrayType::get(acc_type(a), static_cast<uint64_t>(S * p.B * p.C));
      auto* gv = new llvm::GlobalVariable(*k.module, ty, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::ConstantAggregateZero::get(ty), absl::StrCat(k.name, ".partials", a),
                                          nullptr, llvm::GlobalValue::NotThreadLocal, 1);
      gv->setAlignment(llvm::Align(16));
      scratch.push_back(gv);
    }
    counter = new llvm::GlobalVariable(*k.module, b.getInt32Ty(), false, llvm::GlobalValue::InternalLinkage,
                                       b.getInt32(0), absl::StrCat(k.name, ".arrived"), nullptr,
                                       llvm::GlobalValue::NotThreadLocal, 1);
    counter->setAlignment(llvm::Align(4));
  }
  auto partial_ptr = [&](size_t a, llvm::Value* slot) {
    return b.CreateInBoundsGEP(scratch[a]->getValueType(), scratch[a], {b.getInt64(0), slot});
  };
  // The unit's final values (in the accumulators) -> outputs or scratch.
  auto finish = [&](llvm::Value* s, llvm::Value* bb, llvm::Value* c) -> absl::Status {
    if (S == 1) return write_outputs(bb, c);
    llvm::Value* slot = b.CreateAdd(b.CreateMul(s, b.getInt64(p.B * p.C)), b.CreateAdd(b.CreateMul(bb, b.getInt64(p.C)), c));
    std::vector<llvm::Value*> v = load_accs();
    for (size_t a = 0; a < accs.size(); ++a) b.CreateStore(v[a], partial_ptr(a, slot));
    return absl::OkStatus();
  };

  llvm::Value* tid = k.ThreadIdX();
  llvm::Value* lane = b.CreateURem(tid, b.getInt64(32), "lane");
  llvm::Value* warp = b.CreateUDiv(tid, b.getInt64(32), "warp");
  const int64_t warps = block / 32;
  std::vector<llvm::Value*> tile;  // column: 32x33 per accumulator; row: one slot per warp
  for (size_t a = 0; a < accs.size(); ++a)
    tile.push_back(k.SharedArray(acc_type(a), column ? 32 * 33 : warps, absl::StrCat("split.", a)));
  auto tile_ptr = [&](size_t a, llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(acc_type(a), column ? 32 * 33 : warps), tile[a], {b.getInt64(0), i});
  };

  absl::Status st = EmitStridedLoop(
      b, k.BlockIdX(), b.getInt64(units), b.getInt64(k.launch.grid_x), "units", [&](llvm::Value* u) -> absl::Status {
        llvm::Value* s = b.CreateURem(u, b.getInt64(S), "split");
        llvm::Value* rest = b.CreateUDiv(u, b.getInt64(S));
        llvm::Value* r_begin = b.CreateMul(s, b.getInt64(chunk));
        llvm::Value* r_end = b.CreateAdd(r_begin, b.getInt64(chunk));
        r_end = b.CreateSelect(b.CreateICmpSLT(r_end, b.getInt64(p.R)), r_end, b.getInt64(p.R));
        if (absl::Status is = init_accs(); !is.ok()) return is;
        if (column) {
          llvm::Value* ct = b.CreateURem(rest, b.getInt64(tiles));
          llvm::Value* bb = b.CreateUDiv(rest, b.getInt64(tiles));
          llvm::Value* c = b.CreateAdd(b.CreateMul(ct, b.getInt64(32)), lane);
          absl::Status fs = cpu::EmitIf(b, b.CreateICmpULT(c, b.getInt64(p.C)), "col.valid", [&]() {
            return fold_range(b.CreateAdd(r_begin, warp), r_end, 32,
                              [&](llvm::Value* r) { return full_index(bb, r, c); });
          });
          if (!fs.ok()) return fs;
          // Transpose the 32x32 partials: warp w then folds column ct*32 + w over its lanes.
          std::vector<llvm::Value*> v = load_accs();
          for (size_t a = 0; a < accs.size(); ++a)
            b.CreateStore(v[a], tile_ptr(a, b.CreateAdd(b.CreateMul(warp, b.getInt64(33)), lane)));
          k.Barrier();
          std::vector<llvm::Value*> t;
          for (size_t a = 0; a < accs.size(); ++a)
            t.push_back(b.CreateLoad(acc_type(a), tile_ptr(a, b.CreateAdd(b.CreateMul(lane, b.getInt64(33)), warp))));
          absl::StatusOr<std::vector<llvm::Value*>> w = warp_reduce(t);
          if (!w.ok()) return w.status();
          store_accs(*w);
          llvm::Value* col = b.CreateAdd(b.CreateMul(ct, b.getInt64(32)), warp);
          absl::Status ws = cpu::EmitIf(
              b, b.CreateAnd(b.CreateICmpEQ(lane, b.getInt64(0)), b.CreateICmpULT(col, b.getInt64(p.C))), "col.write",
              [&]() { return finish(s, bb, col); });
          if (!ws.ok()) return ws;
          k.Barrier();  // the tile is reused by the next unit
          return absl::OkStatus();
        }
        absl::Status fs = fold_range(b.CreateAdd(r_begin, tid), r_end, block,
                                     [&](llvm::Value* r) { return full_index(rest, r, b.getInt64(0)); });
        if (!fs.ok()) return fs;
        absl::StatusOr<std::vector<llvm::Value*>> w = warp_reduce(load_accs());
        if (!w.ok()) return w.status();
        absl::Status ps = cpu::EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(0)), "publish", [&]() {
          for (size_t a = 0; a < accs.size(); ++a) b.CreateStore((*w)[a], tile_ptr(a, warp));
          return absl::OkStatus();
        });
        if (!ps.ok()) return ps;
        k.Barrier();
        absl::Status ws = cpu::EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "row.write", [&]() -> absl::Status {
          std::vector<llvm::Value*> total;
          for (int64_t i = 0; i < warps; ++i) {
            std::vector<llvm::Value*> part;
            for (size_t a = 0; a < accs.size(); ++a) part.push_back(b.CreateLoad(acc_type(a), tile_ptr(a, b.getInt64(i))));
            if (i == 0) {
              total = part;
              continue;
            }
            absl::StatusOr<std::vector<llvm::Value*>> n = combine(total, part);
            if (!n.ok()) return n.status();
            total = *n;
          }
          store_accs(total);
          return finish(s, rest, b.getInt64(0));
        });
        if (!ws.ok()) return ws;
        k.Barrier();
        return absl::OkStatus();
      });
  if (!st.ok()) return st;
  if (S == 1) return true;

  // Second stage: the last block to arrive folds the partials of every output in split order.
  llvm::Value* flag = k.SharedArray(b.getInt32Ty(), 1, "split.last");
  auto flag_ptr = b.CreateInBoundsGEP(llvm::ArrayType::get(b.getInt32Ty(), 1), flag, {b.getInt64(0), b.getInt64(0)});
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
  k.Barrier();
  absl::Status as = cpu::EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "arrive", [&]() {
    llvm::Value* old = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b.getInt32(1), llvm::Align(4),
                                         llvm::AtomicOrdering::Monotonic);
    llvm::Value* last = b.CreateICmpEQ(old, b.getInt32(static_cast<uint32_t>(k.launch.grid_x - 1)));
    b.CreateStore(b.CreateZExt(last, b.getInt32Ty()), flag_ptr);
    return absl::OkStatus();
  });
  if (!as.ok()) return as;
  k.Barrier();
  llvm::Value* is_last = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), flag_ptr), b.getInt32(0));
  absl::Status ls = cpu::EmitIf(b, is_last, "last", [&]() -> absl::Status {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
    // A warp per output; lanes take splits lane, lane+32, ... in order, then shuffle.
    absl::Status os = EmitStridedLoop(b, warp, b.getInt64(p.B * p.C), b.getInt64(warps), "outputs",
                                      [&](llvm::Value* o) -> absl::Status {
      if (absl::Status is = init_accs(); !is.ok()) return is;
      absl::Status fs = EmitStridedLoop(b, lane, b.getInt64(S), b.getInt64(32), "partials", [&](llvm::Value* sp) {
        llvm::Value* slot = b.CreateAdd(b.CreateMul(sp, b.getInt64(p.B * p.C)), o);
        std::vector<llvm::Value*> part;
        for (size_t a = 0; a < accs.size(); ++a) {
          llvm::LoadInst* ld = b.CreateLoad(acc_type(a), partial_ptr(a, slot));
          ld->setVolatile(true);  // written by other blocks: bypass L1
          part.push_back(ld);
        }
        absl::StatusOr<std::vector<llvm::Value*>> n = combine(load_accs(), part);
        if (!n.ok()) return n.status();
        store_accs(*n);
        return absl::OkStatus();
      });
      if (!fs.ok()) return fs;
      absl::StatusOr<std::vector<llvm::Value*>> w = warp_reduce(load_accs());
      if (!w.ok()) return w.status();
      store_accs(*w);
      return cpu::EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(0)), "final.write", [&]() {
        return write_outputs(b.CreateUDiv(o, b.getInt64(p.C)), b.CreateURem(o, b.getInt64(p.C)));
      });
    });
    if (!os.ok()) return os;
    // Ready for the next launch.
    return cpu::EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "reset", [&]() {
      b.CreateStore(b.getInt32(0), counter);
      return absl::OkStatus();
    });
  });
  if (!ls.ok()) return ls;
  return true;
}

}  // namespace hloc::codegen::gpu
