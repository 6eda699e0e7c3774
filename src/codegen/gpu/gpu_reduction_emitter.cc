// Row reductions and the normalization / softmax chains the fusion stage makes (XLA's
// ReductionFusion, xla/backends/gpu/codegen/emitters/reduction.cc, and its "multi-row"
// variant for short rows). A fusion qualifies when every reduce in it reduces the trailing
// dimensions of one input shape [kept..., reduced...] and whatever depends on a reduce stays
// on the same row (elementwise ops, broadcasts of [kept...] back over the row). Then:
//   - a row is owned by one warp (rows up to 512 elements: several rows per block) or by one
//     block (longer rows; partials combined through shared memory);
//   - the reduces run in order; each thread folds a strided part of the row with the reducer,
//     the warp combines with butterfly shuffles (every lane ends with the row's value), the
//     block through shared memory; later reduces and the outputs read the row's value;
//   - outputs of the row's shape are written in a last pass over the row, outputs of the
//     reduced shape by the row's first thread.
// Rows that split evenly over their threads (each thread owning K <= 32 elements) are kept in
// registers: every thread loads its share of each row-shaped input once, with 16-byte vector
// loads (bf16 x8, f32 x4: thread t owns the V-element groups t, t + threads, ...), and the
// passes of the chain and the row-shaped outputs (vector stores) reuse those values instead of
// re-reading memory. Other rows fold a strided part per thread and recompute what a chain
// needs again (x in softmax) from the inputs, which the second pass finds in L1/L2.
#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "codegen/cpu/kernel_util.h"
#include "codegen/gpu/gpu_emitters.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

struct RowPlan {
  std::vector<int64_t> in_dims, kept_dims, reduced_dims;
  std::vector<const HloInstruction*> reduces;  // post order
  std::vector<const HloInstruction*> outputs;
  std::vector<bool> output_is_row;
};

bool SameDims(const Shape& s, const std::vector<int64_t>& dims) { return s.IsArray() && s.dimensions() == dims; }

std::optional<RowPlan> Analyze(const HloComputation& fused) {
  RowPlan p;
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
  for (size_t i = 0; i < red.size(); ++i)
    if (red[i] != rank - static_cast<int64_t>(red.size()) + static_cast<int64_t>(i)) return std::nullopt;
  const int64_t nk = rank - static_cast<int64_t>(red.size());
  p.kept_dims.assign(p.in_dims.begin(), p.in_dims.begin() + nk);
  p.reduced_dims.assign(p.in_dims.begin() + nk, p.in_dims.end());
  for (const HloInstruction* r : p.reduces) {
    std::vector<int64_t> d = r->attrs().dimensions;
    std::sort(d.begin(), d.end());
    if (d != red || r->to_apply() == nullptr) return std::nullopt;
    const int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i)
      if (!SameDims(r->operand(i)->shape(), p.in_dims)) return std::nullopt;
  }
  // What depends on a reduce must keep rows apart: elementwise ops over row- or kept-shaped
  // values, broadcasts of kept-shaped values along the row, tuple pieces of variadic reduces.
  std::set<const HloInstruction*> dep;
  for (const HloInstruction* inst : order) {
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
      case HloOpcode::kCopy:
        if (!SameDims(s, inst->operand(0)->shape().dimensions())) return std::nullopt;
        continue;
      default:
        if (!inst->IsElementwise()) return std::nullopt;
        if (!SameDims(s, p.in_dims) && !SameDims(s, p.kept_dims)) return std::nullopt;
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
    if (SameDims(o->shape(), p.in_dims) && !(p.kept_dims == p.in_dims)) {
      p.output_is_row.push_back(true);
    } else if (SameDims(o->shape(), p.kept_dims)) {
      p.output_is_row.push_back(false);
    } else {
      return std::nullopt;
    }
  }
  return p;
}

llvm::Value* Product(const std::vector<int64_t>& dims, llvm::IRBuilderBase& b) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return b.getInt64(n);
}

}  // namespace

// gpu_reduction_split.cc: column reductions, and rows split across blocks.
bool SplitReductionApplies(const HloComputation& fused);
absl::StatusOr<bool> TryEmitSplitReduction(GpuKernel& k, const HloComputation& fused,
                                           const std::function<ElementGenerator(int64_t)>& parameter);

