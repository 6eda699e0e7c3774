#include "runtime/gpu/device_loops.h"

#include "absl/strings/str_cat.h"

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA
namespace {

// hloc_while_count(handle, counter, trip): one more iteration done; the loop goes on while the
// count is below the trip count, and the counter is back at 0 when it stops (so the next launch
// of the graph starts from 0 without a reset node).
// hloc_while_predicate(handle, predicate): the loop goes on while the condition's pred is true.
constexpr char kSetterPtx[] = R"(
.version 8.0
.target sm_80
.address_size 64
.extern .func cudaGraphSetConditional (.param .b64 handle, .param .b32 value);

.visible .entry hloc_while_count(.param .u64 h, .param .u64 counter, .param .u64 trip) {
  .reg .pred %p;
  .reg .b32 %r;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [h];
  ld.param.u64 %rd2, [counter];
  ld.param.u64 %rd3, [trip];
  cvta.to.global.u64 %rd2, %rd2;
  ld.global.u64 %rd4, [%rd2];
  add.s64 %rd4, %rd4, 1;
  setp.lt.s64 %p, %rd4, %rd3;
  selp.b64 %rd5, %rd4, 0, %p;
  st.global.u64 [%rd2], %rd5;
  selp.u32 %r, 1, 0, %p;
  {
    .param .b64 param0;
    st.param.b64 [param0], %rd1;
    .param .b32 param1;
    st.param.b32 [param1], %r;
    call.uni cudaGraphSetConditional, (param0, param1);
  }
  ret;
}

.visible .entry hloc_while_predicate(.param .u64 h, .param .u64 pred) {
  .reg .pred %p;
  .reg .b16 %rs;
  .reg .b32 %r;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [h];
  ld.param.u64 %rd2, [pred];
  cvta.to.global.u64 %rd2, %rd2;
  ld.global.u8 %rs, [%rd2];
  setp.ne.s16 %p, %rs, 0;
  selp.u32 %r, 1, 0, %p;
  {
    .param .b64 param0;
    st.param.b64 [param0], %rd1;
    .param .b32 param1;
    st.param.b32 [param1], %r;
    call.uni cudaGraphSetConditional, (param0, param1);
  }
  ret;
}
)";

}  // namespace

bool DeviceLoops::Supported(const CudaDriver& d) {
  return d.cuGraphConditionalHandleCreate != nullptr && d.cuGraphAddNode != nullptr &&
         d.cuStreamBeginCaptureToGraph != nullptr && d.cuStreamGetCaptureInfo != nullptr &&
         d.driver_version >= 12030;
}

absl::Status DeviceLoops::Load() {
  if (module_ != nullptr) return absl::OkStatus();
  if (absl::Status s = HLOC_CU(*d_, cuModuleLoadDataEx, "loading the while-loop condition kernels", &module_,
                               kSetterPtx, 0, nullptr, nullptr);
      !s.ok()) {
    module_ = nullptr;
    return s;
  }
  if (absl::Status s = HLOC_CU(*d_, cuModuleGetFunction, "finding hloc_while_count", &count_, module_,
                               "hloc_while_count");
      !s.ok()) {
    return s;
  }
  return HLOC_CU(*d_, cuModuleGetFunction, "finding hloc_while_predicate", &predicate_, module_,
                 "hloc_while_predicate");
}

absl::Status DeviceLoops::LaunchCount(CUstream s, CUgraphConditionalHandle h, CUdeviceptr counter, int64_t trip) {
  void* params[] = {&h, &counter, &trip};
  return HLOC_CU(*d_, cuLaunchKernel, "launching the loop counter", count_, 1, 1, 1, 1, 1, 1, 0, s, params, nullptr);
}

absl::Status DeviceLoops::LaunchPredicate(CUstream s, CUgraphConditionalHandle h, CUdeviceptr predicate) {
  void* params[] = {&h, &predicate};
  return HLOC_CU(*d_, cuLaunchKernel, "launching the loop predicate", predicate_, 1, 1, 1, 1, 1, 1, 0, s, params,
                 nullptr);
}

absl::Status DeviceLoops::CaptureGraph(CUstream stream, CUgraph* graph, const CUgraphNode** deps,
                                       const CUgraphEdgeData** edges, size_t* n) {
  CUstreamCaptureStatus status;
  cuuint64_t id = 0;
  if (absl::Status s = HLOC_CU(*d_, cuStreamGetCaptureInfo, "asking the capture's graph", stream, &status, &id, graph,
                               deps, edges, n);
      !s.ok()) {
    return s;
  }
  if (status != CU_STREAM_CAPTURE_STATUS_ACTIVE || *graph == nullptr)
    return absl::InternalError("a device loop was recorded outside a stream capture");
  return absl::OkStatus();
}

