// SimulateHeap: peak bytes by replaying the events, offsets by XLA's
// GlobalDecreasingSizeBestFitHeap (spatial order: largest first, then longest-lived, then by id).
//
// Time is the event's position in the list: a buffer allocated at event i and freed at event j
// occupies [i, j]; one never freed lives to the end. Two buffers may share bytes only when their
// intervals are disjoint. A kAlloc with share_with names a buffer already freed; the two are
// colocated (XLA's ShareWith): they get the same offset, and the pair is placed as one unit whose
// member intervals must each avoid every other placed buffer.
#include "schedule/heap_simulator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace hloc {
namespace {

constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();

struct Interval {
  int64_t buffer = 0;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = kOpen;  // inclusive; kOpen until freed
  int64_t unit = -1;    // index of the colocation unit (union-find root resolved later)
};

int64_t RoundUp(int64_t value, int64_t alignment) {
  if (alignment <= 1) return value;
  return (value + alignment - 1) / alignment * alignment;
}

// Union-find over interval indices, so a chain of ShareWith (a -> b -> c) is one unit.
int64_t Find(std::vector<int64_t>& parent, int64_t i) {
  while (parent[i] != i) {
    parent[i] = parent[parent[i]];
    i = parent[i];
  }
  return i;
}

}  // namespace

