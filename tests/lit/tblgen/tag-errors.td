// Tag mistakes hloc-tblgen reports at the record, all in one run: a name YAML could not write
// as `tag:NAME` (not lower_snake_case), two tags with one name, a rule listing a tag twice, and
// a record of another class in Tags (TableGen's type check).
// RUN: not hloc-tblgen --gen-rules -I %rules %s 2>&1 | FileCheck %s
// RUN: not hloc-tblgen --gen-rules -I %rules -DWRONG_CLASS %s 2>&1 | FileCheck %s --check-prefix=CLASS
include "base/Common.td"
// CHECK: tag-errors.td:[[@LINE+1]]:5: error: tag 'BadName' has the name 'Bad Name'; a tag's name (what YAML writes after `tag:`) is lower_snake_case
def BadName : Tag<"Bad Name", "spaces">;
// CHECK: tag-errors.td:[[@LINE+2]]:5: error: tag 'Again' has the name 'inexact_like_xla', which tag 'InexactLikeXla' already has
// CHECK: note: the first tag named 'inexact_like_xla' is defined here
def Again : Tag<"inexact_like_xla", "a second declaration">;
let Pass = "algsimp" in {
// CHECK: tag-errors.td:[[@LINE+1]]:5: error: in rule 'Twice': it lists the tag 'InexactLikeXla' (inexact_like_xla) twice
def Twice : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Tags = [InexactLikeXla, InexactLikeXla]; }
#ifdef WRONG_CLASS
// CLASS: tag-errors.td:[[@LINE+1]]:
def NotATag : Rule<(Add $a, (Zero)), (replaceWith $a)> { let Tags = [IsFloat]; }
#endif
}
