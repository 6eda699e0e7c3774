// Rule tags (rules/base/Dsl.td): a rule's Tags name Tag records, and the generated table carries
// their YAML names; every Tag the file sees is registered, so YAML may name a declared tag.
// RUN: hloc-tblgen --gen-rules -I %rules %s | FileCheck %s
include "base/Common.td"
def ExactOnlyForInts : Tag<"exact_only_for_ints", "exact for integers only">;
let Pass = "algsimp" in {
// A + 0 => A
def TaggedAddZero : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Tags = [InexactLikeXla, ExactOnlyForInts]; }
// A - 0 => A
def UntaggedSubZero : Rule<(Subtract $a, (Zero)), (replaceWith $a)>;
}
// CHECK: static const char* const kTags_TaggedAddZero[] = {"inexact_like_xla", "exact_only_for_ints"};
// CHECK: const RuleInfo kRules[] = {
// CHECK: {"TaggedAddZero", "algsimp",
// CHECK-NEXT: "A + 0 => A", Rule_TaggedAddZero, kTags_TaggedAddZero, 2},
// CHECK: {"UntaggedSubZero", "algsimp",
// CHECK-NEXT: "A - 0 => A", Rule_UntaggedSubZero, nullptr, 0},
// CHECK: const TagInfo kDeclaredTags[] = {
// CHECK-NEXT: {"inexact_like_xla", "XLA applies this although it is inexact for some floats"},
// CHECK-NEXT: {"exact_only_for_ints", "exact for integers only"},
// CHECK: registry.RegisterTag(&tag);
