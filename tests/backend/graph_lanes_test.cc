// The lane plan of concurrent CUDA graphs (runtime/gpu/graph_lanes.h): pure bookkeeping, no GPU.
#include "runtime/gpu/graph_lanes.h"

#include <algorithm>

#include <catch2/catch.hpp>

namespace hloc::runtime::gpu {
namespace {

// A kernel thunk reading `reads` and writing `writes`: slices {allocation, offset, size}.
Thunk K(std::vector<BufferSlice> reads, std::vector<BufferSlice> writes, ThunkKind kind = ThunkKind::kKernel) {
  Thunk t;
  t.kind = kind;
  for (const BufferSlice& s : reads) t.arguments.push_back(s), t.written.push_back(false);
  for (const BufferSlice& s : writes) t.arguments.push_back(s), t.written.push_back(true);
  return t;
}
BufferSlice S(int64_t alloc, int64_t off, int64_t size) { return BufferSlice{alloc, off, size}; }

}  // namespace

TEST_CASE("independent kernels go to different lanes and are joined", "[graph_lanes]") {
  // One producer, three independent in-place updates of different buffers reading it.
  ThunkSequence seq = {K({S(0, 0, 64)}, {S(1, 0, 64)}), K({S(1, 0, 64)}, {S(2, 0, 64)}),
                       K({S(1, 0, 64)}, {S(3, 0, 64)}), K({S(1, 0, 64)}, {S(4, 0, 64)})};
  LanePlan p = PlanLanes(seq, 4);
  CHECK(p.lane[0] == 0);
  CHECK(p.lane[1] == 0);  // continues its dependency's chain
  CHECK(p.lane[2] != 0);
  CHECK(p.lane[3] != 0);
  CHECK(p.lane[2] != p.lane[3]);
  CHECK(p.waits[2] == std::vector<int>{0});
  CHECK(p.waits[3] == std::vector<int>{0});
  CHECK(p.recorded[0]);
  CHECK(p.join[p.lane[2]] == 2);
  CHECK(p.join[p.lane[3]] == 3);
}

TEST_CASE("read-after-write, write-after-read and overlap order thunks", "[graph_lanes]") {
  ThunkSequence seq = {K({S(0, 0, 64)}, {S(1, 0, 32)}),   // 0 writes 1[0,32)
                       K({S(5, 0, 64)}, {S(2, 0, 64)}),   // 1 independent
                       K({S(1, 16, 8)}, {S(3, 0, 64)}),   // 2 reads 1[16,24): after 0
                       K({S(6, 0, 8)}, {S(5, 0, 8)}),     // 3 writes 5, which 1 read: after 1
                       K({S(7, 0, 8)}, {S(1, 32, 32)})};  // 4 writes 1[32,64): no overlap with 0 or 2
  LanePlan p = PlanLanes(seq, 4);
  auto after = [&](int i, int j) {  // i is ordered after j: same lane or it waits for j
    return p.lane[i] == p.lane[j] ||
           std::find(p.waits[i].begin(), p.waits[i].end(), j) != p.waits[i].end();
  };
  CHECK(after(2, 0));
  CHECK(after(3, 1));
  CHECK(p.lane[1] != p.lane[0]);
  CHECK(p.waits[4].empty());
}

TEST_CASE("library calls share the workspace; barriers join every lane", "[graph_lanes]") {
  ThunkSequence seq = {K({S(0, 0, 8)}, {S(1, 0, 8)}, ThunkKind::kGemm), K({S(2, 0, 8)}, {S(3, 0, 8)}, ThunkKind::kGemm),
                       K({S(4, 0, 8)}, {S(5, 0, 8)}), K({}, {}, ThunkKind::kWhile), K({S(8, 0, 8)}, {S(9, 0, 8)}),
                       K({S(10, 0, 8)}, {S(11, 0, 8)})};
  LanePlan p = PlanLanes(seq, 4);
  CHECK(p.lane[1] == p.lane[0]);  // the second GEMM waits for the first (one workspace)
  CHECK(p.lane[2] != p.lane[0]);  // the kernel runs beside them
  CHECK(p.lane[3] == 0);          // the loop: a barrier after every lane
  CHECK(std::find(p.waits[3].begin(), p.waits[3].end(), 2) != p.waits[3].end());
  // After the barrier a thunk on another lane waits for it.
  const int other = p.lane[4] != 0 ? 4 : 5;
  CHECK(p.lane[other] != 0);
  CHECK(std::find(p.waits[other].begin(), p.waits[other].end(), 3) != p.waits[other].end());
}

TEST_CASE("one lane is the sequence as it is", "[graph_lanes]") {
  ThunkSequence seq = {K({S(0, 0, 8)}, {S(1, 0, 8)}), K({S(2, 0, 8)}, {S(3, 0, 8)})};
  LanePlan p = PlanLanes(seq, 1);
  CHECK(p.lane == std::vector<int>{0, 0});
  CHECK(p.waits[1].empty());
  CHECK(p.lanes_used == 1);
}

}  // namespace hloc::runtime::gpu
