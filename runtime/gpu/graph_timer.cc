// Timing a library call inside a CUDA graph (graph_timer.h).
#include "runtime/gpu/graph_timer.h"

#include "absl/strings/str_cat.h"

namespace hloc::runtime::gpu {

#if HLOC_HAVE_CUDA
absl::StatusOr<double> TimeCapturedCalls(const CudaDriver& d, CUstream stream, int reps,
                                         const std::function<absl::Status()>& call) {
  if (stream == nullptr) return absl::FailedPreconditionError("the default stream cannot be captured");
  if (absl::Status s = HLOC_CU(d, cuStreamBeginCapture, "capturing autotuning calls", stream,
                               CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
      !s.ok()) {
    return s;
  }
  absl::Status body = absl::OkStatus();
  for (int r = 0; r < reps && body.ok(); ++r) body = call();
  CUgraph graph = nullptr;
  absl::Status end = HLOC_CU(d, cuStreamEndCapture, "ending the autotuning capture", stream, &graph);
  if (!body.ok() || !end.ok()) {
    if (graph != nullptr) d.cuGraphDestroy(graph);
    return !body.ok() ? body : end;
  }
  CUgraphExec exec = nullptr;
  absl::Status s = HLOC_CU(d, cuGraphInstantiate, "instantiating the autotuning graph", &exec, graph, 0);
  CUevent start = nullptr, stop = nullptr;
  if (s.ok()) s = HLOC_CU(d, cuEventCreate, "creating autotuning events", &start, CU_EVENT_DEFAULT);
  if (s.ok()) s = HLOC_CU(d, cuEventCreate, "creating autotuning events", &stop, CU_EVENT_DEFAULT);
  if (s.ok()) s = HLOC_CU(d, cuGraphLaunch, "warming the autotuning graph up", exec, stream);
  if (s.ok()) s = HLOC_CU(d, cuEventRecord, "timing the autotuning graph", start, stream);
  if (s.ok()) s = HLOC_CU(d, cuGraphLaunch, "launching the autotuning graph", exec, stream);
  if (s.ok()) s = HLOC_CU(d, cuEventRecord, "timing the autotuning graph", stop, stream);
  if (s.ok()) s = HLOC_CU(d, cuEventSynchronize, "timing the autotuning graph", stop);
  float ms = 0;
  if (s.ok()) s = HLOC_CU(d, cuEventElapsedTime, "reading the autotuning time", &ms, start, stop);
  if (start != nullptr) d.cuEventDestroy(start);
  if (stop != nullptr) d.cuEventDestroy(stop);
  if (exec != nullptr) d.cuGraphExecDestroy(exec);
  d.cuGraphDestroy(graph);
  if (!s.ok()) return s;
  return 1000.0 * ms / reps;
}

namespace {
struct CandidateReport {
  std::function<void(int, double)> report;
  int count = 0;
};
thread_local CandidateReport* candidate_report = nullptr;

absl::StatusOr<double> TimeOneCandidate(const CudaDriver& d, CUstream stream, CUevent start, CUevent stop, int reps,
                                        int short_reps, double short_us, bool* in_graph,
                                        const std::function<absl::Status()>& call);
}  // namespace

AutotuneCandidateReporter::AutotuneCandidateReporter(std::function<void(int, double)> report) {
  candidate_report = new CandidateReport{std::move(report), 0};
}
AutotuneCandidateReporter::~AutotuneCandidateReporter() {
  delete candidate_report;
  candidate_report = nullptr;
}

absl::StatusOr<double> TimeAutotuneCandidate(const CudaDriver& d, CUstream stream, CUevent start, CUevent stop,
                                             int reps, int short_reps, double short_us, bool* in_graph,
                                             const std::function<absl::Status()>& call) {
  absl::StatusOr<double> us = TimeOneCandidate(d, stream, start, stop, reps, short_reps, short_us, in_graph, call);
  if (us.ok() && candidate_report != nullptr) candidate_report->report(++candidate_report->count, *us);
  return us;
}

namespace {
absl::StatusOr<double> TimeOneCandidate(const CudaDriver& d, CUstream stream, CUevent start, CUevent stop, int reps,
                                        int short_reps, double short_us, bool* in_graph,
                                        const std::function<absl::Status()>& call) {
  if (*in_graph) {
    absl::StatusOr<double> t = TimeCapturedCalls(d, stream, short_reps, call);
    if (t.ok() && *t >= short_us) t = TimeCapturedCalls(d, stream, reps, call);
    if (t.ok()) return *t;
    *in_graph = false;  // not capturable here: from the host from now on
    if (!call().ok()) return -1.0;  // the warm-up the capture took the place of
  }
  double us = -1;
  for (int n : {reps, short_reps}) {
    bool failed = d.cuEventRecord(start, stream) != CUDA_SUCCESS;
    for (int r = 0; r < n && !failed; ++r) failed = !call().ok();
    if (failed || d.cuEventRecord(stop, stream) != CUDA_SUCCESS) break;
    if (absl::Status e = HLOC_CU(d, cuEventSynchronize, "autotuning", stop); !e.ok()) return e;
    float ms = 0;
    if (d.cuEventElapsedTime(&ms, start, stop) != CUDA_SUCCESS) break;
    us = 1000.0 * ms / n;
    if (us >= short_us) break;
  }
  return us;
}
}  // namespace
#endif

}  // namespace hloc::runtime::gpu
