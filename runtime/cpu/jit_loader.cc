#include "runtime/cpu/jit_loader.h"

#include <cstring>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "llvm/ExecutionEngine/JITLink/JITLinkMemoryManager.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "runtime/cpu/gemm.h"
#include "runtime/cpu/runtime_functions.h"

namespace {

// Conversions LLVM lowers to compiler-rt/libgcc calls on x86-64 when the CPU lacks the
// instructions (half, bfloat). The process may not have loaded libgcc_s, so the runtime defines
// them itself. Half and bfloat travel in the low 16 bits of an XMM register, which is how a
// _Float16 is passed, so _Float16 carries the bits for both.
#if defined(__FLT16_MAX__) && defined(__x86_64__)
_Float16 BitsToHalfReg(uint16_t bits) {
  _Float16 h;
  std::memcpy(&h, &bits, 2);
  return h;
}
uint16_t HalfRegToBits(_Float16 h) {
  uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}
float HlocExtendHfSf(_Float16 h) { return hloc::runtime::F16ToFloat(HalfRegToBits(h)); }
_Float16 HlocTruncSfHf(float f) { return BitsToHalfReg(hloc::runtime::FloatToF16(f)); }
_Float16 HlocTruncDfHf(double d) {
  // Through float rounds twice; exact enough for the rare f64 -> f16 conversion only where the
  // double sits exactly half-way after float rounding.
  return BitsToHalfReg(hloc::runtime::FloatToF16(static_cast<float>(d)));
}
_Float16 HlocTruncSfBf(float f) { return BitsToHalfReg(hloc::runtime::FloatToBf16(f)); }
_Float16 HlocTruncDfBf(double d) { return BitsToHalfReg(hloc::runtime::FloatToBf16(static_cast<float>(d))); }
#define HLOC_HAVE_HALF_HELPERS 1
#endif

std::string ToString(llvm::Error error) { return llvm::toString(std::move(error)); }

}  // namespace

namespace hloc::runtime {

struct JitLoader::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::string origin;
};

JitLoader::JitLoader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitLoader::~JitLoader() = default;

absl::StatusOr<std::unique_ptr<JitLoader>> JitLoader::Load(const std::vector<uint8_t>& object,
                                                           const std::string& origin) {
  static std::once_flag init;
  std::call_once(init, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  if (object.empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": the executable has no object code"));

  // JITLink (ObjectLinkingLayer) rather than RuntimeDyld: it is the maintained linker and handles
  // the small/medium code models and GOT/PLT the emitter's objects use.
  auto jit = llvm::orc::LLJITBuilder()
                 .setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession& es, const llvm::Triple&) {
                   return std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
                 })
                 .create();
  if (!jit) return absl::InternalError(absl::StrCat(origin, ": cannot start the JIT: ", ToString(jit.takeError())));
  auto impl = std::make_unique<Impl>();
  impl->jit = std::move(*jit);
  impl->origin = origin;
  llvm::orc::LLJIT& lljit = *impl->jit;
  llvm::orc::JITDylib& jd = lljit.getMainJITDylib();
  // Failures come back from the calls that caused them; the session's default reporter would
  // also print them to stderr.
  lljit.getExecutionSession().setErrorReporter([](llvm::Error e) { llvm::consumeError(std::move(e)); });

  // Runtime functions first: definitions in the JITDylib win over the process generator.
  llvm::orc::SymbolMap symbols;
  auto define = [&](const char* name, const void* address) {
    symbols[lljit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                            llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  };
  define("__hloc_cpu_sort", reinterpret_cast<const void*>(&__hloc_cpu_sort));
  define("__hloc_cpu_topk", reinterpret_cast<const void*>(&__hloc_cpu_topk));
#ifdef HLOC_HAVE_HALF_HELPERS
  define("__extendhfsf2", reinterpret_cast<const void*>(&HlocExtendHfSf));
  define("__gnu_h2f_ieee", reinterpret_cast<const void*>(&HlocExtendHfSf));
  define("__truncsfhf2", reinterpret_cast<const void*>(&HlocTruncSfHf));
  define("__gnu_f2h_ieee", reinterpret_cast<const void*>(&HlocTruncSfHf));
  define("__truncdfhf2", reinterpret_cast<const void*>(&HlocTruncDfHf));
  define("__truncsfbf2", reinterpret_cast<const void*>(&HlocTruncSfBf));
  define("__truncdfbf2", reinterpret_cast<const void*>(&HlocTruncDfBf));
#endif
  if (llvm::Error e = jd.define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    return absl::InternalError(absl::StrCat(origin, ": cannot define the runtime functions: ", ToString(std::move(e))));
  }
  // libm and libc functions the kernels call resolve from this process.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      lljit.getDataLayout().getGlobalPrefix());
  if (!process) {
    return absl::InternalError(
        absl::StrCat(origin, ": cannot search the process for symbols: ", ToString(process.takeError())));
  }
  jd.addGenerator(std::move(*process));
  // Loaded by Python's ctypes (RTLD_LOCAL), libhloc.so's own libraries are not in the process's
  // global scope the search above sees: look in glibc's vector math and libm by name too.
  for (const char* library : {"libmvec.so.1", "libm.so.6"}) {
    auto search = llvm::orc::DynamicLibrarySearchGenerator::Load(library, lljit.getDataLayout().getGlobalPrefix());
    if (search) {
      jd.addGenerator(std::move(*search));
    } else {
      llvm::consumeError(search.takeError());  // not on this system: the process search stands
    }
  }

  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(
      llvm::StringRef(reinterpret_cast<const char*>(object.data()), object.size()), origin);
  if (llvm::Error e = lljit.addObjectFile(std::move(buffer))) {
    return absl::InvalidArgumentError(
        absl::StrCat(origin, ": the object code cannot be loaded: ", ToString(std::move(e))));
  }
  return std::unique_ptr<JitLoader>(new JitLoader(std::move(impl)));
}

absl::StatusOr<void*> JitLoader::Lookup(const std::string& name) {
  // The first lookup links the object; a missing external symbol is reported here.
  auto address = impl_->jit->lookup(name);
  if (!address) {
    return absl::NotFoundError(absl::StrCat(impl_->origin, ": symbol '", name,
                                            "' cannot be resolved: ", ToString(address.takeError())));
  }
  return address->toPtr<void*>();
}

}  // namespace hloc::runtime
