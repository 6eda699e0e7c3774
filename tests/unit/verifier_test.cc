// The verifier on hand-built modules: one valid module, then one broken invariant per test,
// each checking that the error names the computation and instruction and says what is wrong.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <random>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/hlo_parser.h"
#include "ir/module.h"
#include "ir/verifier.h"

#ifndef HLOC_TESTS_DIR
#define HLOC_TESTS_DIR "tests"
#endif

namespace hloc {
namespace {

using P = PrimitiveType;
using O = HloOpcode;

Shape S(PrimitiveType t, std::vector<int64_t> dims) { return Shape(t, std::move(dims)); }
Shape T(std::vector<Shape> parts) { return Shape::Tuple(std::move(parts)); }

struct Builder {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("test");

  HloComputation* Comp(const std::string& name, bool entry = false) {
    return module->AddComputation(std::make_unique<HloComputation>(name), entry);
  }
  HloInstruction* Add(HloComputation* c, HloOpcode op, Shape shape, std::vector<HloInstruction*> operands,
                      const std::string& name) {
    auto inst = std::make_unique<HloInstruction>(op, std::move(shape), name);
    for (HloInstruction* o : operands) inst->AppendOperand(o);
    return c->AddInstruction(std::move(inst));
  }
  HloInstruction* Param(HloComputation* c, int64_t n, Shape shape, const std::string& name) {
    auto inst = std::make_unique<HloInstruction>(O::kParameter, std::move(shape), name);
    inst->mutable_attrs().parameter_number = n;
    return c->AddInstruction(std::move(inst));
  }
  // name(a: t[], b: t[]) -> op(a, b)
  HloComputation* Reducer(const std::string& name, PrimitiveType t, HloOpcode op = O::kAdd) {
    HloComputation* c = Comp(name);
    HloInstruction* a = Param(c, 0, S(t, {}), name + ".a");
    HloInstruction* b = Param(c, 1, S(t, {}), name + ".b");
    c->set_root_instruction(Add(c, op, op == O::kCompare ? S(P::PRED, {}) : S(t, {}), {a, b}, name + ".r"));
    return c;
  }
};

// entry(x: f32[4], y: f32[4]) -> (f32[4], f32[]):
//   sum = add(x, y); total = reduce(sum, zero) over add; ROOT tuple(sum, total)
struct ValidModule : Builder {
  HloComputation* entry;
  HloInstruction *x, *y, *sum, *zero, *total, *root;
  ValidModule() {
    HloComputation* add = Reducer("add", P::F32);
    entry = Comp("main", /*entry=*/true);
    x = Param(entry, 0, S(P::F32, {4}), "x");
    y = Param(entry, 1, S(P::F32, {4}), "y");
    sum = Add(entry, O::kAdd, S(P::F32, {4}), {x, y}, "sum");
    zero = Add(entry, O::kConstant, S(P::F32, {}), {}, "zero");
    zero->mutable_attrs().literal = Literal::ScalarDouble(P::F32, 0);
    total = Add(entry, O::kReduce, S(P::F32, {}), {sum, zero}, "total");
    total->mutable_attrs().dimensions = {0};
    total->mutable_called_computations().push_back(add);
    root = Add(entry, O::kTuple, T({S(P::F32, {4}), S(P::F32, {})}), {sum, total}, "root");
    entry->set_root_instruction(root);
  }
};

// The verifier's message, or "" when the module verifies.
std::string Verify(const HloModule& m, const VerifierOptions& options = {}) {
  absl::Status s = VerifyModule(m, options);
  return s.ok() ? "" : std::string(s.message());
}

TEST_CASE("verifier accepts a valid module", "[verifier]") {
  ValidModule m;
  CHECK(Verify(*m.module) == "");
}

TEST_CASE("verifier: inferred shape mismatch names the instruction", "[verifier]") {
  ValidModule m;
  m.sum->mutable_shape() = S(P::F32, {5});
  std::string e = Verify(*m.module);
  CHECK_THAT(e, Catch::Contains("computation main, instruction sum (add)"));
  CHECK_THAT(e, Catch::Contains("Expected instruction to have shape equal to f32[4], actual shape is f32[5]"));
}

TEST_CASE("verifier: operands from another computation", "[verifier]") {
  ValidModule m;
  HloComputation* other = m.Comp("other");
  HloInstruction* p = m.Param(other, 0, S(P::F32, {4}), "q");
  HloInstruction* neg = m.Add(other, O::kNegate, S(P::F32, {4}), {m.x}, "neg");
  other->set_root_instruction(neg);
  (void)p;
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction neg (negate): operand 0 (x) is in a different computation"));
}

TEST_CASE("verifier: missing root", "[verifier]") {
  ValidModule m;
  m.entry->set_root_instruction(nullptr);
  CHECK_THAT(Verify(*m.module), Catch::Contains("computation main: computation has no ROOT instruction"));
}

TEST_CASE("verifier: parameter numbers 0..n-1 without gaps or duplicates", "[verifier]") {
  SECTION("gap") {
    ValidModule m;
    m.y->mutable_attrs().parameter_number = 2;
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction y (parameter): parameter number 2 is out of range"));
  }
  SECTION("duplicate") {
    ValidModule m;
    m.y->mutable_attrs().parameter_number = 0;
    CHECK_THAT(Verify(*m.module), Catch::Contains("parameter number 0 is also used by x"));
  }
}

TEST_CASE("verifier: called computations must exist and fit", "[verifier]") {
  SECTION("computation outside the module") {
    ValidModule m;
    HloComputation stray("stray");
    m.total->mutable_called_computations()[0] = &stray;
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction total (reduce): calls a computation that is not in the module"));
  }
  SECTION("reducer of the wrong type") {
    ValidModule m;
    m.total->mutable_called_computations()[0] = m.Reducer("iadd", P::S32);
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction total (reduce): Reduction function's"));
  }
  SECTION("calls on a non-caller opcode") {
    ValidModule m;
    m.sum->mutable_called_computations().push_back(m.Reducer("extra", P::F32));
    CHECK_THAT(Verify(*m.module), Catch::Contains("called computations specified for non-caller instruction"));
  }
  SECTION("call graph cycle") {
    ValidModule m;
    HloComputation* loop = m.Comp("loop");
    HloInstruction* p = m.Param(loop, 0, S(P::F32, {}), "lp");
    HloInstruction* call = m.Add(loop, O::kCall, S(P::F32, {}), {p}, "again");
    call->mutable_called_computations().push_back(loop);
    loop->set_root_instruction(call);
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction again (call): calls computation loop, which calls itself"));
  }
}

TEST_CASE("verifier: while and conditional signatures", "[verifier]") {
  Builder b;
  Shape loop = T({S(P::S32, {}), S(P::F32, {3})});
  HloComputation* cond = b.Comp("cond");
  HloInstruction* cp = b.Param(cond, 0, loop, "cp");
  HloInstruction* i = b.Add(cond, O::kGetTupleElement, S(P::S32, {}), {cp}, "i");
  HloInstruction* ten = b.Add(cond, O::kConstant, S(P::S32, {}), {}, "ten");
  ten->mutable_attrs().literal = Literal::ScalarInt(P::S32, 10);
  HloInstruction* lt = b.Add(cond, O::kCompare, S(P::PRED, {}), {i, ten}, "lt");
  lt->mutable_attrs().comparison_direction = ComparisonDirection::kLt;
  cond->set_root_instruction(lt);
  HloComputation* body = b.Comp("body");
  HloInstruction* bp = b.Param(body, 0, loop, "bp");
  body->set_root_instruction(bp);
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* init = b.Param(entry, 0, loop, "init");
  HloInstruction* w = b.Add(entry, O::kWhile, loop, {init}, "w");
  w->mutable_called_computations() = {cond, body};
  entry->set_root_instruction(w);
  CHECK(Verify(*b.module) == "");

  SECTION("condition must return pred[]") {
    cond->set_root_instruction(i);
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction w (while): Conditional computation shape does not lead to a scalar predicate"));
  }
  SECTION("body must return the loop shape") {
    HloInstruction* j = b.Add(body, O::kGetTupleElement, S(P::S32, {}), {bp}, "j");
    body->set_root_instruction(j);
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction w (while): While body returns s32[] but takes (s32[], f32[3])"));
  }
  SECTION("comparison type must suit the operands") {
    lt->mutable_attrs().comparison_type = ComparisonType::kUnsigned;
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction lt (compare): expected comparison type SIGNED"));
  }
}

TEST_CASE("verifier: conditional branches take their operands and agree on the result", "[verifier]") {
  Builder b;
  HloComputation* neg = b.Comp("neg");
  HloInstruction* np = b.Param(neg, 0, S(P::F32, {}), "np");
  neg->set_root_instruction(b.Add(neg, O::kNegate, S(P::F32, {}), {np}, "nr"));
  HloComputation* id = b.Comp("id");
  HloInstruction* ip = b.Param(id, 0, S(P::F32, {}), "ip");
  id->set_root_instruction(ip);
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* p = b.Param(entry, 0, S(P::PRED, {}), "p");
  HloInstruction* a = b.Param(entry, 1, S(P::F32, {}), "a");
  HloInstruction* cnd = b.Add(entry, O::kConditional, S(P::F32, {}), {p, a, a}, "cnd");
  cnd->mutable_called_computations() = {neg, id};
  entry->set_root_instruction(cnd);
  CHECK(Verify(*b.module) == "");
  SECTION("branch result disagreement") {
    HloComputation* other = b.Comp("other");
    HloInstruction* op = b.Param(other, 0, S(P::F32, {}), "op");
    other->set_root_instruction(b.Add(other, O::kConvert, S(P::S32, {}), {op}, "cv"));
    cnd->mutable_called_computations()[1] = other;
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction cnd (conditional): the result of branch 0"));
  }
  SECTION("three branches on a pred selector") {
    cnd->mutable_called_computations().push_back(id);
    cnd->AppendOperand(a);
    CHECK_THAT(Verify(*b.module), Catch::Contains("needs exactly 2 branches"));
  }
}

// main(x) -> fusion(x), fused computation: negate(parameter)
struct FusionModule : Builder {
  HloComputation *fused, *entry;
  HloInstruction *fp, *fneg, *x, *fusion;
  FusionModule() {
    fused = Comp("fused");
    fp = Param(fused, 0, S(P::F32, {4}), "fp");
    fneg = Add(fused, O::kNegate, S(P::F32, {4}), {fp}, "fneg");
    fused->set_root_instruction(fneg);
    entry = Comp("main", true);
    x = Param(entry, 0, S(P::F32, {4}), "x");
    fusion = Add(entry, O::kFusion, S(P::F32, {4}), {x}, "fusion");
    fusion->mutable_called_computations().push_back(fused);
    fused->SetFusionInstruction(fusion);
    entry->set_root_instruction(fusion);
  }
};

TEST_CASE("verifier: fusion invariants", "[verifier]") {
  SECTION("valid") {
    FusionModule m;
    CHECK(Verify(*m.module) == "");
  }
  SECTION("parameter shape differs from the operand") {
    FusionModule m;
    m.fp->mutable_shape() = S(P::F32, {5});
    m.fneg->mutable_shape() = S(P::F32, {5});
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction fusion (fusion): Shape mismatch between parameter number 0"));
  }
  SECTION("fused computation owned by two fusions") {
    FusionModule m;
    HloInstruction* f2 = m.Add(m.entry, O::kFusion, S(P::F32, {4}), {m.x}, "fusion2");
    f2->mutable_called_computations().push_back(m.fused);
    m.entry->set_root_instruction(m.Add(m.entry, O::kTuple, T({S(P::F32, {4}), S(P::F32, {4})}), {m.fusion, f2}, "t"));
    CHECK_THAT(Verify(*m.module), Catch::Contains("instruction fusion2 (fusion): calls fused computation fused, which is called by 2 instructions (also by fusion)"));
  }
  SECTION("fused computation does not point back") {
    FusionModule m;
    m.fused->SetFusionInstruction(nullptr);
    CHECK_THAT(Verify(*m.module), Catch::Contains("does not name this instruction as its fusion instruction"));
  }
  SECTION("dead fused instruction") {
    FusionModule m;
    m.Add(m.fused, O::kAbs, S(P::F32, {4}), {m.fp}, "dead");
    CHECK_THAT(Verify(*m.module), Catch::Contains("non-root instruction dead in fused must have users"));
  }
}

TEST_CASE("verifier: tuple index out of range", "[verifier]") {
  ValidModule m;
  HloInstruction* gte = m.Add(m.entry, O::kGetTupleElement, S(P::F32, {}), {m.root}, "gte");
  gte->mutable_attrs().tuple_index = 2;
  m.entry->set_root_instruction(gte);
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction gte (get-tuple-element): Cannot infer shape: attempt to index out of tuple bounds: 2 >= 2"));
}

TEST_CASE("verifier: cycles are found without recursion", "[verifier]") {
  ValidModule m;
  // a long chain, then closed into a loop
  HloInstruction* prev = m.sum;
  std::vector<HloInstruction*> chain;
  for (int i = 0; i < 100000; ++i) {
    prev = m.Add(m.entry, O::kNegate, S(P::F32, {4}), {prev}, "n" + std::to_string(i));
    chain.push_back(prev);
  }
  CHECK(Verify(*m.module) == "");
  chain[0]->ReplaceOperandWith(0, chain.back());
  CHECK_THAT(Verify(*m.module), Catch::Contains("is part of a cycle"));
}

TEST_CASE("verifier: entry computation layout must match", "[verifier]") {
  ValidModule m;
  ComputationLayout layout;
  layout.parameter_shapes = {S(P::F32, {4}), S(P::F32, {4})};
  layout.result_shape = T({S(P::F32, {4}), S(P::F32, {})});
  m.module->config().entry_computation_layout = layout;
  CHECK(Verify(*m.module) == "");
  m.module->config().entry_computation_layout->parameter_shapes[1] = S(P::F32, {3});
  CHECK_THAT(Verify(*m.module), Catch::Contains("Shape of the entry computation parameter 1 is f32[4]"));
  m.module->config().entry_computation_layout->parameter_shapes.pop_back();
  CHECK_THAT(Verify(*m.module), Catch::Contains("Number of parameters in entry computation layout (1)"));
  m.module->config().entry_computation_layout = layout;
  m.module->config().entry_computation_layout->result_shape = S(P::F32, {4});
  CHECK_THAT(Verify(*m.module), Catch::Contains("Shape of the root instruction of entry computation"));
}

TEST_CASE("verifier: layout_sensitive compares entry layouts", "[verifier]") {
  ValidModule m;
  ComputationLayout layout;
  Shape transposed = S(P::F32, {4});
  layout.parameter_shapes = {transposed, transposed};
  layout.result_shape = T({S(P::F32, {4}), S(P::F32, {})});
  m.module->config().entry_computation_layout = layout;
  VerifierOptions opts;
  opts.layout_sensitive = true;
  CHECK(Verify(*m.module, opts) == "");
  HloInstruction* p2 = m.Param(m.entry, 2, S(P::F32, {2, 3}), "z");
  (void)p2;
  Shape l = S(P::F32, {2, 3});
  l.mutable_layout().minor_to_major = {0, 1};
  m.module->config().entry_computation_layout->parameter_shapes.push_back(l);
  CHECK(Verify(*m.module) == "");
  CHECK_THAT(Verify(*m.module, opts), Catch::Contains("entry computation parameter 2"));
}

TEST_CASE("verifier: instruction names are unique in the module", "[verifier]") {
  ValidModule m;
  m.total->set_name("sum");
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction sum (reduce): instruction name is not unique"));
}

TEST_CASE("verifier: mixed precision and implicit broadcasts", "[verifier]") {
  Builder b;
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* f = b.Param(entry, 0, S(P::F32, {2}), "f");
  HloInstruction* h = b.Param(entry, 1, S(P::BF16, {2}), "h");
  HloInstruction* add = b.Add(entry, O::kAdd, S(P::F32, {2}), {f, h}, "mixed");
  entry->set_root_instruction(add);
  CHECK_THAT(Verify(*b.module), Catch::Contains("instruction mixed (add): Seen floating point types of different precisions"));
  VerifierOptions mixed;
  mixed.allow_mixed_precision = true;
  CHECK(Verify(*b.module, mixed) == "");
  add->mutable_shape() = S(P::BF16, {2});  // a new value may come out in bf16 when mixing is allowed
  CHECK(Verify(*b.module, mixed) == "");
  CHECK_THAT(Verify(*b.module), Catch::Contains("mixed"));

  Builder b2;
  HloComputation* e2 = b2.Comp("main", true);
  HloInstruction* v = b2.Param(e2, 0, S(P::F32, {2}), "v");
  HloInstruction* s = b2.Param(e2, 1, S(P::F32, {}), "s");
  e2->set_root_instruction(b2.Add(e2, O::kMultiply, S(P::F32, {2}), {v, s}, "mul"));
  CHECK_THAT(Verify(*b2.module), Catch::Contains("instruction mul (multiply): Implicit broadcast is not allowed in HLO"));
}

TEST_CASE("verifier: async ops", "[verifier]") {
  Builder b;
  HloComputation* wrapped = b.Comp("wrapped");
  HloInstruction* wp = b.Param(wrapped, 0, S(P::F32, {10}), "wp");
  HloInstruction* cc = b.Add(wrapped, O::kCustomCall, S(P::F32, {20}), {wp}, "cc");
  cc->mutable_attrs().custom_call_target = "foo";
  wrapped->set_root_instruction(cc);
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* x = b.Param(entry, 0, S(P::F32, {10}), "x");
  Shape async = T({T({S(P::F32, {10})}), S(P::F32, {20}), S(P::S32, {})});
  HloInstruction* start = b.Add(entry, O::kAsyncStart, async, {x}, "start");
  start->mutable_called_computations().push_back(wrapped);
  HloInstruction* done = b.Add(entry, O::kAsyncDone, S(P::F32, {20}), {start}, "done");
  entry->set_root_instruction(done);
  CHECK(Verify(*b.module) == "");
  SECTION("async shape needs the result element") {
    start->mutable_shape() = T({T({S(P::F32, {10})})});
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction start (async-start): The async-start expects the async shape to be a tuple of at least two elements"));
  }
  SECTION("thread names agree") {
    start->mutable_attrs().async_execution_thread = "parallel";
    CHECK_THAT(Verify(*b.module), Catch::Contains("expects the same async thread name"));
    wrapped->set_execution_thread("parallel");
    CHECK(Verify(*b.module) == "");
  }
  SECTION("one async-start per wrapped computation") {
    HloInstruction* start2 = b.Add(entry, O::kAsyncStart, async, {x}, "start2");
    start2->mutable_called_computations().push_back(wrapped);
    HloInstruction* done2 = b.Add(entry, O::kAsyncDone, S(P::F32, {20}), {start2}, "done2");
    entry->set_root_instruction(b.Add(entry, O::kTuple, T({S(P::F32, {20}), S(P::F32, {20})}), {done, done2}, "t"));
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction start2 (async-start): calls computation wrapped, which is called by more than one async op"));
  }
  SECTION("a start needs its done") {
    entry->set_root_instruction(start);
    done->DetachFromOperandsAndUsers();
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction start (async-start): the async-start instruction requires one consumer, found 0"));
  }
}

TEST_CASE("verifier: send/recv pairing and channels", "[verifier]") {
  Builder b;
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* tok = b.Add(entry, O::kAfterAll, Shape::Token(), {}, "tok");
  HloInstruction* v = b.Param(entry, 0, S(P::F32, {}), "v");
  HloInstruction* send = b.Add(entry, O::kSend, T({S(P::F32, {}), S(P::U32, {}), Shape::Token()}), {v, tok}, "send");
  send->mutable_attrs().channel_id = 7;
  HloInstruction* sd = b.Add(entry, O::kSendDone, Shape::Token(), {send}, "send-done");
  sd->mutable_attrs().channel_id = 7;
  entry->set_root_instruction(sd);
  CHECK(Verify(*b.module) == "");
  sd->mutable_attrs().channel_id = 8;
  CHECK_THAT(Verify(*b.module), Catch::Contains("instruction send-done (send-done): expected the same channel id as send"));
}

TEST_CASE("verifier: schedule order in scheduled modules", "[verifier]") {
  ValidModule m;
  m.module->set_is_scheduled(true);
  CHECK(Verify(*m.module) == "");
  // zero is defined before total but after sum; make total use a later instruction.
  HloInstruction* late = m.Add(m.entry, O::kConstant, S(P::F32, {}), {}, "late");
  late->mutable_attrs().literal = Literal::ScalarDouble(P::F32, 1);
  m.total->ReplaceOperandWith(1, late);
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction total (reduce): the schedule"));
  m.module->set_is_scheduled(false);
  CHECK(Verify(*m.module) == "");
}

TEST_CASE("verifier: input/output aliasing and buffer donors", "[verifier]") {
  ValidModule m;
  m.module->config().input_output_alias = {InputOutputAlias{{0}, 1, {}, false}};
  CHECK(Verify(*m.module) == "");
  m.module->config().input_output_alias.push_back(InputOutputAlias{{1}, 1, {}, false});
  CHECK_THAT(Verify(*m.module), Catch::Contains("parameter 1 at {} is aliased more than once"));
  m.module->config().input_output_alias = {InputOutputAlias{{0}, 3, {}, false}};
  CHECK_THAT(Verify(*m.module), Catch::Contains("aliasing names parameter 3 but the entry has 2 parameters"));
  m.module->config().input_output_alias = {InputOutputAlias{{5}, 0, {}, false}};
  CHECK_THAT(Verify(*m.module), Catch::Contains("names output index {5}"));
  m.module->config().input_output_alias = {InputOutputAlias{{0}, 0, {}, false}};
  m.module->config().buffer_donor = {BufferDonor{0, {}}};
  CHECK_THAT(Verify(*m.module), Catch::Contains("is both a buffer donor and aliased"));
}

TEST_CASE("verifier: execution threads of called computations", "[verifier]") {
  ValidModule m;
  m.total->called_computations()[0]->set_execution_thread("other");
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction total (reduce): called computation add runs on thread other"));
}

TEST_CASE("verifier: unbounded dynamism and layouts", "[verifier]") {
  ValidModule m;
  Shape dyn = S(P::F32, {4});
  dyn.mutable_dimensions()[0] = Shape::kUnboundedSize;
  dyn.mutable_dynamic_dimensions() = {true};
  m.x->mutable_shape() = dyn;
  CHECK_THAT(Verify(*m.module), Catch::Contains("instruction x (parameter): unbounded dynamism"));
  ValidModule m2;
  m2.y->mutable_shape().mutable_layout().minor_to_major = {0, 0};
  CHECK_THAT(Verify(*m2.module), Catch::Contains("instruction y (parameter): shape f32[4]{0,0} has mismatched minor-to-major size"));
}

TEST_CASE("verifier: collectives check replica groups against the module", "[verifier]") {
  Builder b;
  b.module->config().replica_count = 4;
  HloComputation* add = b.Reducer("add", P::F32);
  HloComputation* entry = b.Comp("main", true);
  HloInstruction* x = b.Param(entry, 0, S(P::F32, {8}), "x");
  HloInstruction* ar = b.Add(entry, O::kAllReduce, S(P::F32, {8}), {x}, "ar");
  ar->mutable_called_computations().push_back(add);
  ar->mutable_attrs().replica_groups.groups = {{0, 1}, {2, 3}};
  entry->set_root_instruction(ar);
  CHECK(Verify(*b.module) == "");
  ar->mutable_attrs().replica_groups.groups = {{0, 1}, {1, 3}};
  CHECK_THAT(Verify(*b.module), Catch::Contains("instruction ar (all-reduce): Replica 1 is repeated"));
  ar->mutable_attrs().replica_groups.groups = {{0, 1}};
  CHECK_THAT(Verify(*b.module), Catch::Contains("should contain 4 ids"));
  // iota form [2,2]<=[4]: {{0,1},{2,3}}
  ar->mutable_attrs().replica_groups.groups.clear();
  ar->mutable_attrs().replica_groups.iota = IotaTileAssignment{{2, 2}, {4}, {}};
  CHECK(Verify(*b.module) == "");
}

TEST_CASE("verifier: options", "[verifier]") {
  ValidModule m;
  m.sum->mutable_shape() = S(P::F32, {5});
  VerifierOptions structure_only;
  structure_only.verify_shapes = false;
  CHECK_THAT(Verify(*m.module, structure_only), Catch::Contains("Implicit broadcast"));  // still no broadcasts
  m.sum->mutable_shape() = S(P::F32, {4});
  // layout_sensitive: a get-tuple-element hands its element through with the same layout.
  HloInstruction* gte = m.Add(m.entry, O::kGetTupleElement, S(P::F32, {4}), {m.root}, "gte");
  m.entry->set_root_instruction(gte);
  VerifierOptions layouts;
  layouts.layout_sensitive = true;
  CHECK(Verify(*m.module, layouts) == "");
  gte->mutable_shape() = S(P::F32, {4});
  gte->mutable_shape().mutable_layout().tiles.push_back(Tile{{128}});
  CHECK(Verify(*m.module, layouts) == "");  // only minor-to-major matters
}

// XLA rejects these cases of its parser test (tests/xla-hlo-cases/invalid) while building
// instructions; hloc's parser rejects them too, and the verifier must as well when the same IR
// is built by hand (passes may build it).
TEST_CASE("verifier: semantic checks behind XLA's rejected parser cases", "[verifier]") {
  SECTION("044 non-tuple infeed") {
    Builder b;
    HloComputation* e = b.Comp("main", true);
    HloInstruction* tok = b.Add(e, O::kAfterAll, Shape::Token(), {}, "token0");
    e->set_root_instruction(b.Add(e, O::kInfeed, S(P::PRED, {}), {tok}, "infeed"));
    CHECK_THAT(Verify(*b.module), Catch::Contains("instruction infeed (infeed): infeed must have a (data, token[]) tuple shape"));
  }
  SECTION("051/052 custom-call operand layout constraints") {
    Builder b;
    HloComputation* e = b.Comp("main", true);
    HloInstruction* p0 = b.Param(e, 0, S(P::F32, {42, 2, 3}), "p0");
    HloInstruction* p1 = b.Param(e, 1, S(P::F32, {123, 4}), "p1");
    HloInstruction* cc = b.Add(e, O::kCustomCall, S(P::F32, {1, 2, 3}), {p0, p1}, "custom-call");
    cc->mutable_attrs().custom_call_target = "baz";
    e->set_root_instruction(cc);
    cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{S(P::F32, {42, 2, 3})};
    CHECK_THAT(Verify(*b.module), Catch::Contains("Expected 2 operand layout constraints, 1 given"));
    cc->mutable_attrs().operand_layout_constraints = std::vector<Shape>{S(P::F32, {42, 2, 3}), S(P::F32, {555, 5})};
    CHECK_THAT(Verify(*b.module), Catch::Contains("Operand 1 is not compatible with operand shape f32[123,4]"));
  }
  SECTION("063/064 conditional selector") {
    Builder b;
    HloComputation* br = b.Comp("branch0");
    br->set_root_instruction(b.Param(br, 0, S(P::F32, {4}), "tparam"));
    HloComputation* e = b.Comp("main", true);
    HloInstruction* p0 = b.Param(e, 0, S(P::F32, {4}), "p0");
    HloInstruction* b0 = b.Param(e, 1, S(P::S32, {2}), "b0");
    HloInstruction* cnd = b.Add(e, O::kConditional, S(P::F32, {4}), {b0, p0, p0}, "conditional");
    cnd->mutable_called_computations() = {br, br};
    e->set_root_instruction(cnd);
    CHECK_THAT(Verify(*b.module), Catch::Contains("The first operand of conditional must be a scalar"));
    b0->mutable_shape() = S(P::F32, {});
    CHECK_THAT(Verify(*b.module), Catch::Contains("must be a scalar of S32. Got type f32"));
  }
  SECTION("070-079 async wrappers") {
    Builder b;
    HloComputation* w0 = b.Comp("async_wrapped.0");
    HloInstruction* a0 = b.Param(w0, 0, S(P::F32, {10}), "async_param.0");
    w0->set_root_instruction(b.Add(w0, O::kCustomCall, S(P::F32, {20}), {a0}, "custom-call.0"));
    HloComputation* w1 = b.Comp("async_wrapped.1");
    HloInstruction* a1 = b.Param(w1, 0, S(P::F32, {10}), "async_param.1");
    w1->set_root_instruction(b.Add(w1, O::kCustomCall, S(P::F32, {20}), {a1}, "custom-call.1"));
    HloComputation* e = b.Comp("main", true);
    HloInstruction* p0 = b.Param(e, 0, S(P::F32, {10}), "p0");
    Shape async = T({T({S(P::F32, {10})}), S(P::F32, {20}), S(P::S32, {})});
    HloInstruction* start = b.Add(e, O::kAsyncStart, async, {p0}, "async-start");
    start->mutable_called_computations() = {w0};
    HloInstruction* update = b.Add(e, O::kAsyncUpdate, async, {start}, "async-update");
    update->mutable_called_computations() = {w0};
    HloInstruction* done = b.Add(e, O::kAsyncDone, S(P::F32, {20}), {update}, "async-done");
    e->set_root_instruction(done);
    CHECK(Verify(*b.module) == "");
    SECTION("071 update shape differs from its operand") {
      update->mutable_shape() = T({S(P::F32, {10}), S(P::F32, {20}), S(P::S32, {})});
      CHECK_THAT(Verify(*b.module), Catch::Contains("instruction async-update (async-update): Expected instruction to have shape equal to ((f32[10]), f32[20], s32[])"));
    }
    SECTION("073 done without an async operand") {
      done->ReplaceOperandWith(0, p0);
      // The update lost its consumer, which is reported first; alone, the done is rejected too.
      CHECK_THAT(Verify(*b.module), Catch::Contains("instruction async-update (async-update): the async-update instruction requires one consumer, found 0"));
      Builder b2;
      HloComputation* e2 = b2.Comp("main", true);
      HloInstruction* q = b2.Param(e2, 0, async, "q");
      HloInstruction* d2 = b2.Add(e2, O::kAsyncDone, S(P::F32, {20}), {q}, "async-done");
      HloComputation* w = b2.Comp("wrapped");
      HloInstruction* wp = b2.Param(w, 0, S(P::F32, {10}), "wp");
      w->set_root_instruction(b2.Add(w, O::kCustomCall, S(P::F32, {20}), {wp}, "cc"));
      d2->mutable_called_computations() = {w};
      e2->set_root_instruction(d2);
      CHECK_THAT(Verify(*b2.module), Catch::Contains("instruction async-done (async-done): the operand of a async-done cannot be parameter"));
    }
    SECTION("078 update wraps another computation") {
      update->mutable_called_computations() = {w1};
      CHECK_THAT(Verify(*b.module), Catch::Contains("expects its wrapped async computation to be identical to its operand's"));
    }
    SECTION("080 update on another thread") {
      update->mutable_attrs().async_execution_thread = "foo_thread";
      CHECK_THAT(Verify(*b.module), Catch::Contains("instruction async-update (async-update): expects the same async thread name as the wrapped computation's thread name (foo_thread vs main)"));
    }
  }
}

// ---- Real modules: the JAX/XLA corpus and XLA's own parser test cases ----

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parse and verify one file; "" when both succeed, else the first error.
std::string ParseAndVerify(const std::filesystem::path& path, const HloParserOptions& options = {}) {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(ReadFile(path), path.filename().string(), options);
  if (!m.ok()) return "parse: " + std::string(m.status().message());
  absl::Status s = VerifyModule(**m);
  return s.ok() ? "" : "verify: " + std::string(s.message());
}

std::vector<std::filesystem::path> CorpusModules() {
  std::vector<std::filesystem::path> files;
  for (const char* sub : {"corpus", "corpus/spmd"}) {
    std::filesystem::path dir = std::filesystem::path(HLOC_TESTS_DIR) / sub;
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      std::string name = entry.path().filename().string();
      auto ends_with = [&](const std::string& suffix) {
        return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      if (ends_with("before_optimizations.txt") || ends_with("after_optimizations.txt")) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("verifier: every corpus module parses and verifies", "[verifier][corpus]") {
  std::vector<std::filesystem::path> files = CorpusModules();
  REQUIRE(files.size() > 50);
  std::vector<std::string> failures;
  for (const auto& f : files) {
    std::string e = ParseAndVerify(f);
    if (!e.empty()) failures.push_back(f.filename().string() + ": " + e);
  }
  for (const std::string& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}

struct ManifestRow {
  std::string set, file, kind, check, replica_count, options;
};
std::vector<ManifestRow> Manifest() {
  std::vector<ManifestRow> rows;
  std::ifstream in(std::filesystem::path(HLOC_TESTS_DIR) / "xla-hlo-cases" / "manifest.tsv");
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    cols.resize(11);
    rows.push_back({cols[0], cols[1], cols[5], cols[6], cols[7], cols[8]});
  }
  return rows;
}

TEST_CASE("verifier: XLA's verified parser cases verify", "[verifier][corpus]") {
  std::vector<ManifestRow> rows = Manifest();
  REQUIRE(rows.size() > 300);
  std::vector<std::string> failures;
  int checked = 0;
  for (const ManifestRow& row : rows) {
    bool verified = row.set == "valid" || row.check.find("parse+verify must succeed") != std::string::npos;
    if (!verified || row.kind == "shape") continue;
    HloParserOptions options;
    if (!row.replica_count.empty()) options.default_replica_count = std::stoll(row.replica_count);
    std::string e = ParseAndVerify(std::filesystem::path(HLOC_TESTS_DIR) / "xla-hlo-cases" / row.file, options);
    ++checked;
    if (!e.empty()) failures.push_back(row.file + ": " + e);
  }
  CHECK(checked > 200);
  for (const std::string& f : failures) UNSCOPED_INFO(f);
  CHECK(failures.empty());
}

TEST_CASE("verifier: XLA's rejected cases are rejected by the parser or the verifier", "[verifier][corpus]") {
  std::vector<std::string> accepted;
  for (const ManifestRow& row : Manifest()) {
    if (row.set != "invalid" || row.kind == "shape") continue;
    if (ParseAndVerify(std::filesystem::path(HLOC_TESTS_DIR) / "xla-hlo-cases" / row.file).empty())
      accepted.push_back(row.file);
  }
  for (const std::string& f : accepted) UNSCOPED_INFO(f);
  CHECK(accepted.empty());
}

// Corrupt parsed corpus modules in many seeded ways; verification must return (an error or OK),
// never crash or hang, whatever the attributes, shapes or edges say.
TEST_CASE("verifier: seeded corruptions of corpus modules never crash it", "[verifier][corpus]") {
  const char* names[] = {"gather_scatter", "conv_bn_relu_pool", "sort_topk", "while_loop", "cumsum",
                         "concat_slice_pad", "dot_variants", "cond_branch", "attention_bf16", "scan_rnn"};
  std::mt19937_64 rng(20240611);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  auto small_vec = [&](int64_t max_len) {
    std::vector<int64_t> v(pick(0, max_len));
    for (int64_t& x : v) x = pick(-2, 6);
    return v;
  };
  auto random_shape = [&]() -> Shape {
    switch (pick(0, 5)) {
      case 0: return Shape::Token();
      case 1: return T({S(P::F32, {pick(0, 4)}), S(P::S32, {})});
      default: {
        std::vector<int64_t> dims(pick(0, 4));
        for (int64_t& d : dims) d = pick(0, 9);
        PrimitiveType types[] = {P::F32, P::BF16, P::S32, P::PRED, P::U8, P::C64};
        return S(types[pick(0, 5)], dims);
      }
    }
  };
  int runs = 0, rejected = 0;
  for (const char* name : names) {
    std::filesystem::path path = std::filesystem::path(HLOC_TESTS_DIR) / "corpus" /
                                 (std::string(name) + ".small.before_optimizations.txt");
    std::string text = ReadFile(path);
    if (text.empty()) continue;
    for (int iter = 0; iter < 40; ++iter) {
      absl::StatusOr<std::unique_ptr<HloModule>> parsed = ParseHloModule(text, path.filename().string());
      REQUIRE(parsed.ok());
      HloModule& m = **parsed;
      std::vector<HloInstruction*> all;
      for (const auto& c : m.computations())
        for (const auto& i : c->instructions()) all.push_back(i.get());
      for (int k = 0; k < 3; ++k) {
        HloInstruction* inst = all[pick(0, all.size() - 1)];
        InstructionAttributes& a = inst->mutable_attrs();
        switch (pick(0, 11)) {
          case 0: a.dimensions = small_vec(4); break;
          case 1: a.tuple_index = pick(-1, 4); break;
          case 2: inst->mutable_shape() = random_shape(); break;
          case 3: {
            if (inst->operand_count() == 0) break;
            const auto& insts = inst->parent()->instructions();
            inst->ReplaceOperandWith(pick(0, inst->operand_count() - 1), insts[pick(0, insts.size() - 1)].get());
            break;
          }
          case 4:
            for (SliceDimension& d : a.slice) d = {pick(-2, 8), pick(-2, 8), pick(-1, 3)};
            a.dynamic_slice_sizes = small_vec(4);
            break;
          case 5:
            if (a.window) for (WindowDimension& d : a.window->dimensions) d = {pick(-1, 4), pick(-1, 3), pick(-3, 3), pick(-3, 3), pick(0, 2), pick(0, 2)};
            if (a.padding_config) for (PaddingDimension& d : a.padding_config->dimensions) d = {pick(-9, 3), pick(-9, 3), pick(-1, 2)};
            break;
          case 6: a.parameter_number = pick(-1, 5); break;
          case 7:
            if (!inst->called_computations().empty())
              inst->mutable_called_computations()[0] = m.computations()[pick(0, m.computations().size() - 1)].get();
            break;
          case 8:
            if (a.dot_dimension_numbers) a.dot_dimension_numbers->lhs_contracting_dimensions = small_vec(2);
            if (a.convolution_dimension_numbers) a.convolution_dimension_numbers->input_spatial_dimensions = small_vec(3);
            if (a.gather_dimension_numbers) {
              a.gather_dimension_numbers->offset_dims = small_vec(3);
              a.gather_dimension_numbers->index_vector_dim = pick(-1, 4);
            }
            if (a.scatter_dimension_numbers) {
              a.scatter_dimension_numbers->update_window_dims = small_vec(3);
              a.scatter_dimension_numbers->scatter_dims_to_operand_dims = small_vec(3);
            }
            break;
          case 9:
            a.feature_group_count = pick(-1, 3);
            a.batch_group_count = pick(-1, 3);
            a.num_carries = pick(-1, 3);
            a.k = pick(-1, 50);
            break;
          case 10:
            a.replica_groups.groups = {small_vec(3), small_vec(3)};
            a.channel_id = pick(0, 2);
            break;
          case 11:
            if (inst->parent()->root_instruction() != inst) inst->parent()->set_root_instruction(inst);
            break;
        }
      }
      ++runs;
      rejected += !VerifyModule(m).ok();
    }
  }
  CHECK(runs >= 200);
  CHECK(rejected > runs / 2);
}

// Issue 35, V1: what XLA's shape inference lets through but nothing can run is rejected, and
// the error starts with the instruction's place in the text.
TEST_CASE("verifier: shifts need integers, remainder/maximum/minimum need real operands", "[verifier]") {
  const std::string kText = "HloModule m\n\nENTRY e {\n  a = T[4] parameter(0)\n  b = T[4] parameter(1)\n"
                            "  ROOT r = T[4] OP(a, b)\n}\n";
  auto verify = [&](const std::string& op, const std::string& type) {
    std::string text = kText;
    for (size_t at; (at = text.find("T[")) != std::string::npos;) text.replace(at, 1, type);
    text.replace(text.find("OP"), 2, op);
    absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text, "case.hlo");
    REQUIRE(m.ok());
    return VerifyModule(**m);
  };
  for (const char* op : {"shift-left", "shift-right-arithmetic", "shift-right-logical"}) {
    for (const char* type : {"f32", "bf16", "c64", "f8e4m3fn"}) {
      absl::Status s = verify(op, type);
      INFO(op << " " << type << ": " << s.message());
      CHECK(absl::StartsWith(s.message(), absl::StrCat("case.hlo:6:8: computation e, instruction r (", op,
                                                       "): Expected integral operands")));
    }
    for (const char* type : {"s32", "u8", "s4"}) CHECK(verify(op, type).ok());
  }
  for (const char* op : {"remainder", "maximum", "minimum"}) {
    for (const char* type : {"c64", "c128"}) {
      absl::Status s = verify(op, type);
      INFO(op << " " << type << ": " << s.message());
      CHECK(absl::StartsWith(s.message(), "case.hlo:6:8: "));
      CHECK(absl::StrContains(s.message(), "Expected non-complex operands"));
    }
    for (const char* type : {"f32", "s32", "f16"}) CHECK(verify(op, type).ok());
  }
}

// Every parsed instruction knows its line and column; instructions a pass makes have none, and
// an error about them carries no made-up place.
TEST_CASE("verifier: errors start with the instruction's FILE:LINE:COL", "[verifier]") {
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(
      "HloModule m\r\nENTRY e {\r\n  x = f32[4] parameter(0)\r\n    ROOT y = s32[4] negate(x)\r\n}\r\n",
      "dir/m.hlo");
  REQUIRE(m.ok());
  const HloInstruction* y = (*m)->entry_computation()->root_instruction();
  CHECK(y->text_location().line == 4);
  CHECK(y->text_location().column == 10);
  CHECK(y->LocationPrefix() == "dir/m.hlo:4:10: ");
  absl::Status s = VerifyModule(**m);
  INFO(s.message());
  CHECK(absl::StartsWith(s.message(), "dir/m.hlo:4:10: computation e, instruction y (negate): "));

  ValidModule built;
  absl::Status ok = VerifyModule(*built.module);
  REQUIRE(ok.ok());
  CHECK(built.module->entry_computation()->root_instruction()->LocationPrefix().empty());
}

}  // namespace
}  // namespace hloc
