// Generic LLVM-IR helpers shared by the CPU and GPU kernel emitters (see llvm_util.h).
#include "codegen/elemental/llvm_util.h"

#include "absl/strings/str_cat.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Function.h"

namespace hloc::codegen {

std::string KernelSymbolName(const std::string& name, bool allow_dot) {
  std::string out = name.empty() ? std::string("kernel") : name;
  for (char& c : out) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    (allow_dot && c == '.');
    if (!ok) c = '_';
  }
  if (out[0] >= '0' && out[0] <= '9') out = "k" + out;
  return out;
}

std::string UniqueSymbolName(const std::string& base, std::set<std::string>& taken, const llvm::Module& module) {
  std::string name = base;
  for (int i = 1; taken.count(name) || module.getNamedValue(name) != nullptr; ++i) name = absl::StrCat(base, "_", i);
  taken.insert(name);
  return name;
}

absl::Status EmitIndexLoops(llvm::IRBuilderBase& b, const std::vector<int64_t>& dims, const std::string& name,
                            const std::function<absl::Status(const IrArray::Index&)>& body) {
  std::vector<llvm::Value*> index(dims.size(), nullptr);
  std::function<absl::Status(size_t)> level = [&](size_t d) -> absl::Status {
    if (d == dims.size()) return body(IrArray::Index(index));
    return EmitForLoop(b, b.getInt64(0), b.getInt64(dims[d]), absl::StrCat(name, ".d", d), [&](llvm::Value* i) {
      index[d] = i;
      return level(d + 1);
    });
  };
  return level(0);
}

absl::Status EmitIf(llvm::IRBuilderBase& b, llvm::Value* cond, const std::string& name,
                    const std::function<absl::Status()>& then_body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx, name + ".then", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, name + ".done", f);
  b.CreateCondBr(cond, then_bb, done);
  b.SetInsertPoint(then_bb);
  if (absl::Status s = then_body(); !s.ok()) return s;
  b.CreateBr(done);
  b.SetInsertPoint(done);
  return absl::OkStatus();
}

absl::Status EmitIfElse(llvm::IRBuilderBase& b, llvm::Value* cond, const std::string& name,
                        const std::function<absl::Status()>& then_body,
                        const std::function<absl::Status()>& else_body) {
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx, name + ".then", f);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx, name + ".else", f);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, name + ".done", f);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  if (absl::Status s = then_body(); !s.ok()) return s;
  b.CreateBr(done);
  b.SetInsertPoint(else_bb);
  if (absl::Status s = else_body(); !s.ok()) return s;
  b.CreateBr(done);
  b.SetInsertPoint(done);
  return absl::OkStatus();
}

llvm::AllocaInst* EntryAlloca(llvm::IRBuilderBase& b, llvm::Type* type, const std::string& name, llvm::Value* count) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
  return entry.CreateAlloca(type, count, name);
}

absl::Status EmitArrayCopy(llvm::IRBuilderBase& b, const IrArray& from, const IrArray& to, const std::string& name) {
  return EmitIndexLoops(b, to.shape().dimensions(), name, [&](const IrArray::Index& index) {
    to.EmitWriteArrayElement(index, from.EmitReadArrayElement(index, b), b);
    return absl::OkStatus();
  });
}

llvm::Value* IndexToI64(llvm::IRBuilderBase& b, llvm::Value* v, PrimitiveType type) {
  if (v->getType()->isIntegerTy(64)) return v;
  if (IsUnsignedIntegral(type) || type == PrimitiveType::PRED) return b.CreateZExtOrTrunc(v, b.getInt64Ty());
  return b.CreateSExtOrTrunc(v, b.getInt64Ty());
}

}  // namespace hloc::codegen
