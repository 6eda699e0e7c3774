// ElementalIrEmitter: the dispatch from opcode to element generator, the elementwise ops, called
// computations inlined, the loop nest and the fused-computation walk (XLA's
// elemental_ir_emitter.cc, loop_emitter.cc and fused_ir_emitter.cc in one place). The shape ops
// live in shape_ops.cc, the ops that loop inside an element in loop_ops.cc.
#include "codegen/elemental/elemental_ir_emitter.h"

#include <map>
#include <memory>

#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_internal.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace hloc::codegen {

using namespace elemental_internal;  // NOLINT: the helpers of this component
using O = HloOpcode;
using P = PrimitiveType;

namespace elemental_internal {
const ElementGenerator& OperandGenerator(const GeneratorMap& ops, const HloInstruction* hlo, int64_t i) {
  static const ElementGenerator kMissing = [](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> {
    return absl::InternalError("no element generator for an operand");
  };
  auto it = ops.find(hlo->operand(i));
  return it == ops.end() ? kMissing : it->second;
}
}  // namespace elemental_internal

namespace {

// The index of a scalar operand (select's predicate, clamp's bounds) is empty.
IrArray::Index OperandIndex(const HloInstruction* hlo, int64_t i, const IrArray::Index& index) {
  if (hlo->operand(i)->shape().rank() == 0 && hlo->shape().rank() != 0) return IrArray::Index();
  return index;
}

// One element of a literal as an LLVM constant of the element's storage type.
llvm::Constant* LiteralElement(const Literal& lit, int64_t i, llvm::LLVMContext& ctx) {
  const P t = lit.element_type();
  llvm::Type* st = PrimitiveTypeToStorageIrType(t, ctx);
  switch (t) {
    case P::F16:
      return llvm::ConstantFP::get(ctx, llvm::APFloat(llvm::APFloat::IEEEhalf(), llvm::APInt(16, lit.GetRawBits(i))));
    case P::BF16:
      return llvm::ConstantFP::get(ctx, llvm::APFloat(llvm::APFloat::BFloat(), llvm::APInt(16, lit.GetRawBits(i))));
    case P::F32:
      return llvm::ConstantFP::get(ctx, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, lit.GetRawBits(i))));
    case P::F64:
      return llvm::ConstantFP::get(ctx, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, lit.GetRawBits(i))));
    case P::C64: case P::C128: {
      const std::complex<double> c = lit.GetComplex(i);
      llvm::Type* ft = t == P::C64 ? llvm::Type::getFloatTy(ctx) : llvm::Type::getDoubleTy(ctx);
      return llvm::ConstantStruct::get(llvm::cast<llvm::StructType>(st),
                                       {llvm::ConstantFP::get(ft, c.real()), llvm::ConstantFP::get(ft, c.imag())});
    }
    case P::PRED: return llvm::ConstantInt::get(st, lit.GetPred(i) ? 1 : 0);
    default:
      if (IsSignedIntegral(t)) return llvm::ConstantInt::get(st, static_cast<uint64_t>(lit.GetInt(i)), true);
      return llvm::ConstantInt::get(st, lit.GetRawBits(i));
  }
}

