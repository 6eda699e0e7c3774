// RUN: not hloc-tblgen --gen-layout -I %rules -D UNKNOWN %s 2>&1 | FileCheck %s
// RUN: not hloc-tblgen --gen-layout -I %rules -D MISSPELT %s 2>&1 | FileCheck %s --check-prefix=MISSPELT
// RUN: hloc-tblgen --gen-layout -I %rules -D KNOWN %s | FileCheck %s --check-prefix=KNOWN
// Layout kinds are resolved at generation (issue 15, item 3): every LayoutKind record must be
// one the layout-assignment engine computes (HLOC_LAYOUT_KINDS, src/passes/layout/layout_kinds.h),
// and each row carries its kind as the enumerator, not as a name the C++ compares.
include "base/Layout.td"
include "layout/LayoutKinds.td"

#ifdef MISSPELT
// A row naming a kind that no record defines: TableGen's own error, at the name.
// MISSPELT: layout-kinds.td:[[@LINE+2]]:41: error: Variable not defined: 'ContractingMinr'
// MISSPELT: note: did you mean 'ContractingMinor'?
def Misspelt : LayoutConstraint<Dot, 0, ContractingMinr>;
#endif

#ifdef KNOWN
// KNOWN: {"DotLhs", static_cast<int>(HloOpcode::kDot), 0, "ContractingMinor",
// KNOWN-NEXT: layout-kinds.td", [[@LINE+1]], static_cast<int>(layout::LayoutKind::kContractingMinor)},
def DotLhs : LayoutConstraint<Dot, 0, ContractingMinor>;
// KNOWN: {"ConvNchw", static_cast<int>(HloOpcode::kConvolution), 0, "ChannelsFirst",
// KNOWN-NEXT: layout-kinds.td", [[@LINE+1]], static_cast<int>(layout::LayoutKind::kChannelsFirst)},
def ConvNchw : LayoutPreference<Convolution, 0, ChannelsFirst>;
#endif

#ifdef UNKNOWN
// A new kind the C++ does not compute fails at its def, and so does a row that uses it.
// CHECK: layout-kinds.td:[[@LINE+1]]:5: error: LayoutKind 'ChannelsInterleaved' is not computed by the layout-assignment engine: add it to HLOC_LAYOUT_KINDS (src/passes/layout/layout_kinds.h) and its case to ComputeKind (src/passes/layout/layout_constraints.cc)
def ChannelsInterleaved : LayoutKind<"a kind the engine does not know">;
// CHECK: layout-kinds.td:[[@LINE+1]]:5: error: layout constraint 'ConvInterleaved' names LayoutKind 'ChannelsInterleaved', which the layout-assignment engine does not compute
def ConvInterleaved : LayoutConstraint<Convolution, 0, ChannelsInterleaved>;
#endif