absl::Status DeviceLoops::AddWhileNode(CUstream stream, CUgraphConditionalHandle handle, CUgraph* body) {
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 0;
  if (absl::Status s = CaptureGraph(stream, &graph, &deps, &edges, &n); !s.ok()) return s;
  CUgraphNodeParams params = {};
  params.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  params.conditional.handle = handle;
  params.conditional.type = CU_GRAPH_COND_TYPE_WHILE;
  params.conditional.size = 1;
  params.conditional.ctx = ctx_;
  CUgraphNode node = nullptr;
  if (absl::Status s = HLOC_CU(*d_, cuGraphAddNode, "adding the WHILE node", &node, graph, deps, edges, n, &params);
      !s.ok()) {
    return s;
  }
  *body = params.conditional.phGraph_out[0];
  // What the stream records next runs after the loop.
  return HLOC_CU(*d_, cuStreamUpdateCaptureDependencies, "ordering the capture after the loop", stream, &node,
                 nullptr, 1, CU_STREAM_SET_CAPTURE_DEPENDENCIES);
}

absl::Status DeviceLoops::Reserve(int64_t loops) {
  if (absl::Status s = Load(); !s.ok()) return s;
  if (loops <= 0 || counters_ != 0) return absl::OkStatus();
  if (absl::Status s = HLOC_CU(*d_, cuMemAlloc, "allocating the loop counters", &counters_,
                               static_cast<size_t>(loops) * 8);
      !s.ok()) {
    counters_ = 0;
    return s;
  }
  count_slots_ = loops;
  return HLOC_CU(*d_, cuMemsetD32, "zeroing the loop counters", counters_, 0, static_cast<size_t>(loops) * 2);
}

absl::Status DeviceLoops::RecordWhile(CUstream stream, CUstream aux, int64_t trip_count, CUdeviceptr counter,
                                      CUdeviceptr predicate, const Recorder& condition, const Recorder& body) {
  if (module_ == nullptr) return absl::InternalError("device loops recorded before DeviceLoops::Reserve");
  CUgraph graph = nullptr;
  const CUgraphNode* deps = nullptr;
  const CUgraphEdgeData* edges = nullptr;
  size_t n = 0;
  if (absl::Status s = CaptureGraph(stream, &graph, &deps, &edges, &n); !s.ok()) return s;
  // A known trip count starts the loop by the handle's default value (reset at every launch of
  // the graph); otherwise the condition is recorded before the node and sets it.
  CUgraphConditionalHandle h = 0;
  if (absl::Status s = HLOC_CU(*d_, cuGraphConditionalHandleCreate, "creating the loop's conditional handle", &h,
                               graph, ctx_, trip_count > 0 ? 1u : 0u, CU_GRAPH_COND_ASSIGN_DEFAULT);
      !s.ok()) {
    return s;
  }
  if (trip_count < 0) {
    if (absl::Status s = condition(stream); !s.ok()) return s;
    if (absl::Status s = LaunchPredicate(stream, h, predicate); !s.ok()) return s;
  } else if (counter == 0) {
    return absl::InternalError("a device loop with a trip count but no counter");
  }
  CUgraph body_graph = nullptr;
  if (absl::Status s = AddWhileNode(stream, h, &body_graph); !s.ok()) return s;
  if (absl::Status s = HLOC_CU(*d_, cuStreamBeginCaptureToGraph, "capturing the loop body", aux, body_graph, nullptr,
                               nullptr, 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      !s.ok()) {
    return s;
  }
  absl::Status recorded = body(aux);
  if (recorded.ok() && trip_count >= 0) recorded = LaunchCount(aux, h, counter, trip_count);
  if (recorded.ok() && trip_count < 0) {
    recorded = condition(aux);
    if (recorded.ok()) recorded = LaunchPredicate(aux, h, predicate);
  }
  CUgraph ended = nullptr;
  absl::Status end = HLOC_CU(*d_, cuStreamEndCapture, "ending the loop body's capture", aux, &ended);
  return recorded.ok() ? end : recorded;
}

void DeviceLoops::Release() {
  if (counters_ != 0) d_->cuMemFree(counters_);
  counters_ = 0;
  count_slots_ = 0;
  if (module_ != nullptr) d_->cuModuleUnload(module_);
  module_ = nullptr;
}

#endif  // HLOC_HAVE_CUDA

}  // namespace hloc::runtime::gpu
