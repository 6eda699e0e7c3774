// spmd-partitioning (XLA's SpmdPartitioner): rewrites a module whose instructions carry
// normalized shardings (sharding-propagation) into the one program every device runs: each
// array becomes the device's shard (ceil-sized tiles, zero padding past the end), each op
// works on shards, and where an op needs data another device holds the partitioner moves it
// with the one reshard routine (reshard.h) or with the op's own collective (a dot's all-reduce
// over its contracting shards, a convolution's halo exchange).
//
// The partitioned module keeps num_partitions; its per-device parameter and result shardings
// are recorded in config().spmd_parameters_shardings / spmd_output_sharding (as XLA's
// partitioner records them for the runtime), which also marks the module as partitioned: a
// second run leaves it alone, and `hloc run` splits inputs and joins outputs by them.
#pragma once
#include <ostream>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/spmd/reshard.h"

namespace hloc::spmd {

struct SpmdOptions {
  ReshardStrategies reshard;
  // Dot iteration-space choices (records of the pass): taking the sharding from the result,
  // from the operands, or combining both operands' splits.
  bool dot_from_output = true;
  bool dot_from_operands = true;
  bool dot_combine_operands = true;
  // Convolution spatial splits exchange halos with collective-permute; off: all-gather.
  bool conv_halo_exchange = true;
  // Gather/scatter on an operand split along indexed dims look up locally; off: replicated.
  bool gather_scatter_indexed_split = true;
  // Where "[SPMD] Involuntary full rematerialization" warnings go (null: std::cerr).
  std::ostream* warnings = nullptr;
};

// Whether `module` is already a per-device program: partitioned by hloc (the spmd_* config
// fields are set) or an optimized, scheduled module written by XLA.
bool IsPartitioned(const HloModule& module);

absl::StatusOr<bool> PartitionModule(HloModule& module, const SpmdOptions& options);

}  // namespace hloc::spmd
