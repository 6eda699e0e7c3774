// GpuCompiler: pipeline -> schedule -> buffers (256-byte aligned) -> thunks + NVPTX kernels ->
// command buffers -> PTX (see gpu_compiler.h). XLA reference: xla/service/gpu/gpu_compiler.cc
// (RunHloPasses, RunBackend, CompileToTargetBinary), xla/service/gpu/nvptx_compiler.cc.
#include "codegen/gpu/gpu_compiler.h"

#include "codegen/gpu/fusion_emitter_kind.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "buffers/buffer_assignment.h"
#include "codegen/gpu/gpu_kernel_emitter.h"
#include "codegen/gpu/kernel_modules.h"
#include "codegen/gpu/launch_check.h"
#include "codegen/gpu/nvptx_backend.h"
#include "codegen/compile_stages.h"
#include "codegen/thunk_emitter.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "ir/hlo_printer.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "schedule/hlo_scheduling.h"

namespace hloc::codegen::gpu {
namespace {

namespace fs = std::filesystem;

GpuDeviceInfo DeviceInfoFrom(const std::optional<Profile>& profile) {
  // The one reading of the profile that fusion-emitter-assignment's analysis also makes.
  return GpuDeviceInfoFromProfile(profile ? &profile->hardware : nullptr);
}

// The profile's GPU must be one LLVM can compile for; the error points at its compute_capability
// (FILE:LINE:COL), before any pass runs.
absl::Status CheckProfileTarget(const std::optional<Profile>& profile) {
  const GpuDeviceInfo device = DeviceInfoFrom(profile);
  absl::Status s = CheckNvptxTarget(device.sm_name());
  if (s.ok() || !profile) return s;
  const HardwareProfile& h = profile->hardware;
  const std::string at = h.compute_capability_location.empty() ? profile->source : h.compute_capability_location;
  return absl::InvalidArgumentError(absl::StrCat(at, ": compute_capability ", h.compute_capability_major, ".",
                                                 h.compute_capability_minor, ": ", s.message()));
}

LaunchCheckLimits LaunchLimitsFrom(const std::optional<Profile>& profile) {
  LaunchCheckLimits l;
  if (!profile) return l;
  if (profile->hardware.launch_check_min_bytes > 0) l.min_bytes = profile->hardware.launch_check_min_bytes;
  if (profile->hardware.launch_check_max_bytes_per_thread > 0)
    l.max_bytes_per_thread = profile->hardware.launch_check_max_bytes_per_thread;
  return l;
}

// How many chunks compile at once: HLOC_COMPILE_THREADS, else the machine's cores (XLA compiles
// its LLVM modules in parallel too: xla_gpu_force_compilation_parallelism).
int CompileThreads(size_t chunks) {
  int n = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("HLOC_COMPILE_THREADS"); env != nullptr && *env != '\0') n = std::atoi(env);
  return std::clamp<int>(n, 1, static_cast<int>(std::max<size_t>(1, chunks)));
}

// Each chunk to PTX on its own (internal symbols suffixed $c<i>$ when there are several, so
// their PTX joins into one module). With several threads each chunk goes through bitcode into
// an LLVMContext of its own (a context is not shared between threads); the PTX is the same as
// compiling them one after the other, joined in chunk order.
absl::StatusOr<std::string> CompileChunksToPtx(const std::vector<std::unique_ptr<llvm::Module>>& chunks,
                                               const NvptxOptions& nvptx) {
  auto suffix = [&](size_t i) { return chunks.size() > 1 ? absl::StrCat("$c", i, "$") : std::string(); };
  std::vector<absl::StatusOr<std::string>> parts(chunks.size(), absl::InternalError("not compiled"));
  const int threads = CompileThreads(chunks.size());
  if (threads <= 1) {
    for (size_t i = 0; i < chunks.size(); ++i) parts[i] = CompileToPtx(*chunks[i], nvptx, suffix(i));
  } else {
    std::vector<std::string> bitcode(chunks.size());
    for (size_t i = 0; i < chunks.size(); ++i) {
      llvm::raw_string_ostream os(bitcode[i]);
      llvm::WriteBitcodeToFile(*chunks[i], os);
    }
    std::atomic<size_t> next{0};
    auto work = [&]() {
      for (size_t i = next++; i < chunks.size(); i = next++) {
        llvm::LLVMContext context;
        llvm::Expected<std::unique_ptr<llvm::Module>> m =
            llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode[i], chunks[i]->getModuleIdentifier()), context);
        if (!m) {
          parts[i] = absl::InternalError(absl::StrCat("reading chunk ", i, "'s bitcode: ", llvm::toString(m.takeError())));
          continue;
        }
        parts[i] = CompileToPtx(**m, nvptx, suffix(i));
      }
    };
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
    for (std::thread& t : pool) t.join();
  }
  std::vector<std::string> texts;
  for (absl::StatusOr<std::string>& p : parts) {
    if (!p.ok()) return p.status();
    texts.push_back(std::move(*p));
  }
  return CombinePtx(texts);
}

}  // namespace

