// Buffer assignment: HloDataflowAnalysis, HloAliasAnalysis, BufferAssignment and its dump, on
// hand-written modules with exact expectations, on XLA's own optimized corpus modules (our dump
// beside XLA's), and on every small corpus module after copy-insertion (the replay checker:
// no read sees bytes another buffer overwrote).
#include <algorithm>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "buffers/buffer_assignment.h"
#include "buffers/buffer_assignment_checker.h"
#include "buffers/buffer_report.h"
#include "buffers/hlo_alias_analysis.h"
#include "buffers/hlo_dataflow_analysis.h"
#include "corpus_inputs.h"
#include "engine/pass.h"
#include "engine/pass_manager.h"
#include "engine/pipeline.h"
#include "engine/profile_loader.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "ir/hlo_parser.h"
#include "ir/hlo_printer.h"
#include "ir/verifier.h"
#include "schedule/hlo_scheduling.h"

namespace hloc {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  if (!m.ok()) FAIL("parse failed: " << m.status().message());
  return std::move(*m);
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<BufferAssignment> Assign(const HloModule& m, int64_t alignment = 64, bool share = true) {
  BufferAssignmentOptions o;
  o.alignment = alignment;
  o.share_operand_buffers = share;
  o.reuse_output_allocations = share;
  auto ba = AssignBuffers(m, o);
  if (!ba.ok()) FAIL("assign failed: " << ba.status().message());
  absl::Status check = CheckBufferAssignment(m, **ba);
  if (!check.ok()) FAIL("checker: " << check.message() << "\n" << (*ba)->ToString());
  return std::move(*ba);
}

BufferAllocation::Slice SliceOf(const BufferAssignment& ba, const HloModule& m, const std::string& name,
                                const ShapeIndex& index = {}) {
  const HloInstruction* inst = nullptr;
  for (const auto& c : m.computations())
    if (auto* i = c->GetInstructionWithName(name)) inst = i;
  REQUIRE(inst != nullptr);
  auto s = ba.GetUniqueSlice(inst, index);
  if (!s.ok()) FAIL(name << ": " << s.status().message());
  return *s;
}

// A dump with the value ids dropped and each allocation's lines sorted, allocations as a sorted
// list: what must agree with XLA's when the same module is assigned the same way.
std::vector<std::string> NormalizeDump(const std::string& dump) {
  std::vector<std::string> blocks;
  std::string header;
  std::vector<std::string> values;
  auto flush = [&] {
    if (header.empty()) return;
    std::sort(values.begin(), values.end());
    std::string b = header;
    for (auto& v : values) b += "\n" + v;
    blocks.push_back(b);
    values.clear();
  };
  for (absl::string_view sv : absl::StrSplit(dump, '\n')) {
    std::string line(sv);
    if (line.rfind("allocation ", 0) == 0) {
      flush();
      header = line.substr(line.find(':'));  // drop "allocation N"
    } else if (line.rfind(" value: <", 0) == 0) {
      size_t sp = line.find(' ', 9);
      values.push_back(" value: <" + line.substr(sp + 1));
    }
  }
  flush();
  std::sort(blocks.begin(), blocks.end());
  return blocks;
}

TEST_CASE("dataflow: tuples, get-tuple-element and bitcasts forward values", "[buffers]") {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[2,2] bitcast(a)
  t = (f32[4], f32[2,2]) tuple(a, b)
  g = f32[2,2] get-tuple-element(t), index=1
  ROOT n = f32[2,2] negate(g)
})");
  auto df = HloDataflowAnalysis::Run(*m);
  REQUIRE(df.ok());
  const HloComputation* e = m->entry_computation();
  const HloInstruction* a = e->GetInstructionWithName("a");
  const HloInstruction* g = e->GetInstructionWithName("g");
  const HloInstruction* t = e->GetInstructionWithName("t");
  CHECK((*df)->ValueIsDefinedAt(a));
  CHECK(!(*df)->ValueIsDefinedAt(e->GetInstructionWithName("b")));
  CHECK((*df)->ValueIsDefinedAt(t, {}));
  CHECK(!(*df)->ValueIsDefinedAt(t, {0}));
  CHECK((*df)->GetValueSet(g, {}) == (*df)->GetValueSet(a, {}));
  const HloValue& va = (*df)->GetValueDefinedAt(a);
  CHECK(va.positions().size() == 5);  // a, b, t{0}, t{1}, g
  REQUIRE(va.uses().size() == 1);     // only negate reads it
  CHECK(va.uses()[0].instruction->name() == "n");
  CHECK(!va.live_out_of_module());
}

