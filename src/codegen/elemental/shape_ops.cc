// Element generators of the data-movement ops: each maps the output index to an operand index
// (XLA's elemental forms of broadcast, reshape, bitcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse and gather). Out-of-range start indices clamp,
// as XLA's semantics say; parts of the output that come from different operands (pad,
// concatenate, dynamic-update-slice) branch, so no operand is read out of bounds.
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

// Picks one of operands [lo, hi) of a concatenate by the index along `dim` (binary search of
// the offsets, so deep concatenates stay shallow).
SV ConcatPick(B& b, const GeneratorMap& ops, const HloInstruction* hlo, int64_t dim, const std::vector<int64_t>& offsets,
              size_t lo, size_t hi, const Index& index) {
  if (hi - lo == 1) {
    std::vector<llvm::Value*> in = index.multidim;
    in[dim] = b.CreateSub(in[dim], I64(b, offsets[lo]));
    return OperandGenerator(ops, hlo, static_cast<int64_t>(lo))(Index(in));
  }
  const size_t mid = (lo + hi) / 2;
  return EmitIfThenElse(
      b, b.CreateICmpSLT(index[dim], I64(b, offsets[mid])),
      [&] { return ConcatPick(b, ops, hlo, dim, offsets, lo, mid, index); },
      [&] { return ConcatPick(b, ops, hlo, dim, offsets, mid, hi, index); }, "concat");
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
      const int64_t dim = dims[0];
      std::vector<int64_t> offsets;
      int64_t off = 0;
      for (const HloInstruction* op : hlo->operands()) {
        offsets.push_back(off);
        off += op->shape().dimensions(dim);
      }
      if (offsets.empty()) return absl::InvalidArgumentError("concatenate without operands");
      return Gen([=](const Index& index) -> SV {
        return ConcatPick(*b, *ops, hlo, dim, offsets, 0, offsets.size(), index);
      });
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
