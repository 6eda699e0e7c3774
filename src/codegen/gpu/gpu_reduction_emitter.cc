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
//     the launch plan's numbers are the profile's tuning (engine/tuning.h, GpuDeviceInfo), and
//     the plan (RowPlan, RowLaunchPlan) is decided before any IR, in gpu_reduction_row_plan.cc;
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
#include "codegen/gpu/gpu_reduction_row_plan.h"
#include "codegen/gpu/gpu_reduction_split.h"
#include "llvm/IR/Constants.h"

namespace hloc::codegen::gpu {
namespace {

using Dims = std::vector<int64_t>;

int64_t Count(const Dims& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
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

// ---- emission: one function per phase, sharing a RowEmitContext ---------------------------

// What the phases of one row-reduction kernel share. The generators hold pointers into it (the
// element being generated, the reduces' slots), so it stays in place until the kernel is done.
struct RowEmitContext {
  RowEmitContext(GpuKernel& k, const RowPlan& plan, const RowLaunchPlan& launch)
      : k(k), b(*k.b), plan(plan), launch(launch) {}
  GpuKernel& k;
  llvm::IRBuilderBase& b;
  const RowPlan& plan;
  const RowLaunchPlan& launch;
  // The row's value of each reduce lives in allocas its generator reads.
  std::map<const HloInstruction*, std::vector<llvm::AllocaInst*>> slots;
  std::map<const HloInstruction*, llvm::Type*> value_types;
  // Which parameters a register row loads with vectors (SelectVectorParameters).
  std::set<int64_t> row_params, invariant_params;
  std::map<int64_t, Dims> param_dims;
  ElementContext ec;
  std::shared_ptr<GeneratorMap> gens;
  // Shared memory for the block-wide combine: one slot per warp and accumulator.
  std::map<const HloInstruction*, std::vector<llvm::Value*>> shared;
  // The thread's lane in its row, its row in the block, its warp in the row.
  llvm::Value* lane = nullptr;
  llvm::Value* row_in_block = nullptr;
  llvm::Value* warp = nullptr;
  // Register rows: the thread's elements c_j of every row.
  std::vector<llvm::Value*> cj;
  // The next row's vectors of each row parameter, loaded ahead (see the file comment).
  bool prefetch = false;
  std::map<int64_t, std::vector<llvm::AllocaInst*>> ahead;
  // The row being reduced: its index in kept_dims and its first element's linear index.
  llvm::Value* row = nullptr;
  IrArray::Index row_index;
  llvm::Value* row_base = nullptr;

  absl::StatusOr<ElementGenerator> GenOf(const HloInstruction* inst) const { return GeneratorOf(*gens, inst); }
};

void AllocateReduceSlots(RowEmitContext& c) {
  llvm::LLVMContext& ctx = c.b.getContext();
  for (const HloInstruction* r : c.plan.reduces) {
    const int64_t n = r->operand_count() / 2;
    std::vector<llvm::Type*> types;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = r->shape().IsTuple() ? r->shape().tuple_shapes(i) : r->shape();
      llvm::Type* t = PrimitiveTypeToIrType(s.element_type(), ctx);
      types.push_back(t);
      c.slots[r].push_back(EntryAlloca(c.b, t, absl::StrCat(r->name(), ".value", i)));
    }
    c.value_types[r] = r->shape().IsTuple() ? static_cast<llvm::Type*>(llvm::StructType::get(ctx, types)) : types[0];
  }
}

// Which parameters a register row loads with vectors: row-major kernel operands whose value
// type is their storage type (floats and 32/64-bit integers), either of the row's element
// count (row_params) or of the reduced shape, broadcast along the rows (invariant_params).
void SelectVectorParameters(RowEmitContext& c, const HloComputation& fused) {
  if (!c.launch.in_registers()) return;
  int64_t nparams = 0;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) nparams += inst->opcode() == HloOpcode::kParameter;
  if (static_cast<int64_t>(c.k.operands.size()) != nparams) return;
  for (const HloInstruction* inst : fused.MakeInstructionPostOrder()) {
    if (inst->opcode() != HloOpcode::kParameter || !inst->shape().IsArray()) continue;
    const int64_t pn = inst->attrs().parameter_number;
    if (pn < 0 || pn >= nparams) continue;
    const Shape& os = c.k.operands[pn].shape();
    const PrimitiveType t = inst->shape().element_type();
    if (!PlainType(t) || !os.IsArray() || os.dimensions() != inst->shape().dimensions() || os.element_type() != t ||
        !IsRowMajorLayout(os))
      continue;
    const Dims& d = inst->shape().dimensions();
    c.param_dims[pn] = d;
    if (d == c.plan.in_dims || c.plan.row_shapes.count(d)) {
      c.row_params.insert(pn);
    } else if (d == c.plan.reduced_dims && c.plan.rows > 1) {
      c.invariant_params.insert(pn);
    }
  }
}

// The fusion's generators: vector-loaded parameters answer from the register row, reshapes map
// the element's known indices, reduces read their slots.
absl::Status MakeRowGenerators(RowEmitContext& c, const HloComputation& fused,
                               const std::function<ElementGenerator(int64_t)>& parameter) {
  ElementContext* cp = &c.ec;
  llvm::IRBuilderBase* bp = &c.b;
  auto row_parameter = [&c, &parameter, cp](int64_t pn) -> ElementGenerator {
    ElementGenerator orig = parameter(pn);
    if (!c.row_params.count(pn) && !c.invariant_params.count(pn)) return orig;
    const Dims dims = c.param_dims[pn];
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
      *c.k.emitter, fused, row_parameter, [&c, cp, bp, gens_holder](const HloInstruction* inst) -> ElementGenerator {
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
        return AccumulatorGenerator(c.slots[inst], c.value_types[inst], bp);
      });
  if (!gens.ok()) return gens.status();
  *gens_holder = *gens;
  c.gens = *gens;
  return absl::OkStatus();
}

void AllocateSharedPartials(RowEmitContext& c) {
  const int64_t warps_per_row = c.launch.warps_per_row();
  if (warps_per_row <= 1) return;
  for (const HloInstruction* r : c.plan.reduces)
    for (size_t i = 0; i < c.slots[r].size(); ++i)
      c.shared[r].push_back(c.k.SharedArray(c.slots[r][i]->getAllocatedType(), warps_per_row,
                                            absl::StrCat("partials.", PtxKernelName(r->name()), ".", i)));
}

void EmitThreadIndices(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t per_row = c.launch.per_row, vec = c.launch.vec;
  llvm::Value* tid = c.k.ThreadIdX();
  c.lane = b.CreateURem(tid, b.getInt64(per_row), "lane");
  c.row_in_block = b.CreateUDiv(tid, b.getInt64(per_row));
  c.warp = b.CreateUDiv(c.lane, b.getInt64(32), "warp");
  // Register rows: the thread's elements c_j = lane*V + (j/V)*per_row*V + j%V of every row.
  if (!c.launch.in_registers()) return;
  for (int64_t j = 0; j < c.launch.per_thread; ++j) {
    c.cj.push_back(b.CreateAdd(b.CreateMul(c.lane, b.getInt64(vec)), b.getInt64((j / vec) * per_row * vec + j % vec)));
    c.ec.cidx.push_back(DelinearizeRowMajor(c.cj.back(), c.plan.reduced_dims, b));
  }
}

// A vector load of parameter `pn` at linear element `linear` (a multiple of V).
llvm::Value* LoadVector(RowEmitContext& c, int64_t pn, llvm::Value* linear) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t vec = c.launch.vec;
  const IrArray& a = c.k.operands[pn];
  const PrimitiveType t = a.shape().element_type();
  llvm::Type* et = PrimitiveTypeToIrType(t, b.getContext());
  llvm::Value* addr = b.CreateInBoundsGEP(et, a.base(), {linear});
  return b.CreateAlignedLoad(llvm::FixedVectorType::get(et, vec), addr,
                             llvm::Align(std::min<int64_t>(16, vec * ByteWidth(t))));
}