TEST_CASE("dataflow and alias analysis: while phis and conditional results", "[buffers]") {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  y = f32[4] negate(x)
  ROOT t = (s32[], f32[4]) tuple(i, y)
}
cond {
  s = (s32[], f32[4]) parameter(0)
  ROOT c = pred[] constant(false)
}
br0 {
  a = f32[4] parameter(0)
  ROOT e = f32[4] exponential(a)
}
br1 {
  a = f32[4] parameter(0)
  ROOT l = f32[4] log(a)
}
ENTRY e {
  p = f32[4] parameter(0)
  k = s32[] parameter(1)
  b = pred[] parameter(2)
  q = f32[4] negate(p)
  init = (s32[], f32[4]) tuple(k, q)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(w), index=1
  ROOT c = f32[4] conditional(b, r, r), true_computation=br0, false_computation=br1
})");
  auto alias = HloAliasAnalysis::Run(*m);
  REQUIRE(alias.ok());
  const HloDataflowAnalysis& df = (*alias)->dataflow();
  const HloInstruction* w = m->entry_computation()->GetInstructionWithName("w");
  const HloComputation* body = m->GetComputationWithName("body");
  CHECK(df.GetValueDefinedAt(w, {1}).is_phi());
  CHECK(df.GetValueDefinedAt(body->parameter_instruction(0), {1}).is_phi());
  CHECK(df.context(body) == ComputationKind::kSequential);
  CHECK(df.caller(body) == w);
  // State element 1: q (init), the three phis and y (body root) share one buffer.
  auto at = (*alias)->ComputeBuffersAt(w, {1});
  REQUIRE(at.size() == 1);
  std::vector<std::string> kinds;
  for (const HloValue* v : at[0]->values())
    kinds.push_back(std::string(HloOpcodeString(v->defining_instruction()->opcode())));
  std::sort(kinds.begin(), kinds.end());
  CHECK(kinds == std::vector<std::string>{"negate", "negate", "parameter", "parameter", "while"});
  // The conditional's result (a phi) shares with both branch roots, not with its operand.
  const HloInstruction* c = m->entry_computation()->root_instruction();
  auto cb = (*alias)->ComputeBuffersAt(c);
  REQUIRE(cb.size() == 1);
  CHECK(cb[0]->values().size() == 3);
  CHECK((*alias)->ComputeBuffersAt(m->GetComputationWithName("br0")->root_instruction())[0] == cb[0]);
  CHECK((*alias)->ComputeBuffersAt(m->GetComputationWithName("br0")->parameter_instruction(0))[0] ==
        (*alias)->ComputeBuffersAt(w, {1})[0]);
  auto ba = Assign(*m);
  CHECK(SliceOf(*ba, *m, "e") == SliceOf(*ba, *m, "l"));
  CHECK(ba->allocations()[SliceOf(*ba, *m, "e").index].maybe_live_out());
}

TEST_CASE("buffer assignment: temps share bytes when their lifetimes do not overlap", "[buffers]") {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] exponential(a)
  c = f32[4] exponential(b)
  ROOT d = f32[4] exponential(c)
})");
  auto ba = Assign(*m, 64, /*share=*/false);
  auto sa = SliceOf(*ba, *m, "a"), sb = SliceOf(*ba, *m, "b"), sc = SliceOf(*ba, *m, "c");
  auto sp = SliceOf(*ba, *m, "p"), sd = SliceOf(*ba, *m, "d");
  CHECK(sa.index == sb.index);
  CHECK(sa.index == sc.index);
  CHECK(sa.offset == sc.offset);  // a is dead before c is written
  CHECK(sa.offset != sb.offset);
  const BufferAllocation& temp = ba->allocations()[sa.index];
  CHECK(temp.is_preallocated_temp());
  CHECK(temp.size() == 64 + 16);  // two 16-byte slots, 64-byte aligned
  CHECK(ba->stats().temp_bytes == 80);
  CHECK(ba->allocations()[sp.index].is_entry_computation_parameter());
  CHECK(ba->allocations()[sd.index].maybe_live_out());
  CHECK(sd.index != sa.index);
  CHECK(ba->ToString() ==
        "BufferAssignment:\n"
        "allocation 0: size 16, page 0, output shape is |f32[4]|, maybe-live-out:\n"
        " value: <4 d @0> (size=16,offset=0): f32[4]{0}\n"
        "allocation 1: size 16, page 0, parameter 0, shape |f32[4]| at ShapeIndex {}:\n"
        " value: <0 p @0> (size=16,offset=0): f32[4]{0}\n"
        "allocation 2: size 80, page 0, preallocated-temp:\n"
        " value: <1 a @0> (size=16,offset=64): f32[4]{0}\n"
        " value: <2 b @0> (size=16,offset=0): f32[4]{0}\n"
        " value: <3 c @0> (size=16,offset=64): f32[4]{0}\n");
}

