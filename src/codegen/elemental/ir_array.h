// IrArray: an array in memory as LLVM IR sees it — a base pointer, its element type and its
// shape with layout — and the multi-dimensional Index used to read or write one element.
// Shared by the CPU and GPU kernel emitters (XLA's llvm_ir::IrArray).
#pragma once
#include <cstdint>
#include <vector>

#include "ir/shape.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Value.h"

namespace hloc::codegen {

class IrArray {
 public:
  // A logical multi-dimensional index (one i64 value per dimension, in logical order).
  struct Index {
    std::vector<llvm::Value*> multidim;
    Index() = default;
    explicit Index(std::vector<llvm::Value*> dims) : multidim(std::move(dims)) {}
    llvm::Value* operator[](size_t i) const { return multidim[i]; }
    size_t size() const { return multidim.size(); }
  };

  IrArray() = default;
  // `base` points at the first byte of the array; `shape` is an array shape with a layout (the
  // default layout when it has none).
  IrArray(llvm::Value* base, Shape shape);

  llvm::Value* base() const { return base_; }
  const Shape& shape() const { return shape_; }

  // The element's address (linearized through the layout's minor_to_major).
  llvm::Value* EmitArrayElementAddress(const Index& index, llvm::IRBuilderBase& b) const;
  // Loads/stores in the storage type (bf16 as LLVM bfloat, f8 types as i8, pred as i8, ...).
  llvm::Value* EmitReadArrayElement(const Index& index, llvm::IRBuilderBase& b) const;
  void EmitWriteArrayElement(const Index& index, llvm::Value* value, llvm::IRBuilderBase& b) const;

 private:
  llvm::Value* base_ = nullptr;
  Shape shape_;
};

// The LLVM type an element of `type` is held in (storage and arithmetic use the same type:
// pred -> i8 in memory and i1 in arithmetic is handled by the emitters).
llvm::Type* PrimitiveTypeToIrType(PrimitiveType type, llvm::LLVMContext& context);

}  // namespace hloc::codegen
