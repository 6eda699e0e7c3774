// CommandBufferConversionPass (XLA's CommandBufferConversionPass /
// command_buffer_scheduling.cc): runs of consecutive thunks of the chosen kinds become one
// kCommandBuffer thunk whose `body` is the run; the GPU runtime captures the body into a CUDA
// graph on the first execution and replays the graph afterwards, saving a launch per thunk.
// Runs shorter than min_graph_size stay as they are (XLA's xla_gpu_graph_min_graph_size).
// Nested sequences (while condition/body, conditional branches, sequential bodies) are
// converted too; the control-flow thunks themselves stay outside graphs (their predicates are
// read on the host).
#pragma once
#include <cstdint>
#include <set>
#include <string>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc::codegen::gpu {

struct CommandBufferConversionOptions {
  bool enabled = true;
  // Thunk kinds a command buffer may hold (XLA's xla_gpu_enable_command_buffer: FUSION ->
  // kKernel, CUBLAS/CUBLASLT -> kGemm, CUDNN -> kConvolution, plus kCopy and kMemset). Copies
  // are in by default: copy insertion's device-to-device copies of loop-carried values split
  // Flax's GRU backward scan body into four graphs and four lone copies an iteration.
  std::set<runtime::ThunkKind> kinds = {runtime::ThunkKind::kKernel, runtime::ThunkKind::kGemm,
                                        runtime::ThunkKind::kCopy};
  int64_t min_graph_size = 2;
  // Streams each command buffer's capture may fork onto (Thunk::lanes; the profile's
  // command_buffer_lanes, src/engine/tuning.cc says what was measured).
  int64_t lanes = 1;
};

// XLA's flag values ("FUSION,CUBLAS,CUBLASLT,CUDNN", case-insensitive, also "KERNEL", "GEMM",
// "CONVOLUTION", "COPY", "MEMSET"; empty: none) as thunk kinds; an error names a bad entry.
absl::StatusOr<std::set<runtime::ThunkKind>> ParseCommandBufferKinds(const std::string& list);

// Rewrites `thunks` in place; returns the number of command buffers made.
absl::StatusOr<int64_t> RunCommandBufferConversion(runtime::ThunkSequence& thunks,
                                                   const CommandBufferConversionOptions& options);

}  // namespace hloc::codegen::gpu
