// Registration of the fusion stage's passes under XLA's names.
#include "passes/fusion/fusion_emitter_assignment.h"
#include "passes/fusion/fusion_legality.h"
#include "passes/fusion/horizontal_in_place_fusion.h"
#include "passes/fusion/multi_output_fusion.h"
#include "passes/fusion/priority_fusion.h"
#include "passes/passes.h"

namespace hloc {

void RegisterFusionPasses(PassRegistry& registry) {
  registry.Register(PassInfo{
      PriorityFusion::kName,
      "fuse producers into all their consumers, best first by the GPU cost model; legality from rules/fusion/*.td",
      {{"target", OptionType::kString, OptionValue(std::string("")),
        "\"cpu\" or \"gpu\": whose fusion rules apply (the IsCpu/IsGpu requirements); empty: the profile's"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<PriorityFusion>(o.Has("target") ? o.GetString("target") : "");
      },
      fusion::FusionVetoNames});
  registry.Register(PassInfo{
      MultiOutputFusion::kName,
      "producer-consumer and sibling multi-output fusion (shared operands read once, tuple roots)",
      {{"producer_consumer", OptionType::kBool, OptionValue(true), "fuse producers with other users into a consumer"},
       {"siblings", OptionType::kBool, OptionValue(true), "fuse consumers of a common operand"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<MultiOutputFusion>(o.Has("producer_consumer") ? o.GetBool("producer_consumer") : true,
                                                   o.Has("siblings") ? o.GetBool("siblings") : true);
      },
      fusion::FusionVetoNames});
  registry.Register(PassInfo{
      HorizontalInPlaceFusion::kName,
      "independent in-place dynamic-update-slice fusions with updates of one shape as one multi-output kernel",
      {{"max_group", OptionType::kInt, OptionValue(int64_t{16}), "the most updates one kernel writes (< 2: off)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<HorizontalInPlaceFusion>(o.Has("max_group") ? o.GetInt("max_group") : 16);
      }});
  registry.Register(PassInfo{
      RenameFusions::kName,
      "name fusions after their kind and heroes (loop_add_fusion, input_reduce_fusion, fused_reduce)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<RenameFusions>(); }});
  registry.Register(PassInfo{
      FusionWrapper::kName,
      "wrap every unfused kernel instruction in a fusion of its own (wrapped_<op>)",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<FusionWrapper>(); }});
  registry.Register(PassInfo{
      FusionEmitterAssignment::kName,
      "record the emitter each fusion gets, and its launch plan where known, in backend_config "
      "(fusion_backend_config.kind, \"__hloc_row_reduction\", ...); codegen reads it",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<FusionEmitterAssignment>(); }});
}

}  // namespace hloc
