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
  // Reads return the element's value type (PrimitiveTypeToIrType: s4 loads a byte and truncates
  // to i4); writes take the value type (or the storage type) and widen sub-byte integers as a
  // Literal holds them (sign-extended for s2/s4, zero-extended for u2/u4).
  llvm::Value* EmitReadArrayElement(const Index& index, llvm::IRBuilderBase& b) const;
  void EmitWriteArrayElement(const Index& index, llvm::Value* value, llvm::IRBuilderBase& b) const;

  // The row-major linear element number of `index` in the physical order of the layout (the
  // offset in elements from base), as an i64.
  llvm::Value* EmitLinearIndex(const Index& index, llvm::IRBuilderBase& b) const;
  // The logical index of the element at physical linear offset `linear` (inverse of the above).
  static Index Delinearize(llvm::Value* linear, const Shape& shape, llvm::IRBuilderBase& b);
  // Loads from this array carry !invariant.load (the kernel only reads it), which lets LLVM
  // hoist and vectorize them.
  void MarkInvariantLoads(bool invariant) { invariant_loads_ = invariant; }

 private:
  llvm::Value* base_ = nullptr;
  Shape shape_;
  bool invariant_loads_ = false;
};

// The LLVM type an element value of `type` has in the emitters' arithmetic (what element
// generators produce): pred -> i8 holding 0 or 1 (as XLA), s2/s4/u2/u4 -> i2/i4, s8..u64 ->
// iN, f16 -> half, bf16 -> bfloat, f32 -> float, f64 -> double, the f8 types and f4e2m1fn ->
// i8 holding the raw bits (converted in software), c64/c128 -> {float,float}/{double,double}.
// Storage and arithmetic use the same type except for the sub-byte integers.
llvm::Type* PrimitiveTypeToIrType(PrimitiveType type, llvm::LLVMContext& context);
// The LLVM type one element occupies in memory: as above, but s2/s4/u2/u4 take one byte each
// (unpacked, as a Literal and an npz array hold them).
llvm::Type* PrimitiveTypeToStorageIrType(PrimitiveType type, llvm::LLVMContext& context);

}  // namespace hloc::codegen
