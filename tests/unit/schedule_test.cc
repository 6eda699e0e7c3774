// Scheduling: the heap simulator (exact peaks and offsets on hand-made event lists), the memory
// schedulers (list, DFS, post-order) and the chooser, rematerialization under a memory limit,
// the latency-hiding scheduler, and the corpus: every small module scheduled still verifies and
// evaluates to the same outputs.
#include <algorithm>
#include <filesystem>
#include <map>

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "corpus_inputs.h"
#include "engine/pass.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "schedule/buffer_model.h"
#include "schedule/heap_simulator.h"
#include "schedule/hlo_scheduling.h"
#include "schedule/schedule_passes.h"

namespace hloc {
namespace {

HeapEvent Alloc(int64_t buffer, int64_t size, int64_t share_with = -1) {
  return HeapEvent{HeapEvent::kAlloc, buffer, size, share_with};
}
HeapEvent Free(int64_t buffer) { return HeapEvent{HeapEvent::kFree, buffer, 0, -1}; }

std::map<int64_t, int64_t> Offsets(const HeapSimulatorResult& r) {
  return std::map<int64_t, int64_t>(r.offsets.begin(), r.offsets.end());
}

HeapSimulatorOptions Aligned(int64_t alignment) {
  HeapSimulatorOptions o;
  o.alignment = alignment;
  return o;
}

namespace fs = std::filesystem;
using namespace schedule_internal;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) FAIL("parse failed: " << m.status().message());
  return std::move(*m);
}

std::vector<std::string> Names(const std::vector<HloInstruction*>& seq) {
  std::vector<std::string> out;
  for (const HloInstruction* i : seq) out.push_back(i->name());
  return out;
}
std::vector<std::string> Order(const HloComputation& c) {
  std::vector<std::string> out;
  for (const auto& i : c.instructions()) out.push_back(i->name());
  return out;
}
int64_t IndexOf(const HloComputation& c, const std::string& name) {
  for (size_t i = 0; i < c.instructions().size(); ++i)
    if (c.instructions()[i]->name() == name) return static_cast<int64_t>(i);
  return -1;
}

absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name,
                             const std::map<std::string, OptionValue>& overrides = {}) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  for (const auto& [k, v] : overrides) options.Set(k, v);
  PassContext context;
  return info->factory(options)->Run(module, context);
}

Literal Iota(const Shape& shape, double scale) {
  Literal lit = *Literal::Create(shape);
  float* d = lit.data<float>();
  for (int64_t i = 0; i < shape.num_elements(); ++i) d[i] = static_cast<float>(scale * ((i % 97) - 48) / 97.0);
  return lit;
}

// Two expand-then-reduce branches: running them one after the other needs one 64 KiB
// broadcast at a time, the definition order (both broadcasts first) two.
constexpr const char* kTwoBranches = R"(
HloModule two_branches

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p: f32[16]) -> f32[16] {
  %p = f32[16] parameter(0)
  %c = f32[] constant(0)
  %x1 = f32[16,1024] broadcast(%p), dimensions={0}
  %x2 = f32[16,1024] broadcast(%p), dimensions={0}
  %r1 = f32[16] reduce(%x1, %c), dimensions={1}, to_apply=%add
  %r2 = f32[16] reduce(%x2, %c), dimensions={1}, to_apply=%add
  ROOT %t = f32[16] add(%r1, %r2)
}
)";

// b is needed at the start and at the end; in between x, y and z need their own space. With b
// recomputed before w, the middle holds three temps instead of four.
constexpr const char* kRemat = R"(
HloModule remat

ENTRY %main (p0: f32[1024], p1: f32[64,1024]) -> f32[64,1024] {
  %p0 = f32[1024] parameter(0)
  %p1 = f32[64,1024] parameter(1)
  %b = f32[64,1024] broadcast(%p0), dimensions={1}
  %x = f32[64,1024] add(%b, %p1)
  %y = f32[64,1024] exponential(%x)
  %z = f32[64,1024] add(%x, %y)
  ROOT %w = f32[64,1024] multiply(%z, %b)
}
)";

