// The evaluator over many devices (eval/spmd_eval.h): every collective in every replica-group
// form and group mode with exact values, collectives in loops, errors on one device that must
// end the run instead of hanging it, and XLA's partitioned corpus programs against JAX.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "eval/compare.h"
#include "eval/evaluator.h"
#include "eval/spmd_eval.h"
#include "io/npy.h"
#include "ir/hlo_parser.h"
#include "ir/sharding_util.h"

namespace hloc {
namespace {

using P = PrimitiveType;

Literal Vec(P t, std::vector<double> v, std::vector<int64_t> dims = {-1}) {
  if (dims == std::vector<int64_t>{-1}) dims = {static_cast<int64_t>(v.size())};
  Literal l(Shape(t, dims));
  for (size_t i = 0; i < v.size(); ++i) {
    if (IsIntegral(t)) l.SetInt(i, static_cast<int64_t>(v[i]));
    else l.SetDouble(i, v[i]);
  }
  return l;
}

std::vector<double> Values(const Literal& l) {
  std::vector<double> v;
  for (int64_t i = 0; i < l.element_count(); ++i) v.push_back(l.GetDouble(i));
  return v;
}

// One argument list per device, made by fn(device).
std::vector<std::vector<Literal>> PerDevice(int64_t n, const std::function<std::vector<Literal>(int64_t)>& fn) {
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < n; ++d) args.push_back(fn(d));
  return args;
}

// Runs EvaluatePartitioned on a thread of its own and waits at most `seconds` for it. The
// evaluator has no timeouts (a failing device ends the run), so a run that does not come back
// is a defect this turns into a test failure instead of a hung test binary. The state is
// shared so that a hung run (left behind) never reads freed memory.
struct Watched {
  std::unique_ptr<HloModule> module;
  std::vector<std::vector<Literal>> args;
  absl::StatusOr<std::vector<Literal>> result = absl::UnknownError("not run");
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
};

absl::StatusOr<std::vector<Literal>> TryRun(const std::string& text, std::vector<std::vector<Literal>> args,
                                            int seconds = 60) {
  auto state = std::make_shared<Watched>();
  absl::StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
  if (!m.ok()) return m.status();
  state->module = std::move(*m);
  state->args = std::move(args);
  std::thread([state] {
    auto r = EvaluatePartitioned(*state->module, state->args);
    std::lock_guard<std::mutex> lock(state->mu);
    state->result = std::move(r);
    state->done = true;
    state->cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(state->mu);
  if (!state->cv.wait_for(lock, std::chrono::seconds(seconds), [&] { return state->done; }))
    return absl::DeadlineExceededError(absl::StrCat("EvaluatePartitioned did not return within ", seconds, " s"));
  return std::move(state->result);
}

std::vector<Literal> Run(const std::string& text, std::vector<std::vector<Literal>> args) {
  auto r = TryRun(text, std::move(args));
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(*r);
}

// Device d's argument: one f32 vector {base + d*step, base + d*step + 1, ...} of `len`.
std::vector<std::vector<Literal>> Ramp(int64_t n, int64_t len, double step = 10) {
  return PerDevice(n, [&](int64_t d) {
    std::vector<double> v;
    for (int64_t i = 0; i < len; ++i) v.push_back(d * step + i);
    std::vector<Literal> a;
    a.push_back(Vec(P::F32, v));
    return a;
  });
}

const char* kAdd = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string Module(const std::string& header, const std::string& body) {
  return absl::StrCat("HloModule m, ", header, "\n", kAdd, "\nENTRY e {\n", body, "\n}\n");
}

// ---- ids and group modes ----------------------------------------------------------------------

TEST_CASE("spmd eval: replica-id and partition-id per device", "[spmd_eval]") {
  auto out = Run(Module("replica_count=2, num_partitions=3", R"(
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p))"),
                 PerDevice(6, [](int64_t) { return std::vector<Literal>{}; }));
  REQUIRE(out.size() == 6);
  for (int64_t d = 0; d < 6; ++d) {
    CHECK(out[d].tuple_element(0).GetInt(0) == d / 3);
    CHECK(out[d].tuple_element(1).GetInt(0) == d % 3);
  }
}

// 2 replicas x 2 partitions; device d holds {10d, 10d+1}.
TEST_CASE("spmd eval: all-reduce group modes follow channel_id and use_global_device_ids", "[spmd_eval]") {
  const std::string header = "replica_count=2, num_partitions=2";
  auto run = [&](const std::string& attrs) {
    return Run(Module(header, absl::StrCat("  p = f32[2] parameter(0)\n  ROOT ar = f32[2] all-reduce(p), ", attrs,
                                           ", to_apply=add")),
               Ramp(4, 2));
  };
  SECTION("no channel_id: replica ids, same partition") {
    auto out = run("replica_groups={}");
    CHECK(Values(out[0]) == std::vector<double>{20, 22});  // devices 0 and 2
    CHECK(Values(out[2]) == std::vector<double>{20, 22});
    CHECK(Values(out[1]) == std::vector<double>{40, 42});  // devices 1 and 3
    CHECK(Values(out[3]) == std::vector<double>{40, 42});
  }
  SECTION("channel_id without use_global_device_ids: replica ids over all partitions") {
    auto out = run("channel_id=1, replica_groups={{0},{1}}");
    CHECK(Values(out[0]) == std::vector<double>{10, 12});  // replica 0 = devices 0, 1
    CHECK(Values(out[1]) == std::vector<double>{10, 12});
    CHECK(Values(out[2]) == std::vector<double>{50, 52});  // replica 1 = devices 2, 3
    auto all = run("channel_id=1, replica_groups={}");
    for (int d = 0; d < 4; ++d) CHECK(Values(all[d]) == std::vector<double>{60, 64});
  }
  SECTION("use_global_device_ids: flattened ids, groups of different sizes") {
    auto out = run("channel_id=1, replica_groups={{0,1,2},{3}}, use_global_device_ids=true");
    for (int d = 0; d < 3; ++d) CHECK(Values(out[d]) == std::vector<double>{30, 33});
    CHECK(Values(out[3]) == std::vector<double>{30, 31});
  }
  SECTION("no replica groups with use_global_device_ids is an error") {
    auto r = TryRun(Module(header, "  p = f32[2] parameter(0)\n  ROOT ar = f32[2] all-reduce(p), channel_id=1, "
                                   "replica_groups={}, use_global_device_ids=true, to_apply=add"),
                    Ramp(4, 2));
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("needs explicit replica_groups") != std::string::npos);
  }
}

TEST_CASE("spmd eval: collective-permute ids are partition ids with a channel_id, replica ids without",
          "[spmd_eval]") {
  const std::string header = "replica_count=2, num_partitions=2";
  SECTION("cross-partition") {
    auto out = Run(Module(header, "  p = f32[2] parameter(0)\n  ROOT cp = f32[2] collective-permute(p), channel_id=1, "
                                  "source_target_pairs={{0,1}}"),
                   Ramp(4, 2));
    CHECK(Values(out[0]) == std::vector<double>{0, 0});    // nothing sent to partition 0
    CHECK(Values(out[1]) == std::vector<double>{0, 1});    // from device 0
    CHECK(Values(out[2]) == std::vector<double>{0, 0});
    CHECK(Values(out[3]) == std::vector<double>{20, 21});  // from device 2 (replica 1)
  }
  SECTION("cross-replica") {
    auto out = Run(Module(header, "  p = f32[2] parameter(0)\n  ROOT cp = f32[2] collective-permute(p), "
                                  "source_target_pairs={{0,1},{1,0}}"),
                   Ramp(4, 2));
    CHECK(Values(out[0]) == std::vector<double>{20, 21});  // replicas swap, partition kept
    CHECK(Values(out[1]) == std::vector<double>{30, 31});
    CHECK(Values(out[2]) == std::vector<double>{0, 1});
    CHECK(Values(out[3]) == std::vector<double>{10, 11});
  }
}

// ---- replica-group forms ----------------------------------------------------------------------

// 8 partitions; all-gather of one element per device, so the result spells out the group.
TEST_CASE("spmd eval: replica groups written explicitly, as iota and as a Shardy mesh", "[spmd_eval]") {
  struct Case {
    std::string groups;
    int64_t size;
    std::vector<std::vector<double>> expect;  // devices 0 and 5
  };
  std::vector<Case> cases = {
      {"{{0,1,2,3},{4,5,6,7}}", 4, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {"{{7,0},{1,6},{2,5},{3,4}}", 2, {{7, 0}, {2, 5}}},
      {"[2,4]<=[8]", 4, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {"[4,2]<=[2,4]T(1,0)", 2, {{0, 4}, {1, 5}}},
      {"[1,8]<=[8]", 8, {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}}},
      {"mesh['data'=2,'model'=4] {'model'}", 4, {{0, 1, 2, 3}, {4, 5, 6, 7}}},
      {"mesh['data'=2,'model'=4] {'data'}", 2, {{0, 4}, {1, 5}}},
      {"mesh['data'=2,'model'=4] {'data','model'}", 8, {{0, 1, 2, 3, 4, 5, 6, 7}, {0, 1, 2, 3, 4, 5, 6, 7}}},
      {"mesh['x'=2,'y'=2,'z'=2] {'x','z'}", 4, {{0, 1, 4, 5}, {0, 1, 4, 5}}},
  };
  for (const Case& c : cases) {
    INFO(c.groups);
    auto out = Run(Module("num_partitions=8", absl::StrCat("  p = f32[1] parameter(0)\n  ROOT ag = f32[", c.size,
                                                           "] all-gather(p), channel_id=1, replica_groups=", c.groups,
                                                           ", use_global_device_ids=true, dimensions={0}")),
                   Ramp(8, 1, 1));
    CHECK(Values(out[0]) == c.expect[0]);
    CHECK(Values(out[5]) == c.expect[1]);
  }
}

// ---- the ops ---------------------------------------------------------------------------------

TEST_CASE("spmd eval: all-reduce tuple form, recognized and general reducers", "[spmd_eval]") {
  const std::string text = R"(HloModule m, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
maxi {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] maximum(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  q = s32[] parameter(1)
  t = (f32[2], f32[2]) all-reduce(p, p), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, to_apply=add
  s = f32[2] all-reduce(p), channel_id=2, replica_groups={{3,2},{1,0}}, use_global_device_ids=true, to_apply=sub
  mx = s32[] all-reduce(q), channel_id=3, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=maxi
  t0 = f32[2] get-tuple-element(t), index=0
  ROOT r = (f32[2], f32[2], s32[]) tuple(t0, s, mx)
})";
  auto out = Run(text, PerDevice(4, [](int64_t d) {
                   std::vector<Literal> a;
                   a.push_back(Vec(P::F32, {double(d * 10), double(d * 10 + 1)}));
                   a.push_back(Vec(P::S32, {double((d * 7) % 4)}, {}));
                   return a;
                 }));
  for (int d = 0; d < 4; ++d) {
    CHECK(Values(out[d].tuple_element(0)) == std::vector<double>{60, 64});
    CHECK(out[d].tuple_element(2).GetInt(0) == 3);
  }
  // subtract in group order: the first member minus the second, the same on both.
  CHECK(Values(out[3].tuple_element(1)) == std::vector<double>{10, 10});   // 30 - 20
  CHECK(Values(out[2].tuple_element(1)) == std::vector<double>{10, 10});
  CHECK(Values(out[0].tuple_element(1)) == std::vector<double>{10, 10});   // 10 - 0
}

TEST_CASE("spmd eval: all-gather, reduce-scatter and all-to-all along a dimension", "[spmd_eval]") {
  // Device d holds the 2x2 matrix {{4d, 4d+1}, {4d+2, 4d+3}}.
  auto mats = PerDevice(2, [](int64_t d) {
    std::vector<Literal> a;
    a.push_back(Vec(P::F32, {4. * d, 4. * d + 1, 4. * d + 2, 4. * d + 3}, {2, 2}));
    return a;
  });
  SECTION("all-gather dimensions={1}") {
    auto out = Run(Module("num_partitions=2", "  p = f32[2,2] parameter(0)\n  ROOT ag = f32[2,4] all-gather(p), "
                                              "channel_id=1, replica_groups={{1,0}}, use_global_device_ids=true, dimensions={1}"),
                   std::move(mats));
    for (int d = 0; d < 2; ++d) CHECK(Values(out[d]) == std::vector<double>{4, 5, 0, 1, 6, 7, 2, 3});
  }
  SECTION("reduce-scatter dimensions={1}") {
    auto out = Run(Module("num_partitions=2", "  p = f32[2,2] parameter(0)\n  ROOT rs = f32[2,1] reduce-scatter(p), "
                                              "channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, "
                                              "dimensions={1}, to_apply=add"),
                   std::move(mats));
    CHECK(Values(out[0]) == std::vector<double>{4, 8});   // column 0 of the sum {{4,6},{8,10}}
    CHECK(Values(out[1]) == std::vector<double>{6, 10});
  }
  SECTION("all-to-all dimensions={0}") {
    auto out = Run(Module("num_partitions=2", "  p = f32[2,2] parameter(0)\n  ROOT a2a = f32[2,2] all-to-all(p), "
                                              "channel_id=1, replica_groups={{0,1}}, dimensions={0}"),
                   std::move(mats));
    CHECK(Values(out[0]) == std::vector<double>{0, 1, 4, 5});  // row 0 of each device
    CHECK(Values(out[1]) == std::vector<double>{2, 3, 6, 7});  // row 1 of each device
  }
}

TEST_CASE("spmd eval: all-to-all tuple form over 4 devices", "[spmd_eval]") {
  auto out = Run(Module("num_partitions=4", R"(
  p = f32[4] parameter(0)
  x0 = f32[1] slice(p), slice={[0:1]}
  x1 = f32[1] slice(p), slice={[1:2]}
  x2 = f32[1] slice(p), slice={[2:3]}
  x3 = f32[1] slice(p), slice={[3:4]}
  a = (f32[1], f32[1], f32[1], f32[1]) all-to-all(x0, x1, x2, x3), channel_id=1, replica_groups=[1,4]<=[4]
  a0 = f32[1] get-tuple-element(a), index=0
  a1 = f32[1] get-tuple-element(a), index=1
  a2 = f32[1] get-tuple-element(a), index=2
  a3 = f32[1] get-tuple-element(a), index=3
  ROOT c = f32[4] concatenate(a0, a1, a2, a3), dimensions={0})"),
                 Ramp(4, 4));
  for (int d = 0; d < 4; ++d) CHECK(Values(out[d]) == std::vector<double>{double(d), 10. + d, 20. + d, 30. + d});
}

TEST_CASE("spmd eval: collective-permute ring and collective-broadcast", "[spmd_eval]") {
  SECTION("ring over 8, one device left out") {
    auto out = Run(Module("num_partitions=8", "  p = f32[2] parameter(0)\n  ROOT cp = f32[2] collective-permute(p), "
                                              "channel_id=1, source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,0}}"),
                   Ramp(8, 2));
    CHECK(Values(out[0]) == std::vector<double>{60, 61});
    CHECK(Values(out[3]) == std::vector<double>{20, 21});
    CHECK(Values(out[7]) == std::vector<double>{0, 0});  // no pair targets 7: zeros
  }
  SECTION("collective-broadcast from each group's first member") {
    auto out = Run(Module("num_partitions=4", "  p = f32[2] parameter(0)\n  ROOT cb = f32[2] collective-broadcast(p), "
                                              "channel_id=1, replica_groups={{1,0},{3,2}}"),
                   Ramp(4, 2));
    CHECK(Values(out[0]) == std::vector<double>{10, 11});
    CHECK(Values(out[1]) == std::vector<double>{10, 11});
    CHECK(Values(out[2]) == std::vector<double>{30, 31});
    CHECK(Values(out[3]) == std::vector<double>{30, 31});
  }
}

TEST_CASE("spmd eval: async start/done pairs and an async-wrapped all-gather", "[spmd_eval]") {
  const std::string text = R"(HloModule m, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ag_comp {
  x = f32[2] parameter(0)
  ROOT g = f32[4] all-gather(x), channel_id=4, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
}
ENTRY e {
  p = f32[2] parameter(0)
  ars = f32[2] all-reduce-start(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add
  ard = f32[2] all-reduce-done(ars)
  ags = (f32[2], f32[4]) all-gather-start(p), channel_id=2, replica_groups={{0,1}}, use_global_device_ids=true, dimensions={0}
  agd = f32[4] all-gather-done(ags)
  cps = (f32[2], f32[2], u32[], u32[]) collective-permute-start(p), channel_id=3, source_target_pairs={{0,1},{1,0}}
  cpd = f32[2] collective-permute-done(cps)
  as = ((f32[2]), f32[4]) async-start(p), calls=ag_comp
  ad = f32[4] async-done(as)
  ROOT t = (f32[2], f32[4], f32[2], f32[4]) tuple(ard, agd, cpd, ad)
})";
  auto out = Run(text, Ramp(2, 2));
  for (int d = 0; d < 2; ++d) {
    CHECK(Values(out[d].tuple_element(0)) == std::vector<double>{10, 12});
    CHECK(Values(out[d].tuple_element(1)) == std::vector<double>{0, 1, 10, 11});
    CHECK(Values(out[d].tuple_element(3)) == std::vector<double>{0, 1, 10, 11});
  }
  CHECK(Values(out[0].tuple_element(2)) == std::vector<double>{10, 11});
  CHECK(Values(out[1].tuple_element(2)) == std::vector<double>{0, 1});
}

