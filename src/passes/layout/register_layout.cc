// Registration of the layout stage's passes (src/passes/layout/) under XLA's names.
#include "engine/pass.h"
#include "passes/layout/float_normalization.h"
#include "passes/layout/layout_assignment.h"
#include "passes/layout/layout_constraints.h"
#include "passes/layout/layout_normalization.h"
#include "passes/passes.h"

namespace hloc {

void RegisterLayoutPasses(PassRegistry& registry) {
  registry.Register(PassInfo{
      LayoutAssignment::kName,
      "choose every instruction's layout from the rules/layout/*.td constraints (profile-driven), copies at conflicts",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<LayoutAssignment>(); },
      layout::LayoutConstraintNames});
  registry.Register(PassInfo{
      LayoutNormalization::kName,
      "rewrite instructions to the default layout with transposes and bitcasts",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<LayoutNormalization>(); }});
  registry.Register(PassInfo{
      ReshapeDecomposer::kName,
      "reshapes that are not bitcasts -> copy + reshape (a bitcast) + copy",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<ReshapeDecomposer>(); }});
  registry.Register(PassInfo{
      MoveCopyToUsers::kName,
      "op(copy(a)) -> copy(op(a)) for layout-preserving ops",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<MoveCopyToUsers>(); }});
  registry.Register(PassInfo{
      TransposeFolding::kName,
      "fold transposes into dot and convolution operands by renaming dimension numbers",
      {{"fold_convolutions", OptionType::kBool, OptionValue(true), "also fold transposes into convolution operands"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<TransposeFolding>(o.Has("fold_convolutions") ? o.GetBool("fold_convolutions") : true);
      }});
  registry.Register(PassInfo{
      FloatNormalization::kName,
      "ops the target cannot run in the low-precision type run in f32 between converts",
      {{"low_precision_type", OptionType::kString, OptionValue(std::string("bf16")),
        "the low-precision type: bf16, f16 or an f8 type"},
       {"high_precision_type", OptionType::kString, OptionValue(std::string("f32")), "the type to compute in"},
       {"supported_ops", OptionType::kStringList, OptionValue(std::vector<std::string>{}),
        "opcodes the target runs in the low-precision type besides data movement (empty: from the profile)"}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<FloatNormalization>(
            o.Has("low_precision_type") ? o.GetString("low_precision_type") : "bf16",
            o.Has("high_precision_type") ? o.GetString("high_precision_type") : "f32",
            o.Has("supported_ops") ? o.GetStringList("supported_ops") : std::vector<std::string>{});
      }});
}

}  // namespace hloc
