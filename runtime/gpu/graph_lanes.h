// Concurrent CUDA graphs: which stream ("lane") each thunk of a captured sequence is enqueued on
// and which earlier thunks it waits for, so the captured graph is the sequence's dependency DAG
// instead of a chain (XLA's command buffers with concurrent regions do the same).
//
// Why: a recurrent step is dozens of small kernels; captured from one stream each waits for the
// one before, and the GPU runs them one at a time, ~1.5 us each even when they are independent
// (flax_gru_train's forward step writes its 9 residual stacks with 9 independent in-place
// dynamic-update-slice kernels).
//
// Dependencies come from the thunks' argument slices: a thunk depends on every earlier one whose
// written slices overlap what it reads or writes, or which reads what it writes. Library calls
// (cuBLASLt, cuDNN) share the executable's one workspace, so they also depend on the library
// call before them. Thunks other than kernels, copies, memsets and library GEMMs/convolutions
// (loops, conditionals, nested sequences, FFTs, solver calls, collectives) are barriers: every
// lane joins before them and every later thunk comes after them.
#pragma once
#include <vector>

#include "runtime/executable/executable.h"

namespace hloc::runtime::gpu {

struct LanePlan {
  std::vector<int> lane;                 // per thunk: 0 is the capturing stream, 1.. the others
  std::vector<std::vector<int>> waits;   // per thunk: earlier thunks on other lanes it waits for
  std::vector<bool> recorded;            // per thunk: someone waits for it (an event is recorded)
  std::vector<int> join;                 // last thunk of each lane 1..N-1 (-1: unused), joined at the end
  int lanes_used = 1;
};

// At most `lanes` lanes (1: every thunk on lane 0, no waits: the sequence as it is).
LanePlan PlanLanes(const ThunkSequence& seq, int lanes);

// Whether `t` may run beside other thunks (not a barrier).
bool ForkableThunk(const Thunk& t);

}  // namespace hloc::runtime::gpu