// An all-reduce whose operand is ready at once, placed by the memory scheduler next to its done.
constexpr const char* kAsync = R"(
HloModule async

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p0: f32[1024], p1: f32[1024]) -> (f32[1024], f32[1024]) {
  %p0 = f32[1024] parameter(0)
  %p1 = f32[1024] parameter(1)
  %x1 = f32[1024] exponential(%p1)
  %x2 = f32[1024] log(%x1)
  %x3 = f32[1024] sine(%x2)
  %x4 = f32[1024] cosine(%x3)
  %ars = f32[1024] all-reduce-start(%p0), replica_groups={}, to_apply=%sum
  %ard = f32[1024] all-reduce-done(%ars)
  %y = f32[1024] add(%ard, %x4)
  ROOT %t = (f32[1024], f32[1024]) tuple(%y, %x4)
}
)";

}  // namespace

TEST_CASE("heap simulator: peak and reuse of a freed buffer's space", "[schedule][heap]") {
  // A [0,2], B [1,4], C [3,5]: A and C never overlap, so C lands on A's bytes.
  const int64_t A = 0, B = 1, C = 2;
  auto r = SimulateHeap({Alloc(A, 100), Alloc(B, 50), Free(A), Alloc(C, 100), Free(B), Free(C)}, Aligned(1));
  REQUIRE(r.ok());
  CHECK(r->peak_bytes == 150);
  CHECK(r->heap_size == 150);
  auto off = Offsets(*r);
  CHECK(off[A] == 0);
  CHECK(off[C] == 0);
  CHECK(off[B] == 100);
}

TEST_CASE("heap simulator: offsets are aligned", "[schedule][heap]") {
  auto r = SimulateHeap({Alloc(0, 10), Alloc(1, 10), Alloc(2, 1), Free(0), Free(1), Free(2)}, Aligned(64));
  REQUIRE(r.ok());
  CHECK(r->peak_bytes == 21);
  auto off = Offsets(*r);
  CHECK(off[0] == 0);
  CHECK(off[1] == 64);
  CHECK(off[2] == 128);
  CHECK(r->heap_size == 129);
}

TEST_CASE("heap simulator: best fit uses a gap below the top when one is big enough", "[schedule][heap]") {
  // Intervals (event positions): A[0,2] C[1,6] B[3,9] D[4,8] E[5,7]. Placed largest first:
  // A@0, B@0 (disjoint from A), C@100 (over A and B), D: the gap [60,100) is too small for 45
  // -> @150, E (30) fits the gap -> @60. Peak 185 (C+B+D+E at event 5), heap 195.
  const int64_t A = 0, B = 1, C = 2, D = 3, E = 4;
  auto r = SimulateHeap({Alloc(A, 100), Alloc(C, 50), Free(A), Alloc(B, 60), Alloc(D, 45), Alloc(E, 30), Free(C),
                         Free(E), Free(D), Free(B)},
                        Aligned(1));
  REQUIRE(r.ok());
  CHECK(r->peak_bytes == 185);
  CHECK(r->heap_size == 195);
  auto off = Offsets(*r);
  CHECK(off[A] == 0);
  CHECK(off[B] == 0);
  CHECK(off[C] == 100);
  CHECK(off[D] == 150);
  CHECK(off[E] == 60);
}

TEST_CASE("heap simulator: share_with colocates a buffer with a freed one", "[schedule][heap]") {
  // X[0,6] A[1,2] B[3,5] (in place over A) Y[4,7]. The {A,B} unit (100 bytes) goes first at 0;
  // Y overlaps B only -> just above B's 80 bytes; X overlaps all -> above Y.
  const int64_t X = 0, A = 1, B = 2, Y = 3;
  auto r = SimulateHeap({Alloc(X, 50), Alloc(A, 100), Free(A), Alloc(B, 80, A), Alloc(Y, 100), Free(B), Free(X),
                         Free(Y)},
                        Aligned(1));
  REQUIRE(r.ok());
  CHECK(r->peak_bytes == 230);
  auto off = Offsets(*r);
  CHECK(off[A] == 0);
  CHECK(off[B] == 0);
  CHECK(off[Y] == 80);
  CHECK(off[X] == 180);
  CHECK(r->heap_size == 230);
}

