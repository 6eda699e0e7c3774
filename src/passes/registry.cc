#include "passes/passes.h"
#include "schedule/schedule_passes.h"

namespace hloc {

void RegisterAllPasses(PassRegistry& registry) {
  RegisterSpmdPasses(registry);
  RegisterCollectivePasses(registry);
  RegisterSimplifyPasses(registry);
  RegisterControlFlowAndMoverPasses(registry);
  RegisterExpanderPasses(registry);
  RegisterRewritePasses(registry);
  RegisterFusionPasses(registry);
  RegisterSchedulePasses(registry);
  RegisterLayoutPasses(registry);
  RegisterLibraryPasses(registry);
  RegisterConvPaddingLegalizationPass(registry);
  RegisterCudnnLayoutLegalizationPass(registry);
  RegisterCopyInsertionPass(registry);
  RegisterSortMergerPass(registry);
  RegisterStableSortExpanderPass(registry);
  RegisterTopkDecomposerPass(registry);
  RegisterElementwiseWhileToMapPass(registry);
  RegisterGpuSortRewriterPass(registry);
}

}  // namespace hloc
