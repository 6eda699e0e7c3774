// NVPTX code generation (see nvptx_backend.h).
#include "codegen/gpu/nvptx_backend.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/Transforms/IPO/Internalize.h"

namespace hloc::codegen::gpu {
namespace {

constexpr char kTriple[] = "nvptx64-nvidia-cuda";

void InitNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // f32 division as div.full.f32 (2 ulp) instead of the IEEE div.rn.f32 sequence: XLA's
    // choice (nvptx_backend.cc feeds the same flag), so results match the reference's
    // rounding, and division-heavy kernels (lgamma/digamma expansions) run ~3x fewer
    // instructions per divide. div.approx is not used: it is wrong for FLT_MAX / FLT_MAX.
    const char* argv[] = {"hloc", "-nvptx-prec-divf32=1"};
    llvm::cl::ParseCommandLineOptions(2, argv, "hloc NVPTX options\n");
  });
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> MakeTargetMachine(const NvptxOptions& o) {
  InitNvptx();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) return absl::InternalError(absl::StrCat("LLVM has no NVPTX target: ", error));
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;  // XLA's default (fma contraction)
  llvm::CodeGenOptLevel level = o.opt_level <= 0 ? llvm::CodeGenOptLevel::None : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(kTriple, o.sm, o.ptx_version, options, std::nullopt, std::nullopt, level));
  if (!tm) return absl::InternalError(absl::StrCat("cannot create an NVPTX target machine for ", o.sm));
  return tm;
}

// "sm_90a" -> 90 (-1 when it does not read as sm_DIGITS).
int SmNumber(llvm::StringRef sm) {
  unsigned n = 0;
  if (!sm.consume_front("sm_") || sm.consumeInteger(10, n)) return -1;
  return static_cast<int>(n);
}

absl::Status LinkLibdevice(llvm::Module& module, const NvptxOptions& options) {
  bool needed = false;
  for (const llvm::Function& f : module)
    if (f.isDeclaration() && f.getName().starts_with("__nv_")) needed = true;
  if (!needed) return absl::OkStatus();
  const std::string path = FindLibdevice(options);
  if (path.empty())
    return absl::NotFoundError(
        "the module calls libdevice math functions but libdevice.10.bc was not found (set HLOC_LIBDEVICE to its "
        "path, or CUDA_HOME to the CUDA toolkit)");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) return absl::NotFoundError(absl::StrCat("cannot read '", path, "': ", buffer.getError().message()));
  // Lazily: only the functions the linker pulls in are read (XLA loads libdevice the same
  // way), which matters once kernels are compiled in several chunks, each linking its own.
  llvm::Expected<std::unique_ptr<llvm::Module>> lib =
      llvm::getOwningLazyBitcodeModule(std::move(*buffer), module.getContext());
  if (!lib) {
    std::string msg = llvm::toString(lib.takeError());
    return absl::InternalError(absl::StrCat("cannot parse '", path, "': ", msg));
  }
  (*lib)->setTargetTriple(module.getTargetTriple());
  (*lib)->setDataLayout(module.getDataLayout());
  // Only what the module uses, internalized so the optimizer drops the rest (XLA does the same).
  if (llvm::Linker::linkModules(module, std::move(*lib), llvm::Linker::Flags::LinkOnlyNeeded,
                                [](llvm::Module& m, const llvm::StringSet<>& gvs) {
                                  llvm::internalizeModule(m, [&gvs](const llvm::GlobalValue& gv) {
                                    return !gv.hasName() || gvs.count(gv.getName()) == 0;
                                  });
                                }))
    return absl::InternalError(absl::StrCat("linking libdevice from '", path, "' failed"));
  // libdevice reads __nvvm_reflect("__CUDA_FTZ"): 0 keeps denormals (XLA's default).
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz", static_cast<uint32_t>(0));
  return absl::OkStatus();
}

// Unnamed globals are named too: the printer would call them __unnamed_N in every module.
void SuffixLocalSymbols(llvm::Module& module, const std::string& suffix) {
  for (llvm::GlobalValue& gv : module.global_values()) {
    if (!gv.hasLocalLinkage()) continue;
    gv.setName(gv.hasName() ? (gv.getName() + suffix).str() : "anon" + suffix);
  }
}

}  // namespace

std::vector<std::string> SupportedNvptxTargets() {
  InitNvptx();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(kTriple, error);
  if (target == nullptr) return {};
  std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(kTriple, "", ""));
  std::vector<std::string> names;
  for (const llvm::SubtargetSubTypeKV& cpu : sti->getAllProcessorDescriptions())
    if (SmNumber(cpu.Key) >= kMinComputeCapability) names.push_back(cpu.Key);
  return names;
}

