// Dense linear algebra on the host (LAPACK/BLAS): the CPU implementations of the linalg.potrf,
// linalg.getrf, linalg.trsm, linalg.geqrf, linalg.orgqr, linalg.syevd, linalg.gesvd and
// linalg.perm thunks (runtime/executable/linalg_config.h). Built in: the CPU runtime registers
// them before any executable loads.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "runtime/cpu/cpu_executable.h"

namespace hloc::runtime {

std::vector<std::pair<std::string, CpuCustomCall>> LinalgCustomCalls();

}  // namespace hloc::runtime