TEST_CASE("heap simulator: a buffer larger than the one it shares with is placed on its own", "[schedule][heap]") {
  auto r = SimulateHeap({Alloc(0, 64), Alloc(9, 64), Free(0), Alloc(1, 128, 0), Free(1), Free(9)}, Aligned(64));
  REQUIRE(r.ok());
  auto off = Offsets(*r);
  CHECK(off[1] != off[9]);
  CHECK(r->peak_bytes == 192);
}

TEST_CASE("heap simulator: zero-sized buffers, buffers never freed, peak only", "[schedule][heap]") {
  HeapSimulatorOptions peak_only;
  peak_only.compute_offsets = false;
  auto r = SimulateHeap({Alloc(0, 0), Alloc(1, 8), Alloc(2, 16), Free(1), Free(0)}, peak_only);
  REQUIRE(r.ok());
  CHECK(r->peak_bytes == 24);
  CHECK(r->offsets.empty());
  auto full = SimulateHeap({Alloc(0, 0), Alloc(1, 8), Alloc(2, 16), Free(1), Free(0)}, Aligned(8));
  REQUIRE(full.ok());
  auto off = Offsets(*full);
  CHECK(off[0] == 0);
  CHECK(off[2] == 0);  // the larger goes first
  CHECK(off[1] == 16);
  CHECK(full->heap_size == 24);
  CHECK(full->offsets.size() == 3);
}

TEST_CASE("heap simulator: bad event lists are errors", "[schedule][heap]") {
  CHECK_FALSE(SimulateHeap({Free(3)}, {}).ok());
  CHECK_FALSE(SimulateHeap({Alloc(1, 4), Alloc(1, 4)}, {}).ok());
  CHECK_FALSE(SimulateHeap({Alloc(1, 4), Free(1), Free(1)}, {}).ok());
  CHECK_FALSE(SimulateHeap({Alloc(1, -4)}, {}).ok());
  CHECK_FALSE(SimulateHeap({Alloc(1, 4), Alloc(2, 4, 1)}, {}).ok());  // 1 is still live
  CHECK_FALSE(SimulateHeap({Alloc(2, 4, 7)}, {}).ok());               // 7 never existed
  CHECK_FALSE(SimulateHeap({Alloc(1, 4)}, Aligned(0)).ok());
}

TEST_CASE("ShapeSizeBytes: arrays, tuples (pointer tables), tokens", "[schedule]") {
  CHECK(ShapeSizeBytes(Shape(PrimitiveType::F32, {16, 1024})) == 65536);
  CHECK(ShapeSizeBytes(Shape(PrimitiveType::BF16, {3})) == 6);
  CHECK(ShapeSizeBytes(Shape(PrimitiveType::F32, {0, 4})) == 0);
  CHECK(ShapeSizeBytes(Shape::Tuple({Shape(PrimitiveType::F32, {4}), Shape(PrimitiveType::S8, {})})) == 16);
  CHECK(ShapeSizeBytes(Shape::Token()) == 0);
}

