#include "passes/fusion/kernel_report.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "passes/fusion/gpu_cost_model.h"
#include "passes/fusion/priority_fusion.h"

namespace hloc {
namespace {

using O = HloOpcode;

// Instructions that launch nothing: values that already exist, views, and control flow
// (whose bodies are counted on their own).
bool LaunchesNothing(HloOpcode op) {
  switch (op) {
    case O::kParameter: case O::kConstant: case O::kTuple: case O::kGetTupleElement: case O::kBitcast:
    case O::kWhile: case O::kConditional: case O::kCall: case O::kAfterAll: case O::kAddDependency:
    case O::kOptimizationBarrier: case O::kDomain: case O::kAsyncStart: case O::kAsyncUpdate: case O::kAsyncDone:
      return true;
    default:
      return false;
  }
}

std::string JsonList(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const std::string& s : items) quoted.push_back(absl::StrCat("\"", s, "\""));
  return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
}

}  // namespace

KernelReport CountKernels(const HloModule& module, const HardwareProfile* profile) {
  KernelReport r;
  fusion::GpuCostModel cost(profile);
  for (const HloComputation* comp : FusibleComputations(module)) {
    for (const auto& inst : comp->instructions()) {
      if (LaunchesNothing(inst->opcode())) continue;
      const HloOpcode op = inst->opcode();
      if (op == O::kFusion) {
        ++r.fusions;
      } else if (op == O::kCustomCall) {
        ++r.library_calls;
        r.library_ops.push_back(absl::StrCat("custom-call:", inst->attrs().custom_call_target));
      } else if (op == O::kDot || op == O::kConvolution) {
        ++r.library_calls;
        r.library_ops.push_back(std::string(HloOpcodeString(op)));
      } else {
        ++r.unfused;
        r.unfused_ops.push_back(std::string(HloOpcodeString(op)));
      }
      const fusion::KernelEstimate e = cost.Estimate(inst.get());
      r.bytes += e.bytes_read + e.bytes_written;
      r.time_s += e.exec_time + cost.hardware().launch_overhead;
      r.kernels.push_back({inst->name(), e.flops, e.bytes_read + e.bytes_written, e.compute_time * 1e6,
                           e.memory_time * 1e6, e.exec_time * 1e6, e.occupancy});
    }
  }
  return r;
}

std::string KernelReportJson(const KernelReport& r) {
  std::vector<std::string> per_kernel;
  for (const KernelReport::Kernel& k : r.kernels)
    per_kernel.push_back(absl::StrFormat(
        "{\"name\": \"%s\", \"flops\": %.0f, \"bytes\": %d, \"compute_us\": %.3f, \"memory_us\": %.3f, "
        "\"time_us\": %.3f, \"occupancy\": %.3f}",
        k.name, k.flops, k.bytes, k.compute_us, k.memory_us, k.time_us, k.occupancy));
  return absl::StrFormat(
      "{\"kernels\": %d, \"fusions\": %d, \"library_calls\": %d, \"unfused\": %d, \"bytes\": %d, \"time_us\": %.3f, "
      "\"unfused_ops\": %s, \"library_ops\": %s,\n \"per_kernel\": [%s]}\n",
      r.total(), r.fusions, r.library_calls, r.unfused, r.bytes, r.time_s * 1e6, JsonList(r.unfused_ops),
      JsonList(r.library_ops), absl::StrJoin(per_kernel, ",\n  "));
}

}  // namespace hloc
