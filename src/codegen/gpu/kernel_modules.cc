// KernelModules (see kernel_modules.h).
#include "codegen/gpu/kernel_modules.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "llvm/IR/Function.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/raw_ostream.h"

namespace hloc::codegen::gpu {

namespace {

// Names a module's values had before CanonicalKernelText blanked them, to put back after.
class SavedNames {
 public:
  void Rename(llvm::Value& v, const std::string& name) {
    if (!v.hasName() && name.empty()) return;
    saved_.push_back({&v, v.getName().str()});
    v.setName(name);
  }
  // In reverse: every name is unique in its symbol table and none of the temporary ones
  // ("" or '\1'-prefixed) is an original, so each original name is free again when restored.
  void Restore() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first->setName(it->second);
  }

 private:
  std::vector<std::pair<llvm::Value*, std::string>> saved_;
};

}  // namespace

std::string CanonicalKernelText(llvm::Module& m, const std::string& kernel_name) {
  // Blank the names in place and put them back, rather than printing a clone: cloning every
  // kernel was much of the key's cost (2376 kernels at L40). The text is the same as the
  // clone's, so the key is as exact as before.
  const std::string id = m.getModuleIdentifier(), source = m.getSourceFileName();
  m.setModuleIdentifier("");
  m.setSourceFileName("");
  SavedNames saved;
  // Names are the only thing copies of one kernel differ in: HLO names in value names, the
  // kernel's own name in it and in its globals'. '\1' starts no name we emit.
  int64_t next = 0;
  for (llvm::GlobalValue& gv : m.global_values()) {
    if (gv.getName() == kernel_name) {
      saved.Rename(gv, "\1kernel");
    } else if (gv.hasLocalLinkage()) {
      saved.Rename(gv, absl::StrCat("\1g", next++));
    }
  }
  for (llvm::Function& f : m) {
    for (llvm::Argument& a : f.args()) saved.Rename(a, "");
    for (llvm::BasicBlock& bb : f) {
      saved.Rename(bb, "");
      for (llvm::Instruction& i : bb) saved.Rename(i, "");
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  os.flush();
  saved.Restore();
  m.setModuleIdentifier(id);
  m.setSourceFileName(source);
  return text;
}

int64_t InstructionCount(const llvm::Module& module) {
  int64_t n = 0;
  for (const llvm::Function& f : module) n += static_cast<int64_t>(f.getInstructionCount());
  return n;
}

bool HasDeviceState(const llvm::Module& module) {
  for (const llvm::GlobalVariable& gv : module.globals())
    if (!gv.isConstant() && gv.getAddressSpace() != kSharedAddressSpace) return true;
  return false;
}

KernelModules::KernelModules(llvm::LLVMContext* context, NvptxOptions options)
    : context_(context), options_(std::move(options)) {
  // One target machine for the triple and data layout, not one per kernel.
  llvm::Module prototype("prototype", *context_);
  ConfigureNvptxModule(prototype, options_);
  triple_ = prototype.getTargetTriple();
  data_layout_ = prototype.getDataLayoutStr();
}

std::unique_ptr<llvm::Module> KernelModules::NewModule(const std::string& name) const {
  auto m = std::make_unique<llvm::Module>(name, *context_);
  m->setTargetTriple(triple_);
  m->setDataLayout(data_layout_);
  return m;
}

llvm::Module* KernelModules::Begin(const std::string& kernel_name) {
  current_ = NewModule(kernel_name);
  current_name_ = kernel_name;
  return current_.get();
}

std::string KernelModules::Finish() {
  if (!HasDeviceState(*current_)) {
    auto [it, inserted] = kernel_by_text_.try_emplace(CanonicalKernelText(*current_, current_name_), current_name_);
    if (!inserted) {
      ++deduplicated_;
      current_.reset();
      return it->second;
    }
  }
  modules_.push_back(std::move(current_));
  ++unique_;
  return current_name_;
}

void KernelModules::Abandon() { current_.reset(); }

absl::StatusOr<std::vector<std::unique_ptr<llvm::Module>>> KernelModules::TakeChunks(int64_t max_instructions) {
  std::vector<std::unique_ptr<llvm::Module>> chunks;
  std::vector<int64_t> counts;
  int64_t total = 0;
  for (const std::unique_ptr<llvm::Module>& m : modules_) total += counts.emplace_back(InstructionCount(*m));
  // At least kMinChunks chunks of similar size once there is enough code (so that compile
  // threads share the work: with 20000 a chunk, transformer_train_L05's 2 chunks were 20000 and
  // ~1000 instructions), never below kMinChunkInstructions (a chunk's fixed cost) or above the
  // limit. The split depends on the code alone, not on the machine: the PTX is reproducible.
  constexpr int64_t kMinChunks = 4, kMinChunkInstructions = 2000;
  const int64_t limit = std::clamp<int64_t>((total + kMinChunks - 1) / kMinChunks, kMinChunkInstructions,
                                            std::max<int64_t>(max_instructions, kMinChunkInstructions));
  int64_t size = 0;
  for (size_t i = 0; i < modules_.size(); ++i) {
    std::unique_ptr<llvm::Module>& m = modules_[i];
    const int64_t n = counts[i];
    if (chunks.empty() || size + n > limit) {
      m->setModuleIdentifier(absl::StrCat("chunk", chunks.size()));
      chunks.push_back(std::move(m));
      size = n;
      continue;
    }
    // Kernel names are unique; clashing internal names (constants, shared arrays) are renamed.
    if (llvm::Linker::linkModules(*chunks.back(), std::move(m)))
      return absl::InternalError(absl::StrCat("linking kernel modules into ", chunks.back()->getModuleIdentifier(),
                                              " failed"));
    size += n;
  }
  modules_.clear();
  // No kernels still make a (header-only) PTX module, as one module for all kernels did.
  if (chunks.empty()) {
    chunks.push_back(NewModule("chunk0"));
  }
  return chunks;
}

}  // namespace hloc::codegen::gpu