TEST_CASE("memory schedulers on two expand-and-reduce branches", "[schedule]") {
  auto module = Parse(kTwoBranches);
  HloComputation& entry = *module->entry_computation();
  auto buffers = ComputeLogicalBuffers(entry);
  REQUIRE(buffers.ok());
  MemoryByComputation memory;
  // p 64 + c 4 fixed; one 64 KiB broadcast, its reduce (64) and the other branch's result (64).
  const int64_t kOneBranch = 64 + 4 + 65536 + 64 + 64;
  const int64_t kBoth = 64 + 4 + 2 * 65536 + 64;

  auto list = ListSchedule(entry, *buffers, memory);
  REQUIRE(list.ok());
  // Greedy: a broadcast first (the most recently readied of two equals), then its reduce, which
  // frees it, then the other branch.
  CHECK(Names(*list) == std::vector<std::string>{"c", "p", "x2", "r2", "x1", "r1", "t"});
  CHECK(*PeakOfSequence(*list, *buffers, memory, true) == kOneBranch);

  auto dfs = DfsSchedule(entry, *buffers);
  REQUIRE(dfs.ok());
  CHECK(Names(*dfs) == std::vector<std::string>{"p", "x1", "c", "r1", "x2", "r2", "t"});
  CHECK(*PeakOfSequence(*dfs, *buffers, memory, true) == kOneBranch);

  auto post = PostOrderSchedule(entry);
  REQUIRE(post.ok());
  CHECK(Names(*post) == std::vector<std::string>{"p", "c", "x1", "x2", "r1", "r2", "t"});
  CHECK(*PeakOfSequence(*post, *buffers, memory, true) == kBoth);
  CHECK(*PeakMemoryOfCurrentOrder(entry) == kBoth);

  // The chooser keeps the least peak; list wins ties.
  auto results = ScheduleModule(*module);
  REQUIRE(results.ok());
  REQUIRE(results->size() == 1);
  const MemorySchedulerResult& r = (*results)[0].second;
  CHECK((*results)[0].first == "main");
  CHECK(r.algorithm == "list");
  CHECK(r.peak_memory_bytes == kOneBranch);
  CHECK(r.list_peak_bytes == kOneBranch);
  CHECK(r.dfs_peak_bytes == kOneBranch);
  CHECK(r.post_order_peak_bytes == kBoth);
  CHECK(module->is_scheduled());
  CHECK(Order(entry) == Names(*list));
  CHECK(*PeakMemoryOfCurrentOrder(entry) == kOneBranch);
  CHECK(VerifyModule(*module).ok());
  // The printed module says it is scheduled and parses back in the same order.
  const std::string text = PrintModule(*module);
  CHECK(absl::StrContains(text, "is_scheduled=true"));
  auto reparsed = Parse(text);
  CHECK(reparsed->is_scheduled());
  CHECK(Order(*reparsed->entry_computation()) == Order(entry));
}

TEST_CASE("the chooser picks the least peak when list scheduling is not the best", "[schedule]") {
  // Greedy list scheduling runs the cheap exp chain first (it frees as much as it defines) and
  // defers the 64 KiB broadcast, so the chain's 1 KiB result is live beside the broadcast. The
  // depth-first order visits the operand with the larger history first (the reduce's 64 KiB),
  // finishing the broadcast while nothing else is live.
  auto module = Parse(R"(
HloModule greedy

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p1: f32[256], p2: f32[16]) -> (f32[256], f32[16]) {
  %p1 = f32[256] parameter(0)
  %p2 = f32[16] parameter(1)
  %c = f32[] constant(0)
  %u1 = f32[256] exponential(%p1)
  %u2 = f32[256] exponential(%u1)
  %x = f32[16,1024] broadcast(%p2), dimensions={0}
  %r = f32[16] reduce(%x, %c), dimensions={1}, to_apply=%add
  ROOT %t = (f32[256], f32[16]) tuple(%u2, %r)
}
)");
  HloComputation& entry = *module->entry_computation();
  auto buffers = ComputeLogicalBuffers(entry);
  REQUIRE(buffers.ok());
  MemoryByComputation memory;
  auto list = ListSchedule(entry, *buffers, memory);
  auto dfs = DfsSchedule(entry, *buffers);
  auto post = PostOrderSchedule(entry);
  REQUIRE(list.ok());
  REQUIRE(dfs.ok());
  REQUIRE(post.ok());
  const int64_t fixed = 1024 + 64 + 4;
  CHECK(Names(*list) == std::vector<std::string>{"c", "p2", "p1", "u1", "u2", "x", "r", "t"});
  CHECK(Names(*dfs) == std::vector<std::string>{"p2", "x", "c", "r", "p1", "u1", "u2", "t"});
  CHECK(*PeakOfSequence(*list, *buffers, memory, true) == fixed + 1024 + 65536 + 64);
  CHECK(*PeakOfSequence(*dfs, *buffers, memory, true) == fixed + 65536 + 64);
  CHECK(*PeakOfSequence(*post, *buffers, memory, true) == fixed + 1024 + 65536 + 64);
  auto results = ScheduleModule(*module);
  REQUIRE(results.ok());
  const MemorySchedulerResult& r = (*results)[0].second;
  CHECK(r.algorithm == "dfs");
  CHECK(r.peak_memory_bytes == fixed + 65536 + 64);
  CHECK(*PeakMemoryOfCurrentOrder(entry) == r.peak_memory_bytes);
  CHECK(VerifyModule(*module).ok());
}

