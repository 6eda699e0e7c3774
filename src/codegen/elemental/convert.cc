// XLA's convert between element types (and the control-flow helpers the other files share).
#include "codegen/elemental/elemental_internal.h"
#include "llvm/IR/Intrinsics.h"

namespace hloc::codegen::elemental_internal {
namespace {

using P = PrimitiveType;

bool IsInt(PrimitiveType t) { return IsIntegral(t) || t == P::PRED; }

// A real (f32/f64 compute type) value to the integer type `to`: NaN -> 0, saturating.
llvm::Value* FloatToInt(B& b, llvm::Value* f, PrimitiveType to) {
  llvm::Type* it = PrimitiveTypeToIrType(to, b.getContext());
  if (to == P::PRED) {
    return b.CreateZExt(b.CreateFCmpUNE(f, llvm::ConstantFP::get(f->getType(), 0.0)), it);
  }
  const llvm::Intrinsic::ID id = IsSignedIntegral(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
  return b.CreateIntrinsic(id, {it, f->getType()}, {f});
}

// An integer value of `from` as f32/f64 `ft` (round to nearest even).
llvm::Value* IntToFloat(B& b, llvm::Value* v, PrimitiveType from, llvm::Type* ft) {
  return IsSignedIntegral(from) ? b.CreateSIToFP(v, ft) : b.CreateUIToFP(v, ft);
}

}  // namespace

absl::StatusOr<llvm::Value*> EmitConvertValue(ElementalIrEmitter& e, llvm::Value* v, PrimitiveType from,
                                              PrimitiveType to) {
  B& b = *e.builder();
  if (from == to) return v;
  if (!IsArrayType(from) || !IsArrayType(to))
    return absl::InvalidArgumentError("convert between non-array types");
  llvm::Type* to_ty = PrimitiveTypeToIrType(to, b.getContext());
  const bool from_complex = IsComplex(from), to_complex = IsComplex(to);
  if (IsInt(from)) {
    if (to == P::PRED) return b.CreateZExt(b.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0)), to_ty);
    if (IsInt(to)) return IsSignedIntegral(from) ? b.CreateSExtOrTrunc(v, to_ty) : b.CreateZExtOrTrunc(v, to_ty);
    llvm::Value* f = IntToFloat(b, v, from, ComputeFloatType(to, b));
    if (to_complex) return MakeComplex(b, f, llvm::ConstantFP::get(f->getType(), 0.0));
    return DowncastFloat(b, f, to);
  }
  // A float or complex source: work on its real value (complex -> real keeps the real part).
  llvm::Value* re;
  llvm::Value* im = nullptr;
  if (from_complex) {
    re = b.CreateExtractValue(v, 0);
    im = b.CreateExtractValue(v, 1);
  } else {
    re = UpcastFloat(b, v, from);
  }
  if (to == P::PRED && from_complex) {
    llvm::Value* zero = llvm::ConstantFP::get(re->getType(), 0.0);
    return b.CreateZExt(b.CreateOr(b.CreateFCmpUNE(re, zero), b.CreateFCmpUNE(im, zero)), to_ty);
  }
  if (IsInt(to)) return FloatToInt(b, re, to);
  if (to_complex) {
    llvm::Type* ct = ComputeFloatType(to, b);
    // c128 -> c64 and f64 -> c64 round each part once to f32; f32 -> c128 widens exactly.
    auto fit = [&](llvm::Value* x) { return b.CreateFPCast(x, ct); };
    return MakeComplex(b, fit(re), im ? fit(im) : llvm::ConstantFP::get(ct, 0.0));
  }
  return DowncastFloat(b, re, to);
}

// ---- control flow helpers ---------------------------------------------------------------------
absl::StatusOr<llvm::Value*> EmitIfThenElse(B& b, llvm::Value* cond, const ValueFn& then_fn, const ValueFn& else_fn,
                                            const std::string& name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  auto* then_bb = llvm::BasicBlock::Create(ctx, name + ".then", fn);
  auto* else_bb = llvm::BasicBlock::Create(ctx, name + ".else", fn);
  auto* join_bb = llvm::BasicBlock::Create(ctx, name + ".join", fn);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  absl::StatusOr<llvm::Value*> tv = then_fn();
  if (!tv.ok()) return tv.status();
  llvm::BasicBlock* then_end = b.GetInsertBlock();
  b.CreateBr(join_bb);
  b.SetInsertPoint(else_bb);
  absl::StatusOr<llvm::Value*> ev = else_fn();
  if (!ev.ok()) return ev.status();
  llvm::BasicBlock* else_end = b.GetInsertBlock();
  b.CreateBr(join_bb);
  b.SetInsertPoint(join_bb);
  if ((*tv)->getType() != (*ev)->getType())
    return absl::InternalError("if-then-else branches yield different types");
  llvm::PHINode* phi = b.CreatePHI((*tv)->getType(), 2, name);
  phi->addIncoming(*tv, then_end);
  phi->addIncoming(*ev, else_end);
  return phi;
}

absl::Status EmitIf(B& b, llvm::Value* cond, const std::function<absl::Status()>& body, const std::string& name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  auto* then_bb = llvm::BasicBlock::Create(b.getContext(), name + ".then", fn);
  auto* join_bb = llvm::BasicBlock::Create(b.getContext(), name + ".join", fn);
  b.CreateCondBr(cond, then_bb, join_bb);
  b.SetInsertPoint(then_bb);
  if (absl::Status s = body(); !s.ok()) return s;
  b.CreateBr(join_bb);
  b.SetInsertPoint(join_bb);
  return absl::OkStatus();
}

absl::Status EmitLoops(B& b, const std::vector<int64_t>& bounds, const std::string& name,
                       const std::function<absl::Status(const std::vector<llvm::Value*>&)>& body) {
  std::vector<llvm::Value*> ivs;
  std::function<absl::Status(size_t)> level = [&](size_t d) -> absl::Status {
    if (d == bounds.size()) return body(ivs);
    return EmitForLoop(b, b.getInt64(0), b.getInt64(bounds[d]), name + std::to_string(d),
                       [&](llvm::Value* iv) -> absl::Status {
                         ivs.push_back(iv);
                         absl::Status s = level(d + 1);
                         ivs.pop_back();
                         return s;
                       });
  };
  return level(0);
}

llvm::AllocaInst* EmitEntryAlloca(B& b, llvm::Type* type, const std::string& name) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock& entry = fn->getEntryBlock();
  llvm::IRBuilder<> eb(&entry, entry.getFirstInsertionPt());
  return eb.CreateAlloca(type, nullptr, name);
}

llvm::Value* ClampIndex(B& b, llvm::Value* v, PrimitiveType t, int64_t hi) {
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Value* x;
  if (IsSignedIntegral(t)) {
    x = b.CreateSExtOrTrunc(v, i64);
  } else {
    x = b.CreateZExtOrTrunc(v, i64);
    if (v->getType()->getIntegerBitWidth() >= 64)  // u64 beyond INT64_MAX reads as very large
      x = b.CreateSelect(b.CreateICmpSLT(x, I64(b, 0)), I64(b, INT64_MAX), x);
  }
  if (hi < 0) hi = 0;
  x = b.CreateSelect(b.CreateICmpSLT(x, I64(b, 0)), I64(b, 0), x);
  return b.CreateSelect(b.CreateICmpSGT(x, I64(b, hi)), I64(b, hi), x);
}

}  // namespace hloc::codegen::elemental_internal
