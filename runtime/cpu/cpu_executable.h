// Running an Executable on the host: the object code is linked in-process by LLVM's JIT linker
// (ORC, JITLink), the runtime functions of runtime_functions.h are defined for it, buffers are
// allocated from the executable's BufferAllocations, and the ThunkSequence is walked; kernels
// run their parts on a thread pool. Includes nothing from src/.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/executable/executable.h"

namespace hloc::runtime {

// An array on the host, in the layout its ArrayShape names.
struct HostBuffer {
  ArrayShape shape;
  std::vector<uint8_t> data;
};

struct CpuRunOptions {
  int num_threads = 0;      // 0: the machine's hardware concurrency
};

// A host implementation of a kCustomCall target: `arguments` are the thunk's slices (results
// last), `sizes` their byte sizes. Register before Load; Load fails on a target with none.
using CpuCustomCall = std::function<absl::Status(void** arguments, const std::vector<int64_t>& sizes,
                                                 const std::string& backend_config)>;
void RegisterCpuCustomCall(const std::string& target, CpuCustomCall call);

// `buffer` rearranged into the layout `minor_to_major` (empty: the default, row-major);
// errors when the layout is not a permutation of the buffer's dimensions or sizes disagree.
absl::StatusOr<HostBuffer> ToLayout(const HostBuffer& buffer, const std::vector<int64_t>& minor_to_major);

class CpuExecutable {
 public:
  // Links the code and resolves every kernel the thunks name; errors name the missing symbol.
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> Load(Executable executable, const CpuRunOptions& options);
  virtual ~CpuExecutable() = default;

  // Runs once. `arguments` are the entry parameter leaves in order (shapes must match
  // parameter_shapes; errors say which argument differs). Returns the result leaves in order.
  // An executable for several devices runs as device 0 alone here (partition-id and replica-id
  // read 0); a collective that needs other devices is then an error naming RunPartitioned.
  virtual absl::StatusOr<std::vector<HostBuffer>> Run(const std::vector<HostBuffer>& arguments) = 0;

  // Runs every device of the executable once: Executable::num_devices() = num_partitions x
  // replica_count (the module's config, recorded at compile time), device d = replica *
  // num_partitions + partition. arguments_per_device[d] are device d's entry parameter leaves (as
  // for Run); returns each device's result leaves, indexed the same way. Every device runs on its
  // own thread with its own buffers (made on the first call and kept); partition-id and
  // replica-id read the running device's ids; collectives meet in process (collectives.h) and are
  // exact and deterministic (reductions in group order). An error on any device ends the run:
  // devices waiting in or reaching a collective stop, and the first error is returned (naming
  // the device and the thunk); so do devices that finish or stand at different collectives
  // while others wait for them. No timeouts, no hangs. Runs take turns.
  virtual absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitioned(
      const std::vector<std::vector<HostBuffer>>& arguments_per_device) = 0;

  virtual const Executable& executable() const = 0;
};

// Loads `executable` (CpuExecutable::Load) and runs every device of it once (RunPartitioned):
// outputs[d] are device d's result leaves. For `hloc run` of an executable for several devices.
absl::StatusOr<std::vector<std::vector<HostBuffer>>> RunPartitioned(
    Executable executable, const std::vector<std::vector<HostBuffer>>& arguments_per_device,
    const CpuRunOptions& options = {});

}  // namespace hloc::runtime
