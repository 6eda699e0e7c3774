// The pieces every GPU kernel emitter shares (src/codegen/gpu/*_emitter.cc): the kernel under
// construction (a `ptx_kernel` function with one pointer parameter per argument slice), the
// NVPTX special registers, barriers, warp shuffles, shared memory, the libdevice-calling
// elemental emitter, and a generator walk over a fused computation with per-instruction
// overrides (reductions replace their generators with values computed per row).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/elemental/computation_generators.h"
#include "codegen/elemental/elemental_ir_emitter.h"
#include "codegen/elemental/ir_array.h"
#include "codegen/thunk_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen::gpu {

// Facts the kernel emitters size their launches by (from the hardware profile).
struct GpuDeviceInfo {
  int compute_capability_major = 9, compute_capability_minor = 0;
  int64_t sm_count = 132;
  int64_t threads_per_block = 128;       // loop kernels (XLA's default is 128)
  int64_t max_threads_per_block = 1024;
  int64_t max_threads_per_sm = 2048;
  int64_t shared_memory_per_block = 48 * 1024;  // static shared memory a kernel may declare
  int64_t waves = 4;  // grid-stride loops launch at most this many waves of resident blocks
  int64_t split_reduction_light_cost = 16;  // gpu_reduction_split.h
  int64_t topk_split_warps_per_sm = 16;        // gpu_topk_warp.cc
  int64_t topk_split_min_part_elements = 4096;  // gpu_topk_warp.cc
  // The row-reduction emitter's launch plan (gpu_reduction_emitter.cc).
  int64_t row_long_row_elements = 8192;
  int64_t row_warp_row_max_elements = 512;
  int64_t row_warp_rows_per_block = 8;
  int64_t row_vectors_per_thread = 2;
  int64_t row_fold_unroll = 4;
  // (threads_per_block, waves, split_reduction_light_cost, the topk_split_* and row_* come from
  // the profile's tuning block, engine/tuning.h.)
  std::string sm_name() const;  // "sm_90"
};

// The elemental emitter with transcendentals mapped to libdevice (__nv_expf, __nv_erff, ...):
// NVPTX cannot select llvm.exp/log/sin/cos/pow or call libm.
class GpuElementalIrEmitter : public ElementalIrEmitter {
 public:
  using ElementalIrEmitter::ElementalIrEmitter;
  llvm::Value* EmitMathCall(const std::string& libm_name, const std::vector<llvm::Value*>& args) override;
  llvm::Value* EmitMathIntrinsic(llvm::Intrinsic::ID id, const std::vector<llvm::Value*>& args) override;
};

// The kernel function being emitted.
struct GpuKernel {
  llvm::Module* module = nullptr;
  llvm::Function* function = nullptr;
  llvm::IRBuilder<>* b = nullptr;
  GpuElementalIrEmitter* emitter = nullptr;
  std::string name;
  const GpuDeviceInfo* device = nullptr;
  bool deterministic_ops = false;  // no floating-point atomics (GpuCompileOptions)
  std::vector<IrArray> operands;  // operand leaves, in KernelArgument order
  std::vector<IrArray> outputs;   // result leaves
  std::vector<runtime::BufferSlice> operand_slices, output_slices;
  runtime::LaunchDimensions launch;
  // Which emitter filled the body ("loop", "row-reduction", ...; the dispatch in
  // gpu_kernel_emitter.cc sets it) and, for a launch with fewer threads than the work wants,
  // why the op is inherently serial (launch_check.h); copied to the thunk.
  std::string emitter_name;
  std::string serial_reason;
  // Blocks per SM the launch plan assumes are resident at once (0: no request): ptxas is asked
  // to fit the registers for them (the "minctasm" annotation, written with "maxntidx" when the
  // kernel is finished).
  int64_t min_blocks_per_sm = 0;

