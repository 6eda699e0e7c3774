// libFuzzer target: hloc-tblgen (gen/) on mutated rule files (issue 17).
//
// The input is a .td file as rules/<area>/X.td would be (it may include "base/Common.td" etc.
// from rules/); it goes through TableGen's parser and every hloc backend (--gen-all), as
// hloc-tblgen does (gen/tblgen_driver.cpp). An error is the right answer to a bad file.
//
// TableGen reports some errors with PrintFatalError, which prints a located message and calls
// exit(1): that is hloc-tblgen's documented way of failing, not a crash. The target is linked
// with -Wl,--wrap=exit so that such an exit during an input returns to the fuzzer (longjmp)
// instead of ending the process; the records of that input are freed with the next input, what
// the parser held leaks (run with -detect_leaks=0). Aborts, signals and sanitizer reports remain findings.
#include <csetjmp>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tblgen_driver.h"

#ifndef HLOC_RULES_DIR
#error "HLOC_RULES_DIR (the rules/ folder) must be defined"
#endif

namespace {
std::jmp_buf exit_jump;
bool in_input = false;
}  // namespace

extern "C" [[noreturn]] void __real_exit(int status);
extern "C" [[noreturn]] void __wrap_exit(int status) {
  if (in_input) {
    in_input = false;
    std::longjmp(exit_jump, 1);
  }
  __real_exit(status);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<std::string> include_dirs = {
      std::getenv("HLOC_RULES_DIR") ? std::getenv("HLOC_RULES_DIR") : HLOC_RULES_DIR};
  const llvm::StringRef text(reinterpret_cast<const char*>(data), size);
  std::string out;
  // Owned here, so that the records of an input that ended in exit(1) are freed with the next.
  static std::unique_ptr<llvm::RecordKeeper> records;
  records = std::make_unique<llvm::RecordKeeper>();
  if (setjmp(exit_jump) == 0) {
    in_input = true;
    (void)hloc_gen::CompileTd(text, "fuzz.td", include_dirs, hloc_gen::kGenAll, *records, &out);
  }
  in_input = false;
  return 0;
}