// Row `row`'s vectors of each row parameter into the ahead slots.
void LoadAhead(RowEmitContext& c, llvm::Value* row) {
  llvm::IRBuilderBase& b = c.b;
  for (int64_t pn : c.row_params) {
    for (int64_t j = 0; j < c.launch.per_thread; j += c.launch.vec) {
      llvm::Value* linear = b.CreateAdd(b.CreateMul(row, b.getInt64(c.plan.row_len)), c.cj[j]);
      b.CreateStore(LoadVector(c, pn, linear), c.ahead[pn][j / c.launch.vec]);
    }
  }
}

// The ahead slots, and the thread's first row loaded into them.
absl::Status EmitFirstPrefetch(RowEmitContext& c) {
  c.prefetch = c.launch.in_registers() && !c.row_params.empty();
  if (!c.prefetch) return absl::OkStatus();
  llvm::IRBuilderBase& b = c.b;
  const int64_t vec = c.launch.vec;
  for (int64_t pn : c.row_params) {
    llvm::Type* vt = llvm::FixedVectorType::get(
        PrimitiveTypeToIrType(c.k.operands[pn].shape().element_type(), b.getContext()), vec);
    for (int64_t j = 0; j < c.launch.per_thread; j += vec)
      c.ahead[pn].push_back(EntryAlloca(b, vt, absl::StrCat("ahead.", pn, ".", j / vec)));
  }
  llvm::Value* first = b.CreateAdd(b.CreateMul(c.k.BlockIdX(), b.getInt64(c.launch.rows_per_block)), c.row_in_block);
  return EmitIf(b, b.CreateICmpULT(first, b.getInt64(c.plan.rows)), "ahead.first", [&]() {
    LoadAhead(c, first);
    return absl::OkStatus();
  });
}

