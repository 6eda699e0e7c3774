// CpuKernelEmitter: the CPU backend of the thunk emitter. Each kernel thunk becomes one LLVM
// function with the ABI of runtime/cpu/runtime_functions.h,
//   void NAME(void** arguments, int64_t part, int64_t num_parts)
// whose arguments are the instruction's operand leaves then its result leaves (thunk_emitter.h).
// Kernels (XLA's IrEmitter / the fusion emitters of backends/cpu):
//   - elemental: loop fusions, input (reduce-rooted) fusions, multi-output fusions and every
//     unfused op with an elemental form (transpose, concatenate, gather, pad, reduce,
//     reduce-window, dot, convolution, iota, ...), split by `part` over the outermost loop;
//   - dynamic-update-slice (fused root or not): in place when the output is the operand's buffer;
//   - scatter: the operand copied unless aliased, then the updates combined in order;
//   - sort: operands copied to the outputs, then __hloc_cpu_sort with a comparator function
//     emitted from the comparator computation; top-k through __hloc_cpu_topk;
//   - scan (element-independent bodies), select-and-scatter.
// Dots whose operands the runtime's GEMM can read become kGemm thunks instead (GemmFor); ffts
// are kFft thunks run by FFTW (FinishFft sets how many parts of the batch run in parallel).
#pragma once
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/thunk_emitter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen::cpu {

struct CpuKernelOptions {
  int64_t max_partitions = 16;        // the most parts one kernel is split into
  int64_t min_work_per_partition = 16384;  // elements (of output or input) per part, at least
};

class CpuKernelEmitter : public ThunkEmitterBackend {
 public:
  CpuKernelEmitter(llvm::Module* module, CpuKernelOptions options) : module_(module), options_(options) {}

  absl::StatusOr<runtime::Thunk> EmitKernel(const HloInstruction& hlo,
                                            const std::vector<KernelArgument>& arguments) override;
  std::optional<GemmPlan> GemmFor(const HloInstruction& dot) override;
  // cholesky, triangular-solve and the solver custom calls: LAPACK thunks (linalg_thunks.h);
  // __onednn$convolution: a kConvolution thunk run by oneDNN (OneDnnConvThunk).
  absl::StatusOr<std::optional<runtime::Thunk>> EmitLibraryCall(
      const HloInstruction& hlo, const std::vector<KernelArgument>& arguments) override;
  // FFTW runs the fft; its batch is split into parts as a kernel's loop is (ChoosePartitions).
  absl::Status FinishFft(const HloInstruction& fft, runtime::Thunk& thunk) override;

  int64_t num_kernels() const { return static_cast<int64_t>(names_.size()); }

 private:
  std::string UniqueName(const std::string& hlo_name);

  llvm::Module* module_;
  CpuKernelOptions options_;
  std::set<std::string> names_;
};

// The GEMM (runtime GemmConfig) for a dot whose operands and result are matrices (or batches of
// matrices) the runtime's GEMM reads directly; nullopt otherwise. Exposed for tests.
std::optional<GemmPlan> CpuGemmPlan(const HloInstruction& dot);

// A __onednn$convolution custom call as a kConvolution thunk (runtime/cpu/onednn_conv.h); nullopt
// for other instructions.
absl::StatusOr<std::optional<runtime::Thunk>> OneDnnConvThunk(const HloInstruction& hlo,
                                                              const std::vector<KernelArgument>& arguments);

// A kernel symbol from an HLO name: characters other than [A-Za-z0-9_.] become '_'.
std::string SanitizeKernelName(const std::string& name);

}  // namespace hloc::codegen::cpu
