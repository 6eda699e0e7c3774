// Links an ELF object in-process with LLVM's ORC LLJIT (JITLink) and resolves symbols in it.
// The runtime functions of runtime_functions.h and a few compiler-rt conversion helpers are
// defined as absolute symbols; everything else an object needs (libm, memcpy) resolves from the
// process. LLVM stays out of this header.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace hloc::runtime {

class JitLoader {
 public:
  // `origin` names the object in errors (the executable's file or module name).
  static absl::StatusOr<std::unique_ptr<JitLoader>> Load(const std::vector<uint8_t>& object,
                                                         const std::string& origin);
  ~JitLoader();

  // The address of a symbol the object defines (by its unmangled name); errors name it.
  absl::StatusOr<void*> Lookup(const std::string& name);

 private:
  struct Impl;
  explicit JitLoader(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace hloc::runtime