// The current row's index in kept_dims (and every kept-shaped shape of the plan) and its base.
void EmitRowIndices(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  c.row_index = DelinearizeRowMajor(c.row, c.plan.kept_dims, b);
  c.ec.kept.clear();
  c.ec.kept[c.plan.kept_dims] = c.row_index;
  for (const Dims& d : c.plan.kept_shapes) c.ec.kept[d] = DelinearizeRowMajor(c.row, d, b);
  c.row_base = b.CreateMul(c.row, b.getInt64(c.plan.row_len));
}

// The element at column `col` of the current row in every shape of the plan (`cidx`: its index
// in the reduced dimensions, when known).
std::map<Dims, IrArray::Index> ElementIndices(RowEmitContext& c, llvm::Value* col, const IrArray::Index* cidx) {
  llvm::IRBuilderBase& b = c.b;
  std::map<Dims, IrArray::Index> m;
  IrArray::Index ci = cidx != nullptr ? *cidx : DelinearizeRowMajor(col, c.plan.reduced_dims, b);
  std::vector<llvm::Value*> v = c.row_index.multidim;
  v.insert(v.end(), ci.multidim.begin(), ci.multidim.end());
  m[c.plan.in_dims] = IrArray::Index(v);
  if (!c.plan.row_shapes.empty()) {
    llvm::Value* linear = b.CreateAdd(c.row_base, col);
    for (const Dims& d : c.plan.row_shapes) m[d] = DelinearizeRowMajor(linear, d, b);
  }
  return m;
}

// Register rows: the thread's elements' indices, the row's values from the ahead slots, the
// next row's loads issued, and the invariant parameters' vectors. Otherwise one element at a
// time (ec.elem[0]).
absl::Status LoadRegisterRow(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  ElementContext& ec = c.ec;
  const int64_t per_thread = c.launch.per_thread, vec = c.launch.vec;
  ec.j = -1;
  ec.elem.clear();
  ec.row_values.clear();
  ec.invariant_values.clear();
  if (!c.launch.in_registers()) {
    ec.elem.resize(1);
    return absl::OkStatus();
  }
  for (int64_t j = 0; j < per_thread; ++j) ec.elem.push_back(ElementIndices(c, c.cj[j], &ec.cidx[j]));
  for (int64_t pn : c.row_params) {
    std::vector<llvm::Value*>& vals = ec.row_values[pn];
    for (int64_t j = 0; j < per_thread; j += vec) {
      llvm::AllocaInst* a = c.ahead[pn][j / vec];
      llvm::Value* ld = b.CreateLoad(a->getAllocatedType(), a);
      for (int64_t e = 0; e < vec; ++e) vals.push_back(b.CreateExtractElement(ld, b.getInt64(e)));
    }
  }
  if (c.prefetch) {
    llvm::Value* next = b.CreateAdd(c.row, b.getInt64(c.launch.grid * c.launch.rows_per_block));
    absl::Status ns = EmitIf(b, b.CreateICmpULT(next, b.getInt64(c.plan.rows)), "ahead.next", [&]() {
      LoadAhead(c, next);
      return absl::OkStatus();
    });
    if (!ns.ok()) return ns;
  }
  for (int64_t pn : c.invariant_params) {
    std::vector<llvm::Value*>& vals = ec.invariant_values[pn];
    for (int64_t j = 0; j < per_thread; j += vec) {
      llvm::Value* ld = LoadVector(c, pn, c.cj[j]);
      for (int64_t e = 0; e < vec; ++e) vals.push_back(b.CreateExtractElement(ld, b.getInt64(e)));
    }
  }
  return absl::OkStatus();
}