absl::StatusOr<HeapSimulatorResult> SimulateHeap(const std::vector<HeapEvent>& events,
                                                 const HeapSimulatorOptions& options) {
  if (options.alignment <= 0)
    return absl::InvalidArgumentError(absl::StrCat("heap alignment must be positive, got ", options.alignment));
  HeapSimulatorResult result;
  std::vector<Interval> intervals;
  absl::flat_hash_map<int64_t, int64_t> index_of;  // buffer id -> interval index
  absl::flat_hash_map<int64_t, bool> live;         // buffer id -> currently allocated
  std::vector<int64_t> parent;                     // union-find over intervals
  std::vector<int64_t> zero_sized;                 // buffers with no bytes: offset 0, never packed
  absl::flat_hash_set<int64_t> zero_sized_set;
  int64_t current = 0;

  for (size_t t = 0; t < events.size(); ++t) {
    const HeapEvent& e = events[t];
    const int64_t time = static_cast<int64_t>(t);
    if (e.kind == HeapEvent::kAlloc) {
      if (e.size < 0)
        return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": buffer ", e.buffer,
                                                       " has negative size ", e.size));
      if (index_of.contains(e.buffer) || zero_sized_set.contains(e.buffer))
        return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": buffer ", e.buffer, " allocated twice"));
      if (e.size > kOpen - current)
        return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": live bytes overflow"));
      current += e.size;
      result.peak_bytes = std::max(result.peak_bytes, current);
      if (e.size == 0) {
        // As XLA: zero-sized buffers sit at offset 0 and take no part in packing.
        zero_sized.push_back(e.buffer);
        zero_sized_set.insert(e.buffer);
        live[e.buffer] = true;
        continue;
      }
      const int64_t idx = static_cast<int64_t>(intervals.size());
      intervals.push_back({e.buffer, e.size, time, kOpen, -1});
      parent.push_back(idx);
      index_of[e.buffer] = idx;
      live[e.buffer] = true;
      if (e.share_with >= 0) {
        auto it = index_of.find(e.share_with);
        if (it == index_of.end()) {
          // Sharing with a zero-sized or unknown buffer gives nothing to reuse: a plain alloc.
          if (!zero_sized_set.contains(e.share_with))
            return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": buffer ", e.buffer,
                                                           " shares with unknown buffer ", e.share_with));
        } else {
          if (live[e.share_with])
            return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": buffer ", e.buffer,
                                                           " shares with buffer ", e.share_with,
                                                           ", which is still live"));
          // In place only when it fits; a larger buffer is placed on its own.
          const int64_t other = it->second;
          if (e.size <= intervals[other].size) parent[idx] = Find(parent, other);
        }
      }
    } else {
      auto it = live.find(e.buffer);
      if (it == live.end() || !it->second)
        return absl::InvalidArgumentError(absl::StrCat("heap event ", t, ": buffer ", e.buffer,
                                                       " freed but not live"));
      it->second = false;
      auto idx = index_of.find(e.buffer);
      if (idx != index_of.end()) {
        intervals[idx->second].end = time;
        current -= intervals[idx->second].size;
      }
    }
  }
  if (!options.compute_offsets) return result;

  // Colocation units: members with their own intervals, one offset for all.
  struct Unit {
    int64_t size = 0;       // the largest member
    int64_t start = kOpen;  // hull, for ordering
    int64_t end = 0;
    int64_t first_buffer = 0;
    std::vector<int64_t> members;
  };
  absl::flat_hash_map<int64_t, int64_t> unit_of_root;
  std::vector<Unit> units;
  for (int64_t i = 0; i < static_cast<int64_t>(intervals.size()); ++i) {
    const int64_t root = Find(parent, i);
    auto [it, inserted] = unit_of_root.try_emplace(root, static_cast<int64_t>(units.size()));
    if (inserted) units.push_back(Unit{0, kOpen, 0, intervals[i].buffer, {}});
    Unit& u = units[it->second];
    u.members.push_back(i);
    u.size = std::max(u.size, intervals[i].size);
    u.start = std::min(u.start, intervals[i].start);
    u.end = std::max(u.end, intervals[i].end);
    intervals[i].unit = it->second;
  }
  std::vector<int64_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  // XLA's spatial order: size descending, then lifetime descending, then buffer ascending.
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    const Unit& x = units[a];
    const Unit& y = units[b];
    const int64_t lx = x.end == kOpen ? kOpen : x.end - x.start;
    const int64_t ly = y.end == kOpen ? kOpen : y.end - y.start;
    return std::make_tuple(-x.size, -lx, x.first_buffer) < std::make_tuple(-y.size, -ly, y.first_buffer);
  });

  struct Placed {
    int64_t start, end, offset, size;
  };
  std::vector<Placed> placed;
  std::vector<int64_t> unit_offset(units.size(), 0);
  for (int64_t u : order) {
    const Unit& unit = units[u];
    // Chunks already placed that are live during any member's interval.
    std::vector<std::pair<int64_t, int64_t>> busy;  // (offset, end offset)
    for (const Placed& p : placed) {
      for (int64_t m : unit.members) {
        const Interval& iv = intervals[m];
        if (p.start <= iv.end && iv.start <= p.end) {
          busy.push_back({p.offset, p.offset + p.size});
          break;
        }
      }
    }
    std::sort(busy.begin(), busy.end());
    // Best fit: the smallest gap that holds the unit at an aligned offset; the open space above
    // every busy chunk only when no gap does.
    int64_t best_offset = -1, best_gap = kOpen;
    int64_t cursor = 0;
    for (const auto& [lo, hi] : busy) {
      if (lo > cursor) {
        const int64_t aligned = RoundUp(cursor, options.alignment);
        if (aligned + unit.size <= lo && lo - cursor < best_gap) {
          best_gap = lo - cursor;
          best_offset = aligned;
        }
      }
      cursor = std::max(cursor, hi);
    }
    if (best_offset < 0) best_offset = RoundUp(cursor, options.alignment);
    unit_offset[u] = best_offset;
    for (int64_t m : unit.members) {
      const Interval& iv = intervals[m];
      placed.push_back({iv.start, iv.end, best_offset, iv.size});
      result.heap_size = std::max(result.heap_size, best_offset + iv.size);
    }
  }
  for (const Interval& iv : intervals) result.offsets.push_back({iv.buffer, unit_offset[iv.unit]});
  for (int64_t b : zero_sized) result.offsets.push_back({b, 0});
  std::sort(result.offsets.begin(), result.offsets.end());
  return result;
}

}  // namespace hloc
