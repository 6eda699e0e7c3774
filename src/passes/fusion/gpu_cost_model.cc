#include "passes/fusion/gpu_cost_model.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "engine/profile.h"
#include "ir/computation.h"
#include "passes/fusion/fusion_analysis.h"

namespace hloc::fusion {
namespace {

using O = HloOpcode;

double ParallelElements(const HloInstruction* node) {
  // Reductions spread their input over threads (a warp per row or column tile); other
  // kernels one thread per output element.
  double p = 0;
  for (const HloInstruction* r : Reductions(node)) p = std::max(p, ElementCount(r->operand(0)->shape()) / 8.0);
  for (const HloInstruction* o : FusionOutputs(node)) p = std::max(p, static_cast<double>(ElementCount(o->shape())));
  return std::max(1.0, p);
}

}  // namespace

CostModelHardware CostModelHardware::FromProfile(const HardwareProfile* profile) {
  CostModelHardware hw;
  if (profile == nullptr) return hw;
  hw.name = profile->name;
  hw.is_cpu = profile->kind == "cpu";
  if (profile->memory_bandwidth > 0) hw.memory_bandwidth = profile->memory_bandwidth;
  if (profile->peak_flops_f32 > 0) hw.peak_flops = profile->peak_flops_f32;
  if (profile->sm_count > 0) hw.sm_count = profile->sm_count;
  if (profile->l2_cache_size > 0) hw.l2_cache_size = profile->l2_cache_size;
  if (profile->shared_memory_per_block > 0) hw.shared_memory_per_block = profile->shared_memory_per_block;
  // A CPU "kernel" is a loop nest in one function: a call, not a launch (cpu.yaml sets it).
  hw.launch_overhead = profile->tuning.GetReal(TuningKnob::kKernelLaunchOverhead);
  hw.l2_cache_speedup = profile->tuning.GetReal(TuningKnob::kFusionL2CacheSpeedup);
  hw.memory_compute_overlap = profile->tuning.GetReal(TuningKnob::kFusionMemoryComputeOverlap);
  hw.blocks_per_sm_to_saturate = profile->tuning.GetReal(TuningKnob::kFusionBlocksPerSmToSaturate);
  hw.row_long_row_elements = profile->tuning.Get(TuningKnob::kRowReductionLongRowElements);
  hw.threads_per_block = profile->tuning.Get(TuningKnob::kLoopThreadsPerBlock);
  return hw;
}

std::string KernelEstimate::ToString() const {
  if (!is_kernel) return "no kernel";
  return absl::StrFormat(
      "%.3f us (memory %.3f us: %d B read, %d B re-read, %d B written; compute %.3f us: %.0f flops; occupancy %.2f)",
      exec_time * 1e6, memory_time * 1e6, bytes_read, bytes_read_total - bytes_read, bytes_written, compute_time * 1e6,
      flops, occupancy);
}

bool GpuCostModel::LaunchesKernel(const HloInstruction* node) {
  switch (node->opcode()) {
    case O::kParameter: case O::kConstant: case O::kTuple: case O::kGetTupleElement: case O::kBitcast:
    case O::kAfterAll: case O::kAddDependency: case O::kOptimizationBarrier: case O::kDomain:
    case O::kPartitionId: case O::kReplicaId:
      return false;
    default:
      return true;
  }
}

KernelEstimate GpuCostModel::FromParts(const std::vector<Operand>& operands,
                                       const std::vector<const HloInstruction*>& outputs_of, double flops,
                                       double parallel_elements) const {
  KernelEstimate e;
  // The distinct operands in order of first appearance, each with its summed utilization.
  // Most kernels have a few operands: a list then, a map only for many (one per layer).
  constexpr size_t kMaxListed = 16;
  std::vector<std::pair<const HloInstruction*, double>> order;
  absl::flat_hash_map<const HloInstruction*, size_t> index;
  for (const Operand& op : operands) {
    size_t i = order.size();
    if (operands.size() <= kMaxListed) {
      for (size_t k = 0; k < order.size(); ++k)
        if (order[k].first == op.inst) i = k;
    } else {
      i = index.emplace(op.inst, order.size()).first->second;
    }
    if (i == order.size()) order.push_back({op.inst, 0.0});
    order[i].second += op.utilization;
  }
  double reread_time = 0;
  for (const auto& [op, u] : order) {
    const double bytes = static_cast<double>(ByteSize(op->shape()));
    const double distinct = bytes * std::min(1.0, u);
    const double total = bytes * u;
    e.bytes_read += static_cast<int64_t>(distinct);
    e.bytes_read_total += static_cast<int64_t>(total);
    const double speedup = bytes <= static_cast<double>(hw_.l2_cache_size) ? hw_.l2_cache_speedup : 1.0;
    reread_time += (total - distinct) / (hw_.memory_bandwidth * speedup);
  }
  for (const HloInstruction* o : outputs_of) {
    e.bytes_written += ByteSize(o->shape());
    // A cuBLAS/cuDNN call's last output is its scratch workspace (s8[N]): not data it writes.
    const Shape& s = o->shape();
    if (o->opcode() == O::kCustomCall && s.IsTuple() && s.tuple_shapes().size() >= 2 &&
        s.tuple_shapes().back().element_type() == PrimitiveType::S8 && s.tuple_shapes().back().rank() == 1)
      e.bytes_written -= ByteSize(s.tuple_shapes().back());
  }
  e.flops = flops;
  // Blocks of the loop emitter's size (loop_threads_per_block, as codegen launches them).
  const double blocks = std::ceil(parallel_elements / static_cast<double>(hw_.threads_per_block));
  e.occupancy = std::min(1.0, blocks / (static_cast<double>(hw_.sm_count) * hw_.blocks_per_sm_to_saturate));
  const double occ = std::max(e.occupancy, 1e-3);
  e.memory_time = (static_cast<double>(e.bytes_read + e.bytes_written) / hw_.memory_bandwidth + reread_time) / occ;
  e.compute_time = flops / (hw_.peak_flops * occ);
  e.exec_time = e.compute_time + e.memory_time - hw_.memory_compute_overlap * std::min(e.compute_time, e.memory_time);
  return e;
}

KernelEstimate GpuCostModel::Estimate(const HloInstruction* node) const {
  if (!LaunchesKernel(node)) {
    KernelEstimate e;
    e.is_kernel = false;
    return e;
  }
  std::vector<double> util = OperandUtilization(node);
  std::vector<Operand> operands;
  for (int64_t j = 0; j < node->operand_count(); ++j) operands.push_back({node->operand(j), util[j]});
  return FromParts(operands, {node}, Flops(node), ParallelElements(node));
}

KernelEstimate GpuCostModel::EstimateFused(const HloInstruction* producer, const HloInstruction* consumer) const {
  std::vector<double> cu = OperandUtilization(consumer);
  std::vector<double> pu = OperandUtilization(producer);
  double producer_use = 0;
  std::vector<Operand> operands;
  for (int64_t j = 0; j < consumer->operand_count(); ++j) {
    if (consumer->operand(j) == producer) producer_use += cu[j];
    else operands.push_back({consumer->operand(j), cu[j]});
  }
  // A fused reduction is computed once per reduced value, however often the consumer reads it.
  if (HasReduction(producer)) producer_use = std::min(producer_use, 1.0);
  for (int64_t j = 0; j < producer->operand_count(); ++j) operands.push_back({producer->operand(j), pu[j] * producer_use});
  const double flops = Flops(consumer) + Flops(producer) * producer_use;
  return FromParts(operands, {consumer}, flops, std::max(ParallelElements(consumer), ParallelElements(producer)));
}

KernelEstimate GpuCostModel::EstimateMerged(const std::vector<const HloInstruction*>& nodes) const {
  // Operands read by several nodes are read once from memory; values passed between the
  // nodes stay in the kernel.
  std::vector<Operand> operands;
  double flops = 0, parallel = 1;
  for (const HloInstruction* n : nodes) {
    std::vector<double> u = OperandUtilization(n);
    for (int64_t j = 0; j < n->operand_count(); ++j) {
      if (std::find(nodes.begin(), nodes.end(), n->operand(j)) != nodes.end()) continue;
      operands.push_back({n->operand(j), std::min(1.0, u[j])});
    }
    flops += Flops(n);
    parallel = std::max(parallel, ParallelElements(n));
  }
  // A shared operand read by two nodes counts once: cap each operand's utilization at 1.
  absl::flat_hash_map<const HloInstruction*, double> seen;
  std::vector<Operand> unique;
  for (const Operand& op : operands) {
    if (seen.contains(op.inst)) continue;
    seen[op.inst] = 1;
    unique.push_back(op);
  }
  return FromParts(unique, nodes, flops, parallel);
}

FusionRunTimes GpuCostModel::EstimateRunTimes(const HloInstruction* producer,
                                              const std::vector<HloInstruction*>& consumers) const {
  std::vector<std::pair<double, double>> times;
  for (const HloInstruction* c : consumers) times.push_back({Estimate(c).exec_time, EstimateFused(producer, c).exec_time});
  return RunTimesFrom(producer, times);
}

FusionRunTimes GpuCostModel::RunTimesFrom(const HloInstruction* producer,
                                          const std::vector<std::pair<double, double>>& consumer_exec_times) const {
  return RunTimesFrom(Estimate(producer), consumer_exec_times);
}

FusionRunTimes GpuCostModel::RunTimesFrom(const KernelEstimate& p,
                                          const std::vector<std::pair<double, double>>& consumer_exec_times) const {
  FusionRunTimes t;
  t.time_unfused = p.is_kernel ? hw_.launch_overhead + p.exec_time : 0;
  for (const auto& [unfused, fused] : consumer_exec_times) {
    t.time_unfused += hw_.launch_overhead + unfused;
    t.time_fused += hw_.launch_overhead + fused;
  }
  return t;
}

}  // namespace hloc::fusion
