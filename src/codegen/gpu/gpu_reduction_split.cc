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
#include <functional>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "codegen/gpu/gpu_reduction_split.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace hloc::codegen::gpu {

// ---- emission: one function per phase, sharing a SplitEmitContext ---------------------------

namespace {

// Vector mode: the values the vector loads gave for each element of the fold being emitted,
// with the parameter index the generators ask for (matched by identity).
struct VectorContext {
  int64_t cur = -1;
  std::vector<std::map<int64_t, std::pair<IrArray::Index, llvm::Value*>>> loaded;
};

// What the phases of one split-reduction kernel share. The generators hold pointers into it
// (the vector loads, the accumulators), so it stays in place until the kernel is done.
struct SplitEmitContext {
  SplitEmitContext(GpuKernel& k, const SplitPlan& p, const SplitLaunchPlan& lp) : k(k), b(*k.b), p(p), lp(lp) {}
  GpuKernel& k;
  llvm::IRBuilderBase& b;
  const SplitPlan& p;
  const SplitLaunchPlan& lp;
  // Accumulators (one alloca per reduce result) that the reduce generators read.
  std::map<const HloInstruction*, std::vector<llvm::AllocaInst*>> slots;
  std::map<const HloInstruction*, llvm::Type*> value_types;
  std::vector<std::pair<const HloInstruction*, int64_t>> accs;  // all accumulators, in order
  VectorContext vctx;
  std::shared_ptr<GeneratorMap> gens;
  // Vector columns: a set of accumulators per column of the thread's V; set 0 is the one the
  // reduce generators read, `cur_set` the one being folded.
  int64_t cur_set = 0;
  std::vector<std::vector<llvm::AllocaInst*>> extra_sets;
  // Scratch for split partials: [S][B*C] per accumulator, and the arrival counter.
  std::vector<llvm::GlobalVariable*> scratch;
  llvm::GlobalVariable* counter = nullptr;
  llvm::Value* tid = nullptr;
  llvm::Value* lane = nullptr;
  llvm::Value* warp = nullptr;
  std::vector<llvm::Value*> tile;  // column: 32x33 per accumulator; row: one slot per warp

  absl::StatusOr<ElementGenerator> GenOf(const HloInstruction* inst) const { return GeneratorOf(*gens, inst); }
  llvm::Type* AccType(size_t a) { return slots[accs[a].first][accs[a].second]->getAllocatedType(); }
  llvm::AllocaInst* AccSlot(size_t a) {
    if (cur_set > 0) return extra_sets[cur_set - 1][a];
    return slots[accs[a].first][accs[a].second];
  }
};

std::vector<llvm::Value*> LoadAccs(SplitEmitContext& c) {
  std::vector<llvm::Value*> v;
  for (size_t a = 0; a < c.accs.size(); ++a) v.push_back(c.b.CreateLoad(c.AccType(a), c.AccSlot(a)));
  return v;
}

void StoreAccs(SplitEmitContext& c, const std::vector<llvm::Value*>& v) {
  for (size_t a = 0; a < c.accs.size(); ++a) c.b.CreateStore(v[a], c.AccSlot(a));
}

// Combines two full accumulator vectors reduce by reduce.
absl::StatusOr<std::vector<llvm::Value*>> CombineAccs(SplitEmitContext& c, const std::vector<llvm::Value*>& x,
                                                      const std::vector<llvm::Value*>& y) {
  std::vector<llvm::Value*> out;
  size_t a = 0;
  for (const HloInstruction* r : c.p.reduces) {
    const size_t n = c.slots[r].size();
    std::vector<llvm::Value*> xs(x.begin() + a, x.begin() + a + n), ys(y.begin() + a, y.begin() + a + n);
    absl::StatusOr<std::vector<llvm::Value*>> z = ApplyReducer(*c.k.emitter, *r->to_apply(), xs, ys);
    if (!z.ok()) return z.status();
    out.insert(out.end(), z->begin(), z->end());
    a += n;
  }
  return out;
}

// Every accumulator (and every extra column set) set to its init value.
absl::Status InitAccs(SplitEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  for (const HloInstruction* r : c.p.reduces) {
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i) {
      absl::StatusOr<ElementGenerator> g = c.GenOf(r->operand(n + i));
      if (!g.ok()) return g.status();
      absl::StatusOr<llvm::Value*> v = (*g)(IrArray::Index());
      if (!v.ok()) return v.status();
      b.CreateStore(*v, c.slots[r][i]);
    }
  }
  for (const auto& set : c.extra_sets)
    for (size_t a = 0; a < c.accs.size(); ++a)
      b.CreateStore(b.CreateLoad(c.AccType(a), c.slots[c.accs[a].first][c.accs[a].second]), set[a]);
  return absl::OkStatus();
}

