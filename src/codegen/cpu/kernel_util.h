// Small pieces shared by the CPU kernel emitters (cpu_kernel_emitter.cc, cpu_special_kernels.cc):
// the kernel being built (function, builder, argument arrays) and loop helpers.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/elemental/computation_generators.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "codegen/elemental/ir_array.h"
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

// for (i = start; i < end; ++i) body(i), in i64 (codegen/elemental/elemental_ir_emitter.h).
using ::hloc::codegen::EmitForLoop;
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

// MakeComputationGenerators (codegen/elemental/computation_generators.h) makes the element
// generators of fused computations and bodies.

// The special kernels (cpu_special_kernels.cc). `root` is the instruction computed: an unfused
// instruction, or the root of a fusion whose other instructions `generators` holds.
absl::Status EmitSortKernel(KernelContext& k, const HloInstruction& sort);
absl::Status EmitTopKKernel(KernelContext& k, const HloInstruction& topk);
absl::Status EmitScanKernel(KernelContext& k, const HloInstruction& scan);
// The pieces of a scan kernel the GPU's serial scan shares: the layout of its operands and
// results (checked: the body must be element-independent), and one slice position's whole
// recurrence, with the body's generators made by `make_generators` from the parameter readers.
struct ScanSlices {
  int64_t c = 0, nin = 0, nres = 0, nout = 0;  // carries, inputs, results, non-carry results
  int64_t dim = 0, len = 0;                   // the scanned dimension and its length
  std::vector<int64_t> slice_dims;            // the other dimensions
};
absl::StatusOr<ScanSlices> AnalyzeScan(const HloInstruction& scan, const std::vector<IrArray>& operands,
                                       const std::vector<IrArray>& outputs);
using ScanBodyGenerators = std::function<absl::StatusOr<std::shared_ptr<GeneratorMap>>(
    const std::function<ElementGenerator(int64_t)>& parameter)>;
absl::Status EmitScanSlice(llvm::IRBuilderBase& b, const HloInstruction& scan, const ScanSlices& p,
                           const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                           const IrArray::Index& s, const ScanBodyGenerators& make_generators);
absl::Status EmitSelectAndScatterKernel(KernelContext& k, const HloInstruction& sas);
// select-and-scatter as a gather (parallel over the operand's shape, no atomics; the GPU's
// kernel shares it): the checks of its operands, and output element `o` computed and written.
absl::Status CheckSelectAndScatter(const std::vector<IrArray>& operands, const std::vector<IrArray>& outputs,
                                   const HloInstruction& sas);
absl::Status EmitSelectAndScatterElement(llvm::IRBuilderBase& b, ElementalIrEmitter& emitter,
                                         const HloInstruction& sas, const IrArray& operand, const IrArray& source,
                                         llvm::Value* init_value, const IrArray& out, const IrArray::Index& o);
// Scatter and dynamic-update-slice read their operands through `operand_gen` (operand i's
// generator) and `operand_array` (operand i's array when it is a kernel argument, for the
// in-place check; null otherwise).
absl::Status EmitScatterKernel(KernelContext& k, const HloInstruction& scatter,
                               const std::function<ElementGenerator(int64_t)>& operand_gen,
                               const std::function<const IrArray*(int64_t)>& operand_array);
absl::Status EmitDynamicUpdateSliceKernel(KernelContext& k, const HloInstruction& dus, const GeneratorMap& operands,
                                          const std::function<const IrArray*(int64_t)>& operand_array);

}  // namespace hloc::codegen::cpu
