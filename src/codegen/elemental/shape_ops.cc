// Element generators of the data-movement ops: each maps the output index to an operand index
// (XLA's elemental forms of broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse and gather). Out-of-range start indices clamp,
// as XLA's semantics say; parts of the output that come from different operands (pad,
// concatenate, dynamic-update-slice) branch, so no operand is read out of bounds.
#include <bit>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_internal.h"

namespace hloc::codegen::elemental_internal {
namespace {

using O = HloOpcode;
using Gen = ElementGenerator;
using SV = absl::StatusOr<llvm::Value*>;

// Start index `k` of `hlo`, read through the elemental generators of its operands.
SV StartIndex(B& b, const GeneratorMap& ops, const HloInstruction* hlo, int64_t first, int64_t k, int64_t hi) {
  return EmitClampedStartIndex(b, *hlo, first, k, hi, [&](int64_t i) { return OperandGenerator(ops, hlo, i); });
}

// The row-major linear number of `index` in `dims` (a shape's logical order).
llvm::Value* RowMajorLinear(B& b, const Index& index, const std::vector<int64_t>& dims) {
  llvm::Value* linear = I64(b, 0);
  for (size_t d = 0; d < dims.size(); ++d) linear = b.CreateAdd(b.CreateMul(linear, I64(b, dims[d])), index[d]);
  return linear;
}

Index RowMajorDelinearize(B& b, llvm::Value* linear, const std::vector<int64_t>& dims) {
  std::vector<llvm::Value*> out(dims.size());
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (d == 0) {
      out[d] = linear;
    } else {
      out[d] = b.CreateURem(linear, I64(b, dims[d]));
      linear = b.CreateUDiv(linear, I64(b, dims[d]));
    }
  }
  return Index(out);
}

Gen Mapped(const GeneratorMap* ops, const HloInstruction* hlo, std::function<absl::StatusOr<Index>(const Index&)> map) {
  return [ops, hlo, map](const Index& index) -> SV {
    absl::StatusOr<Index> in = map(index);
    if (!in.ok()) return in.status();
    return OperandGenerator(*ops, hlo, 0)(*in);
  };
}

// Reads element `k` of a constant i64 table (invariant: the load may be hoisted or cached).
llvm::Value* TableEntry(B& b, llvm::GlobalVariable* table, llvm::Value* k) {
  llvm::Value* ptr = b.CreateInBoundsGEP(table->getValueType(), table, {I64(b, 0), k});
  llvm::LoadInst* load = b.CreateLoad(b.getInt64Ty(), ptr);
  load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  return load;
}

llvm::GlobalVariable* ConstantTable(llvm::Module& module, const std::vector<int64_t>& values, const std::string& name) {
  auto* type = llvm::ArrayType::get(llvm::Type::getInt64Ty(module.getContext()), values.size());
  auto* table = new llvm::GlobalVariable(module, type, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantDataArray::get(module.getContext(), values), name);
  table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return table;
}

// Jumps to blocks[slot] (slot < blocks.size()). A switch has at most kSwitchFanOut cases: a
// larger set goes through a first switch on slot / kSwitchFanOut (on another value, so LLVM
// does not merge the two), since LLVM's machine passes spend time quadratic in the number of
// successors of one block (thousands of distinct concatenate operands took minutes).
constexpr int64_t kSwitchFanOut = 64;
void EmitSlotSwitch(B& b, llvm::Value* slot, const std::vector<llvm::BasicBlock*>& blocks) {
  const int64_t n = static_cast<int64_t>(blocks.size());
  // The default is never taken (slot is always valid); it is a real block, not UB.
  if (n <= kSwitchFanOut) {
    llvm::SwitchInst* sw = b.CreateSwitch(slot, blocks[0], static_cast<unsigned>(n));
    for (int64_t s = 0; s < n; ++s) sw->addCase(b.getInt64(s), blocks[s]);
    return;
  }
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  const int64_t groups = (n + kSwitchFanOut - 1) / kSwitchFanOut;
  std::vector<llvm::BasicBlock*> group_blocks;
  for (int64_t g = 0; g < groups; ++g) group_blocks.push_back(llvm::BasicBlock::Create(b.getContext(), "concat.group", fn));
  llvm::Value* group = b.CreateUDiv(slot, I64(b, kSwitchFanOut));
  llvm::Value* within = b.CreateURem(slot, I64(b, kSwitchFanOut));
  llvm::SwitchInst* outer = b.CreateSwitch(group, group_blocks[0], static_cast<unsigned>(groups));
  for (int64_t g = 0; g < groups; ++g) outer->addCase(b.getInt64(g), group_blocks[g]);
  for (int64_t g = 0; g < groups; ++g) {
    b.SetInsertPoint(group_blocks[g]);
    const int64_t first = g * kSwitchFanOut, count = std::min(kSwitchFanOut, n - first);
    llvm::SwitchInst* inner = b.CreateSwitch(within, blocks[first], static_cast<unsigned>(count));
    for (int64_t s = 0; s < count; ++s) inner->addCase(b.getInt64(s), blocks[first + s]);
  }
}

// What every element of one concatenate needs, made once per kernel: the operands' offsets
// along `dim` (a constant table) and the distinct operands ("slots"; an operand repeated is
// read by one block), with a table from operand to slot when some repeat.
struct ConcatPlan {
  int64_t dim = 0;
  int64_t operands = 0;
  llvm::GlobalVariable* offsets = nullptr;
  std::vector<int64_t> slot_operand;          // an operand number of each slot
  llvm::GlobalVariable* slots = nullptr;      // operand -> slot; null when every operand is its own
};

ConcatPlan MakeConcatPlan(llvm::Module& module, const HloInstruction* hlo, int64_t dim) {
  ConcatPlan plan;
  plan.dim = dim;
  plan.operands = hlo->operand_count();
  std::vector<int64_t> offsets, operand_slot;
  absl::flat_hash_map<const HloInstruction*, int64_t> slot_of;
  int64_t offset = 0;
  for (int64_t i = 0; i < plan.operands; ++i) {
    offsets.push_back(offset);
    offset += hlo->operand(i)->shape().dimensions(dim);
    auto [it, inserted] = slot_of.try_emplace(hlo->operand(i), static_cast<int64_t>(plan.slot_operand.size()));
    if (inserted) plan.slot_operand.push_back(i);
    operand_slot.push_back(it->second);
  }
  plan.offsets = ConstantTable(module, offsets, "concat.offsets");
  if (plan.slot_operand.size() != static_cast<size_t>(plan.operands))
    plan.slots = ConstantTable(module, operand_slot, "concat.slots");
  return plan;
}

// A concatenate's element. The operand holding index[dim] is found without branches, by a
// binary search of the offsets table (log2 of the operand count steps, each a load and a
// select); a switch then jumps to a block per distinct operand, which reads it at the index less
// its offset, and the blocks join in one phi. The IR grows with the number of distinct operands
// only and holds no chains of branches and joins: those (a nested if/else, or XLA's bisection of
// branches) make LLVM's SimplifyCFG fold empty blocks into ever wider phis, superlinear in the
// operand count (a minute for 12k operands).
SV EmitConcatenate(B& b, const GeneratorMap& ops, const HloInstruction* hlo, const ConcatPlan& plan,
                   const Index& index) {
  const int64_t n = plan.operands, dim = plan.dim;
  // k: the last operand whose offset is <= index[dim] (an operand of width 0 shares its offset
  // with the next one and is never picked, as index[dim] < the total width).
  llvm::Value* k = I64(b, 0);
  for (int64_t step = static_cast<int64_t>(std::bit_floor(static_cast<uint64_t>(n - 1))); step > 0; step >>= 1) {
    llvm::Value* next = b.CreateAdd(k, I64(b, step));
    llvm::Value* in_table = b.CreateICmpSLT(next, I64(b, n));
    llvm::Value* at = b.CreateSelect(in_table, next, k);  // stays inside the table
    llvm::Value* take = b.CreateAnd(in_table, b.CreateICmpSLE(TableEntry(b, plan.offsets, at), index[dim]));
    k = b.CreateSelect(take, next, k);
  }
  llvm::Value* source = b.CreateSub(index[dim], TableEntry(b, plan.offsets, k));
  llvm::Value* slot = plan.slots == nullptr ? k : TableEntry(b, plan.slots, k);
  const std::vector<int64_t>& slot_operand = plan.slot_operand;
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  std::vector<llvm::BasicBlock*> blocks;
  for (size_t s = 0; s < slot_operand.size(); ++s) blocks.push_back(llvm::BasicBlock::Create(ctx, "concat.operand", fn));
  EmitSlotSwitch(b, slot, blocks);
  auto* exit = llvm::BasicBlock::Create(ctx, "concat.exit", fn);
  std::vector<std::pair<llvm::Value*, llvm::BasicBlock*>> results;
  for (size_t s = 0; s < blocks.size(); ++s) {
    b.SetInsertPoint(blocks[s]);
    std::vector<llvm::Value*> in = index.multidim;
    in[dim] = source;
    SV v = OperandGenerator(ops, hlo, slot_operand[s])(Index(in));
    if (!v.ok()) return v;
    results.emplace_back(*v, b.GetInsertBlock());
    b.CreateBr(exit);
  }
  b.SetInsertPoint(exit);
  llvm::PHINode* phi = b.CreatePHI(results.front().first->getType(), results.size(), "concat");
  for (const auto& [value, block] : results) {
    if (value->getType() != phi->getType()) return absl::InternalError("concatenate operands yield different types");
    phi->addIncoming(value, block);
  }
  return phi;
}

absl::StatusOr<Gen> MakeGather(ElementalIrEmitter& e, const HloInstruction* hlo, const GeneratorMap& ops) {
  if (!hlo->attrs().gather_dimension_numbers) return absl::InvalidArgumentError("gather without dimension numbers");
  const GatherDimensionNumbers g = *hlo->attrs().gather_dimension_numbers;
  const Shape& operand = hlo->operand(0)->shape();
  const Shape& indices = hlo->operand(1)->shape();
  const std::vector<int64_t> slice = hlo->attrs().dynamic_slice_sizes;
  const int64_t orank = operand.rank(), irank = indices.rank(), out_rank = hlo->shape().rank();
  const int64_t ivd = g.index_vector_dim;
  if (static_cast<int64_t>(slice.size()) != orank || ivd < 0 || ivd > irank)
    return absl::InvalidArgumentError("gather: bad slice sizes or index_vector_dim");
  auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<int64_t> out_batch_dims, offset_operand_dims, ibatch;
  for (int64_t d = 0; d < out_rank; ++d)
    if (!contains(g.offset_dims, d)) out_batch_dims.push_back(d);
  for (int64_t d = 0; d < orank; ++d)
    if (!contains(g.collapsed_slice_dims, d) && !contains(g.operand_batching_dims, d)) offset_operand_dims.push_back(d);
  for (int64_t d = 0; d < irank; ++d)
    if (d != ivd) ibatch.push_back(d);
  if (offset_operand_dims.size() != g.offset_dims.size() || ibatch.size() != out_batch_dims.size())
    return absl::InvalidArgumentError("gather: dimension numbers do not fit the shapes");
  B* b = e.builder();
  const GeneratorMap* opsp = &ops;
  const PrimitiveType it = indices.element_type();
  return Gen([=](const Index& index) -> SV {
    // The batch part of the output index addresses start_indices (with the index vector dim).
    std::vector<llvm::Value*> bidx;
    for (int64_t d : out_batch_dims) bidx.push_back(index[d]);
    std::vector<llvm::Value*> start(orank, I64(*b, 0));
    for (size_t k = 0; k < g.start_index_map.size(); ++k) {
      std::vector<llvm::Value*> iidx(irank, nullptr);
      for (size_t j = 0; j < ibatch.size(); ++j) iidx[ibatch[j]] = bidx[j];
      if (ivd < irank) iidx[ivd] = I64(*b, static_cast<int64_t>(k));
      SV v = OperandGenerator(*opsp, hlo, 1)(Index(iidx));
      if (!v.ok()) return v;
      const int64_t d = g.start_index_map[k];
      start[d] = ClampIndex(*b, *v, it, operand.dimensions(d) - slice[d]);
    }
    for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
      const int64_t sd = g.start_indices_batching_dims[i];
      const size_t pos = std::find(ibatch.begin(), ibatch.end(), sd) - ibatch.begin();
      if (pos >= bidx.size()) return absl::InvalidArgumentError("gather: bad start_indices_batching_dims");
      start[g.operand_batching_dims[i]] = bidx[pos];
    }
    std::vector<llvm::Value*> in = start;
    for (size_t j = 0; j < offset_operand_dims.size(); ++j) {
      const int64_t d = offset_operand_dims[j];
      in[d] = b->CreateAdd(start[d], index[g.offset_dims[j]]);
    }
    return OperandGenerator(*opsp, hlo, 0)(Index(in));
  });
}

}  // namespace

