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
#include "passes/fusion/fusion_analysis.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Metadata.h"

namespace hloc::codegen::gpu {

// Column reductions that are faster as the loop kernel (a thread per output folding its R
// elements, reads coalesced along C) than as 32x32 tiles: XLA's rule from its sweep of small
// column reductions (IsUnnestedReductionFasterThanElemental, in warps of 32). With R = 7 or 8
// (diffrax's Runge-Kutta stage sums, MoE's top-2 combine: dots with a vector operand after
// dot-strength-reduction) the tiles left 3/4 of their threads idle and ran ~15x above the
// memory floor. Only when every output has the reduced shape: outputs of the input's shape
// need the split emitter's walk over the input.
static bool ColumnPrefersLoop(const SplitPlan& p) {
  if (p.C <= 1) return false;
  for (const SplitPlan::Output& o : p.outputs)
    if (o.is_input) return false;
  constexpr int64_t kWarp = 32;
  return p.R < kWarp || (p.R < 2 * kWarp && p.C < kWarp) || (p.R < 4 * kWarp && p.C < 8) ||
         (p.R < 8 * kWarp && p.C < 3);
}

// Whether the split emitter would take this fusion (the row emitter defers to it for a few long
// rows without chains).
bool SplitReductionApplies(const HloComputation& fused) { return AnalyzeSplit(fused).has_value(); }

absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter) {
  std::optional<SplitPlan> plan = AnalyzeSplit(fused);
  if (!plan || plan->outputs.size() != k.outputs.size()) return false;
  SplitPlan& p = *plan;
  if (p.B * p.C == 0 || p.R == 0) return false;  // the loop kernel writes the inits
  if (ColumnPrefersLoop(p)) return false;
  llvm::IRBuilderBase& b = *k.b;
  llvm::LLVMContext& ctx = b.getContext();
  const bool column = p.C > 1;
  // Rows (C == 1): the reduced dimensions are walked in the physical order of the largest
  // parameter the reduces read (through elementwise ops and transposes; conv_train_step's loss
  // reads two transposed NHWC arrays), so that consecutive threads read consecutive addresses;
  // when that order's fastest dimension is the parameters' minor one, each thread folds V
  // consecutive elements read with one vector load per parameter. Only for single-result
  // reducers (the order of a variadic reducer's ties is left alone).
  // Columns (C > 1): each thread folds V adjacent columns (one vector load per row and
  // parameter whose minor dimension is the input's last), a block covers 32*V columns.
  int64_t V = 1;
  // A long fused chain is computed one element at a time (no vectors, no unrolling), at half
  // occupancy: see kLongChainInstructions.
  const bool long_chain = fused.instruction_count() > kLongChainInstructions;
  // Full occupancy leaves a thread 32 registers; the unrolled, vectorized fold of more than
  // one result or of a costlier element spilled there (numpyro's exp/log reduce: 600 bytes a
  // thread, 4x its memory time; the column reductions of several results in ViT, U-Net, GRU).
  int64_t element_cost = 0;
  for (const auto& i : fused.instructions()) element_cost += fusion::RelativeCost(i->opcode());
  const bool light = !long_chain && k.outputs.size() == 1 && element_cost <= k.device->split_reduction_light_cost;
  int64_t fast_dim = -1;  // the input dimension the V elements of a vector step along
  std::map<int64_t, std::vector<int64_t>> vector_params;  // parameter -> index map
  bool single = true;
  for (const HloInstruction* r : p.reduces) single = single && r->operand_count() == 2;
  std::map<int64_t, std::vector<int64_t>> traced = single ? TraceParameters(p) : std::map<int64_t, std::vector<int64_t>>();
  int64_t nparams = 0;
  std::map<int64_t, const HloInstruction*> params;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
    if (inst->opcode() == HloOpcode::kParameter) {
      ++nparams;
      params[inst->attrs().parameter_number] = inst;
    }
  // The traced parameters that can be read V at a time along input dimension `fast`.
  auto pick_vector_params = [&](int64_t fast) {
    int64_t max_bytes = 1;
    if (static_cast<int64_t>(k.operands.size()) != nparams) return max_bytes;
    for (const auto& [pn, pmap] : traced) {
      if (!params.count(pn) || pn >= nparams) continue;
      const Shape& ps = params[pn]->shape();
      const Shape& os = k.operands[pn].shape();
      const PrimitiveType t = ps.element_type();
      const bool plain = t == PrimitiveType::F16 || t == PrimitiveType::BF16 || t == PrimitiveType::F32 ||
                         t == PrimitiveType::F64 || t == PrimitiveType::S32 || t == PrimitiveType::U32;
      if (!plain || !os.IsArray() || os.dimensions() != ps.dimensions() || os.element_type() != t ||
          MinorToMajorOf(os) != MinorToMajorOf(ps) || ps.rank() == 0)
        continue;
      if (pmap[MinorToMajorOf(ps)[0]] != fast) continue;
      vector_params[pn] = pmap;
      max_bytes = std::max<int64_t>(max_bytes, ByteWidth(t));
    }
    return max_bytes;
  };
  if (column && single && !traced.empty() && !long_chain) {
    fast_dim = static_cast<int64_t>(p.in_dims.size()) - 1;
    const int64_t max_bytes = pick_vector_params(fast_dim);
    V = vector_params.empty() ? 1 : 16 / max_bytes;
    while (V > 1 && (p.in_dims[fast_dim] % V != 0 || p.C < 32 * V)) V /= 2;
    // The transposing tile (32 x (32V+1) per accumulator) must fit in shared memory.
    int64_t acc_bytes = 0;
    for (const HloInstruction* r : p.reduces) acc_bytes += std::max(4, ByteWidth(r->shape().element_type()));
    while (V > 1 && 32 * (32 * V + 1) * acc_bytes > 40 * 1024) V /= 2;
    if (V == 1) vector_params.clear();
  }
  if (!column && !long_chain) {
    int64_t primary = -1, primary_bytes = -1;
    for (const auto& [pn, map] : traced) {
      if (!params.count(pn) || !params[pn]->shape().IsArray()) continue;
      const int64_t bytes = params[pn]->shape().byte_size();
      if (bytes > primary_bytes) primary = pn, primary_bytes = bytes;
    }
    if (primary >= 0) {
      const std::vector<int64_t>& map = traced[primary];
      std::set<int64_t> reduced(p.r_dims.begin(), p.r_dims.end());
      std::vector<int64_t> order;  // reduced input dimensions, fastest first
      for (int64_t m : MinorToMajorOf(params[primary]->shape()))
        if (m >= 0 && m < static_cast<int64_t>(map.size()) && reduced.count(map[m])) order.push_back(map[m]);
      if (order.size() == p.r_dims.size()) {
        p.r_dims.assign(order.rbegin(), order.rend());
        // Vector loads: parameters whose minor dimension is the fastest reduced one.
        const int64_t fast = order.front();
        fast_dim = fast;
        const int64_t max_bytes = pick_vector_params(fast);
        V = vector_params.empty() ? 1 : 16 / max_bytes;
        while (V > 1 && p.in_dims[fast] % V != 0) V /= 2;
        if (V == 1) vector_params.clear();
      }
    }
  }
  const int64_t block = column ? 1024 : 256;
  const bool column_vector = column && V > 1;
  const int64_t tile_cols = column ? 32 * V : 1;  // columns per block
  const int64_t tiles = column ? (p.C + tile_cols - 1) / tile_cols : 1;
  // Blocks that fit an SM by threads. A long fused chain (numpyro's lgamma/digamma: 370
  // instructions) needs more registers than a full SM of threads leaves each (32): asked for
  // that occupancy, ptxas spilled 32 KB a thread and the kernel ran 10x slower. Such chains are
  // planned for half the blocks and let ptxas take the registers it needs; so are the reductions
  // that are not `light` (above), with 64 registers a thread asked for.
  const int64_t fit = std::max<int64_t>(1, k.device->max_threads_per_sm / block);
  const int64_t per_sm = light ? fit : std::max<int64_t>(1, fit / 2);
  const int64_t resident = per_sm * k.device->sm_count;
  const int64_t base_units = p.B * tiles;
  // Split R until about one wave of resident blocks is busy; each split keeps enough rows
  // (columns: 64 rows, rows: 8 elements a thread) to amortize its partial.
  // At most one wave of resident blocks (the kernel asks ptxas for that occupancy below): a
  // second, partial wave would cost as much as the first.
  int64_t S = 1;
  if (base_units < resident) {
    const int64_t min_chunk = column ? 64 : block * 8;
    S = std::max<int64_t>(1, std::min(resident / base_units, p.R / min_chunk));
    // Keep the scratch small.
    while (S > 1 && S * p.B * p.C > (int64_t{1} << 22)) S /= 2;
  }
  const int64_t chunk = ((p.R + S - 1) / S + V - 1) / V * V;  // a multiple of V
  const int64_t units = base_units * S;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = block;
  k.launch.grid_x = std::max<int64_t>(1, std::min(units, resident * k.device->waves));
  if (S > 1 && !long_chain) {
    // The split assumes `resident` blocks run at once: ask ptxas for that many per SM.
    k.min_blocks_per_sm = per_sm;
  }

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
      slots[r].push_back(EntryAlloca(b, t, absl::StrCat(r->name(), ".acc", i)));
      accs.push_back({r, i});
    }
    value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
  llvm::IRBuilderBase* bp = &b;
  // Vector mode: the values the vector loads gave for each element of the fold being emitted,
  // with the parameter index the generators ask for (matched by identity).
  struct VectorContext {
    int64_t cur = -1;
    std::vector<std::map<int64_t, std::pair<IrArray::Index, llvm::Value*>>> loaded;
  } vctx;
  VectorContext* vp = &vctx;
  auto vector_parameter = [&](int64_t pn) -> ElementGenerator {
    ElementGenerator orig = parameter(pn);
    if (!vector_params.count(pn)) return orig;
    return [orig, pn, vp](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      if (vp->cur >= 0) {
        auto it = vp->loaded[vp->cur].find(pn);
        if (it != vp->loaded[vp->cur].end() && it->second.first.multidim == index.multidim) return it->second.second;
      }
      return orig(index);
    };
  };
  absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = MakeFusionGenerators(
      *k.emitter, fused, vector_parameter, [&](const HloInstruction* inst) -> ElementGenerator {
        if (inst->opcode() != HloOpcode::kReduce) return ElementGenerator();
        return AccumulatorGenerator(slots[inst], value_types[inst], bp);
      });
  if (!gens.ok()) return gens.status();
  auto gen_of = [&](const HloInstruction* inst) { return GeneratorOf(**gens, inst); };
  auto acc_type = [&](size_t a) { return slots[accs[a].first][accs[a].second]->getAllocatedType(); };
  // Vector columns: a set of accumulators per column of the thread's V; set 0 is the one the
  // reduce generators read.
  int64_t cur_set = 0;
  std::vector<std::vector<llvm::AllocaInst*>> extra_sets;
  if (column_vector) {
    for (int64_t e = 1; e < V; ++e) {
      extra_sets.emplace_back();
      for (size_t a = 0; a < accs.size(); ++a)
        extra_sets.back().push_back(EntryAlloca(b, acc_type(a), absl::StrCat("acc.col", e, ".", a)));
    }
  }
  auto acc_slot = [&](size_t a) -> llvm::AllocaInst* {
    if (cur_set > 0) return extra_sets[cur_set - 1][a];
    return slots[accs[a].first][accs[a].second];
  };
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
    for (const auto& set : extra_sets)
      for (size_t a = 0; a < accs.size(); ++a)
        b.CreateStore(b.CreateLoad(acc_type(a), slots[accs[a].first][accs[a].second]), set[a]);
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
      IrArray::Index i = DelinearizeNarrow(lin, dims, b);
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
      vctx.cur = vctx.loaded.size() == indices.size() ? static_cast<int64_t>(e) : -1;
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
    const bool grouped = vctx.loaded.size() == indices.size() && V > 1 && indices.size() % V == 0;
    // Input-shaped outputs, per output and element (vector mode stores V at once where the
    // output's minor dimension is the fastest reduced one).
    std::vector<std::vector<llvm::Value*>> out_vals(p.outputs.size());
    for (size_t e = 0; e < indices.size(); ++e) {
      vctx.cur = vctx.loaded.size() == indices.size() ? static_cast<int64_t>(e) : -1;
      cur_set = column_vector ? static_cast<int64_t>(e) % V : 0;
      absl::StatusOr<std::vector<llvm::Value*>> next = combine(load_accs(), vals[e]);
      if (!next.ok()) return next.status();
      store_accs(*next);
      cur_set = 0;
      for (size_t o = 0; o < p.outputs.size(); ++o) {
        if (!p.outputs[o].is_input) continue;
        absl::StatusOr<ElementGenerator> g = gen_of(p.outputs[o].inst);
        if (!g.ok()) return g.status();
        absl::StatusOr<llvm::Value*> v = (*g)(indices[e]);
        if (!v.ok()) return v.status();
        out_vals[o].push_back(*v);
      }
    }
    vctx.cur = -1;
    vctx.loaded.clear();
    for (size_t o = 0; o < p.outputs.size(); ++o) {
      if (!p.outputs[o].is_input) continue;
      const IrArray& out = k.outputs[o];
      const Shape& os = out.shape();
      const PrimitiveType t = os.element_type();
      const bool vector_store = grouped && os.IsArray() && os.rank() > 0 && os.dimensions() == p.in_dims &&
                                MinorToMajorOf(os)[0] == fast_dim &&
                                (t == PrimitiveType::F32 || t == PrimitiveType::F16 || t == PrimitiveType::BF16 ||
                                 t == PrimitiveType::S32 || t == PrimitiveType::U32 || t == PrimitiveType::F64) &&
                                V * ByteWidth(t) <= 16;
      for (size_t e0 = 0; e0 < indices.size(); e0 += vector_store ? V : 1) {
        if (!vector_store) {
          out.EmitWriteArrayElement(indices[e0], out_vals[o][e0], b);
          continue;
        }
        llvm::Type* et = PrimitiveTypeToIrType(t, ctx);
        llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(et, V));
        for (int64_t e = 0; e < V; ++e) v = b.CreateInsertElement(v, out_vals[o][e0 + e], b.getInt64(e));
        b.CreateAlignedStore(v, out.EmitArrayElementAddress(indices[e0], b),
                             llvm::Align(std::min<int64_t>(16, V * ByteWidth(t))));
      }
    }
    return absl::OkStatus();
  };
  // for (i = start; i < end; i += step), U at a time while U fit. A long chain is not unrolled:
  // U copies of it (4 x V elements) outgrow the registers (numpyro: 32 KB of spills a thread).
  // Others than `light` ones unroll only while the loads in flight (U x V elements of each
  // parameter) fit half of their 64 registers: numpyro's exp/log reduce of 3 parameters with
  // V = 4 spilled 176 bytes a thread at U = 4.
  const int64_t loaded = std::max<int64_t>(1, V * fused.num_parameters());
  const int64_t U = long_chain ? 1 : light ? 4 : std::clamp<int64_t>(32 / loaded, 1, 4);
  auto fold_range = [&](llvm::Value* start, llvm::Value* end, int64_t step,
                        const std::function<std::vector<IrArray::Index>(llvm::Value*)>& at) -> absl::Status {
    llvm::Value* has = b.CreateICmpSLT(start, end);
    llvm::Value* span = b.CreateSelect(has, b.CreateSub(end, start), b.getInt64(0));
    llvm::Value* count = b.CreateUDiv(b.CreateAdd(span, b.getInt64(step - 1)), b.getInt64(step));
    if (U == 1)
      return EmitStridedLoop(b, b.getInt64(0), count, b.getInt64(1), "fold1",
                             [&](llvm::Value* i) { return fold(at(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step))))); });
    llvm::Value* groups = b.CreateUDiv(count, b.getInt64(U));
    absl::Status s = EmitStridedLoop(b, b.getInt64(0), groups, b.getInt64(1), "fold4", [&](llvm::Value* g) {
      llvm::Value* first = b.CreateAdd(start, b.CreateMul(g, b.getInt64(U * step)));
      std::vector<IrArray::Index> idx;
      for (int64_t j = 0; j < U; ++j) {
        std::vector<IrArray::Index> more = at(b.CreateAdd(first, b.getInt64(j * step)));
        idx.insert(idx.end(), more.begin(), more.end());
      }
      return fold(idx);
    });
    if (!s.ok()) return s;
    return EmitStridedLoop(b, b.CreateMul(groups, b.getInt64(U)), count, b.getInt64(1), "fold1",
                           [&](llvm::Value* i) { return fold(at(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step))))); });
  };
  // Vector mode: the V elements of group `g` (r = g*V + e, consecutive in the fastest reduced
  // dimension), each parameter in vector_params read with one vector load.
  auto vector_elements = [&](const IrArray::Index& first) -> std::vector<IrArray::Index> {
    const int64_t fast = fast_dim;
    std::vector<IrArray::Index> out;
    for (int64_t e = 0; e < V; ++e) {
      std::vector<llvm::Value*> v = first.multidim;
      if (e > 0) v[fast] = b.CreateAdd(v[fast], b.getInt64(e), "", /*HasNUW=*/true, /*HasNSW=*/true);
      out.push_back(IrArray::Index(v));
    }
    const size_t base = vctx.loaded.size();
    vctx.loaded.resize(base + V);
    for (const auto& [pn, map] : vector_params) {
      const IrArray& a = k.operands[pn];
      const PrimitiveType t = a.shape().element_type();
      llvm::Type* et = PrimitiveTypeToIrType(t, ctx);
      auto param_index = [&](const IrArray::Index& in) {
        std::vector<llvm::Value*> v;
        for (int64_t m : map) v.push_back(in.multidim[m]);
        return IrArray::Index(v);
      };
      llvm::Value* addr = a.EmitArrayElementAddress(param_index(out[0]), b);
      llvm::LoadInst* ld = b.CreateAlignedLoad(llvm::FixedVectorType::get(et, V), addr,
                                               llvm::Align(std::min<int64_t>(16, V * ByteWidth(t))));
      for (int64_t e = 0; e < V; ++e)
        vctx.loaded[base + e][pn] = {param_index(out[e]), b.CreateExtractElement(ld, b.getInt64(e))};
    }
    return out;
  };
  auto vector_group = [&](llvm::Value* bb, llvm::Value* g) {
    return vector_elements(full_index(bb, b.CreateMul(g, b.getInt64(V)), b.getInt64(0)));
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
      const HloInstruction* inst = p.outputs[o].inst;
      // A keepdims reshape: its operand's value, at the same row-major position of its shape.
      absl::StatusOr<ElementGenerator> g = gen_of(p.outputs[o].reshaped ? inst->operand(0) : inst);
      if (!g.ok()) return g.status();
      absl::StatusOr<llvm::Value*> x = (*g)(kept);
      if (!x.ok()) return x.status();
      llvm::Value* val = *x;
      if (p.outputs[o].member >= 0) val = b.CreateExtractValue(val, {static_cast<unsigned>(p.outputs[o].member)});
      if (p.outputs[o].reshaped) {
        llvm::Value* lin = b.getInt64(0);
        for (size_t d = 0; d < p.kept_dims.size(); ++d)
          lin = b.CreateAdd(b.CreateMul(lin, b.getInt64(p.kept_dims[d])), kept[d]);
        k.outputs[o].EmitWriteArrayElement(DelinearizeRowMajor(lin, inst->shape().dimensions(), b), val, b);
      } else {
        k.outputs[o].EmitWriteArrayElement(kept, val, b);
      }
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
    tile.push_back(k.SharedArray(acc_type(a), column ? 32 * (tile_cols + 1) : warps, absl::StrCat("split.", a)));
  auto tile_ptr = [&](size_t a, llvm::Value* i) {
    return b.CreateInBoundsGEP(llvm::ArrayType::get(acc_type(a), column ? 32 * (tile_cols + 1) : warps), tile[a],
                               {b.getInt64(0), i});
  };
  // The block's accumulators folded into one value: each warp reduces with shuffles, lane 0
  // parks it in shared memory, thread 0 combines the warps in warp order (deterministic), stores
  // the accumulators and runs `then` (which writes the result).
  auto block_combine = [&](const std::string& tag, const std::function<absl::Status()>& then) -> absl::Status {
    absl::StatusOr<std::vector<llvm::Value*>> w = warp_reduce(load_accs());
    if (!w.ok()) return w.status();
    absl::Status ps = EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(0)), tag + ".publish", [&]() {
      for (size_t a = 0; a < accs.size(); ++a) b.CreateStore((*w)[a], tile_ptr(a, warp));
      return absl::OkStatus();
    });
    if (!ps.ok()) return ps;
    k.Barrier();
    return EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), tag + ".write", [&]() -> absl::Status {
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
      return then();
    });
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
          // The thread's first column; with V > 1 its V columns c..c+V-1 are all valid or all
          // not (V divides the last dimension, so C).
          llvm::Value* c = b.CreateAdd(b.CreateMul(ct, b.getInt64(tile_cols)), b.CreateMul(lane, b.getInt64(V)));
          absl::Status fs = EmitIf(b, b.CreateICmpULT(c, b.getInt64(p.C)), "col.valid", [&]() {
            return fold_range(b.CreateAdd(r_begin, warp), r_end, 32, [&](llvm::Value* r) {
              if (column_vector) return vector_elements(full_index(bb, r, c));
              return std::vector<IrArray::Index>{full_index(bb, r, c)};
            });
          });
          if (!fs.ok()) return fs;
          // Transpose the 32 x 32V partials: warp w then folds columns w, w + 32, ... of the
          // tile over its lanes.
          const int64_t stride = tile_cols + 1;
          for (int64_t e = 0; e < V; ++e) {
            cur_set = e;
            std::vector<llvm::Value*> v = load_accs();
            cur_set = 0;
            llvm::Value* at = b.CreateAdd(b.CreateMul(warp, b.getInt64(stride)),
                                          b.CreateAdd(b.CreateMul(lane, b.getInt64(V)), b.getInt64(e)));
            for (size_t a = 0; a < accs.size(); ++a) b.CreateStore(v[a], tile_ptr(a, at));
          }
          k.Barrier();
          for (int64_t e = 0; e < V; ++e) {
            llvm::Value* j = b.CreateAdd(warp, b.getInt64(32 * e));
            std::vector<llvm::Value*> t;
            for (size_t a = 0; a < accs.size(); ++a)
              t.push_back(b.CreateLoad(acc_type(a), tile_ptr(a, b.CreateAdd(b.CreateMul(lane, b.getInt64(stride)), j))));
            absl::StatusOr<std::vector<llvm::Value*>> w = warp_reduce(t);
            if (!w.ok()) return w.status();
            store_accs(*w);
            llvm::Value* col = b.CreateAdd(b.CreateMul(ct, b.getInt64(tile_cols)), j);
            absl::Status ws = EmitIf(
                b, b.CreateAnd(b.CreateICmpEQ(lane, b.getInt64(0)), b.CreateICmpULT(col, b.getInt64(p.C))), "col.write",
                [&]() { return finish(s, bb, col); });
            if (!ws.ok()) return ws;
          }
          k.Barrier();  // the tile is reused by the next unit
          return absl::OkStatus();
        }
        absl::Status fs =
            V > 1 ? fold_range(b.CreateAdd(b.CreateUDiv(r_begin, b.getInt64(V)), tid), b.CreateUDiv(r_end, b.getInt64(V)),
                               block, [&](llvm::Value* g) { return vector_group(rest, g); })
                  : fold_range(b.CreateAdd(r_begin, tid), r_end, block, [&](llvm::Value* r) {
                      return std::vector<IrArray::Index>{full_index(rest, r, b.getInt64(0))};
                    });
        if (!fs.ok()) return fs;
        absl::Status ws = block_combine("row", [&]() { return finish(s, rest, b.getInt64(0)); });
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
  absl::Status as = EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "arrive", [&]() {
    llvm::Value* old = b.CreateAtomicRMW(llvm::AtomicRMWInst::Add, counter, b.getInt32(1), llvm::Align(4),
                                         llvm::AtomicOrdering::Monotonic);
    llvm::Value* last = b.CreateICmpEQ(old, b.getInt32(static_cast<uint32_t>(k.launch.grid_x - 1)));
    b.CreateStore(b.CreateZExt(last, b.getInt32Ty()), flag_ptr);
    return absl::OkStatus();
  });
  if (!as.ok()) return as;
  k.Barrier();
  llvm::Value* is_last = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), flag_ptr), b.getInt32(0));
  absl::Status ls = EmitIf(b, is_last, "last", [&]() -> absl::Status {
    b.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
    // One output's partials s = start, start + step, ... < S folded in order, four loads at a
    // time (issued before their folds so that they are in flight together).
    auto fold_partials = [&](llvm::Value* o, llvm::Value* start, int64_t step) -> absl::Status {
      auto load = [&](llvm::Value* sp) {
        llvm::Value* slot = b.CreateAdd(b.CreateMul(sp, b.getInt64(p.B * p.C)), o);
        std::vector<llvm::Value*> part;
        for (size_t a = 0; a < accs.size(); ++a) {
          llvm::LoadInst* ld = b.CreateLoad(acc_type(a), partial_ptr(a, slot));
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
          absl::StatusOr<std::vector<llvm::Value*>> n = combine(load_accs(), part);
          if (!n.ok()) return n.status();
          store_accs(*n);
        }
        return absl::OkStatus();
      });
      if (!qs.ok()) return qs;
      return EmitStridedLoop(b, b.CreateMul(quads, b.getInt64(4)), count, b.getInt64(1), "partials1", [&](llvm::Value* i) {
        absl::StatusOr<std::vector<llvm::Value*>> n =
            combine(load_accs(), load(b.CreateAdd(start, b.CreateMul(i, b.getInt64(step)))));
        if (!n.ok()) return n.status();
        store_accs(*n);
        return absl::OkStatus();
      });
    };
    absl::Status os;
    if (p.B * p.C < warps) {
      // Few outputs (full reductions): the whole block folds each one; threads take splits
      // tid, tid + block, ..., then the warps combine in order through shared memory.
      os = EmitStridedLoop(b, b.getInt64(0), b.getInt64(p.B * p.C), b.getInt64(1), "outputs",
                           [&](llvm::Value* o) -> absl::Status {
        if (absl::Status is = init_accs(); !is.ok()) return is;
        if (absl::Status fs = fold_partials(o, tid, block); !fs.ok()) return fs;
        absl::Status ws = block_combine("final", [&]() {
          return write_outputs(b.CreateUDiv(o, b.getInt64(p.C)), b.CreateURem(o, b.getInt64(p.C)));
        });
        if (!ws.ok()) return ws;
        k.Barrier();
        return absl::OkStatus();
      });
    } else {
      // Many outputs (columns): a thread per output (consecutive threads read consecutive
      // partials), splits in order.
      os = EmitStridedLoop(b, tid, b.getInt64(p.B * p.C), b.getInt64(block), "outputs", [&](llvm::Value* o) -> absl::Status {
        if (absl::Status is = init_accs(); !is.ok()) return is;
        if (absl::Status fs = fold_partials(o, b.getInt64(0), 1); !fs.ok()) return fs;
        return write_outputs(b.CreateUDiv(o, b.getInt64(p.C)), b.CreateURem(o, b.getInt64(p.C)));
      });
    }
    if (!os.ok()) return os;
    // Ready for the next launch.
    return EmitIf(b, b.CreateICmpEQ(tid, b.getInt64(0)), "reset", [&]() {
      b.CreateStore(b.getInt32(0), counter);
      return absl::OkStatus();
    });
  });
  if (!ls.ok()) return ls;
  return true;
}

}  // namespace hloc::codegen::gpu
