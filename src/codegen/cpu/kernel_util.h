// Small pieces shared by the CPU kernel emitters (cpu_kernel_emitter.cc, cpu_special_kernels.cc):
// the kernel being built (function, builder, argument arrays) and the special kernels. The
// backend-neutral IR helpers are in codegen/elemental/llvm_util.h, and the scatter, scan and
// select-and-scatter pieces the GPU shares in codegen/elemental/scatter_scan_emitters.h.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/elemental/computation_generators.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "codegen/elemental/ir_array.h"
#include "codegen/elemental/llvm_util.h"
#include "codegen/elemental/scatter_scan_emitters.h"
#include "codegen/thunk_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen::cpu {

// The kernel function under construction.
struct KernelContext {
  llvm::Module* module = nullptr;
  llvm::Function* function = nullptr;
  llvm::IRBuilder<>* b = nullptr;
  ElementalIrEmitter* emitter = nullptr;
  std::string name;
  llvm::Value* part = nullptr;       // i64
  llvm::Value* num_parts = nullptr;  // i64
  std::vector<IrArray> operands;     // operand leaves, in KernelArgument order
  std::vector<IrArray> outputs;      // result leaves
  int64_t partitions = 1;            // what the kernel accepts (Thunk::launch.partitions)
};

// MakeComputationGenerators (codegen/elemental/computation_generators.h) makes the element
// generators of fused computations and bodies.

// The special kernels (cpu_special_kernels.cc). `root` is the instruction computed: an unfused
// instruction, or the root of a fusion whose other instructions `generators` holds.
absl::Status EmitSortKernel(KernelContext& k, const HloInstruction& sort);
absl::Status EmitTopKKernel(KernelContext& k, const HloInstruction& topk);
absl::Status EmitScanKernel(KernelContext& k, const HloInstruction& scan);
absl::Status EmitSelectAndScatterKernel(KernelContext& k, const HloInstruction& sas);
// Dynamic-update-slice reads its operands through `operands` and `operand_array` (operand i's
// array when it is a kernel argument, for the in-place check; null otherwise). Scatter runs
// EmitSerialScatter (scatter_scan_emitters.h) in one part.
absl::Status EmitDynamicUpdateSliceKernel(KernelContext& k, const HloInstruction& dus, const GeneratorMap& operands,
                                          const std::function<const IrArray*(int64_t)>& operand_array);

}  // namespace hloc::codegen::cpu
