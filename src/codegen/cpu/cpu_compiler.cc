// CpuCompiler: pipeline -> schedule -> buffers -> thunks + LLVM kernels -> ELF object (see
// cpu_compiler.h). XLA reference: xla/service/cpu/cpu_compiler.cc (RunHloPasses, RunBackend).
#include "codegen/cpu/cpu_compiler.h"

#include <chrono>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "buffers/buffer_assignment.h"
#include "codegen/cpu/cpu_kernel_emitter.h"
#include "codegen/compile_stages.h"
#include "codegen/thunk_emitter.h"
#include "engine/pass_manager.h"
#include "ir/hlo_printer.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "schedule/hlo_scheduling.h"

namespace hloc::codegen::cpu {
namespace {

namespace fs = std::filesystem;

void InitLlvmTargets() {
  static const bool once = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)once;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> HostTargetMachine(int opt_level, const std::string& cpu_name) {
  InitLlvmTargets();
  const std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (target == nullptr) return absl::InternalError(absl::StrCat("no LLVM target for ", triple, ": ", error));
  const bool host = cpu_name.empty() || cpu_name == "host";
  std::string features;
  if (host) {
    for (const auto& f : llvm::sys::getHostCPUFeatures()) {
      if (!features.empty()) features += ",";
      features += (f.second ? "+" : "-") + f.first().str();
    }
  } else {
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(triple, "", ""));
    if (sti && !sti->isCPUStringValid(cpu_name))
      return absl::InvalidArgumentError(absl::StrCat("unknown target CPU '", cpu_name, "' for ", triple));
  }
  llvm::TargetOptions options;
  llvm::CodeGenOptLevel level = opt_level <= 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, host ? llvm::sys::getHostCPUName() : llvm::StringRef(cpu_name), features, options, llvm::Reloc::PIC_, llvm::CodeModel::Small, level));
  if (!tm) return absl::InternalError(absl::StrCat("cannot create a target machine for ", triple));
  return tm;
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm, int opt_level) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  llvm::PassBuilder pb(&tm, tuning);
  // Vector math from glibc's libmvec: the loop vectorizer turns exp, log, sin, cos, tan and pow
  // (LLVM 19's LIBMVEC-X86 list) into _ZGV* calls on whole vectors, which the JIT resolves from
  // the process (the CPU runtime links libmvec). Only for x86-64 Linux targets with AVX2, so a
  // vector width the target lacks is never asked for. Registered before the default analyses.
  const llvm::Triple& triple = tm.getTargetTriple();
  llvm::TargetLibraryInfoImpl tlii(triple);
  if (opt_level >= 2 && triple.getArch() == llvm::Triple::x86_64 && triple.isOSLinux() &&
      tm.getTargetFeatureString().contains("+avx2")) {
    tlii.addVectorizableFunctionsFromVecLib(llvm::TargetLibraryInfoImpl::LIBMVEC_X86, triple);
  }
  fam.registerPass([&] { return llvm::TargetLibraryAnalysis(tlii); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm = opt_level <= 0 ? pb.buildO0DefaultPipeline(level) : pb.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
}

absl::StatusOr<std::vector<uint8_t>> EmitObject(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return absl::InternalError("the target machine cannot emit object files");
  pm.run(module);
  return std::vector<uint8_t>(buffer.begin(), buffer.end());
}

}  // namespace

std::string HostTargetTriple() { return llvm::sys::getProcessTriple(); }