TEST_CASE("buffer assignment: elementwise ops take over the buffer of an operand that dies there",
          "[buffers]") {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] exponential(a)
  c = f32[4] negate(b)
  r = f32[2] slice(b), slice={[0:2]}
  ROOT t = (f32[4], f32[2]) tuple(c, r)
})");
  auto ba = Assign(*m, 64);
  // a -> b in place; b is still read by the slice after c, so c gets its own output buffer.
  CHECK(SliceOf(*ba, *m, "a") == SliceOf(*ba, *m, "b"));
  CHECK(SliceOf(*ba, *m, "b").index != SliceOf(*ba, *m, "c").index);
  // ... and a/b, dead before the output tuple's pointer table is written, live in its
  // allocation (16 bytes each) rather than in a temp.
  CHECK(SliceOf(*ba, *m, "b").index == SliceOf(*ba, *m, "t").index);
  CHECK(ba->stats().temp_bytes == 0);
  auto m2 = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] exponential(a)
  ROOT c = f32[4] negate(b)
})");
  auto ba2 = Assign(*m2, 64);
  // The whole chain lives in the output buffer: no temp (the parameter is never written).
  CHECK(SliceOf(*ba2, *m2, "a") == SliceOf(*ba2, *m2, "c"));
  CHECK(SliceOf(*ba2, *m2, "p") != SliceOf(*ba2, *m2, "c"));
  CHECK(ba2->stats().temp_bytes == 0);
  CHECK(ba2->allocations()[SliceOf(*ba2, *m2, "a").index].maybe_live_out());
}

TEST_CASE("buffer assignment: unscheduled modules and read-only buffers written in place are errors",
          "[buffers]") {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  ROOT p = f32[4] parameter(0)
})");
  CHECK(!AssignBuffers(*m, {}).ok());
  auto w = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(p, u, i)
})");
  auto r = AssignBuffers(*w, {});
  REQUIRE(!r.ok());
  CHECK(absl::StrContains(r.status().message(), "copy-insertion"));
}

TEST_CASE("the replay checker catches a value overwritten while still needed", "[buffers]") {
  // Without copy-insertion the update writes over x, which the add still reads.
  auto m = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  x = f32[8] exponential(p)
  d = f32[8] dynamic-update-slice(x, u, i)
  ROOT s = f32[8] add(d, x)
})");
  auto ba = AssignBuffers(*m, {});
  REQUIRE(ba.ok());
  absl::Status check = CheckBufferAssignment(*m, **ba);
  REQUIRE(!check.ok());
  CHECK(absl::StrContains(check.message(), "s reads x"));
}

TEST_CASE("fusions, reducers and tuples: thread-local values, fused values have no slice", "[buffers]") {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  fp = f32[8] parameter(0)
  fe = f32[8] exponential(fp)
  z = f32[] constant(0)
  ROOT fr = f32[] reduce(fe, z), dimensions={0}, to_apply=add
}
ENTRY e {
  p = f32[8] parameter(0)
  f = f32[] fusion(p), kind=kInput, calls=fused
  n = f32[8] negate(p)
  ROOT t = (f32[], f32[8]) tuple(f, n)
})");
  auto ba = Assign(*m);
  const HloComputation* fused = m->GetComputationWithName("fused");
  CHECK(!ba->HasAllocationAt(fused->GetInstructionWithName("fe"), {}));
  auto ss = SliceOf(*ba, *m, "s");
  CHECK(ba->allocations()[ss.index].is_thread_local());
  auto st = SliceOf(*ba, *m, "t");
  CHECK(ba->allocations()[st.index].is_tuple());
  CHECK(st.size == 16);
  CHECK(SliceOf(*ba, *m, "t", {1}) == SliceOf(*ba, *m, "n"));
  auto dump = BufferAssignmentDump(*m);
  REQUIRE(dump.ok());
  CHECK(absl::StrContains(*dump, "output shape is |(f32[], f32[8])|, maybe-live-out:"));
  CHECK(absl::StrContains(*dump, ", thread-local:"));
  auto totals = ParseBufferAssignmentDump(*dump);
  REQUIRE(totals.ok());
  CHECK(totals->parameter_bytes == 32);
  CHECK(totals->output_bytes == ba->stats().output_bytes);
  CHECK(totals->total_bytes == ba->stats().total_allocation_bytes);
}