// The accumulators of reduce `r` set to its init values.
absl::Status EmitReduceInit(RowEmitContext& c, const HloInstruction* r) {
  const int64_t n = r->operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) {
    absl::StatusOr<ElementGenerator> init = c.GenOf(r->operand(n + i));
    if (!init.ok()) return init.status();
    absl::StatusOr<llvm::Value*> v = (*init)(IrArray::Index());
    if (!v.ok()) return v.status();
    c.b.CreateStore(*v, c.slots[r][i]);
  }
  return absl::OkStatus();
}

// acc = reducer(acc, r's inputs at `idx`).
absl::Status FoldElement(RowEmitContext& c, const HloInstruction* r, const IrArray::Index& idx) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t n = r->operand_count() / 2;
  const std::vector<llvm::AllocaInst*>& acc = c.slots[r];
  std::vector<llvm::Value*> cur, vals;
  for (int64_t i = 0; i < n; ++i) {
    cur.push_back(b.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
    absl::StatusOr<ElementGenerator> in = c.GenOf(r->operand(i));
    if (!in.ok()) return in.status();
    absl::StatusOr<llvm::Value*> v = (*in)(idx);
    if (!v.ok()) return v.status();
    vals.push_back(*v);
  }
  absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*c.k.emitter, *r->to_apply(), cur, vals);
  if (!next.ok()) return next.status();
  for (int64_t i = 0; i < n; ++i) b.CreateStore((*next)[i], acc[i]);
  return absl::OkStatus();
}

// FoldElement at column `col` of the current row (rows not in registers).
absl::Status FoldColumn(RowEmitContext& c, const HloInstruction* r, llvm::Value* col) {
  c.ec.elem[0] = ElementIndices(c, col, nullptr);
  c.ec.j = 0;
  absl::Status fs = FoldElement(c, r, c.ec.elem[0][c.plan.in_dims]);
  c.ec.j = -1;
  return fs;
}

// The thread's part of the row folded into r's accumulators: its register elements, or a
// strided walk over the row (U columns per trip where fold_unroll asks).
absl::Status EmitRowFold(RowEmitContext& c, const HloInstruction* r) {
  llvm::IRBuilderBase& b = c.b;
  if (c.launch.in_registers()) {
    absl::Status ls;
    for (int64_t j = 0; j < c.launch.per_thread && ls.ok(); ++j) {
      c.ec.j = j;
      ls = FoldElement(c, r, c.ec.elem[j][c.plan.in_dims]);
    }
    c.ec.j = -1;
    return ls;
  }
  const int64_t row_len = c.plan.row_len, per_row = c.launch.per_row, u = c.launch.fold_unroll;
  auto at = [&](llvm::Value* col) { return FoldColumn(c, r, col); };
  if (u <= 1 || row_len < u * per_row)
    return EmitStridedLoop(b, c.lane, b.getInt64(row_len), b.getInt64(per_row), "fold", at);
  // Trips i < main_end have all of i, i + per_row, ..., i + (u-1)*per_row in the row; the rest
  // (fewer than u per thread) one at a time.
  const int64_t main_end = row_len - (u - 1) * per_row, step = u * per_row;
  absl::Status ls = EmitStridedLoop(b, c.lane, b.getInt64(main_end), b.getInt64(step), "fold.main",
                                    [&](llvm::Value* i) -> absl::Status {
                                      for (int64_t q = 0; q < u; ++q)
                                        if (absl::Status fs = at(b.CreateAdd(i, b.getInt64(q * per_row))); !fs.ok())
                                          return fs;
                                      return absl::OkStatus();
                                    });
  if (!ls.ok()) return ls;
  // lane < per_row <= main_end: the main loop ran ceil((main_end - lane) / step) trips.
  llvm::Value* trips = b.CreateUDiv(b.CreateSub(b.getInt64(main_end + step - 1), c.lane), b.getInt64(step));
  llvm::Value* rest = b.CreateAdd(c.lane, b.CreateMul(trips, b.getInt64(step)));
  return EmitStridedLoop(b, rest, b.getInt64(row_len), b.getInt64(per_row), "fold.rest", at);
}

