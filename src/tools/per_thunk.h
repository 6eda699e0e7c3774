// `hloc run --backend gpu --bench N --per-thunk`: each thunk's time per call (CUDA events,
// runtime/gpu GpuExecutable::ProfileThunks) beside its own floor, the bytes its arguments hold at
// the profile's memory bandwidth or its matrix FLOPs at the profile's peak (bf16 tensor-core
// rate, a lower bound for every type, as corpus/floors.json takes it), whichever is longer.
// With --dump-to DIR the same times go to DIR/module_NNNN.NAME.thunk_times.json, which the
// browser view (engine/html_report.h) shows beside the thunk sequence.
#pragma once
#include <string>
#include <vector>

#include "engine/profile.h"
#include "runtime/gpu/gpu_executable.h"

namespace hloc {

struct ThunkFloor {
  double bytes = 0;   // per execution: distinct argument slices
  double flops = 0;   // per execution: GEMM 2*batch*m*n*k; 0 for other thunks
  double floor_us(const HardwareProfile& hw) const;
};
ThunkFloor FloorOf(const runtime::Thunk& t);

// The table, slowest first, and a last line "worst thunk: NAME KIND time_us=.. floor_us=.."
// naming the thunk furthest above its floor (scripts/bench gpu reads it).
std::string PerThunkReport(const std::vector<runtime::ThunkTime>& times, int64_t calls, const HardwareProfile& hw);

// thunk_times.json (format "hloc-thunk-times/1"): the module, device, profile, calls and the
// total us per call, then per leaf thunk, in thunk order: its position (the pre-order number
// thunk_sequence.txt prints for it in `top`; 0 when the thunk is not in `top`), name, kind,
// kernel, us_per_call, floor_us, runs_per_call. `top` is the executable's thunk sequence that
// `times` points into. engine/html_report.cc reads it back.
std::string ThunkTimesJson(const std::vector<runtime::ThunkTime>& times, int64_t calls, const HardwareProfile& hw,
                           const std::string& device, const std::string& module_name,
                           const runtime::ThunkSequence& top);

}  // namespace hloc
