// A rule file included by include-only-main.td: its rules belong to its own generated file.
include "base/Common.td"
let Pass = "algsimp" in
def IncludedRule : Rule<(Negate (Negate $x)), (replaceWith $x)>;
