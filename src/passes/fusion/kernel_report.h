// What a fused module would launch on the GPU: kernels (fusions and unfused instructions that
// need one), library calls (custom-calls, dots and convolutions: cuBLAS / cuDNN), counted in
// the entry and in every control-flow body (each body once, as XLA's thunk_sequence.txt lists
// them), with the bytes and time the cost model expects. `hloc opt --kernel-report FILE`
// writes it as JSON; scripts/bench-kernels tabulates it against XLA.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "ir/module.h"

namespace hloc {
struct HardwareProfile;

struct KernelReport {
  int64_t fusions = 0;        // fusion kernels (kLoop, kInput, ...)
  int64_t library_calls = 0;  // custom-calls, dots, convolutions
  int64_t unfused = 0;        // other instructions that launch a kernel on their own
  int64_t bytes = 0;          // cost model: distinct bytes read + written by all of them
  double time_s = 0;          // cost model: their time, launch overhead included
  std::vector<std::string> unfused_ops;  // opcode names of the unfused kernels
  std::vector<std::string> library_ops;  // "custom-call:TARGET", "dot", "convolution"
  // Each kernel's estimate, as the cost model sees it (what `--kernel-report` lists per kernel,
  // to hold beside `hloc run --per-thunk`'s measured times).
  struct Kernel {
    std::string name;
    double flops = 0;
    int64_t bytes = 0;
    double compute_us = 0, memory_us = 0, time_us = 0, occupancy = 1;
  };
  std::vector<Kernel> kernels;
  int64_t total() const { return fusions + library_calls + unfused; }
};

KernelReport CountKernels(const HloModule& module, const HardwareProfile* profile);
std::string KernelReportJson(const KernelReport& report);

}  // namespace hloc