absl::StatusOr<ElementGenerator> MakeConstantGenerator(ElementalIrEmitter& e, const HloInstruction* hlo) {
  if (!hlo->attrs().literal) return absl::InvalidArgumentError("constant without a literal");
  const Literal& lit = *hlo->attrs().literal;
  if (!lit.shape().IsArray()) return absl::UnimplementedError("elemental emitter: tuple constant " + hlo->name());
  llvm::LLVMContext& ctx = e.module()->getContext();
  const P t = lit.element_type();
  B* b = e.builder();
  if (lit.element_count() == 1) {
    llvm::Constant* c = LiteralElement(lit, 0, ctx);
    llvm::Type* vt = PrimitiveTypeToIrType(t, ctx);
    llvm::Constant* v = vt == c->getType() ? c : llvm::ConstantExpr::getTrunc(c, vt);
    return ElementGenerator([v](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> { return v; });
  }
  // Arrays become one private global in row-major order, read through an IrArray with the
  // default layout (the literal's own order).
  std::vector<llvm::Constant*> elems;
  elems.reserve(lit.element_count());
  for (int64_t i = 0; i < lit.element_count(); ++i) elems.push_back(LiteralElement(lit, i, ctx));
  auto* at = llvm::ArrayType::get(PrimitiveTypeToStorageIrType(t, ctx), elems.size());
  auto* gv = new llvm::GlobalVariable(*e.module(), at, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
                                      llvm::ConstantArray::get(at, elems), "constant." + hlo->name());
  gv->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  Shape shape(t, lit.shape().dimensions());
  IrArray array(gv, shape);
  array.MarkInvariantLoads(true);
  return ElementGenerator([array, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
    return array.EmitReadArrayElement(index, *b);
  });
}

// bitcast-convert, including between types of different widths (a new or removed most-minor
// dimension, least significant part first).
absl::StatusOr<ElementGenerator> MakeBitcastConvertGenerator(ElementalIrEmitter& e, const HloInstruction* hlo,
                                                             const GeneratorMap& ops) {
  const P from = hlo->operand(0)->shape().element_type();
  const P to = hlo->shape().element_type();
  auto width = [](P t) { return t == P::PRED ? 8 : BitWidth(t); };
  const int wi = width(from), wo = width(to);
  B* b = e.builder();
  // Looked up when called: the map may still grow (and move its entries) until then.
  const GeneratorMap* map = &ops;
  auto gen = [map, hlo](const IrArray::Index& index) { return OperandGenerator(*map, hlo, 0)(index); };
  if (wi == wo) {
    return ElementGenerator([=](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      absl::StatusOr<llvm::Value*> v = gen(index);
      if (!v.ok()) return v;
      return BitsToValue(*b, ValueToBits(*b, *v, from), to);
    });
  }
  if (wi > wo) {
    return ElementGenerator([=](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      if (index.size() == 0) return absl::InvalidArgumentError("bitcast-convert to narrower type needs a minor dimension");
      std::vector<llvm::Value*> in(index.multidim.begin(), index.multidim.end() - 1);
      absl::StatusOr<llvm::Value*> v = gen(IrArray::Index(in));
      if (!v.ok()) return v;
      llvm::Value* bits = ValueToBits(*b, *v, from);
      llvm::Value* shift = b->CreateMul(index.multidim.back(), I64(*b, wo));
      shift = b->CreateZExtOrTrunc(shift, bits->getType());
      llvm::Value* part = b->CreateTrunc(b->CreateLShr(bits, shift), b->getIntNTy(wo));
      return BitsToValue(*b, part, to);
    });
  }
  const int k = wo / wi;
  return ElementGenerator([=](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
    llvm::IntegerType* it = b->getIntNTy(wo);
    llvm::Value* acc = llvm::ConstantInt::get(it, 0);
    for (int j = 0; j < k; ++j) {
      std::vector<llvm::Value*> in = index.multidim;
      in.push_back(I64(*b, j));
      absl::StatusOr<llvm::Value*> v = gen(IrArray::Index(in));
      if (!v.ok()) return v;
      llvm::Value* bits = b->CreateZExt(ValueToBits(*b, *v, from), it);
      acc = b->CreateOr(acc, b->CreateShl(bits, j * wi));
    }
    return BitsToValue(*b, acc, to);
  });
}

// stochastic-convert(x, random) as XLA's decomposition (see the evaluator).
llvm::Value* EmitStochasticConvert(B& b, llvm::Value* x, P from, llvm::Value* rnd, P rnd_t, P to) {
  llvm::Value* v = b.CreateFPCast(UpcastFloat(b, x, from), b.getDoubleTy());
  llvm::Type* dt = PrimitiveTypeToIrType(to, b.getContext());
  llvm::Value* av = CallIntrinsic(b, llvm::Intrinsic::fabs, {v});
  llvm::Value* tr = CallIntrinsic(b, llvm::Intrinsic::floor, {av});
  const int rbits = BitWidth(rnd_t);
  llvm::Value* fixed = b.CreateFMul(b.CreateFSub(av, tr), llvm::ConstantFP::get(b.getDoubleTy(), std::ldexp(1.0, rbits)));
  llvm::Value* fixed_int = b.CreateIntrinsic(llvm::Intrinsic::fptoui_sat, {rnd->getType(), b.getDoubleTy()}, {fixed});
  llvm::Value* up = b.CreateICmpULT(rnd, fixed_int);
  llvm::Value* r = b.CreateIntrinsic(llvm::Intrinsic::fptosi_sat, {dt, b.getDoubleTy()}, {tr});
  r = b.CreateSelect(up, b.CreateAdd(r, llvm::ConstantInt::get(dt, 1)), r);
  llvm::Value* zero = llvm::ConstantFP::get(b.getDoubleTy(), 0.0);
  r = b.CreateSelect(b.CreateFCmpOLT(v, zero), b.CreateNeg(r), r);
  const int w = BitWidth(to);
  const double dmin = -std::ldexp(1.0, w - 1), dmax = std::ldexp(1.0, w - 1) - 1;
  llvm::Value* imin = llvm::ConstantInt::get(dt, llvm::APInt::getSignedMinValue(w));
  llvm::Value* imax = llvm::ConstantInt::get(dt, llvm::APInt::getSignedMaxValue(w));
  r = b.CreateSelect(b.CreateFCmpOLE(v, llvm::ConstantFP::get(b.getDoubleTy(), dmin)), imin, r);
  return b.CreateSelect(b.CreateFCmpOGE(v, llvm::ConstantFP::get(b.getDoubleTy(), dmax)), imax, r);
}

}  // namespace

