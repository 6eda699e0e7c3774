// RUN: hloc-tblgen --gen-rules -I %rules --source-root %S %s | FileCheck %s
// Rule names are global (YAML enables and disables rules by name): each generated rule file
// defines one C symbol per rule, so a second rule file defining the same name fails the link,
// naming the rule (issue 36, item 4; within one file TableGen says "def already exists").
include "base/Common.td"
let Pass = "algsimp" in {
def AddZeroSym : Rule<(Add $a, (Zero)), (replaceWith $a)>;
}
// CHECK: extern "C" const char hloc_rule_name_AddZeroSym[] = "rule-name-symbol.td:[[@LINE-2]]";
