// Tuning numbers of the compiler, declared once (name, kind, default, what it decides and the
// measurement behind it) and set per hardware profile (`tuning:` in configs/*.yaml; unknown or
// ill-typed keys are errors at FILE:LINE:COL). `hloc opt --profile P --print-profile` prints the
// merged values. Code reads them by their declared id (TuningKnob), never by a name string.
#pragma once
#include <array>
#include <cstdint>
#include <string_view>

namespace hloc {

enum class TuningKnob {
  kSmallGemmMaxMacs,       // passes/library/small_gemm_selector.h
  kSmallGemmMaxShortSide,  // passes/library/small_gemm_selector.h
  kPtxChunkInstructions,   // codegen/gpu/gpu_compiler.cc
  kLoopThreadsPerBlock,    // codegen/gpu/gpu_kernel_util.h (GpuDeviceInfo)
  kGridStrideWaves,        // codegen/gpu/gpu_kernel_util.h (GpuDeviceInfo)
  kSplitReductionLightCost,  // codegen/gpu/gpu_reduction_split.h
  kCommandBufferLanes,     // codegen/gpu/command_buffer_conversion.h
  kFusionL2CacheSpeedup,   // passes/fusion/gpu_cost_model.h (CostModelHardware)
  kFusionMemoryComputeOverlap,   // passes/fusion/gpu_cost_model.h
  kFusionBlocksPerSmToSaturate,  // passes/fusion/gpu_cost_model.h
  kKernelLaunchOverhead,   // passes/fusion/gpu_cost_model.h
  kCublasWorkspaceBytes,   // passes/library/gemm_rewriter.cc
  kAllReduceCombineThresholdBytes,      // passes/collectives/collective_combiner.h
  kAllGatherCombineThresholdBytes,      // passes/collectives/collective_combiner.h
  kReduceScatterCombineThresholdBytes,  // passes/collectives/collective_combiner.h
  kCollectiveCombineThresholdCount,     // passes/collectives/collective_combiner.h
  kConcatenateMaxDistinctOperands,      // passes/expanders/wide_concatenate_splitter.h
  kTopkSplitWarpsPerSm,                 // codegen/gpu/gpu_topk_warp.cc (GpuDeviceInfo)
  kTopkSplitMinPartElements,            // codegen/gpu/gpu_topk_warp.cc (GpuDeviceInfo)
  kRowReductionLongRowElements,         // gpu_reduction_emitter.cc and multi_output_fusion.cc
  kRowReductionWarpRowMaxElements,      // codegen/gpu/gpu_reduction_emitter.cc (GpuDeviceInfo)
  kRowReductionWarpRowsPerBlock,        // codegen/gpu/gpu_reduction_emitter.cc (GpuDeviceInfo)
  kRowReductionVectorsPerThread,        // codegen/gpu/gpu_reduction_emitter.cc (GpuDeviceInfo)
  kRowReductionFoldUnroll,              // codegen/gpu/gpu_reduction_emitter.cc (GpuDeviceInfo)
  kCount
};

// kCount and kBytes knobs hold integers (Get); kReal knobs any number in range (GetReal).
enum class TuningKind { kCount, kBytes, kReal };

struct TuningDecl {
  TuningKnob knob;
  std::string_view name;  // the YAML key
  TuningKind kind;
  double default_value;
  double min_value, max_value;
  std::string_view decides;      // what the number decides
  std::string_view measurement;  // where the default comes from
};

// Every knob, in TuningKnob order.
const std::array<TuningDecl, static_cast<size_t>(TuningKnob::kCount)>& TuningDecls();
const TuningDecl& DeclOf(TuningKnob knob);
const TuningDecl* FindTuningDecl(std::string_view name);  // null for an unknown name

// A profile's values: the declared defaults unless the profile sets them.
class Tuning {
 public:
  Tuning();
  int64_t Get(TuningKnob k) const { return static_cast<int64_t>(values_[static_cast<size_t>(k)]); }
  double GetReal(TuningKnob k) const { return values_[static_cast<size_t>(k)]; }
  void Set(TuningKnob k, double v) { values_[static_cast<size_t>(k)] = v; }
  bool IsDefault(TuningKnob k) const;

 private:
  std::array<double, static_cast<size_t>(TuningKnob::kCount)> values_;  // integers exact below 2^53
};

}  // namespace hloc