TEST_CASE("schedulers honour control dependencies and schedule while bodies", "[schedule]") {
  auto module = Parse(R"(
HloModule loop

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

%cond (s: (s32[], f32[256])) -> pred[] {
  %s = (s32[], f32[256]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}

%body (s: (s32[], f32[256])) -> (s32[], f32[256]) {
  %s = (s32[], f32[256]) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[256] get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %i2 = s32[] add(%i, %one)
  %big = f32[64,256] broadcast(%v), dimensions={1}
  %e = f32[64,256] exponential(%big)
  %z = f32[] constant(0)
  %r = f32[256] reduce(%e, %z), dimensions={0}, to_apply=%add
  ROOT %out = (s32[], f32[256]) tuple(%i2, %r)
}

ENTRY %main (p: f32[256]) -> f32[256] {
  %p = f32[256] parameter(0)
  %zero = s32[] constant(0)
  %init = (s32[], f32[256]) tuple(%zero, %p)
  %w = (s32[], f32[256]) while(%init), condition=%cond, body=%body
  %late = f32[256] negate(%p), control-predecessors={%w}
  %res = f32[256] get-tuple-element(%w), index=1
  ROOT %sum = f32[256] add(%res, %late)
}
)");
  auto results = ScheduleModule(*module);
  REQUIRE(results.ok());
  std::vector<std::string> names;
  for (const auto& [name, r] : *results) names.push_back(name);
  // Callees first, the entry last; the reducer is not memory-scheduled.
  CHECK(names == std::vector<std::string>{"cond", "body", "main"});
  HloComputation& entry = *module->entry_computation();
  CHECK(IndexOf(entry, "late") > IndexOf(entry, "w"));
  // The body needs its broadcast and exponential at once (2 x 64 KiB) at its peak.
  for (const auto& [name, r] : *results)
    if (name == "body") CHECK(r.peak_memory_bytes >= 2 * 65536);
  // The entry's peak includes what the loop body needs while the while runs.
  for (const auto& [name, r] : *results)
    if (name == "main") CHECK(r.peak_memory_bytes >= 2 * 65536);
  CHECK(VerifyModule(*module).ok());
}

TEST_CASE("hlo-rematerialization lowers the peak under a limit and keeps the outputs", "[schedule][remat]") {
  auto module = Parse(kRemat);
  std::vector<Literal> args;
  for (const auto* p : module->entry_computation()->parameters()) args.push_back(Iota(p->shape(), 1.0));
  auto reference = EvaluateModule(*module, args);
  REQUIRE(reference.ok());

  const int64_t kTemp = 64 * 1024 * 4;
  const int64_t kParams = 4096 + kTemp;
  auto stats = HloRematerializationPass::Rematerialize(*module, /*limit=*/1100000);
  REQUIRE(stats.ok());
  CHECK(stats->peak_before == kParams + 4 * kTemp);  // b, x, y, z while z runs
  CHECK(stats->peak_after == kParams + 3 * kTemp);
  CHECK(stats->rematerialized == 1);
  CHECK(module->is_scheduled());
  REQUIRE(VerifyModule(*module).ok());
  HloComputation& entry = *module->entry_computation();
  // The broadcast is recomputed right before the multiply; the original only feeds x.
  const int64_t clone = IndexOf(entry, "b.remat");
  REQUIRE(clone >= 0);
  CHECK(clone == IndexOf(entry, "w") - 1);
  CHECK(entry.GetInstructionWithName("b")->user_count() == 1);
  CHECK(*PeakMemoryOfCurrentOrder(entry) == kParams + 3 * kTemp);

  auto result = EvaluateModule(*module, args);
  REQUIRE(result.ok());
  CompareResult cmp = CompareLiterals(*result, *reference, 0);
  CHECK(cmp.ok);

  // Under a limit it cannot reach it does what it can and stops; without need it does nothing.
  auto again = Parse(kRemat);
  auto tight = HloRematerializationPass::Rematerialize(*again, /*limit=*/1000);
  REQUIRE(tight.ok());
  CHECK(tight->peak_after == kParams + 3 * kTemp);
  auto loose = Parse(kRemat);
  auto none = HloRematerializationPass::Rematerialize(*loose, /*limit=*/int64_t{1} << 40);
  REQUIRE(none.ok());
  CHECK(none->rematerialized == 0);
  CHECK(none->peak_after == none->peak_before);
}

TEST_CASE("hlo-rematerialization recomputes a fusion and a chain", "[schedule][remat]") {
  auto module = Parse(R"(
HloModule remat_fusion

%fused (fp: f32[1024]) -> f32[64,1024] {
  %fp = f32[1024] parameter(0)
  %fb = f32[64,1024] broadcast(%fp), dimensions={1}
  ROOT %fe = f32[64,1024] exponential(%fb)
}

ENTRY %main (p0: f32[1024], p1: f32[64,1024]) -> f32[64,1024] {
  %p0 = f32[1024] parameter(0)
  %p1 = f32[64,1024] parameter(1)
  %n = f32[1024] negate(%p0)
  %b = f32[64,1024] fusion(%n), kind=kLoop, calls=%fused
  %x = f32[64,1024] add(%b, %p1)
  %y = f32[64,1024] exponential(%x)
  %z = f32[64,1024] add(%x, %y)
  ROOT %w = f32[64,1024] multiply(%z, %b)
}
)");
  std::vector<Literal> args;
  for (const auto* p : module->entry_computation()->parameters()) args.push_back(Iota(p->shape(), 0.5));
  auto reference = EvaluateModule(*module, args);
  REQUIRE(reference.ok());
  auto stats = HloRematerializationPass::Rematerialize(*module, /*limit=*/1100000);
  REQUIRE(stats.ok());
  CHECK(stats->peak_after < stats->peak_before);
  // n dies after b; the fusion's clone needs it again, so n is recomputed too (a chain of 2).
  CHECK(stats->rematerialized == 2);
  REQUIRE(VerifyModule(*module).ok());
  const HloInstruction* clone = module->entry_computation()->GetInstructionWithName("b.remat");
  REQUIRE(clone != nullptr);
  CHECK(clone->called_computations()[0] != module->entry_computation()->GetInstructionWithName("b")->called_computations()[0]);
  CHECK(clone->called_computations()[0]->FusionInstruction() == clone);
  auto result = EvaluateModule(*module, args);
  REQUIRE(result.ok());
  CHECK(CompareLiterals(*result, *reference, 0).ok);
}

// The order a memory scheduler could well produce: the all-reduce issued right before its done.
void LateStartOrder(HloModule& module) {
  HloComputation& entry = *module.entry_computation();
  std::vector<HloInstruction*> order;
  for (const char* n : {"p0", "p1", "x1", "x2", "x3", "x4", "ars", "ard", "y", "t"})
    order.push_back(entry.GetInstructionWithName(n));
  REQUIRE(entry.SetInstructionOrder(order).ok());
  module.set_is_scheduled(true);
  REQUIRE(VerifyModule(module).ok());
}

TEST_CASE("latency-hiding-scheduler moves an async start early and its done late", "[schedule][lhs]") {
  auto module = Parse(kAsync);
  LateStartOrder(*module);
  HloComputation& entry = *module->entry_computation();
  auto moved = LatencyHidingSchedulerPass::ScheduleAsync(*module, /*limit=*/0, /*async_latency=*/50);
  REQUIRE(moved.ok());
  CHECK(*moved == 1);
  // The chain costs 4 < 50: the start goes as early as its operand allows, before the chain.
  CHECK(Order(entry) == std::vector<std::string>{"p0", "ars", "p1", "x1", "x2", "x3", "x4", "ard", "y", "t"});
  REQUIRE(VerifyModule(*module).ok());

  // A latency of 2 is covered by two cheap instructions: the start moves back just that far.
  auto short_latency = Parse(kAsync);
  LateStartOrder(*short_latency);
  REQUIRE(LatencyHidingSchedulerPass::ScheduleAsync(*short_latency, 0, /*async_latency=*/2).ok());
  CHECK(Order(*short_latency->entry_computation()) ==
        std::vector<std::string>{"p0", "p1", "x1", "x2", "ars", "x3", "x4", "ard", "y", "t"});

  // A done with independent work after it sinks to just before its first user.
  auto early_done = Parse(kAsync);
  {
    HloComputation& e = *early_done->entry_computation();
    std::vector<HloInstruction*> order;
    for (const char* n : {"p0", "p1", "ars", "ard", "x1", "x2", "x3", "x4", "y", "t"})
      order.push_back(e.GetInstructionWithName(n));
    REQUIRE(e.SetInstructionOrder(order).ok());
    early_done->set_is_scheduled(true);
  }
  REQUIRE(LatencyHidingSchedulerPass::ScheduleAsync(*early_done, 0, 50).ok());
  CHECK(Order(*early_done->entry_computation()) ==
        std::vector<std::string>{"p0", "ars", "p1", "x1", "x2", "x3", "x4", "ard", "y", "t"});
}

TEST_CASE("latency-hiding-scheduler keeps within the memory limit", "[schedule][lhs]") {
  // The start's 256 KiB result would be live across the big temporaries if it went first.
  auto module = Parse(R"(
HloModule async_mem

%sum (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}

ENTRY %main (p0: f32[64,1024], p1: f32[1024]) -> f32[64,1024] {
  %p0 = f32[64,1024] parameter(0)
  %p1 = f32[1024] parameter(1)
  %ars = f32[64,1024] all-reduce-start(%p0), replica_groups={}, to_apply=%sum
  %big = f32[64,1024] broadcast(%p1), dimensions={1}
  %e = f32[64,1024] exponential(%big)
  %ard = f32[64,1024] all-reduce-done(%ars)
  ROOT %r = f32[64,1024] add(%ard, %e)
}
)");
  REQUIRE(ScheduleModule(*module).ok());
  HloComputation& entry = *module->entry_computation();
  const int64_t peak = *PeakMemoryOfCurrentOrder(entry);
  REQUIRE(LatencyHidingSchedulerPass::ScheduleAsync(*module, /*limit=*/peak, 50).ok());
  CHECK(*PeakMemoryOfCurrentOrder(entry) <= peak);
  REQUIRE(VerifyModule(*module).ok());
  auto unlimited = Parse(PrintModule(*module));
  REQUIRE(LatencyHidingSchedulerPass::ScheduleAsync(*unlimited, 0, 50).ok());
  CHECK(IndexOf(*unlimited->entry_computation(), "ars") < IndexOf(*unlimited->entry_computation(), "big"));
}

TEST_CASE("the scheduling passes are registered and set is_scheduled", "[schedule]") {
  for (const char* pass : {"hlo-memory-scheduler", "hlo-rematerialization", "latency-hiding-scheduler"}) {
    INFO(pass);
    auto module = Parse(kTwoBranches);
    auto changed = RunPass(*module, pass);
    REQUIRE(changed.ok());
    CHECK(*changed);
    CHECK(module->is_scheduled());
    CHECK(VerifyModule(*module).ok());
  }
  auto module = Parse(kRemat);
  auto changed = RunPass(*module, "hlo-rematerialization", {{"memory_limit_bytes", int64_t{1100000}}});
  REQUIRE(changed.ok());
  CHECK(*changed);
  CHECK(module->entry_computation()->GetInstructionWithName("b.remat") != nullptr);
}

namespace {

double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    default: return IsF8OrF4(t) ? 1e-2 : 1e-5;
  }
}

}  // namespace