absl::StatusOr<runtime::Executable> GpuCompiler::Compile(HloModule& module, const GpuCompileOptions& options,
                                                         GpuCompileArtifacts* artifacts) {
  if (module.entry_computation() == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  if (options.profile && options.profile->hardware.kind != "gpu")
    return absl::InvalidArgumentError(absl::StrCat("profile '", options.profile->hardware.name, "' is for ",
                                                   options.profile->hardware.kind, " hardware, not a GPU"));
  if (absl::Status s = CheckProfileTarget(options.profile); !s.ok()) return s;
  StageTimer timer(options.log);
  // 1-3. HLO passes, a schedule, buffers (256-byte alignment).
  // --small-gemm-kernels reaches the one place that decides (small-gemm-selector): `off`
  // disables the pass, `max=N` sets the profile's small_gemm_max_macs it reads.
  std::optional<Pipeline> pipeline = options.pipeline;
  std::optional<Profile> profile = options.profile;
  if (!options.small_gemm.enabled && pipeline.has_value())
    for (PipelineEntry* e : FindTargets(*pipeline, "small-gemm-selector")) e->enabled = false;
  if (options.small_gemm.max_macs > 0 && profile.has_value())
    profile->hardware.tuning.Set(TuningKnob::kSmallGemmMaxMacs, static_cast<double>(options.small_gemm.max_macs));
  if (options.small_gemm.max_short_side > 0 && profile.has_value())
    profile->hardware.tuning.Set(TuningKnob::kSmallGemmMaxShortSide,
                                 static_cast<double>(options.small_gemm.max_short_side));
  absl::StatusOr<std::unique_ptr<BufferAssignment>> assignment = RunHloStagesAndAssignBuffers(
      module, pipeline, profile, options.dump_to, options.log, 256, timer, options.recorder);
  if (!assignment.ok()) return assignment.status();

  // 4. Thunks and kernels.
  const GpuDeviceInfo device = DeviceInfoFrom(options.profile);
  NvptxOptions nvptx;
  nvptx.sm = device.sm_name();
  nvptx.opt_level = options.opt_level;
  if (!options.libdevice.empty()) nvptx.libdevice_paths.push_back(options.libdevice);
  llvm::LLVMContext context;
  KernelModules modules(&context, nvptx);
  // The profile's tuning numbers (their declared defaults without a profile). Which GEMMs run
  // on the small-GEMM kernel is in the module (small-gemm-selector); the kernel emitter takes
  // only the tile overrides.
  const Tuning tuning = options.profile.has_value() ? options.profile->hardware.tuning : Tuning();
  GpuKernelEmitter kernels(&modules, device, options.small_gemm, options.deterministic_ops);
  ThunkEmitterOptions thunk_options;
  thunk_options.num_devices = std::max<int64_t>(1, module.config().replica_count) *
                              std::max<int64_t>(1, module.config().num_partitions);
  thunk_options.num_partitions = std::max<int64_t>(1, module.config().num_partitions);
  // NCCL runs every collective (runtime/gpu/nccl_collectives.h), on one device through a
  // one-rank communicator, and async pairs on a stream of their own.
  thunk_options.device_collectives = true;
  thunk_options.library_collectives_on_one_device = true;
  thunk_options.async_collectives = true;
  absl::StatusOr<runtime::ThunkSequence> thunks = EmitThunks(module, **assignment, kernels, thunk_options);
  if (!thunks.ok()) return WithStage(thunks.status(), "code generation");
  absl::StatusOr<std::vector<std::unique_ptr<llvm::Module>>> chunks = modules.TakeChunks(tuning.Get(TuningKnob::kPtxChunkInstructions));
  if (!chunks.ok()) return WithStage(chunks.status(), "code generation");
  for (const std::unique_ptr<llvm::Module>& chunk : *chunks) {
    std::string err;
    llvm::raw_string_ostream os(err);
    if (llvm::verifyModule(*chunk, &os))
      return absl::InternalError(absl::StrCat("code generation: the emitted LLVM module is invalid: ", os.str()));
  }
  timer.Done("thunks + kernels", absl::StrFormat("%d thunks, %d kernels (%d unique)", thunks->size(),
                                                 kernels.num_kernels(), modules.num_unique()));
  std::vector<std::string> launch_warnings;
  for (const LaunchWarning& w : CheckLaunches(*thunks, LaunchLimitsFrom(options.profile))) {
    launch_warnings.push_back(w.ToString());
    if (options.warnings != nullptr) *options.warnings << "hloc: warning: " << module.name() << ": " << w.ToString() << "\n";
  }
  std::string ir;
  if (artifacts != nullptr || !options.dump_to.empty()) {
    llvm::raw_string_ostream os(ir);
    for (const std::unique_ptr<llvm::Module>& chunk : *chunks) chunk->print(os, nullptr);
    os.flush();
  }

  // 5. Command buffers.
  CommandBufferConversionOptions cb = options.command_buffer_options;
  cb.enabled = cb.enabled && options.command_buffers;
  cb.lanes = tuning.Get(TuningKnob::kCommandBufferLanes);
  absl::StatusOr<int64_t> graphs = RunCommandBufferConversion(*thunks, cb);
  if (!graphs.ok()) return WithStage(graphs.status(), "command buffers");
  timer.Done("command buffers", absl::StrFormat("%d graphs", *graphs));

  // 6. PTX.
  absl::StatusOr<std::string> ptx = CompileChunksToPtx(*chunks, nvptx);
  if (!ptx.ok()) return WithStage(ptx.status(), "PTX");
  timer.Done("ptx", absl::StrFormat("%s, %d bytes, %d chunks", nvptx.sm, ptx->size(), chunks->size()));

  runtime::Executable exe;
  exe.module_name = module.name();
  exe.platform = "gpu";
  exe.num_partitions = thunk_options.num_partitions;
  exe.replica_count = std::max<int64_t>(1, module.config().replica_count);
  exe.target = nvptx.sm;
  exe.profile = options.profile ? options.profile->hardware.name : std::string("h200");
  exe.code.assign(ptx->begin(), ptx->end());
  if (absl::Status s = FillExecutableBuffers(module, **assignment, exe); !s.ok()) return WithStage(s, "executable");
  exe.thunks = std::move(*thunks);
  exe.hlo_text = PrintModule(module);
  exe.buffer_assignment_text = (*assignment)->ToString();
  const std::string thunk_text = runtime::ThunkSequenceToString(exe.thunks);
  if (absl::Status s = WriteCompileDumps(options.dump_to, module, exe, thunk_text, {{"ir-no-opt.ll", &ir}, {"ptx", &*ptx}},
                                       options.recorder, assignment->get());
      !s.ok())
    return s;
  if (artifacts != nullptr) {
    artifacts->optimized_hlo = exe.hlo_text;
    artifacts->buffer_assignment = exe.buffer_assignment_text;
    artifacts->thunk_sequence = thunk_text;
    artifacts->llvm_ir = std::move(ir);
    artifacts->ptx = std::move(*ptx);
    artifacts->num_kernels = kernels.num_kernels();
    artifacts->num_unique_kernels = modules.num_unique();
    artifacts->launch_warnings = std::move(launch_warnings);
  }
  return exe;
}

absl::Status LoadGpuProfileAndPipeline(const std::string& profile_name_or_path,
                                       const std::vector<std::string>& config_dirs,
                                       const std::vector<std::string>& pipeline_dirs, GpuCompileOptions& options,
                                       const Profile* preloaded) {
  const std::string name = profile_name_or_path.empty() ? std::string("h200") : profile_name_or_path;
  absl::Status s = LoadProfileAndPipeline(name, "gpu", "GPU", config_dirs, pipeline_dirs, options.profile,
                                          options.pipeline, preloaded);
  if (!s.ok()) return s;
  return CheckProfileTarget(options.profile);
}

}  // namespace hloc::codegen::gpu