TEST_CASE("buffer assignment matches XLA's dump of XLA's own optimized modules", "[buffers][corpus]") {
  // XLA:GPU packs temps 256-byte aligned. Modules listed here must agree allocation for allocation
  // (ids aside); the others must at least get a valid assignment (checked by the replay).
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus";
  int exact = 0, total = 0;
  std::vector<std::string> differing;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string f = e.path().filename().string();
    const std::string suffix = ".small.after_optimizations.txt";
    if (f.size() < suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    std::string stem = f.substr(0, f.size() - std::string(".after_optimizations.txt").size());
    std::string xla_dump = ReadText(dir + "/" + stem + ".after_optimizations-buffer-assignment.txt");
    if (xla_dump.empty()) continue;
    INFO(stem);
    auto m = Parse(ReadText(e.path().string()));
    auto ba = Assign(*m, 256);
    ++total;
    if (NormalizeDump(ba->ToString()) == NormalizeDump(xla_dump)) ++exact;
    else differing.push_back(stem);
  }
  std::sort(differing.begin(), differing.end());
  WARN("identical to XLA's dump (ids aside): " << exact << " of " << total
       << "; differing: " << absl::StrJoin(differing, ", "));
  CHECK(total >= 20);
}

absl::StatusOr<bool> RunPass(HloModule& module, const std::string& name) {
  const PassInfo* info = PassRegistry::Global().Find(name);
  if (info == nullptr) return absl::NotFoundError(absl::StrCat("no pass ", name));
  PassOptions options;
  for (const PassOptionSpec& spec : info->options) options.Set(spec.name, spec.default_value);
  PassContext context;
  return info->factory(options)->Run(module, context);
}

// Schedules every non-fused computation in operand-before-user post order (what the lead's
// "schedule in instruction order" means for modules that have not been through a scheduler).
void ScheduleInPostOrder(HloModule& m) {
  for (const auto& c : m.computations()) {
    if (c->IsFusionComputation()) continue;
    REQUIRE(c->SetInstructionOrder(c->MakeInstructionPostOrder()).ok());
  }
  m.set_is_scheduled(true);
}

int CountOpcode(const HloModule& m, HloOpcode op) {
  int n = 0;
  for (const auto& c : m.computations())
    for (const auto& i : c->instructions()) n += i->opcode() == op;
  return n;
}

std::unique_ptr<HloModule> CopyInsertAndAssign(const std::string& text, std::unique_ptr<BufferAssignment>* out,
                                               bool* changed = nullptr) {
  auto m = Parse(text);
  auto r = RunPass(*m, "copy-insertion");
  if (!r.ok()) FAIL("copy-insertion: " << r.status().message());
  if (changed) *changed = *r;
  absl::Status v = VerifyModule(*m);
  if (!v.ok()) FAIL("verifier: " << v.message() << "\n" << PrintModule(*m));
  ScheduleInPostOrder(*m);
  *out = Assign(*m);
  return m;
}

TEST_CASE("while loop: read-only init gets copies, the state shares one buffer per element", "[buffers][copy]") {
  const char* text = R"(
HloModule m
body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  x2 = f32[8] multiply(x, x)
  ROOT t = (s32[], f32[8]) tuple(i2, x2)
}
cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  zero = s32[] constant(0)
  p = f32[8] parameter(0)
  init = (s32[], f32[8]) tuple(zero, p)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
})";
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(text, &ba);
  // The constant and the parameter are read-only: both are copied into the loop state; the body
  // writes in place (elementwise ops may overwrite the state they read), so it needs no copy.
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 2);
  const HloComputation* body = m->GetComputationWithName("body");
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 2);
  for (const auto& i : body->instructions()) CHECK(i->opcode() != HloOpcode::kCopy);
  auto sw = SliceOf(*ba, *m, "w", {1}), sx2 = SliceOf(*ba, *m, "x2"), sx = SliceOf(*ba, *m, "x");
  auto sr = SliceOf(*ba, *m, "r"), sp = SliceOf(*ba, *m, "p");
  CHECK(sw == sx2);
  CHECK(sw == sx);
  CHECK(sw == sr);
  CHECK(sw.index != sp.index);
  CHECK(ba->allocations()[sw.index].maybe_live_out());
  auto si = SliceOf(*ba, *m, "i2"), sw0 = SliceOf(*ba, *m, "w", {0});
  CHECK(si == sw0);
  CHECK(ba->allocations()[si.index].is_preallocated_temp());
  CHECK(absl::StrContains(ba->ToString(), "(phi)"));
  // A second run finds nothing to do.
  auto again = RunPass(*m, "copy-insertion");
  REQUIRE(again.ok());
  CHECK_FALSE(*again);
}