// Butterfly shuffles: the warp's combined accumulators in every lane.
absl::StatusOr<std::vector<llvm::Value*>> WarpReduce(SplitEmitContext& c, std::vector<llvm::Value*> cur) {
  for (int off = 16; off >= 1; off /= 2) {
    std::vector<llvm::Value*> other;
    for (llvm::Value* v : cur) other.push_back(c.k.ShuffleXor(v, off));
    absl::StatusOr<std::vector<llvm::Value*>> next = CombineAccs(c, cur, other);
    if (!next.ok()) return next.status();
    cur = *next;
  }
  return cur;
}

// The input index of (b, r, c).
IrArray::Index FullIndex(SplitEmitContext& c, llvm::Value* bb, llvm::Value* r, llvm::Value* col) {
  std::vector<llvm::Value*> v(c.p.in_dims.size(), nullptr);
  auto place = [&](llvm::Value* lin, const std::vector<int64_t>& pos) {
    std::vector<int64_t> dims;
    for (int64_t d : pos) dims.push_back(c.p.in_dims[d]);
    IrArray::Index i = DelinearizeNarrow(lin, dims, c.b);
    for (size_t j = 0; j < pos.size(); ++j) v[pos[j]] = i.multidim[j];
  };
  place(bb, c.p.b_dims);
  place(r, c.p.r_dims);
  place(col, c.p.c_dims);
  return IrArray::Index(v);
}

// Writes the input-shaped outputs' values at `indices` (vector mode stores V at once where the
// output's minor dimension is the fastest reduced one).
void StoreInputShapedOutputs(SplitEmitContext& c, const std::vector<IrArray::Index>& indices,
                             const std::vector<std::vector<llvm::Value*>>& out_vals, bool grouped) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t V = c.lp.V;
  for (size_t o = 0; o < c.p.outputs.size(); ++o) {
    if (!c.p.outputs[o].is_input) continue;
    const IrArray& out = c.k.outputs[o];
    const Shape& os = out.shape();
    const PrimitiveType t = os.element_type();
    const bool vector_store = grouped && os.IsArray() && os.rank() > 0 && os.dimensions() == c.p.in_dims &&
                              MinorToMajorOf(os)[0] == c.lp.fast_dim &&
                              (t == PrimitiveType::F32 || t == PrimitiveType::F16 || t == PrimitiveType::BF16 ||
                               t == PrimitiveType::S32 || t == PrimitiveType::U32 || t == PrimitiveType::F64) &&
                              V * ByteWidth(t) <= 16;
    for (size_t e0 = 0; e0 < indices.size(); e0 += vector_store ? V : 1) {
      if (!vector_store) {
        out.EmitWriteArrayElement(indices[e0], out_vals[o][e0], b);
        continue;
      }
      llvm::Type* et = PrimitiveTypeToIrType(t, b.getContext());
      llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(et, V));
      for (int64_t e = 0; e < V; ++e) v = b.CreateInsertElement(v, out_vals[o][e0 + e], b.getInt64(e));
      b.CreateAlignedStore(v, out.EmitArrayElementAddress(indices[e0], b),
                           llvm::Align(std::min<int64_t>(16, V * ByteWidth(t))));
    }
  }
}

