// IrArray: layout-aware element addressing and typed loads/stores (XLA's llvm_ir::IrArray).
#include "codegen/elemental/ir_array.h"

#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Metadata.h"

namespace hloc::codegen {

llvm::Type* PrimitiveTypeToIrType(PrimitiveType type, llvm::LLVMContext& ctx) {
  using P = PrimitiveType;
  switch (type) {
    case P::PRED: case P::S8: case P::U8: return llvm::Type::getInt8Ty(ctx);
    case P::S2: case P::U2: return llvm::Type::getIntNTy(ctx, 2);
    case P::S4: case P::U4: return llvm::Type::getIntNTy(ctx, 4);
    case P::S16: case P::U16: return llvm::Type::getInt16Ty(ctx);
    case P::S32: case P::U32: return llvm::Type::getInt32Ty(ctx);
    case P::S64: case P::U64: return llvm::Type::getInt64Ty(ctx);
    case P::F16: return llvm::Type::getHalfTy(ctx);
    case P::BF16: return llvm::Type::getBFloatTy(ctx);
    case P::F32: return llvm::Type::getFloatTy(ctx);
    case P::F64: return llvm::Type::getDoubleTy(ctx);
    case P::C64: {
      llvm::Type* f = llvm::Type::getFloatTy(ctx);
      return llvm::StructType::get(ctx, {f, f});
    }
    case P::C128: {
      llvm::Type* d = llvm::Type::getDoubleTy(ctx);
      return llvm::StructType::get(ctx, {d, d});
    }
    default:
      if (IsF8OrF4(type)) return llvm::Type::getInt8Ty(ctx);
      // Tokens, tuples and opaque values have no element; an empty struct keeps callers total.
      return llvm::StructType::get(ctx);
  }
}

llvm::Type* PrimitiveTypeToStorageIrType(PrimitiveType type, llvm::LLVMContext& ctx) {
  using P = PrimitiveType;
  if (type == P::S2 || type == P::S4 || type == P::U2 || type == P::U4) return llvm::Type::getInt8Ty(ctx);
  return PrimitiveTypeToIrType(type, ctx);
}

IrArray::IrArray(llvm::Value* base, Shape shape) : base_(base), shape_(std::move(shape)) {
  if (shape_.IsArray() && !shape_.has_layout()) shape_.SetDefaultLayout();
}

llvm::Value* IrArray::EmitLinearIndex(const Index& index, llvm::IRBuilderBase& b) const {
  llvm::Type* i64 = b.getInt64Ty();
  if (shape_.rank() == 0 || index.size() == 0) return llvm::ConstantInt::get(i64, 0);
  // Horner's scheme from the most major physical dimension to the most minor.
  const std::vector<int64_t>& m2m = shape_.layout().minor_to_major;
  llvm::Value* linear = nullptr;
  for (int64_t i = static_cast<int64_t>(m2m.size()) - 1; i >= 0; --i) {
    const int64_t d = m2m[i];
    llvm::Value* idx = index[d];
    if (idx->getType() != i64) idx = b.CreateSExtOrTrunc(idx, i64);
    if (!linear) {
      linear = idx;
    } else {
      linear = b.CreateAdd(b.CreateMul(linear, llvm::ConstantInt::get(i64, shape_.dimensions(d)), "", true, true),
                           idx, "", true, true);
    }
  }
  return linear;
}

IrArray::Index IrArray::Delinearize(llvm::Value* linear, const Shape& shape, llvm::IRBuilderBase& b) {
  llvm::Type* i64 = b.getInt64Ty();
  std::vector<llvm::Value*> dims(shape.rank(), nullptr);
  if (shape.rank() == 0) return Index(dims);
  std::vector<int64_t> m2m;
  if (shape.has_layout()) m2m = shape.layout().minor_to_major;
  if (m2m.size() != static_cast<size_t>(shape.rank())) {
    m2m.clear();
    for (int64_t i = shape.rank() - 1; i >= 0; --i) m2m.push_back(i);
  }
  llvm::Value* rest = b.CreateSExtOrTrunc(linear, i64);
  for (size_t i = 0; i < m2m.size(); ++i) {
    const int64_t d = m2m[i];
    const int64_t n = shape.dimensions(d);
    if (i + 1 == m2m.size()) {
      dims[d] = rest;  // the most major dimension takes what is left
    } else {
      llvm::Value* size = llvm::ConstantInt::get(i64, n);
      dims[d] = b.CreateURem(rest, size);
      rest = b.CreateUDiv(rest, size);
    }
  }
  return Index(dims);
}

llvm::Value* IrArray::EmitArrayElementAddress(const Index& index, llvm::IRBuilderBase& b) const {
  llvm::Type* storage = PrimitiveTypeToStorageIrType(shape_.element_type(), b.getContext());
  if (shape_.rank() == 0) return base_;
  return b.CreateInBoundsGEP(storage, base_, {EmitLinearIndex(index, b)});
}

llvm::Value* IrArray::EmitReadArrayElement(const Index& index, llvm::IRBuilderBase& b) const {
  const PrimitiveType t = shape_.element_type();
  llvm::Type* storage = PrimitiveTypeToStorageIrType(t, b.getContext());
  llvm::LoadInst* load = b.CreateLoad(storage, EmitArrayElementAddress(index, b));
  if (invariant_loads_)
    load->setMetadata(llvm::LLVMContext::MD_invariant_load, llvm::MDNode::get(b.getContext(), {}));
  llvm::Type* value = PrimitiveTypeToIrType(t, b.getContext());
  if (value != storage) return b.CreateTrunc(load, value);
  return load;
}

void IrArray::EmitWriteArrayElement(const Index& index, llvm::Value* value, llvm::IRBuilderBase& b) const {
  const PrimitiveType t = shape_.element_type();
  llvm::Type* storage = PrimitiveTypeToStorageIrType(t, b.getContext());
  if (value->getType() != storage && value->getType()->isIntegerTy() && storage->isIntegerTy()) {
    value = IsSignedIntegral(t) ? b.CreateSExtOrTrunc(value, storage) : b.CreateZExtOrTrunc(value, storage);
  }
  b.CreateStore(value, EmitArrayElementAddress(index, b));
}

}  // namespace hloc::codegen