TEST_CASE("scheduled corpus modules verify and evaluate the same", "[schedule][corpus]") {
  std::vector<std::string> files = SmallCorpusModules();
  REQUIRE(files.size() >= 20);
  int evaluated = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    const std::string name = fs::path(file).filename().string();
    INFO("module " << name);
    auto original = ParseHloModuleFile(file);
    REQUIRE(original.ok());
    auto inputs = LoadCorpusInputs(**original, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    auto reference = EvaluateModule(**original, *inputs);
    for (const char* pass : {"hlo-memory-scheduler", "hlo-rematerialization", "latency-hiding-scheduler"}) {
      INFO("pass " << pass);
      auto module = ParseHloModuleFile(file);
      REQUIRE(module.ok());
      std::map<std::string, OptionValue> options;
      // A limit below every module's peak makes rematerialization work wherever it can.
      if (std::string(pass) == "hlo-rematerialization") options["memory_limit_bytes"] = int64_t{1};
      auto changed = RunPass(**module, pass, options);
      INFO("status " << (changed.ok() ? "ok" : std::string(changed.status().message())));
      REQUIRE(changed.ok());
      CHECK((*module)->is_scheduled());
      absl::Status verified = VerifyModule(**module);
      INFO("verifier: " << verified.message());
      REQUIRE(verified.ok());
      auto reparsed = ParseHloModule(PrintModule(**module));
      REQUIRE(reparsed.ok());
      CHECK((*reparsed)->is_scheduled());
      if (!reference.ok()) continue;
      auto result = EvaluateModule(**module, *inputs);
      INFO("evaluation: " << (result.ok() ? "ok" : std::string(result.status().message())));
      REQUIRE(result.ok());
      const std::vector<const Literal*> ref_leaves = FlattenLeaves(*reference);
      const std::vector<const Literal*> leaves = FlattenLeaves(*result);
      REQUIRE(leaves.size() == ref_leaves.size());
      for (size_t i = 0; i < leaves.size(); ++i) {
        CompareResult cmp = CompareLiterals(*leaves[i], *ref_leaves[i], Tolerance(ref_leaves[i]->element_type()));
        INFO("output " << i << ": " << cmp.message << " error " << cmp.error);
        CHECK(cmp.ok);
      }
    }
    if (reference.ok()) ++evaluated;
  }
  CHECK(evaluated >= 20);
}