// Folds the elements at `indices` into the accumulators (loads first, then the folds in order)
// and writes the input-shaped outputs there.
absl::Status FoldElements(SplitEmitContext& c, const std::vector<IrArray::Index>& indices) {
  VectorContext& vctx = c.vctx;
  std::vector<std::vector<llvm::Value*>> vals(indices.size());
  for (size_t e = 0; e < indices.size(); ++e) {
    vctx.cur = vctx.loaded.size() == indices.size() ? static_cast<int64_t>(e) : -1;
    for (const HloInstruction* r : c.p.reduces) {
      const int64_t n = r->operand_count() / 2;
      for (int64_t i = 0; i < n; ++i) {
        absl::StatusOr<ElementGenerator> g = c.GenOf(r->operand(i));
        if (!g.ok()) return g.status();
        absl::StatusOr<llvm::Value*> v = (*g)(indices[e]);
        if (!v.ok()) return v.status();
        vals[e].push_back(*v);
      }
    }
  }
  const bool grouped = vctx.loaded.size() == indices.size() && c.lp.V > 1 && indices.size() % c.lp.V == 0;
  std::vector<std::vector<llvm::Value*>> out_vals(c.p.outputs.size());
  for (size_t e = 0; e < indices.size(); ++e) {
    vctx.cur = vctx.loaded.size() == indices.size() ? static_cast<int64_t>(e) : -1;
    c.cur_set = c.lp.column_vector() ? static_cast<int64_t>(e) % c.lp.V : 0;
    absl::StatusOr<std::vector<llvm::Value*>> next = CombineAccs(c, LoadAccs(c), vals[e]);
    if (!next.ok()) return next.status();
    StoreAccs(c, *next);
    c.cur_set = 0;
    for (size_t o = 0; o < c.p.outputs.size(); ++o) {
      if (!c.p.outputs[o].is_input) continue;
      absl::StatusOr<ElementGenerator> g = c.GenOf(c.p.outputs[o].inst);
      if (!g.ok()) return g.status();
      absl::StatusOr<llvm::Value*> v = (*g)(indices[e]);
      if (!v.ok()) return v.status();
      out_vals[o].push_back(*v);
    }
  }
  vctx.cur = -1;
  vctx.loaded.clear();
  StoreInputShapedOutputs(c, indices, out_vals, grouped);
  return absl::OkStatus();
}

using ElementsAt = std::function<std::vector<IrArray::Index>(llvm::Value*)>;

// for (i = start; i < end; i += step) fold the elements at(i), U trips at a time while U fit.
absl::Status FoldRange(SplitEmitContext& c, llvm::Value* start, llvm::Value* end, int64_t step, const ElementsAt& at) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t U = c.lp.U;
  llvm::Value* has = b.CreateICmpSLT(start, end);
  llvm::Value* span = b.CreateSelect(has, b.CreateSub(end, start), b.getInt64(0));
  llvm::Value* count = b.CreateUDiv(b.CreateAdd(span, b.getInt64(step - 1)), b.getInt64(step));
  auto one = [&](llvm::Value* i) { return FoldElements(c, at(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step))))); };
  if (U == 1) return EmitStridedLoop(b, b.getInt64(0), count, b.getInt64(1), "fold1", one);
  llvm::Value* groups = b.CreateUDiv(count, b.getInt64(U));
  absl::Status s = EmitStridedLoop(b, b.getInt64(0), groups, b.getInt64(1), "fold4", [&](llvm::Value* g) {
    llvm::Value* first = b.CreateAdd(start, b.CreateMul(g, b.getInt64(U * step)));
    std::vector<IrArray::Index> idx;
    for (int64_t j = 0; j < U; ++j) {
      std::vector<IrArray::Index> more = at(b.CreateAdd(first, b.getInt64(j * step)));
      idx.insert(idx.end(), more.begin(), more.end());
    }
    return FoldElements(c, idx);
  });
  if (!s.ok()) return s;
  return EmitStridedLoop(b, b.CreateMul(groups, b.getInt64(U)), count, b.getInt64(1), "fold1", one);
}

// Vector mode: the V elements from `first` on (consecutive in the fastest reduced dimension),
// each parameter in vector_params read with one vector load.
std::vector<IrArray::Index> VectorElements(SplitEmitContext& c, const IrArray::Index& first) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t V = c.lp.V, fast = c.lp.fast_dim;
  std::vector<IrArray::Index> out;
  for (int64_t e = 0; e < V; ++e) {
    std::vector<llvm::Value*> v = first.multidim;
    if (e > 0) v[fast] = b.CreateAdd(v[fast], b.getInt64(e), "", /*HasNUW=*/true, /*HasNSW=*/true);
    out.push_back(IrArray::Index(v));
  }
  const size_t base = c.vctx.loaded.size();
  c.vctx.loaded.resize(base + V);
  for (const auto& [pn, map] : c.lp.vector_params) {
    const IrArray& a = c.k.operands[pn];
    const PrimitiveType t = a.shape().element_type();
    llvm::Type* et = PrimitiveTypeToIrType(t, b.getContext());
    auto param_index = [&](const IrArray::Index& in) {
      std::vector<llvm::Value*> v;
      for (int64_t m : map) v.push_back(in.multidim[m]);
      return IrArray::Index(v);
    };
    llvm::Value* addr = a.EmitArrayElementAddress(param_index(out[0]), b);
    llvm::LoadInst* ld = b.CreateAlignedLoad(llvm::FixedVectorType::get(et, V), addr,
                                             llvm::Align(std::min<int64_t>(16, V * ByteWidth(t))));
    for (int64_t e = 0; e < V; ++e)
      c.vctx.loaded[base + e][pn] = {param_index(out[e]), b.CreateExtractElement(ld, b.getInt64(e))};
  }
  return out;
}

