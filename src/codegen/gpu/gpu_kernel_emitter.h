// GpuKernelEmitter: the GPU backend of the thunk emitter (XLA's IrEmitterUnnested). Each kernel
// thunk becomes one `ptx_kernel` function in an LLVM module of its own (kernel_modules.h: a
// kernel identical to an earlier one launches that one instead), whose parameters are one
// pointer per argument slice (operand leaves, then result leaves; thunk_emitter.h), marked
// noalias where no other argument shares the slice and align 16 where the slice offset is.
// The cuBLAS/cuDNN custom-calls become kGemm/kConvolution thunks (gpu_library_calls.h), plain
// dots cuBLAS can take kGemm thunks; everything else a kernel (gpu_emitters.h). The GEMMs
// small-gemm-selector marked (custom_call_target "__hloc$small_gemm", a dot's backend_config
// "kind":"__hloc$small_gemm"; passes/library/small_gemm_selector.h) become our own kernel
// (gpu_small_gemm.h); the emitter reads the marking and decides nothing itself.
#pragma once
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/gpu/gpu_kernel_util.h"
#include "codegen/gpu/gpu_small_gemm.h"
#include "codegen/gpu/kernel_modules.h"
#include "codegen/thunk_emitter.h"
#include "llvm/IR/Module.h"

namespace hloc::codegen::gpu {

class GpuKernelEmitter : public ThunkEmitterBackend {
 public:
  GpuKernelEmitter(KernelModules* modules, GpuDeviceInfo device, SmallGemmOptions small_gemm = {},
                   bool deterministic_ops = false)
      : modules_(modules), device_(device), small_gemm_(small_gemm), deterministic_ops_(deterministic_ops) {}

  absl::StatusOr<runtime::Thunk> EmitKernel(const HloInstruction& hlo,
                                            const std::vector<KernelArgument>& arguments) override;
  std::optional<GemmPlan> GemmFor(const HloInstruction& dot) override;
  absl::StatusOr<std::optional<runtime::Thunk>> EmitLibraryCall(
      const HloInstruction& hlo, const std::vector<KernelArgument>& arguments) override;
  // cuFFT runs the fft; an IFFT/IRFFT thunk also names the kernel scaling its result (gpu_fft.cc).
  absl::Status FinishFft(const HloInstruction& fft, runtime::Thunk& thunk) override;

  // Kernel thunks emitted (identical ones included; KernelModules counts the unique ones).
  int64_t num_kernels() const { return static_cast<int64_t>(names_.size()); }
  const GpuDeviceInfo& device() const { return device_; }

 private:
  std::string UniqueName(const std::string& hlo_name);
  // A kKernel thunk running `plan` (gpu_small_gemm.h) for `hlo`; arguments are the caller's.
  absl::StatusOr<runtime::Thunk> SmallGemmThunk(const HloInstruction& hlo, const SmallGemmPlan& plan);

  KernelModules* modules_;
  GpuDeviceInfo device_;
  SmallGemmOptions small_gemm_;
  bool deterministic_ops_ = false;
  std::set<std::string> names_;
};

// Bytes a kernel for `hlo` reads and writes: its result, and each operand scaled by the fraction
// the fusion analysis says it reads (a gather of a few rows touches those rows). The launch
// check (launch_check.h) weighs threads against it.
int64_t BytesTouched(const HloInstruction& hlo);

// A PTX identifier from an HLO name ([A-Za-z0-9_] kept, others '_').
std::string PtxKernelName(const std::string& hlo_name);

}  // namespace hloc::codegen::gpu
