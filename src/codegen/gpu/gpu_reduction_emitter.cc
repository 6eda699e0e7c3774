// Row reductions and the normalization / softmax chains the fusion stage makes (XLA's
// ReductionFusion, xla/backends/gpu/codegen/emitters/reduction.cc, and its "multi-row"
// variant for short rows). A fusion qualifies when every reduce in it reduces the trailing
// dimensions of one input shape [kept..., reduced...] and whatever depends on a reduce stays
// on the same row (elementwise ops, broadcasts of [kept...] back over the row, and reshapes or
// row-major bitcasts between shapes of the row's element count, such as a layernorm whose root
// is a reshape of bf16[8,1024,1024] to bf16[8192,1024]: a reshape keeps the row-major element
// order, so element (row, c) is linear element row * row_len + c of every such shape). Then:
//   - a row is owned by one warp (rows up to row_reduction_warp_row_max_elements, 512: several
//     rows per block) or by one block (longer rows; partials combined through shared memory);
//     the launch plan's numbers are the profile's tuning (engine/tuning.h, GpuDeviceInfo);
//   - the reduces run in order; each thread folds a strided part of the row with the reducer,
//     the warp combines with butterfly shuffles (every lane ends with the row's value), the
//     block through shared memory; later reduces and the outputs read the row's value;
//   - outputs of the row's element count are written in a last pass over the row, outputs of
//     the reduced shape by the row's first thread.
// Rows that split evenly over their threads (each thread owning K <= 32 elements) are kept in
// registers: every thread loads its share of each row-shaped input once, with 16-byte vector
// loads (bf16 x8, f32 x4: thread t owns the V-element groups t, t + threads, ...), and the
// passes of the chain and the row-shaped outputs (vector stores) reuse those values instead of
// re-reading memory. The next row's vectors are loaded while the current row is reduced (a
// block walks its rows in turn, and the loads would otherwise wait behind the barriers), and
// inputs broadcast along the rows (layernorm's scale and bias) are read with vector loads too.
// Long rows use few threads with several vectors each (fewer warps meeting at each barrier,
// more loads in flight per thread). Other rows fold a strided part per thread and recompute
// what a chain needs again (x in softmax) from the inputs, which the second pass finds in L1/L2.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "codegen/gpu/gpu_reduction_split.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

using Dims = std::vector<int64_t>;

struct RowPlan {
  Dims in_dims, kept_dims, reduced_dims;
  int64_t rows = 1, row_len = 1;
  std::vector<const HloInstruction*> reduces;  // post order
  std::vector<const HloInstruction*> outputs;
  std::vector<bool> output_is_row;
  // Shapes other than in_dims / kept_dims that values of the row's / the reduced element count
  // take (reshape operands and results, parameters, outputs): each gets its own index of the
  // element being generated, so reshapes between them map indices without div/mod.
  std::set<Dims> row_shapes, kept_shapes;
};

bool SameDims(const Shape& s, const Dims& dims) { return s.IsArray() && s.dimensions() == dims; }

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A reshape, or a bitcast that is one (row-major layouts on both sides, one element type).
bool IsReshapeLike(const HloInstruction* inst) {
  if (inst->opcode() == HloOpcode::kReshape) return true;
  if (inst->opcode() != HloOpcode::kBitcast) return false;
  const Shape& a = inst->shape();
  const Shape& b = inst->operand(0)->shape();
  return a.IsArray() && b.IsArray() && a.element_type() == b.element_type() && IsRowMajorLayout(a) &&
         IsRowMajorLayout(b);
}

