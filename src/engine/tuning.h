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
  kSmallGemmMaxMacs,       // codegen/gpu/gpu_small_gemm.h
  kSmallGemmMaxShortSide,  // codegen/gpu/gpu_small_gemm.h
  kPtxChunkInstructions,   // codegen/gpu/gpu_compiler.cc
  kLoopThreadsPerBlock,    // codegen/gpu/gpu_kernel_util.h (GpuDeviceInfo)
  kGridStrideWaves,        // codegen/gpu/gpu_kernel_util.h (GpuDeviceInfo)
  kSplitReductionLightCost,  // codegen/gpu/gpu_reduction_split.h
  kCommandBufferLanes,     // codegen/gpu/command_buffer_conversion.h
  kCount
};

enum class TuningKind { kCount, kBytes };

struct TuningDecl {
  TuningKnob knob;
  std::string_view name;  // the YAML key
  TuningKind kind;
  int64_t default_value;
  int64_t min_value, max_value;
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
  int64_t Get(TuningKnob k) const { return values_[static_cast<size_t>(k)]; }
  void Set(TuningKnob k, int64_t v) { values_[static_cast<size_t>(k)] = v; }
  bool IsDefault(TuningKnob k) const;

 private:
  std::array<int64_t, static_cast<size_t>(TuningKnob::kCount)> values_;
};

}  // namespace hloc