// Writes the reduced outputs at kept index (bb, col) from the accumulators.
absl::Status WriteReducedOutputs(SplitEmitContext& c, llvm::Value* bb, llvm::Value* col) {
  llvm::IRBuilderBase& b = c.b;
  const SplitPlan& p = c.p;
  std::vector<llvm::Value*> v;
  auto place = [&](llvm::Value* lin, const std::vector<int64_t>& pos) {
    std::vector<int64_t> dims;
    for (int64_t d : pos) dims.push_back(p.in_dims[d]);
    IrArray::Index i = DelinearizeRowMajor(lin, dims, b);
    v.insert(v.end(), i.multidim.begin(), i.multidim.end());
  };
  place(bb, p.b_dims);  // b dims precede the trailing c dims among the kept dims
  place(col, p.c_dims);
  IrArray::Index kept(v);
  for (size_t o = 0; o < p.outputs.size(); ++o) {
    if (p.outputs[o].is_input) continue;
    const HloInstruction* inst = p.outputs[o].inst;
    // A keepdims reshape: its operand's value, at the same row-major position of its shape.
    absl::StatusOr<ElementGenerator> g = c.GenOf(p.outputs[o].reshaped ? inst->operand(0) : inst);
    if (!g.ok()) return g.status();
    absl::StatusOr<llvm::Value*> x = (*g)(kept);
    if (!x.ok()) return x.status();
    llvm::Value* val = *x;
    if (p.outputs[o].member >= 0) val = b.CreateExtractValue(val, {static_cast<unsigned>(p.outputs[o].member)});
    if (p.outputs[o].reshaped) {
      llvm::Value* lin = b.getInt64(0);
      for (size_t d = 0; d < p.kept_dims.size(); ++d)
        lin = b.CreateAdd(b.CreateMul(lin, b.getInt64(p.kept_dims[d])), kept[d]);
      c.k.outputs[o].EmitWriteArrayElement(DelinearizeRowMajor(lin, inst->shape().dimensions(), b), val, b);
    } else {
      c.k.outputs[o].EmitWriteArrayElement(kept, val, b);
    }
  }
  return absl::OkStatus();
}

llvm::Value* PartialPtr(SplitEmitContext& c, size_t a, llvm::Value* slot) {
  return c.b.CreateInBoundsGEP(c.scratch[a]->getValueType(), c.scratch[a], {c.b.getInt64(0), slot});
}

// The unit's final values (in the accumulators) -> outputs or scratch.
absl::Status FinishUnit(SplitEmitContext& c, llvm::Value* s, llvm::Value* bb, llvm::Value* col) {
  if (c.lp.S == 1) return WriteReducedOutputs(c, bb, col);
  llvm::IRBuilderBase& b = c.b;
  const int64_t BC = c.p.B * c.p.C;
  llvm::Value* slot = b.CreateAdd(b.CreateMul(s, b.getInt64(BC)), b.CreateAdd(b.CreateMul(bb, b.getInt64(c.p.C)), col));
  std::vector<llvm::Value*> v = LoadAccs(c);
  for (size_t a = 0; a < c.accs.size(); ++a) b.CreateStore(v[a], PartialPtr(c, a, slot));
  return absl::OkStatus();
}

llvm::Value* TilePtr(SplitEmitContext& c, size_t a, llvm::Value* i) {
  const int64_t n = c.lp.column ? 32 * (c.lp.tile_cols + 1) : c.lp.warps();
  return c.b.CreateInBoundsGEP(llvm::ArrayType::get(c.AccType(a), n), c.tile[a], {c.b.getInt64(0), i});
}

