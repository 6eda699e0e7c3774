// Hardware profiles (configs/*.yaml): the facts cost models and rule requirements consult.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "engine/tuning.h"

namespace hloc {

struct HardwareProfile {
  std::string name;               // "h200"
  std::string kind;               // "gpu" or "cpu"
  std::string pipeline;           // the manifest this profile patches ("gpu" -> pipelines/gpu.yaml)
  int64_t sm_count = 0;           // streaming multiprocessors (GPU) or cores (CPU)
  double memory_bandwidth = 0;    // bytes/s
  double peak_flops_f32 = 0;      // FLOP/s
  double peak_flops_bf16 = 0;     // FLOP/s (tensor cores where present)
  int64_t shared_memory_per_block = 0;  // bytes
  int64_t l2_cache_size = 0;      // bytes
  int compute_capability_major = 0, compute_capability_minor = 0;
  std::string compute_capability_location;  // "FILE:LINE:COL" of the profile's value (errors)
  int64_t memory_size = 0;        // bytes of device (or host) memory
  bool has_tensor_cores = false;
  // The link between devices collectives cross (NVLink on one host; the CPU's shared memory):
  // bytes/s one device sends, and the fixed time of one collective step. The latency-hiding
  // scheduler estimates a collective from them. 0: unknown (the scheduler's unit costs).
  double link_bandwidth = 0;
  double link_latency = 0;
  // The launch check's limits (profile key `launch_check:`; codegen/gpu/launch_check.h): a kernel
  // touching more than min_bytes with more than max_bytes_per_thread per launched thread is
  // reported. 0: the compiler's defaults (1 MiB, 64 KiB).
  int64_t launch_check_min_bytes = 0;
  int64_t launch_check_max_bytes_per_thread = 0;
  // The compiler's tuning numbers (profile key `tuning:`; engine/tuning.h).
  Tuning tuning;
  // Capability names rules may require (HasTensorCores, HasFp8, ...), derived from the facts.
  std::map<std::string, bool> capabilities;
};

}  // namespace hloc
