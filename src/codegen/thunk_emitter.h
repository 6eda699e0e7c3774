// ThunkEmitter: a scheduled module + its BufferAssignment -> runtime::ThunkSequence (XLA's
// ThunkEmitter of backends/cpu and IrEmitterUnnested of the GPU backend, with the walk shared).
// The walk is backend-neutral: it visits each sequential computation in schedule order and
//   - emits nothing for values that only alias others (parameter, constant, tuple,
//     get-tuple-element, bitcast, opt-barrier, add-dependency) — unless buffer assignment put
//     the alias in a different slice, then a kCopy;
//   - kWhile / kConditional with nested sequences (condition, body, branches), the predicate or
//     branch-index slice, and copies where the loop state or a branch result does not already
//     share its buffer; calls and async-start's computation are inlined into the sequence;
//   - kGemm for a dot the backend's GEMM library takes (GemmFor), kFft for an fft (FftThunk,
//     then the backend's FinishFft), kCopy for a copy that
//     only moves bytes, kCollective for collectives, also those a fusion only wraps (copies on
//     one device; over several devices with ThunkEmitterOptions::device_collectives), kMemset
//     for replica/partition id on one device;
//   - a kernel (the backend's EmitKernel) for every other fusion and every other instruction
//     that computes.
// Kernel arguments are the operands' array leaves in operand order, then the result's leaves.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "buffers/buffer_assignment.h"
#include "ir/module.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen {

// One kernel argument: leaf `index` of `instruction`'s value, living in `slice`.
struct KernelArgument {
  const HloInstruction* instruction = nullptr;
  ShapeIndex index;
  Shape shape;  // the array leaf's shape (with layout)
  runtime::BufferSlice slice;
  bool is_output = false;
};

// A dot as a library GEMM. swap_operands: the config computes D^T = B^T A^T (a column-major
// output), so its A is the dot's rhs and its B the dot's lhs.
struct GemmPlan {
  runtime::GemmConfig config;
  bool swap_operands = false;
};

class ThunkEmitterBackend {
 public:
  virtual ~ThunkEmitterBackend() = default;
  // Emits a kernel computing `hlo` (a fusion or an unfused instruction) whose operands and
  // results are `arguments`; returns the kKernel thunk (kernel_name, launch; arguments and
  // `written` are filled in by the caller). Unsupported instructions: an Unimplemented error.
  virtual absl::StatusOr<runtime::Thunk> EmitKernel(const HloInstruction& hlo,
                                                    const std::vector<KernelArgument>& arguments) = 0;
  // The GEMM the backend's library runs for `dot`; nullopt when it must be a kernel.
  virtual std::optional<GemmPlan> GemmFor(const HloInstruction& dot) { return std::nullopt; }
  // A custom-call the backend runs as a library thunk (GPU: kGemm for the cuBLAS targets,
  // kConvolution for cuDNN), complete with its arguments and written flags; nullopt: not a
  // library call (it becomes a kernel through EmitKernel). Added for the GPU backend.
  virtual absl::StatusOr<std::optional<runtime::Thunk>> EmitLibraryCall(const HloInstruction& hlo,
                                                                         const std::vector<KernelArgument>& arguments) {
    return std::optional<runtime::Thunk>();
  }
  // Completes the kFft thunk of `fft` (codegen/fft_thunk.h) for this backend (the CPU splits
  // its batch into parts, the GPU adds the kernel that scales IFFT/IRFFT results).
  virtual absl::Status FinishFft(const HloInstruction& fft, runtime::Thunk& thunk) { return absl::OkStatus(); }
};

struct ThunkEmitterOptions {
  // Devices the module runs on (replica_count * num_partitions). With one device collectives are
  // copies and partition-id / replica-id zero.
  int64_t num_devices = 1;
  int64_t num_partitions = 1;  // of num_devices; replica_count = num_devices / num_partitions
  // Whether the backend's runtime runs collectives over several devices (the CPU runtime does, on
  // threads): then each collective is a kCollective thunk with its runtime::CollectiveConfig
  // (codegen/collective_thunks.h) and partition-id / replica-id read the running device's ids;
  // otherwise a module for several devices with collectives is an Unimplemented error.
  bool device_collectives = false;
  // With one device too (the GPU: NCCL's one-rank communicator), rather than copies.
  bool library_collectives_on_one_device = false;
  // Async starts (all-reduce-start, ..., async-start of a collective) get an async_id and their
  // dones a "collective-done" thunk, so the runtime may overlap them with compute.
  bool async_collectives = false;
};

// Walks the entry computation (and the computations it calls sequentially).
absl::StatusOr<runtime::ThunkSequence> EmitThunks(const HloModule& module, const BufferAssignment& assignment,
                                                  ThunkEmitterBackend& backend, const ThunkEmitterOptions& options = {});

// The executable's frame from the module and its buffers: allocations (constants' bytes in
// their layouts), entry parameter and result leaves (shapes and slices), result_is_tuple.
absl::Status FillExecutableBuffers(const HloModule& module, const BufferAssignment& assignment,
                                   runtime::Executable& executable);

runtime::BufferSlice ToRuntimeSlice(const BufferAllocation::Slice& slice);
runtime::ArrayShape ToArrayShape(const Shape& shape);
// The literal's bytes laid out in `shape`'s layout (Literal storage is row-major).
std::vector<uint8_t> LiteralBytesInLayout(const Literal& literal, const Shape& shape);
// The array leaves of `shape` with their indices, in tuple order (depth first).
std::vector<std::pair<ShapeIndex, const Shape*>> ArrayLeaves(const Shape& shape);

}  // namespace hloc::codegen