llvm::Value* ElementalIrEmitter::EmitMathCall(const std::string& libm_name, const std::vector<llvm::Value*>& args) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* a : args) types.push_back(a->getType());
  auto* fty = llvm::FunctionType::get(args[0]->getType(), types, false);
  llvm::FunctionCallee callee = module_->getOrInsertFunction(libm_name, fty);
  if (auto* f = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    f->setDoesNotThrow();
    f->setMemoryEffects(llvm::MemoryEffects::none());  // pure: lets LLVM hoist and vectorize
  }
  llvm::CallInst* call = b_->CreateCall(callee, args);
  call->setDoesNotThrow();
  return call;
}

std::optional<MathFunction> IntrinsicMathFunction(llvm::Intrinsic::ID id) {
  switch (id) {
    case llvm::Intrinsic::exp: return MathFunction::kExp;
    case llvm::Intrinsic::log: return MathFunction::kLog;
    case llvm::Intrinsic::sin: return MathFunction::kSin;
    case llvm::Intrinsic::cos: return MathFunction::kCos;
    case llvm::Intrinsic::pow: return MathFunction::kPow;
    default: return std::nullopt;
  }
}

llvm::Value* ElementalIrEmitter::EmitMathIntrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args) {
  return b_->CreateIntrinsic(id, {args[0]->getType()}, args);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitConvert(llvm::Value* value, PrimitiveType from, PrimitiveType to) {
  return EmitConvertValue(*this, value, from, to);
}

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitElementwiseOp(const HloInstruction* hlo,
                                                                   const std::vector<llvm::Value*>& v) {
  const O op = hlo->opcode();
  auto need = [&](size_t n) -> absl::Status {
    if (v.size() != n)
      return absl::InvalidArgumentError(absl::StrCat(std::string(HloOpcodeString(op)), " takes ", n, " operands"));
    return absl::OkStatus();
  };
  switch (op) {
    case O::kSelect:
      if (auto s = need(3); !s.ok()) return s;
      return b_->CreateSelect(b_->CreateICmpNE(v[0], llvm::ConstantInt::get(v[0]->getType(), 0)), v[1], v[2]);
    case O::kClamp:
      if (auto s = need(3); !s.ok()) return s;
      return EmitClamp(*this, hlo->shape().element_type(), v[0], v[1], v[2]);
    case O::kBitcastConvert: {
      if (auto s = need(1); !s.ok()) return s;
      const P from = hlo->operand(0)->shape().element_type(), to = hlo->shape().element_type();
      if ((from == P::PRED ? 8 : BitWidth(from)) != (to == P::PRED ? 8 : BitWidth(to)))
        return absl::InvalidArgumentError("bitcast-convert between widths needs MakeElementGenerator");
      return BitsToValue(*b_, ValueToBits(*b_, v[0], from), to);
    }
    case O::kStochasticConvert:
      if (auto s = need(2); !s.ok()) return s;
      if (!IsFloatingPoint(hlo->operand(0)->shape().element_type()) || !IsSignedIntegral(hlo->shape().element_type()))
        return absl::InvalidArgumentError("stochastic-convert takes a float and yields a signed integer");
      return EmitStochasticConvert(*b_, v[0], hlo->operand(0)->shape().element_type(), v[1],
                                   hlo->operand(1)->shape().element_type(), hlo->shape().element_type());
    default: break;
  }
  if (IsElementwiseUnary(op)) {
    if (auto s = need(1); !s.ok()) return s;
    return EmitUnaryOp(*this, hlo, v[0]);
  }
  if (IsElementwiseBinary(op)) {
    if (auto s = need(2); !s.ok()) return s;
    return EmitBinaryOp(*this, hlo, v[0], v[1]);
  }
  return absl::UnimplementedError(absl::StrCat("elemental emitter: ", std::string(HloOpcodeString(op)),
                                               " is not elementwise"));
}

absl::StatusOr<std::vector<llvm::Value*>> ElementalIrEmitter::EmitThreadLocalCall(
    const HloComputation& callee, const std::vector<llvm::Value*>& args, const std::string& name) {
  // Inlined: each instruction of the scalar computation in post order, its operands' values
  // handed over as generators that ignore the (empty) index.
  if (static_cast<size_t>(callee.num_parameters()) != args.size())
    return absl::InvalidArgumentError(absl::StrCat("call of ", callee.name(), " (", name, ") with ", args.size(),
                                                   " arguments, it takes ", callee.num_parameters()));
  absl::flat_hash_map<const HloInstruction*, llvm::Value*> values;
  GeneratorMap gens;
  for (HloInstruction* inst : callee.MakeInstructionPostOrder()) {
    llvm::Value* value;
    if (inst->opcode() == O::kParameter) {
      value = args[inst->attrs().parameter_number];
    } else {
      absl::StatusOr<ElementGenerator> gen = MakeElementGenerator(inst, gens);
      if (!gen.ok()) return gen.status();
      absl::StatusOr<llvm::Value*> v = (*gen)(IrArray::Index());
      if (!v.ok()) return v.status();
      value = *v;
    }
    values[inst] = value;
    gens[inst] = [value](const IrArray::Index&) -> absl::StatusOr<llvm::Value*> { return value; };
  }
  const HloInstruction* root = callee.root_instruction();
  if (!root) return absl::InvalidArgumentError("called computation without a root");
  std::vector<llvm::Value*> results;
  if (root->shape().IsTuple()) {
    for (int64_t i = 0; i < static_cast<int64_t>(root->shape().tuple_shapes().size()); ++i)
      results.push_back(b_->CreateExtractValue(values[root], static_cast<unsigned>(i)));
  } else {
    results.push_back(values[root]);
  }
  return results;
}

namespace {
// Several values as one literal struct (a tuple's leaves, a call's or a fusion's results).
llvm::Value* PackStruct(llvm::IRBuilderBase& b, const std::vector<llvm::Value*>& values) {
  std::vector<llvm::Type*> types;
  for (llvm::Value* x : values) types.push_back(x->getType());
  llvm::Value* agg = llvm::UndefValue::get(llvm::StructType::get(b.getContext(), types));
  for (size_t i = 0; i < values.size(); ++i) agg = b.CreateInsertValue(agg, values[i], static_cast<unsigned>(i));
  return agg;
}

bool IsScalarOrScalarTuple(const Shape& s) {
  if (!s.IsTuple()) return s.IsArray() && s.rank() == 0;
  for (const Shape& e : s.tuple_shapes())
    if (!e.IsArray() || e.rank() != 0) return false;
  return true;
}
}  // namespace

absl::StatusOr<llvm::Value*> ElementalIrEmitter::EmitScalarWhile(const HloInstruction& loop, const GeneratorMap* ops,
                                                                 const IrArray::Index& index) {
  if (loop.called_computations().size() != 2 || loop.operand_count() != 1)
    return absl::InvalidArgumentError(loop.name() + ": a while needs one operand, a condition and a body");
  if (!IsScalarOrScalarTuple(loop.shape()))
    return absl::UnimplementedError(absl::StrCat("elemental emitter: ", loop.name(),
                                                   ": a while inside a kernel carries scalars only"));
  absl::StatusOr<llvm::Value*> init = OperandGenerator(*ops, &loop, 0)(index);
  if (!init.ok()) return init;
  B& b = *b_;
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(b.getContext(), loop.name() + ".header", f);
  llvm::BasicBlock* body = llvm::BasicBlock::Create(b.getContext(), loop.name() + ".body", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(b.getContext(), loop.name() + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* state = b.CreatePHI((*init)->getType(), 2, loop.name() + ".state");
  state->addIncoming(*init, pre);
  absl::StatusOr<std::vector<llvm::Value*>> go = EmitThreadLocalCall(*loop.while_condition(), {state}, loop.name());
  if (!go.ok()) return go.status();
  if (go->size() != 1) return absl::InvalidArgumentError(loop.name() + ": the condition must return one pred");
  llvm::Value* c = (*go)[0];
  if (!c->getType()->isIntegerTy(1)) c = b.CreateICmpNE(c, llvm::ConstantInt::get(c->getType(), 0));
  b.CreateCondBr(c, body, exit);
  b.SetInsertPoint(body);
  absl::StatusOr<std::vector<llvm::Value*>> next = EmitThreadLocalCall(*loop.while_body(), {state}, loop.name());
  if (!next.ok()) return next.status();
  llvm::Value* agg = loop.shape().IsTuple() ? PackStruct(b, *next) : (*next)[0];
  if (agg->getType() != state->getType())
    return absl::InternalError(loop.name() + ": the body's state differs in type from the loop's");
  state->addIncoming(agg, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  return state;
}

absl::StatusOr<ElementGenerator> ElementalIrEmitter::MakeElementGenerator(const HloInstruction* hlo,
                                                                          const GeneratorMap& operands) {
  const O op = hlo->opcode();
  B* b = b_;
  const GeneratorMap* ops = &operands;
  switch (op) {
    case O::kConstant: return MakeConstantGenerator(*this, hlo);
    case O::kBitcastConvert: return MakeBitcastConvertGenerator(*this, hlo, operands);
    case O::kIota: {
      const int64_t dim = hlo->attrs().iota_dimension;
      if (dim < 0 || dim >= hlo->shape().rank()) return absl::InvalidArgumentError("iota dimension out of range");
      const P t = hlo->shape().element_type();
      return ElementGenerator([this, dim, t](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        return EmitConvert(index[dim], P::S64, t);
      });
    }
    case O::kGetDimensionSize: {
      // The dimension's bound: like the evaluator, the backends track no runtime sizes. (XLA
      // folds these away before code generation; an expander here may leave one in a fusion.)
      const std::vector<int64_t>& dims = hlo->attrs().dimensions;
      const Shape& operand = hlo->operand(0)->shape();
      if (dims.size() != 1 || dims[0] < 0 || dims[0] >= operand.rank())
        return absl::InvalidArgumentError(absl::StrCat(hlo->name(), ": get-dimension-size needs one valid dimension"));
      llvm::Value* size = b->getInt64(operand.dimensions(dims[0]));
      const P t = hlo->shape().element_type();
      return ElementGenerator([this, size, t](const IrArray::Index&) { return EmitConvert(size, P::S64, t); });
    }
    case O::kGetTupleElement: {
      const unsigned i = static_cast<unsigned>(hlo->attrs().tuple_index);
      return ElementGenerator([=](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        absl::StatusOr<llvm::Value*> v = OperandGenerator(*ops, hlo, 0)(index);
        if (!v.ok()) return v;
        return b->CreateExtractValue(*v, i);
      });
    }
    case O::kTuple:
      return ElementGenerator([=](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        std::vector<llvm::Value*> vals;
        std::vector<llvm::Type*> types;
        for (int64_t i = 0; i < hlo->operand_count(); ++i) {
          absl::StatusOr<llvm::Value*> v = OperandGenerator(*ops, hlo, i)(index);
          if (!v.ok()) return v;
          vals.push_back(*v);
          types.push_back((*v)->getType());
        }
        llvm::Value* agg = llvm::UndefValue::get(llvm::StructType::get(b->getContext(), types));
        for (size_t i = 0; i < vals.size(); ++i) agg = b->CreateInsertValue(agg, vals[i], static_cast<unsigned>(i));
        return agg;
      });
    case O::kCopy:
    case O::kOptimizationBarrier:
      if (hlo->operand_count() != 1) break;
      return ElementGenerator([=](const IrArray::Index& index) { return OperandGenerator(*ops, hlo, 0)(index); });
    case O::kFusion:
      // A fusion of scalars inside a thread-local computation (the fusion passes also fuse the
      // scalar loop bodies elementwise-while-to-map makes): its computation inlined.
      if (!IsScalarOrScalarTuple(hlo->shape()) || hlo->called_computations().empty()) break;
      return ElementGenerator([=, this](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        std::vector<llvm::Value*> args;
        for (int64_t i = 0; i < hlo->operand_count(); ++i) {
          if (hlo->operand(i)->shape().rank() != 0 || !hlo->operand(i)->shape().IsArray())
            return absl::UnimplementedError(hlo->name() + ": a fusion inside a kernel's thread takes scalars only");
          absl::StatusOr<llvm::Value*> v = OperandGenerator(*ops, hlo, i)(index);
          if (!v.ok()) return v;
          args.push_back(*v);
        }
        absl::StatusOr<std::vector<llvm::Value*>> r =
            EmitThreadLocalCall(*hlo->fused_instructions_computation(), args, hlo->name());
        if (!r.ok()) return r.status();
        return hlo->shape().IsTuple() ? PackStruct(*b, *r) : (*r)[0];  // multi-output: one struct
      });
    case O::kWhile:
      // A loop over scalars inside a thread (elementwise-while-to-map's map computations): the
      // state a struct of scalars carried by a phi, condition and body inlined each iteration.
      return ElementGenerator([=, this](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        return EmitScalarWhile(*hlo, ops, index);
      });
    case O::kMap:
    case O::kCall:
      return ElementGenerator([=, this](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        if (!hlo->to_apply()) return absl::InvalidArgumentError(hlo->name() + " calls no computation");
        std::vector<llvm::Value*> args;
        for (int64_t i = 0; i < hlo->operand_count(); ++i) {
          absl::StatusOr<llvm::Value*> v = OperandGenerator(*ops, hlo, i)(index);
          if (!v.ok()) return v;
          args.push_back(*v);
        }
        absl::StatusOr<std::vector<llvm::Value*>> r = EmitThreadLocalCall(*hlo->to_apply(), args, hlo->name());
        if (!r.ok()) return r.status();
        return r->size() == 1 ? (*r)[0] : PackStruct(*b, *r);
      });
    default: break;
  }
  if (IsElementwise(op)) {
    if (op == O::kCopy) return absl::InvalidArgumentError("copy takes one operand");
    return ElementGenerator([this, hlo, ops](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
      std::vector<llvm::Value*> vals;
      for (int64_t i = 0; i < hlo->operand_count(); ++i) {
        absl::StatusOr<llvm::Value*> v = OperandGenerator(*ops, hlo, i)(OperandIndex(hlo, i, index));
        if (!v.ok()) return v;
        vals.push_back(*v);
      }
      return EmitElementwiseOp(hlo, vals);
    });
  }
  switch (op) {
    case O::kBroadcast: case O::kReshape: case O::kBitcast: case O::kTranspose: case O::kSlice:
    case O::kDynamicSlice: case O::kDynamicUpdateSlice: case O::kConcatenate: case O::kPad: case O::kReverse:
    case O::kGather:
      return MakeShapeOpGenerator(*this, hlo, operands);
    case O::kReduce: case O::kReduceWindow: case O::kDot: case O::kConvolution:
      return MakeLoopOpGenerator(*this, hlo, operands);
    default:
      return absl::UnimplementedError(absl::StrCat("elemental emitter: no elemental form for ",
                                                   std::string(HloOpcodeString(op)), " (", hlo->name(), ")"));
  }
}

absl::Status EmitStridedLoop(llvm::IRBuilderBase& b, llvm::Value* start, llvm::Value* end, llvm::Value* step,
                             const std::string& name, const std::function<absl::Status(llvm::Value*)>& body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx, name + ".header", f);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx, name + ".body", f);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, name + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2, name + ".iv");
  iv->addIncoming(start, pre);
  b.CreateCondBr(b.CreateICmpSLT(iv, end), body_bb, exit);
  b.SetInsertPoint(body_bb);
  if (absl::Status s = body(iv); !s.ok()) return s;
  llvm::Value* next = b.CreateAdd(iv, step, name + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  iv->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status EmitForLoop(llvm::IRBuilderBase& b, llvm::Value* start, llvm::Value* end, const std::string& name,
                         const std::function<absl::Status(llvm::Value*)>& body) {
  return EmitStridedLoop(b, start, end, b.getInt64(1), name, body);
}

absl::Status EmitLoopNest(const Shape& shape, llvm::IRBuilderBase& b, llvm::Value* part, llvm::Value* num_parts,
                          const std::function<absl::Status(const IrArray::Index&)>& body) {
  if (!shape.IsArray()) return absl::InvalidArgumentError("EmitLoopNest needs an array shape");
  const int64_t rank = shape.rank();
  if (rank == 0) {
    if (!part) return body(IrArray::Index());
    // One part does the single element.
    return EmitIf(b, b.CreateICmpEQ(b.CreateSExtOrTrunc(part, b.getInt64Ty()), b.getInt64(0)),
                  [&] { return body(IrArray::Index()); }, "scalar");
  }
  std::vector<int64_t> order;  // major to minor
  if (shape.has_layout() && static_cast<int64_t>(shape.layout().minor_to_major.size()) == rank) {
    order.assign(shape.layout().minor_to_major.rbegin(), shape.layout().minor_to_major.rend());
  } else {
    for (int64_t i = 0; i < rank; ++i) order.push_back(i);
  }
  std::vector<llvm::Value*> index(rank, nullptr);
  std::function<absl::Status(size_t)> level = [&](size_t k) -> absl::Status {
    if (k == order.size()) return body(IrArray::Index(index));
    const int64_t d = order[k];
    llvm::Value* start = b.getInt64(0);
    llvm::Value* end = b.getInt64(shape.dimensions(d));
    if (k == 0 && part && num_parts) {
      // Part p of n covers [p * size / n, (p + 1) * size / n) of the outermost dimension.
      llvm::Value* p = b.CreateSExtOrTrunc(part, b.getInt64Ty());
      llvm::Value* n = b.CreateSExtOrTrunc(num_parts, b.getInt64Ty());
      llvm::Value* size = b.getInt64(shape.dimensions(d));
      start = b.CreateUDiv(b.CreateMul(p, size), n);
      end = b.CreateUDiv(b.CreateMul(b.CreateAdd(p, b.getInt64(1)), size), n);
    }
    return EmitForLoop(b, start, end, "dim" + std::to_string(d), [&](llvm::Value* iv) -> absl::Status {
      index[d] = iv;
      return level(k + 1);
    });
  };
  return level(0);
}

absl::StatusOr<ElementGenerator> MakeFusedGenerator(ElementalIrEmitter& emitter, const HloComputation& fused,
                                                    const std::vector<IrArray>& parameter_arrays,
                                                    const HloInstruction* root) {
  // Generators refer to the map of their operands' generators, so it lives as long as the
  // returned generator (shared).
  auto gens = std::make_shared<GeneratorMap>();
  // Values already computed for (instruction, index) in the current basic block: an
  // instruction with several users is emitted once per element rather than once per use.
  using Key = std::pair<const HloInstruction*, std::vector<llvm::Value*>>;
  auto cache = std::make_shared<std::map<Key, llvm::Value*>>();
  B* b = emitter.builder();
  for (HloInstruction* inst : fused.MakeInstructionPostOrder()) {
    ElementGenerator gen;
    if (inst->opcode() == O::kParameter) {
      const int64_t n = inst->attrs().parameter_number;
      if (n < 0 || n >= static_cast<int64_t>(parameter_arrays.size()))
        return absl::InvalidArgumentError(absl::StrCat("no array for parameter ", n, " of ", fused.name()));
      const IrArray array = parameter_arrays[n];
      gen = [array, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        return array.EmitReadArrayElement(index, *b);
      };
    } else {
      absl::StatusOr<ElementGenerator> g = emitter.MakeElementGenerator(inst, *gens);
      if (!g.ok()) return g.status();
      gen = std::move(*g);
    }
    if (inst->user_count() > 1 && inst->opcode() != O::kConstant) {
      gen = [gen, inst, cache, b](const IrArray::Index& index) -> absl::StatusOr<llvm::Value*> {
        Key key{inst, index.multidim};
        auto it = cache->find(key);
        if (it != cache->end()) {
          auto* i = llvm::dyn_cast<llvm::Instruction>(it->second);
          if (!i || i->getParent() == b->GetInsertBlock()) return it->second;
        }
        absl::StatusOr<llvm::Value*> v = gen(index);
        if (v.ok()) (*cache)[key] = *v;
        return v;
      };
    }
    (*gens)[inst] = std::move(gen);
  }
  if (!root) root = fused.root_instruction();
  auto it = gens->find(root);
  if (it == gens->end()) return absl::InvalidArgumentError("root is not in the fused computation");
  const ElementGenerator* root_gen = &it->second;
  return ElementGenerator([gens, root_gen](const IrArray::Index& index) { return (*root_gen)(index); });
}

absl::Status VerifyEmittedFunctions(const llvm::Module& module, size_t first) {
  size_t i = 0;
  for (const llvm::Function& f : module) {
    if (i++ < first || f.isDeclaration()) continue;
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyFunction(f, &os)) {
      os.flush();
      return absl::InternalError(absl::StrCat("the emitted LLVM IR of function ", f.getName().str(),
                                              " is invalid: ", err));
    }
  }
  return absl::OkStatus();
}

}  // namespace hloc::codegen