TEST_CASE("spmd eval: ragged-all-to-all over 2 devices", "[spmd_eval]") {
  // Device d sends rows [0, 1+d) to device 0 and the rest to device 1; each receiver places
  // sender j's block where sender j says (output_offsets).
  const std::string text = Module("num_partitions=2", R"(
  in = f32[4] parameter(0)
  buf = f32[6] parameter(1)
  ioff = s32[2] parameter(2)
  send = s32[2] parameter(3)
  ooff = s32[2] parameter(4)
  recv = s32[2] parameter(5)
  ROOT r = f32[6] ragged-all-to-all(in, buf, ioff, send, ooff, recv), channel_id=1, replica_groups={{0,1}})");
  auto args = PerDevice(2, [](int64_t d) {
    std::vector<Literal> a;
    a.push_back(Vec(P::F32, {10. * d, 10. * d + 1, 10. * d + 2, 10. * d + 3}));
    a.push_back(Vec(P::F32, {-1, -1, -1, -1, -1, -1}));
    a.push_back(Vec(P::S32, {0, double(1 + d)}));
    a.push_back(Vec(P::S32, {double(1 + d), double(3 - d)}));
    // Receiver 0 gets 1 row from device 0 (at 0) and 2 from device 1 (at 1); receiver 1 gets 3
    // rows from device 0 (at 0) and 2 from device 1 (at 3).
    a.push_back(d == 0 ? Vec(P::S32, {0, 0}) : Vec(P::S32, {1, 3}));
    a.push_back(Vec(P::S32, {0, 0}));
    return a;
  });
  auto out = Run(text, std::move(args));
  CHECK(Values(out[0]) == std::vector<double>{0, 10, 11, -1, -1, -1});
  CHECK(Values(out[1]) == std::vector<double>{1, 2, 3, 12, 13, -1});
}

