// Concurrent CUDA graphs: the lane plan (graph_lanes.h).
#include "runtime/gpu/graph_lanes.h"

#include <algorithm>
#include <map>

namespace hloc::runtime::gpu {
namespace {

bool LibraryCall(const Thunk& t) { return t.kind == ThunkKind::kGemm || t.kind == ThunkKind::kConvolution; }

struct Access {
  int thunk;
  int64_t begin, end;
  bool written;
};

}  // namespace

bool ForkableThunk(const Thunk& t) {
  return t.kind == ThunkKind::kKernel || t.kind == ThunkKind::kCopy || t.kind == ThunkKind::kMemset || LibraryCall(t);
}

LanePlan PlanLanes(const ThunkSequence& seq, int lanes) {
  const int n = static_cast<int>(seq.size());
  lanes = std::max(1, lanes);
  LanePlan p;
  p.lane.assign(n, 0);
  p.waits.assign(n, {});
  p.recorded.assign(n, false);
  p.join.assign(lanes, -1);
  std::vector<int> last(lanes, -1);    // last thunk on each lane
  std::vector<int> synced(lanes, -1);  // the latest barrier each lane has waited for
  std::map<int64_t, std::vector<Access>> accesses;  // per allocation, since the last barrier
  int barrier = -1, last_library = -1;
  auto wait = [&](int i, int on) {
    if (on < 0 || p.lane[on] == p.lane[i]) return;
    p.waits[i].push_back(on);
    p.recorded[on] = true;
  };
  for (int i = 0; i < n; ++i) {
    const Thunk& t = seq[i];
    if (lanes == 1) continue;
    if (!ForkableThunk(t)) {  // a barrier: on lane 0 after every lane
      p.lane[i] = 0;
      for (int l = 1; l < lanes; ++l)
        if (last[l] > barrier) wait(i, last[l]);
      barrier = i;
      last[0] = i;
      accesses.clear();
      last_library = -1;
      continue;
    }
    std::vector<int> deps;
    for (size_t k = 0; k < t.arguments.size(); ++k) {
      const BufferSlice& s = t.arguments[k];
      if (!s.valid()) continue;
      const bool w = k < t.written.size() && t.written[k];
      auto it = accesses.find(s.allocation);
      if (it == accesses.end()) continue;
      for (const Access& a : it->second)
        if ((a.written || w) && a.begin < s.offset + s.size && s.offset < a.end) deps.push_back(a.thunk);
    }
    if (LibraryCall(t) && last_library >= 0) deps.push_back(last_library);
    // The lane of the latest dependency when that dependency is the lane's last thunk (its
    // chain goes on, no event needed); else the lane idle longest (a fan-out spreads).
    int lane = -1;
    if (!deps.empty()) {
      const int d = *std::max_element(deps.begin(), deps.end());
      if (last[p.lane[d]] == d) lane = p.lane[d];
    }
    if (lane < 0) {
      lane = 0;
      for (int l = 1; l < lanes; ++l)
        if (last[l] < last[lane]) lane = l;
    }
    p.lane[i] = lane;
    // One wait per other lane: its latest dependency there (the lane's order covers the rest).
    std::vector<int> latest(lanes, -1);
    for (int d : deps) latest[p.lane[d]] = std::max(latest[p.lane[d]], d);
    for (int l = 0; l < lanes; ++l)
      if (l != lane && latest[l] >= 0) wait(i, latest[l]);
    if (lane != 0 && barrier >= 0 && synced[lane] < barrier) wait(i, barrier);
    synced[lane] = std::max(synced[lane], barrier);
    for (size_t k = 0; k < t.arguments.size(); ++k) {
      const BufferSlice& s = t.arguments[k];
      if (!s.valid()) continue;
      accesses[s.allocation].push_back({i, s.offset, s.offset + s.size, k < t.written.size() && t.written[k]});
    }
    if (LibraryCall(t)) last_library = i;
    last[lane] = i;
  }
  for (int l = 1; l < lanes; ++l) {
    if (last[l] < 0) continue;
    p.join[l] = last[l];
    p.recorded[last[l]] = true;
    p.lanes_used = std::max(p.lanes_used, l + 1);
  }
  return p;
}

}  // namespace hloc::runtime::gpu