TEST_CASE("while loop: swapped state elements and state read after being overwritten get copies",
          "[buffers][copy]") {
  const char* text = R"(
HloModule m
body {
  s = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(s), index=0
  b = f32[4] get-tuple-element(s), index=1
  ROOT t = (f32[4], f32[4]) tuple(b, a)
}
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT c = pred[] constant(false)
}
ENTRY e {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  x = f32[4] negate(p)
  y = f32[4] negate(q)
  init = (f32[4], f32[4]) tuple(x, y)
  w = (f32[4], f32[4]) while(init), condition=cond, body=body
  w0 = f32[4] get-tuple-element(w), index=0
  ROOT s = f32[4] add(w0, x)
})";
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(text, &ba);
  // A swap of two state elements in place needs a temp: two copies at the body root plus one
  // that reads the first element before the second copy overwrites it (control edges order
  // them); and one copy of x at the init (x is read after the loop).
  const HloComputation* body = m->GetComputationWithName("body");
  int body_copies = 0, ordered = 0;
  for (const auto& i : body->instructions()) {
    body_copies += i->opcode() == HloOpcode::kCopy;
    ordered += !i->control_predecessors().empty();
  }
  CHECK(body_copies == 3);
  CHECK(ordered >= 1);
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 4);
  CHECK(SliceOf(*ba, *m, "x") != SliceOf(*ba, *m, "w", {0}));
  CHECK(SliceOf(*ba, *m, "y") == SliceOf(*ba, *m, "w", {1}));
}

TEST_CASE("while loop: loop-invariant parameters keep their buffer; writing them later needs a copy",
          "[buffers][copy]") {
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(R"(
HloModule m
body {
  s = (f32[8], f32[8]) parameter(0)
  x = f32[8] get-tuple-element(s), index=0
  w = f32[8] get-tuple-element(s), index=1
  y = f32[8] multiply(x, w)
  ROOT t = (f32[8], f32[8]) tuple(y, w)
}
cond {
  s = (f32[8], f32[8]) parameter(0)
  ROOT c = pred[] constant(false)
}
ENTRY e {
  x = f32[8] parameter(0)
  w = f32[8] parameter(1)
  u = f32[2] parameter(2)
  i = s32[] parameter(3)
  init = (f32[8], f32[8]) tuple(x, w)
  loop = (f32[8], f32[8]) while(init), condition=cond, body=body
  r0 = f32[8] get-tuple-element(loop), index=0
  r1 = f32[8] get-tuple-element(loop), index=1
  d = f32[8] dynamic-update-slice(r1, u, i)
  ROOT t = (f32[8], f32[8]) tuple(r0, d)
})", &ba);
  // x is copied into the loop (the body writes it); w is not (never written) but the update
  // of the loop's w afterwards would write the parameter: copied there.
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 2);
  const HloComputation* e = m->entry_computation();
  CHECK(e->GetInstructionWithName("d")->operand(0)->opcode() == HloOpcode::kCopy);
  auto sw = ba->GetUniqueSlice(e->parameter_instruction(1), {});
  REQUIRE(sw.ok());
  CHECK(*sw == SliceOf(*ba, *m, "loop", {1}));
  CHECK(ba->allocations()[sw->index].is_entry_computation_parameter());
  CHECK(!ba->allocations()[sw->index].maybe_live_out());
}

TEST_CASE("dynamic-update-slice in place: copies only when the operand is still needed", "[buffers][copy]") {
  std::unique_ptr<BufferAssignment> ba;
  // The operand dies at the update: it is written in place.
  auto m = CopyInsertAndAssign(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  x = f32[8] exponential(p)
  ROOT d = f32[8] dynamic-update-slice(x, u, i)
})", &ba);
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 0);
  CHECK(SliceOf(*ba, *m, "x") == SliceOf(*ba, *m, "d"));
  // The operand is read after the update: copied first.
  auto m2 = CopyInsertAndAssign(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  x = f32[8] exponential(p)
  d = f32[8] dynamic-update-slice(x, u, i)
  ROOT s = f32[8] add(d, x)
})", &ba);
  CHECK(CountOpcode(*m2, HloOpcode::kCopy) == 1);
  CHECK(SliceOf(*ba, *m2, "x") != SliceOf(*ba, *m2, "d"));
  // An entry parameter is read-only: copied.
  auto m3 = CopyInsertAndAssign(R"(
HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(p, u, i)
})", &ba);
  CHECK(CountOpcode(*m3, HloOpcode::kCopy) == 1);
  // ... unless the module donates it to that output.
  auto m4 = CopyInsertAndAssign(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[8] parameter(0)
  u = f32[2] parameter(1)
  i = s32[] parameter(2)
  ROOT d = f32[8] dynamic-update-slice(p, u, i)
})", &ba);
  CHECK(CountOpcode(*m4, HloOpcode::kCopy) == 1);  // donated parameters stay read-only for in-place ops
  auto m5 = CopyInsertAndAssign(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[8] parameter(0)
  ROOT n = f32[8] negate(p)
})", &ba);
  CHECK(CountOpcode(*m5, HloOpcode::kCopy) == 0);
  auto sp = SliceOf(*ba, *m5, "p");
  CHECK(sp == SliceOf(*ba, *m5, "n"));
  CHECK(ba->allocations()[sp.index].is_entry_computation_parameter());
  CHECK(ba->allocations()[sp.index].maybe_live_out());
}