absl::Status CheckNvptxTarget(const std::string& sm) {
  const std::vector<std::string> known = SupportedNvptxTargets();
  if (std::find(known.begin(), known.end(), sm) != known.end()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(sm, " is not a GPU target this hloc can compile for (LLVM ",
                                                 LLVM_VERSION_STRING, "'s NVPTX backend, from sm_",
                                                 kMinComputeCapability, " on: ", absl::StrJoin(known, ", "), ")"));
}

std::string FindLibdevice(const NvptxOptions& options) {
  std::vector<std::string> candidates = options.libdevice_paths;
  if (const char* env = std::getenv("HLOC_LIBDEVICE"); env != nullptr && *env != '\0') candidates.push_back(env);
  for (const char* var : {"CUDA_HOME", "CUDA_PATH", "CUDA_DIR"}) {
    if (const char* env = std::getenv(var); env != nullptr && *env != '\0')
      candidates.push_back(absl::StrCat(env, "/nvvm/libdevice/libdevice.10.bc"));
  }
  candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  candidates.push_back("/usr/lib/nvidia-cuda-toolkit/libdevice/libdevice.10.bc");
  candidates.push_back("/usr/lib/cuda/nvvm/libdevice/libdevice.10.bc");
  for (const std::string& c : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(c, ec)) return c;
  }
  return "";
}

void ConfigureNvptxModule(llvm::Module& module, const NvptxOptions& options) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = MakeTargetMachine(options);
  module.setTargetTriple(kTriple);
  if (tm.ok()) module.setDataLayout((*tm)->createDataLayout());
}

absl::StatusOr<std::string> CompileToPtx(llvm::Module& module, const NvptxOptions& options,
                                         const std::string& local_suffix) {
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = MakeTargetMachine(options);
  if (!tm.ok()) return tm.status();
  module.setTargetTriple(kTriple);
  module.setDataLayout((*tm)->createDataLayout());
  if (absl::Status s = LinkLibdevice(module, options); !s.ok()) return s;
  {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(module, &os)) return absl::InternalError(absl::StrCat("invalid LLVM module: ", os.str()));
  }
  if (options.opt_level > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions tuning;
    tuning.LoopUnrolling = true;
    llvm::PassBuilder pb(tm->get(), tuning);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    // NVVMReflect and the NVPTX IR passes come in through the target's pipeline callbacks.
    (*tm)->registerPassBuilderCallbacks(pb);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(module, mam);
  }
  if (!local_suffix.empty()) SuffixLocalSymbols(module, local_suffix);
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return absl::InternalError("the NVPTX target cannot emit PTX");
  pm.run(module);
  return std::string(buffer.begin(), buffer.end());
}

namespace {

// Splits PTX text after its header (through the .address_size line).
absl::StatusOr<std::pair<std::string, std::string>> SplitPtxHeader(const std::string& ptx) {
  const size_t at = ptx.find("\n.address_size");
  if (at == std::string::npos) return absl::InternalError("PTX without an .address_size line");
  const size_t end = ptx.find('\n', at + 1);
  const size_t cut = end == std::string::npos ? ptx.size() : end + 1;
  return std::make_pair(ptx.substr(0, cut), ptx.substr(cut));
}

// Appends `body`, dropping .extern statements already in `seen` (a statement ends at ';').
void AppendPtxBody(const std::string& body, std::set<std::string>& seen, std::string& out) {
  size_t pos = 0;
  while (pos < body.size()) {
    size_t eol = body.find('\n', pos);
    if (eol == std::string::npos) eol = body.size() - 1;
    if (body.compare(pos, 7, ".extern") != 0) {
      out.append(body, pos, eol + 1 - pos);
      pos = eol + 1;
      continue;
    }
    size_t semi = body.find(';', pos);
    size_t stop = semi == std::string::npos ? body.size() : body.find('\n', semi);
    stop = stop == std::string::npos ? body.size() : stop + 1;
    std::string statement = body.substr(pos, stop - pos);
    if (seen.insert(statement).second) out += statement;
    pos = stop;
  }
}

}  // namespace

absl::StatusOr<std::string> CombinePtx(const std::vector<std::string>& parts) {
  if (parts.size() == 1) return parts[0];
  std::string out, header;
  std::set<std::string> externs;
  for (const std::string& part : parts) {
    absl::StatusOr<std::pair<std::string, std::string>> split = SplitPtxHeader(part);
    if (!split.ok()) return split.status();
    if (header.empty()) {
      header = split->first;
      out = header;
    } else if (split->first != header) {
      return absl::InternalError("PTX modules for different targets cannot be combined");
    }
    AppendPtxBody(split->second, externs, out);
  }
  return out;
}

}  // namespace hloc::codegen::gpu
