// Registration of the collective optimizations (XLA's "collective-optimizations" pipeline, its
// post-fusion combiners and "async-collective-conversion") under XLA's names.
#include <functional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/profile.h"
#include "passes/collectives/async_collective_creator.h"
#include "passes/collectives/collective_combiner.h"
#include "passes/collectives/collective_simplifiers.h"
#include "passes/collectives/reduce_scatter_creator.h"
#include "passes/passes.h"

namespace hloc {
namespace {

using ModulePassFn = std::function<absl::StatusOr<bool>(HloModule&)>;

int64_t IntOption(const PassOptions& o, const std::string& name, int64_t def) {
  return o.Has(name) ? o.GetInt(name) : def;
}

class FunctionPass : public HloPass {
 public:
  explicit FunctionPass(ModulePassFn fn) : fn_(std::move(fn)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override { return fn_(module); }

 private:
  ModulePassFn fn_;
};

void RegisterFunction(PassRegistry& registry, const char* name, const char* what, ModulePassFn fn) {
  registry.Register(PassInfo{name, what, {}, [fn](const PassOptions&) -> std::unique_ptr<HloPass> {
                               return std::make_unique<FunctionPass>(fn);
                             }});
}

// A combiner: its thresholds are the options when set (>= 0), else the profile's tuning numbers.
class CombinerPass : public HloPass {
 public:
  CombinerPass(HloOpcode op, TuningKnob bytes_knob, int64_t bytes, int64_t count)
      : op_(op), bytes_knob_(bytes_knob), bytes_(bytes), count_(count) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override {
    Tuning defaults;
    const Tuning& tuning = context.profile != nullptr ? context.profile->tuning : defaults;
    CombineLimits limits;
    limits.threshold_bytes = bytes_ >= 0 ? bytes_ : tuning.Get(bytes_knob_);
    limits.threshold_count = count_ >= 0 ? count_ : tuning.Get(TuningKnob::kCollectiveCombineThresholdCount);
    return CombineCollectives(module, op_, limits);
  }

 private:
  HloOpcode op_;
  TuningKnob bytes_knob_;
  int64_t bytes_, count_;
};

void RegisterCombiner(PassRegistry& registry, const char* name, HloOpcode op, TuningKnob knob) {
  const std::string kind(HloOpcodeString(op));
  const std::string what = absl::StrCat("independent ", kind, "s over the same groups -> one variadic ", kind);
  const std::string knob_name(DeclOf(knob).name);
  registry.Register(PassInfo{
      name,
      what,
      {{"combine_threshold_in_bytes", OptionType::kInt, OptionValue(int64_t{-1}),
        absl::StrCat("largest combined result in bytes; -1: the profile's tuning ", knob_name)},
       {"combine_threshold_count", OptionType::kInt, OptionValue(int64_t{-1}),
        "most collectives combined into one; -1: the profile's tuning collective_combine_threshold_count"}},
      [op, knob](const PassOptions& o) -> std::unique_ptr<HloPass> {
        return std::make_unique<CombinerPass>(op, knob, IntOption(o, "combine_threshold_in_bytes", -1),
                                              IntOption(o, "combine_threshold_count", -1));
      }});
}

class AsyncCreatorPass : public HloPass {
 public:
  explicit AsyncCreatorPass(std::set<std::string> kinds) : kinds_(std::move(kinds)) {}
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override {
    for (const std::string& k : kinds_) {
      if (AsyncCollectiveKinds().count(k) == 0)
        return absl::InvalidArgumentError(absl::StrCat("async-collective-creator: unknown collective kind '", k,
                                                       "' in convert (known: ",
                                                       absl::StrJoin(AsyncCollectiveKinds(), ", "), ")"));
    }
    return CreateAsyncCollectives(module, kinds_);
  }

 private:
  std::set<std::string> kinds_;
};

}  // namespace

void RegisterCollectivePasses(PassRegistry& registry) {
  RegisterFunction(registry, "reduce-scatter-creator",
                   "all-reduce + dynamic-slice of each device's own chunk -> reduce-scatter", CreateReduceScatters);
  RegisterFunction(registry, "all-reduce-simp",
                   "all-reduce over one-device groups -> its operand; of a value replicated over its groups -> "
                   "computed locally",
                   SimplifyAllReduces);
  RegisterFunction(registry, "all-gather-simp", "all-gather over one-device groups -> its operand",
                   SimplifyAllGathers);
  RegisterFunction(registry, "all-gather-dynamic-slice-simplifier",
                   "dynamic-slice of each device's own chunk of an all-gather -> the all-gather's operand",
                   SimplifyAllGatherDynamicSlices);
  RegisterCombiner(registry, "all-reduce-combiner", HloOpcode::kAllReduce, TuningKnob::kAllReduceCombineThresholdBytes);
  RegisterCombiner(registry, "all-gather-combiner", HloOpcode::kAllGather, TuningKnob::kAllGatherCombineThresholdBytes);
  RegisterCombiner(registry, "reduce-scatter-combiner", HloOpcode::kReduceScatter,
                   TuningKnob::kReduceScatterCombineThresholdBytes);
  const std::set<std::string>& all = AsyncCollectiveKinds();
  registry.Register(PassInfo{
      "async-collective-creator",
      "collectives -> start/done pairs (all-reduce, all-gather, collective-permute) or async-start/done around "
      "them (reduce-scatter, all-to-all, collective-broadcast)",
      {{"convert", OptionType::kStringList, OptionValue(std::vector<std::string>(all.begin(), all.end())),
        absl::StrCat("the collective kinds to convert: ", absl::StrJoin(all, ", "))}},
      [](const PassOptions& o) -> std::unique_ptr<HloPass> {
        std::set<std::string> kinds = AsyncCollectiveKinds();
        if (o.Has("convert")) {
          const std::vector<std::string>& list = o.GetStringList("convert");
          kinds = std::set<std::string>(list.begin(), list.end());
        }
        return std::make_unique<AsyncCreatorPass>(std::move(kinds));
      }});
}

}  // namespace hloc
