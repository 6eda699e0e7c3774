// Element generators that loop inside one element: reduce (variadic), reduce-window (variadic,
// padding, dilation), dot (any dimension numbers) and convolution (any dimension numbers, window,
// dilations, reversal, feature and batch groups). Accumulators live in entry-block allocas;
// reducers are applied through EmitThreadLocalCall. Dot and convolution accumulate in f32 for
// the narrow float types (XLA's choice), in the result type otherwise.
#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_internal.h"

namespace hloc::codegen::elemental_internal {
namespace {

using O = HloOpcode;
using P = PrimitiveType;
using Gen = ElementGenerator;
using SV = absl::StatusOr<llvm::Value*>;

// Dimension numbers from unverified input must not index past an operand's rank.
bool AllInRange(const std::vector<int64_t>& dims, int64_t rank) {
  for (int64_t d : dims)
    if (d < 0 || d >= rank) return false;
  return true;
}

llvm::Value* PackResults(B& b, const std::vector<llvm::Value*>& vals) {
  if (vals.size() == 1) return vals[0];
  std::vector<llvm::Type*> types;
  for (llvm::Value* v : vals) types.push_back(v->getType());
  llvm::Value* agg = llvm::UndefValue::get(llvm::StructType::get(b.getContext(), types));
  for (size_t i = 0; i < vals.size(); ++i) agg = b.CreateInsertValue(agg, vals[i], static_cast<unsigned>(i));
  return agg;
}

// Shared body of reduce and reduce-window: accumulators initialized from the init operands,
// `loops` drives the iteration and calls `accumulate` with the input index to fold in.
struct Reduction {
  ElementalIrEmitter& e;
  const HloInstruction* hlo;
  const GeneratorMap* ops;
  int64_t n;  // number of inputs
  std::vector<llvm::AllocaInst*> accs;