TEST_CASE("spmd eval: a collective inside a while loop body", "[spmd_eval]") {
  const std::string text = R"(HloModule m, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  st = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  st = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(st), index=0
  x = f32[2] get-tuple-element(st), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ar = f32[2] all-reduce(x), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=add
  ROOT t = (s32[], f32[2]) tuple(i1, ar)
}
ENTRY e {
  p = f32[2] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT x = f32[2] get-tuple-element(w), index=1
})";
  auto out = Run(text, Ramp(4, 2));
  // Pairs {0,1} and {2,3}: each trip doubles the pair's sum.
  CHECK(Values(out[0]) == std::vector<double>{40, 48});   // (0+10, 1+11) * 4
  CHECK(Values(out[1]) == std::vector<double>{40, 48});
  CHECK(Values(out[3]) == std::vector<double>{200, 208});  // (20+30, 21+31) * 4
}

// ---- failures end the run ---------------------------------------------------------------------

// Partition 2 takes the true branch; the others wait at %ar, which it never reaches.
std::string Diverging(const std::string& true_branch_body) {
  return absl::StrCat(R"(HloModule m, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
on_two {
  x = f32[2] parameter(0)
)", true_branch_body, R"(
}
others {
  x = f32[2] parameter(0)
  ROOT ar = f32[2] all-reduce(x), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
}
ENTRY e {
  p = f32[2] parameter(0)
  id = u32[] partition-id()
  two = u32[] constant(2)
  is2 = pred[] compare(id, two), direction=EQ
  ROOT c = f32[2] conditional(is2, p, p), true_computation=on_two, false_computation=others
})");
}