TEST_CASE("dynamic-update-slice of while state in place needs no copy", "[buffers][copy]") {
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(R"(
HloModule m
body {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  buf = f32[16] get-tuple-element(s), index=1
  v = f32[1] broadcast(f32[] constant(1)), dimensions={}
  upd = f32[16] dynamic-update-slice(buf, v, i)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT t = (s32[], f32[16]) tuple(i2, upd)
}
cond {
  s = (s32[], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(16)), direction=LT
}
ENTRY e {
  z = f32[16] broadcast(f32[] constant(0)), dimensions={}
  init = (s32[], f32[16]) tuple(s32[] constant(0), z)
  w = (s32[], f32[16]) while(init), condition=cond, body=body
  ROOT r = f32[16] get-tuple-element(w), index=1
})", &ba);
  // Only the constant loop counter is copied into the state. The update slice reads the old
  // counter and nothing orders that read before the add that writes the new one over it: a
  // control edge does (cheaper than a copy). The buffer itself is updated in place.
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 1);
  const HloInstruction* i2 = m->GetComputationWithName("body")->GetInstructionWithName("i2");
  REQUIRE(i2->control_predecessors().size() == 1);
  CHECK(i2->control_predecessors()[0]->name() == "upd");
  CHECK(SliceOf(*ba, *m, "upd") == SliceOf(*ba, *m, "z"));
  CHECK(SliceOf(*ba, *m, "upd") == SliceOf(*ba, *m, "r"));
}

TEST_CASE("conditional: branch roots that are parameters or constants get copies", "[buffers][copy]") {
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(R"(
HloModule m
on_true {
  x = f32[4] parameter(0)
  ROOT e = f32[4] exponential(x)
}
on_false {
  ROOT x = f32[4] parameter(0)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[4] parameter(1)
  b = f32[4] negate(a)
  ROOT c = f32[4] conditional(p, b, b), true_computation=on_true, false_computation=on_false
})", &ba);
  const HloComputation* f = m->GetComputationWithName("on_false");
  CHECK(f->root_instruction()->opcode() == HloOpcode::kCopy);
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 1);
  auto sc = SliceOf(*ba, *m, "c");
  CHECK(sc == SliceOf(*ba, *m, "e"));
  CHECK(sc == ba->GetUniqueSlice(f->root_instruction(), {}).value());
  CHECK(sc != SliceOf(*ba, *m, "b"));
  CHECK(ba->allocations()[sc.index].maybe_live_out());
}

TEST_CASE("entry root: parameters, constants and repeated values in the output get copies", "[buffers][copy]") {
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  n = f32[4] negate(p)
  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(p, c, n, n)
})", &ba);
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 3);
  const HloInstruction* root = m->entry_computation()->root_instruction();
  // Every output leaf has its own live-out buffer; the tuple table is the "output shape" one.
  std::vector<BufferAllocation::Slice> leaves;
  for (int64_t i = 0; i < 4; ++i) {
    auto s = ba->GetUniqueSlice(root, {i});
    REQUIRE(s.ok());
    CHECK(ba->allocations()[s->index].maybe_live_out());
    CHECK(!ba->allocations()[s->index].is_entry_computation_parameter());
    CHECK(!ba->allocations()[s->index].is_constant());
    for (const auto& o : leaves) CHECK(o.index != s->index);
    leaves.push_back(*s);
  }
  CHECK(absl::StrContains(ba->ToString(), "output shape is |(f32[4], f32[4], f32[4], f32[4])|"));
  // Without copy insertion the parameter itself would be the output: its allocation says so.
  auto raw = Parse(R"(
HloModule m, is_scheduled=true
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  ROOT t = (f32[4], f32[4]) tuple(p, c)
})");
  auto rba = Assign(*raw);
  std::string dump = rba->ToString();
  CHECK(absl::StrContains(dump, "parameter 0, shape |f32[4]| at ShapeIndex {}, maybe-live-out:"));
  CHECK(absl::StrContains(dump, "constant, maybe-live-out:"));
}