  llvm::Value* ThreadIdX();   // i64
  llvm::Value* ThreadIdY();
  llvm::Value* BlockIdX();
  llvm::Value* GridDimX();
  void Barrier();
  // An (uninitialized) array of `count` elements of `type` in shared memory (address space 3).
  llvm::Value* SharedArray(llvm::Type* type, int64_t count, const std::string& name);
  // Butterfly shuffle of a value of any first-class type the emitters use (ints, floats,
  // structs of them), split into 32-bit pieces. `mask` (i32) names the lanes taking part
  // (default: the whole warp); ActiveMask() where some lanes of the warp may have left.
  llvm::Value* ShuffleXor(llvm::Value* value, int offset, llvm::Value* mask = nullptr);
  // The same with the lane offset a run-time value (a loop over butterfly rounds).
  llvm::Value* ShuffleXor(llvm::Value* value, llvm::Value* offset, llvm::Value* mask = nullptr);
  llvm::Value* ActiveMask();  // i32, the lanes of the warp executing this point
  // match.any.sync: the lanes of `mask` (i32) whose `value` (i32) equals this lane's; every
  // lane of `mask` must execute it (sm_70+).
  llvm::Value* MatchAnySync(llvm::Value* mask, llvm::Value* value);
  llvm::Value* LaneMaskLt();  // i32, the lanes below this one (%lanemask_lt)
  // Whether output `o` is the same buffer as operand leaf `i` (in-place updates).
  bool OutputAliasesOperand(size_t o, size_t i) const;
};

// for (i = start; i < end; i += step), i64 (codegen/elemental/elemental_ir_emitter.h).
using ::hloc::codegen::EmitStridedLoop;

// The logical index (into `dims`, row-major) of linear element `linear`.
IrArray::Index DelinearizeRowMajor(llvm::Value* linear, const std::vector<int64_t>& dims, llvm::IRBuilderBase& b);

// MakeComputationGenerators (codegen/elemental/computation_generators.h) with the GPU's
// hardware float conversions; `override_gen` may return a generator for an instruction (else
// empty, and the elemental emitter makes one); `tuple_leaf` reads an array leaf of a tuple
// parameter (ComputationGeneratorOptions::tuple_parameter_leaf).
using GeneratorOverride = std::function<ElementGenerator(const HloInstruction*)>;
absl::StatusOr<std::shared_ptr<GeneratorMap>> MakeFusionGenerators(
    ElementalIrEmitter& emitter, const HloComputation& computation,
    const std::function<ElementGenerator(int64_t)>& parameter, const GeneratorOverride& override_gen,
    const std::function<ElementGenerator(int64_t, int64_t)>& tuple_leaf = {});

// `inst`'s generator in `gens`, or an internal error naming it.
absl::StatusOr<ElementGenerator> GeneratorOf(const GeneratorMap& gens, const HloInstruction* inst);

// A reduce's value read back from its accumulator slots (one per member; `value_type` a struct
// for a variadic reduce): what the reduction emitters give a reduce's users.
ElementGenerator AccumulatorGenerator(std::vector<llvm::AllocaInst*> slots, llvm::Type* value_type,
                                      llvm::IRBuilderBase* b);

// Applies a reducer computation to (accumulators..., values...), returning the new accumulators.
absl::StatusOr<std::vector<llvm::Value*>> ApplyReducer(ElementalIrEmitter& e, const HloComputation& reducer,
                                                       const std::vector<llvm::Value*>& acc,
                                                       const std::vector<llvm::Value*>& values);

// Launch geometry of a grid-stride loop over `work_items` with `block` threads per block.
runtime::LaunchDimensions GridStrideLaunch(int64_t work_items, int64_t block, const GpuDeviceInfo& device);

// Elements of an array shape (1 for scalars); the leaves summed for tuples.
int64_t ElementCount(const Shape& shape);

// Adds the NVVM kernel annotation `key` = `value` (maxntidx, minctasm, ...) for `function`.
void AnnotateKernel(llvm::Module* module, llvm::Function* function, const char* key, int64_t value);
// The minor_to_major of `shape` (the default when it has none).
std::vector<int64_t> MinorToMajorOf(const Shape& shape);
bool IsRowMajorLayout(const Shape& shape);

}  // namespace hloc::codegen::gpu
