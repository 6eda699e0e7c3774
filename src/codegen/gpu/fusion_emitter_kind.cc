#include "codegen/gpu/fusion_emitter_kind.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "codegen/gpu/gpu_emitter_conditions.h"
#include "codegen/gpu/gpu_reduction_row_plan.h"
#include "codegen/gpu/gpu_reduction_split.h"
#include "codegen/thunk_emitter.h"
#include "engine/profile.h"
#include "ir/fusion_backend_config.h"
#include "passes/fusion/fusion_emitter_assignment.h"

namespace hloc::codegen::gpu {
namespace {

struct KindNames {
  FusionEmitterKind kind;
  std::string_view recorded, thunk;
};
constexpr KindNames kKindNames[] = {
    {FusionEmitterKind::kLoop, "__hloc_loop", "loop"},
    {FusionEmitterKind::kRowReduction, "__hloc_row_reduction", "row-reduction"},
    {FusionEmitterKind::kSplitReduction, "__hloc_split_reduction", "split-reduction"},
    {FusionEmitterKind::kTranspose, "__hloc_transpose", "transpose"},
    {FusionEmitterKind::kTiledTranspose, "__hloc_tiled_transpose", "tiled-transpose"},
    {FusionEmitterKind::kDynamicUpdateSlice, "__hloc_dynamic_update_slice", "dynamic-update-slice"},
    {FusionEmitterKind::kScatter, "__hloc_scatter", "scatter"},
    {FusionEmitterKind::kCumulativeReduceWindow, "__hloc_cumulative_reduce_window", "cumulative-reduce-window"},
};

// The array leaves of `shape`, each with its layout (the default one where it has none), as
// KernelArguments (codegen/thunk_emitter.cc) gives the kernel's arguments.
void AppendLeaves(const Shape& shape, std::vector<Shape>& out) {
  for (const auto& [index, leaf] : ArrayLeaves(shape)) {
    Shape s = *leaf;
    if (!s.has_layout()) s.SetDefaultLayout();
    out.push_back(std::move(s));
  }
}

// The root (or the unfused instruction) alone: the emitters EmitRoot tries by opcode.
FusionEmitterKind RootKind(const HloInstruction& root, const std::vector<Shape>& outputs) {
  switch (root.opcode()) {
    case HloOpcode::kDynamicUpdateSlice: return FusionEmitterKind::kDynamicUpdateSlice;
    case HloOpcode::kScatter: return FusionEmitterKind::kScatter;
    case HloOpcode::kReduceWindow:
      return CumulativeReduceWindowApplies(root, outputs) ? FusionEmitterKind::kCumulativeReduceWindow
                                                          : FusionEmitterKind::kLoop;
    case HloOpcode::kTranspose:
      return TiledTransposeApplies(root, outputs) ? FusionEmitterKind::kTiledTranspose : FusionEmitterKind::kLoop;
    default: return FusionEmitterKind::kLoop;
  }
}

FusionEmitterChoice Planned(FusionEmitterKind kind, const runtime::LaunchDimensions& l) {
  return FusionEmitterChoice{kind, {l.block_x, l.block_y, l.block_z}, {l.grid_x, l.grid_y, l.grid_z}};
}

// The kind's launch plan where it is known before IR; the loop kernel's, the transposes', the
// cumulative reduce-window's and the multi-output dynamic-update-slice's by the functions their
// emitters call (gpu_emitter_conditions.h). Not a single dynamic-update-slice's or a scatter's:
// in place or not (buffer assignment, after the pass) changes their launch.
FusionEmitterChoice WithLaunch(FusionEmitterKind kind, const HloInstruction& root, const HloComputation& fused,
                               const std::vector<Shape>& outputs, const GpuDeviceInfo& dev) {
  switch (kind) {
    case FusionEmitterKind::kLoop:
      return Planned(kind, PlanLoopKernel(outputs, /*output_offsets=*/{}, dev).launch);
    case FusionEmitterKind::kTranspose:
      if (std::optional<runtime::LaunchDimensions> l = TransposeFusionLaunch(fused, outputs, dev))
        return Planned(kind, *l);
      break;
    case FusionEmitterKind::kTiledTranspose:
      if (std::optional<runtime::LaunchDimensions> l = TiledTransposeLaunch(root, outputs, dev))
        return Planned(kind, *l);
      break;
    case FusionEmitterKind::kCumulativeReduceWindow:
      if (std::optional<runtime::LaunchDimensions> l = CumulativeReduceWindowLaunch(root, outputs, dev))
        return Planned(kind, *l);
      break;
    case FusionEmitterKind::kDynamicUpdateSlice:
      if (root.opcode() != HloOpcode::kTuple) break;  // one output: in place or not decides
      if (std::optional<runtime::LaunchDimensions> l = MultiDynamicUpdateSliceLaunch(
              std::vector<const HloInstruction*>(root.operands().begin(), root.operands().end()), outputs, dev))
        return Planned(kind, *l);
      break;
    default:
      break;
  }
  return FusionEmitterChoice{kind};
}

FusionEmitterChoice Split(SplitPlan plan, const HloInstruction& fusion, const HloComputation& fused,
                          const std::vector<Shape>& outputs, const GpuDeviceInfo& dev) {
  std::vector<Shape> operands;
  for (const HloInstruction* op : fusion.operands()) AppendLeaves(op->shape(), operands);
  const SplitLaunchPlan lp = ComputeSplitLaunchPlan(plan, fused, operands, outputs.size(), dev);
  return FusionEmitterChoice{FusionEmitterKind::kSplitReduction, {lp.block, 1, 1}, {lp.grid, 1, 1}};
}

FusionEmitterRecord AnalyzeForPass(const HloInstruction& fusion, const HardwareProfile* profile) {
  const FusionEmitterChoice c = ChooseFusionEmitter(fusion, GpuDeviceInfoFromProfile(profile));
  FusionEmitterRecord r;
  r.kind = std::string(FusionEmitterKindName(c.kind));
  r.block = c.block;
  r.grid = c.grid;
  return r;
}

// Installed when codegen is linked in (this object is: GpuKernelEmitter calls the analysis).
const bool kInstalled = [] {
  SetFusionEmitterAnalysis(&AnalyzeForPass);
  return true;
}();

}  // namespace

std::string_view FusionEmitterKindName(FusionEmitterKind kind) {
  for (const KindNames& k : kKindNames)
    if (k.kind == kind) return k.recorded;
  return "__hloc_loop";
}

std::optional<FusionEmitterKind> FusionEmitterKindFromName(std::string_view name) {
  for (const KindNames& k : kKindNames)
    if (k.recorded == name) return k.kind;
  return std::nullopt;
}

std::string_view FusionEmitterThunkName(FusionEmitterKind kind) {
  for (const KindNames& k : kKindNames)
    if (k.kind == kind) return k.thunk;
  return "loop";
}

FusionEmitterChoice ChooseFusionEmitter(const HloInstruction& hlo, const GpuDeviceInfo& dev) {
  (void)kInstalled;
  std::vector<Shape> outputs;
  AppendLeaves(hlo.shape(), outputs);
  const HloComputation* fused = hlo.opcode() == HloOpcode::kFusion ? hlo.fused_instructions_computation() : nullptr;
  if (fused == nullptr) return FusionEmitterChoice{RootKind(hlo, outputs)};
  // Reductions: rows, else (or where a few long rows defer to it) the split emitter.
  if (std::optional<RowPlan> rows = AnalyzeRows(*fused); !rows) {
    if (std::optional<SplitPlan> split = SplitReductionFor(*fused, outputs.size()))
      return Split(std::move(*split), hlo, *fused, outputs, dev);
  } else if (rows->outputs.size() == outputs.size() && rows->rows > 0 && rows->row_len > 0) {
    const RowLaunchPlan launch = ComputeRowLaunchPlan(*rows, *fused, dev);
    if (!RowDefersToSplit(*rows, launch, *fused, dev))
      return FusionEmitterChoice{FusionEmitterKind::kRowReduction, {launch.block, 1, 1}, {launch.grid, 1, 1}};
    if (std::optional<SplitPlan> split = SplitReductionFor(*fused, outputs.size()))
      return Split(std::move(*split), hlo, *fused, outputs, dev);
  }
  if (std::optional<runtime::LaunchDimensions> l = TransposeFusionLaunch(*fused, outputs, dev))
    return Planned(FusionEmitterKind::kTranspose, *l);
  const HloInstruction* root = fused->root_instruction();
  if (root->opcode() == HloOpcode::kTuple) {
    const bool all_dus =
        root->operand_count() > 0 &&
        std::all_of(root->operands().begin(), root->operands().end(),
                    [](const HloInstruction* o) { return o->opcode() == HloOpcode::kDynamicUpdateSlice; });
    return WithLaunch(all_dus ? FusionEmitterKind::kDynamicUpdateSlice : FusionEmitterKind::kLoop, *root, *fused,
                      outputs, dev);
  }
  return WithLaunch(RootKind(*root, outputs), *root, *fused, outputs, dev);
}

absl::StatusOr<std::optional<FusionEmitterKind>> RecordedFusionEmitterKind(const HloInstruction& hlo) {
  std::optional<std::string> name = FusionBackendConfigKind(hlo.attrs().backend_config);
  if (!name || name->rfind(kHlocFusionKindPrefix, 0) != 0) return std::optional<FusionEmitterKind>();
  std::optional<FusionEmitterKind> kind = FusionEmitterKindFromName(*name);
  if (!kind)
    return absl::InvalidArgumentError(absl::StrCat("%", hlo.name(), ": backend_config names the emitter kind \"", *name,
                                                   "\", which this hloc does not have"));
  return kind;
}

GpuDeviceInfo GpuDeviceInfoFromProfile(const HardwareProfile* profile) {
  GpuDeviceInfo d;
  if (profile == nullptr || profile->kind != "gpu") return d;
  const HardwareProfile& h = *profile;
  if (h.compute_capability_major > 0) {
    d.compute_capability_major = h.compute_capability_major;
    d.compute_capability_minor = h.compute_capability_minor;
  }
  if (h.sm_count > 0) d.sm_count = h.sm_count;
  // Statically declared shared memory is limited to 48 KiB whatever the opt-in maximum is.
  if (h.shared_memory_per_block > 0) d.shared_memory_per_block = std::min<int64_t>(48 * 1024, h.shared_memory_per_block);
  d.threads_per_block = h.tuning.Get(TuningKnob::kLoopThreadsPerBlock);
  d.waves = h.tuning.Get(TuningKnob::kGridStrideWaves);
  d.split_reduction_light_cost = h.tuning.Get(TuningKnob::kSplitReductionLightCost);
  d.topk_split_warps_per_sm = h.tuning.Get(TuningKnob::kTopkSplitWarpsPerSm);
  d.topk_split_min_part_elements = h.tuning.Get(TuningKnob::kTopkSplitMinPartElements);
  d.row_long_row_elements = h.tuning.Get(TuningKnob::kRowReductionLongRowElements);
  d.row_warp_row_max_elements = h.tuning.Get(TuningKnob::kRowReductionWarpRowMaxElements);
  d.row_warp_rows_per_block = h.tuning.Get(TuningKnob::kRowReductionWarpRowsPerBlock);
  d.row_vectors_per_thread = h.tuning.Get(TuningKnob::kRowReductionVectorsPerThread);
  d.row_fold_unroll = h.tuning.Get(TuningKnob::kRowReductionFoldUnroll);
  return d;
}

}  // namespace hloc::codegen::gpu
