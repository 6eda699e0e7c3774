// Registration of the sharding stage's passes under XLA's names: sharding-propagation,
// spmd-partitioning and (for one partition) sharding-remover. The partitioner's strategy
// choices are records a pipeline switches by name (`rules: {disable: [...]}`).
#include <vector>

#include "ir/computation.h"
#include "passes/passes.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"

namespace hloc {
namespace {

using O = HloOpcode;

// Strategy records of spmd-partitioning, each on unless a pipeline disables it.
const std::vector<const char*>& SpmdRecords() {
  static const std::vector<const char*> kRecords = {
      "ReshardByCollectivePermute",  // same tiling, tiles on other devices
      "ReshardByAllToAll",           // a split moves from one dim to another
      "DotIterationFromOutput",      // a dot's iteration space split as its result
      "DotIterationFromOperands",    // ... as one operand
      "DotIterationCombiningOperands",  // ... with each operand's splits
      "ConvolutionHaloExchange",     // spatial splits exchange edge rows, not whole inputs
  };
  return kRecords;
}

class ShardingPropagationPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override {
    if (spmd::IsPartitioned(module)) return false;
    return spmd::PropagateShardings(module);
  }
};

class SpmdPartitioningPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext& context) override {
    if (module.config().num_partitions <= 1 || spmd::IsPartitioned(module)) return false;
    // Propagation first when the pipeline did not run it: the partitioner reads its result.
    auto prop = spmd::PropagateShardings(module);
    if (!prop.ok()) return prop.status();
    std::vector<const char*> family = SpmdRecords();
    RecordSwitch on(context.enabled_rules, context.disabled_rules, family);
    spmd::SpmdOptions options;
    options.reshard.collective_permute = on.On("ReshardByCollectivePermute");
    options.reshard.all_to_all = on.On("ReshardByAllToAll");
    options.dot_from_output = on.On("DotIterationFromOutput");
    options.dot_from_operands = on.On("DotIterationFromOperands");
    options.dot_combine_operands = on.On("DotIterationCombiningOperands");
    options.conv_halo_exchange = on.On("ConvolutionHaloExchange");
    return spmd::PartitionModule(module, options);
  }
};

// One partition: the sharding annotations have nothing to partition; Sharding custom calls
// and shard_map boundaries (whose local and global shapes then agree) become their operand.
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
                             }});
  registry.Register(PassInfo{
      "spmd-partitioning",
      "rewrite a sharded module into the per-device program (num_partitions > 1), with collectives",
      {},
      [](const PassOptions&) -> std::unique_ptr<HloPass> { return std::make_unique<SpmdPartitioningPass>(); },
      [] {
        std::vector<std::string> names;
        for (const char* r : SpmdRecords()) names.push_back(r);
        return names;
      }});
  registry.Register(PassInfo{"sharding-remover",
                             "one partition: Sharding custom calls and shard_map boundaries become their operand",
                             {},
                             [](const PassOptions&) -> std::unique_ptr<HloPass> {
                               return std::make_unique<ShardingRemoverPass>();
                             }});
}

}  // namespace hloc