TEST_CASE("spmd eval: an error on one device ends the run for all", "[spmd_eval]") {
  auto r = TryRun(Diverging(R"(  ROOT bad = f32[2] custom-call(x), custom_call_target="no_such_target")"), Ramp(4, 2));
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().code() != absl::StatusCode::kDeadlineExceeded);
  CHECK(r.status().message().find("device 2: ") == 0);
  CHECK(r.status().message().find("no_such_target") != std::string::npos);
}

TEST_CASE("spmd eval: a device that returns while others wait fails the run", "[spmd_eval]") {
  auto r = TryRun(Diverging("  ROOT n = f32[2] negate(x)"), Ramp(4, 2));
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().code() != absl::StatusCode::kDeadlineExceeded);
  CHECK(r.status().message().find("device 2 finished while device") != std::string::npos);
  CHECK(r.status().message().find("at all-reduce %ar") != std::string::npos);
}

TEST_CASE("spmd eval: devices at different collectives fail the run", "[spmd_eval]") {
  auto r = TryRun(Diverging("  ROOT g = f32[2] all-reduce(x), channel_id=2, replica_groups={{0,1,2,3}}, "
                            "use_global_device_ids=true, to_apply=add"),
                  Ramp(4, 2));
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().message().find("devices disagree on the next collective") != std::string::npos);
}

