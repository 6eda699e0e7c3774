// C++ for tests/unit/rules/TestRules.td (its CppHeader): a constraint and a NativeRule function.
#pragma once
#include "engine/rewrite.h"

namespace hloc {

bool TestIsNegativeConstant(RewriteContext& ctx, const HloInstruction* c);
bool TestNativeTanhOfZero(RewriteContext& ctx, HloInstruction* root, HloInstruction* x);

}  // namespace hloc