// The block's accumulators folded into one value: each warp reduces with shuffles, lane 0
// parks it in shared memory, thread 0 combines the warps in warp order (deterministic), stores
// the accumulators and runs `then` (which writes the result).
absl::Status BlockCombine(SplitEmitContext& c, const std::string& tag, const std::function<absl::Status()>& then) {
  llvm::IRBuilderBase& b = c.b;
  absl::StatusOr<std::vector<llvm::Value*>> w = WarpReduce(c, LoadAccs(c));
  if (!w.ok()) return w.status();
  absl::Status ps = EmitIf(b, b.CreateICmpEQ(c.lane, b.getInt64(0)), tag + ".publish", [&]() {
    for (size_t a = 0; a < c.accs.size(); ++a) b.CreateStore((*w)[a], TilePtr(c, a, c.warp));
    return absl::OkStatus();
  });
  if (!ps.ok()) return ps;
  c.k.Barrier();
  return EmitIf(b, b.CreateICmpEQ(c.tid, b.getInt64(0)), tag + ".write", [&]() -> absl::Status {
    std::vector<llvm::Value*> total;
    for (int64_t i = 0; i < c.lp.warps(); ++i) {
      std::vector<llvm::Value*> part;
      for (size_t a = 0; a < c.accs.size(); ++a) part.push_back(b.CreateLoad(c.AccType(a), TilePtr(c, a, b.getInt64(i))));
      if (i == 0) {
        total = part;
        continue;
      }
      absl::StatusOr<std::vector<llvm::Value*>> n = CombineAccs(c, total, part);
      if (!n.ok()) return n.status();
      total = *n;
    }
    StoreAccs(c, total);
    return then();
  });
}

void AllocateAccumulators(SplitEmitContext& c) {
  llvm::LLVMContext& ctx = c.b.getContext();
  for (const HloInstruction* r : c.p.reduces) {
    const int64_t n = r->operand_count() / 2;
    std::vector<llvm::Type*> types;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = r->shape().IsTuple() ? r->shape().tuple_shapes(i) : r->shape();
      llvm::Type* t = PrimitiveTypeToIrType(s.element_type(), ctx);
      types.push_back(t);
      c.slots[r].push_back(EntryAlloca(c.b, t, absl::StrCat(r->name(), ".acc", i)));
      c.accs.push_back({r, i});
    }
    c.value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
}

// The fusion's generators: vector-loaded parameters answer from the loads, reduces read their
// accumulators.
absl::Status MakeSplitGenerators(SplitEmitContext& c, const HloComputation& fused,
                                 const std::function<ElementGenerator(int64_t)>& parameter) {
  VectorContext* vp = &c.vctx;
  llvm::IRBuilderBase* bp = &c.b;
  auto vector_parameter = [&c, &parameter, vp](int64_t pn) -> ElementGenerator {
    ElementGenerator orig = parameter(pn);
    if (!c.lp.vector_params.count(pn)) return orig;
    return [orig, pn, vp](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      if (vp->cur >= 0) {
        auto it = vp->loaded[vp->cur].find(pn);
        if (it != vp->loaded[vp->cur].end() && it->second.first.multidim == index.multidim) return it->second.second;
      }
      return orig(index);
    };
  };
  absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = MakeFusionGenerators(
      *c.k.emitter, fused, vector_parameter, [&c, bp](const HloInstruction* inst) -> ElementGenerator {
        if (inst->opcode() != HloOpcode::kReduce) return ElementGenerator();
        return AccumulatorGenerator(c.slots[inst], c.value_types[inst], bp);
      });
  if (!gens.ok()) return gens.status();
  c.gens = *gens;
  return absl::OkStatus();
}

// Vector columns: the accumulator sets of columns 1..V-1 of the thread's V.
void AllocateColumnSets(SplitEmitContext& c) {
  if (!c.lp.column_vector()) return;
  for (int64_t e = 1; e < c.lp.V; ++e) {
    c.extra_sets.emplace_back();
    for (size_t a = 0; a < c.accs.size(); ++a)
      c.extra_sets.back().push_back(EntryAlloca(c.b, c.AccType(a), absl::StrCat("acc.col", e, ".", a)));
  }
}

// Split partials: a module global [S][B*C] per accumulator, and the arrival counter.
void AllocateScratch(SplitEmitContext& c) {
  if (c.lp.S <= 1) return;
  GpuKernel& k = c.k;
  for (size_t a = 0; a < c.accs.size(); ++a) {
    auto* ty = llvm::ArrayType::get(c.AccType(a), static_cast<uint64_t>(c.lp.S * c.p.B * c.p.C));
    auto* gv = new llvm::GlobalVariable(*k.module, ty, false, llvm::GlobalValue::InternalLinkage,
                                        llvm::ConstantAggregateZero::get(ty), absl::StrCat(k.name, ".partials", a),
                                        nullptr, llvm::GlobalValue::NotThreadLocal, 1);
    gv->setAlignment(llvm::Align(16));
    c.scratch.push_back(gv);
  }
  c.counter = new llvm::GlobalVariable(*k.module, c.b.getInt32Ty(), false, llvm::GlobalValue::InternalLinkage,
                                       c.b.getInt32(0), absl::StrCat(k.name, ".arrived"), nullptr,
                                       llvm::GlobalValue::NotThreadLocal, 1);
  c.counter->setAlignment(llvm::Align(4));
}