TEST_CASE("spmd eval: one bad group definition fails every device without hanging", "[spmd_eval]") {
  auto r = TryRun(Module("num_partitions=4", "  p = f32[2] parameter(0)\n  ROOT ar = f32[2] all-reduce(p), channel_id=1, "
                                             "replica_groups={{0,1},{2}}, use_global_device_ids=true, to_apply=add"),
                  Ramp(4, 2));
  REQUIRE_FALSE(r.ok());
  INFO(r.status().ToString());
  CHECK(r.status().message().find("id 3 is in no replica group") != std::string::npos);
}

TEST_CASE("spmd eval: the argument count must match the devices", "[spmd_eval]") {
  auto r = TryRun(Module("num_partitions=4", "  ROOT p = f32[2] parameter(0)"), Ramp(2, 2));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("runs on 4 devices") != std::string::npos);
}

TEST_CASE("spmd eval: without a rendezvous collectives stay groups of one", "[spmd_eval]") {
  auto m = ParseHloModule(Module("num_partitions=2", "  p = f32[2] parameter(0)\n  ROOT ar = f32[2] all-reduce(p), "
                                                     "channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=add"));
  REQUIRE(m.ok());
  std::vector<Literal> args;
  args.push_back(Vec(P::F32, {1, 2}));
  auto r = EvaluateModule(**m, args);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("runs on 2 devices (replica_count=1, num_partitions=2), but it is evaluated here "
                                  "as one: hloc eval evaluates every device") != std::string::npos);
}

