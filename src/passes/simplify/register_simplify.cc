// Registration of the core simplification passes under XLA's names (see each pass's header).
#include "passes/passes.h"
#include "passes/simplify/call_inliner.h"
#include "passes/simplify/constant_folding.h"
#include "passes/simplify/conv_operand_swapper.h"
#include "passes/simplify/dot_merger.h"
#include "passes/simplify/flatten_call_graph.h"
#include "passes/simplify/hlo_cse.h"
#include "passes/simplify/hlo_dce.h"
#include "passes/simplify/tuple_simplifier.h"
#include "passes/simplify/zero_sized_hlo_elimination.h"

namespace hloc {

void RegisterSimplifyPasses(PassRegistry& registry) {
  RegisterDcePass(registry);
  RegisterCsePass(registry);
  RegisterConstantFoldingPass(registry);
  RegisterTupleSimplifierPass(registry);
  RegisterCallInlinerPass(registry);
  RegisterFlattenCallGraphPass(registry);
  RegisterZeroSizedHloEliminationPass(registry);
  RegisterConvOperandSwapperPass(registry);
  RegisterDotMergerPass(registry);
}

}  // namespace hloc