// The thread's lane and warp, and the shared tile of the block's combine.
void EmitThreadIndicesAndTile(SplitEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  c.tid = c.k.ThreadIdX();
  c.lane = b.CreateURem(c.tid, b.getInt64(32), "lane");
  c.warp = b.CreateUDiv(c.tid, b.getInt64(32), "warp");
  for (size_t a = 0; a < c.accs.size(); ++a)
    c.tile.push_back(c.k.SharedArray(c.AccType(a), c.lp.column ? 32 * (c.lp.tile_cols + 1) : c.lp.warps(),
                                     absl::StrCat("split.", a)));
}

// A column unit: 32 rows at a time of the tile's columns, then the 32 x 32V partials transposed
// through shared memory so that warp w folds columns w, w + 32, ... of the tile over its lanes.
absl::Status EmitColumnUnit(SplitEmitContext& c, llvm::Value* s, llvm::Value* rest, llvm::Value* r_begin,
                            llvm::Value* r_end) {
  llvm::IRBuilderBase& b = c.b;
  const SplitLaunchPlan& lp = c.lp;
  const int64_t V = lp.V;
  llvm::Value* ct = b.CreateURem(rest, b.getInt64(lp.tiles));
  llvm::Value* bb = b.CreateUDiv(rest, b.getInt64(lp.tiles));
  // The thread's first column; with V > 1 its V columns c..c+V-1 are all valid or all
  // not (V divides the last dimension, so C).
  llvm::Value* col0 = b.CreateAdd(b.CreateMul(ct, b.getInt64(lp.tile_cols)), b.CreateMul(c.lane, b.getInt64(V)));
  absl::Status fs = EmitIf(b, b.CreateICmpULT(col0, b.getInt64(c.p.C)), "col.valid", [&]() {
    return FoldRange(c, b.CreateAdd(r_begin, c.warp), r_end, 32, [&](llvm::Value* r) {
      if (lp.column_vector()) return VectorElements(c, FullIndex(c, bb, r, col0));
      return std::vector<IrArray::Index>{FullIndex(c, bb, r, col0)};
    });
  });
  if (!fs.ok()) return fs;
  const int64_t stride = lp.tile_cols + 1;
  for (int64_t e = 0; e < V; ++e) {
    c.cur_set = e;
    std::vector<llvm::Value*> v = LoadAccs(c);
    c.cur_set = 0;
    llvm::Value* at = b.CreateAdd(b.CreateMul(c.warp, b.getInt64(stride)),
                                  b.CreateAdd(b.CreateMul(c.lane, b.getInt64(V)), b.getInt64(e)));
    for (size_t a = 0; a < c.accs.size(); ++a) b.CreateStore(v[a], TilePtr(c, a, at));
  }
  c.k.Barrier();
  for (int64_t e = 0; e < V; ++e) {
    llvm::Value* j = b.CreateAdd(c.warp, b.getInt64(32 * e));
    std::vector<llvm::Value*> t;
    for (size_t a = 0; a < c.accs.size(); ++a)
      t.push_back(b.CreateLoad(c.AccType(a), TilePtr(c, a, b.CreateAdd(b.CreateMul(c.lane, b.getInt64(stride)), j))));
    absl::StatusOr<std::vector<llvm::Value*>> w = WarpReduce(c, t);
    if (!w.ok()) return w.status();
    StoreAccs(c, *w);
    llvm::Value* col = b.CreateAdd(b.CreateMul(ct, b.getInt64(lp.tile_cols)), j);
    absl::Status ws = EmitIf(
        b, b.CreateAnd(b.CreateICmpEQ(c.lane, b.getInt64(0)), b.CreateICmpULT(col, b.getInt64(c.p.C))), "col.write",
        [&]() { return FinishUnit(c, s, bb, col); });
    if (!ws.ok()) return ws;
  }
  c.k.Barrier();  // the tile is reused by the next unit
  return absl::OkStatus();
}