// ---- XLA's partitioned corpus programs -------------------------------------------------------

// Each device's arguments: its shard (by the parameter's sharding=) of the global inputs.
absl::StatusOr<std::vector<std::vector<Literal>>> ShardInputs(const HloModule& module, const std::string& npz) {
  absl::StatusOr<std::vector<NpyArray>> arrays = ReadNpz(npz);
  if (!arrays.ok()) return arrays.status();
  const HloComputation* entry = module.entry_computation();
  const int64_t n = module.config().num_partitions * module.config().replica_count;
  std::vector<std::vector<Literal>> out(n);
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    const NpyArray* found = nullptr;
    for (const NpyArray& a : *arrays)
      if (a.name == absl::StrCat("arg", i)) found = &a;
    if (found == nullptr) return absl::NotFoundError(absl::StrCat(npz, " has no arg", i));
    Shape global(p->shape().element_type(), found->literal.shape().dimensions());
    absl::StatusOr<Literal> value = ReinterpretAs(*found, global);
    if (!value.ok()) return value.status();
    absl::StatusOr<HloSharding> s = NormalizeSharding(p->attrs().sharding.value_or(ReplicatedSharding()), global);
    if (!s.ok()) return s.status();
    for (int64_t d = 0; d < n; ++d) {
      absl::StatusOr<Literal> shard = ExtractShard(*value, *s, d);
      if (!shard.ok()) return shard.status();
      shard->mutable_shape() = p->shape();
      out[d].push_back(std::move(*shard));
    }
  }
  return out;
}

