// Registration of the collective optimizations (XLA's "collective-optimizations" pipeline)
// under XLA's names.
#include "passes/collectives/reduce_scatter_creator.h"
#include "passes/passes.h"

namespace hloc {
namespace {

class ReduceScatterCreatorPass : public HloPass {
 public:
  absl::StatusOr<bool> Run(HloModule& module, PassContext&) override { return CreateReduceScatters(module); }
};

}  // namespace

void RegisterCollectivePasses(PassRegistry& registry) {
  registry.Register(PassInfo{"reduce-scatter-creator",
                             "all-reduce + dynamic-slice of each device's own chunk -> reduce-scatter",
                             {},
                             [](const PassOptions&) -> std::unique_ptr<HloPass> {
                               return std::make_unique<ReduceScatterCreatorPass>();
                             }});
}

}  // namespace hloc
