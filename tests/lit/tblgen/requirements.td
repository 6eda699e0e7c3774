// Requirements are resolved at generation (issue 15, item 3): rows carry hloc::Requirement
// enumerators (src/engine/requirements.h, generated from rules/base/Requirements.td), not names
// the C++ looks up; a misspelt requirement is TableGen's undefined name, and a Requirement
// record defined outside rules/base/Requirements.td is refused at its def.
// RUN: hloc-tblgen --gen-all -I %rules -D KNOWN %s | FileCheck %s --check-prefix=KNOWN
// RUN: not hloc-tblgen --gen-layout -I %rules -D MISSPELT %s 2>&1 | FileCheck %s --check-prefix=MISSPELT
// RUN: not hloc-tblgen --gen-all -I %rules -D NEW %s 2>&1 | FileCheck %s --check-prefix=NEW
// RUN: not hloc-tblgen --gen-all -I %rules -D TWICE %s 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: hloc-tblgen --gen-requirements -I %rules %rules/base/Requirements.td | FileCheck %s --check-prefix=ENUM
include "base/Common.td"
include "base/Layout.td"

#ifdef KNOWN
// KNOWN: const Requirement kRequires_NegNegOnHopper[] = {Requirement::kIsGpu, Requirement::kIsHopperOrNewer};
// KNOWN: {"NegNegOnHopper", "algsimp", {{.*}}, kRequires_NegNegOnHopper, 2,
def NegNegOnHopper : Rule<(Negate (Negate $x)), (replaceWith $x)> {
  let Pass = "algsimp";
  let Requires = [IsGpu, IsHopperOrNewer];
}
// KNOWN: const Requirement kLayoutRequires_DotLhsTc[] = {Requirement::kHasTensorCores};
// KNOWN: {"DotLhsTc", static_cast<int>(HloOpcode::kDot), 0, "ContractingMinor", true, 0, kLayoutRequires_DotLhsTc, 1,
let Requires = [HasTensorCores] in
def DotLhsTc : LayoutConstraint<Dot, 0, ContractingMinor>;
#endif

#ifdef MISSPELT
// MISSPELT: requirements.td:[[@LINE+2]]:17: error: Variable not defined: 'IsHoperOrNewer'
// MISSPELT: note: did you mean 'IsHopperOrNewer'?
let Requires = [IsHoperOrNewer] in
def DotLhsMisspelt : LayoutConstraint<Dot, 0, ContractingMinor>;
#endif

#ifdef NEW
// NEW: requirements.td:[[@LINE+1]]:5: error: Requirement 'HasWarpSpecialization' is defined outside rules/base/Requirements.td: define it there (hloc's enum of requirements, hloc::Requirement, is generated from that file alone)
def HasWarpSpecialization : Requirement<"a requirement the enum does not have">;
#endif

#ifdef TWICE
// A second definition of a name rules/base/Requirements.td defines: TableGen's own error.
// TWICE: requirements.td:[[@LINE+1]]:5: error: def already exists: IsCpu
def IsCpu : Requirement<"the profile is a CPU">;
#endif

// The enum's list: every record, by name, with its summary.
// ENUM: HLOC_REQUIREMENT(HasAsyncCopy, "the GPU has cp.async (compute capability 8.0 or newer)")
// ENUM: HLOC_REQUIREMENT(IsCpu, "the profile is a CPU")
// ENUM-NEXT: HLOC_REQUIREMENT(IsGpu, "the profile is a GPU")
// ENUM-NEXT: HLOC_REQUIREMENT(IsHopperOrNewer, "the GPU's compute capability is 9.0 or newer")
