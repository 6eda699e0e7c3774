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
  virtual absl::StatusOr<std::vector<HostBuffer>> Run(const std::vector<HostBuffer>& arguments) = 0;

  virtual const Executable& executable() const = 0;
};

}  // namespace hloc::runtime