TEST_CASE("redundant copies are removed, needed ones kept", "[buffers][copy]") {
  bool changed = false;
  std::unique_ptr<BufferAssignment> ba;
  auto m = CopyInsertAndAssign(R"(
HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  n = f32[4] negate(p)
  c1 = f32[4] copy(n)
  c2 = f32[4] copy(p)
  ROOT t = (f32[4], f32[4]) tuple(c1, c2)
})", &ba, &changed);
  CHECK(changed);
  CHECK(CountOpcode(*m, HloOpcode::kCopy) == 1);  // copy(n) goes, copy(p) stays
  CHECK(m->entry_computation()->GetInstructionWithName("c2") != nullptr);
}

double Tolerance(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::F16: return 1e-3;
    case PrimitiveType::BF16: return 1e-2;
    default: return IsF8OrF4(t) ? 1e-2 : 1e-5;
  }
}

TEST_CASE("small corpus: copy-insertion keeps the outputs; every module gets a valid assignment",
          "[buffers][copy][corpus]") {
  std::vector<std::string> files = SmallCorpusModules();
  REQUIRE(files.size() >= 20);
  int evaluated = 0;
  for (const std::string& file : files) {
    const std::string stem = file.substr(0, file.size() - std::string("before_optimizations.txt").size());
    INFO(fs::path(file).filename().string());
    auto module = ParseHloModuleFile(file);
    REQUIRE(module.ok());
    HloModule& m = **module;
    // One call site per computation, as buffer assignment needs (XLA runs this before too).
    REQUIRE(RunPass(m, "flatten-call-graph").ok());
    auto inputs = LoadCorpusInputs(m, stem + "inputs.npz");
    REQUIRE(inputs.ok());
    auto reference = EvaluateModule(m, *inputs);
    auto r = RunPass(m, "copy-insertion");
    INFO("copy-insertion: " << (r.ok() ? "ok" : std::string(r.status().message())));
    REQUIRE(r.ok());
    absl::Status v = VerifyModule(m);
    INFO("verifier: " << v.message());
    REQUIRE(v.ok());
    auto again = RunPass(m, "copy-insertion");
    REQUIRE(again.ok());
    CHECK_FALSE(*again);
    if (reference.ok()) {
      auto result = EvaluateModule(m, *inputs);
      REQUIRE(result.ok());
      const auto ref_leaves = FlattenLeaves(*reference);
      const auto leaves = FlattenLeaves(*result);
      REQUIRE(leaves.size() == ref_leaves.size());
      for (size_t i = 0; i < leaves.size(); ++i) {
        CompareResult cmp = CompareLiterals(*leaves[i], *ref_leaves[i], Tolerance(ref_leaves[i]->element_type()));
        INFO("output " << i << ": " << cmp.message);
        CHECK(cmp.ok);
      }
      ++evaluated;
    }
    // Our memory scheduler's order, then plain post order (both must give valid assignments).
    auto scheduled = ParseHloModule(PrintModule(m));
    REQUIRE(scheduled.ok());
    auto sched = ScheduleModule(**scheduled);
    INFO("scheduler: " << (sched.ok() ? "ok" : std::string(sched.status().message())));
    REQUIRE(sched.ok());
    {
      auto ba = AssignBuffers(**scheduled, {});
      INFO("assign (memory scheduler): " << (ba.ok() ? "ok" : std::string(ba.status().message())));
      REQUIRE(ba.ok());
      absl::Status check = CheckBufferAssignment(**scheduled, **ba);
      INFO("checker (memory scheduler): " << check.message());
      CHECK(check.ok());
    }
    ScheduleInPostOrder(m);
    REQUIRE(VerifyModule(m).ok());
    for (int64_t alignment : {64, 256}) {
      BufferAssignmentOptions o;
      o.alignment = alignment;
      auto ba = AssignBuffers(m, o);
      INFO("assign: " << (ba.ok() ? "ok" : std::string(ba.status().message())));
      REQUIRE(ba.ok());
      absl::Status check = CheckBufferAssignment(m, **ba);
      INFO("checker: " << check.message());
      CHECK(check.ok());
      for (const BufferAllocation& a : (*ba)->allocations())
        for (const auto& assigned : a.assigned()) CHECK(assigned.offset % alignment == 0);
    }
  }
  CHECK(evaluated >= 20);
}

