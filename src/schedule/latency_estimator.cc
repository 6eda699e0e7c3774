#include "schedule/latency_estimator.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "ir/computation.h"

namespace hloc {
namespace {

using O = HloOpcode;

int64_t LeafBytes(const Shape& shape) {
  if (!shape.IsTuple()) return shape.IsArray() ? shape.byte_size() : 0;
  int64_t bytes = 0;
  for (const Shape& s : shape.tuple_shapes()) bytes += LeafBytes(s);
  return bytes;
}

enum class CostClass { kFree, kLow, kKernel };

CostClass ClassOf(const HloInstruction& inst) {
  const O op = inst.opcode();
  if (IsAsyncStartOpcode(op) || IsAsyncDoneOpcode(op)) return CostClass::kFree;
  switch (op) {
    case O::kParameter: case O::kConstant: case O::kGetTupleElement: case O::kTuple: case O::kBitcast:
    case O::kAsyncUpdate: case O::kAfterAll: case O::kAddDependency: case O::kDomain: case O::kOptimizationBarrier:
      return CostClass::kFree;
    case O::kFusion: case O::kDot: case O::kConvolution: case O::kCustomCall: case O::kReduce: case O::kSort:
    case O::kScatter: case O::kGather: case O::kReduceWindow: case O::kSelectAndScatter: case O::kFft:
    case O::kTriangularSolve: case O::kCholesky: case O::kWhile: case O::kConditional: case O::kCall:
    case O::kAllReduce: case O::kAllGather: case O::kAllToAll: case O::kReduceScatter:
    case O::kCollectivePermute:
      return CostClass::kKernel;
    default:
      return CostClass::kLow;
  }
}

bool RunsCollective(O op) {
  switch (op) {
    case O::kAllReduce: case O::kAllReduceStart: case O::kAllGather: case O::kAllGatherStart:
    case O::kReduceScatter: case O::kAllToAll: case O::kCollectivePermute: case O::kCollectivePermuteStart:
    case O::kCollectiveBroadcast:
      return true;
    default:
      return false;
  }
}

// The collective an async start runs, or null.
const HloInstruction* CollectiveOf(const HloInstruction& start) {
  if (RunsCollective(start.opcode())) return &start;
  if (start.opcode() == O::kAsyncStart && !start.called_computations().empty()) {
    const HloInstruction* root = start.called_computations()[0]->root_instruction();
    if (root != nullptr && RunsCollective(root->opcode())) return root;
  }
  return nullptr;
}

}  // namespace

bool IsAsyncStartOpcode(HloOpcode op) {
  return op == O::kAllReduceStart || op == O::kAllGatherStart || op == O::kCollectivePermuteStart ||
         op == O::kCopyStart || op == O::kAsyncStart;
}

bool IsAsyncDoneOpcode(HloOpcode op) {
  return op == O::kAllReduceDone || op == O::kAllGatherDone || op == O::kCollectivePermuteDone ||
         op == O::kCopyDone || op == O::kAsyncDone;
}

LatencyEstimator LatencyEstimator::Units(int64_t async_latency) {
  LatencyEstimator e;
  e.async_latency_ = async_latency;
  return e;
}

LatencyEstimator LatencyEstimator::FromProfile(const HardwareProfile* profile, int64_t async_latency,
                                               DeviceCounts counts) {
  LatencyEstimator e = Units(async_latency);
  if (profile == nullptr || profile->link_bandwidth <= 0 || profile->memory_bandwidth <= 0) return e;
  e.timed_ = true;
  e.profile_name_ = profile->name;
  e.memory_bandwidth_ = profile->memory_bandwidth;
  e.peak_flops_ = std::max(profile->peak_flops_f32, profile->peak_flops_bf16);
  e.launch_ = profile->tuning.GetReal(TuningKnob::kKernelLaunchOverhead);
  e.link_bandwidth_ = profile->link_bandwidth;
  e.link_latency_ = profile->link_latency;
  e.counts_ = counts;
  return e;
}

std::string LatencyEstimator::Describe() const {
  if (!timed_) return absl::StrFormat("unit costs (no profile link numbers): async operations %d", async_latency_);
  return absl::StrFormat("profile %s: link %.4g GB/s, %.3g us a step; memory %.4g TB/s; launch %.3g us",
                         profile_name_, link_bandwidth_ / 1e9, link_latency_ * 1e6, memory_bandwidth_ / 1e12,
                         launch_ * 1e6);
}

double LatencyEstimator::KernelSeconds(const HloInstruction& inst) const {
  int64_t bytes = LeafBytes(inst.shape());
  for (const HloInstruction* op : inst.operands()) bytes += LeafBytes(op->shape());
  double flops = 0;
  if (inst.opcode() == O::kDot && inst.shape().IsArray() && inst.attrs().dot_dimension_numbers) {
    int64_t k = 1;
    for (int64_t d : inst.attrs().dot_dimension_numbers->lhs_contracting_dimensions)
      k *= inst.operand(0)->shape().dimensions(d);
    flops = 2.0 * static_cast<double>(inst.shape().num_elements()) * static_cast<double>(k);
  }
  const double memory = static_cast<double>(bytes) / memory_bandwidth_;
  const double compute = peak_flops_ > 0 ? flops / peak_flops_ : 0;
  return std::max(memory, compute) + launch_;
}

double LatencyEstimator::CollectiveSeconds(const HloInstruction& c) const {
  int64_t bytes = 0;
  for (const HloInstruction* op : c.operands()) bytes += LeafBytes(op->shape());
  if (c.opcode() == O::kAllGather || c.opcode() == O::kAllGatherStart) {
    const Shape& result = c.opcode() == O::kAllGatherStart ? c.shape().tuple_shapes(1) : c.shape();
    bytes = LeafBytes(result);
  }
  int64_t k = 1;
  absl::StatusOr<std::vector<std::vector<int64_t>>> groups = CollectiveDeviceGroups(c, counts_);
  if (groups.ok())
    for (const std::vector<int64_t>& g : *groups) k = std::max<int64_t>(k, static_cast<int64_t>(g.size()));
  const O op = c.opcode();
  const bool permute = op == O::kCollectivePermute || op == O::kCollectivePermuteStart;
  if (permute || k == 1) return link_latency_ + static_cast<double>(bytes) / link_bandwidth_;
  const double steps = (op == O::kAllReduce || op == O::kAllReduceStart) ? 2.0 * (k - 1) : static_cast<double>(k - 1);
  return steps * (link_latency_ + static_cast<double>(bytes) / static_cast<double>(k) / link_bandwidth_);
}

double LatencyEstimator::Cost(const HloInstruction& inst) const {
  const CostClass c = ClassOf(inst);
  if (c == CostClass::kFree) return 0;
  if (!timed_) return c == CostClass::kKernel ? 10 : 1;
  if (RunsCollective(inst.opcode())) return CollectiveSeconds(inst);
  return c == CostClass::kKernel ? KernelSeconds(inst) : launch_;
}

double LatencyEstimator::AsyncLatency(const HloInstruction& start) const {
  if (!timed_) return static_cast<double>(async_latency_);
  if (const HloInstruction* collective = CollectiveOf(start)) return CollectiveSeconds(*collective);
  if (start.opcode() == O::kCopyStart && start.operand_count() > 0)
    return 2.0 * static_cast<double>(LeafBytes(start.operand(0)->shape())) / memory_bandwidth_ + launch_;
  double total = 0;  // a generic async computation: its instructions one after another
  for (const HloComputation* callee : start.called_computations())
    for (const auto& inst : callee->instructions()) total += Cost(*inst);
  return total;
}

}  // namespace hloc