// Warp: butterfly shuffles leave the warp's value of r's accumulators in every lane.
absl::StatusOr<std::vector<llvm::Value*>> EmitWarpCombine(RowEmitContext& c, const HloInstruction* r) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t n = r->operand_count() / 2, per_row = c.launch.per_row;
  const std::vector<llvm::AllocaInst*>& acc = c.slots[r];
  std::vector<llvm::Value*> cur;
  for (int64_t i = 0; i < n; ++i) cur.push_back(b.CreateLoad(acc[i]->getAllocatedType(), acc[i]));
  // Rows narrower than a warp stay within their lanes (offsets below per_row); the warp's last
  // rows may be past the end, so only the lanes still here take part.
  llvm::Value* mask = per_row < 32 ? c.k.ActiveMask() : nullptr;
  for (int off = static_cast<int>(std::min<int64_t>(16, per_row / 2)); off >= 1; off /= 2) {
    std::vector<llvm::Value*> other;
    for (llvm::Value* v : cur) other.push_back(c.k.ShuffleXor(v, off, mask));
    absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*c.k.emitter, *r->to_apply(), cur, other);
    if (!next.ok()) return next.status();
    cur = *next;
  }
  return cur;
}

// Block (rows of several warps): each warp's first lane publishes its value `cur` to shared
// memory, then every thread folds the partials in warp order.
absl::StatusOr<std::vector<llvm::Value*>> EmitBlockCombine(RowEmitContext& c, const HloInstruction* r,
                                                           const std::vector<llvm::Value*>& cur) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t n = r->operand_count() / 2, warps_per_row = c.launch.warps_per_row();
  llvm::Value* first = b.CreateICmpEQ(b.CreateURem(c.lane, b.getInt64(32)), b.getInt64(0));
  absl::Status ws = EmitIf(b, first, "publish", [&]() -> absl::Status {
    for (int64_t i = 0; i < n; ++i)
      b.CreateStore(cur[i], b.CreateInBoundsGEP(llvm::ArrayType::get(cur[i]->getType(), warps_per_row),
                                                c.shared[r][i], {b.getInt64(0), c.warp}));
    return absl::OkStatus();
  });
  if (!ws.ok()) return ws;
  c.k.Barrier();
  std::vector<llvm::Value*> total;
  for (int64_t w = 0; w < warps_per_row; ++w) {
    std::vector<llvm::Value*> part;
    for (int64_t i = 0; i < n; ++i)
      part.push_back(b.CreateLoad(cur[i]->getType(),
                                  b.CreateInBoundsGEP(llvm::ArrayType::get(cur[i]->getType(), warps_per_row),
                                                      c.shared[r][i], {b.getInt64(0), b.getInt64(w)})));
    if (w == 0) {
      total = part;
      continue;
    }
    absl::StatusOr<std::vector<llvm::Value*>> next = ApplyReducer(*c.k.emitter, *r->to_apply(), total, part);
    if (!next.ok()) return next.status();
    total = *next;
  }
  return total;
}