TEST_CASE("small corpus through the whole GPU and CPU pipelines: valid assignments", "[buffers][corpus][pipeline]") {
  // The pipelines end with copy-insertion and scheduling, so their output is what buffer
  // assignment gets in a real compile. A pipeline failing in another stage is reported, not
  // held against buffer assignment.
  const std::string src = HLOC_SOURCE_DIR;
  struct Config { const char* pipeline; const char* profile; int64_t alignment; };
  int assigned = 0;
  for (const Config& config : {Config{"pipelines/gpu.yaml", "configs/h200.yaml", 256},
                               Config{"pipelines/cpu.yaml", "configs/cpu.yaml", 64}}) {
    auto pipeline = LoadPipelineFile(src + "/" + config.pipeline);
    REQUIRE(pipeline.ok());
    auto profile = LoadProfileFile(src + "/" + config.profile);
    REQUIRE(profile.ok());
    REQUIRE(ApplyPatches(*profile, *pipeline).ok());
    for (const std::string& file : SmallCorpusModules()) {
      INFO(config.pipeline << " " << fs::path(file).filename().string());
      auto module = ParseHloModuleFile(file);
      REQUIRE(module.ok());
      PassContext context;
      context.profile = &profile->hardware;
      auto run = RunPipeline(*pipeline, **module, context);
      if (!run.ok()) {
        WARN(config.pipeline << " failed on " << file << ": " << run.status().message());
        continue;
      }
      if (!(*module)->is_scheduled()) ScheduleInPostOrder(**module);
      BufferAssignmentOptions o;
      o.alignment = config.alignment;
      auto ba = AssignBuffers(**module, o);
      INFO("assign: " << (ba.ok() ? "ok" : std::string(ba.status().message())));
      REQUIRE(ba.ok());
      absl::Status check = CheckBufferAssignment(**module, **ba);
      INFO("checker: " << check.message());
      CHECK(check.ok());
      ++assigned;
    }
  }
  CHECK(assigned >= 40);
}

TEST_CASE("large corpus: copy-insertion and buffer assignment hold on the big modules too",
          "[buffers][copy][corpus]") {
  const std::string dir = std::string(HLOC_TESTS_DIR) + "/corpus";
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (!absl::EndsWith(name, ".large.before_optimizations.txt")) continue;
    INFO(name);
    auto module = ParseHloModuleFile(e.path().string());
    REQUIRE(module.ok());
    auto r = RunPass(**module, "copy-insertion");
    INFO("copy-insertion: " << (r.ok() ? "ok" : std::string(r.status().message())));
    REQUIRE(r.ok());
    REQUIRE(VerifyModule(**module).ok());
    ScheduleInPostOrder(**module);
    auto ba = AssignBuffers(**module, {});
    INFO("assign: " << (ba.ok() ? "ok" : std::string(ba.status().message())));
    REQUIRE(ba.ok());
    absl::Status check = CheckBufferAssignment(**module, **ba);
    INFO("checker: " << check.message());
    CHECK(check.ok());
    ++n;
  }
  CHECK(n >= 20);
}

TEST_CASE("every corpus module (small and large) as XLA optimized it gets a valid assignment",
          "[buffers][corpus]") {
  auto rows = CompareTempBytesWithXla(std::string(HLOC_TESTS_DIR) + "/corpus", 256);
  REQUIRE(rows.size() >= 40);
  for (const TempBytesRow& r : rows) {
    INFO(r.module << ": " << r.error);
    CHECK(r.error.empty());
    CHECK(r.ours_temp >= 0);
  }
}

TEST_CASE("copy-insertion and buffer assignment on XLA's parser test modules: results or errors, no crash",
          "[buffers][copy][xla-cases]") {
  std::vector<std::string> files;
  for (const char* sub : {"valid", "valid_other"}) {
    const std::string dir = std::string(HLOC_TESTS_DIR) + "/xla-hlo-cases/" + sub;
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".hlo") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  int assigned = 0, checked = 0;
  for (const std::string& file : files) {
    INFO(file);
    auto module = ParseHloModuleFile(file);
    if (!module.ok() || !VerifyModule(**module).ok()) continue;
    auto r = RunPass(**module, "copy-insertion");
    if (!r.ok()) continue;  // e.g. a computation called both sequentially and as a reducer
    absl::Status v = VerifyModule(**module);
    INFO("verifier after copy-insertion: " << v.message());
    CHECK(v.ok());
    ScheduleInPostOrder(**module);
    auto ba = AssignBuffers(**module, {});
    if (!ba.ok()) continue;
    ++assigned;
    absl::Status check = CheckBufferAssignment(**module, **ba);
    INFO("checker: " << check.message());
    CHECK(check.ok());
    checked += check.ok();
  }
  WARN("xla-hlo-cases: " << assigned << " modules assigned, " << checked << " pass the replay checker");
}

// Not a test: `hloc_unit_tests "[.temp-bytes-report]"` prints the table of our temp bytes beside
// XLA's for every corpus module (the lead's benchmark table).
TEST_CASE("temp bytes beside XLA's", "[.temp-bytes-report]") {
  auto rows = CompareTempBytesWithXla(std::string(HLOC_TESTS_DIR) + "/corpus", 256);
  std::cout << FormatTempBytesTable(rows);
}

}  // namespace
}  // namespace hloc