std::optional<RowPlan> Analyze(const HloComputation& fused) {
  RowPlan p;
  const auto order = fused.MakeInstructionPostOrder();
  std::optional<ReduceHead> head = AnalyzeReduceHead(fused);
  if (!head) return std::nullopt;
  p.reduces = head->reduces;
  p.in_dims = head->in_dims;
  const int64_t rank = static_cast<int64_t>(p.in_dims.size());
  const std::vector<int64_t>& red = head->reduced;
  for (size_t i = 0; i < red.size(); ++i)
    if (red[i] != rank - static_cast<int64_t>(red.size()) + static_cast<int64_t>(i)) return std::nullopt;
  const int64_t nk = rank - static_cast<int64_t>(red.size());
  p.kept_dims.assign(p.in_dims.begin(), p.in_dims.begin() + nk);
  p.reduced_dims.assign(p.in_dims.begin() + nk, p.in_dims.end());
  p.rows = Count(p.kept_dims);
  p.row_len = Count(p.reduced_dims);
  const int64_t n_all = p.rows * p.row_len;
  // Shapes of the row's element count (or the reduced shape's) that are not in_dims (kept_dims):
  // only when the two counts differ, so that a shape says which one it is.
  auto row_space = [&](const Shape& s) {
    return s.IsArray() && (s.dimensions() == p.in_dims || (p.row_len > 1 && Count(s.dimensions()) == n_all));
  };
  auto kept_space = [&](const Shape& s) {
    return s.IsArray() && (s.dimensions() == p.kept_dims || (p.row_len > 1 && Count(s.dimensions()) == p.rows));
  };
  for (const HloInstruction* r : p.reduces) {
    std::vector<int64_t> d = r->attrs().dimensions;
    std::sort(d.begin(), d.end());
    if (d != red || r->to_apply() == nullptr) return std::nullopt;
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i)
      if (!SameDims(r->operand(i)->shape(), p.in_dims)) return std::nullopt;
  }
  auto note_shape = [&](const Shape& s) {
    if (!s.IsArray()) return;
    if (s.dimensions() != p.in_dims && row_space(s)) p.row_shapes.insert(s.dimensions());
    if (s.dimensions() != p.kept_dims && kept_space(s)) p.kept_shapes.insert(s.dimensions());
  };
  // What depends on a reduce must keep rows apart: elementwise ops over row- or kept-shaped
  // values, broadcasts of kept-shaped values along the row, reshapes within the row's (or the
  // reduced) element count, tuple pieces of variadic reduces.
  std::set<const HloInstruction*> dep;
  for (const HloInstruction* inst : order) {
    if (inst->opcode() == HloOpcode::kParameter) note_shape(inst->shape());
    if (IsReshapeLike(inst)) {
      note_shape(inst->shape());
      note_shape(inst->operand(0)->shape());
    }
    bool d = inst->opcode() == HloOpcode::kReduce;
    for (const HloInstruction* op : inst->operands()) d = d || dep.count(op) > 0;
    if (!d) continue;
    dep.insert(inst);
    const Shape& s = inst->shape();
    switch (inst->opcode()) {
      case HloOpcode::kReduce:
        for (int64_t i = inst->operand_count() / 2; i < inst->operand_count(); ++i)
          if (dep.count(inst->operand(i))) return std::nullopt;  // an init value computed from a row
        continue;
      case HloOpcode::kGetTupleElement:
      case HloOpcode::kTuple:
        continue;
      case HloOpcode::kBroadcast: {
        const Shape& os = inst->operand(0)->shape();
        if (!SameDims(os, p.kept_dims)) return std::nullopt;
        std::vector<int64_t> ident;
        for (int64_t i = 0; i < nk; ++i) ident.push_back(i);
        if (inst->attrs().dimensions != ident) return std::nullopt;
        if (!SameDims(s, p.in_dims) && !SameDims(s, p.kept_dims)) return std::nullopt;
        continue;
      }
      case HloOpcode::kBitcast:
      case HloOpcode::kReshape:
      case HloOpcode::kCopy: {
        const Shape& os = inst->operand(0)->shape();
        if (inst->opcode() == HloOpcode::kBitcast && !IsReshapeLike(inst) &&
            !(s.IsArray() && os.IsArray() && s.dimensions() == os.dimensions() &&
              MinorToMajorOf(s) == MinorToMajorOf(os)))
          return std::nullopt;
        if (SameDims(s, os.dimensions())) continue;
        if (inst->opcode() == HloOpcode::kCopy) return std::nullopt;
        if ((row_space(s) && row_space(os)) || (kept_space(s) && kept_space(os))) continue;
        return std::nullopt;
      }
      default:
        if (!inst->IsElementwise()) return std::nullopt;
        if (!row_space(s) && !kept_space(s)) return std::nullopt;
        for (const HloInstruction* op : inst->operands())
          if (!SameDims(op->shape(), s.dimensions()) && op->shape().rank() != 0) return std::nullopt;
        continue;
    }
  }
  const HloInstruction* root = fused.root_instruction();
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* op : root->operands()) p.outputs.push_back(op);
  } else if (root->shape().IsTuple()) {
    return std::nullopt;  // a variadic reduce root: the loop kernel splits its struct
  } else {
    p.outputs.push_back(root);
  }
  for (const HloInstruction* o : p.outputs) {
    if (!o->shape().IsArray()) return std::nullopt;
    note_shape(o->shape());
    if (row_space(o->shape())) {
      p.output_is_row.push_back(true);
    } else if (kept_space(o->shape())) {
      p.output_is_row.push_back(false);
    } else {
      return std::nullopt;
    }
  }
  return p;
}

llvm::Value* RowMajorLinear(const IrArray::Index& index, const Dims& dims, llvm::IRBuilderBase& b) {
  llvm::Value* linear = b.getInt64(0);
  for (size_t d = 0; d < dims.size() && d < index.size(); ++d)
    linear = b.CreateAdd(b.CreateMul(linear, b.getInt64(dims[d])), index[d]);
  return linear;
}