absl::StatusOr<bool> TryEmitRowReduction(GpuKernel& k, const HloComputation& fused,
                                         const std::function<ElementGenerator(int64_t)>& parameter) {
  std::optional<RowPlan> plan = Analyze(fused);
  // Not rows (a column or non-trailing reduce): the split emitter, else the loop kernel.
  if (!plan) return TryEmitSplitReduction(k, fused, parameter);
  if (plan->outputs.size() != k.outputs.size()) return false;
  llvm::IRBuilderBase& b = *k.b;
  llvm::LLVMContext& ctx = b.getContext();
  int64_t rows = 1, row_len = 1;
  for (int64_t d : plan->kept_dims) rows *= d;
  for (int64_t d : plan->reduced_dims) row_len *= d;
  if (rows == 0 || row_len == 0) return false;  // nothing to reduce: the loop kernel writes inits
  // A few long rows without chains (full reductions): a block per row would leave most SMs
  // idle; the split emitter spreads each row over many blocks.
  if (rows < 2 * k.device->sm_count && row_len >= 8192 && SplitReductionApplies(fused))
    return TryEmitSplitReduction(k, fused, parameter);

  // Threads per row: a warp for short rows (several rows per block), a block for long ones.
  int64_t per_row = 32, rows_per_block = 1;
  if (row_len <= 512) {
    rows_per_block = std::min<int64_t>(8, rows);
  } else {
    per_row = row_len >= 8192 && rows < 4 * k.device->sm_count ? 1024 : row_len >= 2048 ? 512 : 256;
  }
  const int64_t block = per_row * rows_per_block;
  const int64_t groups = (rows + rows_per_block - 1) / rows_per_block;
  const int64_t resident = std::max<int64_t>(1, k.device->max_threads_per_sm / block) * k.device->sm_count;
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = block;
  k.launch.grid_x = std::max<int64_t>(1, std::min(groups, resident * k.device->waves));
  // Register rows: V consecutive elements per vector access; per_row shrinks so that every
  // thread owns at least V elements.
  int64_t vec = 1, per_thread = 0;
  {
    int min_bytes = 16;
    for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
      if (inst->opcode() == HloOpcode::kParameter && SameDims(inst->shape(), plan->in_dims))
        min_bytes = std::min(min_bytes, std::max(1, ByteWidth(inst->shape().element_type())));
    for (size_t o = 0; o < plan->outputs.size(); ++o)
      if (plan->output_is_row[o])
        min_bytes = std::min(min_bytes, std::max(1, ByteWidth(plan->outputs[o]->shape().element_type())));
    vec = 16 / min_bytes;
    if (rows_per_block == 1)
      while (per_row > 64 && row_len < per_row * vec) per_row /= 2;
    while (vec > 1 && row_len % (per_row * vec) != 0) vec /= 2;
    if (row_len % (per_row * vec) == 0 && row_len / per_row <= 32) per_thread = row_len / per_row;
    if (per_thread == 0) vec = 1;
  }
  if (rows_per_block == 1) {
    k.launch.block_x = per_row;
    k.launch.grid_x = std::max<int64_t>(
        1, std::min(groups, std::max<int64_t>(1, k.device->max_threads_per_sm / per_row) * k.device->sm_count *
                                k.device->waves));
  }
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
      slots[r].push_back(cpu::EntryAlloca(b, t, absl::StrCat(r->name(), ".value", i)));
    }
    value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
  llvm::IRBuilderBase* bp = &b;
  // Which parameters a register row caches: row-shaped, row-major kernel operands whose value
  // type is their storage type (floats and 32/64-bit integers), read through a vector load.
  struct RowCache {
    int64_t j = -1;                               // the thread's element being generated
    std::vector<IrArray::Index> index;            // per j: the element's full index
    std::map<int64_t, std::vector<llvm::Value*>> values;  // parameter -> per j
  } cache;
  std::set<int64_t> cached_params;
  if (per_thread > 0) {
    int64_t nparams = 0;
    for (const HloInstruction* inst : fused.MakeInstructionPostOrder())
      nparams += inst->opcode() == HloOpcode::kParameter;
    if (static_cast<int64_t>(k.operands.size()) == nparams) {
      for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) {
        if (inst->opcode() != HloOpcode::kParameter || !SameDims(inst->shape(), plan->in_dims)) continue;
        const int64_t pn = inst->attrs().parameter_number;
        if (pn < 0 || pn >= nparams) continue;
        const Shape& os = k.operands[pn].shape();
        const PrimitiveType t = inst->shape().element_type();
        const bool plain = t == PrimitiveType::F16 || t == PrimitiveType::BF16 || t == PrimitiveType::F32 ||
                           t == PrimitiveType::F64 || t == PrimitiveType::S32 || t == PrimitiveType::U32 ||
                           t == PrimitiveType::S64 || t == PrimitiveType::U64;
        if (plain && os.IsArray() && os.dimensions() == plan->in_dims && os.element_type() == t && IsRowMajorLayout(os))
          cached_params.insert(pn);
      }
    }
  }
  RowCache* cp = &cache;
  auto row_parameter = [&](int64_t pn) -> ElementGenerator {
    ElementGenerator orig = parameter(pn);
    if (!cached_params.count(pn)) return orig;
    return [orig, pn, cp](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      if (cp->j >= 0 && index.multidim == cp->index[cp->j].multidim) return cp->values[pn][cp->j];
      return orig(index);
    };
  };
  absl::StatusOr<std::shared_ptr<GeneratorMap>> gens = MakeFusionGenerators(
      *k.emitter, fused, row_parameter, [&](const HloInstruction* inst) -> ElementGenerator {
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
  absl::Status s = EmitStridedLoop(
      b, k.BlockIdX(), b.getInt64(groups), b.getInt64(k.launch.grid_x), "rows", [&](llvm::Value* g) -> absl::Status {
        llvm::Value* row = b.CreateAdd(b.CreateMul(g, b.getInt64(rows_per_block)), row_in_block, "row");
        auto body = [&]() -> absl::Status {
          IrArray::Index row_index = DelinearizeRowMajor(row, plan->kept_dims, b);
          auto full_index = [&](llvm::Value* c) {
            IrArray::Index ci = DelinearizeRowMajor(c, plan->reduced_dims, b);
            std::vector<llvm::Value*> v = row_index.multidim;
            v.insert(v.end(), ci.multidim.begin(), ci.multidim.end());
            return IrArray::Index(v);
          };
          // Register row: the thread's elements lane*V + g*per_row*V + e, loaded once.
          const bool in_registers = per_thread > 0;
          cache.j = -1;
          cache.index.clear();
          cache.values.clear();
          if (in_registers) {
            for (int64_t j = 0; j < per_thread; ++j) {
              llvm::Value* c = b.CreateAdd(b.CreateMul(lane, b.getInt64(vec)),
                                           b.getInt64((j / vec) * per_row * vec + j % vec));
              cache.index.push_back(full_index(c));
            }
            for (int64_t pn : cached_params) {
              const IrArray& a = k.operands[pn];
              llvm::Type* et = PrimitiveTypeToIrType(a.shape().element_type(), ctx);
              const int64_t bytes = ByteWidth(a.shape().element_type());
              llvm::Type* vt = llvm::FixedVectorType::get(et, vec);
              std::vector<llvm::Value*>& vals = cache.values[pn];
              for (int64_t j = 0; j < per_thread; j += vec) {
                llvm::Value* addr = a.EmitArrayElementAddress(cache.index[j], b);
                llvm::LoadInst* ld = b.CreateAlignedLoad(vt, addr, llvm::Align(std::min<int64_t>(16, vec * bytes)));
                for (int64_t e = 0; e < vec; ++e) vals.push_back(b.CreateExtractElement(ld, b.getInt64(e)));
              }
            }
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
                                                absl::StatusOr<std::vector<llvm::Value*>> next =
                                                    ApplyReducer(*k.emitter, *r->to_apply(), cur, vals);
                                                if (!next.ok()) return next.status();
                                                for (int64_t i = 0; i < n; ++i) b.CreateStore((*next)[i], acc[i]);
                                                return absl::OkStatus();
            };
            absl::Status ls;
            if (in_registers) {
              for (int64_t j = 0; j < per_thread && ls.ok(); ++j) {
                cache.j = j;
                ls = fold(cache.index[j]);
              }
              cache.j = -1;
            } else {
              ls = EmitStridedLoop(b, lane, Product(plan->reduced_dims, b), b.getInt64(per_row), "fold",
                                   [&](llvm::Value* c) { return fold(full_index(c)); });
            }
            if (!ls.ok()) return ls;
            // Warp: butterfly shuffles leave the warp's value in every lane.
            std::vector<llvm::Value*> cur;
            for (int64_t i = 0; i < n; ++i) cur.push_back(b.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
            for (int off = 16; off >= 1; off /= 2) {
              std::vector<llvm::Value*> other;
              for (llvm::Value* v : cur) other.push_back(k.ShuffleXor(v, off));
              absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*k.emitter, *r->to_apply(), cur, other);
              if (!next.ok()) return next.status();
              cur = *next;
            }
            if (warps_per_row > 1) {
              // Block: each warp's first lane publishes, everyone folds the partials in order.
              llvm::Value* first = b.CreateICmpEQ(b.CreateURem(lane, b.getInt64(32)), b.getInt64(0));
              absl::Status ws = cpu::EmitIf(b, first, "publish", [&]() -> absl::Status {
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
              const PrimitiveType t = out.shape().element_type();
              const bool plain = IsRowMajorLayout(out.shape()) &&
                                 (t == PrimitiveType::F16 || t == PrimitiveType::BF16 || t == PrimitiveType::F32 ||
                                  t == PrimitiveType::F64 || t == PrimitiveType::S32 || t == PrimitiveType::U32 ||
                                  t == PrimitiveType::S64 || t == PrimitiveType::U64);
              llvm::Type* et = PrimitiveTypeToIrType(t, ctx);
              for (int64_t j0 = 0; j0 < per_thread; j0 += vec) {
                llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(et, vec));
                for (int64_t e = 0; e < vec; ++e) {
                  cache.j = j0 + e;
                  absl::StatusOr<llvm::Value*> x = (*g)(cache.index[j0 + e]);
                  if (!x.ok()) return x.status();
                  if (!plain) {
                    out.EmitWriteArrayElement(cache.index[j0 + e], *x, b);
                    continue;
                  }
                  v = b.CreateInsertElement(v, *x, b.getInt64(e));
                }
                if (plain)
                  b.CreateAlignedStore(v, out.EmitArrayElementAddress(cache.index[j0], b),
                                       llvm::Align(std::min<int64_t>(16, vec * ByteWidth(t))));
              }
              cache.j = -1;
            }
          } else if (any_row) {
            absl::Status os = EmitStridedLoop(b, lane, Product(plan->reduced_dims, b), b.getInt64(per_row), "store",
                                              [&](llvm::Value* c) -> absl::Status {
                                                IrArray::Index idx = full_index(c);
                                                for (size_t o = 0; o < plan->outputs.size(); ++o) {
                                                  if (!plan->output_is_row[o]) continue;
                                                  absl::StatusOr<ElementGenerator> g = gen_of(plan->outputs[o]);
                                                  if (!g.ok()) return g.status();
                                                  absl::StatusOr<llvm::Value*> v = (*g)(idx);
                                                  if (!v.ok()) return v.status();
                                                  k.outputs[o].EmitWriteArrayElement(idx, *v, b);
                                                }
                                                return absl::OkStatus();
                                              });
            if (!os.ok()) return os;
          }
          absl::Status rs = cpu::EmitIf(b, b.CreateICmpEQ(lane, b.getInt64(0)), "write", [&]() -> absl::Status {
            for (size_t o = 0; o < plan->outputs.size(); ++o) {
              if (plan->output_is_row[o]) continue;
              absl::StatusOr<ElementGenerator> g = gen_of(plan->outputs[o]);
              if (!g.ok()) return g.status();
              absl::StatusOr<llvm::Value*> v = (*g)(row_index);
              if (!v.ok()) return v.status();
              k.outputs[o].EmitWriteArrayElement(row_index, *v, b);
            }
            return absl::OkStatus();
          });
          if (!rs.ok()) return rs;
          // The next row reuses the shared partials.
          if (warps_per_row > 1) k.Barrier();
          return absl::OkStatus();
        };
        // Warp-per-row blocks may run past the last row (no barriers there); block-per-row
        // blocks always have a row.
        if (rows_per_block == 1) return body();
        return cpu::EmitIf(b, b.CreateICmpULT(row, b.getInt64(rows)), "row.valid", body);
      });
  if (!s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