  absl::Status Init() {
    B& b = *e.builder();
    for (int64_t i = 0; i < n; ++i) {
      const P t = hlo->operand(n + i)->shape().element_type();
      llvm::AllocaInst* a = EmitEntryAlloca(b, PrimitiveTypeToIrType(t, b.getContext()), "acc");
      SV init = OperandGenerator(*ops, hlo, n + i)(Index());
      if (!init.ok()) return init.status();
      b.CreateStore(*init, a);
      accs.push_back(a);
    }
    return absl::OkStatus();
  }
  absl::Status Accumulate(const Index& input_index) {
    B& b = *e.builder();
    std::vector<llvm::Value*> args;
    for (llvm::AllocaInst* a : accs) args.push_back(b.CreateLoad(a->getAllocatedType(), a));
    for (int64_t i = 0; i < n; ++i) {
      SV x = OperandGenerator(*ops, hlo, i)(input_index);
      if (!x.ok()) return x.status();
      args.push_back(*x);
    }
    absl::StatusOr<std::vector<llvm::Value*>> r = e.EmitThreadLocalCall(*hlo->to_apply(), args, hlo->name());
    if (!r.ok()) return r.status();
    if (static_cast<int64_t>(r->size()) != n) return absl::InvalidArgumentError("reducer returns the wrong arity");
    for (int64_t i = 0; i < n; ++i) b.CreateStore((*r)[i], accs[i]);
    return absl::OkStatus();
  }
  llvm::Value* Result() {
    B& b = *e.builder();
    std::vector<llvm::Value*> vals;
    for (llvm::AllocaInst* a : accs) vals.push_back(b.CreateLoad(a->getAllocatedType(), a));
    return PackResults(b, vals);
  }
};

absl::StatusOr<Gen> MakeReduce(ElementalIrEmitter& e, const HloInstruction* hlo, const GeneratorMap& ops) {
  if (hlo->operand_count() % 2 != 0 || !hlo->to_apply()) return absl::InvalidArgumentError("malformed reduce");
  const int64_t n = hlo->operand_count() / 2;
  const Shape& in = hlo->operand(0)->shape();
  const std::vector<int64_t> reduced = hlo->attrs().dimensions;
  std::vector<bool> is_reduced(in.rank(), false);
  for (int64_t d : reduced) {
    if (d < 0 || d >= in.rank()) return absl::InvalidArgumentError("reduce dimension out of range");
    is_reduced[d] = true;
  }
  const Shape& result = hlo->shape().IsTuple() ? hlo->shape().tuple_shapes(0) : hlo->shape();
  std::vector<int64_t> bounds;
  std::vector<int64_t> reduced_sorted;
  for (int64_t d = 0; d < in.rank(); ++d)
    if (is_reduced[d]) {
      reduced_sorted.push_back(d);
      bounds.push_back(in.dimensions(d));
    }
  if (result.rank() + static_cast<int64_t>(reduced_sorted.size()) != in.rank())
    return absl::InvalidArgumentError("reduce: result rank does not fit the reduced dimensions");
  const GeneratorMap* opsp = &ops;
  return Gen([&e, hlo, opsp, n, in, is_reduced, reduced_sorted, bounds](const Index& index) -> SV {
    B& b = *e.builder();
    Reduction red{e, hlo, opsp, n, {}};
    if (auto s = red.Init(); !s.ok()) return s;
    absl::Status s = EmitLoops(b, bounds, "reduce", [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      std::vector<llvm::Value*> idx(in.rank());
      size_t kept = 0;
      for (int64_t d = 0; d < in.rank(); ++d) idx[d] = is_reduced[d] ? nullptr : index[kept++];
      for (size_t k = 0; k < reduced_sorted.size(); ++k) idx[reduced_sorted[k]] = ivs[k];
      return red.Accumulate(Index(idx));
    });
    if (!s.ok()) return s;
    return red.Result();
  });
}

absl::StatusOr<Gen> MakeReduceWindow(ElementalIrEmitter& e, const HloInstruction* hlo, const GeneratorMap& ops) {
  if (hlo->operand_count() % 2 != 0 || !hlo->to_apply() || !hlo->attrs().window)
    return absl::InvalidArgumentError("malformed reduce-window");
  const int64_t n = hlo->operand_count() / 2;
  const Shape in = hlo->operand(0)->shape();
  const Window w = *hlo->attrs().window;
  if (static_cast<int64_t>(w.dimensions.size()) != in.rank())
    return absl::InvalidArgumentError("reduce-window: window rank differs from the operand's");
  std::vector<int64_t> bounds;
  for (const WindowDimension& wd : w.dimensions) bounds.push_back(wd.size);
  const GeneratorMap* opsp = &ops;
  return Gen([&e, hlo, opsp, n, in, w, bounds](const Index& index) -> SV {
    B& b = *e.builder();
    Reduction red{e, hlo, opsp, n, {}};
    if (auto s = red.Init(); !s.ok()) return s;
    absl::Status s = EmitLoops(b, bounds, "window", [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      // Input position o * stride - pad_low + k * window_dilation, in range and on the base
      // dilation grid; positions in the padding contribute nothing (the init value is the
      // reducer's identity).
      llvm::Value* valid = b.getTrue();
      std::vector<llvm::Value*> idx(in.rank());
      for (int64_t d = 0; d < in.rank(); ++d) {
        const WindowDimension& wd = w.dimensions[d];
        llvm::Value* pos = b.CreateAdd(b.CreateSub(b.CreateMul(index[d], I64(b, wd.stride)), I64(b, wd.padding_low)),
                                       b.CreateMul(ivs[d], I64(b, wd.window_dilation)));
        valid = b.CreateAnd(valid, b.CreateICmpSGE(pos, I64(b, 0)));
        if (wd.base_dilation > 1) {
          valid = b.CreateAnd(valid, b.CreateICmpEQ(b.CreateURem(pos, I64(b, wd.base_dilation)), I64(b, 0)));
          pos = b.CreateUDiv(pos, I64(b, wd.base_dilation));
        }
        valid = b.CreateAnd(valid, b.CreateICmpSLT(pos, I64(b, in.dimensions(d))));
        idx[d] = pos;
      }
      return EmitIf(b, valid, [&] { return red.Accumulate(Index(idx)); }, "in_window");
    });
    if (!s.ok()) return s;
    return red.Result();
  });
}

// Multiply-accumulate in the accumulation type of result type `rt`.
struct Mac {
  ElementalIrEmitter& e;
  P rt, acc_t;
  llvm::AllocaInst* acc = nullptr;

