// KernelModules: every GPU kernel is emitted into an LLVM module of its own, so that
//  - identical kernels compile once (XLA's kernel reuse, `deduplicated_name=` in its dumps): a
//    transformer repeats one layer N times, and its N copies of each kernel differ only in names;
//  - the unique kernels are optimized and lowered in chunks of bounded size (LLVM's O3 and the
//    NVPTX backend grow faster than linearly in one module holding every kernel), and the
//    chunks' PTX is joined into the one PTX module the executable carries (CombinePtx).
// Identity is exact: two kernels are the same when their modules print the same text once value
// names are dropped, internal globals renumbered and the kernel renamed (the text is the map key,
// so a hash hit is always compared in full). The text covers the body, the argument attributes
// (noalias, alignment, sizes) and the launch annotations; each thunk keeps its own launch.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codegen/gpu/nvptx_backend.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen::gpu {

constexpr unsigned kSharedAddressSpace = 3;  // NVPTX's shared memory

class KernelModules {
 public:
  KernelModules(llvm::LLVMContext* context, NvptxOptions options);

  // A fresh module (NVPTX triple and data layout) for the kernel about to be emitted.
  llvm::Module* Begin(const std::string& kernel_name);
  // The kernel is complete: returns the name to launch, `kernel_name` or that of an earlier
  // identical kernel (whose module is kept; this one is dropped).
  std::string Finish();
  // The kernel could not be emitted: its module is dropped.
  void Abandon();

  int64_t num_unique() const { return unique_; }
  int64_t num_deduplicated() const { return deduplicated_; }

  // The unique kernels' modules linked into chunks of about `max_instructions` LLVM
  // instructions each (a kernel larger than that is a chunk of its own), in emission order.
  absl::StatusOr<std::vector<std::unique_ptr<llvm::Module>>> TakeChunks(int64_t max_instructions);

 private:
  std::unique_ptr<llvm::Module> NewModule(const std::string& name) const;

  llvm::LLVMContext* context_;
  NvptxOptions options_;
  std::string triple_, data_layout_;
  std::unique_ptr<llvm::Module> current_;
  std::string current_name_;
  std::vector<std::unique_ptr<llvm::Module>> modules_;
  absl::flat_hash_map<std::string, std::string> kernel_by_text_;  // canonical text -> kernel name
  int64_t unique_ = 0;
  int64_t deduplicated_ = 0;
};

// Whether the module holds device memory of its own (a split reduction's partials and arrival
// counter): such a kernel is never shared, as two thunks running it at once (graph branches)
// would share that memory.
bool HasDeviceState(const llvm::Module& module);

// The text two kernel modules share exactly when they are the same kernel up to names. The
// module's names are blanked while it prints and restored after: it is left as it was.
std::string CanonicalKernelText(llvm::Module& module, const std::string& kernel_name);

// Instructions in the module's function bodies (the chunk measure).
int64_t InstructionCount(const llvm::Module& module);

}  // namespace hloc::codegen::gpu
