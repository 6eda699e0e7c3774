// While loops that stay on the device: a CUDA graph WHILE conditional node (CUDA 12.3+) whose
// body graph is the loop body captured from our stream, and whose condition a tiny kernel at the
// end of each iteration sets with the device runtime's cudaGraphSetConditional. The host then
// launches one graph for the whole loop instead of one per iteration (and, for a condition that
// depends on data, reads no predicate back between iterations). XLA's WhileCmd
// (xla/backends/gpu/runtime/command_buffer_cmd.cc) does the same.
//
// The setter kernels are PTX written here; `cudaGraphSetConditional` is an extern device
// function the driver's JIT resolves when it loads the module (checked on the H200, driver 13.0).
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "runtime/gpu/cuda_driver.h"

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA

class DeviceLoops {
 public:
  // Whether the driver has the entry points (conditional handles, capture to a graph).
  static bool Supported(const CudaDriver& d);

  // Records work; it is given the stream to enqueue on.
  using Recorder = std::function<absl::Status(CUstream)>;

  // Appends a while loop to the graph `stream` is capturing. With trip_count >= 0 a device
  // counter decides; otherwise `condition` is recorded before the loop and after each body, and
  // the byte at `predicate` (which the condition writes) decides. The body is captured on `aux`
  // (a stream cannot capture two graphs at once). On error the captures are ended.
  // `counter` is Counter(i) of a loop with a trip count (each loop its own).
  absl::Status RecordWhile(CUstream stream, CUstream aux, int64_t trip_count, CUdeviceptr counter,
                           CUdeviceptr predicate, const Recorder& condition, const Recorder& body);

  // Loads the condition kernels and allocates `loops` zeroed counters: outside any capture
  // (allocations and module loads are not allowed while a stream captures).
  absl::Status Reserve(int64_t loops);
  CUdeviceptr Counter(int64_t i) const { return i < count_slots_ ? counters_ + static_cast<CUdeviceptr>(8 * i) : 0; }

  // Frees the counters and unloads the setter kernels.
  void Release();

  DeviceLoops(const CudaDriver* d, CUcontext ctx) : d_(d), ctx_(ctx) {}
  ~DeviceLoops() { Release(); }
  DeviceLoops(const DeviceLoops&) = delete;
  DeviceLoops& operator=(const DeviceLoops&) = delete;

 private:
  absl::Status Load();
  absl::Status LaunchCount(CUstream s, CUgraphConditionalHandle h, CUdeviceptr counter, int64_t trip);
  absl::Status LaunchPredicate(CUstream s, CUgraphConditionalHandle h, CUdeviceptr predicate);
  // The graph `stream` is capturing and the capture's current dependencies.
  absl::Status CaptureGraph(CUstream stream, CUgraph* graph, const CUgraphNode** deps, const CUgraphEdgeData** edges,
                            size_t* n);
  // Adds the WHILE node after the capture's current dependencies; returns its body graph.
  absl::Status AddWhileNode(CUstream stream, CUgraphConditionalHandle handle, CUgraph* body);

  const CudaDriver* d_;
  CUcontext ctx_;
  CUmodule module_ = nullptr;
  CUfunction count_ = nullptr, predicate_ = nullptr;
  CUdeviceptr counters_ = 0;  // one 8-byte count per loop with a trip count
  int64_t count_slots_ = 0;
};

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
