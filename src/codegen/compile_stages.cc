#include "codegen/compile_stages.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "buffers/hlo_dataflow_analysis.h"
#include "engine/html_report.h"
#include "engine/pass.h"
#include "engine/pass_manager.h"
#include "passes/pass_util.h"
#include "ir/sharding_util.h"
#include "ir/verifier.h"
#include "passes/spmd/spmd_partitioner.h"
#include "schedule/hlo_scheduling.h"
#include "support/file_io.h"

namespace hloc::codegen {

void StageTimer::Done(const std::string& stage, const std::string& detail) {
  auto now = std::chrono::steady_clock::now();
  if (log_ != nullptr)
    *log_ << absl::StrFormat("compile: %-18s %8.3f s%s%s\n", stage,
                             std::chrono::duration<double>(now - start_).count(), detail.empty() ? "" : "  ", detail);
  start_ = now;
}

absl::Status WithStage(const absl::Status& s, const std::string& stage) {
  if (s.ok()) return s;
  return absl::Status(s.code(), absl::StrCat(stage, ": ", s.message()));
}

namespace {

// Whether `s` gives devices different parts of a value (or per-device values: manual), which
// only the SPMD partitioner turns into a per-device program.
bool DividesData(const HloSharding& s) {
  if (s.kind == HloSharding::Kind::kTuple) {
    for (const HloSharding& e : s.tuple_elements)
      if (DividesData(e)) return true;
    return false;
  }
  if (s.kind == HloSharding::Kind::kTiled) {
    for (int64_t d = 0; d < DataRank(s); ++d)
      if (TilesAlong(s, d) > 1) return true;
    for (HloSharding::SubgroupType t : s.last_tile_dims)
      if (t == HloSharding::SubgroupType::kManual) return true;
    return false;
  }
  return s.kind != HloSharding::Kind::kReplicated;
}

// A module for several partitions that is not partitioned yet has global shapes and shardings
// (as JAX hands it to XLA): only the SPMD partitioner of a pipeline makes the per-device program
// its shapes mean, as in XLA. Compiled as it is, the global shapes would be taken for each
// device's (issue 17, R1: `run --no-passes` refused its own inputs, and `compile --no-passes`
// made an executable whose results were the devices' arrays joined, twice the module's).
absl::Status CheckNotGlobalShardedModule(const HloModule& module) {
  const int64_t partitions = module.config().num_partitions;
  if (partitions <= 1 || spmd::IsPartitioned(module)) return absl::OkStatus();
  std::vector<const HloComputation*> order;
  if (module.entry_computation() != nullptr) order.push_back(module.entry_computation());
  for (const auto& comp : module.computations())
    if (comp.get() != module.entry_computation()) order.push_back(comp.get());
  for (const HloComputation* comp : order) {
    for (const auto& inst : comp->instructions()) {
      const std::optional<HloSharding>& s = inst->attrs().sharding;
      if (!s || !DividesData(*s)) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "compiling without passes: ", inst->LocationPrefix(), "computation ", comp->name(), ", instruction ",
          inst->name(), " (", std::string(HloOpcodeString(inst->opcode())), "): the module is for num_partitions=", partitions,
          " and not partitioned: its shapes are global and its shardings (here ", ShardingToString(*s),
          ") say how devices divide them, which only the SPMD partitioner turns into a per-device program; "
          "compile or run it with passes (without --no-passes), or give the partitioned module (hloc opt's "
          "output, or XLA's optimized one)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<BufferAssignment>> RunHloStagesAndAssignBuffers(
    HloModule& module, const std::optional<Pipeline>& pipeline, const std::optional<Profile>& profile,
    const std::string& dump_to, std::ostream* log, int64_t alignment, StageTimer& timer,
    CompileRecorder* recorder) {
  if (!dump_to.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump_to, ec);
    if (ec) return absl::InternalError(absl::StrCat("cannot create dump folder '", dump_to, "': ", ec.message()));
  }
  // 1. HLO passes. Without a pipeline, the passes the backend needs for correctness still run:
  // call-inliner (XLA's backends never see a kCall: its CallInliner runs in every pipeline; a
  // kCall thunk whose result outlives the next call of a computation is not handled:
  // public2's eqx_mlp_lion calls one relu from two places), flatten-call-graph (a computation
  // called from two places, as a while body, would share one set of buffers) and copy-insertion
  // (in-place ops must not clobber parameters, constants or live values).
  std::optional<Pipeline> required;
  if (!pipeline) {
    if (absl::Status s = CheckNotGlobalShardedModule(module); !s.ok()) return s;
    // Compiled as it is, the module's layouts are the buffers' layouts: a value handed through
    // (get-tuple-element, tuple, call, while) must keep its layout, or a kernel reads a buffer in
    // another layout than it was written in (no layout assignment inserts the copy).
    VerifierOptions verify;
    verify.layout_sensitive = true;
    verify.entry_layout_sensitive = false;  // the runtime converts to and from the entry layout
    verify.allow_mixed_precision = true;
    if (absl::Status s = VerifyModule(module, verify); !s.ok())
      return WithStage(s, "layout check (compiling without passes)");
    // An in-place op (dynamic-update-slice, scatter, an aliased fusion or custom call) writes its
    // result into its operand's buffer: the two must share a layout, or the untouched elements
    // come out transposed (differential fuzzer, issue 17: a dynamic-update-slice or scatter of an
    // f32[2,3]{0,1} parameter with an f32[2,3]{1,0} result). Layout assignment makes them agree in
    // a pipeline; here the operand goes through a copy to the result's layout, as it would insert.
    NameUniquer names = InstructionNameUniquer(module);
    for (const auto& comp : module.computations()) {
      if (comp->IsFusionComputation()) continue;
      std::vector<HloInstruction*> insts;
      for (const auto& inst : comp->instructions()) insts.push_back(inst.get());
      for (HloInstruction* inst : insts) {
        for (const auto& [in, out_index] : GetInPlaceInputOutputPairs(inst)) {
          if (in.first >= inst->operand_count()) continue;
          absl::StatusOr<const Shape*> a = GetSubshape(inst->operand(in.first)->shape(), in.second);
          absl::StatusOr<const Shape*> b = GetSubshape(inst->shape(), out_index);
          if (!a.ok() || !b.ok() || !(*a)->IsArray() || !(*b)->IsArray()) continue;
          if (!(*a)->has_layout() || !(*b)->has_layout()) continue;
          if ((*a)->layout().minor_to_major == (*b)->layout().minor_to_major) continue;
          if (!in.second.empty())
            return absl::InvalidArgumentError(absl::StrCat(
                "layout check (compiling without passes): ", inst->LocationPrefix(), "computation ", comp->name(),
                ", instruction ", inst->name(), ": writes in place into operand ", in.first, " (",
                (*a)->ToString(true), "), whose layout differs from the result's (", (*b)->ToString(true),
                "); compile with passes (layout assignment makes them agree)"));
          Shape shape = **a;
          shape.set_layout((*b)->layout());
          auto copy = std::make_unique<HloInstruction>(HloOpcode::kCopy, shape, "copy");
          copy->AppendOperand(inst->operand(in.first));
          HloInstruction* c = AddInstructionWithUniqueName(*comp, std::move(copy), names, inst);
          inst->ReplaceOperandWith(in.first, c);
        }
      }
    }
  }
  if (!pipeline && PassRegistry::Global().Find("copy-insertion") != nullptr &&
      PassRegistry::Global().Find("flatten-call-graph") != nullptr &&
      PassRegistry::Global().Find("call-inliner") != nullptr) {
    absl::StatusOr<Pipeline> p = PipelineFromPassList({"call-inliner", "flatten-call-graph", "copy-insertion"});
    if (!p.ok()) return p.status();
    required = std::move(*p);
  }
  if (const std::optional<Pipeline>& run = pipeline ? pipeline : required) {
    PassContext context;
    if (profile) context.profile = &profile->hardware;
    context.recorder = recorder;
    PassManagerOptions pm;
    pm.log = log;
    pm.notes = log;
    pm.dump.dump_to = dump_to;
    absl::StatusOr<bool> changed = RunPipeline(*run, module, context, pm);
    if (!changed.ok()) return WithStage(changed.status(), "HLO pipeline");
    timer.Done("hlo passes");
  }
  // 2. A schedule, unless the pipeline made one.
  if (!module.is_scheduled()) {
    absl::StatusOr<std::vector<std::pair<std::string, MemorySchedulerResult>>> sched = ScheduleModule(module);
    if (!sched.ok()) return WithStage(sched.status(), "scheduling");
    timer.Done("scheduling");
  }
  // 3. Buffers.
  BufferAssignmentOptions ba_options;
  ba_options.alignment = alignment;
  absl::StatusOr<std::unique_ptr<BufferAssignment>> assignment = AssignBuffers(module, ba_options);
  if (!assignment.ok()) return WithStage(assignment.status(), "buffer assignment");
  timer.Done("buffer assignment", absl::StrFormat("%d allocations, temp %d bytes", (*assignment)->allocations().size(),
                                                  (*assignment)->stats().temp_bytes));
  return assignment;
}

absl::Status WriteCompileDumps(const std::string& dump_to, const HloModule& module, const runtime::Executable& exe,
                               const std::string& thunk_text,
                               const std::vector<std::pair<std::string, const std::string*>>& extra,
                               const CompileRecorder* recorder, const BufferAssignment* assignment) {
  if (dump_to.empty()) return absl::OkStatus();
  auto path = [&](const std::string& suffix, bool txt) {
    std::string name = DumpFileName(0, module.name(), suffix);
    if (!txt && name.size() > 4 && name.substr(name.size() - 4) == ".txt") name = name.substr(0, name.size() - 4);
    return (std::filesystem::path(dump_to) / name).string();
  };
  std::vector<std::pair<std::string, const std::string*>> files = {
      {path("after_optimizations", true), &exe.hlo_text},
      {path("after_optimizations-buffer-assignment", true), &exe.buffer_assignment_text},
      {path("thunk_sequence", true), &thunk_text}};
  for (const auto& [suffix, text] : extra) files.push_back({path(suffix, false), text});
  for (const auto& [p, text] : files)
    if (absl::Status s = WriteFileAtomically(p, *text); !s.ok()) return s;
  if (recorder == nullptr) return absl::OkStatus();
  HtmlReportExtras extras{exe.buffer_assignment_text, thunk_text};
  if (assignment != nullptr) {
    extras.timeline_length = assignment->timeline_length();
    for (const BufferAllocation& a : assignment->allocations()) {
      if (a.is_thread_local()) continue;
      for (const BufferAllocation::Assigned& v : a.assigned()) {
        if (v.live_start < 0 || v.is_phi) continue;
        std::string name = v.instruction->name();
        if (!v.index.empty()) absl::StrAppend(&name, "{", absl::StrJoin(v.index, ","), "}");
        extras.live_ranges.push_back({name, std::string(HloOpcodeString(v.instruction->opcode())), v.size, a.index(),
                                      v.offset, v.live_start, v.live_end});
      }
    }
    std::stable_sort(extras.live_ranges.begin(), extras.live_ranges.end(),
                     [](const auto& x, const auto& y) { return x.start < y.start; });
  }
  return WriteHtmlReport(dump_to, 0, module, *recorder, extras);
}

absl::Status LoadProfileAndPipeline(const std::string& name_or_path, const std::string& kind,
                                    const std::string& compiler, const std::vector<std::string>& config_dirs,
                                    const std::vector<std::string>& pipeline_dirs, std::optional<Profile>& profile,
                                    std::optional<Pipeline>& pipeline, const Profile* preloaded) {
  absl::StatusOr<Profile> loaded = absl::InternalError("no profile");
  if (preloaded != nullptr) {
    loaded = *preloaded;
  } else {
    absl::StatusOr<std::string> path = FindProfileFile(name_or_path, config_dirs);
    if (!path.ok()) return path.status();
    loaded = LoadProfileFile(*path);
    if (!loaded.ok()) return loaded.status();
  }
  if (loaded->hardware.kind != kind)
    return absl::InvalidArgumentError(absl::StrCat("profile '", loaded->source, "' is for ", loaded->hardware.kind,
                                                   " hardware; the ", compiler, " compiler needs a ", kind,
                                                   " profile"));
  std::vector<std::string> dirs = pipeline_dirs;
  dirs.insert(dirs.begin(),
              (std::filesystem::path(loaded->source).parent_path() / ".." / "pipelines").lexically_normal().string());
  absl::StatusOr<std::string> pipeline_path = FindProfilePipelineFile(*loaded, dirs);
  if (!pipeline_path.ok()) return pipeline_path.status();
  absl::StatusOr<Pipeline> p = LoadPipelineFile(*pipeline_path);
  if (!p.ok()) return p.status();
  if (absl::Status s = ApplyPatches(*loaded, *p); !s.ok()) return s;
  pipeline = std::move(*p);
  profile = std::move(*loaded);
  return absl::OkStatus();
}

}  // namespace hloc::codegen
