// Registration of this area's passes (filled in as the passes land).
#include "passes/passes.h"

namespace hloc {

void RegisterExpanderPasses(PassRegistry& registry) { (void)registry; }

}  // namespace hloc
