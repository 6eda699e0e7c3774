// The split-reduction plan (see gpu_reduction_split.h): the [B, R, C] view of a fusion's reduce
// input, the parameters read along elementwise/transpose paths, and 32-bit index arithmetic.
#include "codegen/gpu/gpu_reduction_split.h"

#include <algorithm>
#include <set>

#include "passes/fusion/fusion_analysis.h"

namespace hloc::codegen::gpu {
namespace {

bool Dims(const Shape& s, const std::vector<int64_t>& d) { return s.IsArray() && s.dimensions() == d; }
int64_t Product(const std::vector<int64_t>& d) {
  int64_t n = 1;
  for (int64_t x : d) n *= x;
  return n;
}

}  // namespace

// The row-major index of `linear` into `dims`, with 32-bit division when the dimensions' product
// allows (64-bit division by a constant costs several times more on the GPU).
IrArray::Index DelinearizeNarrow(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b) {
  int64_t total = 1;
  for (int64_t d : dims) total *= std::max<int64_t>(1, d);
  if (dims.size() <= 1 || total >= (int64_t{1} << 31)) return DelinearizeRowMajor(linear, dims, b);
  llvm::Value* rest = b.CreateTrunc(linear, b.getInt32Ty());
  std::vector<llvm::Value*> idx(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      idx[d] = b.CreateZExt(rest, b.getInt64Ty());
      break;
    }
    llvm::Value* size = b.getInt32(static_cast<uint32_t>(std::max<int64_t>(1, dims[d])));
    idx[d] = b.CreateZExt(b.CreateURem(rest, size), b.getInt64Ty());
    rest = b.CreateUDiv(rest, size);
  }
  return IrArray::Index(idx);
}

// Parameters whose elements a reduce reads through elementwise ops, copies and transposes only:
// param index[i] = reduce input index[map[i]]. A parameter reached along two different paths
// (or through anything else as well) is left out.
std::map<int64_t, std::vector<int64_t>> TraceParameters(const SplitPlan& p) {
  std::map<int64_t, std::vector<int64_t>> found;
  std::set<int64_t> bad;
  std::vector<std::pair<const HloInstruction*, std::vector<int64_t>>> work;
  std::vector<int64_t> ident;
  for (size_t i = 0; i < p.in_dims.size(); ++i) ident.push_back(static_cast<int64_t>(i));
  for (const HloInstruction* r : p.reduces)
    for (int64_t i = 0; i < r->operand_count() / 2; ++i) work.push_back({r->operand(i), ident});
  int64_t budget = 4096;  // a DAG walked as a tree: bounded
  while (!work.empty() && budget-- > 0) {
    auto [inst, map] = work.back();
    work.pop_back();
    switch (inst->opcode()) {
      case HloOpcode::kParameter: {
        const int64_t pn = inst->attrs().parameter_number;
        auto it = found.find(pn);
        if (it != found.end() && it->second != map) bad.insert(pn);
        found[pn] = map;
        continue;
      }
      case HloOpcode::kCopy:
        work.push_back({inst->operand(0), map});
        continue;
      case HloOpcode::kTranspose: {
        const std::vector<int64_t>& perm = inst->attrs().dimensions;
        if (perm.size() != map.size()) continue;
        std::vector<int64_t> next(map.size());
        for (size_t i = 0; i < perm.size(); ++i) next[perm[i]] = map[i];
        work.push_back({inst->operand(0), next});
        continue;
      }
      default:
        if (!inst->IsElementwise() || !inst->shape().IsArray()) continue;
        for (const HloInstruction* op : inst->operands())
          if (op->shape().IsArray() && op->shape().dimensions() == inst->shape().dimensions())
            work.push_back({op, map});
        continue;
    }
  }
  if (!work.empty()) return {};
  for (int64_t pn : bad) found.erase(pn);
  return found;
}

std::optional<ReduceHead> AnalyzeReduceHead(const HloComputation& fused) {
  ReduceHead h;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
    if (inst->opcode() == HloOpcode::kReduce) h.reduces.push_back(inst);
  if (h.reduces.empty()) return std::nullopt;
  h.in_dims = h.reduces[0]->operand(0)->shape().dimensions();
  h.reduced = h.reduces[0]->attrs().dimensions;
  std::sort(h.reduced.begin(), h.reduced.end());
  if (h.reduced.empty()) return std::nullopt;
  return h;
}