// Reduce `r` over the current row: init, the thread's fold, the warp's and the block's combine;
// every thread of the row ends with the row's value in r's slots.
absl::Status EmitRowReduce(RowEmitContext& c, const HloInstruction* r) {
  if (absl::Status s = EmitReduceInit(c, r); !s.ok()) return s;
  if (absl::Status s = EmitRowFold(c, r); !s.ok()) return s;
  absl::StatusOr<std::vector<llvm::Value*>> cur = EmitWarpCombine(c, r);
  if (!cur.ok()) return cur.status();
  if (c.launch.warps_per_row() > 1) {
    cur = EmitBlockCombine(c, r, *cur);
    if (!cur.ok()) return cur.status();
  }
  const std::vector<llvm::AllocaInst*>& acc = c.slots[r];
  for (size_t i = 0; i < cur->size(); ++i) c.b.CreateStore((*cur)[i], acc[i]);
  return absl::OkStatus();
}

// Row outputs of a register row: V values per vector store where the output is row-major and
// stored as its value type, else element by element.
absl::Status EmitRegisterRowOutputs(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t per_thread = c.launch.per_thread, vec = c.launch.vec;
  for (size_t o = 0; o < c.plan.outputs.size(); ++o) {
    if (!c.plan.output_is_row[o]) continue;
    absl::StatusOr<ElementGenerator> g = c.GenOf(c.plan.outputs[o]);
    if (!g.ok()) return g.status();
    const IrArray& out = c.k.outputs[o];
    const Dims od = c.plan.outputs[o]->shape().dimensions();
    const PrimitiveType t = out.shape().element_type();
    const bool plain = IsRowMajorLayout(out.shape()) && PlainType(t) && out.shape().dimensions() == od;
    llvm::Type* et = PrimitiveTypeToIrType(t, b.getContext());
    for (int64_t j0 = 0; j0 < per_thread; j0 += vec) {
      llvm::Value* v = llvm::UndefValue::get(llvm::FixedVectorType::get(et, vec));
      for (int64_t e = 0; e < vec; ++e) {
        c.ec.j = j0 + e;
        const IrArray::Index& idx = c.ec.elem[j0 + e][od];
        absl::StatusOr<llvm::Value*> x = (*g)(idx);
        if (!x.ok()) return x.status();
        if (!plain) {
          out.EmitWriteArrayElement(idx, *x, b);
          continue;
        }
        v = b.CreateInsertElement(v, *x, b.getInt64(e));
      }
      if (plain)
        b.CreateAlignedStore(v, b.CreateInBoundsGEP(et, out.base(), {b.CreateAdd(c.row_base, c.cj[j0])}),
                             llvm::Align(std::min<int64_t>(16, vec * ByteWidth(t))));
    }
    c.ec.j = -1;
  }
  return absl::OkStatus();
}

// Row outputs of rows not in registers: a strided pass over the row.
absl::Status EmitStridedRowOutputs(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  return EmitStridedLoop(
      b, c.lane, b.getInt64(c.plan.row_len), b.getInt64(c.launch.per_row), "store", [&](llvm::Value* col) -> absl::Status {
        c.ec.elem[0] = ElementIndices(c, col, nullptr);
        c.ec.j = 0;
        for (size_t o = 0; o < c.plan.outputs.size(); ++o) {
          if (!c.plan.output_is_row[o]) continue;
          absl::StatusOr<ElementGenerator> g = c.GenOf(c.plan.outputs[o]);
          if (!g.ok()) return g.status();
          const IrArray::Index& idx = c.ec.elem[0][c.plan.outputs[o]->shape().dimensions()];
          absl::StatusOr<llvm::Value*> v = (*g)(idx);
          if (!v.ok()) return v.status();
          c.k.outputs[o].EmitWriteArrayElement(idx, *v, b);
        }
        c.ec.j = -1;
        return absl::OkStatus();
      });
}

// Outputs of the reduced shape: written by the row's first thread.
absl::Status EmitReducedOutputs(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  return EmitIf(b, b.CreateICmpEQ(c.lane, b.getInt64(0)), "write", [&]() -> absl::Status {
    for (size_t o = 0; o < c.plan.outputs.size(); ++o) {
      if (c.plan.output_is_row[o]) continue;
      absl::StatusOr<ElementGenerator> g = c.GenOf(c.plan.outputs[o]);
      if (!g.ok()) return g.status();
      const IrArray::Index& idx = c.ec.kept[c.plan.outputs[o]->shape().dimensions()];
      absl::StatusOr<llvm::Value*> v = (*g)(idx);
      if (!v.ok()) return v.status();
      c.k.outputs[o].EmitWriteArrayElement(idx, *v, b);
    }
    return absl::OkStatus();
  });
}