absl::StatusOr<ElementGenerator> MakeShapeOpGenerator(ElementalIrEmitter& e, const HloInstruction* hlo,
                                                      const GeneratorMap& operands) {
  B* b = e.builder();
  const GeneratorMap* ops = &operands;
  const Shape& shape = hlo->shape();
  const int64_t rank = shape.rank();
  const std::vector<int64_t> dims = hlo->attrs().dimensions;
  switch (hlo->opcode()) {
    case O::kBroadcast:
      return Mapped(ops, hlo, [dims](const Index& index) -> absl::StatusOr<Index> {
        std::vector<llvm::Value*> in;
        for (int64_t d : dims) {
          if (d < 0 || d >= static_cast<int64_t>(index.size())) return absl::InvalidArgumentError("bad broadcast dimensions");
          in.push_back(index[d]);
        }
        return Index(in);
      });
    case O::kTranspose:
      return Mapped(ops, hlo, [dims](const Index& index) -> absl::StatusOr<Index> {
        if (dims.size() != index.size()) return absl::InvalidArgumentError("bad transpose permutation");
        std::vector<llvm::Value*> in(index.size());
        for (size_t i = 0; i < dims.size(); ++i) in[dims[i]] = index[i];
        return Index(in);
      });
    case O::kReverse: {
      const std::vector<int64_t> sizes = shape.dimensions();
      return Mapped(ops, hlo, [dims, sizes, b](const Index& index) -> absl::StatusOr<Index> {
        std::vector<llvm::Value*> in = index.multidim;
        for (int64_t d : dims) in[d] = b->CreateSub(I64(*b, sizes[d] - 1), in[d]);
        return Index(in);
      });
    }
    case O::kSlice: {
      const std::vector<SliceDimension> sl = hlo->attrs().slice;
      if (static_cast<int64_t>(sl.size()) != rank) return absl::InvalidArgumentError("bad slice");
      return Mapped(ops, hlo, [sl, b](const Index& index) -> absl::StatusOr<Index> {
        std::vector<llvm::Value*> in(index.size());
        for (size_t d = 0; d < sl.size(); ++d)
          in[d] = b->CreateAdd(I64(*b, sl[d].start), b->CreateMul(index[d], I64(*b, sl[d].stride)));
        return Index(in);
      });
    }
    case O::kReshape: {
      const std::vector<int64_t> in_dims = hlo->operand(0)->shape().dimensions();
      const std::vector<int64_t> out_dims = shape.dimensions();
      return Mapped(ops, hlo, [=](const Index& index) -> absl::StatusOr<Index> {
        return RowMajorDelinearize(*b, RowMajorLinear(*b, index, out_dims), in_dims);
      });
    }
    case O::kBitcast: {
      // The same bytes seen through both layouts: the output's physical offset, delinearized by
      // the operand's layout.
      Shape out = shape, in = hlo->operand(0)->shape();
      if (!out.has_layout()) out.SetDefaultLayout();
      if (!in.has_layout()) in.SetDefaultLayout();
      Gen moved = Mapped(ops, hlo, [=](const Index& index) -> absl::StatusOr<Index> {
        llvm::Value* linear = IrArray(nullptr, out).EmitLinearIndex(index, *b);
        return IrArray::Delinearize(linear, in, *b);
      });
      // XLA's optimized HLO also bitcasts between element types of one width (a bitcast-convert
      // turned into a bitcast): the bits carry over.
      const PrimitiveType from = in.element_type(), to = out.element_type();
      if (from == to) return moved;
      auto width = [](PrimitiveType t) { return t == PrimitiveType::PRED ? 8 : BitWidth(t); };
      if (width(from) != width(to)) return absl::InvalidArgumentError("bitcast between element types of different widths");
      return Gen([=](const Index& index) -> SV {
        SV v = moved(index);
        if (!v.ok()) return v;
        return BitsToValue(*b, ValueToBits(*b, *v, from), to);
      });
    }
    case O::kDynamicSlice: {
      const std::vector<int64_t> in_dims = hlo->operand(0)->shape().dimensions();
      const std::vector<int64_t> sizes = shape.dimensions();
      return Gen([=](const Index& index) -> SV {
        std::vector<llvm::Value*> in(index.size());
        for (int64_t d = 0; d < rank; ++d) {
          SV s = StartIndex(*b, *ops, hlo, 1, d, in_dims[d] - sizes[d]);
          if (!s.ok()) return s;
          in[d] = b->CreateAdd(*s, index[d]);
        }
        return OperandGenerator(*ops, hlo, 0)(Index(in));
      });
    }
    case O::kDynamicUpdateSlice: {
      const std::vector<int64_t> upd = hlo->operand(1)->shape().dimensions();
      const std::vector<int64_t> full = shape.dimensions();
      return Gen([=](const Index& index) -> SV {
        std::vector<llvm::Value*> in_update(index.size());
        llvm::Value* inside = b->getTrue();
        for (int64_t d = 0; d < rank; ++d) {
          SV s = StartIndex(*b, *ops, hlo, 2, d, full[d] - upd[d]);
          if (!s.ok()) return s;
          in_update[d] = b->CreateSub(index[d], *s);
          inside = b->CreateAnd(inside, b->CreateAnd(b->CreateICmpSGE(in_update[d], I64(*b, 0)),
                                                     b->CreateICmpSLT(in_update[d], I64(*b, upd[d]))));
        }
        return EmitIfThenElse(
            *b, inside, [&] { return OperandGenerator(*ops, hlo, 1)(Index(in_update)); },
            [&] { return OperandGenerator(*ops, hlo, 0)(index); }, "dus");
      });
    }
    case O::kConcatenate: {
      if (dims.size() != 1 || dims[0] < 0 || dims[0] >= rank) return absl::InvalidArgumentError("bad concatenate dimension");
      if (hlo->operand_count() == 0) return absl::InvalidArgumentError("concatenate without operands");
      const ConcatPlan plan = MakeConcatPlan(*e.module(), hlo, dims[0]);
      return Gen([=](const Index& index) -> SV { return EmitConcatenate(*b, *ops, hlo, plan, index); });
    }
    case O::kPad: {
      if (!hlo->attrs().padding_config) return absl::InvalidArgumentError("pad without padding config");
      const PaddingConfig pc = *hlo->attrs().padding_config;
      const std::vector<int64_t> in_dims = hlo->operand(0)->shape().dimensions();
      if (static_cast<int64_t>(pc.dimensions.size()) != rank) return absl::InvalidArgumentError("bad padding config");
      return Gen([=](const Index& index) -> SV {
        // Output o of dimension d reads operand (o - low) / (interior + 1) when that divides
        // exactly and is in range (negative padding is just a negative low / high).
        llvm::Value* inside = b->getTrue();
        std::vector<llvm::Value*> in(rank);
        for (int64_t d = 0; d < rank; ++d) {
          const PaddingDimension& p = pc.dimensions[d];
          llvm::Value* x = b->CreateSub(index[d], I64(*b, p.edge_padding_low));
          llvm::Value* ok = b->CreateICmpSGE(x, I64(*b, 0));
          if (p.interior_padding > 0) {
            llvm::Value* step = I64(*b, p.interior_padding + 1);
            ok = b->CreateAnd(ok, b->CreateICmpEQ(b->CreateURem(x, step), I64(*b, 0)));
            x = b->CreateUDiv(x, step);
          }
          ok = b->CreateAnd(ok, b->CreateICmpSLT(x, I64(*b, in_dims[d])));
          inside = b->CreateAnd(inside, ok);
          in[d] = x;
        }
        return EmitIfThenElse(
            *b, inside, [&] { return OperandGenerator(*ops, hlo, 0)(Index(in)); },
            [&] { return OperandGenerator(*ops, hlo, 1)(Index()); }, "pad");
      });
    }
    case O::kGather: return MakeGather(e, hlo, operands);
    default:
      return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(hlo->opcode()))));
  }
}

}  // namespace hloc::codegen::elemental_internal

namespace hloc::codegen {

absl::StatusOr<llvm::Value*> EmitClampedStartIndex(llvm::IRBuilderBase& b, const HloInstruction& hlo, int64_t first,
                                                   int64_t k, int64_t hi,
                                                   const std::function<ElementGenerator(int64_t)>& operand) {
  const int64_t rank = hlo.operand(0)->shape().rank();
  const int64_t n = hlo.operand_count() - first;
  int64_t opnd = first + k;
  IrArray::Index idx;
  if (n == 1 && rank != 1 && hlo.operand(first)->shape().rank() == 1) {  // old HLO: one vector
    opnd = first;
    idx = IrArray::Index({elemental_internal::I64(b, k)});
  } else if (n != rank) {
    return absl::InvalidArgumentError(absl::StrCat(hlo.name(), ": needs ", rank, " start indices"));
  }
  const ElementGenerator gen = operand(opnd);
  if (!gen) return absl::InternalError(absl::StrCat(hlo.name(), ": no element generator for start index operand ", opnd));
  absl::StatusOr<llvm::Value*> v = gen(idx);
  if (!v.ok()) return v;
  return elemental_internal::ClampIndex(b, *v, hlo.operand(opnd)->shape().element_type(), hi);
}

}  // namespace hloc::codegen