std::optional<SplitPlan> AnalyzeSplit(const HloComputation& fused) {
  SplitPlan p;
  const auto order = fused.MakeInstructionPostOrder();
  std::optional<ReduceHead> head = AnalyzeReduceHead(fused);
  if (!head) return std::nullopt;
  p.reduces = head->reduces;
  p.in_dims = head->in_dims;
  const int64_t rank = static_cast<int64_t>(p.in_dims.size());
  const std::vector<int64_t>& red = head->reduced;
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
  std::set<const HloInstruction*> reshaped_outputs;  // may only be outputs (read by nothing else)
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
    for (const HloInstruction* op : inst->operands())
      if (reshaped_outputs.count(op) && inst->opcode() != HloOpcode::kTuple) return std::nullopt;
    dep.insert(inst);
    switch (inst->opcode()) {
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kReshape:
        // keepdims: a reshape of the reduced value to another shape of its element count (a
        // reduce to f32[64] then f32[1,1,1,64]) may be an output; the row-major order is kept.
        if (Dims(inst->operand(0)->shape(), p.kept_dims) && !Dims(inst->shape(), p.kept_dims) &&
            inst->shape().IsArray() && inst->shape().num_elements() == Product(p.kept_dims)) {
          reshaped_outputs.insert(inst);
          continue;
        }
        [[fallthrough]];
      case HloOpcode::kBitcast:
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
      if (reshaped_outputs.count(o)) {
        p.outputs.push_back({o, -1, false, /*reshaped=*/true});
        return true;
      }
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

namespace {

// The fused computation's parameters by number.
struct FusionParams {
  int64_t count = 0;
  std::map<int64_t, const HloInstruction*> by_number;
};

FusionParams CollectParams(const HloComputation& fused) {
  FusionParams fp;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
    if (inst->opcode() == HloOpcode::kParameter) {
      ++fp.count;
      fp.by_number[inst->attrs().parameter_number] = inst;
    }
  return fp;
}

// The traced parameters that can be read V at a time along input dimension `fast` go into
// lp.vector_params; returns the widest one's element bytes (1 when none).
int64_t PickVectorParams(int64_t fast, const std::map<int64_t, std::vector<int64_t>>& traced, const FusionParams& fp,
                         const std::vector<Shape>& operands, SplitLaunchPlan& lp) {
  int64_t max_bytes = 1;
  if (static_cast<int64_t>(operands.size()) != fp.count) return max_bytes;
  for (const auto& [pn, pmap] : traced) {
    if (!fp.by_number.count(pn) || pn >= fp.count) continue;
    const Shape& ps = fp.by_number.at(pn)->shape();
    const Shape& os = operands[pn];
    const PrimitiveType t = ps.element_type();
    const bool plain = t == PrimitiveType::F16 || t == PrimitiveType::BF16 || t == PrimitiveType::F32 ||
                       t == PrimitiveType::F64 || t == PrimitiveType::S32 || t == PrimitiveType::U32;
    if (!plain || !os.IsArray() || os.dimensions() != ps.dimensions() || os.element_type() != t ||
        MinorToMajorOf(os) != MinorToMajorOf(ps) || ps.rank() == 0)
      continue;
    if (pmap[MinorToMajorOf(ps)[0]] != fast) continue;
    lp.vector_params[pn] = pmap;
    max_bytes = std::max<int64_t>(max_bytes, ByteWidth(t));
  }
  return max_bytes;
}

// Columns (C > 1): each thread folds V adjacent columns (one vector load per row and parameter
// whose minor dimension is the input's last), a block covers 32*V columns.
void PlanColumnVectors(const SplitPlan& p, const std::map<int64_t, std::vector<int64_t>>& traced,
                       const FusionParams& fp, const std::vector<Shape>& operands, SplitLaunchPlan& lp) {
  lp.fast_dim = static_cast<int64_t>(p.in_dims.size()) - 1;
  const int64_t max_bytes = PickVectorParams(lp.fast_dim, traced, fp, operands, lp);
  lp.V = lp.vector_params.empty() ? 1 : 16 / max_bytes;
  while (lp.V > 1 && (p.in_dims[lp.fast_dim] % lp.V != 0 || p.C < 32 * lp.V)) lp.V /= 2;
  // The transposing tile (32 x (32V+1) per accumulator) must fit in shared memory.
  int64_t acc_bytes = 0;
  for (const HloInstruction* r : p.reduces) acc_bytes += std::max(4, ByteWidth(r->shape().element_type()));
  while (lp.V > 1 && 32 * (32 * lp.V + 1) * acc_bytes > 40 * 1024) lp.V /= 2;
  if (lp.V == 1) lp.vector_params.clear();
}

// Rows (C == 1): the reduced dimensions are walked in the physical order of the largest
// parameter the reduces read (through elementwise ops and transposes; conv_train_step's loss
// reads two transposed NHWC arrays), so that consecutive threads read consecutive addresses;
// when that order's fastest dimension is the parameters' minor one, each thread folds V
// consecutive elements read with one vector load per parameter.
void PlanRowOrderAndVectors(SplitPlan& p, std::map<int64_t, std::vector<int64_t>>& traced, const FusionParams& fp,
                            const std::vector<Shape>& operands, SplitLaunchPlan& lp) {
  int64_t primary = -1, primary_bytes = -1;
  for (const auto& [pn, map] : traced) {
    if (!fp.by_number.count(pn) || !fp.by_number.at(pn)->shape().IsArray()) continue;
    const int64_t bytes = fp.by_number.at(pn)->shape().byte_size();
    if (bytes > primary_bytes) primary = pn, primary_bytes = bytes;
  }
  if (primary < 0) return;
  const std::vector<int64_t>& map = traced[primary];
  std::set<int64_t> reduced(p.r_dims.begin(), p.r_dims.end());
  std::vector<int64_t> order;  // reduced input dimensions, fastest first
  for (int64_t m : MinorToMajorOf(fp.by_number.at(primary)->shape()))
    if (m >= 0 && m < static_cast<int64_t>(map.size()) && reduced.count(map[m])) order.push_back(map[m]);
  if (order.size() != p.r_dims.size()) return;
  p.r_dims.assign(order.rbegin(), order.rend());
  // Vector loads: parameters whose minor dimension is the fastest reduced one.
  const int64_t fast = order.front();
  lp.fast_dim = fast;
  const int64_t max_bytes = PickVectorParams(fast, traced, fp, operands, lp);
  lp.V = lp.vector_params.empty() ? 1 : 16 / max_bytes;
  while (lp.V > 1 && p.in_dims[fast] % lp.V != 0) lp.V /= 2;
  if (lp.V == 1) lp.vector_params.clear();
}

// Blocks, column tiles, splits of R and the grid.
void PlanUnits(const SplitPlan& p, const GpuDeviceInfo& dev, SplitLaunchPlan& lp) {
  lp.block = lp.column ? 1024 : 256;
  lp.tile_cols = lp.column ? 32 * lp.V : 1;
  lp.tiles = lp.column ? (p.C + lp.tile_cols - 1) / lp.tile_cols : 1;
  // Blocks that fit an SM by threads. A long fused chain (numpyro's lgamma/digamma: 370
  // instructions) needs more registers than a full SM of threads leaves each (32): asked for
  // that occupancy, ptxas spilled 32 KB a thread and the kernel ran 10x slower. Such chains are
  // planned for half the blocks and let ptxas take the registers it needs; so are the reductions
  // that are not `light` (above), with 64 registers a thread asked for.
  const int64_t fit = std::max<int64_t>(1, dev.max_threads_per_sm / lp.block);
  lp.per_sm = lp.light ? fit : std::max<int64_t>(1, fit / 2);
  const int64_t resident = lp.per_sm * dev.sm_count;
  const int64_t base_units = p.B * lp.tiles;
  // Split R until about one wave of resident blocks is busy; each split keeps enough rows
  // (columns: 64 rows, rows: 8 elements a thread) to amortize its partial.
  // At most one wave of resident blocks (the kernel asks ptxas for that occupancy below): a
  // second, partial wave would cost as much as the first.
  lp.S = 1;
  if (base_units < resident) {
    const int64_t min_chunk = lp.column ? 64 : lp.block * 8;
    lp.S = std::max<int64_t>(1, std::min(resident / base_units, p.R / min_chunk));
    // Keep the scratch small.
    while (lp.S > 1 && lp.S * p.B * p.C > (int64_t{1} << 22)) lp.S /= 2;
  }
  lp.chunk = ((p.R + lp.S - 1) / lp.S + lp.V - 1) / lp.V * lp.V;  // a multiple of V
  lp.units = base_units * lp.S;
  lp.grid = std::max<int64_t>(1, std::min(lp.units, resident * dev.waves));
  // The split assumes `resident` blocks run at once: ask ptxas for that many per SM.
  if (lp.S > 1 && !lp.long_chain) lp.min_blocks_per_sm = lp.per_sm;
}

}  // namespace

// Column reductions that are faster as the loop kernel (a thread per output folding its R
// elements, reads coalesced along C) than as 32x32 tiles: XLA's rule from its sweep of small
// column reductions (IsUnnestedReductionFasterThanElemental, in warps of 32). With R = 7 or 8
// (diffrax's Runge-Kutta stage sums, MoE's top-2 combine: dots with a vector operand after
// dot-strength-reduction) the tiles left 3/4 of their threads idle and ran ~15x above the
// memory floor. Only when every output has the reduced shape: outputs of the input's shape
// need the split emitter's walk over the input.
bool ColumnPrefersLoop(const SplitPlan& p) {
  if (p.C <= 1) return false;
  for (const SplitPlan::Output& o : p.outputs)
    if (o.is_input) return false;
  constexpr int64_t kWarp = 32;
  return p.R < kWarp || (p.R < 2 * kWarp && p.C < kWarp) || (p.R < 4 * kWarp && p.C < 8) ||
         (p.R < 8 * kWarp && p.C < 3);
}

bool SplitReductionApplies(const HloComputation& fused) { return AnalyzeSplit(fused).has_value(); }

std::optional<SplitPlan> SplitReductionFor(const HloComputation& fused, size_t num_outputs) {
  std::optional<SplitPlan> plan = AnalyzeSplit(fused);
  if (!plan || plan->outputs.size() != num_outputs) return std::nullopt;
  if (plan->B * plan->C == 0 || plan->R == 0) return std::nullopt;  // the loop kernel writes the inits
  if (ColumnPrefersLoop(*plan)) return std::nullopt;
  return plan;
}

SplitLaunchPlan ComputeSplitLaunchPlan(SplitPlan& p, const HloComputation& fused, const std::vector<Shape>& operands,
                                       size_t num_outputs, const GpuDeviceInfo& dev) {
  SplitLaunchPlan lp;
  lp.column = p.C > 1;
  // A long fused chain is computed one element at a time (no vectors, no unrolling), at half
  // occupancy: see kLongChainInstructions.
  lp.long_chain = fused.instruction_count() > kLongChainInstructions;
  // Full occupancy leaves a thread 32 registers; the unrolled, vectorized fold of more than
  // one result or of a costlier element spilled there (numpyro's exp/log reduce: 600 bytes a
  // thread, 4x its memory time; the column reductions of several results in ViT, U-Net, GRU).
  int64_t element_cost = 0;
  for (const auto& i : fused.instructions()) element_cost += fusion::RelativeCost(i->opcode());
  lp.light = !lp.long_chain && num_outputs == 1 && element_cost <= dev.split_reduction_light_cost;
  // Vectors only for single-result reducers (the order of a variadic reducer's ties is left
  // alone).
  bool single = true;
  for (const HloInstruction* r : p.reduces) single = single && r->operand_count() == 2;
  std::map<int64_t, std::vector<int64_t>> traced = single ? TraceParameters(p) : std::map<int64_t, std::vector<int64_t>>();
  const FusionParams fp = CollectParams(fused);
  if (lp.column && single && !traced.empty() && !lp.long_chain) PlanColumnVectors(p, traced, fp, operands, lp);
  if (!lp.column && !lp.long_chain) PlanRowOrderAndVectors(p, traced, fp, operands, lp);
  PlanUnits(p, dev, lp);
  // for (i = start; i < end; i += step), U at a time while U fit. A long chain is not unrolled:
  // U copies of it (4 x V elements) outgrow the registers (numpyro: 32 KB of spills a thread).
  // Others than `light` ones unroll only while the loads in flight (U x V elements of each
  // parameter) fit half of their 64 registers: numpyro's exp/log reduce of 3 parameters with
  // V = 4 spilled 176 bytes a thread at U = 4.
  const int64_t loaded = std::max<int64_t>(1, lp.V * fused.num_parameters());
  lp.U = lp.long_chain ? 1 : lp.light ? 4 : std::clamp<int64_t>(32 / loaded, 1, 4);
  return lp;
}

}  // namespace hloc::codegen::gpu