// One row (c.row): its indices, its register values, every reduce in order, then the outputs.
absl::Status EmitRow(RowEmitContext& c) {
  EmitRowIndices(c);
  if (absl::Status s = LoadRegisterRow(c); !s.ok()) return s;
  for (const HloInstruction* r : c.plan.reduces)
    if (absl::Status s = EmitRowReduce(c, r); !s.ok()) return s;
  bool any_row = false;
  for (size_t o = 0; o < c.plan.outputs.size(); ++o) any_row = any_row || c.plan.output_is_row[o];
  if (any_row) {
    absl::Status s = c.launch.in_registers() ? EmitRegisterRowOutputs(c) : EmitStridedRowOutputs(c);
    if (!s.ok()) return s;
  }
  if (absl::Status s = EmitReducedOutputs(c); !s.ok()) return s;
  // The next row reuses the shared partials. With two or more reduces a warp cannot
  // overwrite the first one's partials before every warp has passed the last one's
  // barrier (after reading the first's), so only a single reduce needs this barrier.
  if (c.launch.warps_per_row() > 1 && c.plan.reduces.size() < 2) c.k.Barrier();
  return absl::OkStatus();
}

// The blocks stride over the groups of rows_per_block rows; each thread takes its row of each.
absl::Status EmitRowLoop(RowEmitContext& c) {
  llvm::IRBuilderBase& b = c.b;
  const int64_t rows_per_block = c.launch.rows_per_block;
  return EmitStridedLoop(
      b, c.k.BlockIdX(), b.getInt64(c.launch.groups), b.getInt64(c.launch.grid), "rows", [&](llvm::Value* g) -> absl::Status {
        c.row = b.CreateAdd(b.CreateMul(g, b.getInt64(rows_per_block)), c.row_in_block, "row");
        // Warp-per-row blocks may run past the last row (no barriers there); block-per-row
        // blocks always have a row.
        if (rows_per_block == 1) return EmitRow(c);
        return EmitIf(b, b.CreateICmpULT(c.row, b.getInt64(c.plan.rows)), "row.valid", [&] { return EmitRow(c); });
      });
}

}  // namespace

namespace {

// The loop kernel evaluates a reduce once per element that reads it: fine for a reduce root,
// quadratic for a chain (a reduce broadcast back over its input). Say so for large ones rather
// than leave a kernel seconds long unexplained.
void WarnIfLoopRecomputesReduce(const GpuKernel& k, const HloComputation& fused) {
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
        return;
      }
    }
  }
}

}  // namespace

void WarnLoopReduction(const GpuKernel& k, const HloComputation& fused) {
  // Only fusions that are not rows (a column or non-trailing reduce) the split emitter refused.
  if (AnalyzeRows(fused)) return;
  WarnIfLoopRecomputesReduce(k, fused);
}

absl::StatusOr<bool> TryEmitRowReduction(GpuKernel& k, const HloComputation& fused,
                                         const std::function<ElementGenerator(int64_t)>& parameter) {
  // RowReductionFor (gpu_reduction_row_plan.h) is the whole condition; false only when the
  // fusion is not this emitter's (fusion_emitter_kind.cc chose another).
  std::optional<RowPlan> plan = RowReductionFor(fused, k.outputs.size(), *k.device);
  if (!plan) return false;
  const RowLaunchPlan launch = ComputeRowLaunchPlan(*plan, fused, *k.device);
  k.launch = runtime::LaunchDimensions{};
  k.launch.block_x = launch.block;
  k.launch.grid_x = launch.grid;

  RowEmitContext c(k, *plan, launch);
  AllocateReduceSlots(c);
  SelectVectorParameters(c, fused);
  if (absl::Status s = MakeRowGenerators(c, fused, parameter); !s.ok()) return s;
  AllocateSharedPartials(c);
  EmitThreadIndices(c);
  if (absl::Status s = EmitFirstPrefetch(c); !s.ok()) return s;
  if (absl::Status s = EmitRowLoop(c); !s.ok()) return s;
  return true;
}

}  // namespace hloc::codegen::gpu