TEST_CASE("ScheduleReport gives one line per sequential computation", "[schedule]") {
  auto module = Parse(kTwoBranches);
  auto report = ScheduleReport(*module);
  REQUIRE(report.ok());
  CHECK(*report ==
        "hlo-memory-scheduler: module=two_branches computation=main algorithm=list peak_bytes=65732 (64.19KiB) "
        "list=65732 dfs=65732 post-order=131204\n");
}

}  // namespace hloc

namespace hloc {

// Benchmark helper, not a test (hidden; run with: hloc_unit_tests "[.schedule-bench]"): for every
// module XLA optimized and scheduled (tests/corpus/*.after_optimizations.txt), the peak of XLA's
// own schedule and of ours (each scheduler and the chosen one) in the same logical-buffer model,
// entry computation, parameters and constants included. Also checks that scheduling,
// rematerialization and latency hiding keep these modules valid.
TEST_CASE("schedule benchmark: our peak beside XLA's schedule", "[.schedule-bench]") {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(std::string(HLOC_TESTS_DIR) + "/corpus")) {
    const std::string name = e.path().filename().string();
    if (absl::EndsWith(name, ".after_optimizations.txt")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  std::printf("%-52s %12s %12s %12s %12s %12s %-10s\n", "module", "xla_order", "ours", "list", "dfs", "post-order",
              "chosen");
  for (const std::string& file : files) {
    const std::string name = fs::path(file).filename().string();
    INFO(name);
    auto module = ParseHloModuleFile(file);
    if (!module.ok()) {
      std::printf("%-52s parse error: %s\n", name.c_str(), std::string(module.status().message()).c_str());
      continue;
    }
    auto xla = PeakMemoryOfCurrentOrder(*(*module)->entry_computation());
    REQUIRE(xla.ok());
    auto results = ScheduleModule(**module);
    REQUIRE(results.ok());
    const MemorySchedulerResult& r = results->back().second;  // the entry comes last
    std::printf("%-52s %12lld %12lld %12lld %12lld %12lld %-10s\n", name.c_str(), (long long)*xla,
                (long long)r.peak_memory_bytes, (long long)r.list_peak_bytes, (long long)r.dfs_peak_bytes,
                (long long)r.post_order_peak_bytes, r.algorithm.c_str());
    REQUIRE(VerifyModule(**module).ok());
    auto lhs = LatencyHidingSchedulerPass::ScheduleAsync(**module, 0, 50);
    REQUIRE(lhs.ok());
    REQUIRE(VerifyModule(**module).ok());
    auto remat = HloRematerializationPass::Rematerialize(**module, r.peak_memory_bytes * 3 / 4);
    REQUIRE(remat.ok());
    REQUIRE(VerifyModule(**module).ok());
    std::printf("%-52s   remat to 3/4: %lld -> %lld (%lld recomputed)\n", "", (long long)remat->peak_before,
                (long long)remat->peak_after, (long long)remat->rematerialized);
  }
}

}  // namespace hloc