// The global value of output leaf `i`: device 0's when its shape is the global one (a
// replicated output), else the devices' tiles put back together, the tiles taken in device
// order along the dims whose size shrank, any further devices replicating them.
absl::StatusOr<Literal> GlobalOutput(const std::vector<Literal>& per_device, size_t i, const Shape& global) {
  std::vector<Literal> leaves;
  for (const Literal& out : per_device) leaves.push_back(*FlattenLeaves(out)[i]);
  const Shape& local = leaves[0].shape();
  if (local.dimensions() == global.dimensions()) return leaves[0];
  if (local.rank() != global.rank()) return absl::InvalidArgumentError("output rank differs from the reference");
  std::vector<int64_t> tiles;
  int64_t tiled = 1;
  for (int64_t d = 0; d < global.rank(); ++d) {
    tiles.push_back((global.dimensions(d) + local.dimensions(d) - 1) / std::max<int64_t>(local.dimensions(d), 1));
    tiled *= tiles.back();
  }
  const int64_t n = per_device.size();
  if (tiled == 0 || n % tiled != 0) return absl::InvalidArgumentError("output tiles do not divide the devices");
  std::vector<int64_t> devices(n);
  for (int64_t d = 0; d < n; ++d) devices[d] = d;
  return AssembleShards(leaves, Canonical(TiledSharding(tiles, devices, n / tiled)), global);
}

