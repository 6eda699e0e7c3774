// Generic LLVM-IR helpers both backends' kernel emitters use (XLA: llvm_ir/llvm_util.h and
// KernelSupportLibrary): branches, loop nests over a shape's dimensions, entry-block allocas,
// and kernel symbol names. Nothing here knows which backend the kernel is for.
#pragma once
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/elemental/ir_array.h"
#include "ir/shape.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen {

// A row-major loop nest over `dims` (logical order); body gets one i64 per dimension.
absl::Status EmitIndexLoops(llvm::IRBuilderBase& b, const std::vector<int64_t>& dims, const std::string& name,
                            const std::function<absl::Status(const IrArray::Index&)>& body);
// if (cond) then_body(); the builder is left after the branch.
absl::Status EmitIf(llvm::IRBuilderBase& b, llvm::Value* cond, const std::string& name,
                    const std::function<absl::Status()>& then_body);
// if (cond) then_body() else else_body().
absl::Status EmitIfElse(llvm::IRBuilderBase& b, llvm::Value* cond, const std::string& name,
                        const std::function<absl::Status()>& then_body,
                        const std::function<absl::Status()>& else_body);
// An alloca in the function's entry block (so LLVM promotes it to registers).
llvm::AllocaInst* EntryAlloca(llvm::IRBuilderBase& b, llvm::Type* type, const std::string& name,
                              llvm::Value* count = nullptr);

// Copies every element of `from` to `to` (same dimensions; layouts may differ).
absl::Status EmitArrayCopy(llvm::IRBuilderBase& b, const IrArray& from, const IrArray& to, const std::string& name);

// An index value read from an array element of integer type, as i64 (signed or unsigned).
llvm::Value* IndexToI64(llvm::IRBuilderBase& b, llvm::Value* v, PrimitiveType type);

// A kernel symbol from an HLO name: characters other than [A-Za-z0-9_] (and '.' where
// `allow_dot`: object files take dots, PTX identifiers do not) become '_'; a leading digit gets
// a 'k' in front; "kernel" for an empty name.
std::string KernelSymbolName(const std::string& name, bool allow_dot);
// `base`, else base_1, base_2, ...: the first neither in `taken` nor a symbol of `module`; it is
// added to `taken`.
std::string UniqueSymbolName(const std::string& base, std::set<std::string>& taken, const llvm::Module& module);

}  // namespace hloc::codegen