// A row unit: the block folds a strided slice of row `rest` (V elements per vector group), then
// combines through shuffles and shared memory.
absl::Status EmitRowUnit(SplitEmitContext& c, llvm::Value* s, llvm::Value* rest, llvm::Value* r_begin,
                         llvm::Value* r_end) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t V = c.lp.V, block = c.lp.block;
  absl::Status fs =
      V > 1 ? FoldRange(c, b.CreateAdd(b.CreateUDiv(r_begin, b.getInt64(V)), c.tid), b.CreateUDiv(r_end, b.getInt64(V)),
                        block,
                        [&](llvm::Value* g) {
                          return VectorElements(c, FullIndex(c, rest, b.CreateMul(g, b.getInt64(V)), b.getInt64(0)));
                        })
            : FoldRange(c, b.CreateAdd(r_begin, c.tid), r_end, block, [&](llvm::Value* r) {
                return std::vector<IrArray::Index>{FullIndex(c, rest, r, b.getInt64(0))};
              });
  if (!fs.ok()) return fs;
  absl::Status ws = BlockCombine(c, "row", [&]() { return FinishUnit(c, s, rest, b.getInt64(0)); });
  if (!ws.ok()) return ws;
  c.k.Barrier();
  return absl::OkStatus();
}

// The blocks stride over the units (b, column tile, split s); each folds its chunk of R.
absl::Status EmitUnitLoop(SplitEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  const SplitLaunchPlan& lp = c.lp;
  return EmitStridedLoop(
      b, c.k.BlockIdX(), b.getInt64(lp.units), b.getInt64(lp.grid), "units", [&](llvm::Value* u) -> absl::Status {
        llvm::Value* s = b.CreateURem(u, b.getInt64(lp.S), "split");
        llvm::Value* rest = b.CreateUDiv(u, b.getInt64(lp.S));
        llvm::Value* r_begin = b.CreateMul(s, b.getInt64(lp.chunk));
        llvm::Value* r_end = b.CreateAdd(r_begin, b.getInt64(lp.chunk));
        r_end = b.CreateSelect(b.CreateICmpSLT(r_end, b.getInt64(c.p.R)), r_end, b.getInt64(c.p.R));
        if (absl::Status is = InitAccs(c); !is.ok()) return is;
        if (lp.column) return EmitColumnUnit(c, s, rest, r_begin, r_end);
        return EmitRowUnit(c, s, rest, r_begin, r_end);
      });
}

// One output's partials s = start, start + step, ... < S folded in order, four loads at a time
// (issued before their folds so that they are in flight together).
absl::Status FoldPartials(SplitEmitContext& c, llvm::Value* o, llvm::Value* start, int64_t step) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t S = c.lp.S;
  auto load = [&](llvm::Value* sp) {
    llvm::Value* slot = b.CreateAdd(b.CreateMul(sp, b.getInt64(c.p.B * c.p.C)), o);
    std::vector<llvm::Value*> part;
    for (size_t a = 0; a < c.accs.size(); ++a) {
      llvm::LoadInst* ld = b.CreateLoad(c.AccType(a), PartialPtr(c, a, slot));
      ld->setVolatile(true);  // written by other blocks: bypass L1
      part.push_back(ld);
    }
    return part;
  };
  llvm::Value* has = b.CreateICmpSLT(start, b.getInt64(S));
  llvm::Value* span = b.CreateSelect(has, b.CreateSub(b.getInt64(S), start), b.getInt64(0));
  llvm::Value* count = b.CreateUDiv(b.CreateAdd(span, b.getInt64(step - 1)), b.getInt64(step));
  llvm::Value* quads = b.CreateUDiv(count, b.getInt64(4));
  absl::Status qs = EmitStridedLoop(b, b.getInt64(0), quads, b.getInt64(1), "partials4", [&](llvm::Value* q) {
    llvm::Value* first = b.CreateAdd(start, b.CreateMul(q, b.getInt64(4 * step)));
    std::vector<std::vector<llvm::Value*>> parts;
    for (int64_t j = 0; j < 4; ++j) parts.push_back(load(b.CreateAdd(first, b.getInt64(j * step))));
    for (const auto& part : parts) {
      absl::StatusOr<std::vector<llvm::Value*>> n = CombineAccs(c, LoadAccs(c), part);
      if (!n.ok()) return n.status();
      StoreAccs(c, *n);
    }
    return absl::OkStatus();
  });
  if (!qs.ok()) return qs;
  return EmitStridedLoop(b, b.CreateMul(quads, b.getInt64(4)), count, b.getInt64(1), "partials1", [&](llvm::Value* i) {
    absl::StatusOr<std::vector<llvm::Value*>> n =
        CombineAccs(c, LoadAccs(c), load(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step)))));
    if (!n.ok()) return n.status();
    StoreAccs(c, *n);
    return absl::OkStatus();
  });
}