absl::StatusOr<runtime::Executable> CpuCompiler::Compile(HloModule& module, const CpuCompileOptions& options,
                                                         CpuCompileArtifacts* artifacts) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  StageTimer timer(options.log);
  // 1-3. HLO passes, a schedule, buffers (64-byte alignment).
  absl::StatusOr<std::unique_ptr<BufferAssignment>> assignment = RunHloStagesAndAssignBuffers(
      module, options.pipeline, options.profile, options.dump_to, options.log, 64, timer, options.recorder);
  if (!assignment.ok()) return assignment.status();

  // 4. Thunks and kernels.
  llvm::LLVMContext context;
  auto llvm_module = std::make_unique<llvm::Module>(module.name(), context);
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> tm = HostTargetMachine(options.opt_level, options.target_cpu);
  if (!tm.ok()) return tm.status();
  llvm_module->setTargetTriple((*tm)->getTargetTriple().str());
  llvm_module->setDataLayout((*tm)->createDataLayout());
  CpuKernelOptions kernel_options;
  kernel_options.max_partitions = options.max_kernel_partitions > 0 ? options.max_kernel_partitions
                                  : (options.profile && options.profile->hardware.kind == "cpu" &&
                                     options.profile->hardware.sm_count > 0)
                                      ? options.profile->hardware.sm_count
                                      : 16;
  CpuKernelEmitter kernels(llvm_module.get(), kernel_options);
  ThunkEmitterOptions thunk_options;
  thunk_options.num_devices = std::max<int64_t>(1, module.config().replica_count) *
                              std::max<int64_t>(1, module.config().num_partitions);
  thunk_options.num_partitions = std::max<int64_t>(1, module.config().num_partitions);
  thunk_options.device_collectives = true;  // CpuExecutable::RunPartitioned runs them on threads
  absl::StatusOr<runtime::ThunkSequence> thunks = EmitThunks(module, **assignment, kernels, thunk_options);
  if (!thunks.ok()) return WithStage(thunks.status(), "code generation");
  {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*llvm_module, &os))
      return absl::InternalError(absl::StrCat("code generation: the emitted LLVM module is invalid: ", os.str()));
  }
  timer.Done("thunks + kernels", absl::StrFormat("%d thunks, %d kernels", thunks->size(), kernels.num_kernels()));

  // 5. Optimized object code.
  OptimizeModule(*llvm_module, **tm, options.opt_level);
  timer.Done("llvm O" + std::to_string(options.opt_level));
  absl::StatusOr<std::vector<uint8_t>> object = EmitObject(*llvm_module, **tm);
  if (!object.ok()) return object.status();
  timer.Done("object code", absl::StrFormat("%d bytes", object->size()));

  runtime::Executable exe;
  exe.module_name = module.name();
  exe.platform = "cpu";
  exe.target = (*tm)->getTargetTriple().str();
  exe.profile = options.profile ? options.profile->hardware.name : std::string("cpu");
  exe.code = std::move(*object);
  if (absl::Status s = FillExecutableBuffers(module, **assignment, exe); !s.ok()) return WithStage(s, "executable");
  exe.thunks = std::move(*thunks);
  exe.num_partitions = thunk_options.num_partitions;
  exe.replica_count = std::max<int64_t>(1, module.config().replica_count);
  exe.hlo_text = PrintModule(module);
  exe.buffer_assignment_text = (*assignment)->ToString();

  std::string ir;
  if (artifacts != nullptr || !options.dump_to.empty()) {
    llvm::raw_string_ostream os(ir);
    llvm_module->print(os, nullptr);
    os.flush();
  }
  const std::string thunk_text = runtime::ExecutableThunksToString(exe);
  if (absl::Status s = WriteCompileDumps(options.dump_to, module, exe, thunk_text, {{"ll", &ir}}, options.recorder,
                                       assignment->get()); !s.ok())
    return s;
  if (artifacts != nullptr) {
    artifacts->optimized_hlo = exe.hlo_text;
    artifacts->buffer_assignment = exe.buffer_assignment_text;
    artifacts->thunk_sequence = thunk_text;
    artifacts->llvm_ir = std::move(ir);
    artifacts->num_kernels = kernels.num_kernels();
  }
  return exe;
}

absl::Status LoadCpuProfileAndPipeline(const std::string& profile_name_or_path,
                                       const std::vector<std::string>& config_dirs,
                                       const std::vector<std::string>& pipeline_dirs, CpuCompileOptions& options,
                                       const Profile* preloaded) {
  if (profile_name_or_path.empty()) {
    absl::StatusOr<std::string> path = FindPipelineFile("cpu", pipeline_dirs);
    if (!path.ok()) return path.status();
    absl::StatusOr<Pipeline> p = LoadPipelineFile(*path);
    if (!p.ok()) return p.status();
    options.pipeline = std::move(*p);
    options.profile.reset();
    return absl::OkStatus();
  }
  return LoadProfileAndPipeline(profile_name_or_path, "cpu", "CPU", config_dirs, pipeline_dirs, options.profile,
                                options.pipeline, preloaded);
}

}  // namespace hloc::codegen::cpu