  Mac(ElementalIrEmitter& em, P result) : e(em), rt(result) {
    if (IsFloatingPoint(rt) && rt != P::F64) acc_t = P::F32;
    else if (rt == P::PRED) acc_t = P::S64;
    else acc_t = rt;
  }
  void Init() {
    B& b = *e.builder();
    llvm::Type* t = PrimitiveTypeToIrType(acc_t, b.getContext());
    acc = EmitEntryAlloca(b, t, "dot_acc");
    b.CreateStore(llvm::Constant::getNullValue(t), acc);
  }
  absl::Status Add(llvm::Value* l, P lt, llvm::Value* r, P rtype) {
    B& b = *e.builder();
    absl::StatusOr<llvm::Value*> a = e.EmitConvert(l, lt, acc_t);
    absl::StatusOr<llvm::Value*> c = e.EmitConvert(r, rtype, acc_t);
    if (!a.ok()) return a.status();
    if (!c.ok()) return c.status();
    llvm::Value* cur = b.CreateLoad(acc->getAllocatedType(), acc);
    llvm::Value* next;
    if (IsComplex(acc_t)) {
      absl::StatusOr<llvm::Value*> prod = EmitComplexBinary(e, O::kMultiply, acc_t, *a, *c);
      if (!prod.ok()) return prod.status();
      absl::StatusOr<llvm::Value*> sum = EmitComplexBinary(e, O::kAdd, acc_t, cur, *prod);
      if (!sum.ok()) return sum.status();
      next = *sum;
    } else if (IsFloatingPoint(acc_t)) {
      next = b.CreateFAdd(cur, b.CreateFMul(*a, *c));
    } else {
      next = b.CreateAdd(cur, b.CreateMul(*a, *c));
    }
    b.CreateStore(next, acc);
    return absl::OkStatus();
  }
  SV Result() {
    B& b = *e.builder();
    return e.EmitConvert(b.CreateLoad(acc->getAllocatedType(), acc), acc_t, rt);
  }
};

absl::StatusOr<Gen> MakeDot(ElementalIrEmitter& e, const HloInstruction* hlo, const GeneratorMap& ops) {
  if (!hlo->attrs().dot_dimension_numbers || hlo->operand_count() != 2)
    return absl::UnimplementedError("elemental dot needs two operands and dimension numbers");
  const DotDimensionNumbers d = *hlo->attrs().dot_dimension_numbers;
  const Shape lhs = hlo->operand(0)->shape(), rhs = hlo->operand(1)->shape();
  auto contains = [](const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<int64_t> lhs_free, rhs_free, bounds;
  for (int64_t i = 0; i < lhs.rank(); ++i)
    if (!contains(d.lhs_batch_dimensions, i) && !contains(d.lhs_contracting_dimensions, i)) lhs_free.push_back(i);
  for (int64_t i = 0; i < rhs.rank(); ++i)
    if (!contains(d.rhs_batch_dimensions, i) && !contains(d.rhs_contracting_dimensions, i)) rhs_free.push_back(i);
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size() ||
      d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size())
    return absl::InvalidArgumentError("dot: mismatched dimension numbers");
  if (!AllInRange(d.lhs_batch_dimensions, lhs.rank()) || !AllInRange(d.lhs_contracting_dimensions, lhs.rank()) ||
      !AllInRange(d.rhs_batch_dimensions, rhs.rank()) || !AllInRange(d.rhs_contracting_dimensions, rhs.rank()))
    return absl::InvalidArgumentError("dot: dimension numbers out of range");
  for (int64_t c : d.lhs_contracting_dimensions) bounds.push_back(lhs.dimensions(c));
  const size_t nb = d.lhs_batch_dimensions.size();
  if (static_cast<size_t>(hlo->shape().rank()) != nb + lhs_free.size() + rhs_free.size())
    return absl::InvalidArgumentError("dot: result rank does not fit the dimension numbers");
  const GeneratorMap* opsp = &ops;
  const P rt = hlo->shape().element_type(), lt = lhs.element_type(), rtt = rhs.element_type();
  return Gen([=, &e](const Index& index) -> SV {
    B& b = *e.builder();
    Mac mac(e, rt);
    mac.Init();
    absl::Status s = EmitLoops(b, bounds, "dot", [&](const std::vector<llvm::Value*>& ivs) -> absl::Status {
      std::vector<llvm::Value*> li(lhs.rank()), ri(rhs.rank());
      for (size_t i = 0; i < nb; ++i) {
        li[d.lhs_batch_dimensions[i]] = index[i];
        ri[d.rhs_batch_dimensions[i]] = index[i];
      }
      for (size_t j = 0; j < lhs_free.size(); ++j) li[lhs_free[j]] = index[nb + j];
      for (size_t j = 0; j < rhs_free.size(); ++j) ri[rhs_free[j]] = index[nb + lhs_free.size() + j];
      for (size_t k = 0; k < ivs.size(); ++k) {
        li[d.lhs_contracting_dimensions[k]] = ivs[k];
        ri[d.rhs_contracting_dimensions[k]] = ivs[k];
      }
      SV l = OperandGenerator(*opsp, hlo, 0)(Index(li));
      if (!l.ok()) return l.status();
      SV r = OperandGenerator(*opsp, hlo, 1)(Index(ri));
      if (!r.ok()) return r.status();
      return mac.Add(*l, lt, *r, rtt);
    });
    if (!s.ok()) return s;
    return mac.Result();
  });
}

absl::StatusOr<Gen> MakeConvolution(ElementalIrEmitter& e, const HloInstruction* hlo, const GeneratorMap& ops) {
  const auto& a = hlo->attrs();
  if (!a.convolution_dimension_numbers || hlo->operand_count() != 2)
    return absl::InvalidArgumentError("convolution without dimension numbers");
  const ConvolutionDimensionNumbers d = *a.convolution_dimension_numbers;
  const Shape lhs = hlo->operand(0)->shape(), rhs = hlo->operand(1)->shape();
  const int64_t nsp = static_cast<int64_t>(d.input_spatial_dimensions.size());
  const Window w = a.window ? *a.window : Window();
  if (static_cast<int64_t>(w.dimensions.size()) != nsp || lhs.rank() != nsp + 2 || rhs.rank() != nsp + 2)
    return absl::InvalidArgumentError("convolution: window and operand ranks disagree");
  const int64_t out_rank = hlo->shape().rank();
  if (!AllInRange(d.input_spatial_dimensions, lhs.rank()) || !AllInRange(d.kernel_spatial_dimensions, rhs.rank()) ||
      !AllInRange(d.output_spatial_dimensions, out_rank) ||
      !AllInRange({d.input_batch_dimension, d.input_feature_dimension}, lhs.rank()) ||
      !AllInRange({d.kernel_input_feature_dimension, d.kernel_output_feature_dimension}, rhs.rank()) ||
      !AllInRange({d.output_batch_dimension, d.output_feature_dimension}, out_rank) ||
      static_cast<int64_t>(d.kernel_spatial_dimensions.size()) != nsp ||
      static_cast<int64_t>(d.output_spatial_dimensions.size()) != nsp)
    return absl::InvalidArgumentError("convolution: dimension numbers out of range");
  const int64_t fgc = a.feature_group_count, bgc = a.batch_group_count;
  const int64_t in_batch = lhs.dimensions(d.input_batch_dimension);
  const int64_t out_z = rhs.dimensions(d.kernel_output_feature_dimension);
  const int64_t in_fg_size = rhs.dimensions(d.kernel_input_feature_dimension);
  if (fgc < 1 || bgc < 1 || out_z % fgc != 0 || out_z % bgc != 0 || in_batch % bgc != 0)
    return absl::InvalidArgumentError("convolution: bad group counts");
  const int64_t out_fg_size = out_z / fgc;
  const int64_t batch_group_size = in_batch / bgc;
  const int64_t depthwise_multiplier = bgc > 1 ? out_z / bgc : 1;
  std::vector<int64_t> bounds;
  for (int64_t s = 0; s < nsp; ++s) bounds.push_back(rhs.dimensions(d.kernel_spatial_dimensions[s]));
  const GeneratorMap* opsp = &ops;
  const P rt = hlo->shape().element_type(), lt = lhs.element_type(), kt = rhs.element_type();
  return Gen([=, &e](const Index& index) -> SV {
    B& b = *e.builder();
    llvm::Value* ob = index[d.output_batch_dimension];
    llvm::Value* oz = index[d.output_feature_dimension];
    llvm::Value* fgi = b.CreateUDiv(oz, I64(b, out_fg_size));
    llvm::Value* bgi = b.CreateUDiv(oz, I64(b, depthwise_multiplier));
    llvm::Value* lhs_batch = b.CreateAdd(ob, b.CreateURem(b.CreateMul(bgi, I64(b, batch_group_size)), I64(b, in_batch)));
    llvm::Value* feature_base = b.CreateMul(fgi, I64(b, in_fg_size));
    Mac mac(e, rt);
    mac.Init();
    absl::Status s = EmitLoops(b, bounds, "conv", [&](const std::vector<llvm::Value*>& ws) -> absl::Status {
      std::vector<llvm::Value*> li(lhs.rank()), ri(rhs.rank());
      llvm::Value* valid = b.getTrue();
      for (int64_t sp = 0; sp < nsp; ++sp) {
        const WindowDimension& wd = w.dimensions[sp];
        llvm::Value* o = index[d.output_spatial_dimensions[sp]];
        llvm::Value* pos = b.CreateAdd(b.CreateSub(b.CreateMul(o, I64(b, wd.stride)), I64(b, wd.padding_low)),
                                       b.CreateMul(ws[sp], I64(b, wd.window_dilation)));
        valid = b.CreateAnd(valid, b.CreateICmpSGE(pos, I64(b, 0)));
        if (wd.base_dilation > 1) {
          valid = b.CreateAnd(valid, b.CreateICmpEQ(b.CreateURem(pos, I64(b, wd.base_dilation)), I64(b, 0)));
          pos = b.CreateUDiv(pos, I64(b, wd.base_dilation));
        }
        valid = b.CreateAnd(valid, b.CreateICmpSLT(pos, I64(b, lhs.dimensions(d.input_spatial_dimensions[sp]))));
        li[d.input_spatial_dimensions[sp]] = pos;
        ri[d.kernel_spatial_dimensions[sp]] =
            wd.window_reversal ? b.CreateSub(I64(b, bounds[sp] - 1), ws[sp]) : ws[sp];
      }
      li[d.input_batch_dimension] = lhs_batch;
      ri[d.kernel_output_feature_dimension] = oz;
      return EmitIf(b, valid, [&]() -> absl::Status {
        return EmitForLoop(b, I64(b, 0), I64(b, in_fg_size), "conv_iz", [&](llvm::Value* iz) -> absl::Status {
          li[d.input_feature_dimension] = b.CreateAdd(feature_base, iz);
          ri[d.kernel_input_feature_dimension] = iz;
          SV l = OperandGenerator(*opsp, hlo, 0)(Index(li));
          if (!l.ok()) return l.status();
          SV r = OperandGenerator(*opsp, hlo, 1)(Index(ri));
          if (!r.ok()) return r.status();
          return mac.Add(*l, lt, *r, kt);
        });
      }, "conv_in_window");
    });
    if (!s.ok()) return s;
    return mac.Result();
  });
}

}  // namespace

absl::StatusOr<ElementGenerator> MakeLoopOpGenerator(ElementalIrEmitter& e, const HloInstruction* hlo,
                                                     const GeneratorMap& ops) {
  switch (hlo->opcode()) {
    case O::kReduce: return MakeReduce(e, hlo, ops);
    case O::kReduceWindow: return MakeReduceWindow(e, hlo, ops);
    case O::kDot: return MakeDot(e, hlo, ops);
    case O::kConvolution: return MakeConvolution(e, hlo, ops);
    default:
      return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(hlo->opcode()))));
  }
}

}  // namespace hloc::codegen::elemental_internal