// Runs `dir/name.small.after_optimizations.txt` on its devices and compares every output with
// outputs.npz under the corpus rules. Returns "" when all match, else why not.
std::string RunCorpusModule(const std::string& dir, const std::string& name) {
  const std::string base = absl::StrCat(HLOC_TESTS_DIR, "/corpus/", dir, "/", name, ".small.");
  auto m = ParseHloModuleFile(base + "after_optimizations.txt");
  if (!m.ok()) return absl::StrCat("parse: ", m.status().ToString());
  auto args = ShardInputs(**m, base + "inputs.npz");
  if (!args.ok()) return absl::StrCat("inputs: ", args.status().ToString());
  EvaluatorOptions options;
  auto out = EvaluatePartitioned(**m, *args, options);
  if (!out.ok()) return absl::StrCat("run: ", out.status().ToString());
  auto refs = ReadNpz(base + "outputs.npz");
  if (!refs.ok()) return absl::StrCat("outputs: ", refs.status().ToString());
  const std::vector<bool> fed = OutputsFedByDotOrConvolution(**m);
  const size_t leaves = FlattenLeaves((*out)[0]).size();
  if (leaves != refs->size()) return absl::StrCat(leaves, " outputs, the reference has ", refs->size());
  std::string why;
  for (size_t i = 0; i < leaves; ++i) {
    const NpyArray* ref = nullptr;
    for (const NpyArray& a : *refs)
      if (a.name == absl::StrCat("out", i)) ref = &a;
    if (ref == nullptr) return absl::StrCat("no out", i);
    const PrimitiveType t = FlattenLeaves((*out)[0])[i]->element_type();
    Shape global(t, ref->literal.shape().dimensions());
    auto want = ReinterpretAs(*ref, global);
    if (!want.ok()) return absl::StrCat("out", i, ": ", want.status().ToString());
    auto got = GlobalOutput(*out, i, global);
    if (!got.ok()) return absl::StrCat("out", i, ": ", got.status().ToString());
    const bool f = i < fed.size() && fed[i];
    CompareResult c = CompareLiterals(*got, *want, DefaultTolerance(t, f), DefaultAbsoluteFloor(t, f));
    if (!c.ok) absl::StrAppend(&why, "out", i, ": error ", c.error, " ", c.message, "; ");
  }
  return why;
}

// Every corpus module's per-device program (spmd2/sharded_sort's through XLA:CPU's "TopK"
// custom call): every output matches JAX's.
TEST_CASE("spmd eval: XLA's partitioned corpus programs match JAX's outputs", "[spmd_eval]") {
  const std::vector<std::pair<std::string, std::string>> modules = {
      {"spmd2", "tp_mlp"},          {"spmd2", "fsdp_train"},       {"spmd2", "dp_tp_block"},
      {"spmd2", "seq_softmax"},     {"spmd2", "sharded_embedding"}, {"spmd2", "conv_halo"},
      {"spmd2", "transpose_reshard"}, {"spmd2", "sharded_scan"},   {"spmd2", "shmap_2d"},
      {"spmd2", "dp_reduce_scatter"}, {"spmd2", "sharded_cond"},   {"spmd", "spmd_rows"},
      {"spmd", "spmd_contract"},    {"spmd", "spmd_dp_train"},     {"spmd", "shmap_collectives"},
      {"spmd2", "sharded_sort"},
  };
  for (const auto& [dir, name] : modules) {
    INFO(dir << "/" << name);
    CHECK(RunCorpusModule(dir, name) == "");
  }
}

// Every corpus module, matching or not, for the record (run with this tag to see the list).
TEST_CASE("spmd eval: corpus survey", "[.spmd_eval_survey]") {
  for (const char* dir : {"spmd2", "spmd"})
    for (const auto& e : std::filesystem::directory_iterator(absl::StrCat(HLOC_TESTS_DIR, "/corpus/", dir))) {
      const std::string f = e.path().filename().string();
      const std::string suffix = ".small.after_optimizations.txt";
      if (f.size() <= suffix.size() || f.compare(f.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
      const std::string name = f.substr(0, f.size() - suffix.size());
      const std::string why = RunCorpusModule(dir, name);
      WARN(dir << "/" << name << ": " << (why.empty() ? "match" : why));
    }
}

}  // namespace
}  // namespace hloc
