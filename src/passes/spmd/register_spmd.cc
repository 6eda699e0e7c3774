// Registration of the sharding stage's passes under XLA's names: sharding-propagation,
// spmd-partitioning and (for one partition) sharding-remover. The partitioner's strategy
// choices are SpmdStrategy records (rules/spmd/SpmdStrategies.td) a pipeline switches by name
// (`rules: {disable: [...]}`).
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/rule_tables.h"

#include "ir/computation.h"
#include "passes/passes.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"

namespace hloc {
namespace {

using O = HloOpcode;
using spmd::RuleOptions;

// The strategies the partitioner implements, by their record names in
// rules/spmd/SpmdStrategies.td. Run checks this set against the generated table.
const std::vector<const char*>& ImplementedStrategies() {
  static const std::vector<const char*> kNames = {
      "ReshardByCollectivePermute", "ReshardByAllToAll",         "DotIterationFromOutput",
      "DotIterationFromOperands",   "DotIterationCombiningOperands", "ConvolutionHaloExchange",
      "GatherScatterIndexedSplit",  "SortMoveSplit",
  };
  return kNames;
}

// The records of the build (rules/spmd/*.td), in file order.
std::vector<std::string> StrategyRecords() {
  std::vector<std::string> names;
  for (const SpmdStrategyInfo* s : GeneratedTables::Global().spmd_strategies) names.push_back(s->name);
  return names;
}

// Records and implementation must name the same strategies: a renamed or removed record would
// otherwise turn a strategy silently on or off.
absl::Status CheckStrategyRecords() {
  std::vector<std::string> records = StrategyRecords();
  for (const char* name : ImplementedStrategies())
    if (std::find(records.begin(), records.end(), name) == records.end())
      return absl::InternalError(absl::StrCat("the partitioner's strategy ", name,
                                              " has no SpmdStrategy record (rules/spmd/*.td)"));
  for (const SpmdStrategyInfo* s : GeneratedTables::Global().spmd_strategies) {
    bool known = false;
    for (const char* name : ImplementedStrategies()) known = known || s->name == std::string(name);
    if (!known)
      return absl::InternalError(absl::StrCat(s->file, ":", s->line, ": SpmdStrategy ", s->name,
                                              " names no strategy the partitioner implements"));
  }
  return absl::OkStatus();
}

RuleOptions RuleOptionsFrom(const RecordSwitch& on) {
  RuleOptions r;
  r.sort_move_split = on.On("SortMoveSplit");
  return r;
}

class ShardingPropagationPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override {
    if (spmd::IsPartitioned(module)) return false;
    if (absl::Status st = CheckStrategyRecords(); !st.ok()) return st;
    RecordSwitch on(context.enabled_rules, context.disabled_rules, ImplementedStrategies());
    return spmd::PropagateShardings(module, RuleOptionsFrom(on));
  }
};

class SpmdPartitioningPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override {
    if (module.config().num_partitions <= 1 || spmd::IsPartitioned(module)) return false;
    if (absl::Status st = CheckStrategyRecords(); !st.ok()) return st;
    RecordSwitch on(context.enabled_rules, context.disabled_rules, ImplementedStrategies());
    // Propagation first when the pipeline did not run it: the partitioner reads its result.
    auto prop = spmd::PropagateShardings(module, RuleOptionsFrom(on));
    if (!prop.ok()) return prop.status();
    spmd::SpmdOptions options;
    options.reshard.collective_permute = on.On("ReshardByCollectivePermute");
    options.reshard.all_to_all = on.On("ReshardByAllToAll");
    options.dot_from_output = on.On("DotIterationFromOutput");
    options.dot_from_operands = on.On("DotIterationFromOperands");
    options.dot_combine_operands = on.On("DotIterationCombiningOperands");
    options.conv_halo_exchange = on.On("ConvolutionHaloExchange");
    options.gather_scatter_indexed_split = on.On("GatherScatterIndexedSplit");
    return spmd::PartitionModule(module, options);
  }
};

class ShardingRemoverPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override {
    if (module.config().num_partitions > 1) return false;
    bool changed = false;
    for (HloComputation* c : module.MakeComputationPostOrder()) {
      for (HloInstruction* inst : c->MakeInstructionPostOrder()) {
        if (inst->opcode() != O::kCustomCall || inst->operand_count() != 1) continue;
        const std::string& t = inst->attrs().custom_call_target;
        bool removable = t == "Sharding" || t == "xla.sdy.GlobalToLocalShape" || t == "xla.sdy.LocalToGlobalShape" ||
                         t == "SPMDFullToShardShape" || t == "SPMDShardToFullShape";
        if (!removable || !inst->shape().EqualIgnoringLayout(inst->operand(0)->shape())) continue;
        HloInstruction* op = inst->operand(0);
        inst->ReplaceAllUsesWith(op);
        if (c->root_instruction() == inst) c->set_root_instruction(op);
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

void RegisterSpmdPasses(PassRegistry& registry) {
  registry.Register(PassInfo{"sharding-propagation",
                             "give every instruction a sharding from the annotated ones (forward, then backward)",
                             {},
                             [](const PassOptions&) -> std::unique_ptr<HloPass> {
                               return std::make_unique<ShardingPropagationPass>();
                             },
                             StrategyRecords});
  registry.Register(PassInfo{
      "spmd-partitioning",
      "rewrite a sharded module into the per-device program (num_partitions > 1), with collectives",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SpmdPartitioningPass>(); },
      StrategyRecords});
  registry.Register(PassInfo{"sharding-remover",
                             "one partition: Sharding custom calls and shard_map boundaries become their operand",
                             {},
                             [](const PassOptions&) -> std::unique_ptr<HloPass> {
                               return std::make_unique<ShardingRemoverPass>();
                             }});
}

}  // namespace hloc