bool PlainType(PrimitiveType t) {
  return t == PrimitiveType::F16 || t == PrimitiveType::BF16 || t == PrimitiveType::F32 || t == PrimitiveType::F64 ||
         t == PrimitiveType::S32 || t == PrimitiveType::U32 || t == PrimitiveType::S64 || t == PrimitiveType::U64;
}

// The index of the element being generated in every shape the plan names, and the values of
// the inputs the register row loaded for it (the generators below match indices by identity).
struct ElementContext {
  int64_t j = -1;  // the element of the thread's share being generated; -1: none
  std::vector<std::map<Dims, IrArray::Index>> elem;  // per j
  std::map<Dims, IrArray::Index> kept;               // the current row
  std::map<int64_t, std::vector<llvm::Value*>> row_values;        // parameter -> per j
  std::map<int64_t, std::vector<llvm::Value*>> invariant_values;  // parameter -> per j
  std::vector<IrArray::Index> cidx;  // per j: the index into the reduced dimensions
};

}  // namespace

// gpu_reduction_split.cc: column reductions, and rows split across blocks.
bool SplitReductionApplies(const HloComputation& fused);
absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter);

absl::StatusOr<bool> TryEmitRowReduction(GpuKernel& k, const HloComputation& fused,
                                         const std::function<ElementGenerator(int64_t)>& parameter) {
  std::optional<RowPlan> plan = Analyze(fused);
  // Not rows (a column or non-trailing reduce): the split emitter, else the loop kernel.
  if (!plan) {
    absl::StatusOr<bool> split = TryEmitSplitReduction(k, fused, parameter);
    if (!split.ok() || *split) return split;
    // The loop kernel evaluates a reduce once per element that reads it: fine for a reduce
    // root, quadratic for a chain (a reduce broadcast back over its input). Say so for large
    // ones rather than leave a kernel seconds long unexplained.
    for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) {
      if (inst->opcode() != HloOpcode::kReduce || !inst->operand(0)->shape().IsArray()) continue;
      const int64_t in = Count(inst->operand(0)->shape().dimensions());
      for (const HloInstruction* user : inst->users()) {
        if (user->shape().IsArray() && user->opcode() != HloOpcode::kTuple &&
            Count(user->shape().dimensions()) > Count(inst->shape().IsArray() ? inst->shape().dimensions() : Dims{}) &&
            in >= (int64_t{1} << 20)) {
          std::fprintf(stderr,
                       "hloc: warning: kernel %s: reduce %%%s feeds %%%s and the fusion has no row or split "
                       "reduction form; the loop kernel recomputes the reduce for every element\n",
                       k.name.c_str(), inst->name().c_str(), user->name().c_str());
          return false;
        }
      }
    }
    return false;
  }
  if (plan->outputs.size() != k.outputs.size()) return false;
  llvm::IRBuilderBase& b = *k.b;
  llvm::LLVMContext& ctx = b.getContext();
  const int64_t rows = plan->rows, row_len = plan->row_len;
  if (rows == 0 || row_len == 0) return false;  // nothing to reduce: the loop kernel writes inits
  // A few long rows without chains (full reductions): a block per row would leave most SMs
  // idle; the split emitter spreads each row over many blocks.
  const GpuDeviceInfo& dev = *k.device;
  const bool long_rows = row_len >= dev.row_long_row_elements;
  if (rows < 2 * dev.sm_count && long_rows && SplitReductionApplies(fused))
    return TryEmitSplitReduction(k, fused, parameter);

  // Threads per row: a warp for short rows (several rows per block), a block for long ones, and
  // for rows shorter than a warp the next power of two (several rows per warp: numpyro's
  // [4194304, 2] sums left 30 of 32 lanes idle with a warp each; XLA packs such rows too).
  int64_t per_row = 32, rows_per_block = 1;
  if (row_len < 32) {
    // A long chain's reduced-shape epilogue runs on a row's first lane only: with several lanes
    // a row, the others would idle through it (numpyro's lgamma epilogues over [4194304, 2]).
    const bool long_chain = fused.instruction_count() > kLongChainInstructions;
    per_row = long_chain ? 1 : static_cast<int64_t>(llvm::PowerOf2Ceil(static_cast<uint64_t>(row_len)));
    rows_per_block = std::min<int64_t>(256 / per_row, rows);
  } else if (row_len <= dev.row_warp_row_max_elements) {
    rows_per_block = std::min<int64_t>(dev.row_warp_rows_per_block, rows);
  } else {
    per_row = long_rows && rows < 4 * dev.sm_count ? 1024 : row_len >= 2048 ? 512 : 256;
  }
  // Register rows: V consecutive elements per vector access; per_row shrinks so that every
  // thread owns a few vectors (latency: more loads in flight per thread, fewer warps per
  // barrier).
  int64_t vec = 1, per_thread = 0;
  {
    int min_bytes = 16;
    for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
      if (inst->opcode() == HloOpcode::kParameter && inst->shape().IsArray() &&
          Count(inst->shape().dimensions()) == rows * row_len)
        min_bytes = std::min(min_bytes, std::max(1, ByteWidth(inst->shape().element_type())));
    for (size_t o = 0; o < plan->outputs.size(); ++o)
      if (plan->output_is_row[o])
        min_bytes = std::min(min_bytes, std::max(1, ByteWidth(plan->outputs[o]->shape().element_type())));
    vec = 16 / min_bytes;
    if (rows_per_block == 1)
      while (per_row > 64 && row_len < per_row * vec * dev.row_vectors_per_thread) per_row /= 2;
    while (vec > 1 && row_len % (per_row * vec) != 0) vec /= 2;
    if (row_len % (per_row * vec) == 0 && row_len / per_row <= 32) per_thread = row_len / per_row;
    if (per_thread == 0) vec = 1;
  }
  // A chain over long rows that are not kept in registers (logsumexp's max then exp-sum over
  // 32000 logits) reads each row again in every pass after the first. Those re-reads come from
  // L1/L2 only while the rows of all resident blocks fit there: 1024-thread blocks (two per SM)
  // hold half the rows 512-thread blocks would (multi_output_fusion's cost model assumes this
  // when it puts a row max into such a chain).
  // Measured on the H200 (logsumexp_xent.large, 8192 x 32000 f32): 1024 threads 394-399 us,
  // 512 threads 398 us; walking the later passes backwards (for L1 hits) gained nothing.
  const bool rereads = per_thread == 0 && rows_per_block == 1 && plan->reduces.size() >= 2;
  if (rereads && long_rows) per_row = 1024;
  // Such rows fold U elements per loop trip (the same order as one at a time), so that each
  // warp has U loads in flight instead of waiting on every load before issuing the next.
  // (row_reduction_fold_unroll: H200, logsumexp_xent.large: U=1 429 us, U=4 399 us, U=8 400 us.)
  const int64_t fold_unroll = rereads && long_rows ? dev.row_fold_unroll : 1;
  const int64_t block = per_row * rows_per_block;
  const int64_t groups = (rows + rows_per_block - 1) / rows_per_block;
  const int64_t resident = std::max<int64_t>(1, k.device->max_threads_per_sm / block) * k.device->sm_count;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = block;
  k.launch.grid_x = std::max<int64_t>(1, std::min(groups, resident * k.device->waves));
  const int64_t warps_per_row = per_row / 32;

  // The row's value of each reduce lives in allocas its generator reads.
  std::map<const HloInstruction*, std::vector<llvm::AllocaInst*>> slots;
  std::map<const HloInstruction*, llvm::Type*> value_types;
  for (const HloInstruction* r : plan->reduces) {
    const int64_t n = r->operand_count() / 2;
    std::vector<llvm::Type*> types;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = r->shape().IsTuple() ? r->shape().tuple_shapes(i) : r->shape();
      llvm::Type* t = PrimitiveTypeToIrType(s.element_type(), ctx);
      types.push_back(t);
      slots[r].push_back(EntryAlloca(b, t, absl::StrCat(r->name(), ".value", i)));
    }
    value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
  llvm::IRBuilderBase* bp = &b;
  // Which parameters a register row loads with vectors: row-major kernel operands whose value
  // type is their storage type (floats and 32/64-bit integers), either of the row's element
  // count (row_params) or of the reduced shape, broadcast along the rows (invariant_params).
  std::set<int64_t> row_params, invariant_params;
  std::map<int64_t, Dims> param_dims;
  if (per_thread > 0) {
    int64_t nparams = 0;
    for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
      nparams += inst->opcode() == HloOpcode::kParameter;
    if (static_cast<int64_t>(k.operands.size()) == nparams) {
      for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) {
        if (inst->opcode() != HloOpcode::kParameter || !inst->shape().IsArray()) continue;
        const int64_t pn = inst->attrs().parameter_number;
        if (pn < 0 || pn >= nparams) continue;
        const Shape& os = k.operands[pn].shape();
        const PrimitiveType t = inst->shape().element_type();
        if (!PlainType(t) || !os.IsArray() || os.dimensions() != inst->shape().dimensions() ||
            os.element_type() != t || !IsRowMajorLayout(os))
          continue;
        const Dims& d = inst->shape().dimensions();
        param_dims[pn] = d;
        if (d == plan->in_dims || plan->row_shapes.count(d)) {
          row_params.insert(pn);
        } else if (d == plan->reduced_dims && rows > 1) {
          invariant_params.insert(pn);
        }
      }
    }
  }
  ElementContext ec;
  ElementContext* cp = &ec;
  auto row_parameter = [&](int64_t pn) -> ElementGenerator {
    ElementGenerator orig = parameter(pn);
    if (!row_params.count(pn) && !invariant_params.count(pn)) return orig;
    const Dims dims = param_dims[pn];
    return [orig, pn, dims, cp](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      if (cp->j >= 0) {
        auto rv = cp->row_values.find(pn);
        if (rv != cp->row_values.end()) {
          auto it = cp->elem[cp->j].find(dims);
          if (it != cp->elem[cp->j].end() && it->second.multidim == index.multidim) return rv->second[cp->j];
        }
        auto iv = cp->invariant_values.find(pn);
        if (iv != cp->invariant_values.end() && index.multidim == cp->cidx[cp->j].multidim)
          return iv->second[cp->j];
      }
      return orig(index);
    };
  };
  auto gens_holder = std::make_shared<std::shared_ptr<GeneratorMap>>();
  absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = MakeFusionGenerators(
      *k.emitter, fused, row_parameter, [&](const HloInstruction* inst) -> ElementGenerator {
        if (IsReshapeLike(inst)) {
          // Reshapes within the row's (or reduced) element count: the element being generated
          // has an index in both shapes already; others go through the row-major linear index.
          const HloInstruction* op = inst->operand(0);
          const Dims to = inst->shape().dimensions(), from = op->shape().dimensions();
          auto holder = gens_holder;
          return [cp, to, from, op, holder, bp](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
            auto it = (*holder)->find(op);
            if (it == (*holder)->end()) return absl::InternalError("no generator for a reshape operand");
            auto known = [&](const std::map<Dims, IrArray::Index>& m) -> const IrArray::Index* {
              auto t = m.find(to);
              if (t == m.end() || t->second.multidim != index.multidim) return nullptr;
              auto f = m.find(from);
              return f == m.end() ? nullptr : &f->second;
            };
            const IrArray::Index* in = cp->j >= 0 ? known(cp->elem[cp->j]) : nullptr;
            if (in == nullptr) in = known(cp->kept);
            if (in != nullptr) return it->second(*in);
            return it->second(DelinearizeRowMajor(RowMajorLinear(index, to, *bp), from, *bp));
          };
        }
        if (inst->opcode() != HloOpcode::kReduce) return ElementGenerator();
        return AccumulatorGenerator(slots[inst], value_types[inst], bp);
      });
  if (!gens.ok()) return gens.status();
  *gens_holder = *gens;
  auto gen_of = [&](const HloInstruction* inst) { return GeneratorOf(**gens, inst); };
  // Shared memory for the block-wide combine: one slot per warp and accumulator.
  std::map<const HloInstruction*, std::vector<llvm::Value*>> shared;
  if (warps_per_row > 1) {
    for (const HloInstruction* r : plan->reduces)
      for (size_t i = 0; i < slots[r].size(); ++i)
        shared[r].push_back(k.SharedArray(slots[r][i]->getAllocatedType(), warps_per_row,
                                          absl::StrCat("partials.", PtxKernelName(r->name()), ".", i)));
  }

  llvm::Value* tid = k.ThreadIdX();
  llvm::Value* lane = b.CreateURem(tid, b.getInt64(per_row), "lane");
  llvm::Value* row_in_block = b.CreateUDiv(tid, b.getInt64(per_row));
  llvm::Value* warp = b.CreateUDiv(lane, b.getInt64(32), "warp");
  const bool in_registers = per_thread > 0;
  // Register rows: the thread's elements c_j = lane*V + (j/V)*per_row*V + j%V of every row.
  std::vector<llvm::Value*> cj;
  if (in_registers) {
    for (int64_t j = 0; j < per_thread; ++j) {
      cj.push_back(b.CreateAdd(b.CreateMul(lane, b.getInt64(vec)), b.getInt64((j / vec) * per_row * vec + j % vec)));
      ec.cidx.push_back(DelinearizeRowMajor(cj.back(), plan->reduced_dims, b));
    }
  }
  // Vector loads of parameter `pn` at linear element `linear` (a multiple of V).
  auto load_vector = [&](int64_t pn, llvm::Value* linear) -> llvm::Value* {
    const IrArray& a = k.operands[pn];
    const PrimitiveType t = a.shape().element_type();
    llvm::Type* et = PrimitiveTypeToIrType(t, ctx);
    llvm::Value* addr = b.CreateInBoundsGEP(et, a.base(), {linear});
    return b.CreateAlignedLoad(llvm::FixedVectorType::get(et, vec), addr,
                               llvm::Align(std::min<int64_t>(16, vec * ByteWidth(t))));
  };
  // The next row's vectors of each row parameter, loaded ahead (see the file comment).
  std::map<int64_t, std::vector<llvm::AllocaInst*>> ahead;
  auto load_ahead = [&](llvm::Value* row) {
    for (int64_t pn : row_params) {
      for (int64_t j = 0; j < per_thread; j += vec) {
        llvm::Value* linear = b.CreateAdd(b.CreateMul(row, b.getInt64(row_len)), cj[j]);
        b.CreateStore(load_vector(pn, linear), ahead[pn][j / vec]);
      }
    }
  };
  const bool prefetch = in_registers && !row_params.empty();
  if (prefetch) {
    for (int64_t pn : row_params) {
      llvm::Type* vt = llvm::FixedVectorType::get(PrimitiveTypeToIrType(k.operands[pn].shape().element_type(), ctx), vec);
      for (int64_t j = 0; j < per_thread; j += vec)
        ahead[pn].push_back(EntryAlloca(b, vt, absl::StrCat("ahead.", pn, ".", j / vec)));
    }
    llvm::Value* first = b.CreateAdd(b.CreateMul(k.BlockIdX(), b.getInt64(rows_per_block)), row_in_block);
    absl::Status fs = EmitIf(b, b.CreateICmpULT(first, b.getInt64(rows)), "ahead.first", [&]() {
      load_ahead(first);
      return absl::OkStatus();
    });
    if (!fs.ok()) return fs;
  }

  absl::Status s = EmitStridedLoop(
      b, k.BlockIdX(), b.getInt64(groups), b.getInt64(k.launch.grid_x), "rows", [&](llvm::Value* g) -> absl::Status {
        llvm::Value* row = b.CreateAdd(b.CreateMul(g, b.getInt64(rows_per_block)), row_in_block, "row");
        auto body = [&]() -> absl::Status {
          IrArray::Index row_index = DelinearizeRowMajor(row, plan->kept_dims, b);
          ec.kept.clear();
          ec.kept[plan->kept_dims] = row_index;
          for (const Dims& d : plan->kept_shapes) ec.kept[d] = DelinearizeRowMajor(row, d, b);
          llvm::Value* row_base = b.CreateMul(row, b.getInt64(row_len));
          // The element at c of the row in every shape of the plan; its in_dims index.
          auto element_indices = [&](llvm::Value* c, const IrArray::Index* cidx) {
            std::map<Dims, IrArray::Index> m;
            IrArray::Index ci = cidx != nullptr ? *cidx : DelinearizeRowMajor(c, plan->reduced_dims, b);
            std::vector<llvm::Value*> v = row_index.multidim;
            v.insert(v.end(), ci.multidim.begin(), ci.multidim.end());
            m[plan->in_dims] = IrArray::Index(v);
            if (!plan->row_shapes.empty()) {
              llvm::Value* linear = b.CreateAdd(row_base, c);
              for (const Dims& d : plan->row_shapes) m[d] = DelinearizeRowMajor(linear, d, b);
            }
            return m;
          };
          ec.j = -1;
          ec.elem.clear();
          ec.row_values.clear();
          ec.invariant_values.clear();
          if (in_registers) {
            for (int64_t j = 0; j < per_thread; ++j) ec.elem.push_back(element_indices(cj[j], &ec.cidx[j]));
            for (int64_t pn : row_params) {
              std::vector<llvm::Value*>& vals = ec.row_values[pn];
              for (int64_t j = 0; j < per_thread; j += vec) {
                llvm::AllocaInst* a = ahead[pn][j / vec];
                llvm::Value* ld = b.CreateLoad(a->getAllocatedType(), a);
                for (int64_t e = 0; e < vec; ++e) vals.push_back(b.CreateExtractElement(ld, b.getInt64(e)));
              }
            }
            if (prefetch) {
              llvm::Value* next = b.CreateAdd(row, b.getInt64(k.launch.grid_x * rows_per_block));
              absl::Status ns = EmitIf(b, b.CreateICmpULT(next, b.getInt64(rows)), "ahead.next", [&]() {
                load_ahead(next);
                return absl::OkStatus();
              });
              if (!ns.ok()) return ns;
            }
            for (int64_t pn : invariant_params) {
              std::vector<llvm::Value*>& vals = ec.invariant_values[pn];
              for (int64_t j = 0; j < per_thread; j += vec) {
                llvm::Value* ld = load_vector(pn, cj[j]);
                for (int64_t e = 0; e < vec; ++e) vals.push_back(b.CreateExtractElement(ld, b.getInt64(e)));
              }
            }
          } else {
            ec.elem.resize(1);
          }
          for (const HloInstruction* r : plan->reduces) {
            const int64_t n = r->operand_count() / 2;
            const std::vector<llvm::AllocaInst*>& acc = slots[r];
            for (int64_t i = 0; i < n; ++i) {
              absl::StatusOr<ElementGenerator> init = gen_of(r->operand(n + i));
              if (!init.ok()) return init.status();
              absl::StatusOr<llvm::Value*> v = (*init)(IrArray::Index());
              if (!v.ok()) return v.status();
              b.CreateStore(*v, acc[i]);
            }
            auto fold = [&](const IrArray::Index& idx) -> absl::Status {
              std::vector<llvm::Value*> cur, vals;
              for (int64_t i = 0; i < n; ++i) {
                cur.push_back(b.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
                absl::StatusOr<ElementGenerator> in = gen_of(r->operand(i));
                if (!in.ok()) return in.status();
                absl::StatusOr<llvm::Value*> v = (*in)(idx);
                if (!v.ok()) return v.status();
                vals.push_back(*v);
              }
              absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*k.emitter, *r->to_apply(), cur, vals);
              if (!next.ok()) return next.status();
              for (int64_t i = 0; i < n; ++i) b.CreateStore((*next)[i], acc[i]);
              return absl::OkStatus();
            };
            absl::Status ls;
            if (in_registers) {
              for (int64_t j = 0; j < per_thread && ls.ok(); ++j) {
                ec.j = j;
                ls = fold(ec.elem[j][plan->in_dims]);
              }
              ec.j = -1;
            } else {
              auto at = [&](llvm::Value* c) -> absl::Status {
                ec.elem[0] = element_indices(c, nullptr);
                ec.j = 0;
                absl::Status fs = fold(ec.elem[0][plan->in_dims]);
                ec.j = -1;
                return fs;
              };
              const int64_t u = fold_unroll;
              if (u <= 1 || row_len < u * per_row) {
                ls = EmitStridedLoop(b, lane, b.getInt64(row_len), b.getInt64(per_row), "fold", at);
              } else {
                // Trips i < main_end have all of i, i + per_row, ..., i + (u-1)*per_row in
                // the row; the rest (fewer than u per thread) one at a time.
                const int64_t main_end = row_len - (u - 1) * per_row, step = u * per_row;
                ls = EmitStridedLoop(b, lane, b.getInt64(main_end), b.getInt64(step), "fold.main",
                                     [&](llvm::Value* i) -> absl::Status {
                                       for (int64_t q = 0; q < u; ++q)
                                         if (absl::Status fs = at(b.CreateAdd(i, b.getInt64(q * per_row))); !fs.ok())
                                           return fs;
                                       return absl::OkStatus();
                                     });
                if (ls.ok()) {
                  // lane < per_row <= main_end: the main loop ran ceil((main_end - lane) / step) trips.
                  llvm::Value* trips = b.CreateUDiv(b.CreateSub(b.getInt64(main_end + step - 1), lane), b.getInt64(step));
                  llvm::Value* rest = b.CreateAdd(lane, b.CreateMul(trips, b.getInt64(step)));
                  ls = EmitStridedLoop(b, rest, b.getInt64(row_len), b.getInt64(per_row), "fold.rest", at);
                }
              }
            }
            if (!ls.ok()) return ls;
            // Warp: butterfly shuffles leave the warp's value in every lane.
            std::vector<llvm::Value*> cur;
            for (int64_t i = 0; i < n; ++i) cur.push_back(b.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
            // Rows narrower than a warp stay within their lanes (offsets below per_row); the
            // warp's last rows may be past the end, so only the lanes still here take part.
            llvm::Value* mask = per_row < 32 ? k.ActiveMask() : nullptr;
            for (int off = static_cast<int>(std::min<int64_t>(16, per_row / 2)); off >= 1; off /= 2) {
              std::vector<llvm::Value*> other;
              for (llvm::Value* v : cur) other.push_back(k.ShuffleXor(v, off, mask));
              absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*k.emitter, *r->to_apply(), cur, other);
              if (!next.ok()) return next.status();
              cur = *next;
            }
            if (warps_per_row > 1) {
              // Block: each warp's first lane publishes, everyone folds the partials in order.
              llvm::Value* first = b.CreateICmpEQ(b.CreateURem(lane, b.getInt64(32)), b.getInt64(0));
              absl::Status ws = EmitIf(b, first, "publish", [&]() -> absl::Status {
                for (int64_t i = 0; i < n; ++i)
                  b.CreateStore(cur[i], b.CreateInBoundsGEP(llvm::ArrayType::get(cur[i]->getType(), warps_per_row),
                                                            shared[r][i], {b.getInt64(0), warp}));
                return absl::OkStatus();
              });
              if (!ws.ok()) return ws;
              k.Barrier();
              std::vector<llvm::Value*> total;
              for (int64_t w = 0; w < warps_per_row; ++w) {
                std::vector<llvm::Value*> part;
                for (int64_t i = 0; i < n; ++i)
                  part.push_back(b.CreateLoad(
                      cur[i]->getType(), b.CreateInBoundsGEP(llvm::ArrayType::get(cur[i]->getType(), warps_per_row),
                                                             shared[r][i], {b.getInt64(0), b.getInt64(w)})));
                if (w == 0) {
                  total = part;
                  continue;
                }
                absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*k.emitter, *r->to_apply(), total, part);
                if (!next.ok()) return next.status();
                total = *next;
              }
              cur = total;
            }
            for (int64_t i = 0; i < n; ++i) b.CreateStore(cur[i], acc[i]);
          }
          // Outputs.
          bool any_row = false;
          for (size_t o = 0; o < plan->outputs.size(); ++o) any_row = any_row || plan->output_is_row[o];
          if (any_row && in_registers) {
            // Row outputs: V values per vector store where the output is row-major and stored
            // as its value type.
            for (size_t o = 0; o < plan->outputs.size(); ++o) {
              if (!plan->output_is_row[o]) continue;
              absl::StatusOr<ElementGenerator> g = gen_of(plan->outputs[o]);
              if (!g.ok()) return g.status();
              const IrArray& out = k.outputs[o];
              const Dims od = plan->outputs[o]->shape().dimensions();
              const PrimitiveType t = out.shape().element_type();
              const bool plain = IsRowMajorLayout(out.shape()) && PlainType(t) && out.shape().dimensions() == od;
              llvm::Type* et = PrimitiveTypeToIrType(t, ctx);
              for (int64_t j0 = 0; j0 < per_thread; j0 += vec) {
                llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(et, vec));
                for (int64_t e = 0; e < vec; ++e) {
                  ec.j = j0 + e;
                  const IrArray::Index& idx = ec.elem[j0 + e][od];
                  absl::StatusOr<llvm::Value*> x = (*g)(idx);
                  if (!x.ok()) return x.status();
                  if (!plain) {
                    out.EmitWriteArrayElement(idx, *x, b);
                    continue;
                  }
                  v = b.CreateInsertElement(v, *x, b.getInt64(e));
                }
                if (plain)
                  b.CreateAlignedStore(v, b.CreateInBoundsGEP(et, out.base(), {b.CreateAdd(row_base, cj[j0])}),
                                       llvm::Align(std::min<int64_t>(16, vec * ByteWidth(t))));
              }
              ec.j = -1;
            }
          } else if (any_row) {
            absl::Status os =
                EmitStridedLoop(b, lane, b.getInt64(row_len), b.getInt64(per_row), "store", [&](llvm::Value* c) -> absl::Status {
                  ec.elem[0] = element_indices(c, nullptr);
                  ec.j = 0;
                  for (size_t o = 0; o < plan->outputs.size(); ++o) {
                    if (!plan->output_is_row[o]) continue;
                    absl::StatusOr<ElementGenerator> g = gen_of(plan->outputs[o]);
                    if (!g.ok()) return g.status();
                    const IrArray::Index& idx = ec.elem[0][plan->outputs[o]->shape().dimensions()];
                    absl::StatusOr<llvm::Value*> v = (*g)(idx);
                    if (!v.ok()) return v.status();
                    k.outputs[o].EmitWriteArrayElement(idx, *v, b);
                  }
                  ec.j = -1;
                  return absl::OkStatus();
                });
            if (!os.ok()) return os;
          }
          absl::Status rs = EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(0)), "write", [&]() -> absl::Status {
            for (size_t o = 0; o < plan->outputs.size(); ++o) {
              if (plan->output_is_row[o]) continue;
              absl::StatusOr<ElementGenerator> g = gen_of(plan->outputs[o]);
              if (!g.ok()) return g.status();
              const IrArray::Index& idx = ec.kept[plan->outputs[o]->shape().dimensions()];
              absl::StatusOr<llvm::Value*> v = (*g)(idx);
              if (!v.ok()) return v.status();
              k.outputs[o].EmitWriteArrayElement(idx, *v, b);
            }
            return absl::OkStatus();
          });
          if (!rs.ok()) return rs;
          // The next row reuses the shared partials. With two or more reduces a warp cannot
          // overwrite the first one's partials before every warp has passed the last one's
          // barrier (after reading the first's), so only a single reduce needs this barrier.
          if (warps_per_row > 1 && plan->reduces.size() < 2) k.Barrier();
          return absl::OkStatus();
        };
        // Warp-per-row blocks may run past the last row (no barriers there); block-per-row
        // blocks always have a row.
        if (rows_per_block == 1) return body();
        return EmitIf(b, b.CreateICmpULT(row, b.getInt64(rows)), "row.valid", body);
      });
  if (!s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
