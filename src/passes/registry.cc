#include "passes/passes.h"

namespace hloc {

void RegisterAllPasses(PassRegistry& registry) {
  RegisterSimplifyPasses(registry);
  RegisterControlFlowAndMoverPasses(registry);
  RegisterExpanderPasses(registry);
  RegisterRewritePasses(registry);
}

}  // namespace hloc