// The last block's fold of every output's partials, in split order.
absl::Status EmitFoldAllPartials(SplitEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t BC = c.p.B * c.p.C, block = c.lp.block;
  if (BC < c.lp.warps()) {
    // Few outputs (full reductions): the whole block folds each one; threads take splits
    // tid, tid + block, ..., then the warps combine in order through shared memory.
    return EmitStridedLoop(b, b.getInt64(0), b.getInt64(BC), b.getInt64(1), "outputs", [&](llvm::Value* o) -> absl::Status {
      if (absl::Status is = InitAccs(c); !is.ok()) return is;
      if (absl::Status fs = FoldPartials(c, o, c.tid, block); !fs.ok()) return fs;
      absl::Status ws = BlockCombine(c, "final", [&]() {
        return WriteReducedOutputs(c, b.CreateUDiv(o, b.getInt64(c.p.C)), b.CreateURem(o, b.getInt64(c.p.C)));
      });
      if (!ws.ok()) return ws;
      c.k.Barrier();
      return absl::OkStatus();
    });
  }
  // Many outputs (columns): a thread per output (consecutive threads read consecutive
  // partials), splits in order.
  return EmitStridedLoop(b, c.tid, b.getInt64(BC), b.getInt64(block), "outputs", [&](llvm::Value* o) -> absl::Status {
    if (absl::Status is = InitAccs(c); !is.ok()) return is;
    if (absl::Status fs = FoldPartials(c, o, b.getInt64(0), 1); !fs.ok()) return fs;
    return WriteReducedOutputs(c, b.CreateUDiv(o, b.getInt64(c.p.C)), b.CreateURem(o, b.getInt64(c.p.C)));
  });
}

// Second stage (S > 1): the last block to arrive folds the partials of every output in split
// order, then resets the counter for the next launch.
absl::Status EmitLastBlockFold(SplitEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  GpuKernel& k = c.k;
  llvm::Value* flag = k.SharedArray(b.getInt32Ty(), 1, "split.last");
  auto flag_ptr = b.CreateInBoundsGEP(llvm::ArrayType::get(b.getInt32Ty(), 1), flag, {b.getInt64(0), b.getInt64(0)});
  b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
  k.Barrier();
  absl::Status as = EmitIf(b, b.CreateICmpEQ(c.tid, b.getInt64(0)), "arrive", [&]() {
    llvm::Value* old = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, c.counter, b.getInt32(1), llvm::Align(4),
                                         llvm::AtomicOrdering::Monotonic);
    llvm::Value* last = b.CreateICmpEQ(old, b.getInt32(static_cast<uint32_t>(c.lp.grid - 1)));
    b.CreateStore(b.CreateZExt(last, b.getInt32Ty()), flag_ptr);
    return absl::OkStatus();
  });
  if (!as.ok()) return as;
  k.Barrier();
  llvm::Value* is_last = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), flag_ptr), b.getInt32(0));
  return EmitIf(b, is_last, "last", [&]() -> absl::Status {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
    if (absl::Status os = EmitFoldAllPartials(c); !os.ok()) return os;
    // Ready for the next launch.
    return EmitIf(b, b.CreateICmpEQ(c.tid, b.getInt64(0)), "reset", [&]() {
      b.CreateStore(b.getInt32(0), c.counter);
      return absl::OkStatus();
    });
  });
}

}  // namespace

absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter) {
  std::optional<SplitPlan> plan = SplitReductionFor(fused, k.outputs.size());
  if (!plan) return false;
  SplitPlan& p = *plan;
  std::vector<Shape> operand_shapes;
  for (const IrArray& a : k.operands) operand_shapes.push_back(a.shape());
  const SplitLaunchPlan lp = ComputeSplitLaunchPlan(p, fused, operand_shapes, k.outputs.size(), *k.device);
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = lp.block;
  k.launch.grid_x = lp.grid;
  if (lp.min_blocks_per_sm > 0) k.min_blocks_per_sm = lp.min_blocks_per_sm;

  SplitEmitContext c(k, p, lp);
  AllocateAccumulators(c);
  if (absl::Status s = MakeSplitGenerators(c, fused, parameter); !s.ok()) return s;
  AllocateColumnSets(c);
  AllocateScratch(c);
  EmitThreadIndicesAndTile(c);
  if (absl::Status s = EmitUnitLoop(c); !s.ok()) return s;
  if (lp.S == 1) return true;
  if (absl::Status s = EmitLastBlockFold(c); !s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
